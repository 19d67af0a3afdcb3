"""Stage 1 of adaptive-model-sanjay-slides.txt (slide 18): computation terms f(n), alone and divided by the
CPU function(s), on the runs with the lowest process count."""

from __future__ import annotations

import numpy as np

from automodel.search.stages.parts import part_stage
from automodel.search.state import Search
from automodel.space.terms import Term

__all__ = ["stage_computation"]


def stage_computation(S: Search, ks: np.ndarray, rows: np.ndarray, rows_text: str, seeds: np.ndarray,
                      multipliers: tuple[Term, ...], final: bool) -> np.ndarray:
    """The computation stage of the targets ``ks`` on ``rows`` (described by ``rows_text``): every subset
    of the ``[stages.computation]`` terms times a load function and each of ``multipliers``, added to
    each of ``seeds`` (R, S) (:func:`~automodel.search.stages.parts.part_stage`); returns the survivors."""
    return part_stage(S, ks, "computation", rows, rows_text, seeds, "comp", multipliers, final)
