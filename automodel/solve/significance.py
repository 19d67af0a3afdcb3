"""Whether the data measure one coefficient of a least-squares fit: the two-sided t test.

For each (candidate, target) pair of a :class:`~automodel.solve.design.Design`, the ordinary (signed)
weighted least-squares fit ``x = G^-1 b`` has the covariance ``sigma^2 G^-1``; the statistic of
coefficient ``i`` is ``x_i / sqrt(sigma^2 (G^-1)_ii)`` on ``m - k`` degrees of freedom (Seber and Lee,
*Linear Regression Analysis*, 2nd ed., 2003, sec. 4.3.3). It does not depend on the columns' scale, so
the design's scaled Gram matrices serve as they are.

``sigma^2`` is the larger of the residual mean square and ``floor^2``, the noise the repetitions show
(:meth:`automodel.data.Dataset.aggregate_se`, in the units of the weighted residuals): a curve through
a handful of aggregated points can leave residuals far below the scatter of the runs, and a
coefficient is measured only if it stands out of that scatter.
"""

from __future__ import annotations

import numpy as np

from automodel.solve.design import Design, gather

__all__ = ["coefficient_pvalues"]


def coefficient_pvalues(des: Design, kern: np.ndarray, cols: np.ndarray, position: np.ndarray, n_rows: int,
                        floor: np.ndarray | float = 0.0) -> np.ndarray:
    """Two-sided p-values (B,) of "coefficient ``position[b]`` of pair ``b`` is zero".

    Parameters
    ----------
    des : Design
    kern : (B,) int array
        Target of each pair.
    cols : (B, w) int array
        Columns of each pair, -1 padded at the end (pairs of several widths are tested together).
    position : (B,) int array
        Which of a pair's coefficients is tested; -1: none (NaN).
    n_rows : int
        Rows of the design (runs or aggregated points).
    floor : float or (B,) array
        Least standard deviation of the weighted residuals (the repetitions' noise; 0: none).

    Returns
    -------
    (B,) array
        NaN where no residual degree of freedom is left or the columns are collinear.

    Examples
    --------
    >>> from automodel.solve.design import design
    >>> x = np.arange(1.0, 9.0)
    >>> des = design(np.column_stack([np.ones(8), x]), 5.0 + 2.0 * x + np.tile([0.1, -0.1], 4))
    >>> p = coefficient_pvalues(des, np.array([0, 0]), np.array([[0, 1], [0, 1]]), np.array([0, 1]), 8)
    >>> bool((p < 1e-6).all())
    True
    >>> bool(coefficient_pvalues(des, np.array([0]), np.array([[0, 1]]), np.array([0]), 8, floor=10.0)[0] > 0.3)
    True
    """
    kern, cols, position = (np.asarray(a, np.intp) for a in (kern, cols, position))
    floor = np.broadcast_to(np.asarray(floor, float), position.shape)
    widths = (cols >= 0).sum(axis=1)
    p = np.full(len(cols), np.nan)
    for k in np.unique(widths[position >= 0]):  # one batched test per width
        at = np.flatnonzero((position >= 0) & (widths == k))
        p[at] = _pvalues(des, kern[at], cols[at, :k], position[at], n_rows, floor[at])
    return p


def _pvalues(des: Design, kern: np.ndarray, cols: np.ndarray, position: np.ndarray, n_rows: int,
             floor: np.ndarray) -> np.ndarray:
    """:func:`coefficient_pvalues` for pairs of one width ``k`` (``cols`` (B, k))."""
    from scipy.special import stdtr  # imported when needed, as the solvers import scipy

    B, k = cols.shape
    dof = n_rows - k
    if dof <= 0 or B == 0:
        return np.full(B, np.nan)
    gram, moment = gather(des, kern, cols)  # (k, k, B), (k, B)
    G, b = np.moveaxis(gram, -1, 0), moment.T
    with np.errstate(all="ignore"):
        full = np.linalg.matrix_rank(G, hermitian=True) == k
        inv = np.linalg.pinv(G, hermitian=True)
        coef = np.einsum("bij,bj->bi", inv, b)
        rss = np.maximum(des.target_ss[kern] - np.einsum("bi,bi->b", b, coef), 0.0)
        var = np.maximum(rss / dof, np.square(floor))
        rows = np.arange(B)
        t = coef[rows, position] / np.sqrt(var * inv[rows, position, position])
        p = 2.0 * stdtr(dof, -np.abs(t))
    return np.where(full & np.isfinite(p), p, np.nan)
