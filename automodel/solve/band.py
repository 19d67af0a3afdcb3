"""The mathematics of a prediction band, in the log (relative) space the fit works in.

A predicted time ``yhat(x)`` gets the band ``yhat * exp(+-q * s(x))``: ``q`` is the Student-t
quantile of the level on the Welch-Satterthwaite degrees of freedom of the parts (:func:`satterthwaite`:
few when a part estimated from few numbers dominates), ``s(x)`` the standard deviation of
``log(T(x) / yhat(x))``, the sum in quadrature of independent parts (:func:`combine`):

``run``
    the scatter of one run around the expected time (the repetition noise); absent from a band of
    the expected time;
``misfit``
    what the model misses inside the measured range beyond that noise (the residuals of the
    aggregated times, less the noise of an aggregate);
``coefficients``
    the coefficients' uncertainty, ``sqrt(a(x)' C a(x)) / yhat(x)`` for a linear model with term
    values ``a(x)`` and coefficient covariance ``C`` (:func:`coefficient_covariance`,
    :func:`quadratic_form`); it grows by itself away from the data;
``choice``
    the disagreement of the candidates the data cannot tell apart (root mean square of their log
    ratios to the chosen prediction, :func:`log_ratio`);
``growth``
    ``sqrt(sum_q (g_q d_q(x))^2)``: ``d_q`` the number of doublings by which ``x`` lies beyond the
    measured range of parameter ``q`` (:func:`doublings_beyond`), or beyond the measured configuration
    nearest above it where the measured ones do not fill the box of the ranges (:func:`frontier`,
    :func:`doublings_beyond_frontier`: a run at large ``n`` and small ``p`` and one at small ``n`` and
    large ``p`` do not measure large ``n`` at large ``p``), ``g_q`` the error gained per doubling,
    measured on forward splits of the training data (:mod:`automodel.model.calibration`).

Every function here is pure and vectorised over rows.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from automodel.solve.student import t_quantile

__all__ = ["quantile", "satterthwaite", "log_ratio", "coefficient_covariance", "quadratic_form", "doublings_beyond",
           "MAX_FRONTIER", "frontier", "doublings_above", "growth_cost", "doublings_beyond_frontier", "combine", "bounds"]

#: at most this many measured configurations make a :func:`frontier` (those of the largest sums of logs
#: first): fewer only count more of a prediction as beyond the data
MAX_FRONTIER = 64


def quantile(level: float, dof: float | np.ndarray) -> float | np.ndarray:
    """The two-sided Student-t multiplier of a central ``level`` band on ``dof`` degrees of freedom
    (a number, or an array of them: one multiplier each).

    Examples
    --------
    >>> round(quantile(0.9, 1e9), 3), round(quantile(0.9, 3), 3)
    (1.645, 2.353)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    prob = min((1.0 + level) / 2.0, 1.0 - 2.0 ** -53)  # a level of 1 - 1e-16 is a probability of 1.0 once halved
    q = t_quantile(prob, np.maximum(np.asarray(dof, float), 1.0))
    return float(q) if np.ndim(q) == 0 else q


def satterthwaite(parts: list[tuple[np.ndarray | float, float]]) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variances.

    ``parts`` are ``(standard deviation, its degrees of freedom)``; the result, per row, is
    ``(sum s_i^2)^2 / sum(s_i^4 / nu_i)``: near the smallest ``nu_i`` when that part dominates, the sum
    of them when all are equal. Rows where every part is 0 get the largest ``nu_i``.

    Examples
    --------
    >>> float(satterthwaite([(1.0, 10.0), (0.0, 2.0)])), float(satterthwaite([(1.0, 10.0), (1.0, 10.0)]))
    (10.0, 20.0)
    """
    largest = max((nu for _, nu in parts), default=1.0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # a scale beyond 1e77: NaN, no warning
        total = sum(np.square(s) for s, _ in parts)
        spread = sum(np.power(s, 4) / max(nu, 1.0) for s, nu in parts)
        return np.where(spread > 0, np.square(total) / spread, largest)


def log_ratio(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
    """``log(y / yhat)`` where both are positive and finite, NaN elsewhere (no warning)."""
    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    ok = (y > 0) & (yhat > 0) & np.isfinite(y) & np.isfinite(yhat)
    out = np.full(np.broadcast(y, yhat).shape, np.nan)
    np.log(np.divide(y, yhat, where=ok, out=np.ones_like(out)), where=ok, out=out)
    return out


def coefficient_covariance(values: np.ndarray, w: np.ndarray, variance: float | np.ndarray) -> np.ndarray:
    """Covariance ``s_w^2 (A' W A)^+`` of weighted least-squares coefficients, for one model or a batch.

    Parameters
    ----------
    values : (..., m, k) array
        Term values ``A`` at the fitted rows (a leading batch axis: one system per model).
    w : (m,) or (..., m) array
        Row weights of the fit (:func:`automodel.options.weights`), shared or one row per system.
    variance : float or (...,) array
        The weighted residual variance ``s_w^2 = sum(w r^2) / (m - k)`` of each fit.

    Returns (..., k, k). The weighted Gram is scaled to a unit diagonal before the pseudo-inverse, so
    terms of very different magnitude (``n^3`` beside ``1``) keep their directions; a system with a
    value that is not finite gets a matrix of NaN.
    """
    A = np.asarray(values, float)
    batch = A.shape[:-2]
    k = A.shape[-1]
    A = A.reshape((-1,) + A.shape[-2:])
    w = np.broadcast_to(np.asarray(w, float), batch + A.shape[-2:-1]).reshape(len(A), -1)
    variance = np.broadcast_to(np.asarray(variance, float), batch).reshape(-1)
    out = np.full((len(A), k, k), np.nan)
    good = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(w).all(axis=1) & np.isfinite(variance)
    with np.errstate(over="ignore", invalid="ignore"):
        gram = np.einsum("bmi,bmj->bij", A * w[:, :, None], A)  # A' W A of every system
        norms = np.sqrt(np.diagonal(gram, axis1=1, axis2=2))
    good &= np.isfinite(gram).all(axis=(1, 2)) & np.isfinite(norms).all(axis=1)  # beyond the range of squares
    if k and good.any():
        gram, norms = gram[good], norms[good]
        norms = np.where(norms > 0, norms, 1.0)
        outer = norms[:, :, None] * norms[:, None, :]
        out[good] = np.linalg.pinv(gram / outer) / outer * variance[good][:, None, None]
    return out.reshape(batch + (k, k))


def quadratic_form(values: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """``a_i' C a_i`` for every row ``a_i`` of ``values`` (n, k); never negative."""
    values = np.asarray(values, float)
    return np.maximum(np.einsum("ij,jk,ik->i", values, np.asarray(cov, float), values), 0.0)


def doublings_beyond(columns: Mapping[str, np.ndarray], ranges: Mapping[str, tuple[float, float]]
                     ) -> dict[str, np.ndarray]:
    """For each parameter of ``ranges``, ``log2`` of how far each row lies outside ``[low, high]``.

    0 inside the range; ``log2(x / high)`` above it, ``log2(low / x)`` below it. Parameters that are
    not positive on both sides (an offset, a fraction that may be 0) count in units of the range's
    width instead. ``low`` and ``high`` may be arrays that broadcast with the rows (one range per row:
    the ranges a candidate run would leave, :mod:`automodel.suggestion`).

    Examples
    --------
    >>> doublings_beyond({"p": np.array([4.0, 64.0, 1.0])}, {"p": (2.0, 16.0)})["p"].tolist()
    [0.0, 2.0, 1.0]
    >>> doublings_beyond({"p": np.array([64.0, 64.0])}, {"p": (1.0, np.array([16.0, 32.0]))})["p"].tolist()
    [2.0, 1.0]
    """
    out = {}
    for q, (low, high) in ranges.items():
        x = np.asarray(columns[q], float)
        low, high = np.asarray(low, float), np.asarray(high, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            safe = np.maximum(x, 1e-300)
            logs = np.maximum(np.log2(safe / np.where(high > 0, high, 1.0)), np.log2(np.where(low > 0, low, 1.0) / safe))
            width = np.maximum(high - low, 1e-300)
            d = np.where(low > 0, logs, np.maximum(x - high, low - x) / width)
        out[q] = np.maximum(np.nan_to_num(d, nan=0.0, posinf=1e3), 0.0)
    return out


def frontier(points: np.ndarray, limit: int = MAX_FRONTIER) -> np.ndarray:
    """The rows of ``points`` (m, k) of positive parameter values that no other row dominates (another
    at least as large in every column, larger in one): the measured configurations that bound the
    data from above, at most ``limit`` of them (the largest sums of logs first). A full grid has one,
    its largest corner.

    >>> frontier(np.array([[1.0, 8.0], [4.0, 1.0], [2.0, 2.0], [1.0, 1.0], [4.0, 1.0]])).tolist()
    [[1.0, 8.0], [2.0, 2.0], [4.0, 1.0]]
    """
    rows = np.unique(np.asarray(points, float), axis=0)
    rows = rows[np.argsort(-np.log(rows).sum(axis=1), kind="stable")]  # a row is dominated only by one before it
    kept: list[np.ndarray] = []
    while len(rows) and len(kept) < limit:  # the first left is dominated by none: keep it, drop what it dominates
        kept.append(rows[0])
        rows = rows[1:][~(rows[1:] <= rows[0]).all(axis=1)]
    return np.array(kept).reshape(len(kept), np.shape(points)[1])


def doublings_above(columns: Mapping[str, np.ndarray], corners: Mapping[str, np.ndarray],
                    names: list[str]) -> np.ndarray:
    """(len(names), rows, corners): ``log2`` of how far each row lies above each corner in each parameter
    of ``names``, 0 where it does not.

    >>> doublings_above({"n": np.array([8.0])}, {"n": np.array([2.0, 16.0])}, ["n"]).tolist()
    [[[2.0, 0.0]]]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.stack([np.log2(np.maximum(np.asarray(columns[q], float), 1e-300)[:, None]
                                  / np.atleast_1d(np.asarray(corners[q], float))[None, :]) for q in names])
    return np.maximum(np.nan_to_num(above, nan=0.0, posinf=1e3), 0.0)


def growth_cost(above: np.ndarray, growth: np.ndarray) -> np.ndarray:
    """The squared growth part ``sum_q (growth_q d_q)^2`` of distances ``above`` (q, ...), with a trace
    of the plain distances to break ties between corners where a growth is 0."""
    weight = np.asarray(growth, float).reshape((-1,) + (1,) * (above.ndim - 1))
    with np.errstate(over="ignore", invalid="ignore"):  # a model file's growth of 1e308: inf, no warning
        return ((weight * above) ** 2).sum(axis=0) + 1e-12 * above.sum(axis=0)


def doublings_beyond_frontier(columns: Mapping[str, np.ndarray], ranges: Mapping[str, tuple[float, float]],
                              corners: Mapping[str, np.ndarray], growth: Mapping[str, float]
                              ) -> dict[str, np.ndarray]:
    """:func:`doublings_beyond`, with the distance above the data measured from the measured configuration
    nearest above each row rather than from each parameter's largest value alone: ``corners`` (each
    parameter's values at the :func:`frontier` points) are the configurations that bound the data from
    above; of them, the one that leaves the least growth ``sqrt(sum_q (growth_q d_q)^2)`` to a row gives
    its distances (:func:`growth_cost`). A row that some measured configuration bounds in every parameter
    is inside; the corner of large ``n`` and large ``p`` that only runs at large ``n`` or at large ``p``
    surround is not. Parameters missing from ``corners`` keep :func:`doublings_beyond`'s distance.

    >>> d = doublings_beyond_frontier({"n": np.array([8.0, 2.0]), "p": np.array([8.0, 2.0])},
    ...                               {"n": (1.0, 8.0), "p": (1.0, 8.0)},
    ...                               {"n": np.array([8.0, 1.0]), "p": np.array([1.0, 8.0])}, {"n": 0.1, "p": 0.1})
    >>> d["n"].tolist(), d["p"].tolist()
    ([0.0, 0.0], [3.0, 1.0])
    """
    out = doublings_beyond(columns, ranges)
    names = [q for q in corners if q in columns and q in ranges and np.min(corners[q]) > 0]
    if not names or len(np.atleast_1d(corners[names[0]])) < 2:
        return out  # one corner, the box's: doublings_beyond says it
    above = doublings_above(columns, corners, names)  # (q, rows, corners)
    nearest = np.argmin(growth_cost(above, [growth.get(q, 1.0) for q in names]), axis=1)
    for i, q in enumerate(names):
        out[q] = np.maximum(np.take_along_axis(above[i], nearest[:, None], axis=1)[:, 0], out[q])
    return out


def combine(*parts: np.ndarray | float) -> np.ndarray:
    """The root sum of squares of independent standard deviations (broadcast); inf, without a warning,
    where a square overflows (a model file's covariance or run noise of 1e308: :func:`bounds` makes it no
    bound). Any number of parts: ``np.broadcast`` took at most 64, and a model of 62 parameters has more."""
    total = np.zeros(np.broadcast_shapes(*[np.shape(p) for p in parts]))
    with np.errstate(over="ignore"):
        for part in parts:
            total = total + np.square(part)
    return np.sqrt(total)


def bounds(yhat: np.ndarray, scale: np.ndarray, level: float, dof: float | np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """``yhat * exp(-q s)`` and ``yhat * exp(q s)``; NaN where ``yhat`` is not a positive time, 0 and
    inf where the scale is not finite (an overflow far beyond the data: no bound).

    Examples
    --------
    >>> lo, hi = bounds(np.array([10.0, -1.0]), np.array([0.1, 0.1]), 0.9, 1e9)
    >>> [round(float(v), 3) for v in lo], [round(float(v), 3) for v in hi]
    ([8.483, nan], [11.788, nan])
    """
    yhat, scale = np.asarray(yhat, float), np.asarray(scale, float)
    q = quantile(level, dof)
    ok = (yhat > 0) & np.isfinite(yhat)
    unbounded = ok & ~(np.isfinite(scale) & np.isfinite(q * scale))  # an overflow far from the data
    with np.errstate(over="ignore", invalid="ignore"):
        lo = np.where(ok, yhat * np.exp(-q * scale), np.nan)
        hi = np.where(ok, yhat * np.exp(q * scale), np.nan)
    return np.where(unbounded, 0.0, lo), np.where(unbounded, np.inf, hi)
