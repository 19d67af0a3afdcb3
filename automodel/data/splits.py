"""Splits of a dataset's rows: the largest configurations held out for forward extrapolation."""

from __future__ import annotations

import numpy as np

from automodel.data.dataset import Dataset

__all__ = ["holdout_rows"]


def holdout_rows(ds: Dataset, rows: np.ndarray | None = None) -> np.ndarray | None:
    """The largest configurations among ``rows`` (default all) of ``ds``: the top level of every
    parameter but the loads (each when it has at least 3 levels there), held out for the
    forward-extrapolation metric; None when nothing qualifies or fewer than 3 rows would be left."""
    rows = np.ones(ds.n_points, bool) if rows is None else rows
    hold = np.zeros(len(rows), bool)
    for q in ds.params:
        if q not in ("cpu", "bw"):
            v = ds.frame[q].to_numpy()
            if len(np.unique(v[rows])) >= 3:
                hold |= rows & (v == v[rows].max())
    left = int(np.count_nonzero(rows & ~hold))
    return hold if hold.any() and left >= 3 else None
