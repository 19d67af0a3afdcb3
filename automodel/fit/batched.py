"""Batched least squares: every candidate of one width solved in one vectorised call.

The design matrix of every candidate is a choice of columns of one shared, column-scaled matrix
(the column cache). The Gram matrix ``G = A'WA`` and ``b = A'Wy`` are formed once; a candidate with
columns ``c`` solves ``G[c, c] x = b[c]``. Cholesky factorisation and the two triangular solves are
written out over the batch axis (k <= a dozen), so N candidates cost O(k^3) numpy operations on
arrays of length N, not N LAPACK calls.

Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1: every term is a time, ``c_i >= 0``): for the
candidates whose unconstrained solution has a negative coefficient, a vectorised active-set pass pins
negative coefficients at zero and re-solves, and the KKT conditions certify the result. The NNLS
optimum is the unconstrained optimum on its support, so candidates the pass cannot certify get every
column subset solved (again batched) and the feasible subset of least residual; this is exact. Wide
candidates (k > 8) that fail the check fall back to :func:`scipy.optimize.nnls`.
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
    """Candidate Gram matrices and right-hand sides, batch-last: (k, k, N) and (k, N)."""
    ct = np.ascontiguousarray(combos.T)
    return des.gram[ct[:, None, :], ct[None, :, :]], des.moment[ct]


def _unconstrained(des: Design, combos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares coefficients (N, k) and RSS (N,) of every candidate; SVD for ill-conditioned ones.

    The RSS is ``y'y - x'b``; where that is below 1e-6 of ``y'y`` it cancels too much and is
    recomputed from the residuals.
    """
    n_batch, k = combos.shape
    if k == 0:
        return np.zeros((n_batch, 0)), np.full(n_batch, des.target_ss)
    gram, rhs = _gather(des, combos)
    coef_t, min_pivot = cholesky_solve(gram, rhs)
    coef = coef_t.T.copy()
    bad = ~(min_pivot > PIVOT_TOL) | ~np.isfinite(coef).all(axis=1)
    if bad.any():
        X = des.columns[:, combos[bad]].transpose(1, 0, 2)  # (Nbad, m, k)
        coef[bad] = (np.linalg.pinv(X, rcond=1e-10) @ des.target[None, :, None])[..., 0]
    rss = des.target_ss - np.einsum("kn,nk->n", rhs, coef)
    exact = bad | (rss < 1e-6 * des.target_ss)
    if exact.any():
        rss[exact] = residual_ss(des, combos[exact], coef[exact])
    return coef, np.maximum(rss, 0.0)


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


def _masked_solve(gram: np.ndarray, rhs: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve batch-last systems with the variables outside ``free`` (k, N) pinned at zero."""
    both = free[:, None, :] & free[None, :, :]
    eye = np.eye(gram.shape[0], dtype=bool)[:, :, None]
    g = np.where(both, gram, np.where(eye, 1.0, 0.0))
    return cholesky_solve(g, np.where(free, rhs, 0.0))


def _nonnegative(des: Design, combos: np.ndarray, coef: np.ndarray, rss: np.ndarray) -> None:
    """Replace infeasible solutions (a negative coefficient) by the exact NNLS solution, in place.

    A vectorised active-set pass first: pin every negative coefficient at zero, re-solve, repeat; a
    result that also meets the KKT conditions (no pinned variable would lower the residual if freed)
    is the NNLS optimum. The few candidates that fail the check get the exhaustive subset search.
    """
    neg = (coef < 0).any(axis=1)
    if not neg.any():
        return
    idx = np.flatnonzero(neg)
    k = combos.shape[1]
    sub = combos[idx]
    gram, rhs = _gather(des, sub)
    x = coef[idx].T.copy()
    free = x >= 0
    for _ in range(k):
        x, pivot = _masked_solve(gram, rhs, free)
        x = np.where(free, x, 0.0)
        bad = free & ~(x >= 0)
        if not bad.any():
            break
        free &= ~bad
    grad = rhs - np.einsum("ijn,jn->in", gram, x)  # -d(RSS)/2dx on the scaled columns
    ok = (x >= 0).all(axis=0) & (np.where(free, 0.0, grad) <= 1e-10 * max(des.target_ss, 1e-300) ** 0.5).all(axis=0)
    ok &= pivot > PIVOT_TOL
    x = np.where(np.isfinite(x), x, 0.0)
    coef[idx[ok]] = x[:, ok].T
    rss[idx[ok]] = residual_ss(des, sub[ok], x[:, ok].T)
    rest = idx[~ok]
    if not len(rest):
        return
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
            _nonnegative(des, combos[part], coef[part], rss[part])
    return BatchFit(combos, coef, rss)
