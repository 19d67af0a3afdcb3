"""The SQL backend of the store's interface (:mod:`automodel.store.storage`): SQLite or any SQLAlchemy URL.

Every statement that observe, readmit, exclude, the readers (:mod:`automodel.store.query`) and the load
samples (:mod:`automodel.store.machine_load`) run is here; the tables are :mod:`automodel.store.schema`'s
(with the migrations of older stores), the connections and retries :class:`automodel.store.db.Store`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.engine import Connection

from automodel.data.cells import shown
from automodel.errors import ModelFileError, SpaceError, StoreError
from automodel.online.live import LivePool, OnlineOptions
from automodel.space.structure import Structure
from automodel.space.terms import Term, term_from_dict
from automodel.store import schema
from automodel.store.db import Store, now, open_store, pack, unpack
from automodel.store.pool import (ADMITTED, App, Layout, State, app_name, assemble_pool, layout_of, run_columns,
                                  state_arrays)
from automodel.store.schema import stored_json, stored_json_rows, stored_number

__all__ = ["SqlStorage", "SqlSession", "IDENTITIES_PER_QUERY", "LAYOUTS_KEPT"]

T = TypeVar("T")

#: identities looked up per statement (well under every database's limit of bound parameters)
IDENTITIES_PER_QUERY = 500
#: applications whose layout a process keeps
LAYOUTS_KEPT = 16
#: the layouts this process has read, by (database URL, application id, creation time): a process that
#: observes many times parses them once
_LAYOUTS: dict[tuple[str, int, float], Layout] = {}

# statements run by every observe, built once (building one costs more than running it)
_FIND = select(schema.applications).where(schema.applications.c.name == bindparam("app_name"))
_FIND_LOCKED = _FIND.with_for_update()
_STORED = select(schema.runs.c.identity).where(schema.runs.c.app_id == bindparam("run_app")) \
    .where(schema.runs.c.identity.in_(bindparam("identities", expanding=True)))
_INSERT_RUNS = insert(schema.runs).returning(schema.runs.c.id, sort_by_parameter_order=True)
_STATE = select(schema.state).where(schema.state.c.app_id == bindparam("state_app"))
_SAVE_STATE = update(schema.state).where(schema.state.c.app_id == bindparam("state_app"))
_PRUNE = update(schema.candidates).where(schema.candidates.c.id == bindparam("cand_id")).values(
    status="pruned", pruned_update=bindparam("update_no"), pruned_at=bindparam("at"),
    pruned_reason=bindparam("reason"), pruned_score=bindparam("score"))
_HISTORY = insert(schema.history)
_COUNT_UPDATE = update(schema.applications).where(schema.applications.c.id == bindparam("the_app"))
_FLAG = update(schema.runs).where(schema.runs.c.id == bindparam("run_id")).values(status="flagged",
                                                                                  note=bindparam("why"))


class SqlStorage:
    """The :class:`~automodel.store.storage.Storage` of a SQL store (a path, URL or open :class:`Store`)."""

    def __init__(self, store: str | Path | Store, create: bool = True) -> None:
        self.store = open_store(store, create=create)
        self.target = self.store.target

    def session(self, work: Callable[[SqlSession], T], write: bool = True) -> T:
        """``work`` in one transaction of the store (retried on transient failures)."""
        return self.store.transaction(lambda conn: work(SqlSession(conn)), write=write)


def _app(row) -> App:
    """The :class:`App` of an ``applications`` row."""
    opts = stored_json(row.options, "applications", row.id, "options")
    params = stored_json(row.params, "applications", row.id, "params", list)
    roles = stored_json(row.roles, "applications", row.id, "roles")
    for column, names, what in (("params", params, "a list of parameter names"),
                                ("roles", list(roles.values()), "an object of column names")):
        if not all(isinstance(q, str) for q in names):
            raise StoreError(f"table 'applications', row {row.id}, column '{column}': damaged record, expected {what}")
    online, space = opts.get("online", {}), opts.get("space", "")
    try:
        if not isinstance(online, dict) or not isinstance(space, str):
            raise SpaceError(f"expected {{\"online\": {{...}}, \"space\": NAME}}, got {shown(opts)}")
        options = OnlineOptions.from_dict(online).check("online")
    except (SpaceError, TypeError) as exc:  # TypeError: a key of the fit's options given twice
        raise StoreError(f"table 'applications', row {row.id}, column 'options': damaged record, {exc}") from None
    return App(row.id, row.name, tuple(params), roles, options, space,
               stored_number(row.n_updates, "applications", row.id, "n_updates", int), row.created_at)


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


def _read_layout(conn: Connection, app: App) -> Layout:
    """The application's :class:`Layout` from its term and candidate rows."""
    rows = conn.execute(select(schema.terms.c.term).where(schema.terms.c.app_id == app.id)
                        .order_by(schema.terms.c.idx)).scalars().all()
    terms = []
    for i, text in enumerate(rows):
        record = f"(app_id {app.id}, idx {i})"
        try:
            terms.append(term_from_dict(stored_json(text, "terms", record, "term", list), frozenset(app.params)))
        except ModelFileError as exc:
            raise StoreError(f"table 'terms', row {record}, column 'term': damaged record, {exc}") from None
    c = schema.candidates
    rows = conn.execute(select(c.c.id, c.c.term_index).where(c.c.app_id == app.id).order_by(c.c.idx)).all()
    lists = stored_json_rows([r.term_index for r in rows], [r.id for r in rows], "candidates", "term_index", list)
    for r, x in zip(rows, lists):
        if not all(type(i) is int for i in x):
            raise StoreError(f"table 'candidates', row {r.id}, column 'term_index': damaged record, expected a "
                             "list of term indices")
    return layout_of(tuple(terms), lists, [r.id for r in rows])


class SqlSession:
    """The :class:`~automodel.store.storage.Session` of one SQL transaction (``conn``)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def find_app(self, name: str, lock: bool = False) -> App | None:
        """With ``lock``, the row is locked for the rest of the transaction (``SELECT ... FOR UPDATE``;
        on SQLite the transaction already holds the database's write lock) and read after the lock is
        taken, so its update counter is the last committed one."""
        row = self.conn.execute(_FIND_LOCKED if lock else _FIND, {"app_name": app_name(name)}).first()
        return None if row is None else _app(row)

    def app_names(self) -> list[str]:
        return [r.name for r in self.conn.execute(select(schema.applications.c.name))]

    def create_app(self, name: str, params: tuple[str, ...], roles: dict[str, str], options: OnlineOptions,
                   space: str, terms: list[Term], structures: list[Structure]) -> App | None:
        """Insert the application (locked), its term pool and its candidates (all live)."""
        created_at = now()
        name = app_name(name)
        app_id = _insert_new(self.conn, schema.applications, name=name, params=json.dumps(list(params)),
                             roles=json.dumps(roles), created_at=created_at, n_updates=0,
                             options=json.dumps({"online": options.to_dict(), "space": space}))
        if app_id is None:
            return None
        pos = {t: i for i, t in enumerate(terms)}
        self.conn.execute(insert(schema.terms), [{"app_id": app_id, "idx": i, "term": json.dumps(t.to_dict())}
                                                 for i, t in enumerate(terms)])
        self.conn.execute(insert(schema.candidates), [{
            "app_id": app_id, "idx": i, "status": "live", "created_update": 0,
            "structure": json.dumps({part: [t.to_dict() for t in getattr(s, part)]
                                     for part in ("comp", "comm", "extra")}),
            "term_index": json.dumps([pos[t] for t in s.terms])} for i, s in enumerate(structures)])
        return App(app_id, name, params, roles, options, space, 0, created_at)

    def candidate_ids(self, app: App, status: str | None = None) -> list[int]:
        c = schema.candidates
        query = select(c.c.id).where(c.c.app_id == app.id)
        if status is not None:
            query = query.where(c.c.status == status)
        return [r.id for r in self.conn.execute(query.order_by(c.c.idx))]

    def stored_identities(self, app: App, identities: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(identities), IDENTITIES_PER_QUERY):
            chunk = identities[start:start + IDENTITIES_PER_QUERY]
            found.update(self.conn.execute(_STORED, {"run_app": app.id, "identities": chunk}).scalars())
        return found

    def insert_runs(self, app: App, columns: Mapping[str, np.ndarray], update_no: int,
                    identities: list[str | None]) -> np.ndarray:
        """One batched statement (``INSERT ... RETURNING`` of many rows, ids in the order of the rows)
        where the database and driver return the ids so (SQLite >= 3.35, PostgreSQL); one INSERT per run
        elsewhere."""
        others = [q for q in app.params if q not in ("cpu", "bw")]
        cols = {q: np.asarray(columns[q], dtype=float).tolist() for q in (*app.params, "time")}
        none = [None] * len(identities)
        at = now()
        rows = [{"app_id": app.id, "params": json.dumps({q: cols[q][i] for q in others}), "cpu": cpu, "bw": bw,
                 "time": time, "observed_at": at, "update_no": update_no, "status": "admitted", "identity": identity}
                for i, (cpu, bw, time, identity) in enumerate(zip(cols.get("cpu", none), cols.get("bw", none),
                                                                   cols["time"], identities))]
        if not rows:
            return np.zeros(0, dtype=np.int64)
        if self.conn.dialect.insert_executemany_returning_sort_by_parameter_order:
            ids = self.conn.execute(_INSERT_RUNS, rows).scalars().all()
        else:  # pragma: no cover - SQLite < 3.35
            ids = [self.conn.execute(insert(schema.runs), row).inserted_primary_key[0] for row in rows]
        return np.array(ids, dtype=np.int64)

    def layout(self, app: App) -> Layout:
        """The application's :class:`Layout`, read once per process."""
        key = (str(self.conn.engine.url), app.id, app.created_at)
        if key not in _LAYOUTS:
            if len(_LAYOUTS) >= LAYOUTS_KEPT:
                _LAYOUTS.pop(next(iter(_LAYOUTS)))
            _LAYOUTS[key] = _read_layout(self.conn, app)
        return _LAYOUTS[key]

    def fitted_runs(self, app: App, last: int | None = None) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """``ORDER BY id DESC LIMIT last``, on the index of ``(app_id, id)``."""
        t = schema.runs
        query = select(t.c.id, t.c.params, t.c.cpu, t.c.bw, t.c.time).where(t.c.app_id == app.id) \
            .where(t.c.status.in_(ADMITTED))
        rows = self.conn.execute(query.order_by(t.c.id) if last is None else
                                 query.order_by(t.c.id.desc()).limit(last)).all()
        return run_columns(rows if last is None else rows[::-1], app)

    def pool_state(self, app: App) -> State | None:
        srow = self.conn.execute(_STATE, {"state_app": app.id}).first()
        if srow is None:
            return None
        return State(unpack(srow.arrays, f"application {app.name!r}"),
                     stored_number(srow.target_ss, "state", app.id, "target_ss"),
                     stored_number(srow.n_runs, "state", app.id, "n_runs", int))

    def load_pool(self, app: App, recent: int = 0) -> tuple[LivePool, np.ndarray, np.ndarray]:
        """The recent runs are those the state persisted (:meth:`save_pool`), when it holds them (at
        least ``recent``, or every fitted run): no run is read. Otherwise (a state written by ``readmit``
        or ``exclude``, by an older version, or a larger window) they are read: one indexed query."""
        return assemble_pool(app, self.layout(app), self.pool_state(app), recent,
                             lambda last: self.fitted_runs(app, last), lambda: self._alive(app))

    def _alive(self, app: App) -> np.ndarray:
        """Which candidates are live, from their rows (a state written before the state kept it)."""
        c = schema.candidates
        statuses = self.conn.execute(select(c.c.status).where(c.c.app_id == app.id).order_by(c.c.idx)).scalars()
        return np.array([s == "live" for s in statuses], bool)

    def save_pool(self, app: App, pool: LivePool, recent: np.ndarray | None = None) -> None:
        state = state_arrays(pool, recent)
        values = {"n_runs": state.n_runs, "target_ss": state.target_ss, "arrays": pack(**state.arrays)}
        done = self.conn.execute(_SAVE_STATE, {"state_app": app.id, **values})
        if done.rowcount == 0:
            self.conn.execute(insert(schema.state).values(app_id=app.id, **values))

    def flag_runs(self, notes: list[tuple[int, str]]) -> None:
        if notes:  # one batched statement
            self.conn.execute(_FLAG, [{"run_id": rid, "why": why} for rid, why in notes])

    def record_update(self, app: App, pruned: list[dict[str, Any]], history: dict[str, Any]) -> None:
        if pruned:  # one batched statement
            self.conn.execute(_PRUNE, pruned)
        self.conn.execute(_HISTORY, dict(app_id=app.id, **history))
        self.conn.execute(_COUNT_UPDATE, {"the_app": app.id, "n_updates": history["update_no"]})

    def last_history(self, app: App) -> Any:
        h = schema.history  # every application has one: its creation writes update 1
        return self.conn.execute(select(h).where(h.c.app_id == app.id)
                                 .order_by(h.c.update_no.desc(), h.c.id.desc()).limit(1)).first()

    def history(self, app: App) -> list[Any]:
        h = schema.history
        return self.conn.execute(select(h).where(h.c.app_id == app.id).order_by(h.c.update_no, h.c.id)).all()

    def pruned_candidates(self, app: App) -> list[Any]:
        c = schema.candidates
        return self.conn.execute(
            select(c.c.id, c.c.pruned_update, c.c.pruned_at, c.c.pruned_score, c.c.pruned_reason, c.c.idx)
            .where(c.c.app_id == app.id).where(c.c.status == "pruned")
            .order_by(c.c.pruned_update, c.c.pruned_score)).all()

    def runs(self, app: App, statuses: tuple[str, ...] | None = None) -> list[Any]:
        t = schema.runs
        query = select(t).where(t.c.app_id == app.id).order_by(t.c.id)
        if statuses is not None:
            query = query.where(t.c.status.in_(statuses))
        return self.conn.execute(query).all()

    def runs_by_id(self, app: App, ids: list[int]) -> dict[int, Any]:
        t = schema.runs
        return {r.id: r for r in self.conn.execute(select(t.c.id, t.c.params, t.c.cpu, t.c.bw, t.c.time, t.c.status)
                                                   .where(t.c.app_id == app.id).where(t.c.id.in_(ids)))}

    def set_run_status(self, ids: list[int], status: str, note: str) -> None:
        t = schema.runs
        self.conn.execute(update(t).where(t.c.id.in_(ids)).values(status=status, note=note))

    def insert_samples(self, rows: list[dict[str, Any]]) -> None:
        self.conn.execute(insert(schema.load_samples), rows)

    def samples(self, host: str | None = None) -> list[Any]:
        t = schema.load_samples
        query = select(t.c.host, t.c.at, t.c.cpu, t.c.bw).order_by(t.c.at, t.c.id)
        if host is not None:
            query = query.where(t.c.host == host)
        return self.conn.execute(query).all()
