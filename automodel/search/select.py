"""The tie rule: which candidates the data cannot tell apart from the best-ranked one.

The ranking metric orders candidates, but on a handful of noisy runs the top of the ranking is a
crowd of models whose scores differ by less than the uncertainty of the scores themselves. The rule
here is the "one-standard-error rule" of model selection (Breiman et al., *Classification and
Regression Trees*, 1984, sec. 3.4.3; Hastie, Tibshirani and Friedman, *The Elements of Statistical
Learning*, 2nd ed., sec. 7.10): the candidates whose score is within the uncertainty of the best
score are tied with it. Which of them becomes the model is :mod:`automodel.search.choice`'s job.

The uncertainty of the best score is the larger of

* one standard error of the score itself: a standard error ``s`` estimated from ``dof`` residual
  degrees of freedom has a relative standard error of about ``1 / sqrt(2 dof)`` (normal errors),
  used for the error-type metrics (``s``, ``rel_s``, ``loo``, ``holdout``, ``forward``, ``smape``);
  for ``aic`` the band is 2 (Burnham and Anderson, *Model Selection and Multimodel Inference*, 2002,
  sec. 2.6: models within 2 of the minimum have substantial support);
* the measurement noise: the pooled standard error of the aggregated times, estimated from the
  repetitions (:meth:`automodel.data.Dataset.aggregate_se`). A model that fits the runs to within
  the scatter of their repetitions fits them as well as the data can say.

All functions are pure.
"""

from __future__ import annotations

import numpy as np

from automodel.options import RELATIVE_RESOLUTION
from automodel.solve.metrics import METRICS

__all__ = ["noise_floor", "tolerance", "thresholds", "comparable", "too_few_dof", "MIN_DOF", "ALWAYS_COMPETES"]


def noise_floor(metric: str, noise_relative, noise_absolute):
    """The noise floor in the units of ``metric`` (0 where the metric has none)."""
    scale = METRICS[metric].scale
    if scale == "seconds":
        return noise_absolute
    relative = np.maximum(noise_relative, RELATIVE_RESOLUTION)
    return {"relative": relative, "percent": 100.0 * relative}.get(scale, 0.0 * relative)


def thresholds(best_value, metric: str, dof, noise_relative=0.0, noise_absolute=0.0) -> np.ndarray:
    """:func:`tolerance` for arrays of best scores (one per kernel, say): the thresholds only."""
    best = np.asarray(best_value, float)
    if METRICS[metric].scale == "information":
        thr = best + 2.0
    else:
        band = best * (1.0 + 1.0 / np.sqrt(2.0 * np.maximum(dof, 1)))
        thr = np.maximum(band, noise_floor(metric, noise_relative, noise_absolute))
    return np.where(np.isfinite(best), thr, best)


def tolerance(best_value: float, metric: str, dof: int, noise_relative: float = 0.0,
              noise_absolute: float = 0.0) -> tuple[float, str]:
    """Upper score of the candidates that cannot be told apart from a best score ``best_value``.

    Parameters
    ----------
    best_value : float
        Score of the best-ranked candidate (lower is better).
    metric : str
        Ranking metric (see :data:`automodel.solve.metrics.METRICS`).
    dof : int
        Residual degrees of freedom of the best candidate (runs minus coefficients).
    noise_relative, noise_absolute : float
        Pooled standard error of the aggregated times, relative and in seconds (0 without
        repetitions).

    Returns
    -------
    threshold : float
    why : str
        Which bound set the threshold, for the explanation.

    Examples
    --------
    >>> round(tolerance(0.1, "rel_s", dof=8)[0], 3)
    0.125
    >>> tolerance(0.1, "rel_s", dof=8, noise_relative=0.3)
    (0.3, 'the repetition noise 0.3')
    >>> tolerance(-20.0, "aic", dof=3)
    (-18.0, 'a difference of 2 in AICc')
    """
    thr = float(thresholds(best_value, metric, dof, noise_relative, noise_absolute))
    if not np.isfinite(best_value):
        return thr, "no finite score"
    if METRICS[metric].scale == "information":
        return thr, "a difference of 2 in AICc"
    floor = float(noise_floor(metric, noise_relative, noise_absolute))
    if floor > best_value * (1.0 + 1.0 / np.sqrt(2.0 * max(dof, 1))):
        if floor == float(noise_floor(metric, 0.0, 0.0)):
            return thr, f"the numerical resolution {floor:.3g} (the fit is exact to rounding)"
        return thr, f"the repetition noise {floor:.3g}"
    return thr, f"one standard error of the best {metric}, {best_value:.3g} on {max(dof, 1)} dof"


def too_few_dof(n_terms: np.ndarray, n_points: int) -> np.ndarray:
    """Whether candidates of ``n_terms`` coefficients fitted on ``n_points`` configurations are left with
    too few residual degrees of freedom to compete (:data:`MIN_DOF`, :data:`ALWAYS_COMPETES`).

    >>> too_few_dof(np.array([1, 2, 3]), 3).tolist()
    [False, False, True]
    """
    n_terms = np.asarray(n_terms)
    return (n_points - n_terms < MIN_DOF) & (n_terms > ALWAYS_COMPETES)


def comparable(scores: np.ndarray, n_terms: np.ndarray, n_points: int) -> np.ndarray:
    """``scores`` (..., N) with those of candidates left with fewer than :data:`MIN_DOF` residual degrees
    of freedom set to infinity, in the rows where another candidate has a finite score; a candidate of
    at most :data:`ALWAYS_COMPETES` coefficients keeps its score whatever its degrees of freedom.

    Examples
    --------
    >>> comparable(np.array([0.001, 0.01, 0.02]), np.array([3, 2, 1]), n_points=4).tolist()
    [inf, 0.01, 0.02]
    >>> comparable(np.array([0.001, 0.01, 0.02]), np.array([3, 2, 1]), n_points=3).tolist()  # c + a f(x) on three
    [inf, 0.01, 0.02]
    """
    scores = np.asarray(scores, float)
    scarce = too_few_dof(np.broadcast_to(n_terms, scores.shape), n_points)
    others = (np.isfinite(scores) & ~scarce).any(axis=-1, keepdims=True)
    return np.where(scarce & others, np.inf, scores)


#: candidates with fewer residual degrees of freedom (runs minus coefficients) are chosen only when no
#: other candidate has a finite score: a standard error from one dof is uncertain by 70 % (see
#: :func:`thresholds`), and AICc's penalty 2k(k+1)/(n-k-1) is infinite for k = n - 1 (Burnham and
#: Anderson 2002, sec. 2.4); four runs and a three-coefficient template fit the noise
MIN_DOF = 2
#: ... except a constant and one term, the smallest hypothesis of Extra-P's normal form (Calotoiu et al.,
#: SC13, sec. 3: every model has its constant): on three configurations the rule above would leave only
#: single terms, and a single power law through three runs drops the constant the runs stand on, then
#: extrapolates as if the time grew from zero (``3427/p`` from three node counts, off by 39 %, where
#: ``c + a/p`` was ranked and is off by under 5 %; issue 36, failure 2)
ALWAYS_COMPETES = 2
