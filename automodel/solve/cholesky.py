"""Batch-last Cholesky factorisation and triangular solves of many small SPD systems at once.

Every system is stored with the batch axis last and contiguous (``gram[i, j, n]``, ``rhs[i, n]``), so
each of the O(k^3) steps of the factorisation is one elementwise numpy operation over all N systems
(k <= a dozen): N candidates cost O(k^3) numpy calls on arrays of length N, not N LAPACK calls.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PIVOT_TOL", "cholesky", "forward", "backward", "cholesky_solve", "masked_solve"]

#: a Cholesky pivot below this (on unit-diagonal, column-scaled Gram matrices) means the system's
#: columns are numerically dependent; such systems are solved by SVD instead.
PIVOT_TOL = 1e-11


def cholesky(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cholesky factors of a batch of small SPD matrices stored batch-last, ``gram[i, j, n]``.

    Returns ``L`` (k, k, N), lower triangular, and the smallest squared pivot of each matrix; a pivot
    that is not positive gives NaN in ``L``.

    Examples
    --------
    >>> L, pivot = cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])[:, :, None])
    >>> L[:, :, 0].tolist(), pivot.tolist()
    ([[2.0, 0.0], [1.0, 2.0]], [4.0])
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


def cholesky_solve(gram: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Solve ``gram[:, :, n] x[:, n] = rhs[:, n]`` for a batch-last stack of SPD matrices.

    Returns the solutions (k, N), the factors ``L`` (k, k, N) and the smallest squared pivot of each
    factorisation; below :data:`PIVOT_TOL` a solution is not to be trusted (NaN where a pivot was not
    positive).
    """
    L, min_pivot = cholesky(gram)
    return backward(L, forward(L, rhs)), L, min_pivot


def masked_solve(gram: np.ndarray, rhs: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve batch-last systems with the variables outside ``free`` (k, N) pinned at zero.

    Pinned variables become identity rows and columns (entry by entry, twice as fast as one broadcast
    ``np.where``). Subtracting the zero products they add is exact, so a free variable gets the same
    number as the Cholesky solve of the free variables' own sub-system. Returns the solutions (k, N)
    and the smallest squared pivots (N,).
    """
    g = np.empty_like(gram)
    for i in range(len(gram)):
        g[i, i] = np.where(free[i], gram[i, i], 1.0)
        for j in range(i):
            g[i, j] = g[j, i] = np.where(free[i] & free[j], gram[i, j], 0.0)
    x, _, pivot = cholesky_solve(g, np.where(free, rhs, 0.0))
    return x, pivot
