"""What a run could tell the tied candidates apart by: their log ratios, less what the data already tested."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.solve import band

__all__ = ["inside_ranges", "log_ratios", "untested"]


def inside_ranges(X: pd.DataFrame, ranges: Mapping[str, tuple[float, float]]) -> np.ndarray:
    """Rows of ``X`` inside every training range."""
    ok = np.ones(len(X), bool)
    for q, (low, high) in ranges.items():
        if q in X:
            x = X[q].to_numpy(float)
            ok &= (x >= low * (1 - 1e-9)) & (x <= high * (1 + 1e-9))
    return ok


def log_ratios(alternatives: Sequence[Any], X: pd.DataFrame, core: Any, yhat: np.ndarray | None = None
               ) -> np.ndarray:
    """(rows, alternatives) ``log(a(x) / yhat(x))``; ``yhat`` defaults to ``core``'s prediction. NaN where
    either is not a positive time."""
    if not alternatives or not len(X):
        return np.zeros((len(X), len(alternatives)))
    with np.errstate(all="ignore"):
        y = np.asarray(core.predict(X), float) if yhat is None else yhat
        return np.column_stack([band.log_ratio(np.asarray(a.predict(X), float), y) for a in alternatives])


def untested(D: np.ndarray, survived: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """The alternatives' log ratios ``D`` (rows x alternatives) less what the data already tested: the
    largest ``|log ratio|`` of each alternative at the tested configurations (``survived``, rows x
    alternatives) is the disagreement it survived (the misfit absorbs it), so only the excess tells it
    apart; 0 at the ``measured`` rows themselves (a repeat tests nothing new).

    Examples
    --------
    >>> untested(np.array([[0.02], [0.30], [-0.05]]), np.array([[0.02]]), np.array([True, False, False])
    ...          ).round(2).tolist()
    [[0.0], [0.28], [-0.03]]
    """
    finite = np.where(np.isfinite(survived), np.abs(survived), 0.0)
    tested = finite.max(axis=0) if len(finite) else np.zeros(D.shape[1])
    out = np.sign(D) * np.maximum(np.abs(D) - tested[None, :], 0.0)
    return np.where(measured[:, None], 0.0, out)
