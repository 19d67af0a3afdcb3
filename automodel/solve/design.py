"""Designs: the weighted, column-scaled least-squares problems of one or many targets, and their pairs.

A design holds, per target ``j`` (a kernel, or the one target of a search), the columns
``X_j = sqrt(w_j) * A / scale_j`` of the shared term values ``A``, the target ``t_j = sqrt(w_j) * y_j``
and the sufficient statistics ``G_j = X_j'X_j``, ``b_j = X_j't_j`` and ``t_j't_j``. One *pair* is one
(candidate, target) system ``G_j[c, c] x = b_j[c]``: a single target is the case ``K = 1``.

A design can also be built from pooled statistics alone (the online stage keeps ``G``, ``b`` and
``y'Wy`` of its runs, not the runs): :func:`from_stats`. Its columns, needed only by the rare exact
fallbacks, are then ``T + 1`` *virtual rows* ``[[R, z], [0, rho]]`` with ``G = R'R`` (``R = sqrt(L) V'``
from ``G = V L V'``, on the unit scale of the columns, not mixed with ``t't``), ``R'z = b`` and
``rho^2 = t't - z'z``: least squares on them has the coefficients and residual sums of squares of
least squares on the runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["Design", "design", "usable", "from_stats", "pairs", "gather", "pair_columns", "residuals"]


@dataclass(frozen=True)
class Design:
    """One weighted, column-scaled design per target, stacked on a leading target axis.

    Attributes
    ----------
    scale : (K, T) array
        Column norms; coefficients on the scaled columns divided by them are term coefficients.
    gram : (K, T, T) array or None
        ``X_j'X_j`` (unit diagonal except for all-zero columns); None when the design was built without
        it (:func:`design`, ``gram=False``): :func:`gather` then forms each pair's entries from the
        columns.
    moment : (K, T) array
        ``X_j't_j``.
    target_ss : (K,) array
        ``t_j't_j``.
    stored : tuple of (K, T, m) and (K, m) arrays, or None
        The columns and targets when the design was built from data; None when it was built from
        statistics (:attr:`rows` then makes virtual rows).
    """

    scale: np.ndarray
    gram: np.ndarray | None
    moment: np.ndarray
    target_ss: np.ndarray
    stored: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @cached_property
    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Columns (K, T, m) and targets (K, m): the data's, or virtual rows (see the module docstring)."""
        if self.stored is not None:
            return self.stored
        lam, V = np.linalg.eigh(self.gram)  # G = V diag(lam) V' on the unit scale of the columns
        root = np.sqrt(np.clip(lam, 0.0, None))
        inv = np.divide(1.0, root, out=np.zeros_like(root), where=root > root.max(axis=1, keepdims=True) * 1e-15)
        z = inv * np.einsum("kta,kt->ka", V, self.moment)  # R_G' z = b
        rho = np.sqrt(np.maximum(self.target_ss - np.einsum("ka,ka->k", z, z), 0.0))
        columns = np.concatenate([(root[:, :, None] * V.transpose(0, 2, 1)).transpose(0, 2, 1),
                                  np.zeros(self.scale.shape + (1,))], axis=2)  # (K, T, T + 1)
        return columns, np.concatenate([z, rho[:, None]], axis=1)

    @property
    def columns(self) -> np.ndarray:
        """(K, T, m) weighted, scaled columns (virtual rows for a design from statistics)."""
        return self.rows[0]

    @property
    def target(self) -> np.ndarray:
        """(K, m) weighted targets."""
        return self.rows[1]

    @property
    def n_targets(self) -> int:
        return self.scale.shape[0]


#: ``rows x terms^2`` from which :func:`design` forms the Gram matrix with BLAS (5-20x faster than
#: ``np.einsum`` on large data). Below it ``np.einsum``, whose sums do not depend on how many threads
#: BLAS has: a small design has the same bits in a one-thread parallel worker as in the serial run.
BLAS_GRAM = 1 << 27
#: floats of gathered columns :func:`gather` holds at once when it forms Gram entries from the columns
GATHER_FLOATS = 1 << 22


def design(values: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, gram: bool = True) -> Design:
    """Prepare term values ``values`` (m, T) and targets ``y`` for batched solves.

    Parameters
    ----------
    values : (m, T) array
        Term values (finite).
    y : (m,) or (m, K) array
        One target, or one column per target.
    weights : array like ``y``, optional
        Row weights of each target (:func:`automodel.options.weights`); none: all ones.
    gram : bool
        Form every target's Gram matrix (T x T). False: none is formed where ``np.einsum`` would form
        it (below :data:`BLAS_GRAM`), and :func:`gather` forms only the entries of the pairs it is
        given, with the same sums (so the same numbers): cheaper when the pairs use few of the T^2
        entries (many targets, each with its own candidates).

    Examples
    --------
    >>> des = design(np.array([[1.0, 1.0], [2.0, 1.0]]), np.array([2.0, 4.0]))
    >>> des.n_targets, des.scale.round(3).tolist(), des.target_ss.tolist()
    (1, [[2.236, 1.414]], [20.0])
    """
    values = np.asarray(values, float)
    Y = np.asarray(y, float)
    Y = Y if Y.ndim == 2 else Y[:, None]
    sw = np.ones_like(Y) if weights is None else np.sqrt(np.asarray(weights, float)).reshape(Y.shape)
    # the columns are formed on values and weights divided by their largest magnitudes (at most 1), so
    # neither the products nor the squares of the norms overflow; the largest magnitudes go into the scale
    v_max, w_max = _magnitude(values), _magnitude(sw)
    # (K, T, m) in C order: each column contiguous, so a pair's columns are a plain row gather
    scaled = np.divide(values.T, v_max[:, None], order="C")
    if sw.shape[1] == 1:  # one target: weighted in place, no second (T, m) array
        scaled *= (sw[:, 0] / w_max[0])[None, :]
        cols = scaled[None]
    else:
        cols = np.multiply((sw / w_max).T[:, None, :], scaled[None, :, :], order="C")
    # sums along rows (contiguous): the same bits for a target alone as beside others (tested)
    norm = np.sqrt(np.einsum("kti,kti->kt", cols, cols))
    norm[norm == 0] = 1.0
    cols /= norm[:, :, None]
    with np.errstate(over="ignore"):
        scale = norm * v_max[None, :] * w_max[:, None]
    if not np.isfinite(scale).all():
        cols[~np.isfinite(scale)] = 0.0  # a column beyond the range of floats: unusable (see :func:`usable`)
    target = (Y * sw).T.copy()
    if cols[0].size * cols.shape[1] < BLAS_GRAM:  # the same bits however BLAS is threaded
        G = np.einsum("kai,kbi->kab", cols, cols) if gram else None
    else:
        G = np.empty(cols.shape[:2] + cols.shape[1:2])
        for k, c in enumerate(cols):  # each target's columns times themselves
            np.dot(c, c.T, out=G[k])
    return Design(scale, G, np.einsum("kti,ki->kt", cols, target), np.square(target).sum(axis=1),
                  (cols, target))


def _magnitude(a: np.ndarray) -> np.ndarray:
    """Largest absolute value of each column of ``a`` (m, T), 1 where that is 0 or not finite."""
    big = np.maximum(np.max(a, axis=0, initial=0.0), -np.min(a, axis=0, initial=0.0))  # no |a| temporary
    return np.where(np.isfinite(big) & (big > 0), big, 1.0)


def usable(des: Design) -> np.ndarray:
    """(T,) whether every target's column of each term has a finite scale: a column whose
    weighted norm exceeds the range of floats (``inf``) cannot carry a coefficient and is not fitted."""
    return np.isfinite(des.scale).all(axis=0)


def from_stats(gram: np.ndarray, moment: np.ndarray, target_ss: float) -> Design:
    """A one-target design from pooled statistics ``A'WA`` (T, T), ``A'Wy`` (T,) and ``y'Wy``.

    The statistics are scaled to a unit diagonal like the columns of :func:`design`; the design has
    virtual rows instead of columns (module docstring).
    """
    d = np.sqrt(np.diag(gram))
    d = np.where(np.isfinite(d) & (d > 0), d, 1.0)
    return Design(d[None], (gram / d[:, None] / d[None, :])[None], (moment / d)[None],
                  np.array([float(target_ss)]))


def pairs(n_candidates: int, n_targets: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate and target index of every pair, target-major: pair ``j * N + n`` is (n, j)."""
    return np.tile(np.arange(n_candidates), n_targets), np.repeat(np.arange(n_targets), n_candidates)


def gather(des: Design, kern: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair Gram matrices (k, k, B) and right-hand sides (k, B), batch-last; ``cols`` (B, k) are column
    indices, ``kern`` (B,) target indices.

    One flat ``take`` per entry of the lower triangle, mirrored (2.5x faster than 2-D fancy indexing).
    A design without Gram matrices (:func:`design`, ``gram=False``) has each entry formed from the
    pair's columns by the sum :func:`design` forms its Gram matrices with (``np.einsum`` along the rows:
    the same numbers), :data:`GATHER_FLOATS` at a time.
    """
    T = des.scale.shape[1]
    ct = np.ascontiguousarray(cols.T)  # (k, B)
    k, n = ct.shape
    row = ct + kern * T if des.n_targets > 1 else ct  # (k, B): row of (target, column) in the (K * T) axis
    gram = np.empty((k, k, n))
    if des.gram is None:
        columns = des.columns.reshape(-1, des.columns.shape[2])  # (K * T, m)
        step = max(1, GATHER_FLOATS // max(k * columns.shape[1], 1))
        for lo in range(0, n, step):
            part = slice(lo, lo + step)
            X = [columns.take(row[i, part], axis=0) for i in range(k)]
            for i in range(k):
                for j in range(i + 1):
                    gram[i, j, part] = gram[j, i, part] = np.einsum("bm,bm->b", X[i], X[j])
    else:
        flat, start = des.gram.reshape(-1), row * T
        for i in range(k):
            for j in range(i + 1):
                gram[i, j] = gram[j, i] = flat.take(start[i] + ct[j])
    return gram, des.moment.reshape(-1).take(row)


def _column(des: Design, kern: np.ndarray, cols: np.ndarray, j: int) -> np.ndarray:
    """The ``j``-th scaled column of every pair, (B, m)."""
    columns = des.columns
    K, T, m = columns.shape
    return columns.reshape(K * T, m).take(cols[:, j] + kern * T if K > 1 else cols[:, j], axis=0)


def pair_columns(des: Design, kern: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Scaled columns of every pair, (k, m, B)."""
    return np.stack([_column(des, kern, cols, j).T for j in range(cols.shape[1])])


def residuals(des: Design, kern: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Weighted residuals ``t_j - X_j[:, c] x`` of every pair, (B, m); ``coef`` (B, k) on scaled columns."""
    r = des.target.take(kern, axis=0)
    for j in range(cols.shape[1]):
        r -= _column(des, kern, cols, j) * coef[:, j, None]
    return r
