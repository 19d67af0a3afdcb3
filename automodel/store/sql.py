"""The SQL backend of the store's interface (:mod:`automodel.store.storage`): SQLite or any SQLAlchemy URL.

Every statement of observe, readmit and exclude is here or in :mod:`automodel.store.pool`; the tables
are :mod:`automodel.store.schema`'s, the connections and retries :class:`automodel.store.db.Store`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from automodel.online.live import LivePool, OnlineOptions
from automodel.space.structure import Structure
from automodel.space.terms import Term
from automodel.store import pool as pool_mod
from automodel.store import schema
from automodel.store.db import Store, open_store
from automodel.store.pool import App

__all__ = ["SqlStorage", "SqlSession"]

T = TypeVar("T")

# statements of every update, built once (building one costs more than running it)
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


class SqlSession:
    """The :class:`~automodel.store.storage.Session` of one SQL transaction (``conn``)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def find_app(self, name: str, lock: bool = False) -> App | None:
        return pool_mod.find_app(self.conn, name, lock)

    def app_names(self) -> list[str]:
        return pool_mod.app_names(self.conn)

    def create_app(self, name: str, params: tuple[str, ...], roles: dict[str, str], options: OnlineOptions,
                   space: str, terms: list[Term], structures: list[Structure]) -> App | None:
        return pool_mod.create_app(self.conn, name, params, roles, options, space, terms, structures)

    def candidate_ids(self, app: App) -> list[int]:
        c = schema.candidates
        return [r.id for r in self.conn.execute(select(c.c.id).where(c.c.app_id == app.id).order_by(c.c.idx))]

    def stored_identities(self, app: App, identities: list[str]) -> set[str]:
        return pool_mod.stored_identities(self.conn, app, identities)

    def insert_runs(self, app: App, columns: Mapping[str, np.ndarray], update_no: int,
                    identities: list[str | None]) -> np.ndarray:
        return pool_mod.insert_runs(self.conn, app, columns, update_no, identities)

    def load_pool(self, app: App, recent: int = 0) -> tuple[LivePool, np.ndarray, np.ndarray]:
        return pool_mod.load_recent(self.conn, app, recent)

    def save_pool(self, app: App, pool: LivePool, recent: np.ndarray | None = None) -> None:
        pool_mod.save_pool(self.conn, app, pool, recent)

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

    def runs_by_id(self, app: App, ids: list[int]) -> dict[int, Any]:
        t = schema.runs
        return {r.id: r for r in self.conn.execute(select(t.c.id, t.c.params, t.c.cpu, t.c.bw, t.c.time, t.c.status)
                                                   .where(t.c.app_id == app.id).where(t.c.id.in_(ids)))}

    def set_run_status(self, ids: list[int], status: str, note: str) -> None:
        t = schema.runs
        self.conn.execute(update(t).where(t.c.id.in_(ids)).values(status=status, note=note))
