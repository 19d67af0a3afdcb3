"""The batched solve: every (candidate, target) pair of one width in one vectorised call.

The design (:mod:`automodel.solve.design`) holds each target's Gram matrix ``G = X'X`` and
``b = X't``; a pair (candidate columns ``c``, target ``j``) solves ``G_j[c, c] x = b_j[c]``. The
systems of one width are gathered batch-last and solved by the Cholesky of
:mod:`automodel.solve.cholesky`; numerically dependent columns (a pivot below ``PIVOT_TOL``) get the
minimum-norm solution from the pseudo-inverse of their columns. The factors are kept on request, so
:func:`leverages` reuses them: each width's Gram matrices are gathered and factorised once.

Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1) are exact: the pairs whose unconstrained
solution has a negative coefficient go through :mod:`automodel.solve.nnls` (KKT enumeration for
k <= 3, the vectorised active set above), and what neither certifies through its exact fallback. A
warm start (``start``: a previous support, as the online stage has) runs the active set on every pair
from that support instead of solving unconstrained first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automodel.options import RELATIVE_RESOLUTION
from automodel.solve import nnls as nnls_mod
from automodel.solve.cholesky import PIVOT_TOL, cholesky, cholesky_solve, forward
from automodel.solve.design import Design, gather, pair_columns, residuals

__all__ = ["RSS_MODES", "Solution", "solve", "solve_one", "leverages", "residual_ss"]

#: how :func:`solve` computes the weighted RSS. ``fast``: ``t't - x'b``, from the residuals where that
#: is below 1e-6 of ``t't`` (it cancels there) or the solution came from the pseudo-inverse;
#: ``exact``: from the residuals; ``normal``: ``t't - x'b`` only (designs from statistics; the exact
#: fallback still compares its subsets by ``fast`` RSS, on virtual rows).
RSS_MODES = ("fast", "exact", "normal")


@dataclass(frozen=True)
class Solution:
    """Solutions of a batch of pairs of one width on one :class:`~automodel.solve.design.Design`.

    Attributes
    ----------
    kern : (B,) int array
        Target of each pair.
    cols : (B, k) int array
        Column indices of each pair.
    coef_scaled : (B, k) array
        Coefficients on the scaled columns.
    rss : (B,) array or None
        Weighted residual sums of squares (None when not asked for).
    factor, pivot : (k, k, B) and (B,) arrays, or None
        Cholesky factors of the pairs' Gram matrices and their smallest squared pivots (when asked
        for, for :func:`leverages`).
    n_exact : int
        Pairs solved by the exact fallback (:func:`automodel.solve.nnls.exhaustive`).
    """

    kern: np.ndarray
    cols: np.ndarray
    coef_scaled: np.ndarray
    rss: np.ndarray | None
    factor: np.ndarray | None = None
    pivot: np.ndarray | None = None
    n_exact: int = 0

    def coefficients(self, des: Design) -> np.ndarray:
        """Coefficients of the original (unscaled) terms, (B, k)."""
        return self.coef_scaled / des.scale[self.kern[:, None], self.cols]

    def part(self, pairs: slice) -> "Solution":
        """The solutions of the pairs ``pairs`` (a slice, so the arrays are views)."""
        cut = (lambda a: None if a is None else a[pairs])
        return Solution(self.kern[pairs], self.cols[pairs], self.coef_scaled[pairs], cut(self.rss),
                        None if self.factor is None else self.factor[:, :, pairs], cut(self.pivot))


def residual_ss(des: Design, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray, chunk: int = 8192
                ) -> np.ndarray:
    """Exact weighted RSS (B,) from the residuals (not ``t't - x'b``, which cancels for good fits)."""
    out = np.empty(len(kern))
    for lo in range(0, len(kern), chunk):
        r = residuals(des, kern[lo:lo + chunk], cols[lo:lo + chunk], coef[lo:lo + chunk])
        out[lo:lo + chunk] = np.einsum("bm,bm->b", r, r)
    return out


def _tss(des: Design, kern: np.ndarray) -> np.ndarray | float:
    """``t't`` of every pair: one number for a one-target design (no gather)."""
    return float(des.target_ss[0]) if des.n_targets == 1 else des.target_ss[kern]


def _rss(des: Design, kern: np.ndarray, cols: np.ndarray, x: np.ndarray, rhs: np.ndarray, mode: str,
         exact: np.ndarray | None = None) -> np.ndarray:
    """RSS (B,) of least-squares solutions ``x`` (k, B) on their support, by ``mode`` (:data:`RSS_MODES`);
    ``exact`` marks pairs whose RSS comes from the residuals in the ``fast`` mode."""
    tss = _tss(des, kern)
    if mode == "exact":
        return residual_ss(des, kern, cols, x.T)
    rss = tss - np.einsum("kb,kb->b", rhs, x)
    if mode == "fast":
        exact = rss < 1e-6 * tss if exact is None else exact | (rss < 1e-6 * tss)
        if exact.any():
            rss[exact] = residual_ss(des, kern[exact], cols[exact], x[:, exact].T)
    return np.maximum(rss, 0.0)


def _unconstrained(des: Design, kern: np.ndarray, cols: np.ndarray, mode: str | None):
    """Least-squares coefficients (B, k), RSS (B,) or None, and the pairs' Gram matrices, right-hand
    sides, Cholesky factors and smallest pivots (None for k = 0); SVD for dependent columns."""
    n, k = cols.shape
    if k == 0:
        return np.zeros((n, 0)), np.broadcast_to(_tss(des, kern), (n,)).copy(), None, None, None, None
    gram, rhs = gather(des, kern, cols)
    x, L, pivot = cholesky_solve(gram, rhs)
    bad = ~(pivot > PIVOT_TOL) | ~np.isfinite(x).all(axis=0)  # over axis 0 of (k, B): fast
    if bad.any():  # numerically dependent columns: minimum-norm solution from the pseudo-inverse
        x[:, bad] = _pseudo_inverse_solve(des, kern[bad], cols[bad])
    rss = None if mode is None else _rss(des, kern, cols, x, rhs, mode, bad)
    return x.T.copy(), rss, gram, rhs, L, pivot


def _pseudo_inverse_solve(des: Design, kern: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Minimum-norm least-squares coefficients (k, B) from the SVD of each pair's columns.

    The SVD only ever sees finite columns and targets (LAPACK's SVD may never return on ``inf``): a
    pair with a non-finite entry gets NaN coefficients, which score ``inf``.
    """
    X = pair_columns(des, kern, cols).transpose(2, 1, 0)  # (B, m, k)
    t = des.target[kern]
    finite = np.isfinite(X).all(axis=(1, 2)) & np.isfinite(t).all(axis=1)
    x = np.full((cols.shape[1], len(kern)), np.nan)
    if finite.any():
        x[:, finite] = (np.linalg.pinv(X[finite], rcond=RELATIVE_RESOLUTION) @ t[finite][:, :, None])[..., 0].T
    return x


def _exact(des: Design, kern: np.ndarray, cols: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact NNLS of every pair (:func:`automodel.solve.nnls.exhaustive`): coefficients (B, k), RSS (B,)."""

    compare = "exact" if mode == "exact" else "fast"  # t't - x'b alone cancels: it picks wrong subsets

    def solve_subset(sub: list[int]) -> tuple[np.ndarray, np.ndarray]:
        c, r, *_ = _unconstrained(des, kern, cols[:, sub], compare)
        return c, r

    def wide(i: int) -> tuple[np.ndarray, float]:
        return nnls_mod.scipy_nnls(pair_columns(des, kern[i:i + 1], cols[i:i + 1])[:, :, 0].T,
                                   des.target[kern[i]])

    return nnls_mod.exhaustive(solve_subset, len(kern), cols.shape[1], des.target_ss[kern], wide)


def _nonnegative(des: Design, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray, rss: np.ndarray | None,
                 mode: str, start: np.ndarray | None = None,
                 gathered: tuple[np.ndarray, np.ndarray] | None = None, idx: np.ndarray | None = None) -> int:
    """Replace infeasible solutions (a negative coefficient) by the exact NNLS solution, in place.

    With ``start`` (B, k) every pair runs the active set from that support; else only the infeasible
    ones, by KKT enumeration when k <= 3. ``gathered``: the pairs' Gram matrices and right-hand sides,
    when the caller has them; ``idx``: the infeasible pairs, when the caller has found them. Returns how
    many pairs needed the exact fallback.
    """
    k = cols.shape[1]
    if idx is None and start is None:
        rows = np.flatnonzero(coef < 0) // max(k, 1)  # .any(axis=1) is slow on short rows
        idx = rows[np.diff(rows, prepend=-1) > 0]
    elif idx is None:
        idx = np.arange(len(kern))
    if not len(idx):
        return 0
    tss = _tss(des, kern[idx])
    if gathered is None:
        g, b = gather(des, kern[idx], cols[idx])
    else:
        g, b = gathered[0].take(idx, axis=2), gathered[1].take(idx, axis=1)
    if start is None and k == 1:  # the only proper support is the empty one
        x, ok = np.zeros((1, len(idx))), np.ones(len(idx), bool)
    elif start is None and k <= 3:
        x, ok = nnls_mod.kkt_small(g, b, tss)
    else:
        x, ok = nnls_mod.active_set(g, b, coef[idx].T > 0 if start is None else start.T, tss)
    coef[idx[ok]] = x[:, ok].T
    if rss is not None and ok.any():
        done = idx[ok]
        rss[done] = np.where((x[:, ok] == 0).all(axis=0), _tss(des, kern[done]),
                             _rss(des, kern[done], cols[done], x[:, ok], b[:, ok], mode))
    rest = idx[~ok]
    if len(rest):
        coef[rest], r = _exact(des, kern[rest], cols[rest], mode)
        if rss is not None:
            rss[rest] = r
    return len(rest)


def solve(des: Design, cols: np.ndarray, kern: np.ndarray | None = None, nonnegative: bool = True,
          rss: str | None = "fast", start: np.ndarray | None = None, keep_factor: bool = False,
          chunk: int = 4096) -> Solution:
    """Solve every pair: target ``kern[b]`` with the columns ``cols[b]`` (one width).

    Parameters
    ----------
    des : Design
    cols : (B, k) int array
        Column indices of each pair.
    kern : (B,) int array, optional
        Target of each pair (default: target 0, the one target of a single-target design).
    nonnegative : bool
        Constrain every coefficient to be >= 0 (exact, see the module docstring).
    rss : {"fast", "exact", "normal"} or None
        How the RSS is computed (:data:`RSS_MODES`); None: not at all (the fallbacks compare
        ``fast`` ones).
    start : (B, k) bool array, optional
        Warm start of the non-negative fit: each pair's previous support.
    keep_factor : bool
        Keep the Cholesky factors for :func:`leverages` (not with ``start``).
    chunk : int
        Pairs solved per vectorised step (keeps the (k, k, chunk) arrays in cache).
    """
    cols = np.asarray(cols, dtype=np.intp)
    if cols.ndim != 2:
        raise ValueError("cols must be a 2-D array of column indices")
    n, k = cols.shape
    kern = np.broadcast_to(np.intp(0), (n,)) if kern is None else np.asarray(kern, dtype=np.intp)  # no copy
    mode = rss or "fast"
    out_rss = None if rss is None else np.empty(n)
    factor = np.empty((k, k, n)) if keep_factor and k else None
    pivot = np.empty(n) if keep_factor and k else None
    n_exact = 0
    if start is not None and nonnegative and k:  # warm start: the active set on every pair
        coef = np.zeros((n, k))
        for lo in range(0, n, chunk):
            part = slice(lo, lo + chunk)
            n_exact += _nonnegative(des, kern[part], cols[part], coef[part],
                                    None if out_rss is None else out_rss[part], mode, start[part])
        return Solution(kern, cols, coef, out_rss, None, None, n_exact)
    coef = np.empty((n, k))
    for lo in range(0, n, chunk):
        part = slice(lo, lo + chunk)
        c, r, gram, rhs, L, pv = _unconstrained(des, kern[part], cols[part], rss)
        if factor is not None:
            factor[:, :, part], pivot[part] = L, pv
        del L, pv  # freed before the next chunk allocates its own
        if nonnegative and k and n <= chunk:  # one chunk: its Gram matrices serve the NNLS pass
            n_exact += _nonnegative(des, kern, cols, c, r, mode, gathered=(gram, rhs))
        del gram, rhs
        coef[part] = c
        if out_rss is not None:
            out_rss[part] = r
    if nonnegative and k and n > chunk:  # the infeasible pairs of every chunk together, ``chunk`` at a time
        rows = np.flatnonzero(coef < 0) // k  # .any(axis=1) is slow on short rows
        infeasible = rows[np.diff(rows, prepend=-1) > 0]
        for lo in range(0, len(infeasible), chunk):
            n_exact += _nonnegative(des, kern, cols, coef, out_rss, mode, idx=infeasible[lo:lo + chunk])
    return Solution(kern, cols, coef, out_rss, factor, pivot, n_exact)


def leverages(des: Design, sol: Solution) -> np.ndarray:
    """Diagonal of the weighted hat matrix of every pair of ``sol``, (m, B), without refits.

    ``h_i = x_i' G^-1 x_i = |L^-1 x_i|^2`` with ``G = L L'`` on the pair's full column set, from the
    factors the solve kept (or factorised here when it kept none); pairs with numerically dependent
    columns (a pivot below ``PIVOT_TOL``) are factorised again with a ridge of ``PIVOT_TOL``.
    """
    kern, cols = sol.kern, sol.cols
    k = cols.shape[1]
    if not k:
        return np.zeros((des.columns.shape[2], len(kern)))
    if sol.factor is None:
        L, pivot = cholesky(gather(des, kern, cols)[0])
    else:
        L, pivot = sol.factor.copy(), sol.pivot
    redo = np.flatnonzero(~(pivot > PIVOT_TOL))
    if len(redo):
        gram, _ = gather(des, kern[redo], cols[redo])
        L[:, :, redo] = cholesky(gram + PIVOT_TOL * np.eye(k)[:, :, None])[0]
    z = forward(L, pair_columns(des, kern, cols))
    return np.clip(np.einsum("kmb,kmb->mb", z, z), 0.0, 1.0)


def solve_one(des: Design, nonnegative: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The one system of a one-target design on all its columns, solved on the columns themselves.

    A template fits one model with every column of its basis, often nearly dependent (Kohashi's
    sigmoid beside ``p``, a cubic in ``n``), many times inside an optimiser: the normal equations would
    square its condition number, and the batched machinery costs more than the solve. So this is
    :func:`scipy.optimize.nnls` (through :func:`automodel.solve.nnls.scipy_nnls`, the exact fallback of
    wide candidates) or LAPACK least squares on the weighted, scaled columns.

    Returns
    -------
    coef : (T,) array
        Coefficients of the original (unscaled) terms.
    residuals : (m,) array
        Weighted residuals ``X c - t``.
    """
    X, t = des.columns[0].T, des.target[0]
    if not (np.isfinite(X).all() and np.isfinite(t).all()):
        raise ValueError("the design has non-finite values (a term or a time beyond the range of floats)")
    if nonnegative:
        c, _ = nnls_mod.scipy_nnls(X, t)
    else:
        c = np.linalg.lstsq(X, t, rcond=None)[0]
    return c / des.scale[0], X @ c - t
