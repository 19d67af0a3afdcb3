"""Stages 1 and 2 of adaptive-model-sanjay-slides.txt (slides 18-19, 25-26): add subsets of a term family
(times a load function) to every seed, cheap families first, a group expanded only around a representative
that survived.

:mod:`automodel.search.stages.computation` and :mod:`automodel.search.stages.communication` run it.
"""

from __future__ import annotations

from math import comb

import numpy as np

from automodel.text.printing import terms_text
from automodel.search.canonical import canonical, subsets, times, uses_only
from automodel.search.family_lists import TargetFamilyLists
from automodel.search.registry import compact, hstack, put
from automodel.space.structure import Structure
from automodel.search.state import Search
from automodel.space.stages import CommunicationConfig, ComputationConfig, Group
from automodel.space.terms import ONE, Term

__all__ = ["part_stage", "stage_groups", "family_of", "contains", "swap"]


def part_stage(S: Search, ks: np.ndarray, name: str, rows: np.ndarray, rows_text: str, seeds: np.ndarray,
               part: str, multipliers: tuple[Term, ...], final: bool, note: str = "") -> np.ndarray:
    """Stages 1 and 2: add subsets of a term family (times a load function) to every seed structure.

    Evaluates the base family first; a group is expanded only when its representative appears in a
    surviving candidate (slides 25-26). Records how many fits that saved against the full family.
    ``seeds`` (R, S) are the seeds of the targets ``ks``; returns their survivors.
    """
    cfg: ComputationConfig | CommunicationConfig = S.space.stage(name)  # type: ignore[assignment]
    base = S.terms(name, "base")
    groups = stage_groups(S, name)
    max_terms = min(cfg.max_terms, max(1, int(np.count_nonzero(rows)) - 3))
    loads = tuple(m for m in cfg.load if uses_only(m, S.params)) or (ONE,)
    min_terms = 0 if part == "comm" else 1

    # the constant is the serial part: never divided by a load nor multiplied by a processor function
    intercepts = ((), (ONE,)) if ONE in base else ((),)
    base = tuple(t for t in base if t != ONE)

    def make(seed: Structure, add: tuple) -> Structure:
        sub, load, mult, icpt = add
        terms = times(times(sub, load), mult)
        return (Structure(seed.comp + terms, seed.comm, seed.extra + icpt) if part == "comp" else
                Structure(seed.comp, seed.comm + terms, seed.extra + icpt))

    additions = [(sub, load, mult, icpt) for sub in subsets(base, max_terms, min_terms)
                 for load in loads for mult in multipliers for icpt in intercepts]
    comp_groups = stage_groups(S, "computation")
    lists = None
    size = cfg.template_list if isinstance(cfg, CommunicationConfig) else 0
    if part == "comm" and size and comp_groups:
        lists = TargetFamilyLists(S.reg, seeds, additions, make, lambda s: family_of(s.comp, comp_groups), size,
                                  S.opt.metric)
    cands = lists.first() if lists else S.reg.table(seeds, lambda s: [make(s, a) for a in additions])
    survivors, _ = S.run(name, ks, rows, rows_text, cands, cfg.top, note, final, then=lists)
    fitted = S.reports[-1].n_candidates
    none = (survivors < 0).all(axis=1)
    if part == "comm" and none.any():  # hand on what the stage got: the computation models
        S.note(f"{name}: no candidate could be fitted on {rows_text}; the computation models "
               "go on without communication terms")
    def part_of(s: Structure) -> tuple[Term, ...]:
        return s.comp if part == "comp" else s.comm

    def with_part(s: Structure, new: tuple[Term, ...]) -> Structure:
        return Structure(new, s.comm, s.extra) if part == "comp" else Structure(s.comp, new, s.extra)

    expanded = []
    hit_groups = []
    for g in groups:
        hits = S.reg.table(survivors, lambda s: [s] if any(contains(t, g.representative) for t in part_of(s))
                           else [])
        hits = hits[:, :survivors.shape[1]] if hits.shape[1] else np.full(survivors.shape, -1, np.intp)
        if part == "comm":
            hits[none] = -1
        if (hits >= 0).any():
            hit_groups.append(terms_text([g.representative]))
        expanded.append(S.reg.table(hits, lambda s: [with_part(s, tuple(swap(t, g.representative, member)
                                                                        for t in part_of(s)))
                                                     for member in g.members]))
    expanded = compact(np.concatenate(expanded, axis=1))[0] if expanded else np.full((len(ks), 0), -1, np.intp)
    grow = (expanded >= 0).any(axis=1)
    if grow.any():
        at = np.flatnonzero(grow)
        more, _ = S.run(name + "+groups", ks[at], rows, rows_text, hstack(survivors[at], expanded[at]),
                        cfg.top, "groups expanded around: " + ", ".join(hit_groups), final)
        fitted += S.reports[-1].n_candidates
        survivors = put(survivors, at, more)
    if groups and not (part == "comm" and none.all()):  # (a stage without survivors handed its seeds on)
        all_terms = len(base) + sum(len(g.members) for g in groups)
        full = int(np.count_nonzero(seeds >= 0)) * len(loads) * len(multipliers) * len(intercepts) * sum(
            comb(all_terms, k) for k in range(min_terms, max_terms + 1))
        report = S.reports[-1]  # a figure of the search, in the stage log, not a note to the user
        saving = f"overhead reduction: {fitted} of {full} candidates fitted"
        report.note = "; ".join(filter(None, [report.note, saving]))
    if part == "comm" and none.any():
        survivors = put(survivors, np.flatnonzero(none), seeds[none])
    return survivors


def stage_groups(S: Search, stage: str) -> list[Group]:
    """The stage's term groups whose representative uses only parameters of the data."""
    return [g for g in S.space.stage(stage).groups if uses_only(g.representative, S.params)]


def family_of(part: tuple[Term, ...], groups: list[Group]) -> frozenset[int] | None:
    """Which of ``groups`` (a representative and its members) the terms of ``part`` belong to; None
    when none: the family of a seed in the template-list cache (:class:`FamilyLists`)."""
    hits = frozenset(i for i, g in enumerate(groups) for t in part
                     if any(contains(t, r) for r in (g.representative, *g.members)))
    return hits or None


def contains(term: Term, rep: Term) -> bool:
    """Whether ``term`` is ``rep`` times only non-``n`` factors (loads, processor functions)."""
    rest = [f for f in term.factors if f not in rep.factors]
    return all(f in term.factors for f in rep.factors) and all(
        f.param not in rep.params for f in rest)


def swap(term: Term, rep: Term, member: Term) -> Term:
    if not contains(term, rep):
        return term
    return canonical(Term(tuple(f for f in term.factors if f not in rep.factors)) * member)
