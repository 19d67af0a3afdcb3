"""Ranking and percentile pruning (adaptive-model-sanjay-slides.txt, slide 22: "for every function
evaluation we are deleting least ranked functions using percentile technique")."""

from __future__ import annotations

import numpy as np

from automodel.options import RELATIVE_RESOLUTION

__all__ = ["rank", "prune", "prune_rows"]


def rank(scores: np.ndarray) -> np.ndarray:
    """Indices of ``scores`` from best (lowest) to worst; NaN and inf last; ties keep input order.

    Scores equal to within :data:`~automodel.options.RELATIVE_RESOLUTION` (relative to their size) are
    ties: two candidates that fit alike (``log2(p)`` and ``ceil(log2(p))`` on powers of two) get scores
    that differ only by rounding, and which rounding depends on the path to them (a fit from the runs,
    or statistics updated one observe at a time); a ranking that followed the rounding would differ
    between the two.

    >>> rank(np.array([2.0, 1.0 + 1e-14, 1.0, np.nan, 0.5])).tolist()
    [4, 1, 2, 0, 3]
    >>> rank(np.array([0.3, np.inf, 0.3 + 1e-9, 0.3])).tolist()
    [0, 3, 2, 1]
    """
    s = np.where(np.isfinite(scores), scores, np.inf)
    order = np.argsort(s, kind="stable")
    ranked = s[order]
    with np.errstate(invalid="ignore"):
        same = (ranked[1:] == ranked[:-1]) | (np.isfinite(ranked[1:]) & (
            np.abs(ranked[1:] - ranked[:-1]) <= RELATIVE_RESOLUTION * np.abs(ranked[1:])))
    group = np.cumsum(np.r_[True, ~same]) if len(s) else np.zeros(0, int)
    return order[np.lexsort((order, group))]


def prune(scores: np.ndarray, percentile: float, min_survivors: int, top: int | None = None
          ) -> tuple[np.ndarray, int]:
    """Delete the candidates ranked below ``percentile`` and keep at most ``top``.

    Parameters
    ----------
    scores : (N,) array
        Lower is better; non-finite scores are always deleted.
    percentile : float in (0, 100]
        Candidates whose score exceeds this percentile of the finite scores are deleted.
    min_survivors : int
        The percentile rule never leaves fewer survivors than this (when that many are finite).
    top : int, optional
        Keep at most this many of the survivors.

    Returns
    -------
    kept : array of int
        Indices of the survivors, best first.
    n_deleted : int
        How many candidates the percentile rule (and non-finite scores) deleted.
    """
    kept, n_deleted = prune_rows(np.asarray(scores, float)[None], np.arange(len(scores))[None], percentile,
                                 min_survivors, top)
    return kept[0][kept[0] >= 0], n_deleted


def prune_rows(values: np.ndarray, ids: np.ndarray, percentile: float, min_survivors: int,
               top: int | None = None) -> tuple[np.ndarray, int]:
    """:func:`prune` of each row's candidates (``ids`` (R, C) >= 0, scores ``values`` (R, C)), all rows
    at once (the staged search of many targets): the survivors' ids, best first, (R, C') -1 padded,
    and how many were deleted in all. The rows with the same number of finite scores take their
    percentiles in one call."""
    present = ids >= 0
    v = np.where(present & np.isfinite(values), values, np.inf)  # as rank(): non-finite last, then deleted
    order = np.argsort(v, axis=1, kind="stable")
    s = np.take_along_axis(v, order, axis=1)
    n_finite = np.count_nonzero(np.isfinite(s), axis=1)
    cutoff = np.full(len(ids), -np.inf)
    for n in np.unique(n_finite[n_finite > 0]):
        at = np.flatnonzero(n_finite == n)
        cutoff[at] = np.percentile(s[at, :n], percentile, axis=1)
    n_keep = np.maximum(np.count_nonzero(s <= cutoff[:, None], axis=1), np.minimum(min_survivors, n_finite))
    n_kept = n_keep if top is None else np.minimum(n_keep, top)
    width = int(n_kept.max(initial=0))
    kept = np.take_along_axis(ids, order[:, :width], axis=1)
    kept[np.arange(width) >= n_kept[:, None]] = -1
    return kept, int((np.count_nonzero(present, axis=1) - n_keep).sum())
