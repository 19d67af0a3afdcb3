"""The anomaly rule of the live pool: which new runs no leading model explains.

Anomaly rule: after refitting with the new runs, take the ``n_leaders`` best candidates; for each,
the relative residuals ``r = (y - yhat) / y`` of the reference runs, their median ``med`` and median
absolute deviation ``MAD``. A new run is anomalous when, under *every* leading model,
``|r - med| > anomaly_mad * MAD_TO_SIGMA * MAD`` and ``|r| > anomaly_floor``: no leading model explains it.
A run that some leader explains (e.g. a run under a new load that a ``g(n)/bw`` candidate fits) is
kept, so a changed machine moves the ranking instead of being set aside. The reference runs are a
sliding window: the new runs and the :data:`ANOMALY_WINDOW` admitted runs added last before them (every
admitted run while there are fewer), so an update costs O(new runs), not O(all runs). The worst
anomalous run is set aside, the statistics are those from before the update plus the new runs not set
aside (exact, no rebuild), the candidates are refitted, and the rule is applied again.
"""

from __future__ import annotations

import numpy as np

from automodel.options import MAD_TO_SIGMA
from automodel.search import score

__all__ = ["anomalous", "unexplained", "relative_residuals", "predict", "ANOMALY_WINDOW"]

#: the admitted runs (added last) that, with the new runs, are the anomaly rule's reference (module docstring)
ANOMALY_WINDOW = 1000


def predict(values: np.ndarray, index: np.ndarray, width: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """(m, N) predictions of candidates (rows of ``index``/``coef``, padded beyond ``width``) on runs with
    pool values (m, T): :func:`automodel.search.score.predict` with the padding contributing zero."""
    pad = np.arange(index.shape[1])[None, :] >= width[:, None]
    used, cols = np.unique(np.where(pad, 0, index), return_inverse=True)  # only the columns they use
    return score.predict(np.nan_to_num(values[:, used]), cols.reshape(index.shape),
                         np.where(pad, 0.0, np.nan_to_num(coef)))


def anomalous(values: np.ndarray, y: np.ndarray, test: np.ndarray, index: np.ndarray, width: np.ndarray,
              coef: np.ndarray, mad: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Which runs (``test`` mask over rows) no leading model explains; see the module docstring.

    ``index``, ``width``, ``coef`` describe the leading models; ``values`` (m, T) and ``y`` (m,) are
    the reference runs plus the tested ones. Returns the mask and each run's severity, the least
    (over the leaders) robust z-score ``|r - med| / (MAD_TO_SIGMA MAD)``.
    """
    return unexplained(relative_residuals(values, y, index, width, coef), test, mad, floor)


def relative_residuals(values: np.ndarray, y: np.ndarray, index: np.ndarray, width: np.ndarray,
                       coef: np.ndarray) -> np.ndarray:
    """(m, L) relative residuals ``(y - yhat) / y`` of runs with pool values ``values`` (m, T) under the
    ``L`` candidates ``index``, ``width``, ``coef``."""
    return (y[:, None] - predict(values, index, width, coef)) / y[:, None]


def unexplained(rel: np.ndarray, test: np.ndarray, mad: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The anomaly rule of the module docstring on relative residuals ``rel`` (m, L) of every run under
    each of ``L`` leading models: the mask of ``test`` runs no leader explains, and each run's severity
    (the least robust z-score over the leaders)."""
    med = np.median(rel, axis=0)
    spread = MAD_TO_SIGMA * np.median(np.abs(rel - med), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(rel - med) / spread
    z = np.where(np.isnan(z), 0.0, z)
    severity = z.min(axis=1)
    big = (np.abs(rel) > floor).all(axis=1)
    return test & (severity > mad) & big, np.where(test & big, severity, 0.0)
