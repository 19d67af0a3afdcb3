"""Many kernels at once: one performance model per kernel of a profile.

A profile (an Extra-P file or CUBE set, a CSV or DataFrame with a ``kernel`` column) holds many kernels
(call path and metric) measured at the same few points. :func:`fit_many` models every kernel with the
search space and ranking metric :func:`automodel.fit` uses, but shares the work between kernels:

* kernels measured at the same points form a group; each distinct term is evaluated once per group;
* when the space's search is a single stage for these parameters (one parameter ``p``: the p-only
  P-terms of bayesian-kohashi-2022.txt, eqs. 1-6; one extra parameter; the ``pmnf`` space), its
  candidate list does not depend on the measured values, so every (candidate, kernel) pair of the
  group is solved in one batched call (:mod:`automodel.kernels.choice`) and each kernel gets the candidate
  that automodel.fit chooses among the searched ones (its ranking metric and selection rule,
  :mod:`automodel.search.select`): the same model as ``automodel.fit(..., templates=())``;
* a multi-stage search (``n`` present, several parameters) prunes per kernel between stages: every
  kernel has its own search (its candidates come from its own survivors), and the searches of a group
  run together, each stage's (candidate, kernel) pairs scored in one batched pass
  (:func:`automodel.search.engine.search_kernels`); each kernel then gets the candidate automodel.fit's
  rule chooses among its ranked ones, scored with every metric (the same model as its search alone);
* the first task of each group runs here: the group whole, or, with several workers, its first
  :data:`PROBE_KERNELS` kernels. When the time taken so far predicts more than ``parallel_after`` seconds
  for the rest, the rest is cut into tasks of about equal estimated cost (kernels x points, from the
  time measured per kernel-point), :data:`TASKS_PER_WORKER` per worker, largest first, and run through
  joblib (loky by default, or whichever backend the caller activated with
  ``joblib.parallel_backend``; the worker count is the active backend's) or on a ``dask.distributed``
  cluster (``scheduler=``; the worker count is the cluster's threads). Starting loky workers that
  import automodel took 2.1 s on a 2-core machine, so two workers pay off only when the rest would take
  more than about twice that serially; a cluster has started already, so with a scheduler any
  remaining work goes to it, and the cluster is connected to only then (the first kernels, or a few
  kernels whole, run here). Local workers are only those the machine's load leaves idle
  (:func:`automodel.search.workers.idle_workers`): on a busy machine the work stays serial.

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

import time as _time
import warnings
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from automodel.data.splits import holdout_rows
from automodel import data as data_mod
from automodel.data.cells import rows_of
from automodel.errors import DataError
from automodel.names import printable
from automodel.terminal import WIDTH, shorten, status, wrap
from automodel.solve import metrics as metrics_mod
from automodel.printing import formulas
from automodel.kernels.choice import best_per_kernel, choose
from automodel.search.choice import description_lengths, log_predictions, probe_values, term_lengths
from automodel.search.workers import cluster, default_jobs, idle_workers
from automodel.search.workers import n_workers as count_workers
from automodel.kernels.groups import Group, groups, noise, zero_model
from automodel.model import Model, TermModel
from automodel.space.config import SearchSpace
from automodel.options import DEFAULT_AGGREGATE, DEFAULT_UNIT, ROLE_NAMES
from automodel.space.terms import Term

__all__ = ["ManyResult", "fit_many", "load_kernels", "by_cost", "SUMMARY_COLUMNS"]

SUMMARY_COLUMNS = ["kernel", "formula", "n_terms", "n_points", *metrics_mod.METRICS, "note"]
#: kernels of a group searched here first, to measure the cost of the rest: enough that the batched
#: scoring's cost per kernel is measured, not its fixed cost
PROBE_KERNELS = 32
#: tasks per worker when the rest is cut by cost: more balance the workers, fewer ship less
TASKS_PER_WORKER = 4
#: the note of a kernel whose task had not finished when the work was stopped (Ctrl-C)
INTERRUPTED = "not modelled: stopped (Ctrl-C) before its task finished"
#: columns of a tidy frame (automodel.data.tidy) that describe a kernel: never parameters by default
DESCRIPTIVE = ("callpath", "metric")


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
        :mod:`automodel.solve.metrics` and a ``note`` (why a kernel was not modelled, else empty).
    space : SearchSpace
        The search space (with the overrides applied).
    notes : list of str
        How the kernels were grouped and fitted (batched, one by one, in parallel or not).
    interrupted : bool
        The work was stopped (Ctrl-C): the kernels whose tasks had finished have their models, the
        others the note :data:`INTERRUPTED`.
    """

    models: dict[str, Model]
    summary: pd.DataFrame
    space: SearchSpace
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False

    def lines(self, width: int | None = WIDTH) -> list[str]:
        """One line per kernel: its formula and fit error (the ranking metric), or why it has no model;
        within ``width`` columns (None: no limit) a kernel whose line would be wider has its name on a
        line of its own (cut in the middle when longer than ``width``) and its formula wrapped below."""
        metric = self.space.fit.metric
        names = [printable(k) for k in self.summary["kernel"]]
        column = min(max(map(len, names), default=0), 48)
        out = []
        for name, row in zip(names, self.summary.itertuples(index=False)):
            said = (f"no model: {row.note}" if not row.formula else
                    f"{metric} {getattr(row, metric):<9.3g} T = {row.formula}")
            if width is None or len(name) <= column and column + 2 + len(said) <= width:
                out.append(f"{name:<{column}}  {said}")
            else:
                out += [shorten(name, width), *wrap(said, width, "    ", "        ")]
            if row.formula and row.note:  # a modelled kernel's note (zeros raised) on its own line
                out += wrap(f"({row.note})", width, "    ", "     ")
        return out

    def __repr__(self) -> str:
        n_models = len(self.models)
        return (f"<ManyResult: {n_models} of {len(self.summary)} kernels modelled"
                f"{', interrupted' if self.interrupted else ''}; .summary, .models, .lines()>")

    def _repr_html_(self) -> str:
        """The summary table (kernel, formula, the ranking metric, note) for a notebook."""
        metric = self.space.fit.metric
        columns = [c for c in ("kernel", "formula", "n_terms", "n_points", metric, "note") if c in self.summary]
        return (f"<p>{len(self.models)} of {len(self.summary)} kernels modelled</p>"
                + self.summary[columns].to_html(index=False, max_rows=60, float_format=lambda v: f"{v:.4g}"))


# -- input -----------------------------------------------------------------------------------------
def load_kernels(data: str | Path | pd.DataFrame, format: str | None = None  # noqa: A002
                 ) -> tuple[pd.DataFrame, str, int | np.ndarray]:
    """The table of kernels in ``data``: a file in any format :func:`automodel.data.read` reads (of
    ``format``, or detected), or a DataFrame.

    Returns the frame, its source name and where its rows are (for messages): the line offset of the
    first row, or the line or record of every row (:func:`automodel.data.cells.rows_of`).
    """
    frame = data if isinstance(data, pd.DataFrame) else data_mod.read(Path(data), format)
    return frame, frame.attrs.get("source", "<DataFrame>"), rows_of(frame)


def _columns(frame: pd.DataFrame, kernel: str, time: str, params: Iterable[str] | None, source: str,
             ignore: Iterable[str] = ()) -> list[str]:
    """The parameter columns: ``params``, else those of a profile (``attrs["params"]``), else the
    columns named ``n``, ``p``, ``cpu``, ``bw``, as :func:`automodel.fit` takes them; any other column
    that differs between the repetitions of a kernel's point is an error, as in ``fit``
    (:func:`automodel.data.dataset.check_pooling`)."""
    for col, role in ((kernel, "kernel"), (time, "time")):
        if col not in frame.columns:
            raise DataError(f"{source}, column '{col}': missing (the {role} column); the table has "
                            f"{', '.join(map(str, frame.columns))}")
    if params is None:
        params = frame.attrs.get("params") or [q for q in ROLE_NAMES if q in frame.columns]
    params = [str(q) for q in params]
    from automodel.data.dataset import check_pooling

    check_pooling(frame, [kernel, *(q for q in params if q in frame.columns)], [time, *DESCRIPTIVE, *ignore],
                  source)
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


def _dataset(g: Group, source: str) -> data_mod.Dataset:
    frame = pd.DataFrame({q: g.points[:, j] for j, q in enumerate(g.params)})
    frame["time"] = g.values[:, 0]
    return data_mod.load(frame, params=[q for q in g.params if q not in ROLE_NAMES], source=source,
                         aggregate=g.aggregate)


def _model(terms: tuple[Term, ...], coefs: np.ndarray, mets: dict[str, float], ctx: dict[str, Any]) -> Model:
    """The model as automodel.fit builds it (:meth:`TermModel.from_fit`, :func:`automodel.fitting.model_context`)."""
    return Model(TermModel.from_fit(terms, coefs[:len(terms)]), metrics=mets, **ctx)


def _row(name: str, model: Model | None, n_points: int, note: str = "", text: str | None = None) -> dict[str, Any]:
    if model is None:
        return {"kernel": name, "formula": "", "n_terms": 0, "n_points": n_points,
                **{m: np.nan for m in metrics_mod.METRICS}, "note": note}
    core = model.core
    return {"kernel": name, "formula": model.formula if text is None else text,
            "n_terms": len(core.terms), "n_points": n_points, **model.metrics,
            "note": note}


def _fit_group(g: Group, sp: SearchSpace, source: str) -> tuple[list, str]:
    """Model the kernels of one group (or of a part of one, :func:`_part`).

    Returns ``(done, kind)``: ``done`` lists ``(input index, Model or None, summary row)``; ``kind`` is
    ``"batched"`` (one stage: every candidate fitted to every kernel at once), ``"staged"`` (a
    multi-stage search per kernel, each stage scored for all kernels at once) or ``"failed"``.
    """
    from automodel.search.score import TermCache
    from automodel.search.engine import search_kernels

    m = len(g.points)
    try:  # the first kernel's search: do the candidates depend on the measured values?
        ds = _dataset(g, source)
        first = search_kernels(ds, g.values[:, :1], sp)
    except DataError as exc:
        return [(int(i), None, _row(n, None, m, str(exc))) for i, n in zip(g.index, g.names)], "failed"
    from automodel.fitting import model_context

    ctx = model_context(ds, sp)
    if first.adaptive:
        out = _staged_group(g, ds, sp, ctx)
        _bands(out, g, ds, sp)
        return out, "staged"
    structures = first.outcome(0).scores.structures
    terms = [s.terms for s in structures]
    cache = TermCache(ds.columns(), ds.n_points)
    term_idx = [[cache.index(t) for t in ts] for ts in terms]
    best, coefs, mets = best_per_kernel(cache.matrix, g.values, term_idx, sp, holdout_rows(ds),
                                        noise(g, g.aggregate),
                                        np.array([s.signed for s in structures], bool),
                                        probe_values(cache.terms, ds.frame, ds.params),
                                        term_lengths(cache.terms), "holdout" in first.outcome(0).scores.metrics)
    out = _models(g, terms, best, coefs, mets, ctx, {})
    _bands(out, g, ds, sp)
    return out, "batched"


def _padded(columns: np.ndarray, width: int) -> np.ndarray:
    """``columns`` (N, w) cut or padded with -1 to ``width`` columns."""
    cols = np.full((len(columns), width), -1, np.intp)
    cols[:, :min(width, columns.shape[1])] = columns[:, :width]
    return cols


def _beyond(terms: list[Term], columns: np.ndarray, ids: np.ndarray, coefficients: np.ndarray,
            ds: data_mod.Dataset) -> np.ndarray:
    """(K, L, P) log predictions at the chooser's probes (:func:`automodel.search.choice.probe_values`) of every kernel's ranked
    candidates (``ids`` (K, L) into ``columns``, -1 none; ``columns`` (N, w) each candidate's terms as
    indices into ``terms``, -1 padded; ``coefficients`` (K, L, width) in that order), NaN where not
    positive."""
    cols = _padded(columns, coefficients.shape[2])
    logs = log_predictions(probe_values(terms, ds.frame, ds.params), cols[np.maximum(ids, 0)], coefficients)
    return np.where(ids[:, :, None] >= 0, logs, np.nan)


def _lengths(terms: list[Term], columns: np.ndarray, ids: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(K, L) description lengths (:func:`automodel.search.choice.description_lengths`) of every kernel's
    ranked candidates, in the layout of :func:`_beyond`."""
    cols = _padded(columns, coefficients.shape[2])
    return description_lengths(term_lengths(terms), cols[np.maximum(ids, 0)],
                               coefficients)


def _staged_group(g: Group, ds: data_mod.Dataset, sp: SearchSpace, ctx: dict[str, Any]) -> list:
    """The kernels of a group whose search is multi-stage: every kernel's own staged search, each stage
    scored for all kernels at once (:func:`automodel.search.engine.search_kernels`); each kernel's
    ranked final candidates chosen from by the rule automodel.fit applies (:func:`choose`), the chosen
    ones scored with every metric."""
    from automodel.search.engine import search_kernels

    many = search_kernels(ds, g.values, sp)
    K, L = many.order.shape
    rows = np.arange(K)[:, None]
    present = many.order >= 0
    at = np.where(present, many.order, 0)
    ids = many.ids[rows, at] if L else np.zeros((K, 0), np.intp)
    score = np.where(present, many.metrics[sp.fit.metric][rows, at], np.inf)
    n_terms = np.where(present, np.maximum((np.nan_to_num(many.coefficients[rows, at]) != 0.0).sum(axis=2), 1), 1)
    beyond = _beyond(many.terms, many.columns, np.where(present, ids, -1), many.coefficients[rows, at], ds)
    length = _lengths(many.terms, many.columns, np.where(present, ids, -1), many.coefficients[rows, at])
    held = holdout_rows(ds)
    holdout = (np.where(present, many.metrics["holdout"][rows, at], np.nan)
               if "holdout" in many.metrics and held is not None else None)
    pick = choose(score, n_terms, np.ones(L, bool), len(g.points), sp, noise(g, g.aggregate), beyond, length,
                  holdout, 0 if holdout is None else int(held.sum()))
    pick = np.where(present.any(axis=1), pick, -1)
    chosen = np.where(pick >= 0, ids[np.arange(K), np.maximum(pick, 0)], -1)
    coefs, mets = many.rescore(chosen)
    used = np.unique(chosen[chosen >= 0])  # the chosen candidates, each once
    best = np.where(chosen >= 0, np.searchsorted(used, chosen), -1)
    return _models(g, [many.structures[i].terms for i in used], best, coefs, mets, ctx, many.failed)


def _models(g: Group, terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray,
            mets: dict[str, np.ndarray], ctx: dict[str, Any], failed: dict[int, str]) -> list:
    """``(input index, Model or None, summary row)`` of every kernel of ``g``: candidate ``best[j]`` (of
    ``terms``) with coefficients ``coefs[j]`` and metrics ``mets``; -1: the note of ``failed``, else that
    no candidate could be fitted."""
    m = len(g.points)
    texts = formulas(terms, best, coefs)
    out = []
    for j, (i, name) in enumerate(zip(g.index, g.names)):
        if best[j] < 0:
            out.append((int(i), None, _row(name, None, m, failed.get(j, "no candidate could be fitted"))))
            continue
        model = _model(terms[best[j]], coefs[j], {k: float(v[j]) for k, v in mets.items()}, ctx)
        out.append((int(i), model, _row(name, model, m, text=texts[j])))
    return out


def _bands(done: list, g: Group, ds: data_mod.Dataset, sp: SearchSpace) -> None:
    """Give every fitted kernel model of ``done`` its band (:func:`automodel.calibration.kernel_intervals`,
    all kernels of the group at once)."""
    from automodel.calibration import kernel_intervals

    fitted = [(i, model) for i, model, _ in done if model is not None]
    if not fitted:
        return
    column = {int(i): j for j, i in enumerate(g.index)}
    targets = g.values[:, [column[i] for i, _ in fitted]]
    for (_, model), interval in zip(fitted, kernel_intervals([m.core for _, m in fitted], ds, sp.fit, targets)):
        model.interval = interval


#: a task: kernels of one group (all or a part), the space, the source name, and the group's number
Task = tuple[Group, SearchSpace, str, int]


def _run(task: Task) -> tuple[list, str]:
    return _fit_group(*task[:3])


def _part(g: Group, lo: int, hi: int) -> Group:
    """Kernels ``lo:hi`` of ``g`` as a group of their own (each kernel's model does not depend on the others)."""
    k = slice(lo, hi)
    return replace(g, names=g.names[k], index=g.index[k], values=g.values[:, k], spread=g.spread[:, k],
                   count=g.count[:, k])


def _cost(task: Task) -> int:
    """The estimated cost of a task: kernels x points."""
    return len(task[0].names) * len(task[0].points)


def by_cost(tasks: list[Task], n_workers: int) -> list[Task]:
    """``tasks`` cut into tasks of about equal cost (:func:`_cost`), :data:`TASKS_PER_WORKER` per worker,
    largest first (so that the last ones to start are small and the workers finish together).

    Examples
    --------
    >>> g = Group(("p",), np.ones((4, 1)), tuple("abcdefgh"), np.arange(8), np.ones((4, 8)),
    ...           np.zeros((4, 8)), np.ones((4, 8)))
    >>> [len(t[0].names) for t in by_cost([(g, None, "", 0)], 2)]
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    target = sum(map(_cost, tasks)) / (n_workers * TASKS_PER_WORKER)
    out = []
    for g, sp, source, gid in tasks:
        step = max(1, int(np.ceil(target / len(g.points))))
        out += [(_part(g, lo, lo + step), sp, source, gid) for lo in range(0, len(g.names), step)]
    return sorted(out, key=_cost, reverse=True)


# -- the public entry point ------------------------------------------------------------------------
def fit_many(data: str | Path | pd.DataFrame, *, kernel: str = "kernel", time: str = "time",
             params: Iterable[str] | None = None, space: str | Path | SearchSpace = "default",
             aggregate: str = DEFAULT_AGGREGATE, metric: str | None = None, weighting: str | None = None,
             nonnegative: bool | None = None, selection: str | None = None, jobs: int | None = None,
             parallel_after: float = 5.0, scheduler: Any = None, format: str | None = None,  # noqa: A002
             progress: bool = False, ignore: Iterable[str] = (), unit: str | None = None) -> ManyResult:
    """Model every kernel of a profile; see the module docstring for how the work is shared.

    Parameters
    ----------
    data : path or DataFrame
        A file in any format :func:`automodel.data.read` reads (Extra-P text, JSON, JSON Lines, Talpas,
        a saved experiment, a CUBE set; a CSV, TSV or Parquet table) or a DataFrame with one row per run:
        a kernel column, parameter columns and a time (value) column.
    kernel, time : str
        The kernel and value columns.
    params : iterable of str, optional
        Parameter columns (default: ``data.attrs["params"]`` of a frame read from an Extra-P format, else
        the columns named ``n``, ``p``, ``cpu``, ``bw``, as :func:`automodel.fit` takes them). ``n``,
        ``p``, ``cpu``, ``bw`` take their roles; others are extra parameters.
    ignore : iterable of str
        Undeclared columns whose values may differ between the repetitions of a kernel's point (pooled
        knowingly); any other such column is an error naming it, as in :func:`automodel.fit`.
    unit : str, optional
        The unit of the values (as for :func:`automodel.fit`; default: the data's ``unit`` column, else
        seconds), kept by every model.
    space, aggregate, metric, weighting, nonnegative, selection :
        As for :func:`automodel.fit`.
    jobs : int, optional
        Workers at most (joblib's ``n_jobs``: -1 all the active joblib backend has, 1 none; None: the
        ``n_jobs`` of the active ``joblib.parallel_backend``, else the cores the machine's load leaves
        idle, :func:`~automodel.search.workers.idle_workers`). The backend is loky (processes)
        unless the caller activated another with ``joblib.parallel_backend``.
    parallel_after : float
        Go parallel only when the rest of the work is predicted to take longer than this (seconds),
        from the time the work done so far took per kernel and point (not used with a scheduler).
    scheduler : str or dask.distributed.Client, optional
        Run the tasks on this ``dask.distributed`` cluster (a scheduler address such as
        ``tcp://host:8786``, or a client) instead of joblib, with as many tasks as it has worker
        threads. Needs the ``dask`` extra (:data:`automodel.search.workers.DASK_INSTALL`).
    format : str, optional
        The format of a file (a key of :data:`automodel.data.FORMATS`); None detects it.
    progress : bool
        A status line while the data are read and grouped, then a progress bar of the kernels
        modelled, fed by each task as it completes, on any worker (on standard error; the command
        line asks for them only when it is a terminal).

    Returns
    -------
    ManyResult
        Ctrl-C (``KeyboardInterrupt``) stops the work cleanly: the result keeps every model whose task
        had finished (``interrupted`` is set; the other kernels have the note :data:`INTERRUPTED`).

    Raises
    ------
    DataError
        Malformed input (missing column, text in a number column, bad Extra-P text); a scheduler
        without dask installed, or one that cannot be reached.
    """
    with status(f"kernels: reading {data if isinstance(data, (str, Path)) else 'the frame'}", progress) as line:
        frame, source, offset = load_kernels(data, format)
        line(f"kernels: grouping the kernels of {source}")
        cols = _columns(frame, kernel, time, params, source, ignore)
        unit = data_mod.data_unit(frame, source, unit)
        from automodel.fitting import with_options

        sp = with_options(space, metric=metric, weighting=weighting, nonnegative=nonnegative,
                          selection=selection)
        names, found, bad, floors = groups(frame, kernel, time, cols, source, offset, aggregate)
    rows: dict[int, dict] = {j: _row(names[j], None, n, note) for j, (n, note) in bad.items()}
    models: dict[int, Model] = {}
    kinds: dict[int, str] = {}  # group number -> how it was fitted

    def record(task: Task, outcome: tuple[list, str]) -> None:
        done, kinds[task[3]] = outcome
        for i, model, row in done:
            rows[i] = row
            if model is not None:
                models[i] = model

    asked = default_jobs(jobs, None)  # None: no count asked for, here or by an active joblib backend
    jobs = -1 if asked is None else asked
    bar = tqdm(total=sum(len(g.names) for g in found), desc="kernels", unit="kernel", disable=not progress,
               leave=False)
    interrupted, parallel, client = False, False, None
    # a cluster is asked for its workers only when work goes to it; here, unless a count was asked for,
    # the workers this machine's load leaves idle (two on a busy two-core machine lost to one)
    n_workers = (2 if scheduler is not None else count_workers(jobs, None) if asked is not None
                 else idle_workers(count_workers(jobs, None)))
    try:
        with ExitStack() as stack:
            todo: list[Task] = [(g, sp, source, gid) for gid, g in enumerate(found)]
            started, cost_done = _time.perf_counter(), 0
            while todo and not parallel:  # here, one task at a time, while the rest is not worth the workers
                task = todo.pop(0)
                if n_workers > 1 and task[3] not in kinds and len(task[0].names) > PROBE_KERNELS:
                    g = task[0]  # a group's first task: its first kernels, to measure the cost of the rest
                    todo.insert(0, (_part(g, PROBE_KERNELS, len(g.names)), *task[1:]))
                    task = (_part(g, 0, PROBE_KERNELS), *task[1:])
                record(task, _run(task))
                bar.update(len(task[0].names))
                cost_done += _cost(task)
                rate = (_time.perf_counter() - started) / cost_done
                parallel = n_workers > 1 and bool(todo) and (
                    scheduler is not None or rate * sum(map(_cost, todo)) > parallel_after)
            if parallel:
                if scheduler is not None:
                    client = stack.enter_context(cluster(scheduler))
                    n_workers = count_workers(jobs, client)
                tasks = by_cost(todo, n_workers)
                for i, outcome in _execute(tasks, jobs if client is not None else n_workers, client):
                    record(tasks[i], outcome)
                    bar.update(len(tasks[i][0].names))
    except KeyboardInterrupt:  # keep what finished
        interrupted = True
    finally:
        bar.close()
    if unit != DEFAULT_UNIT:
        for model in models.values():
            model.options = {**model.options, "unit": unit}
    for j, (zeros, value) in floors.items():  # counters of 0 (groups.floor_zeros)
        if j not in models:
            continue
        if value == 0.0:
            models[j] = zero_model(models[j])
            rows[j] = {**rows[j], "formula": models[j].formula, "note": "every value is 0"}
        else:
            rows[j]["note"] = f"{zeros} value(s) of 0 fitted as {value:.3g}, half the smallest measured"
    for g in found:  # after Ctrl-C: the kernels whose tasks had not finished
        for i in g.index:
            rows.setdefault(int(i), _row(names[int(i)], None, len(g.points), INTERRUPTED))
    summary = pd.DataFrame([rows[j] for j in range(len(names))], columns=SUMMARY_COLUMNS)
    how = list(kinds.values())
    where = f" in parallel ({n_workers} workers{' of ' + str(scheduler) if client is not None else ''})"
    notes = [*frame.attrs.get("notes", ()),
             f"{len(names)} kernels in {len(found)} group(s) of shared points: {how.count('batched')} "
             f"group(s) solved batched, {how.count('staged')} group(s) of kernels searched one by one "
             f"(multi-stage search, each stage scored for all kernels of a group at once)"
             f"{where if parallel else ''}; {len(rows) - len(models)} not modelled"]
    if interrupted:
        notes.append(f"stopped (Ctrl-C): {len(models)} of {len(names)} kernels modelled, the tasks that had "
                     "finished")
    return ManyResult({names[j]: models[j] for j in sorted(models)}, summary, sp, notes, interrupted)


def _numbered(i: int, task: Task) -> tuple[int, tuple[list, str]]:
    return i, _run(task)


def _execute(tasks: list[Task], jobs: int, client: Any) -> Iterator[tuple[int, tuple[list, str]]]:
    """Run ``tasks`` on the cluster of ``client``, else through joblib (the active backend, loky by
    default); yield ``(task number, outcome)`` as each completes. Closing the generator early (Ctrl-C)
    cancels the tasks not yet done."""
    if client is not None:
        from dask.distributed import as_completed

        futures = client.map(_numbered, range(len(tasks)), tasks, pure=False)
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            client.cancel(futures)
        return
    from joblib import Parallel, delayed

    with warnings.catch_warnings():  # closed early: joblib warns that it dropped the tasks, as asked
        warnings.filterwarnings("ignore", category=UserWarning, module="joblib")
        yield from Parallel(n_jobs=jobs, return_as="generator_unordered")(
            delayed(_numbered)(i, t) for i, t in enumerate(tasks))
