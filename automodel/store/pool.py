"""Reading and writing one application's live pool (:class:`automodel.search.online.LivePool`) in the store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np
import pandas as pd
from sqlalchemy import Table, insert, select, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from automodel.errors import DataError, ModelFileError, StoreError
from automodel.search.online import LivePool, OnlineOptions, PoolStats
from automodel.search.score import Structure
from automodel.space.terms import Term, term_from_dict, term_values
from automodel.store import schema
from automodel.store.db import Store, now, open_store, pack, unpack

__all__ = ["App", "find_app", "require_app", "read_app", "create_app", "load_pool", "save_pool", "insert_runs",
           "stored_identities", "run_frame", "ADMITTED"]

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


def _app(row) -> App:
    opts = json.loads(row.options)
    return App(row.id, row.name, tuple(json.loads(row.params)), json.loads(row.roles),
               OnlineOptions.from_dict(opts.get("online", {})), opts.get("space", ""), row.n_updates)


def find_app(conn: Connection, name: str, lock: bool = False) -> App | None:
    """The application called ``name``, or None.

    With ``lock``, the row is locked for the rest of the transaction (``SELECT ... FOR UPDATE``; on
    SQLite the transaction already holds the database's write lock) and read after the lock is taken,
    so its update counter is the last committed one.
    """
    query = select(schema.applications).where(schema.applications.c.name == name)
    row = conn.execute(query.with_for_update() if lock else query).first()
    return None if row is None else _app(row)


def require_app(conn: Connection, name: str, store: str, lock: bool = False) -> App:
    """:func:`find_app`; a missing application is a :class:`StoreError` naming the ones there are."""
    app = find_app(conn, name, lock)
    if app is None:
        names = [r.name for r in conn.execute(select(schema.applications.c.name))]
        raise StoreError(f"{store}: no application {name!r}; the store has "
                         f"{', '.join(names) if names else 'none (run automodel observe first)'}")
    return app


def read_app(store: str | Path | Store, name: str, work: Callable[[Connection, App], T]) -> T:
    """``work(conn, app)`` in one read transaction of an existing store, ``app`` the application
    called ``name`` (:func:`require_app`)."""
    st = open_store(store, create=False)
    return st.transaction(lambda conn: work(conn, require_app(conn, name, st.target)), write=False)


def create_app(conn: Connection, name: str, params: tuple[str, ...], roles: dict[str, str],
               options: OnlineOptions, space: str, terms: list[Term], structures: list[Structure]) -> App | None:
    """Insert the application (locked), its term pool and its candidates (all live); None when another
    transaction created an application of that name first."""
    app_id = _insert_new(conn, schema.applications, name=name, params=json.dumps(list(params)),
                         roles=json.dumps(roles), options=json.dumps({"online": options.to_dict(), "space": space}),
                         created_at=now(), n_updates=0)
    if app_id is None:
        return None
    pos = {t: i for i, t in enumerate(terms)}
    conn.execute(insert(schema.terms), [{"app_id": app_id, "idx": i, "term": json.dumps(t.to_dict())}
                                        for i, t in enumerate(terms)])
    conn.execute(insert(schema.candidates), [{
        "app_id": app_id, "idx": i, "status": "live", "created_update": 0,
        "structure": json.dumps({part: [t.to_dict() for t in getattr(s, part)] for part in ("comp", "comm", "extra")}),
        "term_index": json.dumps([pos[t] for t in s.terms])} for i, s in enumerate(structures)])
    return App(app_id, name, params, roles, options, space, 0)


def _insert_new(conn: Connection, table: Table, **values) -> int | None:
    """Insert a row unless it would repeat a unique key; the new row's id, or None.

    On PostgreSQL ``INSERT ... ON CONFLICT DO NOTHING``: an insert of a key another transaction is
    inserting waits for that one, then does nothing. SQLite holds the database's write lock already,
    so a plain insert cannot collide (and needs no RETURNING, which SQLite < 3.35 lacks).
    """
    if conn.dialect.name == "postgresql":
        return conn.execute(postgresql.insert(table).values(**values).on_conflict_do_nothing()
                            .returning(table.c.id)).scalar()
    return conn.execute(insert(table).values(**values)).inserted_primary_key[0]


def insert_runs(conn: Connection, app: App, frame: pd.DataFrame, update_no: int,
                identities: list[str | None]) -> np.ndarray:
    """Insert runs (canonical columns) as admitted, with their identities; returns their ids in order."""
    others = [q for q in app.params if q not in ("cpu", "bw")]
    at = now()
    ids = []
    for rec, identity in zip(frame.to_dict("records"), identities):  # one INSERT per run: portable ids
        res = conn.execute(insert(schema.runs).values(
            app_id=app.id, params=json.dumps({q: float(rec[q]) for q in others}),
            cpu=float(rec["cpu"]) if "cpu" in rec else None, bw=float(rec["bw"]) if "bw" in rec else None,
            time=float(rec["time"]), observed_at=at, update_no=update_no, status="admitted", identity=identity))
        ids.append(int(res.inserted_primary_key[0]))
    return np.array(ids, dtype=np.int64)


def stored_identities(conn: Connection, app: App, identities: list[str]) -> set[str]:
    """Those of ``identities`` that runs of ``app`` already have."""
    t = schema.runs
    found: set[str] = set()
    for start in range(0, len(identities), IDENTITIES_PER_QUERY):
        chunk = identities[start:start + IDENTITIES_PER_QUERY]
        found.update(conn.execute(select(t.c.identity).where(t.c.app_id == app.id)
                                  .where(t.c.identity.in_(chunk))).scalars())
    return found


def run_frame(conn: Connection, app: App, statuses: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The application's runs in id order: id, parameters, time, observed_at, update_no, status, note."""
    t = schema.runs
    q = select(t).where(t.c.app_id == app.id).order_by(t.c.id)
    if statuses is not None:
        q = q.where(t.c.status.in_(statuses))
    rows = conn.execute(q).all()
    recs = []
    for r in rows:
        rec = {"id": r.id, **json.loads(r.params)}
        if "cpu" in app.params:
            rec["cpu"] = r.cpu
        if "bw" in app.params:
            rec["bw"] = r.bw
        rec.update(time=r.time, observed_at=r.observed_at, update_no=r.update_no, status=r.status,
                   note=r.note or "")
        recs.append(rec)
    cols = ["id", *app.params, "time", "observed_at", "update_no", "status", "note"]
    return pd.DataFrame(recs, columns=cols)


def _terms(conn: Connection, app: App) -> list[Term]:
    rows = conn.execute(select(schema.terms.c.term).where(schema.terms.c.app_id == app.id)
                        .order_by(schema.terms.c.idx)).all()
    try:
        return [term_from_dict(json.loads(r.term), frozenset(app.params), f"term {i}") for i, r in enumerate(rows)]
    except (ModelFileError, ValueError) as exc:
        raise StoreError(f"application {app.name!r}: damaged term pool ({exc})") from None


def load_pool(conn: Connection, app: App) -> tuple[LivePool, np.ndarray, np.ndarray]:
    """The live pool of ``app``, the candidate ids (aligned with the pool) and the admitted run ids."""
    terms = _terms(conn, app)
    c = schema.candidates
    rows = conn.execute(select(c.c.id, c.c.term_index, c.c.status).where(c.c.app_id == app.id)
                        .order_by(c.c.idx)).all()
    lists = [json.loads(r.term_index) for r in rows]
    K = max((len(x) for x in lists), default=0)
    index = np.full((len(lists), K), -1, dtype=np.intp)
    width = np.array([len(x) for x in lists], dtype=np.intp)
    for i, x in enumerate(lists):
        index[i, :len(x)] = x
    check_width(index, width, len(terms))
    alive = np.array([r.status == "live" for r in rows], bool)
    cand_ids = np.array([r.id for r in rows], dtype=np.int64)

    runs = run_frame(conn, app, ADMITTED)
    columns = {q: runs[q].to_numpy(float) for q in app.params}
    values = term_values(terms, columns, len(runs))
    y = runs["time"].to_numpy(float)
    srow = conn.execute(select(schema.state).where(schema.state.c.app_id == app.id)).first()
    pool = LivePool(terms, index, width, alive, PoolStats.empty(len(terms)), values, y, app.options)
    if srow is not None:
        arr = unpack(srow.arrays, f"application {app.name!r}")
        stats = PoolStats(arr["gram"], arr["moment"], float(srow.target_ss), int(srow.n_runs), arr["usable"])
        if stats.n_runs == len(y) and stats.gram.shape == (len(terms), len(terms)):
            pool.stats = stats  # the persisted statistics: a new run is a rank-one update
        if arr["coef"].shape == index.shape:
            pool.coef, pool.score = arr["coef"], arr["score"]
    if pool.stats.n_runs != len(y):  # never persisted (or inconsistent): rebuild from the runs
        pool.stats = PoolStats.from_runs(values, y, pool._weights(y))
    return pool, cand_ids, runs["id"].to_numpy(np.int64)


def save_pool(conn: Connection, app: App, pool: LivePool) -> None:
    blob = pack(gram=pool.stats.gram, moment=pool.stats.moment, usable=pool.stats.usable, coef=pool.coef,
                score=pool.score)
    values = {"n_runs": pool.stats.n_runs, "target_ss": pool.stats.target_ss, "arrays": blob}
    done = conn.execute(update(schema.state).where(schema.state.c.app_id == app.id).values(**values))
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
