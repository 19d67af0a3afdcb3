"""Student's t distribution without scipy: its upper tail and its quantile, for the prediction band;
and the upper tail of Fisher's F, for the PMNF route's test of a parameter's effect.

:func:`automodel.solve.band.quantile` needs the t quantile at every predicted row. scipy's
``stdtrit`` gives it, but importing ``scipy.special`` costs about 0.2 s of CPU, two thirds of what
``automodel predict`` may take in all (issue 35); these few lines give the same numbers (within
1e-10 relative, tested against scipy) with numpy and the standard library.

The upper tail is ``Q(t; nu) = I_x(nu/2, 1/2) / 2`` with ``x = nu / (nu + t^2)`` (Abramowitz and
Stegun 26.7.1 and 26.5.27), the regularised incomplete beta function ``I`` evaluated by its
continued fraction (A&S 26.5.8, modified Lentz), in plain floats: a band needs few distinct degrees
of freedom, and numpy's cost per call on one number is what a service's request cannot afford. The
quantile solves ``Q(t) = 1 - prob`` by Newton's method from the Cornish-Fisher expansion of the t quantile about the normal one (A&S 26.7.5), or
below 5 degrees of freedom from the normal quantile: ``Q`` is convex and decreasing for ``t > 0``, so
from the left of the root the iterates rise monotonically to it, and from the right the first step
lands left of it. From :data:`LARGE_DOF` degrees of freedom on the expansion itself is exact to 1e-12
and the continued fraction would be slow.

The F distribution's upper tail is ``I_x(d2/2, d1/2)`` with ``x = d2 / (d2 + d1 f)`` (A&S 26.6.2), the
same continued fraction: :func:`automodel.solve.lines.effect_pvalue` needs it on the search's first call,
where importing ``scipy.special`` for ``fdtrc`` cost more CPU than searching a kernel.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

__all__ = ["t_upper", "t_quantile", "f_upper", "LARGE_DOF"]

#: degrees of freedom from which the quantile is the Cornish-Fisher expansion (relative error below 1e-12)
LARGE_DOF = 500.0
#: distinct degrees of freedom up to which each is solved in plain floats (and kept); more are solved
#: together in numpy arrays
FEW = 16
_TINY = 1e-300
_EPS = 1e-15
_LGAMMA_HALF = math.lgamma(0.5)

# Every function below takes plain floats or numpy arrays alike: one number costs microseconds in
# floats, many numbers cost the same loop once in arrays.


def _one(x: float | np.ndarray) -> bool:
    return isinstance(x, float)


def _exp(x: float | np.ndarray) -> float | np.ndarray:
    return math.exp(x) if _one(x) else np.exp(x)


def _log(x: float | np.ndarray) -> float | np.ndarray:
    return math.log(x) if _one(x) else np.log(x)


def _lgamma(x: float | np.ndarray) -> float | np.ndarray:
    return math.lgamma(x) if _one(x) else np.array([math.lgamma(v) for v in x])


def _guard(v: float | np.ndarray) -> float | np.ndarray:
    """``v``, or a tiny number where ``v`` is closer to 0 than that (Lentz's method)."""
    if _one(v):
        return v if abs(v) > _TINY else _TINY
    return np.where(np.abs(v) > _TINY, v, _TINY)


def _beta_fraction(a: float | np.ndarray, b: float, x: float | np.ndarray) -> float | np.ndarray:
    """The continued fraction of ``I_x(a, b)`` (A&S 26.5.8, modified Lentz), converging for
    ``x < (a + 1) / (a + b + 2)``."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 / _guard(1.0 - qab * x / qap)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 / _guard(1.0 + aa * d)
            c = _guard(1.0 + aa / c)
            step = d * c
            h = h * step
        if (abs(step - 1.0) <= _EPS) if _one(step) else bool(np.all(np.abs(step - 1.0) <= _EPS)):
            break
    return h


def _log_beta(dof: float | np.ndarray) -> float | np.ndarray:
    """``-log B(dof/2, 1/2)``, the constant of :func:`_upper`."""
    return _lgamma(dof / 2.0 + 0.5) - _lgamma(dof / 2.0) - _LGAMMA_HALF


def _upper(t: float | np.ndarray, dof: float | np.ndarray, log_beta: float | np.ndarray | None = None
           ) -> float | np.ndarray:
    """``P(T > t)`` on ``dof`` degrees of freedom, ``t >= 0``: ``I_x(dof/2, 1/2) / 2``, ``x = dof/(dof + t^2)``
    (``log_beta``: :func:`_log_beta` of ``dof``, when known)."""
    t2 = t * t
    x, rest, a = dof / (dof + t2), t2 / (dof + t2), dof / 2.0
    log_beta = _log_beta(dof) if log_beta is None else log_beta
    if _one(t):
        if t == 0.0:
            return 0.5
        front = math.exp(log_beta + a * math.log(x) + 0.5 * math.log(rest))
        if x < (a + 1.0) / (a + 2.5):
            return 0.5 * front * _beta_fraction(a, 0.5, x) / a
        return 0.5 * (1.0 - 2.0 * front * _beta_fraction(0.5, a, rest))
    out = np.full(np.shape(t), 0.5)
    with np.errstate(divide="ignore"):
        front = np.exp(log_beta + a * np.log(x) + 0.5 * np.log(rest))
    direct = (x < (a + 1.0) / (a + 2.5)) & (t2 > 0)
    other = ~direct & (t2 > 0)
    if direct.any():
        out[direct] = 0.5 * front[direct] * _beta_fraction(a[direct], 0.5, x[direct]) / a[direct]
    if other.any():
        out[other] = 0.5 * (1.0 - 2.0 * front[other] * _beta_fraction(0.5, a[other], rest[other]))
    return out


def t_upper(t: np.ndarray | float, dof: np.ndarray | float) -> np.ndarray:
    """``P(T > t)`` for Student's t on ``dof`` degrees of freedom (``t >= 0``; arrays broadcast).

    Examples
    --------
    >>> round(float(t_upper(1.0, 1.0)), 12)  # 1/2 - atan(1)/pi
    0.25
    """
    t, dof = np.broadcast_arrays(np.asarray(t, float), np.asarray(dof, float))
    return np.asarray(_upper(t.ravel(), dof.ravel()), float).reshape(t.shape)


def f_upper(f: np.ndarray, dfn: float, dfd: float) -> np.ndarray:
    """``P(F > f)`` for Fisher's F on ``dfn`` and ``dfd`` degrees of freedom (``f >= 0``, ``inf``
    included), as scipy's ``fdtrc(dfn, dfd, f)``: ``I_x(dfd/2, dfn/2)``, ``x = dfd / (dfd + dfn f)``.

    Examples
    --------
    >>> [round(float(p), 12) for p in f_upper(np.array([0.0, 1.0, np.inf]), 2.0, 2.0)]  # 1 / (1 + f)
    [1.0, 0.5, 0.0]
    """
    f = np.asarray(f, float)
    a, b = dfd / 2.0, dfn / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = dfn * f / dfd  # x = 1 / (1 + r), 1 - x = r / (1 + r): their logarithms without cancellation
        log_front = _log_beta_inverse(a, b) - a * np.log1p(r) + b * (np.log(r) - np.log1p(r))
        front = np.where(np.isinf(f), 0.0, np.exp(log_front))
        x, rest = 1.0 / (1.0 + r), r / (1.0 + r)
    out = np.empty(f.shape)
    direct = x < (a + 1.0) / (a + b + 2.0)  # where the fraction of I_x converges, else that of I_(1-x)
    out[direct] = front[direct] * _beta_fraction(a, b, x[direct]) / a
    out[~direct] = 1.0 - front[~direct] * _beta_fraction(b, a, rest[~direct]) / b
    return np.where(np.isinf(f), 0.0, out)


def _log_beta_inverse(a: float, b: float) -> float:
    """``-log B(a, b)``; from ``a >= 30`` by Stirling's series of ``log Gamma(a + b) - log Gamma(a)``
    (A&S 6.1.41, its error below 3e-14), not as a difference of two large logarithms."""
    if a < 30.0:
        return math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)

    def series(z: float) -> float:
        return (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * z * z)) / (z * z)) / z

    s = a + b
    return (a - 0.5) * math.log1p(b / a) + b * math.log(s) - b + series(s) - series(a) - math.lgamma(b)


def _cornish_fisher(z: float, dof: float | np.ndarray) -> float | np.ndarray:
    """The t quantile from the normal quantile ``z`` (A&S 26.7.5, four terms)."""
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    inv = 1.0 / dof  # in Horner's form: dof ** 4 of 1e308 degrees of freedom (a model file's) overflows
    return z + inv * (g1 + inv * (g2 + inv * (g3 + inv * g4)))


def _newton(tail: float, z: float, dof: float | np.ndarray) -> float | np.ndarray:
    """The ``t > 0`` with ``P(T > t) = tail`` on ``dof`` (< :data:`LARGE_DOF`) degrees of freedom."""
    log_beta = _log_beta(dof)
    log_c = log_beta - 0.5 * _log(dof)  # the density at 0: 1 / (sqrt(dof) B(dof/2, 1/2))
    # from the expansion (within 1e-3 from 5 dof on: two or three steps), else from z
    t = (_cornish_fisher(z, dof) if dof >= 5.0 else z) if _one(dof) else np.where(
        dof >= 5.0, _cornish_fisher(z, dof), z)
    for _ in range(200):  # quadratic: a step below 1e-11 leaves an error near the rounding of Q (1e-13)
        step = (_upper(t, dof, log_beta) - tail) / _exp(log_c - (dof + 1.0) / 2.0 * _log(1.0 + t * t / dof))
        t = t + step
        small = abs(step) <= 1e-11 * max(abs(t), 1.0) if _one(t) else bool(np.all(np.abs(step) <= 1e-11 * np.maximum(
            np.abs(t), 1.0)))
        if small:
            break
    return t


@lru_cache(maxsize=4096)
def _quantile(tail: float, dof: float) -> float:
    """The ``t > 0`` with ``P(T > t) = tail`` (``tail < 1/2``) on ``dof`` degrees of freedom, kept."""
    z = NormalDist().inv_cdf(1.0 - tail)
    if math.isinf(dof):
        return z
    return _cornish_fisher(z, dof) if dof >= LARGE_DOF else _newton(tail, z, dof)


def t_quantile(prob: float, dof: np.ndarray | float) -> np.ndarray:
    """The ``prob`` quantile of Student's t on ``dof`` (>= 1) degrees of freedom, as scipy's
    ``stdtrit(dof, prob)``; ``prob`` in (0, 1), ``dof`` a number or an array (infinite: the normal).
    Up to :data:`FEW` distinct degrees of freedom are each solved once per process (bands ask again and
    again for the few of one model); more are solved together.

    Examples
    --------
    >>> round(float(t_quantile(0.95, 1.0)), 10)  # tan(0.45 pi)
    6.3137515147
    >>> round(float(t_quantile(0.95, 3.0)), 4), round(float(t_quantile(0.95, np.inf)), 4)
    (2.3534, 1.6449)
    """
    if not 0 < prob < 1:
        raise ValueError(f"prob must be in (0, 1), got {prob}")
    dof = np.asarray(dof, float)
    if prob == 0.5:
        return np.zeros(dof.shape)
    tail = 1.0 - prob if prob > 0.5 else prob
    values, where = np.unique(dof, return_inverse=True)
    if len(values) <= FEW:
        found = np.array([_quantile(tail, float(v)) for v in values])
    else:
        z = NormalDist().inv_cdf(1.0 - tail)
        found = np.full(len(values), z)
        large = (values >= LARGE_DOF) & np.isfinite(values)
        found[large] = _cornish_fisher(z, values[large])
        small = values < LARGE_DOF
        if small.any():
            found[small] = _newton(tail, z, values[small])
    t = found[where.reshape(dof.shape)]
    return t if prob > 0.5 else -t
