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
  :data:`~automodel.kernels.schedule.PROBE_KERNELS` kernels. When the time taken so far predicts more
  than ``parallel_after`` seconds for the rest, the rest is cut into tasks of about equal estimated cost
  (kernels x points, from the time measured per kernel-point,
  :func:`~automodel.kernels.schedule.by_cost`), :data:`~automodel.kernels.schedule.TASKS_PER_WORKER`
  per worker, largest first, and run through joblib (loky by default, or whichever backend the caller
  activated with ``joblib.parallel_backend``; the worker count is the active backend's) or on a
  ``dask.distributed`` cluster (``scheduler=``; the worker count is the cluster's threads). Starting loky
  workers that import automodel took 2.1 s on a 2-core machine, so two workers pay off only when the
  rest would take more than about twice that serially; a cluster has started already, so with a scheduler
  any remaining work goes to it, and the cluster is connected to only then (the first kernels, or a few
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

import shlex
import time as _time
import warnings
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from automodel import data as data_mod
from automodel.data.cells import rows_of
from automodel.errors import DataError
from automodel.terminal import status
from automodel.search.workers import cluster, default_jobs, idle_workers
from automodel.search.workers import n_workers as count_workers
from automodel.kernels.groups import Group, groups, zero_model
from automodel.kernels.modelling import fit_group
from automodel.kernels.result import SUMMARY_COLUMNS, ManyResult, summary_row
from automodel.kernels.schedule import PROBE_KERNELS, Task, by_cost, cost, part
from automodel.model.core import Model
from automodel.options import DEFAULT_AGGREGATE, DEFAULT_UNIT, ROLE_NAMES
from automodel.space.config import SearchSpace

__all__ = ["ManyResult", "fit_many", "load_kernels", "by_cost", "SUMMARY_COLUMNS"]

#: the note of a kernel whose task had not finished when the work was stopped (Ctrl-C)
INTERRUPTED = "not modelled: stopped (Ctrl-C) before its task finished"
#: columns of a tidy frame (automodel.data.tidy) that describe a kernel: never parameters by default
DESCRIPTIVE = ("callpath", "metric")


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
    from automodel.data.dataset import check_pooling, column_names, time_hint

    available = [str(c) for c in frame.columns]
    for col, role in ((kernel, "kernel"), (time, "time")):
        if col not in frame.columns:  # with the option that names the column a file of regions has (region)
            text = [c for c in available if not pd.api.types.is_numeric_dtype(frame[c]) and c not in (kernel, time)]
            hint = (time_hint(available) if role == "time" else
                    f"--kernel {shlex.quote(text[0])}" if len(text) == 1 else "")
            raise DataError(f"{source}, column '{col}': missing (the {role} column); the table has "
                            f"{', '.join(available)}{f' ({hint})' if hint else ''}")
    if params is None:
        params = frame.attrs.get("params") or [q for q in ROLE_NAMES if q in frame.columns]
    params = column_names(params)
    check_pooling(frame, [kernel, *(q for q in params if q in frame.columns)], column_names(ignore), source,
                  skip=[time, *DESCRIPTIVE])
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
        unit = data_mod.data_unit(frame, source, unit, time)
        from automodel.fitting import with_options

        sp = with_options(space, metric=metric, weighting=weighting, nonnegative=nonnegative,
                          selection=selection)
        names, found, bad, floors = groups(frame, kernel, time, cols, source, offset, aggregate)
    work = _Work({j: summary_row(names[j], None, n, note) for j, (n, note) in bad.items()})
    jobs, work.n_workers = _workers(jobs, scheduler)
    with tqdm(total=sum(len(g.names) for g in found), desc="kernels", unit="kernel", disable=not progress,
              leave=False) as bar:
        interrupted = _run_tasks(work, [(g, sp, source, gid) for gid, g in enumerate(found)], bar.update, jobs,
                                 scheduler, parallel_after)
    _finish(work, names, found, floors, unit, str(frame.attrs.get("where") or ""))
    summary = pd.DataFrame([work.rows[j] for j in range(len(names))], columns=SUMMARY_COLUMNS)
    notes = [*frame.attrs.get("notes", ()), *_notes(work, len(names), len(found), scheduler, interrupted)]
    return ManyResult({names[j]: work.models[j] for j in sorted(work.models)}, summary, sp, notes, interrupted,
                      unit)


@dataclass
class _Work:
    """The work of :func:`fit_many` so far, kept as tasks finish (and when Ctrl-C stops it).

    Attributes
    ----------
    rows : dict
        Input index -> summary row (:func:`~automodel.kernels.result.summary_row`).
    models : dict
        Input index -> model, for the kernels modelled.
    kinds : dict
        Group number -> how it was fitted (``"batched"``, ``"staged"``, ``"failed"``).
    n_workers : int
        The workers the work may go to.
    parallel : bool
        The rest of the work went to the workers.
    client : dask.distributed.Client or None
        The cluster the work went to.
    """

    rows: dict[int, dict]
    models: dict[int, Model] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    n_workers: int = 1
    parallel: bool = False
    client: Any = None

    def record(self, task: Task, outcome: tuple[list, str]) -> None:
        """Keep the outcome of ``task`` (:func:`~automodel.kernels.modelling.fit_group`)."""
        done, self.kinds[task[3]] = outcome
        for i, model, row in done:
            self.rows[i] = row
            if model is not None:
                self.models[i] = model


def _run_tasks(work: _Work, todo: list[Task], advance: Callable[[int], Any], jobs: int, scheduler: Any,
               parallel_after: float) -> bool:
    """Run ``todo`` here, one task at a time, while the rest is not worth the workers; then the rest on
    the workers (a cluster, else joblib's), cut by cost (:func:`~automodel.kernels.schedule.by_cost`).
    Ctrl-C (``KeyboardInterrupt``) stops the work cleanly, keeping the tasks that had finished.

    Parameters
    ----------
    work : _Work
        Where each finished task is recorded; ``n_workers``, ``parallel`` and ``client`` are set here.
    todo : list of Task
        The tasks, one per group.
    advance : callable
        Called with the number of kernels of each finished task (the progress bar).
    jobs : int
        joblib's ``n_jobs`` (-1: all the active backend has).
    scheduler : str or dask.distributed.Client or None
        The cluster to run the rest on, as for :func:`fit_many`.
    parallel_after : float
        As for :func:`fit_many`.

    Returns
    -------
    bool
        Ctrl-C stopped the work.
    """
    try:
        _run_until_parallel(work, todo, advance, scheduler, parallel_after)
        if work.parallel:
            _run_parallel(work, todo, advance, jobs, scheduler)
    except KeyboardInterrupt:  # keep what finished
        return True
    return False


def _run_until_parallel(work: _Work, todo: list[Task], advance: Callable[[int], Any], scheduler: Any,
                        parallel_after: float) -> None:
    """Run the tasks of ``todo`` here, one at a time (removing each), until the rest is worth the
    workers (``work.parallel``); the first task of a group of more than :data:`PROBE_KERNELS` kernels
    is its first kernels, when there are workers, to measure the cost of the rest. The arguments are as
    for :func:`_run_tasks`."""
    started, cost_done = _time.perf_counter(), 0
    while todo and not work.parallel:
        task = todo.pop(0)
        if work.n_workers > 1 and task[3] not in work.kinds and len(task[0].names) > PROBE_KERNELS:
            g = task[0]  # a group's first task: its first kernels, to measure the cost of the rest
            todo.insert(0, (part(g, PROBE_KERNELS, len(g.names)), *task[1:]))
            task = (part(g, 0, PROBE_KERNELS), *task[1:])
        work.record(task, _run(task))
        advance(len(task[0].names))
        cost_done += cost(task)
        rate = (_time.perf_counter() - started) / cost_done
        work.parallel = work.n_workers > 1 and bool(todo) and (
            scheduler is not None or rate * sum(map(cost, todo)) > parallel_after)


def _run_parallel(work: _Work, todo: list[Task], advance: Callable[[int], Any], jobs: int, scheduler: Any) -> None:
    """Run the tasks of ``todo`` on the workers: the cluster of ``scheduler`` (connected to here, its
    threads the workers), else joblib's; cut by cost first (:func:`~automodel.kernels.schedule.by_cost`).
    The arguments are as for :func:`_run_tasks`."""
    with ExitStack() as stack:
        if scheduler is not None:
            work.client = stack.enter_context(cluster(scheduler))
            work.n_workers = count_workers(jobs, work.client)
        tasks = by_cost(todo, work.n_workers)
        for i, outcome in _execute(tasks, jobs if work.client is not None else work.n_workers, work.client):
            work.record(tasks[i], outcome)
            advance(len(tasks[i][0].names))


def _workers(jobs: int | None, scheduler: Any) -> tuple[int, int]:
    """joblib's ``n_jobs`` for ``jobs`` (as for :func:`fit_many`) and the workers the work may go to.

    Parameters
    ----------
    jobs : int or None
        Workers at most, as for :func:`fit_many`.
    scheduler : str or dask.distributed.Client or None
        A cluster, as for :func:`fit_many`.

    Returns
    -------
    n_jobs : int
        The count asked for, here or by an active joblib backend; -1 when none was.
    n_workers : int
        Two with a scheduler (a cluster is asked for its workers only when work goes to it); else the
        count asked for, or, unless one was, the workers this machine's load leaves idle (two on a busy
        two-core machine lost to one).
    """
    asked = default_jobs(jobs, None)  # None: no count asked for, here or by an active joblib backend
    jobs = -1 if asked is None else asked
    return jobs, (2 if scheduler is not None else count_workers(jobs, None) if asked is not None
                  else idle_workers(count_workers(jobs, None)))


def _finish(work: _Work, names: list[str], found: list[Group], floors: dict[int, tuple[int, float]],
            unit: str, where: str = "") -> None:
    """Complete the models and rows of ``work``: the unit of the values, the condition that selected
    the rows (``--where``, as :func:`automodel.fitting.model_context` records it), the counters of 0
    (:func:`automodel.kernels.groups.groups` raised them), and the note :data:`INTERRUPTED` of the kernels
    whose tasks had not finished (after Ctrl-C).

    Parameters
    ----------
    work : _Work
    names : list of str
        Every kernel, in input order.
    found : list of Group
        The groups of kernels modelled.
    floors : dict
        Input index -> (number of values of 0, the value fitted in their place).
    unit : str
        The unit of the values.
    where : str
        The condition the rows were selected by (empty: every row).
    """
    models, rows = work.models, work.rows
    recorded = {**({"unit": unit} if unit != DEFAULT_UNIT else {}), **({"where": where} if where else {})}
    if recorded:
        for model in models.values():
            model.options = {**model.options, **recorded}
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
            rows.setdefault(int(i), summary_row(names[int(i)], None, len(g.points), INTERRUPTED))


def _notes(work: _Work, n_kernels: int, n_groups: int, scheduler: Any, interrupted: bool) -> list[str]:
    """How the kernels were grouped and fitted (:attr:`ManyResult.notes`, after those of the data).

    Parameters
    ----------
    work : _Work
        The finished (or stopped) work.
    n_kernels, n_groups : int
        The kernels, and the groups of kernels modelled.
    scheduler : str or dask.distributed.Client or None
        As for :func:`fit_many`.
    interrupted : bool
        Ctrl-C stopped the work.

    Returns
    -------
    list of str
    """
    how = list(work.kinds.values())
    where = (f" in parallel ({work.n_workers} workers"
             f"{' of ' + str(scheduler) if work.client is not None else ''})")
    notes = [f"{n_kernels} kernels in {n_groups} group(s) of shared points: {how.count('batched')} "
             f"group(s) solved batched, {how.count('staged')} group(s) of kernels searched one by one "
             f"(multi-stage search, each stage scored for all kernels of a group at once)"
             f"{where if work.parallel else ''}; {len(work.rows) - len(work.models)} not modelled"]
    if interrupted:
        notes.append(f"stopped (Ctrl-C): {len(work.models)} of {n_kernels} kernels modelled, the tasks that had "
                     "finished")
    return notes


def _run(task: Task) -> tuple[list, str]:
    """Model the kernels of ``task`` (:func:`~automodel.kernels.modelling.fit_group`)."""
    return fit_group(*task[:3])


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
