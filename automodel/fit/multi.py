"""Batched least squares for many targets at once: the same candidates fitted to many kernels.

:mod:`automodel.fit.batched` solves many candidates against one target through one shared Gram
matrix. Kernels measured at the same points share the term values, but with relative weights
(``w = 1/y^2``, bayesian-kohashi-2022.txt, eq. 7) every kernel ``j`` has its own weighted,
column-scaled columns ``X_j = sqrt(w_j) * A / scale_j`` and so its own Gram matrix ``G_j = X_j'X_j``.
Here one *pair* is one (candidate, kernel) system ``G_j[c, c] x = X_j[:, c]' t_j``; all pairs of one
width are gathered batch-last and solved together with the Cholesky of :mod:`automodel.fit.batched`,
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

from automodel.fit.batched import PIVOT_TOL, cholesky, cholesky_solve, forward

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
    """Pair Gram matrices (k, k, B) and right-hand sides (k, B); ``cols`` (B, k) are column indices."""
    T = des.scale.shape[1]
    row = kern * T + cols.T  # (k, B): row of (kernel, column) in the flattened (K * T) axis
    return des.gram.reshape(-1).take(row[:, None, :] * T + cols.T[None, :, :]), des.moment.reshape(-1).take(row)


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


def _lstsq(des: Designs, kern: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unconstrained coefficients (B, k) and exact weighted RSS (B,) of every pair."""
    if not cols.shape[1]:
        return np.zeros((len(kern), 0)), des.target_ss[kern].copy()
    gram, rhs = _gather(des, kern, cols)
    coef_t, min_pivot = cholesky_solve(gram, rhs)
    coef = coef_t.T.copy()
    bad = ~(min_pivot > PIVOT_TOL) | ~np.isfinite(coef).all(axis=1)
    if bad.any():  # numerically dependent columns: minimum-norm solution from the pseudo-inverse
        X = _pair_columns(des, kern[bad], cols[bad]).transpose(2, 1, 0)  # (Nbad, m, k)
        coef[bad] = (np.linalg.pinv(X, rcond=1e-10) @ des.target[kern[bad]][:, :, None])[..., 0]
    r = _residuals(des, kern, cols, coef)
    return coef, np.einsum("bm,bm->b", r, r)


def _subsets(k: int) -> list[list[int]]:
    return [list(s) for size in range(k - 1, 0, -1) for s in combinations(range(k), size)]


def _nonnegative(des: Designs, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray, rss: np.ndarray) -> None:
    """Replace the solution of every pair with a negative coefficient by its exact NNLS solution, in place."""
    idx = np.flatnonzero((coef < 0).any(axis=1))
    if not len(idx):
        return
    k = cols.shape[1]
    kk, cc = kern[idx], cols[idx]
    if k > _SUBSET_MAX_K:
        from scipy.optimize import nnls
        for i, j in enumerate(idx):  # rare: wide candidates only
            X = _pair_columns(des, kk[i:i + 1], cc[i:i + 1])[:, :, 0].T
            coef[j], r = nnls(X, des.target[kk[i]])
            rss[j] = r * r
        return
    best_rss = des.target_ss[kk].copy()  # the empty subset: every coefficient zero
    best = np.zeros((len(idx), k))
    for sub in _subsets(k):
        c, r = _lstsq(des, kk, cc[:, sub])
        better = (c >= 0).all(axis=1) & (r < best_rss)
        best_rss = np.where(better, r, best_rss)
        best[better] = 0.0
        best[np.ix_(better, sub)] = c[better]
    coef[idx] = best
    rss[idx] = best_rss


def solve(des: Designs, kern: np.ndarray, cols: np.ndarray, nonnegative: bool = True
          ) -> tuple[np.ndarray, np.ndarray]:
    """Fit every pair: kernel ``kern[b]`` with the columns ``cols[b]`` (one width).

    Returns
    -------
    coef : (B, k) array
        Coefficients on the scaled columns (divide by ``des.scale[kern[:, None], cols]``).
    rss : (B,) array
        Weighted residual sums of squares.
    """
    kern = np.asarray(kern, dtype=np.intp)
    cols = np.asarray(cols, dtype=np.intp).reshape(len(kern), -1)
    coef, rss = _lstsq(des, kern, cols)
    if nonnegative:
        _nonnegative(des, kern, cols, coef, rss)
    return coef, rss


def leverages(des: Designs, kern: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Diagonal of the weighted hat matrix of every pair, (m, B), without refits (as
    :func:`automodel.fit.batched.leverages`: ``h_i = |L^-1 x_i|^2`` with a :data:`PIVOT_TOL` ridge)."""
    k = cols.shape[1]
    if not k:
        return np.zeros((des.columns.shape[2], len(kern)))
    gram, _ = _gather(des, kern, cols)
    L, _ = cholesky(gram + PIVOT_TOL * np.eye(k)[:, :, None])
    z = forward(L, _pair_columns(des, kern, cols))
    return np.clip(np.einsum("kmb,kmb->mb", z, z), 0.0, 1.0)
