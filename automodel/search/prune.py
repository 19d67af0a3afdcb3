"""Ranking and percentile pruning (adaptive-model-sanjay-slides.txt, slide 22: "for every function
evaluation we are deleting least ranked functions using percentile technique")."""

from __future__ import annotations

import numpy as np

__all__ = ["rank", "prune"]


def rank(scores: np.ndarray) -> np.ndarray:
    """Indices of ``scores`` from best (lowest) to worst; NaN and inf last; ties keep input order."""
    s = np.where(np.isfinite(scores), scores, np.inf)
    return np.argsort(s, kind="stable")


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
    order = rank(scores)
    finite = np.isfinite(scores[order])
    order = order[finite]
    if not len(order):
        return order, len(scores)
    cutoff = np.percentile(scores[order], percentile)
    n_keep = max(int(np.count_nonzero(scores[order] <= cutoff)), min(min_survivors, len(order)))
    kept = order[:n_keep]
    n_deleted = len(scores) - n_keep
    if top is not None:
        kept = kept[:top]
    return kept, n_deleted
