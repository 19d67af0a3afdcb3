"""Student's t distribution in numpy alone: its upper tail and its quantile, for the prediction band.

:func:`automodel.solve.band.quantile` needs the t quantile at every predicted row. scipy's
``stdtrit`` gives it, but importing ``scipy.special`` costs about 0.2 s of CPU, two thirds of what
``automodel predict`` may take in all (issue 35); these few lines give the same numbers (within
1e-10 relative, tested against scipy) with numpy and the standard library.

The upper tail is ``Q(t; nu) = I_x(nu/2, 1/2) / 2`` with ``x = nu / (nu + t^2)`` (Abramowitz and
Stegun 26.7.1 and 26.5.27), the regularised incomplete beta function ``I`` evaluated by its
continued fraction (A&S 26.5.8, modified Lentz). The quantile solves ``Q(t) = 1 - prob`` by Newton's
method from the normal quantile: ``Q`` is convex and decreasing for ``t > 0`` and the t quantile
lies above the normal one, so the iterates rise monotonically to the root and never overshoot. Above
:data:`LARGE_DOF` degrees of freedom the Cornish-Fisher expansion of the t quantile about the normal
one (A&S 26.7.5) is exact to double precision and the continued fraction would be slow.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["t_upper", "t_quantile", "LARGE_DOF"]

#: degrees of freedom from which the quantile is the Cornish-Fisher expansion (error below 1e-13)
LARGE_DOF = 2000.0
_TINY = 1e-300
_EPS = 1e-15


def _lgamma(x: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(v) for v in np.ravel(x)]).reshape(np.shape(x))


def _beta_fraction(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of ``I_x(a, b)`` (A&S 26.5.8), converging for ``x < (a + 1) / (a + b + 2)``."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    live = np.ones(x.shape, bool)
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            step = d * c
            h = np.where(live, h * step, h)
        live &= np.abs(step - 1.0) > _EPS
        if not live.any():
            break
    return h


def _betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray, one_minus_x: np.ndarray) -> np.ndarray:
    """The regularised incomplete beta ``I_x(a, b)`` for ``0 < x < 1`` (``1 - x`` given, to keep its
    digits)."""
    with np.errstate(divide="ignore"):
        front = np.exp(_lgamma(a + b) - _lgamma(a) - _lgamma(b) + a * np.log(x) + b * np.log(one_minus_x))
    direct = x < (a + 1.0) / (a + b + 2.0)
    out = np.empty_like(x)
    if direct.any():
        out[direct] = front[direct] * _beta_fraction(a[direct], b[direct], x[direct]) / a[direct]
    if (~direct).any():
        s = ~direct
        out[s] = 1.0 - front[s] * _beta_fraction(b[s], a[s], one_minus_x[s]) / b[s]
    return out


def t_upper(t: np.ndarray | float, dof: np.ndarray | float) -> np.ndarray:
    """``P(T > t)`` for Student's t on ``dof`` degrees of freedom (``t >= 0``; arrays broadcast).

    Examples
    --------
    >>> round(float(t_upper(1.0, 1.0)), 12)  # 1/2 - atan(1)/pi
    0.25
    """
    t, dof = np.broadcast_arrays(np.asarray(t, float), np.asarray(dof, float))
    t2 = np.square(t)
    x, rest = dof / (dof + t2), t2 / (dof + t2)
    out = np.full(t.shape, 0.5)
    positive = t2 > 0
    if positive.any():
        a = dof[positive] / 2.0
        out[positive] = 0.5 * _betainc(a, np.full_like(a, 0.5), x[positive], rest[positive])
    return out


def _t_density(t: np.ndarray, dof: np.ndarray) -> np.ndarray:
    log_c = _lgamma((dof + 1.0) / 2.0) - _lgamma(dof / 2.0) - 0.5 * np.log(dof * math.pi)
    return np.exp(log_c - (dof + 1.0) / 2.0 * np.log1p(np.square(t) / dof))


def _cornish_fisher(z: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """The t quantile from the normal quantile ``z`` (A&S 26.7.5, four terms)."""
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + g1 / dof + g2 / dof ** 2 + g3 / dof ** 3 + g4 / dof ** 4


def t_quantile(prob: float, dof: np.ndarray | float) -> np.ndarray:
    """The ``prob`` quantile of Student's t on ``dof`` (>= 1) degrees of freedom, as scipy's
    ``stdtrit(dof, prob)``; ``prob`` in (0, 1), ``dof`` a number or an array (infinite: the normal).

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
    upper = prob >= 0.5
    tail = 1.0 - prob if upper else prob  # the upper tail beyond the positive quantile
    z = NormalDist().inv_cdf(1.0 - tail)
    t = np.full(dof.shape, z)
    large = dof >= LARGE_DOF
    t[large & np.isfinite(dof)] = _cornish_fisher(np.float64(z), dof[large & np.isfinite(dof)])
    small = ~large
    if small.any() and z > 0:
        nu = dof[small]
        x = t[small]
        live = np.ones(nu.shape, bool)
        for _ in range(200):
            step = (t_upper(x[live], nu[live]) - tail) / _t_density(x[live], nu[live])
            x[live] = x[live] + step
            done = np.abs(step) <= 1e-13 * np.maximum(np.abs(x[live]), 1.0)
            live[np.flatnonzero(live)[done]] = False
            if not live.any():
                break
        t[small] = x
    return t if upper else -t
