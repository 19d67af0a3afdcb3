"""Reading and writing one application's live pool (:class:`automodel.online.live.LivePool`) in the store.

The pool's statistics, coefficients and scores are the ``state`` row's blob, written by every update, so
an update reads no stored run but the new ones: the blob also keeps the parameters and times of the runs
the anomaly rule needs (:data:`automodel.online.anomaly.ANOMALY_WINDOW`, the fitted runs stored last), which
are read from the runs (one indexed query) only when the blob does not hold them; the statistics are
rebuilt from every fitted run only when the blob is missing or does not match the runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, NamedTuple, TypeVar

import numpy as np
import pandas as pd
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.engine import Connection

from automodel.errors import DataError, ModelFileError, StoreError
from automodel.names import label_problem, normal_label, printable
from automodel.options import weights
from automodel.online.live import LazyValues, LivePool, OnlineOptions, PoolStats
from automodel.space.structure import Structure
from automodel.space.terms import Term, TermPlan, term_from_dict
from automodel.store import schema
from automodel.store.schema import stored_json, stored_json_rows
from automodel.store.db import Store, now, open_store, pack, unpack

__all__ = ["App", "app_name", "find_app", "require_app", "read_app", "create_app", "load_pool", "load_recent", "save_pool",
           "State", "state_arrays", "assemble_pool", "layout_of", "app_names", "missing_app",
           "window_rows", "insert_runs", "stored_identities", "run_frame", "fitted_runs", "run_columns", "layout",
           "Layout", "ADMITTED"]

T = TypeVar("T")

#: run statuses whose runs are fitted
ADMITTED = ("admitted", "readmitted")
#: identities looked up per statement (well under every database's limit of bound parameters)
IDENTITIES_PER_QUERY = 500


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


def _app(row) -> App:
    opts = stored_json(row.options, "applications", row.id, "options")
    return App(row.id, row.name, tuple(stored_json(row.params, "applications", row.id, "params", list)),
               stored_json(row.roles, "applications", row.id, "roles"),
               OnlineOptions.from_dict(opts.get("online", {})), opts.get("space", ""), row.n_updates, row.created_at)


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


def find_app(conn: Connection, name: str, lock: bool = False) -> App | None:
    """The application called ``name`` (:func:`app_name`), or None.

    With ``lock``, the row is locked for the rest of the transaction (``SELECT ... FOR UPDATE``; on
    SQLite the transaction already holds the database's write lock) and read after the lock is taken,
    so its update counter is the last committed one.
    """
    row = conn.execute(_FIND_LOCKED if lock else _FIND, {"app_name": app_name(name)}).first()
    return None if row is None else _app(row)


# statements run by every observe, built once (building one costs more than running it)
_FIND = select(schema.applications).where(schema.applications.c.name == bindparam("app_name"))
_FIND_LOCKED = _FIND.with_for_update()
_STORED = select(schema.runs.c.identity).where(schema.runs.c.app_id == bindparam("run_app")) \
    .where(schema.runs.c.identity.in_(bindparam("identities", expanding=True)))
_INSERT_RUNS = insert(schema.runs).returning(schema.runs.c.id, sort_by_parameter_order=True)
_STATE = select(schema.state).where(schema.state.c.app_id == bindparam("state_app"))
_SAVE_STATE = update(schema.state).where(schema.state.c.app_id == bindparam("state_app"))


def require_app(conn: Connection, name: str, store: str, lock: bool = False) -> App:
    """:func:`find_app`; a missing application is a :class:`StoreError` naming the ones there are."""
    app = find_app(conn, name, lock)
    if app is None:
        raise StoreError(missing_app(store, name, app_names(conn)))
    return app


def app_names(conn: Connection) -> list[str]:
    """The names of the store's applications."""
    return [r.name for r in conn.execute(select(schema.applications.c.name))]


def missing_app(store: str, name: str, names: list[str]) -> str:
    """The message of an application ``name`` the store does not have (it has ``names``)."""
    return (f"{store}: no application {name!r}; the store has "
            f"{', '.join(names) if names else 'none (run automodel observe first)'}")


def read_app(store: str | Path | Store, name: str, work: Callable[[Connection, App], T]) -> T:
    """``work(conn, app)`` in one read transaction of an existing store, ``app`` the application
    called ``name`` (:func:`require_app`)."""
    st = open_store(store, create=False)
    return st.transaction(lambda conn: work(conn, require_app(conn, name, st.target)), write=False)


def create_app(conn: Connection, name: str, params: tuple[str, ...], roles: dict[str, str],
               options: OnlineOptions, space: str, terms: list[Term], structures: list[Structure]) -> App | None:
    """Insert the application (locked), its term pool and its candidates (all live); None when another
    transaction created an application of that name first."""
    created_at = now()
    name = app_name(name)
    app_id = _insert_new(conn, schema.applications, name=name, params=json.dumps(list(params)),
                         roles=json.dumps(roles), options=json.dumps({"online": options.to_dict(), "space": space}),
                         created_at=created_at, n_updates=0)
    if app_id is None:
        return None
    pos = {t: i for i, t in enumerate(terms)}
    conn.execute(insert(schema.terms), [{"app_id": app_id, "idx": i, "term": json.dumps(t.to_dict())}
                                        for i, t in enumerate(terms)])
    conn.execute(insert(schema.candidates), [{
        "app_id": app_id, "idx": i, "status": "live", "created_update": 0,
        "structure": json.dumps({part: [t.to_dict() for t in getattr(s, part)] for part in ("comp", "comm", "extra")}),
        "term_index": json.dumps([pos[t] for t in s.terms])} for i, s in enumerate(structures)])
    return App(app_id, name, params, roles, options, space, 0, created_at)


def _insert_new(conn: Connection, table: Table, **values) -> int | None:
    """Insert a row unless it would repeat a unique key; the new row's id, or None.

    On PostgreSQL ``INSERT ... ON CONFLICT DO NOTHING``: an insert of a key another transaction is
    inserting waits for that one, then does nothing. SQLite holds the database's write lock already,
    so a plain insert cannot collide (and needs no RETURNING, which SQLite < 3.35 lacks).
    """
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql  # PostgreSQL only: SQLite stores start without it

        return conn.execute(postgresql.insert(table).values(**values).on_conflict_do_nothing()
                            .returning(table.c.id)).scalar()
    return conn.execute(insert(table).values(**values)).inserted_primary_key[0]


def insert_runs(conn: Connection, app: App, frame: pd.DataFrame | Mapping[str, np.ndarray], update_no: int,
                identities: list[str | None]) -> np.ndarray:
    """Insert runs (canonical columns of a frame, or a mapping of them) as admitted, with their
    identities (one per run); returns their ids in order.

    One batched statement (``INSERT ... RETURNING`` of many rows, ids in the order of the rows) where
    the database and driver return the ids so (SQLite >= 3.35, PostgreSQL); one INSERT per run elsewhere.
    """
    others = [q for q in app.params if q not in ("cpu", "bw")]
    cols = {q: np.asarray(frame[q], dtype=float).tolist() for q in (*app.params, "time")}
    none = [None] * len(identities)
    at = now()
    rows = [{"app_id": app.id, "params": json.dumps({q: cols[q][i] for q in others}), "cpu": cpu, "bw": bw,
             "time": time, "observed_at": at, "update_no": update_no, "status": "admitted", "identity": identity}
            for i, (cpu, bw, time, identity) in enumerate(zip(cols.get("cpu", none), cols.get("bw", none),
                                                               cols["time"], identities))]
    t = schema.runs
    if not rows:
        return np.zeros(0, dtype=np.int64)
    if conn.dialect.insert_executemany_returning_sort_by_parameter_order:
        ids = conn.execute(_INSERT_RUNS, rows).scalars().all()
    else:  # pragma: no cover - SQLite < 3.35
        ids = [conn.execute(insert(t), row).inserted_primary_key[0] for row in rows]
    return np.array(ids, dtype=np.int64)


def stored_identities(conn: Connection, app: App, identities: list[str]) -> set[str]:
    """Those of ``identities`` that runs of ``app`` already have."""
    found: set[str] = set()
    for start in range(0, len(identities), IDENTITIES_PER_QUERY):
        chunk = identities[start:start + IDENTITIES_PER_QUERY]
        found.update(conn.execute(_STORED, {"run_app": app.id, "identities": chunk}).scalars())
    return found


def run_frame(conn: Connection, app: App, statuses: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The application's runs in id order: id, parameters, time, observed_at, update_no, status, note."""
    t = schema.runs
    q = select(t).where(t.c.app_id == app.id).order_by(t.c.id)
    if statuses is not None:
        q = q.where(t.c.status.in_(statuses))
    rows = conn.execute(q).all()
    recs = []
    for r, params in zip(rows, stored_json_rows([r.params for r in rows], [r.id for r in rows], "runs", "params")):
        rec = {"id": r.id, **params}
        if "cpu" in app.params:
            rec["cpu"] = r.cpu
        if "bw" in app.params:
            rec["bw"] = r.bw
        rec.update(time=r.time, observed_at=r.observed_at, update_no=r.update_no, status=r.status,
                   note=r.note or "")
        recs.append(rec)
    cols = ["id", *app.params, "time", "observed_at", "update_no", "status", "note"]
    return pd.DataFrame(recs, columns=cols)


class Layout(NamedTuple):
    """What never changes in an application's pool once it is created: the terms, each candidate's
    term indices (read-only) and width, and the candidate ids, in candidate order; the terms prepared
    for evaluation."""

    terms: tuple[Term, ...]
    index: np.ndarray
    width: np.ndarray
    cand_ids: np.ndarray
    plan: TermPlan


#: the layouts this process has read, by (database URL, application id, creation time): a process that
#: observes many times parses them once
_LAYOUTS: dict[tuple[str, int, float], Layout] = {}
#: applications whose layout a process keeps
LAYOUTS_KEPT = 16


def layout(conn: Connection, app: App) -> Layout:
    """The application's :class:`Layout`, read once per process."""
    key = (str(conn.engine.url), app.id, app.created_at)
    if key not in _LAYOUTS:
        if len(_LAYOUTS) >= LAYOUTS_KEPT:
            _LAYOUTS.pop(next(iter(_LAYOUTS)))
        _LAYOUTS[key] = _read_layout(conn, app)
    return _LAYOUTS[key]


def _read_layout(conn: Connection, app: App) -> Layout:
    rows = conn.execute(select(schema.terms.c.term).where(schema.terms.c.app_id == app.id)
                        .order_by(schema.terms.c.idx)).scalars().all()
    try:
        terms = tuple(term_from_dict(json.loads(r), frozenset(app.params), f"term {i}") for i, r in enumerate(rows))
    except (ModelFileError, ValueError) as exc:
        raise StoreError(f"application {app.name!r}: damaged term pool ({exc})") from None
    c = schema.candidates
    rows = conn.execute(select(c.c.id, c.c.term_index).where(c.c.app_id == app.id).order_by(c.c.idx)).all()
    lists = stored_json_rows([r.term_index for r in rows], [r.id for r in rows], "candidates", "term_index", list)
    return layout_of(terms, lists, [r.id for r in rows])


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


def fitted_runs(conn: Connection, app: App, last: int | None = None
                ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Ids, parameter columns and times of the application's fitted runs, in id order; with ``last``,
    only the ``last`` stored last (``ORDER BY id DESC LIMIT last``, on the index of ``(app_id, id)``)."""
    t = schema.runs
    query = select(t.c.id, t.c.params, t.c.cpu, t.c.bw, t.c.time).where(t.c.app_id == app.id) \
        .where(t.c.status.in_(ADMITTED))
    rows = conn.execute(query.order_by(t.c.id) if last is None else
                        query.order_by(t.c.id.desc()).limit(last)).all()
    return run_columns(rows if last is None else rows[::-1], app)


def run_columns(rows: list, app: App) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Ids, parameter columns and times of run rows (``id, params, cpu, bw, time`` of the runs table)."""
    ids, params, cpu, bw, times = zip(*rows) if rows else ((),) * 5
    others = stored_json_rows(params, ids, "runs", "params")
    loads = {"cpu": cpu, "bw": bw}
    columns = {q: np.array(loads[q] if q in loads else [o[q] for o in others], dtype=float) for q in app.params}
    return np.array(ids, dtype=np.int64), columns, np.array(times, dtype=float)


def load_pool(conn: Connection, app: App, recent: int = 0) -> tuple[LivePool, np.ndarray]:
    """The live pool of ``app`` and the candidate ids (aligned with the pool).

    The pool's runs are the ``recent`` fitted runs stored last (the anomaly rule's reference, for an
    update; none for a reader). The statistics, fit and live candidates are the persisted ones; the
    statistics are rebuilt from every fitted run when they are missing or do not match the runs (their
    count, when fewer than ``recent`` runs are fitted).
    """
    pool, cand_ids, _ = load_recent(conn, app, recent)
    return pool, cand_ids


def load_recent(conn: Connection, app: App, recent: int) -> tuple[LivePool, np.ndarray, np.ndarray]:
    """:func:`load_pool`, and the recent runs' rows (:func:`window_rows`).

    The recent runs are those the state persisted (:func:`save_pool`), when it holds them (at least
    ``recent``, or every fitted run): no run is read. Otherwise (a state written by ``readmit`` or
    ``exclude``, by an older version, or a larger window) they are read: one indexed query.
    """
    srow = conn.execute(_STATE, {"state_app": app.id}).first()
    state = None if srow is None else State(unpack(srow.arrays, f"application {app.name!r}"), float(srow.target_ss),
                                            int(srow.n_runs))
    return assemble_pool(app, layout(conn, app), state, recent, lambda last: fitted_runs(conn, app, last),
                         lambda: _alive(conn, app))


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
    :func:`load_recent` returns it, on any store: ``fitted(last)`` reads the fitted runs (the ``last``
    stored last; None: all), ``alive()`` which candidates are live, each only when the state lacks it."""
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


def _alive(conn: Connection, app: App) -> np.ndarray:
    """Which candidates are live, from their rows (a state written before the state kept it)."""
    c = schema.candidates
    statuses = conn.execute(select(c.c.status).where(c.c.app_id == app.id).order_by(c.c.idx)).scalars()
    return np.array([s == "live" for s in statuses], bool)


def save_pool(conn: Connection, app: App, pool: LivePool, recent: np.ndarray | None = None) -> None:
    """Write the pool's state (:func:`state_arrays`: the ``state`` row)."""
    state = state_arrays(pool, recent)
    values = {"n_runs": state.n_runs, "target_ss": state.target_ss, "arrays": pack(**state.arrays)}
    done = conn.execute(_SAVE_STATE, {"state_app": app.id, **values})
    if done.rowcount == 0:
        conn.execute(insert(schema.state).values(app_id=app.id, **values))


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
