"""Every goodness-of-fit metric: one :class:`Metric` object each, one registry, computed vectorised over candidates.

A metric carries what the rest of the engine needs to know about it, as scikit-learn's scorers do: its
name, the scale of its values, what it needs besides the fit (the leverages of the hat matrix, a refit
without the largest runs, other metrics), a one-line description (the command line's help is made of
them) and how it computes. :data:`METRICS` is the registry, by name, in the order the metrics are
computed and shown; :func:`register` adds one (a new metric is a :class:`Metric` and one call).

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

numpy is imported where a metric is computed, not by this module: the command line builds its
``--metric`` choices and help from :data:`METRICS` without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from automodel.errors import SpaceError
from automodel.options import check_choice

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Metric", "METRICS", "SCALES", "register", "check_metric", "Fit", "compute", "standard_error",
           "holdout_errors"]

#: what the values of a metric are: an absolute error, a fraction of the time, a percentage, or an
#: information criterion (only differences between candidates mean something)
SCALES: tuple[str, ...] = ("seconds", "relative", "percent", "information")


def standard_error(rss: np.ndarray | float, n_points: np.ndarray | int, n_terms: np.ndarray | int) -> np.ndarray:
    """Standard error of the regression ``sqrt(RSS / (m - k))``; ``inf`` where ``m <= k``.

    With a weighted RSS this is ``s_w``, the metric of the weighted fit (``rel_s`` for ``w = 1/y^2``).

    Examples
    --------
    >>> import numpy as np
    >>> standard_error(np.array([6.0, 1.0]), 4, np.array([2, 4])).tolist()
    [1.7320508075688772, inf]
    """
    import numpy as np

    dof = np.asarray(n_points, float) - np.asarray(n_terms, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(dof > 0, np.sqrt(np.asarray(rss, float) / dof), np.inf)


def holdout_errors(pred: np.ndarray, y: np.ndarray, n_left: int, n_terms: int) -> np.ndarray:
    """Relative errors ``pred / y - 1`` on held-out rows of candidates refitted without them; ``inf``
    when the ``n_left`` rows they were fitted on leave no degree of freedom for ``n_terms`` terms."""
    import numpy as np

    rel = pred / y - 1.0
    return rel if n_left > n_terms else np.full_like(rel, np.inf)


class Fit:
    """What a metric may read of a batch of ``N`` fitted candidates on ``m`` rows (see :func:`compute`):
    the observed ``y`` (m, 1 or N), the predictions ``pred`` (m, N), the residuals ``e``, the relative
    residuals ``rel``, the coefficients ``k`` (N,), the residual degrees of freedom ``dof``, and the
    optional ``weighted_rss``, ``lev``, ``holdout_rel``, ``loo_rel``; ``out`` holds the metrics computed
    so far (a metric made of others reads them there)."""

    def __init__(self, y: np.ndarray, pred: np.ndarray, n_terms: np.ndarray | int, weighted_rss: np.ndarray | None,
                 lev: np.ndarray | None, holdout_rel: np.ndarray | None, loo_rel: np.ndarray | None) -> None:
        import numpy as np

        y = np.asarray(y, float)
        self.y = y if y.ndim == 2 else y[:, None]
        self.pred = pred
        self.m, self.n = pred.shape
        self.k = np.broadcast_to(np.asarray(n_terms, float), (self.n,))
        self.dof = self.m - self.k
        self.e = self.y - pred
        self.weighted_rss, self.lev, self.holdout_rel, self.loo_rel = weighted_rss, lev, holdout_rel, loo_rel
        self.out: dict[str, np.ndarray] = {}

    @cached_property
    def rel(self) -> np.ndarray:
        """The relative residuals ``e / y``."""
        return self.e / self.y


@dataclass(frozen=True)
class Metric:
    """A ranking metric ("lower is better"): what the engine needs to know about it, and how it computes.

    Attributes
    ----------
    name : str
        Registry key, lowercase (``--metric NAME``, ``metric = "NAME"`` of a space file).
    scale : str
        One of :data:`SCALES`: the unit of its values.
    description : str
        One line for the command line's help and the documentation.
    compute : callable
        ``compute(fit)`` with a :class:`Fit`: one value per candidate, (N,).
    leverages, holdout : bool
        It needs the hat-matrix diagonal, or a refit without the largest runs.
    needs : tuple of str
        Metrics it is made of (computed before it, whether asked for or not).
    """

    name: str
    scale: str
    description: str
    compute: Callable[[Fit], np.ndarray]
    leverages: bool = False
    holdout: bool = False
    needs: tuple[str, ...] = ()


def _s(f: Fit) -> np.ndarray:
    import numpy as np

    return standard_error(np.einsum("ij,ij->j", f.e, f.e), f.m, f.k)


def _rel_s(f: Fit) -> np.ndarray:
    import numpy as np

    return standard_error(np.einsum("ij,ij->j", f.rel, f.rel), f.m, f.k)


def _aic(f: Fit) -> np.ndarray:
    import numpy as np

    m, k = f.m, f.k
    aic = m * np.log(np.maximum(f.weighted_rss, 1e-300) / m) + 2 * (k + 1)
    corr = np.where(m - k - 2 > 0, 2 * (k + 1) * (k + 2) / (m - k - 2), np.inf)
    return np.where(f.dof > 0, aic + corr, np.inf)


def _smape(f: Fit) -> np.ndarray:
    import numpy as np

    return 100.0 * np.mean(2 * np.abs(f.e) / (np.abs(f.y) + np.abs(f.pred)), axis=0)


def _loo(f: Fit) -> np.ndarray:
    import numpy as np

    if f.loo_rel is not None:  # relative errors of refits without each row (models without leverages)
        loo = np.sqrt(np.mean(f.loo_rel ** 2, axis=0))
        return np.where(np.isnan(loo), np.inf, loo)
    if f.lev is None:
        return np.full(f.n, np.nan)
    loo = np.sqrt(np.mean((f.rel / (1.0 - f.lev)) ** 2, axis=0))
    return np.where(np.isfinite(loo) & (f.lev < 1 - 1e-9).all(axis=0), loo, np.inf)


def _holdout(f: Fit) -> np.ndarray:
    import numpy as np

    holdout = np.full(f.n, np.nan) if f.holdout_rel is None else np.sqrt(np.mean(f.holdout_rel ** 2, axis=0))
    return np.where(np.isnan(holdout) & (f.holdout_rel is not None), np.inf, holdout)


def _forward(f: Fit) -> np.ndarray:
    import numpy as np

    loo, holdout = f.out["loo"], f.out["holdout"]
    return np.where(np.isnan(holdout), loo, np.sqrt((loo ** 2 + holdout ** 2) / 2))


#: ranking metrics by name, in the order they are computed and shown
METRICS: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (after the others; its ``needs`` must be registered) and return it.

    Raises
    ------
    SpaceError
        A name taken or not a lowercase identifier, an unknown scale, or a need not registered.
    """
    if not (metric.name.isidentifier() and metric.name == metric.name.lower()) or metric.name in METRICS:
        raise SpaceError(f"metric name {metric.name!r}: expected a new lowercase identifier; "
                         f"taken: {', '.join(METRICS)}")
    check_choice("metric scale", metric.scale, SCALES)
    for need in metric.needs:
        check_choice(f"metric {metric.name!r} need", need, METRICS)
    METRICS[metric.name] = metric
    return metric


for _metric in (
        Metric("s", "seconds", "standard error of the regression, sqrt(RSS / (m - k))", _s),
        Metric("rel_s", "relative", "relative standard error, of the relative-error fit", _rel_s),
        Metric("loo", "relative", "leave-one-out (PRESS) relative error, no refits", _loo, leverages=True),
        Metric("aic", "information", "Akaike's criterion (AICc on small samples)", _aic),
        Metric("smape", "percent", "symmetric mean absolute percentage error", _smape),
        Metric("holdout", "relative", "relative error on the largest runs, refitted without them", _holdout,
               holdout=True),
        Metric("forward", "relative", "loo and holdout in one number", _forward, leverages=True, holdout=True,
               needs=("loo", "holdout"))):
    register(_metric)


def check_metric(name: str, where: str = "") -> None:
    """Raise a one-line :class:`SpaceError` when ``name`` is not a registered metric."""
    check_choice("metric", name, METRICS, where)


def compute(y: np.ndarray, pred: np.ndarray, n_terms: np.ndarray | int, weighted_rss: np.ndarray | None,
            lev: np.ndarray | None = None, holdout_rel: np.ndarray | None = None,
            names: Iterable[str] | None = None, loo_rel: np.ndarray | None = None) -> dict[str, np.ndarray]:
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
    names : iterable of str, optional
        Which metrics to compute (a metric brings what it ``needs`` along).

    Returns
    -------
    dict
        Name -> (N,) array, in the order of :data:`METRICS`.
    """
    import numpy as np

    wanted = set(METRICS if names is None else names)
    for name in reversed(METRICS):  # needs are registered first: one pass from the last brings them all
        if name in wanted:
            wanted |= set(METRICS[name].needs)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = Fit(y, pred, n_terms, weighted_rss, lev, holdout_rel, loo_rel)
        for name, metric in METRICS.items():
            if name in wanted:
                fit.out[name] = metric.compute(fit)
    return fit.out
