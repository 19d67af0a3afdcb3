"""Batched least squares: every candidate of one width solved in one vectorised call.

The design matrix of every candidate is a choice of columns of one shared, column-scaled matrix
(the column cache). The Gram matrix ``G = A'WA`` and ``b = A'Wy`` are formed once; a candidate with
columns ``c`` solves ``G[c, c] x = b[c]``. Cholesky factorisation and the two triangular solves are
written out over the batch axis (k <= a dozen), so N candidates cost O(k^3) numpy operations on
arrays of length N, not N LAPACK calls.

Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1: every term is a time, ``c_i >= 0``): the
candidates whose unconstrained solution has a negative coefficient run a Lawson-Hanson active-set
method vectorised over the candidate axis (:func:`active_set`: one masked batched solve on the shared
Gram per step, a variable freed or pinned per candidate per step), and the KKT conditions certify
each result. The NNLS optimum is the unconstrained optimum on its support, so the rare candidates it
cannot certify (numerically dependent columns, no convergence) get every column subset solved (again
batched) and the feasible subset of least residual; this is exact. Wide candidates (k > 8) that fail
the check fall back to :func:`scipy.optimize.nnls`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.optimize import nnls

__all__ = ["Design", "BatchFit", "design", "solve", "residuals", "leverages", "cholesky", "cholesky_solve"]

#: a Cholesky pivot below this (on unit-diagonal, column-scaled Gram matrices) means the candidate's
#: columns are numerically dependent; such candidates are solved by SVD instead.
PIVOT_TOL = 1e-11
#: a pinned variable's gradient ``g_j = b_j - (G x)_j`` above this times the residual norm violates
#: KKT. Freeing it would lower the RSS by ``g_j^2 / s_j`` (``s_j`` its Cholesky pivot), so below the
#: tolerance by at most 1e-9 of the RSS while ``s_j >= PIVOT_TOL``. (Relative to ``|y|``, as it was,
#: it certified supports with 3x the least RSS on ill-conditioned columns.)
KKT_TOL = 1e-10
_SUBSET_MAX_K = 8


@dataclass(frozen=True)
class Design:
    """A column cache prepared for one row set: weighted, column-scaled columns and their Gram matrix.

    ``columns`` is ``sqrt(w) * A / scale``; coefficients solved on it are divided by ``scale`` to get
    coefficients of the original terms.
    """

    columns: np.ndarray  # (m, T) weighted and scaled
    target: np.ndarray  # (m,) sqrt(w) * y
    scale: np.ndarray  # (T,)
    gram: np.ndarray  # (T, T)
    moment: np.ndarray  # (T,)  columns' target
    target_ss: float  # target' target


@dataclass(frozen=True)
class BatchFit:
    """Solutions of a batch of candidates of one width on one :class:`Design`."""

    combos: np.ndarray  # (N, k) column indices
    coef_scaled: np.ndarray  # (N, k) coefficients on the scaled columns
    rss: np.ndarray  # (N,) weighted residual sum of squares

    def coefficients(self, design: Design) -> np.ndarray:
        """Coefficients of the original (unscaled) terms, (N, k)."""
        return self.coef_scaled / design.scale[self.combos]


def design(values: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> Design:
    """Prepare term values ``values`` (m rows, T terms) and target ``y`` for batched solves."""
    values = np.asarray(values, float)
    y = np.asarray(y, float)
    sw = np.ones_like(y) if weights is None else np.sqrt(np.asarray(weights, float))
    cols = values * sw[:, None]
    scale = np.sqrt(np.einsum("ij,ij->j", cols, cols))
    scale[~np.isfinite(scale) | (scale == 0)] = 1.0
    cols = cols / scale
    target = y * sw
    return Design(cols, target, scale, cols.T @ cols, cols.T @ target, float(target @ target))


def cholesky(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors of a batch of small SPD matrices stored batch-last, ``gram[i, j, n]``.

    The batch axis is last and contiguous, so each of the O(k^3) steps is one elementwise numpy
    operation over all N matrices. Returns ``L`` (k, k, N), lower triangular, and the smallest
    squared pivot of each matrix; a pivot that is not positive gives NaN in ``L``.
    """
    k = gram.shape[0]
    L = np.zeros_like(gram)
    min_pivot = np.full(gram.shape[2:], np.inf)
    for j in range(k):
        d = gram[j, j].copy()
        for t in range(j):
            d -= L[j, t] * L[j, t]
        np.minimum(min_pivot, d, out=min_pivot)
        with np.errstate(invalid="ignore"):
            ljj = np.sqrt(np.where(d > 0, d, np.nan))
        L[j, j] = ljj
        inv = 1.0 / ljj
        for i in range(j + 1, k):
            off = gram[i, j].copy()
            for t in range(j):
                off -= L[i, t] * L[j, t]
            L[i, j] = off * inv
    return L, min_pivot


def forward(L: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``L z = rhs`` batch-last: ``L`` (k, k, N), ``rhs`` (k, ..., N) broadcasting over ``...``."""
    z = np.empty_like(rhs)
    for j in range(L.shape[0]):
        acc = rhs[j].copy()
        for t in range(j):
            acc -= L[j, t] * z[t]
        z[j] = acc / L[j, j]
    return z


def backward(L: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Solve ``L' x = z`` batch-last: ``L`` (k, k, N), ``z`` (k, N)."""
    k = L.shape[0]
    x = np.empty_like(z)
    for j in reversed(range(k)):
        acc = z[j].copy()
        for t in range(j + 1, k):
            acc -= L[t, j] * x[t]
        x[j] = acc / L[j, j]
    return x


def cholesky_solve(gram: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``gram[:, :, n] x[:, n] = rhs[:, n]`` for a batch-last stack of SPD matrices.

    Returns the solutions (k, N) and the smallest squared pivot of each factorisation; below
    :data:`PIVOT_TOL` a solution is not to be trusted (NaN where a pivot was not positive).
    """
    L, min_pivot = cholesky(gram)
    return backward(L, forward(L, rhs)), min_pivot


def _gather(des: Design, combos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate Gram matrices and right-hand sides, batch-last: (k, k, N) and (k, N).

    One flat ``take`` per entry of the lower triangle, mirrored (2.5x faster than 2-D fancy indexing).
    """
    ct = np.ascontiguousarray(combos.T)
    k, n = ct.shape
    flat, offset = des.gram.ravel(), ct * des.gram.shape[1]
    gram = np.empty((k, k, n))
    for i in range(k):
        for j in range(i + 1):
            gram[i, j] = gram[j, i] = flat.take(offset[i] + ct[j])
    return gram, des.moment[ct]


def _unconstrained(des: Design, combos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares coefficients (N, k) and RSS (N,) of every candidate; SVD for ill-conditioned ones.

    The RSS is ``y'y - x'b``; where that is below 1e-6 of ``y'y`` it cancels too much and is
    recomputed from the residuals.
    """
    n_batch, k = combos.shape
    if k == 0:
        return np.zeros((n_batch, 0)), np.full(n_batch, des.target_ss)
    gram, rhs = _gather(des, combos)
    x, min_pivot = cholesky_solve(gram, rhs)
    bad = ~(min_pivot > PIVOT_TOL) | ~np.isfinite(x).all(axis=0)  # over axis 0: fast (axis 1 of x.T is not)
    if bad.any():
        X = des.columns[:, combos[bad]].transpose(1, 0, 2)  # (Nbad, m, k)
        x[:, bad] = (np.linalg.pinv(X, rcond=1e-10) @ des.target[None, :, None])[..., 0].T
    return x.T.copy(), _rss(des, combos, x, rhs, bad)


def _rss(des: Design, combos: np.ndarray, x: np.ndarray, rhs: np.ndarray, exact: np.ndarray | None = None
         ) -> np.ndarray:
    """RSS ``y'y - x'b`` (N,) of least-squares solutions ``x`` (k, N) on their support, from the
    residuals where ``exact`` or where it is below 1e-6 of ``y'y`` (there it cancels too much)."""
    rss = des.target_ss - np.einsum("kn,kn->n", rhs, x)
    exact = rss < 1e-6 * des.target_ss if exact is None else exact | (rss < 1e-6 * des.target_ss)
    if exact.any():
        rss[exact] = residual_ss(des, combos[exact], x[:, exact].T)
    return np.maximum(rss, 0.0)


def residual_ss(des: Design, combos: np.ndarray, coef: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """Exact weighted RSS from the residuals (not ``y'y - x'b``, which cancels for good fits)."""
    out = np.empty(len(combos))
    for lo in range(0, len(combos), chunk):
        r = residuals(des, combos[lo:lo + chunk], coef[lo:lo + chunk])
        out[lo:lo + chunk] = np.einsum("ij,ij->j", r, r)
    return out


def residuals(des: Design, combos: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Weighted residuals ``target - columns @ coef`` of every candidate, shape (m, N)."""
    r = np.repeat(des.target[:, None], len(combos), axis=1)
    for j in range(combos.shape[1]):
        r -= des.columns[:, combos[:, j]] * coef[:, j]
    return r


def leverages(des: Design, combos: np.ndarray) -> np.ndarray:
    """Diagonal of the (weighted) hat matrix of every candidate, shape (m, N), without refits.

    ``h_i = x_i' G^-1 x_i = |L^-1 x_i|^2`` with ``G = L L'``; a ridge of :data:`PIVOT_TOL` keeps
    numerically dependent columns from breaking the factorisation.
    """
    n_batch, k = combos.shape
    m = des.columns.shape[0]
    if k == 0:
        return np.zeros((m, n_batch))
    gram, _ = _gather(des, combos)
    L, _ = cholesky(gram + PIVOT_TOL * np.eye(k)[:, :, None])
    X = des.columns[:, combos].transpose(2, 0, 1)  # (k, m, N)
    z = forward(L, X)
    return np.clip(np.einsum("kmn,kmn->mn", z, z), 0.0, 1.0)


def _subset_masks(k: int) -> list[tuple[int, ...]]:
    return [s for size in range(k - 1, 0, -1) for s in combinations(range(k), size)]


def masked_solve(gram: np.ndarray, rhs: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve batch-last systems with the variables outside ``free`` (k, N) pinned at zero (identity
    rows and columns; entry by entry, twice as fast as one broadcast ``np.where``)."""
    g = np.empty_like(gram)
    for i in range(len(gram)):
        g[i, i] = np.where(free[i], gram[i, i], 1.0)
        for j in range(i):
            g[i, j] = g[j, i] = np.where(free[i] & free[j], gram[i, j], 0.0)
    return cholesky_solve(g, np.where(free, rhs, 0.0))


def active_set(gram: np.ndarray, rhs: np.ndarray, free: np.ndarray, target_ss: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Lawson-Hanson NNLS of a batch-last stack of systems, vectorised over the candidate axis.

    Parameters
    ----------
    gram : (k, k, N) array
        Gram matrices (unit diagonal) of the candidates.
    rhs : (k, N) array
    free : (k, N) bool array
        Starting guess of the support (the positive unconstrained coefficients).
    target_ss : float
        ``y'y`` (weighted), for the residual norm in the KKT tolerance :data:`KKT_TOL`.

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
    Each step solves every unsettled candidate on its support ``P`` (:func:`masked_solve`); then a
    candidate whose solution ``s`` is positive on ``P`` is certified or frees its pinned variable of
    largest gradient, and one whose ``s`` is not moves from its feasible point towards ``s`` until a
    coefficient reaches zero and pins it (Lawson and Hanson's inner loop). Until it first has a
    feasible point, a candidate pins every non-positive coefficient of ``s`` instead. Candidates with
    a pivot below :data:`PIVOT_TOL` or unsettled after ``4 k`` steps are left uncertified.
    """
    k, n = rhs.shape
    x = np.zeros((k, n))
    ok = np.zeros(n, bool)
    live = np.arange(n)
    P, xf = free.copy(), np.zeros((k, n))  # support and feasible point of the live candidates
    feasible = np.zeros(n, bool)
    for _ in range(4 * k):
        s, pivot = masked_solve(gram, rhs, P)
        grad = np.where(P, -np.inf, rhs - np.einsum("ijn,jn->in", gram, s))
        j = np.argmax(grad, axis=0)
        inside = (~P | (s > 0)).all(axis=0)
        good = pivot > PIVOT_TOL
        tol = KKT_TOL * np.sqrt(np.maximum(target_ss - np.einsum("kn,kn->n", s, rhs), 0.0))
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
        live, gram, rhs, P, xf, feasible = (live[keep], gram.take(keep, axis=2), rhs.take(keep, axis=1),
                                            P.take(keep, axis=1), xf.take(keep, axis=1), feasible[keep])
    return x, ok


def _nonnegative(des: Design, combos: np.ndarray, coef: np.ndarray, rss: np.ndarray, chunk: int) -> None:
    """Replace infeasible solutions (a negative coefficient) by the exact NNLS solution, in place.

    :func:`active_set` on ``chunk`` infeasible candidates at a time, then :func:`_exhaustive` on the
    few it could not certify.
    """
    rows = np.flatnonzero(coef < 0) // max(coef.shape[1], 1)  # .any(axis=1) is slow on short rows
    infeasible = rows[np.diff(rows, prepend=-1) > 0]
    rest = [infeasible[:0]]
    for lo in range(0, len(infeasible), chunk):
        idx = infeasible[lo:lo + chunk]
        gram, rhs = _gather(des, combos[idx])
        x, ok = active_set(gram, rhs, coef[idx].T > 0, des.target_ss)
        coef[idx[ok]] = x[:, ok].T
        rss[idx[ok]] = _rss(des, combos[idx[ok]], x[:, ok], rhs[:, ok])
        rest.append(idx[~ok])
    rest = np.concatenate(rest)
    for lo in range(0, len(rest), chunk):
        _exhaustive(des, combos, coef, rss, rest[lo:lo + chunk])


def _exhaustive(des: Design, combos: np.ndarray, coef: np.ndarray, rss: np.ndarray, rest: np.ndarray) -> None:
    """Exact NNLS of the candidates ``rest``, in place: the feasible column subset of least RSS."""
    k = combos.shape[1]
    if k > _SUBSET_MAX_K:
        for i in rest:  # rare: only wide candidates that the active-set pass could not settle
            X = des.columns[:, combos[i]]
            coef[i], r = nnls(X, des.target)
            rss[i] = r * r
        return
    sub = combos[rest]
    best_rss = np.full(len(rest), des.target_ss)  # the empty subset: all coefficients zero
    best_coef = np.zeros((len(rest), k))
    for cols in _subset_masks(k):
        cols = list(cols)
        c, r = _unconstrained(des, sub[:, cols])
        better = (c >= 0).all(axis=1) & (r < best_rss)
        best_rss = np.where(better, r, best_rss)
        best_coef[np.ix_(better, cols)] = c[better]
        best_coef[np.ix_(better, [j for j in range(k) if j not in cols])] = 0.0
    coef[rest] = best_coef
    rss[rest] = best_rss


def solve(des: Design, combos: np.ndarray, nonnegative: bool = True, chunk: int = 4096) -> BatchFit:
    """Solve every candidate (a row of ``combos``: column indices of one width) on ``des``.

    Parameters
    ----------
    des : Design
    combos : (N, k) int array
    nonnegative : bool
        Constrain every coefficient to be >= 0 (exact, see module docstring).
    chunk : int
        Candidates solved per vectorised step.
    """
    combos = np.asarray(combos, dtype=np.intp)
    if combos.ndim != 2:
        raise ValueError("combos must be a 2-D array of column indices")
    coef = np.empty(combos.shape)
    rss = np.empty(len(combos))
    for lo in range(0, len(combos), chunk):  # chunks keep the (k, k, chunk) arrays in cache
        part = slice(lo, lo + chunk)
        coef[part], rss[part] = _unconstrained(des, combos[part])
    if nonnegative:
        _nonnegative(des, combos, coef, rss, chunk)
    return BatchFit(combos, coef, rss)
