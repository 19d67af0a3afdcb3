"""One function of a parameter fitted on every line of a grid at once: ``y = a_g + b_g f(x)`` on each line
``g`` (the runs whose other parameters are fixed), its weighted residual sum of squares pooled over the
lines.

Where a model is Extra-P's normal form (Calotoiu et al., SC'13, eq. 1), every line of the grid in ``x``
follows ``c + sum_k d_k f_k(x)`` with line-dependent ``c`` and ``d_k``: a sum of products restricted to
one varying parameter. So the building block ``f`` of ``x`` can be judged on every line together, each
line with its own intercept and slope, instead of on one line: a grid of 5 x 5 x 5 points gives each
parameter 25 lines of 5 points, not one, and the block's shape is judged on 25 times the runs.

All functions are pure and vectorised over blocks and targets.
"""

from __future__ import annotations

import numpy as np

from automodel.solve.student import f_upper

__all__ = ["LINE_FLOATS", "line_rss", "effect_pvalue"]

#: floats of one chunk's (rows, blocks, targets) arrays: blocks are taken in chunks of at most this size
LINE_FLOATS = 1 << 22


def line_rss(values: np.ndarray, Y: np.ndarray, W: np.ndarray, line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pooled weighted residual sums of squares of ``y = a_g + b_g f(x)`` fitted on each line ``g`` alone.

    Parameters
    ----------
    values : (m, T) array
        The blocks' values ``f_t(x)`` at the runs.
    Y, W : (m, K) arrays
        Targets and their weights (:func:`automodel.options.weights`).
    line : (m,) int array
        The line of each run (any integers; runs with equal labels share a line).

    Returns
    -------
    rss : (T, K) array
        Per block and target, the weighted residual sum of squares summed over the lines; ``inf`` where
        a block is not finite at every run.
    rss_constant : (K,) array
        The same for the constant alone (``y = a_g`` on each line).

    Notes
    -----
    Per line, with ``y`` centred on its weighted mean (so that ``sum w y_c = 0``), the slope's fit
    explains ``(sum w f y_c)^2 / (sum w f^2 - (sum w f)^2 / sum w)`` of ``sum w y_c^2``: three sums of
    products per block, each summed over the runs of every line (:func:`_line_sums`).
    Each block is first shifted by its mean over the runs (the residuals do not change; the difference
    of the two sums of squares loses fewer digits).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.tile([1.0, 2.0, 4.0, 8.0], 2)
    >>> y = np.r_[3 + 2 * x[:4] ** 2, 1 + 5 * x[4:] ** 2][:, None]
    >>> rss, const = line_rss(np.c_[x, x ** 2], y, np.ones_like(y), np.repeat([0, 1], 4))
    >>> bool(rss[1, 0] < 1e-9 < rss[0, 0] < const[0])
    True
    """
    values = np.asarray(values, float)
    Y = np.asarray(Y, float)
    W = np.asarray(W, float)
    m, T = values.shape
    K = Y.shape[1]
    group = np.unique(np.asarray(line), return_inverse=True)[1].reshape(-1)
    G = int(group.max(initial=-1)) + 1
    sw = _line_sums(group, G, W)
    with np.errstate(invalid="ignore", divide="ignore"):
        yc = Y - (_line_sums(group, G, W * Y) / sw)[group]
    wyc = W * yc
    syy = _line_sums(group, G, wyc * yc)  # (G, K)
    rss = np.full((T, K), np.inf)
    cols = np.flatnonzero(np.isfinite(values).all(axis=0))
    step = max(1, LINE_FLOATS // max(m * K, 1))
    for lo in range(0, len(cols), step):  # chunks of blocks: bounded memory on large data
        c = cols[lo:lo + step]
        f = np.ascontiguousarray(values[:, c])  # rows contiguous: the sums below read them so
        f -= f.mean(axis=0)
        t = len(c)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # a column near 1e300: no fit
            wf = (W[:, None, :] * f[:, :, None]).reshape(m, t * K)
            sf = _line_sums(group, G, wf).reshape(G, t, K)
            sff = _line_sums(group, G, wf * np.repeat(f, K, axis=1)).reshape(G, t, K)
            sfy = _line_sums(group, G, (f[:, :, None] * wyc[:, None, :]).reshape(m, t * K)).reshape(G, t, K)
            sff = sff - sf * sf / sw[:, None, :]
            explained = np.where(sff > 0, sfy * sfy / np.where(sff > 0, sff, 1.0), 0.0)
        rss[c] = np.maximum(syy[:, None, :] - explained, 0.0).sum(axis=0)
    return rss, syy.sum(axis=0)


def _line_sums(group: np.ndarray, n_lines: int, X: np.ndarray) -> np.ndarray:
    """(n_lines, c) sums of the rows of ``X`` (m, c) on each line (``group``: each row's line, 0 to
    ``n_lines - 1``), each sum added up in the order of the rows, one :func:`numpy.bincount` for all
    columns (no scipy: importing scipy.sparse costs more CPU than a search of a kernel).

    Examples
    --------
    >>> _line_sums(np.array([1, 0, 1]), 2, np.array([[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]])).tolist()
    [[2.0, 20.0], [5.0, 50.0]]
    """
    c = X.shape[1]
    at = (group[:, None] * c + np.arange(c)).reshape(-1)
    return np.bincount(at, weights=X.reshape(-1), minlength=n_lines * c).reshape(n_lines, c)


def effect_pvalue(rss: np.ndarray, rss_constant: np.ndarray, n_runs: int, n_lines: int) -> np.ndarray:
    """The p-value of the F test of a block's lines (:func:`line_rss`, its ``n_lines`` slopes) against
    the constant on every line: how likely noise alone explains as much as the block does
    (``rss_constant - rss``), judged by what it leaves (``rss``, on ``n_runs - 2 n_lines`` dof).
    NaN where the lines leave no residual degree of freedom; 1 where neither leaves a residual (the
    runs are exactly constant on every line).

    Examples
    --------
    >>> bool(effect_pvalue(np.array([0.5]), np.array([100.0]), 20, 4)[0] < 1e-6)
    True
    >>> bool(effect_pvalue(np.array([9.0]), np.array([10.0]), 20, 4)[0] > 0.5)
    True
    """
    dof = n_runs - 2 * n_lines
    if dof <= 0 or n_lines <= 0:
        return np.full(np.shape(rss), np.nan)
    rss = np.asarray(rss, float)
    gain = np.maximum(np.asarray(rss_constant, float) - rss, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        F = (gain / n_lines) / (rss / dof)
    return np.where(gain > 0, f_upper(np.nan_to_num(F, nan=0.0, posinf=np.inf), n_lines, dof), 1.0)
