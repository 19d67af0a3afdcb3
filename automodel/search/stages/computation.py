"""Stage 1 of adaptive-model-sanjay-slides.txt (slide 18): computation terms f(n), alone and divided by the
CPU function(s), on the runs with the lowest process count."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.stages.parts import part_stage
from automodel.search.state import Search
from automodel.space.stages import ComputationConfig
from automodel.space.structure import Structure
from automodel.space.terms import ONE, Term

__all__ = ["stage_computation", "run", "STAGE"]


def stage_computation(S: Search, ks: np.ndarray, rows: np.ndarray, rows_text: str, seeds: np.ndarray,
                      multipliers: tuple[Term, ...], final: bool) -> np.ndarray:
    """The computation stage of the targets ``ks`` on ``rows`` (described by ``rows_text``): every subset
    of the ``[stages.computation]`` terms times a load function and each of ``multipliers``, added to
    each of ``seeds`` (R, S) (:func:`~automodel.search.stages.parts.part_stage`); returns the survivors."""
    return part_stage(S, ks, "computation", rows, rows_text, seeds, "comp", multipliers, final)


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """The first stage of data with ``n``, from the empty model: on the lowest ``p`` (or all runs), or on
    all runs with the processor functions when the lowest ``p`` has fewer than 3 distinct ``n``. A
    target with no computation model is failed and not handed on."""
    S.adaptive = True
    frame, ks = S.ds.frame, branch.ks
    if shape.joint:
        low = shape.p_levels[0]
        S.notes.append(f"only {frame.loc[shape.rows, 'n'].nunique()} distinct n at the lowest p (p = {low:g}): "
                       "computation and communication stages run on all runs together with the processor functions")
    elif not shape.has_p:
        S.notes.append(("no p column" if "p" not in S.params else "one p level") +
                       ": computation and communication stages both use all runs")
    root = S.reg.same([Structure()], len(ks))
    if shape.joint:
        multipliers = S.terms("processors", "computation") or (ONE,)
        yield Branch(ks, stage_computation(S, ks, shape.all_rows, "all runs", root, multipliers, True))
        return
    seeds = stage_computation(S, ks, shape.rows, shape.text, root, (ONE,), not shape.has_p)
    empty = (seeds < 0).all(axis=1)
    for k in ks[empty]:
        S.failed[int(k)] = (f"{S.ds.source}: no computation model could be fitted on the "
                            f"{int(shape.rows.sum())} configurations at {shape.text}")
    yield Branch(ks[~empty], seeds[~empty])


STAGE = Stage("computation", ComputationConfig, run, lambda S, shape: shape.has_n)
