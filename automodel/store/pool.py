"""One application's live pool (:class:`automodel.online.live.LivePool`) as every store keeps it.

What a store reads and writes goes through its interface (:mod:`automodel.store.storage`; the SQL of
the database store is :mod:`automodel.store.sql`'s); here are the application, the pool's layout and
persisted state, and how a pool is assembled from them, on any backend.

The pool's statistics, coefficients and scores are the persisted state (a SQL store's ``state`` row),
written by every update, so an update reads no stored run but the new ones: the state also keeps the
parameters and times of the runs the anomaly rule needs (:data:`automodel.online.anomaly.ANOMALY_WINDOW`,
the fitted runs stored last), which are read from the runs (one indexed query) only when the state does
not hold them; the statistics are rebuilt from every fitted run only when the state is missing or does
not match the runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from automodel.errors import DataError, StoreError
from automodel.names import label_problem, normal_label, printable
from automodel.options import weights
from automodel.online.live import LazyValues, LivePool, OnlineOptions, PoolStats
from automodel.space.terms import Term, TermPlan
from automodel.store.schema import stored_floats, stored_json_rows

__all__ = ["App", "app_name", "State", "state_arrays", "assemble_pool", "layout_of",
           "missing_app", "window_rows", "run_columns", "Layout", "ADMITTED", "check_params",
           "check_width"]

#: run statuses whose runs are fitted
ADMITTED = ("admitted", "readmitted")


@dataclass
class App:
    """An application row."""

    id: int
    name: str
    params: tuple[str, ...]
    roles: dict[str, str]
    options: OnlineOptions
    space: str
    n_updates: int
    created_at: float


def app_name(name: object) -> str:
    """``name`` as the store keys an application: :func:`~automodel.names.normal_label` (NFKC, no white
    space around it), a printable label of 1 to 200 characters (:func:`~automodel.names.label_problem`);
    else a one-line :class:`DataError`."""
    problem = label_problem(name)
    key = normal_label(name) if problem is None else ""
    problem = problem or label_problem(key)
    if problem is not None:
        raise DataError(f"application name {printable(repr(name))[:80]}: {problem}")
    return key


def missing_app(store: str, name: str, names: list[str]) -> str:
    """The message of an application ``name`` the store does not have (it has ``names``)."""
    return (f"{store}: no application {name!r}; the store has "
            f"{', '.join(names) if names else 'none (run automodel observe first)'}")


class Layout(NamedTuple):
    """What never changes in an application's pool once it is created: the terms, each candidate's
    term indices (read-only) and width, and the candidate ids, in candidate order; the terms prepared
    for evaluation."""

    terms: tuple[Term, ...]
    index: np.ndarray
    width: np.ndarray
    cand_ids: np.ndarray
    plan: TermPlan


def layout_of(terms: tuple[Term, ...], lists: list[list[int]], cand_ids: list[int]) -> Layout:
    """The :class:`Layout` of the pool of ``terms`` whose candidates (ids ``cand_ids``) use the terms
    ``lists`` (indices into ``terms``), on any store."""
    index = np.full((len(lists), max((len(x) for x in lists), default=0)), -1, dtype=np.intp)
    width = np.array([len(x) for x in lists], dtype=np.intp)
    for i, x in enumerate(lists):
        index[i, :len(x)] = x
    check_width(index, width, len(terms))
    ids = np.array(cand_ids, dtype=np.int64)
    for a in (index, width, ids):
        a.flags.writeable = False
    return Layout(terms, index, width, ids, TermPlan(terms))


def run_columns(rows: list, app: App) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Ids, parameter columns and times of run rows (``id, params, cpu, bw, time`` of the runs table)."""
    ids, params, cpu, bw, times = zip(*rows) if rows else ((),) * 5
    others = stored_json_rows(params, ids, "runs", "params")
    loads = {"cpu": cpu, "bw": bw}
    columns = {q: np.array(loads[q], dtype=float) if q in loads else stored_floats(others, ids, q) for q in app.params}
    return np.array(ids, dtype=np.int64), columns, np.array(times, dtype=float)


class State(NamedTuple):
    """An application's persisted pool state: its arrays (:func:`state_arrays`) and two numbers."""

    arrays: dict[str, np.ndarray]
    target_ss: float
    n_runs: int


def state_arrays(pool: LivePool, recent: np.ndarray | None = None) -> State:
    """What a store keeps of ``pool`` after an update: its statistics, fit and live candidates; with
    ``recent``, the recent runs' rows (:func:`window_rows`: the fitted runs stored last)."""
    window = {} if recent is None else {"window": recent}
    arrays = dict(gram=pool.stats.gram, moment=pool.stats.moment, usable=pool.stats.usable, coef=pool.coef,
                  score=pool.score, alive=pool.alive, **window)
    return State(arrays, pool.stats.target_ss, pool.stats.n_runs)


def assemble_pool(app: App, st: Layout, state: State | None, recent: int,
                  fitted: Callable[[int | None], tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]],
                  alive: Callable[[], np.ndarray]) -> tuple[LivePool, np.ndarray, np.ndarray]:
    """The live pool of ``app`` from its layout and persisted ``state`` (None: never written), as
    :meth:`~automodel.store.storage.Session.load_pool` returns it, on any store: ``fitted(last)`` reads
    the fitted runs (the ``last`` stored last; None: all), ``alive()`` which candidates are live, each
    only when the state lacks it."""
    n_terms = len(st.terms)
    arr = {} if state is None else state.arrays
    stats = None if state is None else PoolStats(arr["gram"], arr["moment"], state.target_ss, state.n_runs,
                                                 arr["usable"])
    if stats is not None and stats.gram.shape != (n_terms, n_terms):
        stats = None
    rows = arr.get("window")
    need = min(recent, stats.n_runs) if stats is not None else -1
    if rows is not None and rows.ndim == 2 and rows.shape[1] == len(app.params) + 1 and len(rows) >= need >= 0:
        rows = rows[len(rows) - need:]
        columns = {q: np.ascontiguousarray(rows[:, k]) for k, q in enumerate(app.params)}
        y = np.ascontiguousarray(rows[:, -1])
    elif recent:
        _, columns, y = fitted(recent)
        rows = window_rows(columns, y, app)
    else:  # a reader: no recent runs
        columns, y = {q: np.zeros(0) for q in app.params}, np.zeros(0)
        rows = window_rows(columns, y, app)
    live = arr["alive"] if arr.get("alive", np.zeros(0)).shape == st.width.shape else alive()
    # the recent runs' pool values are computed a column at a time, when the anomaly rule reads them
    values = LazyValues(lambda cols: st.plan.values(columns, len(y), cols), len(y), n_terms)
    pool = LivePool(list(st.terms), st.index, st.width, live, PoolStats.empty(n_terms), values, y, app.options,
                    plan=st.plan)
    if arr and arr["coef"].shape == st.index.shape:
        pool.coef, pool.score = arr["coef"], arr["score"]
    if stats is not None and (stats.n_runs == len(y) if len(y) < recent else stats.n_runs >= len(y)):
        pool.stats = stats  # the persisted statistics: a new run is a rank-one update
    else:  # never persisted (or inconsistent): rebuild from the runs
        _, every, y_all = fitted(None)
        pool.stats = PoolStats.from_runs(st.plan.values(every, len(y_all)), y_all,
                                         weights(y_all, app.options.weighting))
    return pool, st.cand_ids, rows


def window_rows(columns: dict[str, np.ndarray], y: np.ndarray, app: App) -> np.ndarray:
    """Runs as the state keeps the recent ones: (m, P + 1), the parameters in the application's order,
    then the time."""
    return np.column_stack([*(np.asarray(columns[q], float) for q in app.params), np.asarray(y, float)]) \
        if len(y) else np.zeros((0, len(app.params) + 1))


def check_params(app: App, params: tuple[str, ...], source: str) -> None:
    """New runs must carry exactly the application's parameters."""
    if tuple(params) != tuple(app.params):
        missing = [q for q in app.params if q not in params]
        extra = [q for q in params if q not in app.params]
        what = (f"missing column(s) {', '.join(repr(app.roles.get(q, q)) for q in missing)}" if missing
                else f"unexpected parameter(s) {', '.join(extra)}")
        raise DataError(f"{source}: {what}; application {app.name!r} is modelled with "
                        f"{', '.join(app.params)}")


def check_width(index: np.ndarray, width: np.ndarray, n_terms: int) -> None:
    """Raise :class:`StoreError` when candidate indices do not address the pool."""
    K = index.shape[1] if index.ndim == 2 else 0
    cols = np.arange(K)[None, :] < width[:, None]
    if ((index < 0) & cols).any() or (index >= n_terms).any():
        raise StoreError(f"candidate term indices outside the pool of {n_terms} terms")
