"""Every goodness-of-fit metric, computed in one place, vectorised over candidates.

The default ranking metric is the standard error of the regression ``s = sqrt(RSS / (m - k))``
(adaptive-model-sanjay-slides.txt, slide 19: "Residual Sum of Square, Error Variance, Standard
Error"), so an extra term must pay for itself. The others:

``rel_s``
    relative standard error ``sqrt(sum((r_i / y_i)^2) / (m - k))``, the standard error of the
    relative-error fit of bayesian-kohashi-2022.txt, eq. 7.
``loo``
    root mean square of the relative leave-one-out errors ``e_i / (1 - h_ii) / y_i``, from the
    leverages ``h_ii`` of the (weighted) hat matrix: the exact PRESS residuals, no refits.
``aic``
    Akaike's criterion for Gaussian errors on the fitted (weighted) residuals,
    ``m ln(RSS_w / m) + 2 (k + 1)``, with the small-sample correction (AICc) when ``m > k + 2``.
``smape``
    symmetric mean absolute percentage error ``mean(2 |e| / (|y| + |yhat|))`` in percent.
``holdout``
    root mean square relative error on the largest configurations when the candidate is refitted
    without them (forward extrapolation; :func:`holdout_errors`, refits by :func:`automodel.search.score.score_pairs`).
``forward``
    ``sqrt((loo^2 + holdout^2) / 2)``: leave-one-out inside the range and hold-out beyond it in one
    number (``loo`` alone when there is no hold-out).

All metrics are "lower is better". Candidates with ``m <= k`` get ``inf`` for ``s``, ``rel_s`` and
``aic``: they have no degrees of freedom left to estimate the error.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from automodel.options import METRICS

__all__ = ["METRICS", "compute", "standard_error", "holdout_errors"]


def standard_error(rss: np.ndarray | float, n_points: np.ndarray | int, n_terms: np.ndarray | int) -> np.ndarray:
    """Standard error of the regression ``sqrt(RSS / (m - k))``; ``inf`` where ``m <= k``.

    With a weighted RSS this is ``s_w``, the metric of the weighted fit (``rel_s`` for ``w = 1/y^2``).

    Examples
    --------
    >>> standard_error(np.array([6.0, 1.0]), 4, np.array([2, 4])).tolist()
    [1.7320508075688772, inf]
    """
    dof = np.asarray(n_points, float) - np.asarray(n_terms, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dof > 0, np.sqrt(np.asarray(rss, float) / dof), np.inf)


def holdout_errors(pred: np.ndarray, y: np.ndarray, n_left: int, n_terms: int) -> np.ndarray:
    """Relative errors ``pred / y - 1`` on held-out rows of candidates refitted without them; ``inf``
    when the ``n_left`` rows they were fitted on leave no degree of freedom for ``n_terms`` terms."""
    rel = pred / y - 1.0
    return rel if n_left > n_terms else np.full_like(rel, np.inf)


def compute(y: np.ndarray, pred: np.ndarray, n_terms: np.ndarray | int, weighted_rss: np.ndarray | None,
            lev: np.ndarray | None = None, holdout_rel: np.ndarray | None = None,
            names: Iterable[str] = METRICS, loo_rel: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The metrics ``names`` (default all) for a batch of candidates.

    Parameters
    ----------
    y : (m,) or (m, N) array
        Observed times: shared by all candidates, or one column per candidate (many kernels).
    pred : (m, N) array
        Each candidate's predictions on the same rows.
    n_terms : int or (N,) array
        Number of coefficients k of each candidate.
    weighted_rss : (N,) array or None
        The residual sum of squares the fit minimised (with weights), for AIC (only read for ``aic``).
    lev : (m, N) array, optional
        Leverages for ``loo``; NaN ``loo`` when absent.
    holdout_rel : (h, N) array, optional
        Relative errors on held-out rows of the candidates refitted without them; NaN when absent.
    loo_rel : (m, N) array, optional
        Relative errors of each row under a refit without it (for ``loo`` of a model that has no
        leverages, e.g. a template); when given, ``lev`` is not read.
    names : iterable of str
        Which metrics to compute (``forward`` brings ``loo`` and ``holdout`` along).
    """
    names = set(names)
    if "forward" in names:
        names |= {"loo", "holdout"}
    y = np.asarray(y, float)
    y = y if y.ndim == 2 else y[:, None]
    m, n = pred.shape
    k = np.broadcast_to(np.asarray(n_terms, float), (n,))
    dof = m - k
    e = y - pred
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        if "s" in names:
            out["s"] = standard_error(np.einsum("ij,ij->j", e, e), m, k)
        rel = e / y if names & {"rel_s", "loo"} else None
        if "rel_s" in names:
            out["rel_s"] = standard_error(np.einsum("ij,ij->j", rel, rel), m, k)
        if "aic" in names:
            aic = m * np.log(np.maximum(weighted_rss, 1e-300) / m) + 2 * (k + 1)
            corr = np.where(m - k - 2 > 0, 2 * (k + 1) * (k + 2) / (m - k - 2), np.inf)
            out["aic"] = np.where(dof > 0, aic + corr, np.inf)
        if "smape" in names:
            out["smape"] = 100.0 * np.mean(2 * np.abs(e) / (np.abs(y) + np.abs(pred)), axis=0)
        if "loo" in names:
            if loo_rel is not None:  # relative errors of refits without each row (models without leverages)
                loo = np.sqrt(np.mean(loo_rel ** 2, axis=0))
                loo = np.where(np.isnan(loo), np.inf, loo)
            elif lev is None:
                loo = np.full(n, np.nan)
            else:
                loo = np.sqrt(np.mean((rel / (1.0 - lev)) ** 2, axis=0))
                loo = np.where(np.isfinite(loo) & (lev < 1 - 1e-9).all(axis=0), loo, np.inf)
            out["loo"] = loo
        if "holdout" in names:
            holdout = (np.full(n, np.nan) if holdout_rel is None
                       else np.sqrt(np.mean(holdout_rel ** 2, axis=0)))
            out["holdout"] = np.where(np.isnan(holdout) & (holdout_rel is not None), np.inf, holdout)
        if "forward" in names:
            loo, holdout = out["loo"], out["holdout"]
            out["forward"] = np.where(np.isnan(holdout), loo, np.sqrt((loo ** 2 + holdout ** 2) / 2))
    return {name: out[name] for name in METRICS if name in out}
