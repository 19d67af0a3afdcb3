"""Kernels in groups that share their points, and the batched choice of one model per kernel.

:func:`groups` turns a table of runs (kernel, parameters, value) into groups of kernels measured at the
same points, one aggregated value per (kernel, point). :func:`best_per_kernel` fits every candidate of
a search to every kernel of a group at once (:mod:`automodel.solve.multi`), scores them with
:func:`automodel.solve.metrics.compute` and chooses per kernel with the rule automodel.fit uses
(:func:`choose`, :mod:`automodel.search.select`), as :func:`automodel.search.score.score` does for
one target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.errors import DataError
from automodel.options import AGGREGATES
from automodel.solve import metrics as metrics_mod
from automodel.solve import multi
from automodel.space.config import SearchSpace

__all__ = ["Group", "groups", "best_per_kernel", "choose", "noise",
           "CHUNK_PAIRS"]

CHUNK_PAIRS = 1 << 13  # (candidate, kernel) pairs solved per vectorised step


@dataclass(frozen=True)
class Group:
    """Kernels measured at the same points: points (m, d) in sorted order, values (m, K)."""

    params: tuple[str, ...]
    points: np.ndarray
    names: tuple[str, ...]
    index: np.ndarray  # position of each kernel in the input order
    values: np.ndarray
    spread: np.ndarray  # (m, K) standard deviation of the repetitions (0 for one run)
    count: np.ndarray  # (m, K) repetitions
    aggregate: str = "median"


def groups(frame: pd.DataFrame, kernel: str, time: str, params: list[str], source: str, offset: int,
            aggregate: str) -> tuple[list[str], list[Group], dict[int, tuple[int, str]]]:
    """Aggregate repetitions per (kernel, point); group kernels by their point set.

    Returns every kernel name (input order), the groups, and kernel index -> (points, note) for the
    kernels that cannot be modelled.
    """
    if aggregate not in AGGREGATES:
        raise DataError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    P = np.column_stack([data_mod.numeric(frame, q, q, source, offset) for q in params])
    y = data_mod.numeric(frame, time, "value", source, offset)
    codes, names = pd.factorize(frame[kernel], use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise DataError(f"{source}, row {i + offset}, column '{kernel}': expected a kernel name, got an empty cell")
    points, pcode = np.unique(P, axis=0, return_inverse=True)
    bad: dict[int, tuple[int, str]] = {}
    nonpos = np.flatnonzero(y <= 0)  # every run must have a positive time, as automodel.fit requires
    for j, i in zip(*np.unique(codes[nonpos], return_index=True)):
        at = ", ".join(f"{q} = {v:g}" for q, v in zip(params, P[nonpos[i]]))
        bad[int(j)] = (0, f"value {y[nonpos[i]]:g} at {at} is not positive (times must be > 0)")
    key = codes.astype(np.int64) * len(points) + pcode.reshape(-1)
    order = np.argsort(key, kind="stable")
    key, y = key[order], y[order]
    spread, count = np.zeros(len(y)), np.ones(len(y), int)
    if len(key) > 1 and (key[1:] == key[:-1]).any():  # repetitions: one value per (kernel, point)
        agg = pd.Series(y).groupby(key, sort=True).agg([aggregate, "std", "size"])
        key, y = agg.index.to_numpy(), agg[aggregate].to_numpy(float)
        spread, count = agg["std"].fillna(0.0).to_numpy(float), agg["size"].to_numpy(int)
    kern, pt = key // len(points), key % len(points)
    counts = np.bincount(kern, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)])
    bad = {j: (int(counts[j]), note) for j, (_, note) in bad.items()}
    for j in np.flatnonzero(counts < 3):
        bad.setdefault(int(j), (int(counts[j]), f"{counts[j]} distinct point(s); at least 3 are needed"))
    ok = np.setdiff1d(np.arange(len(names)), np.fromiter(bad, int, len(bad)))
    by_points: dict[bytes, list[int]] = {}
    if len(ok) and (counts[ok] == counts[ok[0]]).all():
        m = int(counts[ok[0]])
        rows = (starts[ok][:, None] + np.arange(m)).reshape(-1)
        pts = pt[rows].reshape(len(ok), m)
        if (pts == pts[0]).all():  # the common case: every kernel at the same points
            by_points[pts[0].tobytes()] = list(ok)
    if not by_points:
        for j in ok:
            by_points.setdefault(pt[starts[j]:starts[j + 1]].tobytes(), []).append(int(j))
    out = []
    for members in by_points.values():
        idx = np.asarray(members)
        m = int(counts[idx[0]])
        rows = starts[idx][:, None] + np.arange(m)  # (K, m)
        out.append(Group(tuple(params), points[pt[rows[0]]], tuple(str(names[j]) for j in idx), idx,
                         y[rows].T.copy(), spread[rows].T.copy(), count[rows].T.copy(), aggregate))
    return [str(n) for n in names], out, bad


# -- fitting one group -----------------------------------------------------------------------------
@dataclass
class _Scored:
    metrics: dict[str, np.ndarray]  # (K, n)
    coef: np.ndarray  # (K, n, k) term coefficients


def _designs(values: np.ndarray, Y: np.ndarray, W: np.ndarray, hold: np.ndarray | None, need: tuple[str, ...]
             ) -> tuple[multi.Designs, multi.Designs | None]:
    """The designs :func:`_score` solves on: all rows, and the rows outside ``hold`` when ``need`` asks for
    the hold-out error (else None)."""
    dh = (multi.designs(values[~hold], Y[~hold], W[~hold])
          if {"holdout", "forward"} & set(need) and hold is not None else None)
    return multi.designs(values, Y, W), dh


def _score(values: np.ndarray, Y: np.ndarray, W: np.ndarray, combos: np.ndarray, nonnegative: bool,
           hold: np.ndarray | None, need: tuple[str, ...], kern_only: np.ndarray | None = None,
           designs: tuple[multi.Designs, multi.Designs | None] | None = None) -> _Scored:
    """Fit and score candidates ``combos`` (n, k) on every kernel, or one candidate per kernel when
    ``kern_only`` is given (``combos[j]`` for kernel ``j``); as :func:`automodel.search.score.score`.
    ``designs`` are :func:`_designs` of the same arguments, made once for many calls."""
    des, dh = designs or _designs(values, Y, W, hold, need)
    K, (n, k) = Y.shape[1], combos.shape
    if kern_only is None:
        cand, kern = multi.pairs(n, K)
        cols = combos[cand]
    else:
        kern, cols, n = kern_only, combos, 1
    coef, wrss = multi.solve(des, kern, cols, nonnegative, need_rss=bool(set(need) - {"s", "rel_s"}))
    coef = coef / des.scale[kern[:, None], cols]  # coefficients of the terms
    pred = _predict(values, cols, coef)
    lev = multi.leverages(des, kern, cols) if {"loo", "forward"} & set(need) else None
    hold_err = None
    if dh is not None:
        c_h, _ = multi.solve(dh, kern, cols, nonnegative)
        pred_h = _predict(values[hold], cols, c_h / dh.scale[kern[:, None], cols])
        left = len(Y) - int(hold.sum())
        hold_err = (1.0 if left > k else np.inf) * (pred_h / Y[hold][:, kern] - 1.0)
    mets = metrics_mod.compute(Y[:, kern], pred, k, wrss, lev, hold_err, names=need)
    return _Scored({name: v.reshape(K, n) for name, v in mets.items()}, coef.reshape(K, n, k))


def _predict(values: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Predictions (m, B) of every pair: term values ``values`` (m, T), columns (B, k), coefficients (B, k)."""
    pred = np.zeros((len(cols), values.shape[0]))
    rows = values.T
    for j in range(cols.shape[1]):
        pred += rows.take(cols[:, j], axis=0) * coef[:, j, None]
    return pred.T


def best_per_kernel(values: np.ndarray, Y: np.ndarray, term_idx: list[list[int]], sp: SearchSpace,
                  hold: np.ndarray | None, noise_se: tuple[np.ndarray, np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Per kernel: the candidate automodel.fit chooses among the searched ones, its coefficients and all
    its metrics (index -1 when none can be fitted)."""
    opt = sp.fit
    K, N = Y.shape[1], len(term_idx)
    W = 1.0 / Y ** 2 if opt.weighting == "relative" else np.ones_like(Y)
    usable = np.isfinite(values).all(axis=0)
    values = np.where(np.isfinite(values), values, 0.0)
    widths = np.array([len(t) for t in term_idx])
    score = np.full((K, N), np.inf)
    n_terms = np.zeros((K, N), int)  # terms left once NNLS has set some coefficients to zero
    valid = np.zeros(N, bool)
    designs = _designs(values, Y, W, hold, (opt.metric,))
    for k in np.unique(widths):
        members = np.flatnonzero(widths == k)
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = usable[combos].all(axis=1)
        members, combos = members[ok], combos[ok]
        valid[members] = True
        step = max(1, CHUNK_PAIRS // K)
        for lo in range(0, len(members), step):
            sc = _score(values, Y, W, combos[lo:lo + step], opt.nonnegative, hold, (opt.metric,), designs=designs)
            score[:, members[lo:lo + step]] = sc.metrics[opt.metric]
            n_terms[:, members[lo:lo + step]] = np.maximum((sc.coef != 0.0).sum(axis=2), 1)
    score = np.where(np.isfinite(score) & valid, score, np.inf)
    best = choose(score, n_terms, valid, len(Y), sp, noise_se)
    width = int(widths.max(initial=0))
    coefs = np.full((K, width), np.nan)
    mets = {name: np.full(K, np.nan) for name in metrics_mod.METRICS}
    for k in np.unique(widths[best[best >= 0]]):  # refit the chosen candidates with every metric
        kern = np.flatnonzero((best >= 0) & (widths[best] == k))
        combos = np.array([term_idx[i] for i in best[kern]], dtype=np.intp).reshape(len(kern), k)
        sc = _score(values, Y[:, kern], W[:, kern], combos, opt.nonnegative, hold, metrics_mod.METRICS,
                    kern_only=np.arange(len(kern)))
        coefs[kern, :k] = sc.coef[:, 0]
        for name in mets:
            mets[name][kern] = sc.metrics[name][:, 0]
    return best, coefs, mets


def choose(score: np.ndarray, n_terms: np.ndarray, valid: np.ndarray, n_points: int, sp: SearchSpace,
           noise_se: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Each kernel's candidate by the space's selection rule (:func:`automodel.search.select.select_rows`,
    the rule automodel.fit applies to its ranked candidates, for all kernels at once); the first valid
    one when no score is finite, as the staged search ranks them."""
    from automodel.search.select import select_rows

    best, _ = select_rows(score, n_terms, n_points, sp.fit.metric, sp.fit.selection, *noise_se)
    finite = np.isfinite(score[np.arange(len(score)), best])
    if valid.any():
        best[~finite] = int(np.argmax(valid))
    best[~valid[best]] = -1
    return best


def noise(g: Group, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Pooled standard error of each kernel's aggregated values, relative and absolute (K,) each
    (:func:`automodel.data.aggregate_se`, as :meth:`automodel.data.Dataset.aggregate_se` for one dataset)."""
    return data_mod.aggregate_se(g.values, g.spread, g.count, aggregate)
