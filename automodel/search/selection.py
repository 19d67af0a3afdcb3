"""The noun of a choice: which ranked candidate became the model, and why (:mod:`automodel.search.choice`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Selection"]


@dataclass(frozen=True)
class Selection:
    """The chosen candidate and why.

    Attributes
    ----------
    index : int
        Position of the chosen candidate in the arrays passed to :func:`select`.
    best : int
        Position of the best-ranked candidate.
    threshold : float
        Candidates scoring at most this are statistically equivalent to the best.
    equivalent : ndarray of bool
        Which candidates are within ``threshold``.
    reason : str
        One line for people: what was chosen and on what grounds.
    set_aside : ndarray of bool or None
        Which candidates were set aside before the tie, growing beyond the data faster than any term
        of the search space (:func:`automodel.search.choice.admissible_scores`); None when none was.
    """

    index: int
    best: int
    threshold: float
    equivalent: np.ndarray
    reason: str
    set_aside: np.ndarray | None = field(default=None)
