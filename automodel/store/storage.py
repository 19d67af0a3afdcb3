"""The store's interface: what observe, readmit and exclude read and write, whatever keeps it.

A :class:`Storage` runs work in transactions; the work gets a :class:`Session`, the reads and writes of
one application's runs, candidates, pool state and history (optuna's ``BaseStorage`` in spirit, for the
online stage only). :mod:`automodel.store.observe` runs no SQL itself: the SQL backend
(:mod:`automodel.store.sql`, SQLite or any SQLAlchemy URL) and the in-memory one
(:mod:`automodel.store.memory`) both satisfy these protocols, and the store's conformance suite
(``tests/test_store_conformance.py``) runs on each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from automodel.online.live import LivePool, OnlineOptions
    from automodel.space.structure import Structure
    from automodel.space.terms import Term
    from automodel.store.db import Store
    from automodel.store.pool import App

__all__ = ["Session", "Storage", "open_storage"]

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

    def candidate_ids(self, app: App) -> list[int]:
        """The ids of the application's candidates, in pool order."""

    def stored_identities(self, app: App, identities: list[str]) -> set[str]:
        """Those of ``identities`` that runs of ``app`` already have."""

    def insert_runs(self, app: App, columns: Mapping[str, np.ndarray], update_no: int,
                    identities: list[str | None]) -> np.ndarray:
        """Store runs (parameter and time columns) as admitted; their ids, in order."""

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

    def runs_by_id(self, app: App, ids: list[int]) -> dict[int, Any]:
        """The runs of ``app`` among ``ids``: id -> row (``id, params, cpu, bw, time, status``)."""

    def set_run_status(self, ids: list[int], status: str, note: str) -> None:
        """Give runs a status (``readmitted``, ``excluded``) and a note."""


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
