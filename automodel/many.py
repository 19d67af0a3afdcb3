"""Many kernels at once: one performance model per kernel of a profile.

A profile (an Extra-P text file, a CSV or DataFrame with a ``kernel`` column) holds many kernels
(call path and metric) measured at the same few points. :func:`fit_many` models every kernel with the
search space and ranking metric :func:`automodel.fit` uses, but shares the work between kernels:

* kernels measured at the same points form a group; each distinct term is evaluated once per group;
* when the space's search is a single stage for these parameters (one parameter ``p``: the p-only
  P-terms of bayesian-kohashi-2022.txt, eqs. 1-6; one extra parameter; the ``pmnf`` space), its
  candidate list does not depend on the measured values, so every (candidate, kernel) pair of the
  group is solved in one batched call (:mod:`automodel.fit.multi`) and each kernel gets the candidate
  that automodel.fit chooses among the searched ones (its ranking metric and selection rule,
  :mod:`automodel.search.select`): the same model as ``automodel.fit(..., templates=())``;
* a multi-stage search (``n`` present, several parameters) prunes per kernel between stages, so those
  kernels run the staged search one by one (same result, no batching);
* groups (and chunks of one-by-one kernels) go to joblib worker processes only when the work measured
  on the first of them predicts more than ``parallel_after`` seconds for the rest (process start-up
  and imports cost about a second).

Seeded templates are not fitted: they are whole-dataset fits outside the search space; use
:func:`automodel.fit` on one kernel for its full leaderboard. Kernels that cannot be modelled (fewer
than 3 distinct points, a value that is not positive) are listed with the reason, never dropped.

Examples
--------
>>> result = automodel.fit_many("profile.txt")        # doctest: +SKIP
>>> result.summary.head()                             # doctest: +SKIP
>>> result.models["main->solve [time]"].predict({"p": [1024]})   # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import time as _time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.errors import DataError, ModelFileError, SpaceError
from automodel.fit import metrics as metrics_mod
from automodel.fit import multi
from automodel.model import Model, TermModel
from automodel.space.config import SearchSpace, load_space
from automodel.space.symbols import ROLE_NAMES
from automodel.space.terms import ONE, Term

__all__ = ["ManyResult", "fit_many", "load_kernels", "save_models", "load_models", "formula", "prime_orders",
           "SUMMARY_COLUMNS", "MODELS_FORMAT"]

MODELS_FORMAT = "automodel-models"
SUMMARY_COLUMNS = ["kernel", "formula", "n_terms", "n_points", *metrics_mod.METRICS, "note"]
_CHUNK_PAIRS = 1 << 16  # (candidate, kernel) pairs solved per vectorised step
_KERNELS_PER_TASK = 64  # one-by-one kernels handed to a worker at a time


@dataclass
class ManyResult:
    """One model per kernel.

    Attributes
    ----------
    models : dict
        Kernel name -> :class:`automodel.Model` (predict, formula, export, save), for every kernel that
        could be modelled, in input order.
    summary : DataFrame
        One row per kernel in input order: ``kernel, formula, n_terms, n_points``, every metric of
        :mod:`automodel.fit.metrics` and a ``note`` (why a kernel was not modelled, else empty).
    space : SearchSpace
        The search space (with the overrides applied).
    notes : list of str
        How the kernels were grouped and fitted (batched, one by one, in parallel or not).
    """

    models: dict[str, Model]
    summary: pd.DataFrame
    space: SearchSpace
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per kernel: its formula and fit error (the ranking metric), or why it has no model."""
        metric = self.space.fit.metric
        width = min(max((len(k) for k in self.summary["kernel"]), default=0), 48)
        out = []
        for row in self.summary.itertuples(index=False):
            label = f"{row.kernel:<{width}}"
            if row.note:
                out.append(f"{label}  no model: {row.note}")
            else:
                out.append(f"{label}  {metric} {getattr(row, metric):<9.3g} T = {row.formula}")
        return out


# -- input -----------------------------------------------------------------------------------------
def load_kernels(data: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, str, int]:
    """The table of kernels in ``data``: an Extra-P text file, a CSV file, or a DataFrame.

    Returns the frame, its source name and the line offset of its first row (for messages).
    """
    if isinstance(data, pd.DataFrame):
        return data, data.attrs.get("source", "<DataFrame>"), 0
    from automodel.extrap_input import is_extrap_text, read_extrap_text
    path = Path(data)
    if path.is_file() and is_extrap_text(path):
        frame = read_extrap_text(path)
        return frame, str(path), 0
    return data_mod._read_csv(path), str(path), 2


def _columns(frame: pd.DataFrame, kernel: str, time: str, params: Iterable[str] | None, source: str
             ) -> list[str]:
    for col, role in ((kernel, "kernel"), (time, "time")):
        if col not in frame.columns:
            raise DataError(f"{source}, column '{col}': missing (the {role} column); the table has "
                            f"{', '.join(map(str, frame.columns))}")
    if params is None:
        params = frame.attrs.get("params") or [c for c in frame.columns if c not in (kernel, time)]
    params = [str(q) for q in params]
    for q in params:
        if q not in frame.columns:
            raise DataError(f"{source}, column '{q}': no such parameter column; the table has "
                            f"{', '.join(map(str, frame.columns))}")
        if not q.isidentifier() or q in (kernel, time):
            raise DataError(f"{source}, column '{q}': a parameter needs a name that is an identifier and "
                            f"not the kernel or time column")
    if not params:
        raise DataError(f"{source}: no parameter column besides '{kernel}' and '{time}'")
    return [q for q in ROLE_NAMES if q in params] + [q for q in params if q not in ROLE_NAMES]


@dataclass(frozen=True)
class _Group:
    """Kernels measured at the same points: points (m, d) in sorted order, values (m, K)."""

    params: tuple[str, ...]
    points: np.ndarray
    names: tuple[str, ...]
    index: np.ndarray  # position of each kernel in the input order
    values: np.ndarray
    spread: np.ndarray  # (m, K) standard deviation of the repetitions (0 for one run)
    count: np.ndarray  # (m, K) repetitions
    aggregate: str = "median"


def _groups(frame: pd.DataFrame, kernel: str, time: str, params: list[str], source: str, offset: int,
            aggregate: str) -> tuple[list[str], list[_Group], dict[int, tuple[int, str]]]:
    """Aggregate repetitions per (kernel, point); group kernels by their point set.

    Returns every kernel name (input order), the groups, and kernel index -> (points, note) for the
    kernels that cannot be modelled.
    """
    if aggregate not in data_mod.AGGREGATES:
        raise DataError(f"aggregate must be one of {data_mod.AGGREGATES}, got {aggregate!r}")
    P = np.column_stack([data_mod._numeric(frame, q, q, source, offset) for q in params])
    y = data_mod._numeric(frame, time, "value", source, offset)
    codes, names = pd.factorize(frame[kernel], use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise DataError(f"{source}, row {i + offset}, column '{kernel}': expected a kernel name, got an empty cell")
    points, pcode = np.unique(P, axis=0, return_inverse=True)
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
    bad: dict[int, tuple[int, str]] = {}
    nonpos = np.flatnonzero(np.bincount(kern, weights=(y <= 0), minlength=len(names)))
    for j in nonpos:
        i = starts[j] + int(np.argmax(y[starts[j]:starts[j + 1]] <= 0))
        at = ", ".join(f"{q} = {v:g}" for q, v in zip(params, points[pt[i]]))
        bad[int(j)] = (int(counts[j]), f"value {y[i]:g} at {at} is not positive (times must be > 0)")
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
    groups = []
    for members in by_points.values():
        idx = np.asarray(members)
        m = int(counts[idx[0]])
        rows = starts[idx][:, None] + np.arange(m)  # (K, m)
        groups.append(_Group(tuple(params), points[pt[rows[0]]], tuple(str(names[j]) for j in idx), idx,
                             y[rows].T.copy(), spread[rows].T.copy(), count[rows].T.copy(), aggregate))
    return [str(n) for n in names], groups, bad


# -- fitting one group -----------------------------------------------------------------------------
def _dataset(g: _Group, source: str) -> data_mod.Dataset:
    frame = pd.DataFrame({q: g.points[:, j] for j, q in enumerate(g.params)})
    frame["time"] = g.values[:, 0]
    return data_mod.load(frame, params=[q for q in g.params if q not in ROLE_NAMES], source=source,
                         aggregate=g.aggregate)


def _holdout_rows(ds: data_mod.Dataset) -> np.ndarray | None:
    """The staged search's forward-extrapolation rows on all runs: the top level of ``n`` and of ``p``
    (each with at least 3 levels), when at least 3 rows are left."""
    hold = np.zeros(ds.n_points, bool)
    for q in ("n", "p"):
        if q in ds.params:
            v = ds.frame[q].to_numpy()
            if len(np.unique(v)) >= 3:
                hold |= v == v.max()
    return hold if hold.any() and ds.n_points - int(hold.sum()) >= 3 else None


def _metrics(Y: np.ndarray, pred: np.ndarray, k: int, wrss: np.ndarray, lev: np.ndarray | None = None,
             hold: np.ndarray | None = None, need: tuple[str, ...] = metrics_mod.METRICS) -> dict[str, np.ndarray]:
    """:func:`automodel.fit.metrics.compute` for columns that each have their own target ``Y[:, b]``.

    ``compute`` takes one target shared by all columns. Every metric but ``s`` is relative: dividing a
    column's target and predictions by the target leaves it unchanged, so one call on ``pred / Y``
    against a target of ones gives them all. ``s`` is absolute: a call against a target of zeros with
    predictions ``pred - Y`` sees exactly the residuals ``Y - pred`` (its relative metrics are
    meaningless there and dropped).
    """
    out = {}
    m = Y.shape[0]
    if set(need) - {"s"}:
        out.update(metrics_mod.compute(np.ones(m), pred / Y, k, wrss, lev, hold))
    if "s" in need:
        with np.errstate(divide="ignore", invalid="ignore"):
            out["s"] = metrics_mod.compute(np.zeros(m), pred - Y, k, wrss)["s"]
    return out


@dataclass
class _Scored:
    metrics: dict[str, np.ndarray]  # (K, n)
    coef: np.ndarray  # (K, n, k) term coefficients


def _score(values: np.ndarray, Y: np.ndarray, W: np.ndarray, combos: np.ndarray, nonnegative: bool,
           hold: np.ndarray | None, need: tuple[str, ...], kern_only: np.ndarray | None = None) -> _Scored:
    """Fit and score candidates ``combos`` (n, k) on every kernel, or one candidate per kernel when
    ``kern_only`` is given (``combos[j]`` for kernel ``j``); as :func:`automodel.search.evaluate.score`."""
    des = multi.designs(values, Y, W)
    K, (n, k) = Y.shape[1], combos.shape
    if kern_only is None:
        cand, kern = multi.pairs(n, K)
        cols = combos[cand]
    else:
        kern, cols, n = kern_only, combos, 1
    coef, wrss = multi.solve(des, kern, cols, nonnegative)
    coef = coef / des.scale[kern[:, None], cols]  # coefficients of the terms
    pred = _predict(values, cols, coef)
    lev = multi.leverages(des, kern, cols) if {"loo", "forward"} & set(need) else None
    hold_err = None
    if {"holdout", "forward"} & set(need) and hold is not None:
        dh = multi.designs(values[~hold], Y[~hold], W[~hold])
        c_h, _ = multi.solve(dh, kern, cols, nonnegative)
        pred_h = _predict(values[hold], cols, c_h / dh.scale[kern[:, None], cols])
        left = len(Y) - int(hold.sum())
        hold_err = (1.0 if left > k else np.inf) * (pred_h / Y[hold][:, kern] - 1.0)
    mets = _metrics(Y[:, kern], pred, k, wrss, lev, hold_err, need)
    return _Scored({name: v.reshape(K, n) for name, v in mets.items()}, coef.reshape(K, n, k))


def _predict(values: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Predictions (m, B) of every pair: term values ``values`` (m, T), columns (B, k), coefficients (B, k)."""
    pred = np.zeros((len(cols), values.shape[0]))
    rows = values.T
    for j in range(cols.shape[1]):
        pred += rows.take(cols[:, j], axis=0) * coef[:, j, None]
    return pred.T


def _best_batched(values: np.ndarray, Y: np.ndarray, term_idx: list[list[int]], sp: SearchSpace,
                  hold: np.ndarray | None, noise: tuple[np.ndarray, np.ndarray]
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
    for k in np.unique(widths):
        members = np.flatnonzero(widths == k)
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = usable[combos].all(axis=1)
        members, combos = members[ok], combos[ok]
        valid[members] = True
        step = max(1, _CHUNK_PAIRS // K)
        for lo in range(0, len(members), step):
            sc = _score(values, Y, W, combos[lo:lo + step], opt.nonnegative, hold, (opt.metric,))
            score[:, members[lo:lo + step]] = sc.metrics[opt.metric]
            n_terms[:, members[lo:lo + step]] = np.maximum((sc.coef != 0.0).sum(axis=2), 1)
    score = np.where(np.isfinite(score) & valid, score, np.inf)
    best = _choose(score, n_terms, valid, len(Y), sp, noise)
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


def _choose(score: np.ndarray, n_terms: np.ndarray, valid: np.ndarray, n_points: int, sp: SearchSpace,
            noise: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Each kernel's candidate by the space's selection rule (:func:`automodel.search.select.select`,
    the rule automodel.fit applies to its ranked candidates); the first valid one when no score is
    finite, as the staged search ranks them."""
    from automodel.search.select import select

    best = np.argmin(score, axis=1)
    finite = np.isfinite(score[np.arange(len(score)), best])
    if sp.fit.selection != "best":
        for j in np.flatnonzero(finite):
            best[j] = select(score[j], n_terms[j], n_points, sp.fit.metric, sp.fit.selection,
                             noise[0][j], noise[1][j]).index
    if valid.any():
        best[~finite] = int(np.argmax(valid))
    best[~valid[best]] = -1
    return best


def _noise(g: _Group, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Pooled standard error of each kernel's aggregated values, relative and absolute, as
    :meth:`automodel.data.Dataset.aggregate_se` computes it for one dataset: (K,) each."""
    rep = g.count > 1
    factor = np.pi / 2 if aggregate == "median" else 1.0
    var = np.where(rep, factor * g.spread ** 2 / g.count, 0.0)
    n = np.maximum(rep.sum(axis=0), 1)
    return (np.sqrt((var / g.values ** 2).sum(axis=0) / n), np.sqrt(var.sum(axis=0) / n))


def _context(ds: data_mod.Dataset, sp: SearchSpace) -> dict[str, Any]:
    from automodel.api import _context as context  # the same context automodel.fit gives its models
    return context(ds, sp)


def _model(terms: tuple[Term, ...], coefs: np.ndarray, mets: dict[str, float], ctx: dict[str, Any]) -> Model:
    """The model as automodel.fit builds it: terms NNLS set to exactly zero are left out."""
    kept = [(t, float(c)) for t, c in zip(terms, coefs[:len(terms)]) if c != 0.0] or [(terms[0], 0.0)]
    core = TermModel(tuple(t for t, _ in kept), tuple(c for _, c in kept))
    return Model(core, ctx["params"], dict(ctx["roles"]), {q: list(v) for q, v in ctx["ranges"].items()},
                 mets, ctx["space"], {**ctx["options"]})


def _row(name: str, model: Model | None, n_points: int, note: str = "", text: str | None = None) -> dict[str, Any]:
    if model is None:
        return {"kernel": name, "formula": "", "n_terms": 0, "n_points": n_points,
                **{m: np.nan for m in metrics_mod.METRICS}, "note": note}
    core = model.core
    return {"kernel": name, "formula": formula(core.terms, core.coefficients) if text is None else text,
            "n_terms": len(core.terms), "n_points": n_points, **model.metrics,
            "note": note}


def _fit_group(g: _Group, sp: SearchSpace, source: str, only: slice | None = None) -> tuple[list, str]:
    """Model the kernels of one group, or of the slice ``only`` of its kernels.

    Returns ``(done, kind)``: ``done`` lists ``(input index, Model or None, summary row)``; ``kind`` is
    ``"batched"``, ``"staged"`` (searched one by one), ``"failed"``, or ``"split"`` (a multi-stage group
    too large for one task: nothing done, run its slices instead).
    """
    from automodel.search.evaluate import TermCache
    from automodel.search.staged import staged_search

    m = len(g.points)
    try:
        ds = _dataset(g, source)
        outcome = staged_search(ds, sp, progress=False)
    except DataError as exc:
        return [(int(i), None, _row(n, None, m, str(exc))) for i, n in zip(g.index, g.names)], "failed"
    ctx = _context(ds, sp)
    out = []
    if len(outcome.reports) == 1:  # one stage: the candidates do not depend on the measured values
        terms = [s.terms for s in outcome.scores.structures]
        cache = TermCache(ds.columns(), ds.n_points)
        term_idx = [[cache.index(t) for t in ts] for ts in terms]
        best, coefs, mets = _best_batched(cache.matrix, g.values, term_idx, sp, _holdout_rows(ds),
                                          _noise(g, g.aggregate))
        texts = _formulas(terms, best, coefs)
        for j, (i, name) in enumerate(zip(g.index, g.names)):
            if best[j] < 0:
                out.append((int(i), None, _row(name, None, m, "no candidate could be fitted")))
                continue
            model = _model(terms[best[j]], coefs[j], {k: float(v[j]) for k, v in mets.items()}, ctx)
            out.append((int(i), model, _row(name, model, m, text=texts[j])))
        return out, "batched"
    if only is None and len(g.names) > _KERNELS_PER_TASK:
        return [], "split"
    noise = _noise(g, g.aggregate)
    for j in range(len(g.names))[only or slice(None)]:
        i, name, y = int(g.index[j]), g.names[j], g.values[:, j]
        try:
            res = staged_search(replace(ds, frame=ds.frame.assign(time=y), runs=ds.runs.assign(time=y)), sp,
                                progress=False)
        except DataError as exc:
            out.append((i, None, _row(name, None, m, str(exc))))
            continue
        sc, order = res.scores, res.order  # ranked, one per distinct set of nonzero terms
        n_terms = np.maximum((np.nan_to_num(sc.coefficients[order]) != 0.0).sum(axis=1), 1)
        pick = _choose(sc.metric(sp.fit.metric)[order][None], n_terms[None], np.ones(len(order), bool), m, sp,
                       (noise[0][j:j + 1], noise[1][j:j + 1]))[0]
        top = int(order[pick])
        model = _model(sc.structures[top].terms, sc.coefficients[top],
                       {k: float(v[top]) for k, v in sc.metrics.items()}, ctx)
        out.append((i, model, _row(name, model, m)))
    return out, "staged"


def _run(task: tuple[_Group, SearchSpace, str, slice | None]) -> tuple[list, str]:
    return _fit_group(*task)


def _size(task: tuple[_Group, SearchSpace, str, slice | None]) -> int:
    return len(task[0].names[task[3] or slice(None)])


# -- the public entry point ------------------------------------------------------------------------
def fit_many(data: str | Path | pd.DataFrame, *, kernel: str = "kernel", time: str = "time",
             params: Iterable[str] | None = None, space: str | Path | SearchSpace = "default",
             aggregate: str = "median", metric: str | None = None, weighting: str | None = None,
             nonnegative: bool | None = None, selection: str | None = None, jobs: int = -1,
             parallel_after: float = 2.0) -> ManyResult:
    """Model every kernel of a profile; see the module docstring for how the work is shared.

    Parameters
    ----------
    data : path or DataFrame
        An Extra-P text file (see :mod:`automodel.extrap_input`), a CSV file or a DataFrame with one
        row per run: a kernel column, parameter columns and a time (value) column.
    kernel, time : str
        The kernel and value columns.
    params : iterable of str, optional
        Parameter columns (default: ``data.attrs["params"]`` of a frame read from Extra-P text, else
        every other column). ``n``, ``p``, ``cpu``, ``bw`` take their roles; others are extra parameters.
    space, aggregate, metric, weighting, nonnegative, selection :
        As for :func:`automodel.fit`.
    jobs : int
        Worker processes at most (joblib's convention: -1 all cores, 1 none).
    parallel_after : float
        Go parallel only when the rest of the work is predicted to take longer than this (seconds),
        from the time the work done so far took per kernel.

    Returns
    -------
    ManyResult

    Raises
    ------
    DataError
        Malformed input (missing column, text in a number column, bad Extra-P text).
    """
    frame, source, offset = load_kernels(data)
    cols = _columns(frame, kernel, time, params, source)
    sp = _space(space, metric=metric, weighting=weighting, nonnegative=nonnegative, selection=selection)
    names, groups, bad = _groups(frame, kernel, time, cols, source, offset, aggregate)
    rows: dict[int, dict] = {j: _row(names[j], None, n, note) for j, (n, note) in bad.items()}
    models: dict[int, Model] = {}
    kinds: list[str] = []
    queue = [(g, sp, source, None) for g in groups]
    started, n_done, parallel = _time.perf_counter(), 0, False
    while queue:
        batch, queue = (queue, []) if parallel else (queue[:1], queue[1:])
        for task, (done, kind) in zip(batch, _parallel(batch, jobs) if parallel else map(_run, batch)):
            if kind == "split":
                g = task[0]
                queue += [(g, sp, source, slice(lo, lo + _KERNELS_PER_TASK))
                          for lo in range(0, len(g.names), _KERNELS_PER_TASK)]
                continue
            kinds.append(kind)
            n_done += len(done)
            for i, model, row in done:
                rows[i] = row
                if model is not None:
                    models[i] = model
        if queue and not parallel and _workers(jobs) > 1 and len(queue) > 1:
            rate = (_time.perf_counter() - started) / max(n_done, 1)
            parallel = rate * sum(map(_size, queue)) > parallel_after
    summary = pd.DataFrame([rows[j] for j in range(len(names))], columns=SUMMARY_COLUMNS)
    notes = [f"{len(names)} kernels in {len(groups)} group(s) of shared points: {kinds.count('batched')} "
             f"group(s) solved batched, {kinds.count('staged')} task(s) of kernels searched one by one "
             f"(multi-stage search){' in parallel' if parallel else ''}; {len(rows) - len(models)} not modelled"]
    return ManyResult({names[j]: models[j] for j in sorted(models)}, summary, sp, notes)


def _space(space: str | Path | SearchSpace, **changes: Any) -> SearchSpace:
    """The search space with the options given (not None) replaced, checked as automodel.fit checks them."""
    from automodel.search.select import SELECTIONS

    sp = space if isinstance(space, SearchSpace) else load_space(space)
    changes = {k: v for k, v in changes.items() if v is not None}
    for key, known in (("metric", metrics_mod.METRICS), ("selection", SELECTIONS)):
        if key in changes and changes[key] not in known:
            raise SpaceError(f"unknown {key} {changes[key]!r}; expected one of {', '.join(known)}")
    return replace(sp, fit=replace(sp.fit, **changes)) if changes else sp


def _workers(jobs: int) -> int:
    import os
    n = os.cpu_count() or 1
    return n if jobs < 0 else max(1, min(jobs, n))


def _parallel(tasks: list, jobs: int) -> list[tuple[list, str]]:
    from joblib import Parallel, delayed
    return Parallel(n_jobs=_workers(jobs))(delayed(_run)(t) for t in tasks)


# -- files -----------------------------------------------------------------------------------------
def save_models(models: dict[str, Model], path: str | Path) -> None:
    """Write models as one JSON file: ``{"format": "automodel-models", "version": 1, "models": {kernel:
    model}}``, each model in the form of :meth:`automodel.Model.to_dict`."""
    body = {"format": MODELS_FORMAT, "version": 1, "models": {k: m.to_dict() for k, m in models.items()}}
    Path(path).write_text(json.dumps(body, indent=1, allow_nan=False), encoding="utf-8")


def load_models(path: str | Path) -> dict[str, Model]:
    """Read a file of :func:`save_models`; every model is validated as :func:`automodel.load_model` does."""
    src = str(path)
    try:
        body = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError:
        raise ModelFileError(f"{src}: no such models file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{src}: not a valid models JSON file ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(body, dict) or body.get("format") != MODELS_FORMAT or body.get("version") != 1:
        raise ModelFileError(f"{src}: not an automodel models file (expected \"format\": \"{MODELS_FORMAT}\", "
                             "\"version\": 1)")
    models = body.get("models")
    if not isinstance(models, dict):
        raise ModelFileError(f"{src}: 'models' must map kernel names to models")
    return {str(k): Model.from_dict(d, f"{src}, kernel {k!r}") for k, d in models.items()}


# -- formulas --------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _piece(term: Term) -> str | None:
    """``to_text`` of ``1.5 * term`` without the ``1.5``, or None when sympy would not print it that way."""
    if term == ONE:
        return ""
    from automodel.export import to_text
    import sympy
    text = to_text(sympy.Float(1.5) * term.expr)
    return text[3:] if text.startswith("1.5") and text[3:4] in ("*", "/") else None


_ORDERS: dict[tuple[Term, ...], tuple[int, ...] | None] = {}


def _order(terms: tuple[Term, ...]) -> tuple[int, ...] | None:
    """The order in which sympy prints a sum of these terms (it does not depend on the coefficients);
    None when sympy merges some of them."""
    if terms not in _ORDERS:
        prime_orders([terms])
    return _ORDERS[terms]


def prime_orders(sums: Iterable[tuple[Term, ...]]) -> None:
    """Find the print order of many sums of terms with one sympy call.

    sympy orders the terms of a sum lexicographically by their exponent vectors over all the sum's
    generators; a generator that two terms both lack does not change how they compare, so the order
    of any subset is the order of the whole set restricted to it.
    """
    import sympy
    todo = [s for s in dict.fromkeys(sums) if s not in _ORDERS and len(s) > 1]
    distinct = list(dict.fromkeys(t for s in todo for t in s))
    if len(distinct) < 2:
        _ORDERS.update({s: tuple(range(len(s))) for s in todo})
        return
    probe = sympy.Add(*[sympy.Float(2 + i) * t.expr for i, t in enumerate(distinct)])
    ordered = probe.as_ordered_terms()
    rank = {distinct[int(float(a.as_coeff_Mul()[0])) - 2]: r for r, a in enumerate(ordered)}
    if len(ordered) != len(distinct) or len(rank) != len(distinct):  # sympy merged terms: one sum at a time
        if len(todo) > 1:
            for s in todo:
                prime_orders([s])
        else:
            _ORDERS[todo[0]] = None  # formula() asks sympy itself
        return
    for s in todo:
        _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: rank[s[i]]))


@lru_cache(maxsize=4096)
def _single_factor(term: Term) -> bool:
    """Whether sympy sees ``c * term`` as a product of two factors (the coefficient and one more)."""
    import sympy
    return not isinstance(term.expr, sympy.Mul)


def _number(c: float) -> str:
    """``c`` as :func:`automodel.export.to_text` prints a coefficient (4 significant digits)."""
    from mpmath.libmp import from_float, to_str
    rv = to_str(from_float(c, 17, "n"), 4, strip_zeros=True)  # sympy.Float(c, 4): 17 bits, 4 digits
    if rv.startswith(".0"):
        rv = "0." + rv[2:]
    return rv.removeprefix("+")


@dataclass(frozen=True)
class _Layout:
    """How sympy prints a sum of distinct terms with nonzero coefficients: the order of the terms, the
    text after each coefficient, and which term (if any) sympy's ``c0 - c1*x`` rule puts first."""

    order: tuple[int, ...]
    pieces: tuple[str, ...]
    constant_first: int


def _layout(terms: tuple[Term, ...]) -> _Layout | None:
    pieces = tuple(_piece(t) for t in terms)
    if not terms or None in pieces or (len(terms) == 1 and terms[0] == ONE) or len(set(terms)) < len(terms):
        return None
    order = _order(terms) if len(terms) > 1 else (0,)
    if order is None:
        return None
    first = -1
    if len(terms) == 2 and ONE in terms:
        i = terms.index(ONE)
        first = i if _single_factor(terms[1 - i]) else -1
    return _Layout(order, pieces, first)


def _render(layout: _Layout, coefficients: np.ndarray | tuple[float, ...]) -> str:
    order = layout.order
    i = layout.constant_first
    if i >= 0 and coefficients[i] > 0 > coefficients[1 - i]:  # sympy prints "c0 - c1*x" constant first
        order = (i, 1 - i)
    text = ""
    for i in order:
        c = float(coefficients[i])
        sign = ("-" if c < 0 else "") if not text else (" - " if c < 0 else " + ")
        text += sign + _number(abs(c)) + layout.pieces[i]
    return text


def formula(terms: tuple[Term, ...], coefficients: tuple[float, ...]) -> str:
    """The text formula of ``TermModel(terms, coefficients)``, equal to its ``to_text(expr)``, without
    building a sympy expression per model (the print order and each term's text are cached)."""
    nz = [(t, c) for t, c in zip(terms, coefficients) if c != 0.0]
    layout = _layout(tuple(t for t, _ in nz)) if all(math.isfinite(c) for _, c in nz) else None
    if layout is None:
        from automodel.export import to_text
        return to_text(TermModel(tuple(terms), tuple(coefficients)).expr)
    return _render(layout, tuple(c for _, c in nz))


def _formulas(terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray) -> list[str]:
    """The formula of every kernel's model (candidate ``best[j]`` with coefficients ``coefs[j]``); layouts
    are found once per distinct set of nonzero terms."""
    finite = np.isfinite(np.where(np.isnan(coefs), 0.0, coefs)).all(axis=1)
    keys = [(int(b), tuple(coefs[j, :len(terms[b])] != 0.0)) if b >= 0 else None for j, b in enumerate(best)]
    chosen = {k: tuple(t for t, keep in zip(terms[k[0]], k[1]) if keep) for k in set(keys) - {None}}
    prime_orders(chosen.values())
    layouts = {k: _layout(t) for k, t in chosen.items()}
    out = []
    for j, key in enumerate(keys):
        if key is None:
            out.append("")
            continue
        c = coefs[j, :len(key[1])]
        layout = layouts[key]
        out.append(_render(layout, c[list(key[1])]) if layout is not None and finite[j]
                   else formula(terms[key[0]], tuple(c)))
    return out
