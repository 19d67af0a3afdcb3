"""The store's interface: what observe, the readers and the load samples read and write, whatever keeps it.

A :class:`Storage` runs work in transactions; the work gets a :class:`Session`, the reads and writes of
one application's runs, candidates, pool state and history, and the load samples (optuna's
``BaseStorage`` in spirit). :mod:`automodel.store.observe`, :mod:`automodel.store.pool`,
:mod:`automodel.store.query` and :mod:`automodel.store.machine_load` run no SQL themselves: the SQL backend
(:mod:`automodel.store.sql`, SQLite or any SQLAlchemy URL) and the in-memory one
(:mod:`automodel.store.memory`) both satisfy these protocols, and the store's conformance suite
(``tests/test_store_conformance.py``) runs on each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import pandas as pd

from automodel.errors import StoreError
from automodel.store.pool import missing_app
from automodel.store.schema import stored_floats, stored_json_rows

if TYPE_CHECKING:
    import numpy as np

    from automodel.online.live import LivePool, OnlineOptions
    from automodel.space.structure import Structure
    from automodel.space.terms import Term
    from automodel.store.db import Store
    from automodel.store.pool import App, State

__all__ = ["Session", "Storage", "open_storage", "require_app", "read_app", "run_frame"]

T = TypeVar("T")


class Session(Protocol):
    """The reads and writes of one transaction (all of them, or none, take effect)."""

    def find_app(self, name: str, lock: bool = False) -> App | None:
        """The application called ``name`` (locked against other writers with ``lock``), or None."""

    def app_names(self) -> list[str]:
        """The names of the store's applications."""

    def create_app(self, name: str, params: tuple[str, ...], roles: dict[str, str], options: OnlineOptions,
                   space: str, terms: list[Term], structures: list[Structure]) -> App | None:
        """A new application with its term pool and candidates (all live); None when another session
        created one of that name first."""

    def candidate_ids(self, app: App, status: str | None = None) -> list[int]:
        """The ids of the application's candidates (those of ``status``: ``live``, ``pruned``), in pool
        order."""

    def stored_identities(self, app: App, identities: list[str]) -> set[str]:
        """Those of ``identities`` that runs of ``app`` already have."""

    def insert_runs(self, app: App, columns: Mapping[str, np.ndarray], update_no: int,
                    identities: list[str | None]) -> np.ndarray:
        """Store runs (parameter and time columns) as admitted; their ids, in order."""

    def fitted_runs(self, app: App, last: int | None = None
                    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """Ids, parameter columns and times of the application's fitted runs (status in
        :data:`~automodel.store.pool.ADMITTED`), in id order; with ``last``, only the ``last`` stored last
        (:func:`automodel.store.pool.run_columns`)."""

    def pool_state(self, app: App) -> State | None:
        """The application's persisted pool state (:func:`automodel.store.pool.state_arrays`), or None
        when no update has written one."""

    def load_pool(self, app: App, recent: int = 0) -> tuple[LivePool, np.ndarray, np.ndarray]:
        """The live pool, the candidate ids and the rows of the ``recent`` fitted runs stored last
        (:func:`automodel.store.pool.assemble_pool`)."""

    def save_pool(self, app: App, pool: LivePool, recent: np.ndarray | None = None) -> None:
        """Keep the pool's state (:func:`automodel.store.pool.state_arrays`)."""

    def flag_runs(self, notes: list[tuple[int, str]]) -> None:
        """Set runs aside as anomalous: ``(run id, why)`` each."""

    def record_update(self, app: App, pruned: list[dict[str, Any]], history: dict[str, Any]) -> None:
        """Mark candidates pruned (``cand_id``, ``score``, ``update_no``, ``at``, ``reason`` each), add the
        history row of an update and make its number the application's count of updates."""

    def last_history(self, app: App) -> Any:
        """The history row of the application's last update (``leader_formula``, ``leader_score``,
        ``leader_id``, ``n_live``, ``n_admitted``)."""

    def history(self, app: App) -> list[Any]:
        """The history rows of the application's updates, by update number (then id)."""

    def pruned_candidates(self, app: App) -> list[Any]:
        """The application's pruned candidates (``id, pruned_update, pruned_at, pruned_score,
        pruned_reason, idx``: the index in pool order), by update, then score."""

    def runs(self, app: App, statuses: tuple[str, ...] | None = None) -> list[Any]:
        """The application's runs (those of ``statuses``) in id order: rows with ``id, params`` (JSON),
        ``cpu, bw, time, observed_at, update_no, status, note``."""

    def runs_by_id(self, app: App, ids: list[int]) -> dict[int, Any]:
        """The runs of ``app`` among ``ids``: id -> row (``id, params, cpu, bw, time, status``)."""

    def set_run_status(self, ids: list[int], status: str, note: str) -> None:
        """Give runs a status (``readmitted``, ``excluded``) and a note."""

    def insert_samples(self, rows: list[dict[str, Any]]) -> None:
        """Store load samples (``host, at, cpu, bw`` each; :mod:`automodel.store.machine_load`)."""

    def samples(self, host: str | None = None) -> list[Any]:
        """The load samples (of ``host``) by time, then in the order stored: rows with ``host, at, cpu,
        bw``."""


@runtime_checkable
class Storage(Protocol):
    """A store: where it is (``target``, for messages) and transactions over :class:`Session` objects."""

    target: str

    def session(self, work: Callable[[Session], T], write: bool = True) -> T:
        """``work(session)`` in one transaction, committed when it returns, undone when it raises."""


def open_storage(store: str | Path | Store | Storage, create: bool = True) -> Storage:
    """``store`` as a :class:`Storage`: itself, or the SQL backend of a path, URL or
    :class:`~automodel.store.db.Store`."""
    if isinstance(store, Storage):
        return store
    from automodel.store.sql import SqlStorage

    return SqlStorage(store, create)


def require_app(db: Session, name: str, store: str, lock: bool = False) -> App:
    """``db.find_app``; a missing application is a :class:`StoreError` naming the ones there are."""
    app = db.find_app(name, lock)
    if app is None:
        raise StoreError(missing_app(store, name, db.app_names()))
    return app


def read_app(store: str | Path | Store | Storage, name: str, work: Callable[[Session, App], T]) -> T:
    """``work(session, app)`` in one read transaction of an existing store, ``app`` the application
    called ``name`` (:func:`require_app`): the readers' transaction."""
    st = open_storage(store, create=False)
    return st.session(lambda db: work(db, require_app(db, name, st.target)), write=False)


def run_frame(db: Session, app: App, statuses: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The application's runs in id order: id, parameters, time, observed_at, update_no, status, note."""
    rows = db.runs(app, statuses)
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
    frame = pd.DataFrame(recs, columns=cols)
    for q in app.params:  # a damaged value names its row (stored_floats), not a TypeError downstream
        if q not in ("cpu", "bw"):
            frame[q] = stored_floats(recs, [r.id for r in rows], q)
    return frame
