"""Stage 3 of adaptive-model-sanjay-slides.txt (slides 20-21): the processor functions.

The computation part times each processor function, then the communication part times each, then an
optional overhead P-term; with ``p_min`` trained on the runs with ``p >= p_min`` and ranked on all runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from automodel.search.canonical import times
from automodel.search.family_lists import TargetFamilyLists
from automodel.search.registry import hstack, put
from automodel.space.structure import Structure
from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.stages.parts import family_of, stage_groups
from automodel.search.state import Search
from automodel.space.stages import ProcessorsConfig
from automodel.space.terms import ONE, Term

__all__ = ["stage_processors", "run", "STAGE"]


def stage_processors(S: Search, ks: np.ndarray, seeds: np.ndarray, rows: np.ndarray, final: bool) -> np.ndarray:
    """Stage 3 on ``rows``, or, with ``p_min`` in the space's ``[stages.processors]``, on the runs with
    ``p >= p_min`` (the slides train the processor functions on p = 2, 4, 8: adaptive-model-sanjay-
    slides.txt, slides 20-21), its survivors then scored on ``rows`` for the ranking. A target whose
    seeds have too many terms for the runs with ``p >= p_min`` uses all runs."""
    p_min = S.space.stage("processors").p_min
    if p_min <= 1:
        return _processors(S, ks, seeds, rows, "all runs", final, rows, final)
    subset = rows & (S.ds.frame["p"].to_numpy(float) >= p_min)
    widest = np.where(seeds >= 0, S.reg.array("width")[np.maximum(seeds, 0)], 0).max(axis=1, initial=0)
    own = np.count_nonzero(subset) > widest + 2
    if not own.all():
        S.note(f"processors: too few runs with p >= {p_min}; all runs used")
    out = np.full((len(ks), 0), -1, np.intp)
    for mask, stage_rows, text, alone in ((own, subset, f"p >= {p_min}", False), (~own, rows, "all runs", final)):
        if mask.any():
            at = np.flatnonzero(mask)
            out = put(out, at, _processors(S, ks[at], seeds[at], stage_rows, text, alone, rows, final))
    return out


def _processors(S: Search, ks: np.ndarray, seeds: np.ndarray, stage_rows: np.ndarray, text: str, own: bool,
                rows: np.ndarray, final: bool) -> np.ndarray:
    """Stage 3 of the targets ``ks`` on ``stage_rows`` (scored as final when ``own``)."""
    cfg: ProcessorsConfig = S.space.stage("processors")  # type: ignore[assignment]
    top = cfg.top
    comp_f = S.terms("processors", "computation") or (ONE,)
    comm_f = S.terms("processors", "communication") or (ONE,)
    over = S.terms("processors", "overhead")
    size, comp_groups, comm_groups = cfg.template_list, stage_groups(S, "computation"), stage_groups(S, "communication")

    def family(s: Structure) -> tuple | None:  # the computation and communication models' families
        comp = family_of(s.comp, comp_groups)
        comm = family_of(s.comm, comm_groups) if comm_groups else frozenset(s.comm)
        return None if comp is None or comm is None else (comp, comm)

    def comp_times(s: Structure, f: Term) -> Structure:
        return Structure(times(s.comp, f), s.comm, s.extra)

    def comm_times(s: Structure, f: Term) -> Structure:
        return Structure(s.comp, times(s.comm, f), s.extra)

    def stage(name: str, ks: np.ndarray, base: np.ndarray, functions: tuple[Term, ...], make: Callable
              ) -> tuple[np.ndarray, np.ndarray]:
        lists = (TargetFamilyLists(S.reg, base, list(functions), make, family, size, S.opt.metric)
                 if size and comp_groups else None)
        first = lists.first() if lists else S.reg.table(base, lambda s: [make(s, f) for f in functions])
        kept, batch = S.run(name, ks, stage_rows, text, first, top, final=own, then=lists)
        return kept, batch.ids

    kept, scored = stage("processors/comp", ks, seeds, comp_f, comp_times)
    with_comm = (np.where(kept >= 0, S.reg.array("comm")[np.maximum(kept, 0)], False)).any(axis=1)
    if with_comm.any():
        at = np.flatnonzero(with_comm)
        more_kept, more = stage("processors/comm", ks[at], kept[at], comm_f, comm_times)
        kept = put(kept, at, more_kept)
        scored = put(scored, at, hstack(scored[at], more))
    if over:
        s3c = hstack(kept, S.reg.table(kept, lambda s: [Structure(s.comp, s.comm, s.extra + (f,)) for f in over]))
        kept, _ = S.run("processors/overhead", ks, stage_rows, text, s3c, top, final=own)
        scored = hstack(scored, s3c)
    if final and not own:  # everything the stage scored, ranked on all runs (as the final stages are)
        S.run("processors/rank", ks, rows, "all runs", scored, None, final=True)
    return kept


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """Stage 3 on all runs as a final stage; after joint computation and communication stages (which
    took the processor functions already), only the optional overhead term."""
    ks, seeds = branch.ks, branch.seeds
    if not shape.joint:
        yield Branch(ks, stage_processors(S, ks, seeds, shape.all_rows, final=True))
        return
    over = S.terms("processors", "overhead")
    if over:
        cands = hstack(seeds, S.reg.table(seeds, lambda s: [Structure(s.comp, s.comm, s.extra + (f,)) for f in over]))
        seeds, _ = S.run("processors/overhead", ks, shape.all_rows, "all runs", cands,
                         S.space.stage("processors").top, final=True)
    yield Branch(ks, seeds)


STAGE = Stage("processors", ProcessorsConfig, run, lambda S, shape: shape.has_n and shape.has_p)
