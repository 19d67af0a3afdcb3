"""Non-negative least squares of many small systems at once: active set, KKT enumeration, exact fallback.

Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1: every term is a time, ``c_i >= 0``). The
systems are the batch-last normal equations ``G x = b`` of :mod:`automodel.solve.cholesky`, each with
its own ``t't`` for the residual norm. Three ways to the optimum, each certified by the KKT
conditions (the problem is convex, so a certified point is the optimum):

* :func:`kkt_small` (k <= 3): every proper support solved at once, the one that satisfies KKT kept;
* :func:`active_set`: Lawson and Hanson's method vectorised over the system axis;
* :func:`exhaustive`: the exact fallback for what neither certifies. The NNLS optimum is the
  unconstrained optimum on its support, so the feasible column subset of least RSS is the optimum
  (k <= 8, every subset solved batched); wider systems go to :func:`scipy.optimize.nnls`.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import numpy as np

from automodel.solve.cholesky import PIVOT_TOL, masked_solve

__all__ = ["KKT_TOL", "SUBSET_MAX_K", "active_set", "kkt_small", "exhaustive", "subsets"]

#: a pinned variable's gradient ``g_j = b_j - (G x)_j`` above this times the residual norm violates
#: KKT. Freeing it would lower the RSS by ``g_j^2 / s_j`` (``s_j`` its Cholesky pivot), so below the
#: tolerance by at most 1e-9 of the RSS while ``s_j >= PIVOT_TOL``. (Relative to ``|y|`` it certified
#: supports with 3x the least RSS on ill-conditioned columns.)
KKT_TOL = 1e-10
#: widest system whose column subsets :func:`exhaustive` enumerates (2^8 subsets); wider: scipy
SUBSET_MAX_K = 8


def _residual_norm(target_ss: np.ndarray, x: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``sqrt(t't - x'b)`` (N,) of solutions ``x`` (k, N) on their support, clipped at zero."""
    return np.sqrt(np.maximum(target_ss - np.einsum("kn,kn->n", x, rhs), 0.0))


def active_set(gram: np.ndarray, rhs: np.ndarray, free: np.ndarray, target_ss: np.ndarray | float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Lawson-Hanson NNLS of a batch-last stack of systems, vectorised over the system axis.

    Parameters
    ----------
    gram : (k, k, N) array
        Gram matrices (unit diagonal) of the systems.
    rhs : (k, N) array
    free : (k, N) bool array
        Starting guess of the support (the positive unconstrained coefficients, or a warm start).
    target_ss : float or (N,) array
        ``t't`` of each system, for the residual norm in the KKT tolerance :data:`KKT_TOL`.

    Returns
    -------
    x : (k, N) array
        Solutions (zero where not certified).
    ok : (N,) bool array
        Certified optimal: ``x >= 0``, ``x`` solves ``G x = b`` on its support with Cholesky pivots
        above :data:`PIVOT_TOL`, and no pinned variable has a gradient ``b - G x`` above
        :data:`KKT_TOL` times the residual norm.

    Notes
    -----
    Each step solves every unsettled system on its support ``P`` (:func:`masked_solve`); then a system
    whose solution ``s`` is positive on ``P`` is certified or frees its pinned variable of largest
    gradient, and one whose ``s`` is not moves from its feasible point towards ``s`` until a
    coefficient reaches zero and pins it (Lawson and Hanson's inner loop). Until it first has a
    feasible point, a system pins every non-positive coefficient of ``s`` instead. Systems with a pivot
    below :data:`PIVOT_TOL` or unsettled after ``4 k`` steps are left uncertified.
    """
    k, n = rhs.shape
    x = np.zeros((k, n))
    ok = np.zeros(n, bool)
    live = np.arange(n)
    tss = np.asarray(target_ss, float)  # one number, or one per system
    P, xf = free.copy(), np.zeros((k, n))  # support and feasible point of the live systems
    feasible = np.zeros(n, bool)
    for _ in range(4 * k):
        s, pivot = masked_solve(gram, rhs, P)
        grad = np.where(P, -np.inf, rhs - np.einsum("ijn,jn->in", gram, s))
        j = np.argmax(grad, axis=0)
        inside = (~P | (s > 0)).all(axis=0)
        good = pivot > PIVOT_TOL
        tol = KKT_TOL * _residual_norm(tss, s, rhs)
        done = good & inside & (np.take_along_axis(grad, j[None], 0)[0] <= tol)
        x[:, live[done]] = s[:, done]
        ok[live[done]] = True
        grow = np.flatnonzero(inside & ~done)
        P[j[grow], grow] = True
        xf[:, grow] = s[:, grow]
        step = np.flatnonzero(~inside & feasible)
        if len(step):
            xs, ss = xf[:, step], s[:, step]
            neg = P[:, step] & ~(ss > 0)
            d = np.where(neg, xs - ss, 1.0)  # > 0 unless xs = ss = 0, where the step is 0
            ratio = np.where(neg, xs / np.where(d > 0, d, 1.0), np.inf)
            i = np.argmin(ratio, axis=0)
            xs += np.take_along_axis(ratio, i[None], 0) * (ss - xs)
            xs[i, np.arange(len(step))] = 0.0
            xf[:, step] = xs
            P[:, step] &= xs > 0
        P &= (s > 0) | (inside | feasible)  # before the first feasible point: pin non-positive
        feasible[grow] = True
        keep = np.flatnonzero(good & ~done)
        if not len(keep):
            break
        live, gram, rhs, tss, P, xf, feasible = (
            live[keep], gram.take(keep, axis=2), rhs.take(keep, axis=1), tss if tss.ndim == 0 else tss[keep],
            P.take(keep, axis=1),
            xf.take(keep, axis=1), feasible[keep])
    return x, ok


def _small(gram: np.ndarray, rhs: np.ndarray, sub: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Solutions (len(sub), B) and smallest squared pivots (B,) of the systems on the columns ``sub``
    (one or two) of ``gram`` (k, k, B), ``rhs`` (k, B): the operations of the Cholesky solve on the
    gathered sub-matrix in the same order, so the same numbers, without its general loops."""
    with np.errstate(invalid="ignore"):
        d0 = gram[sub[0], sub[0]]
        l00 = np.sqrt(np.where(d0 > 0, d0, np.nan))
        z0 = rhs[sub[0]] / l00
        if len(sub) == 1:
            return (z0 / l00)[None], d0
        i, j = sub
        l10 = gram[j, i] * (1.0 / l00)
        d1 = gram[j, j] - l10 * l10
        l11 = np.sqrt(np.where(d1 > 0, d1, np.nan))
        x1 = ((rhs[j] - l10 * z0) / l11) / l11
        return np.stack([(z0 - l10 * x1) / l00, x1]), np.minimum(d0, d1)


def kkt_small(gram: np.ndarray, rhs: np.ndarray, target_ss: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Exact NNLS of infeasible systems of width k <= 3 by their KKT conditions, every proper support
    at once.

    The support (empty, one or two columns) whose solution is positive with Cholesky pivots above
    :data:`PIVOT_TOL` and whose pinned columns have gradients ``b - G x`` at most :data:`KKT_TOL` times
    its residual norm is the NNLS optimum. Systems with no such support or more than one (ties,
    dependent columns) are left uncertified.

    Returns the coefficients (k, B) and which systems are certified (B,).
    """
    k, n = rhs.shape
    tss = np.asarray(target_ss, float)
    x = np.zeros((k, n))
    found = (rhs <= KKT_TOL * np.sqrt(tss)).all(axis=0).astype(np.int8)  # the empty support
    for sub in [s for size in range(1, k) for s in combinations(range(k), size)]:
        s, pivot = _small(gram, rhs, sub)
        res = _residual_norm(tss, s, rhs[list(sub)])
        cert = (pivot > PIVOT_TOL) & (s > 0).all(axis=0)
        for j in (j for j in range(k) if j not in sub):
            cert &= rhs[j] - sum(gram[j, c] * s[a] for a, c in enumerate(sub)) <= KKT_TOL * res
        found += cert
        for a, c in enumerate(sub):
            x[c] = np.where(cert, s[a], x[c])
    return x, found == 1


def subsets(k: int) -> list[list[int]]:
    """Every proper, non-empty subset of ``range(k)``, largest first."""
    return [list(s) for size in range(k - 1, 0, -1) for s in combinations(range(k), size)]


def exhaustive(solve_subset: Callable[[list[int]], tuple[np.ndarray, np.ndarray]], n: int, k: int,
               target_ss: np.ndarray, wide: Callable[[int], tuple[np.ndarray, float]] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Exact NNLS of ``n`` systems of width ``k``: the feasible column subset of least RSS.

    Parameters
    ----------
    solve_subset : callable
        ``solve_subset(sub)`` -> unconstrained coefficients (n, len(sub)) and RSS (n,) of every system
        on its columns ``sub`` (batched).
    n, k : int
    target_ss : (n,) array
        ``t't``: the RSS of the empty subset (every coefficient zero), where the search starts.
    wide : callable, optional
        ``wide(i)`` -> coefficients (k,) and RSS of system ``i`` by :func:`scipy.optimize.nnls`, used
        instead of the enumeration when ``k > SUBSET_MAX_K``.

    Returns the coefficients (n, k) and RSS (n,).
    """
    if k > SUBSET_MAX_K and wide is not None:
        coef, rss = np.empty((n, k)), np.empty(n)
        for i in range(n):  # rare: only wide systems that the active-set pass could not settle
            coef[i], rss[i] = wide(i)
        return coef, rss
    best_rss = np.array(target_ss, float, copy=True)
    best = np.zeros((n, k))
    for sub in subsets(k):
        c, r = solve_subset(sub)
        better = (c >= 0).all(axis=1) & (r < best_rss)
        best_rss = np.where(better, r, best_rss)
        best[better] = 0.0
        best[np.ix_(better, sub)] = c[better]
    return best, best_rss


def scipy_nnls(X: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    """One system by :func:`scipy.optimize.nnls` on its columns ``X`` (m, k): coefficients and RSS
    (NaN for a system with a non-finite entry, which no factorisation is given)."""
    from scipy.optimize import nnls  # imported when needed: 0.3 s, a third of a command's start-up

    if not (np.isfinite(X).all() and np.isfinite(t).all()):
        return np.full(X.shape[1], np.nan), np.nan
    coef, r = nnls(X, t, maxiter=50 * X.shape[1] + 100)
    return coef, r * r
