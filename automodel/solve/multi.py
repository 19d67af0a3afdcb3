"""Batched least squares for many targets at once: the same candidates fitted to many kernels.

:mod:`automodel.solve.batched` solves many candidates against one target through one shared Gram
matrix. Kernels measured at the same points share the term values, but with relative weights
(``w = 1/y^2``, bayesian-kohashi-2022.txt, eq. 7) every kernel ``j`` has its own weighted,
column-scaled columns ``X_j = sqrt(w_j) * A / scale_j`` and so its own Gram matrix ``G_j = X_j'X_j``.
Here one *pair* is one (candidate, kernel) system ``G_j[c, c] x = X_j[:, c]' t_j``; all pairs of one
width are gathered batch-last and solved together with the Cholesky of :mod:`automodel.solve.batched`,
the same pivot tolerance and the same SVD fallback for numerically dependent columns.

Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1) are exact: the NNLS optimum is the
unconstrained optimum on its support, so every pair with a negative coefficient gets each smaller
column subset solved (batched again) and keeps the feasible one of least residual (the empty subset,
all coefficients zero, included). Widths above 8 fall back to :func:`scipy.optimize.nnls` per pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from automodel.solve.batched import KKT_TOL, PIVOT_TOL, active_set, masked_solve, cholesky, cholesky_solve, forward

__all__ = ["Designs", "designs", "pairs", "solve", "residuals", "leverages"]

_SUBSET_MAX_K = 8


@dataclass(frozen=True)
class Designs:
    """One weighted, column-scaled design per kernel, stacked on a leading kernel axis.

    Attributes
    ----------
    columns : (K, T, m) array
        ``columns[j, t]`` is column ``t`` of ``sqrt(w_j) * A / scale_j``, kernel ``j``'s scaled column.
    target : (K, m) array
        ``sqrt(w_j) * y_j``.
    scale : (K, T) array
        Column norms; coefficients on the scaled columns divided by them are term coefficients.
    gram : (K, T, T) array
    moment : (K, T) array
    target_ss : (K,) array
    """

    columns: np.ndarray
    target: np.ndarray
    scale: np.ndarray
    gram: np.ndarray
    moment: np.ndarray
    target_ss: np.ndarray


def designs(values: np.ndarray, Y: np.ndarray, weights: np.ndarray | None = None) -> Designs:
    """Prepare term values ``values`` (m, T) and targets ``Y`` (m, K) for batched solves.

    ``weights`` (m, K) are the row weights of each kernel (none: all ones).
    """
    values = np.asarray(values, float)
    Y = np.asarray(Y, float)
    sw = np.ones_like(Y) if weights is None else np.sqrt(np.asarray(weights, float))
    cols = sw.T[:, None, :] * values.T[None, :, :]
    scale = np.sqrt(np.einsum("kti,kti->kt", cols, cols))
    scale[~np.isfinite(scale) | (scale == 0)] = 1.0
    cols /= scale[:, :, None]
    target = (Y * sw).T.copy()
    return Designs(cols, target, scale, np.einsum("kai,kbi->kab", cols, cols),
                   np.einsum("kai,ki->ka", cols, target), np.einsum("ki,ki->k", target, target))


def pairs(n_candidates: int, n_kernels: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate and kernel index of every pair, kernel-major: pair ``j * N + n`` is (n, j)."""
    return (np.tile(np.arange(n_candidates), n_kernels), np.repeat(np.arange(n_kernels), n_candidates))


def _gather(des: Designs, kern: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair Gram matrices (k, k, B) and right-hand sides (k, B); ``cols`` (B, k) are column indices.

    One flat ``take`` per entry of the lower triangle, mirrored (as :func:`automodel.solve.batched._gather`).
    """
    T = des.scale.shape[1]
    ct = np.ascontiguousarray(cols.T)  # (k, B)
    k, n = ct.shape
    row = kern * T + ct  # (k, B): row of (kernel, column) in the flattened (K * T) axis
    flat, start = des.gram.reshape(-1), row * T
    gram = np.empty((k, k, n))
    for i in range(k):
        for j in range(i + 1):
            gram[i, j] = gram[j, i] = flat.take(start[i] + ct[j])
    return gram, des.moment.reshape(-1).take(row)


def _column(des: Designs, kern: np.ndarray, cols: np.ndarray, j: int) -> np.ndarray:
    """The ``j``-th scaled column of every pair, (B, m)."""
    K, T, m = des.columns.shape
    return des.columns.reshape(K * T, m).take(kern * T + cols[:, j], axis=0)


def _pair_columns(des: Designs, kern: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Scaled columns of every pair, (k, m, B)."""
    return np.stack([_column(des, kern, cols, j).T for j in range(cols.shape[1])])


def _residuals(des: Designs, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    r = des.target.take(kern, axis=0)
    for j in range(cols.shape[1]):
        r -= _column(des, kern, cols, j) * coef[:, j, None]
    return r  # (B, m)


def residuals(des: Designs, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Weighted residuals ``t_j - X_j[:, c] x`` of every pair, (m, B); ``coef`` (B, k) on scaled columns."""
    return _residuals(des, kern, cols, coef).T


def _rss(des: Designs, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Exact weighted RSS (B,) from the residuals."""
    r = _residuals(des, kern, cols, coef)
    return np.einsum("bm,bm->b", r, r)


def _lstsq(des: Designs, kern: np.ndarray, cols: np.ndarray, need_rss: bool = True
           ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Unconstrained coefficients (B, k), exact weighted RSS (B,) (None unless ``need_rss``) and the
    pair Gram matrices and right-hand sides (None for k = 0) of every pair."""
    if not cols.shape[1]:
        return np.zeros((len(kern), 0)), des.target_ss[kern].copy(), None, None
    gram, rhs = _gather(des, kern, cols)
    coef_t, min_pivot = cholesky_solve(gram, rhs)
    bad = ~(min_pivot > PIVOT_TOL) | ~np.isfinite(coef_t).all(axis=0)  # axis 0 of (k, B): fast
    coef = coef_t.T.copy()
    if bad.any():  # numerically dependent columns: minimum-norm solution from the pseudo-inverse
        X = _pair_columns(des, kern[bad], cols[bad]).transpose(2, 1, 0)  # (Nbad, m, k)
        coef[bad] = (np.linalg.pinv(X, rcond=1e-10) @ des.target[kern[bad]][:, :, None])[..., 0]
    return coef, (_rss(des, kern, cols, coef) if need_rss else None), gram, rhs


def _subsets(k: int) -> list[list[int]]:
    return [list(s) for size in range(k - 1, 0, -1) for s in combinations(range(k), size)]


def _small(gram: np.ndarray, rhs: np.ndarray, sub: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Solutions (len(sub), B) and smallest squared pivots (B,) of the systems on the columns ``sub`` (one
    or two) of ``gram`` (k, k, B), ``rhs`` (k, B): the operations of :func:`cholesky_solve` on the
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


def _kkt_small(gram: np.ndarray, rhs: np.ndarray, target_ss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact NNLS of infeasible pairs of width k <= 3 by their KKT conditions, every proper support at
    once: the support (empty, one or two columns) whose solution is positive with Cholesky pivots above
    :data:`PIVOT_TOL` and whose pinned columns have gradients ``b - G x`` at most :data:`KKT_TOL` times
    its residual norm is the NNLS optimum (the problem is convex). Pairs with no such support or more
    than one (ties, dependent columns) are left uncertified.

    Returns the coefficients (k, B) and which pairs are certified (B,).
    """
    k, n = rhs.shape
    x = np.zeros((k, n))
    found = (rhs <= KKT_TOL * np.sqrt(target_ss)).all(axis=0).astype(np.int8)  # the empty support
    for sub in [s for size in range(1, k) for s in combinations(range(k), size)]:
        s, pivot = _small(gram, rhs, sub)
        rest = [j for j in range(k) if j not in sub]
        res = np.sqrt(np.maximum(target_ss - sum(s[a] * rhs[c] for a, c in enumerate(sub)), 0.0))
        cert = (pivot > PIVOT_TOL) & (s > 0).all(axis=0)
        for j in rest:
            cert &= rhs[j] - sum(gram[j, c] * s[a] for a, c in enumerate(sub)) <= KKT_TOL * res
        found += cert
        for a, c in enumerate(sub):
            x[c] = np.where(cert, s[a], x[c])
    return x, found == 1


def _certified(des: Designs, kern: np.ndarray, coef: np.ndarray, gram: np.ndarray, rhs: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Lawson-Hanson NNLS (:func:`automodel.solve.batched.active_set`) of the pairs ``gram``
    (k, k, B), ``rhs`` (k, B) with unconstrained solutions ``coef`` (B, k).

    Each pair's system is divided by its target norm so that one ``y'y = 1`` serves every pair (the
    KKT tolerance stays relative to each pair's residual norm). The certified support is then solved
    again unscaled with pinned variables as identity rows, which is, operation for operation, the
    Cholesky solve of the support's own columns that the subset search does: the same coefficients.

    Returns the coefficients (B, k) and which pairs are certified (B,).
    """
    norm = np.sqrt(des.target_ss[kern])
    norm = np.where(norm > 0, norm, 1.0)
    x, ok = active_set(gram, rhs / norm, coef.T > 0, 1.0)
    support = x > 0
    exact, pivot = masked_solve(gram, rhs, support)
    ok &= (pivot > PIVOT_TOL) & (np.where(support, exact, 0.0) >= 0).all(axis=0)
    return exact.T, ok


def _exhaustive(des: Designs, kern: np.ndarray, cols: np.ndarray, need_rss: bool
                ) -> tuple[np.ndarray, np.ndarray]:
    """Exact NNLS of every pair: the feasible column subset of least RSS (the empty one included)."""
    k = cols.shape[1]
    if k > _SUBSET_MAX_K:
        from scipy.optimize import nnls
        coef, rss = np.empty((len(kern), k)), np.empty(len(kern))
        for i in range(len(kern)):  # rare: wide candidates only
            X = _pair_columns(des, kern[i:i + 1], cols[i:i + 1])[:, :, 0].T
            coef[i], r = nnls(X, des.target[kern[i]])
            rss[i] = r * r
        return coef, rss
    best_rss = des.target_ss[kern].copy()  # the empty subset: every coefficient zero
    best = np.zeros((len(kern), k))
    for sub in _subsets(k):
        c, r, _, _ = _lstsq(des, kern, cols[:, sub])
        better = (c >= 0).all(axis=1) & (r < best_rss)
        best_rss = np.where(better, r, best_rss)
        best[better] = 0.0
        best[np.ix_(better, sub)] = c[better]
    return best, best_rss


def _nonnegative(des: Designs, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray, rss: np.ndarray | None,
                 gram: np.ndarray, rhs: np.ndarray) -> None:
    """Replace the solution of every pair with a negative coefficient by its exact NNLS solution, in place:
    :func:`_certified` first, :func:`_exhaustive` for the pairs it cannot certify."""
    k = cols.shape[1]
    rows = np.flatnonzero(coef < 0) // max(k, 1)  # .any(axis=1) is slow on short rows
    idx = rows[np.diff(rows, prepend=-1) > 0]
    if not len(idx):
        return
    kk, cc = kern[idx], cols[idx]
    if k == 1:  # the only proper support is the empty one
        c, ok = np.zeros((len(idx), 1)), np.ones(len(idx), bool)
    elif k <= 3:
        c, ok = _kkt_small(gram.take(idx, axis=2), rhs.take(idx, axis=1), des.target_ss[kk])
        c = c.T
    else:
        c, ok = _certified(des, kk, coef[idx], gram.take(idx, axis=2), rhs.take(idx, axis=1))
    coef[idx[ok]] = c[ok]
    if rss is not None:  # the empty support: y'y, as the subset search has it
        rss[idx[ok]] = np.where((c[ok] == 0).all(axis=1), des.target_ss[kk[ok]], _rss(des, kk[ok], cc[ok], c[ok]))
    rest = ~ok
    if rest.any():
        coef[idx[rest]], r = _exhaustive(des, kk[rest], cc[rest], rss is not None)
        if rss is not None:
            rss[idx[rest]] = r


def solve(des: Designs, kern: np.ndarray, cols: np.ndarray, nonnegative: bool = True, need_rss: bool = True
          ) -> tuple[np.ndarray, np.ndarray | None]:
    """Fit every pair: kernel ``kern[b]`` with the columns ``cols[b]`` (one width).

    Returns
    -------
    coef : (B, k) array
        Coefficients on the scaled columns (divide by ``des.scale[kern[:, None], cols]``).
    rss : (B,) array
        Weighted residual sums of squares (None when not ``need_rss``: they cost a pass over the
        residuals and only ``aic`` uses them).
    """
    kern = np.asarray(kern, dtype=np.intp)
    cols = np.asarray(cols, dtype=np.intp).reshape(len(kern), -1)
    coef, rss, gram, rhs = _lstsq(des, kern, cols, need_rss)
    if nonnegative and cols.shape[1]:
        _nonnegative(des, kern, cols, coef, rss, gram, rhs)
    return coef, rss


def leverages(des: Designs, kern: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Diagonal of the weighted hat matrix of every pair, (m, B), without refits (as
    :func:`automodel.solve.batched.leverages`: ``h_i = |L^-1 x_i|^2`` with a :data:`PIVOT_TOL` ridge)."""
    k = cols.shape[1]
    if not k:
        return np.zeros((des.columns.shape[2], len(kern)))
    gram, _ = _gather(des, kern, cols)
    L, _ = cholesky(gram + PIVOT_TOL * np.eye(k)[:, :, None])
    z = forward(L, _pair_columns(des, kern, cols))
    return np.clip(np.einsum("kmb,kmb->mb", z, z), 0.0, 1.0)
