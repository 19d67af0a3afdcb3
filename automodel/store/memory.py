"""An in-memory store: the store's interface (:mod:`automodel.store.storage`) kept in Python objects.

For tests and short-lived work in one process: nothing is written to disk, and a transaction that raises
leaves the store as it was (each transaction works on a copy, kept when it returns). Threads share one
:class:`MemoryStorage` safely (one transaction at a time); processes do not share it. It keeps everything
the SQL store keeps (applications, runs, candidates, pool state, history, load samples), so the readers of
:mod:`automodel.store.query` and the load samples of :mod:`automodel.store.machine_load` work on it too.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

import numpy as np

from automodel.online.live import LivePool, OnlineOptions
from automodel.space.structure import Structure
from automodel.space.terms import Term
from automodel.store.db import now
from automodel.store.pool import (ADMITTED, App, Layout, State, app_name, assemble_pool, layout_of, run_columns,
                                  state_arrays)

__all__ = ["MemoryStorage", "MemorySession"]

T = TypeVar("T")


@dataclass
class _Tables:
    """Everything a memory store holds; ids count from 1 per kind, as a database's would."""

    apps: dict[str, App] = field(default_factory=dict)
    layouts: dict[int, Layout] = field(default_factory=dict)
    #: application id -> candidate rows (id, status, pruned fields), in pool order
    candidates: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: run id -> row (id, app_id, params as JSON, cpu, bw, time, status, note, identity, update_no)
    runs: dict[int, SimpleNamespace] = field(default_factory=dict)
    states: dict[int, State] = field(default_factory=dict)
    history: dict[int, list[SimpleNamespace]] = field(default_factory=dict)
    #: load samples (host, at, cpu, bw), in the order stored
    samples: list[SimpleNamespace] = field(default_factory=list)
    next_id: dict[str, int] = field(default_factory=dict)

    def new_id(self, kind: str) -> int:
        self.next_id[kind] = self.next_id.get(kind, 0) + 1
        return self.next_id[kind]


class MemoryStorage:
    """A :class:`~automodel.store.storage.Storage` in this process's memory.

    Examples
    --------
    >>> from automodel.store.memory import MemoryStorage
    >>> MemoryStorage().target
    'memory'
    """

    def __init__(self, target: str = "memory") -> None:
        self.target = target
        self._tables = _Tables()
        self._lock = threading.Lock()

    def session(self, work: Callable[[MemorySession], T], write: bool = True) -> T:
        """``work`` on a copy of the store, kept when it returns (and ``write``), dropped when it raises."""
        with self._lock:
            tables = copy.deepcopy(self._tables) if write else self._tables
            out = work(MemorySession(tables))
            if write:
                self._tables = tables
            return out


class MemorySession:
    """The :class:`~automodel.store.storage.Session` of one transaction of a :class:`MemoryStorage`."""

    def __init__(self, tables: _Tables) -> None:
        self.t = tables

    def find_app(self, name: str, lock: bool = False) -> App | None:
        return self.t.apps.get(app_name(name))  # one transaction at a time: locked already

    def app_names(self) -> list[str]:
        return list(self.t.apps)

    def create_app(self, name: str, params: tuple[str, ...], roles: dict[str, str], options: OnlineOptions,
                   space: str, terms: list[Term], structures: list[Structure]) -> App | None:
        name = app_name(name)
        if name in self.t.apps:
            return None
        app = App(self.t.new_id("app"), name, params, roles, options, space, 0, now())
        pos = {t: i for i, t in enumerate(terms)}
        rows = [{"id": self.t.new_id("candidate"), "status": "live"} for _ in structures]
        self.t.apps[name] = app
        self.t.candidates[app.id] = rows
        self.t.layouts[app.id] = layout_of(tuple(terms), [[pos[t] for t in s.terms] for s in structures],
                                           [r["id"] for r in rows])
        self.t.history[app.id] = []
        return app

    def candidate_ids(self, app: App, status: str | None = None) -> list[int]:
        return [r["id"] for r in self.t.candidates[app.id] if status is None or r["status"] == status]

    def stored_identities(self, app: App, identities: list[str]) -> set[str]:
        wanted = set(identities)
        return {r.identity for r in self.t.runs.values() if r.app_id == app.id and r.identity in wanted}

    def insert_runs(self, app: App, columns: Mapping[str, np.ndarray], update_no: int,
                    identities: list[str | None]) -> np.ndarray:
        others = [q for q in app.params if q not in ("cpu", "bw")]
        cols = {q: np.asarray(columns[q], dtype=float).tolist() for q in (*app.params, "time")}
        at, ids = now(), []
        for i, identity in enumerate(identities):
            run_id = self.t.new_id("run")
            self.t.runs[run_id] = SimpleNamespace(
                id=run_id, app_id=app.id, params=json.dumps({q: cols[q][i] for q in others}),
                cpu=cols["cpu"][i] if "cpu" in cols else None, bw=cols["bw"][i] if "bw" in cols else None,
                time=cols["time"][i], observed_at=at, update_no=update_no, status="admitted", note=None,
                identity=identity)
            ids.append(run_id)
        return np.array(ids, dtype=np.int64)

    def fitted_runs(self, app: App, last: int | None = None) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        rows = [(r.id, r.params, r.cpu, r.bw, r.time) for r in self.t.runs.values()
                if r.app_id == app.id and r.status in ADMITTED]
        return run_columns(rows if last is None else rows[len(rows) - min(last, len(rows)):], app)

    def load_pool(self, app: App, recent: int = 0) -> tuple[LivePool, np.ndarray, np.ndarray]:
        alive = np.array([r["status"] == "live" for r in self.t.candidates[app.id]], bool)
        return assemble_pool(app, self.t.layouts[app.id], self.pool_state(app), recent,
                             lambda last: self.fitted_runs(app, last), lambda: alive)

    def pool_state(self, app: App) -> State | None:
        return copy.deepcopy(self.t.states.get(app.id))

    def save_pool(self, app: App, pool: LivePool, recent: np.ndarray | None = None) -> None:
        self.t.states[app.id] = copy.deepcopy(state_arrays(pool, recent))

    def flag_runs(self, notes: list[tuple[int, str]]) -> None:
        for run_id, why in notes:
            self.t.runs[run_id].status, self.t.runs[run_id].note = "flagged", why

    def record_update(self, app: App, pruned: list[dict[str, Any]], history: dict[str, Any]) -> None:
        by_id = {r["id"]: r for r in self.t.candidates[app.id]}
        for p in pruned:
            by_id[p["cand_id"]].update(status="pruned", pruned_update=p["update_no"], pruned_at=p["at"],
                                       pruned_reason=p["reason"], pruned_score=p["score"])
        self.t.history[app.id].append(SimpleNamespace(id=self.t.new_id("history"), app_id=app.id, **history))
        app.n_updates = history["update_no"]

    def last_history(self, app: App) -> Any:
        return max(self.t.history[app.id], key=lambda h: (h.update_no, h.id))

    def history(self, app: App) -> list[Any]:
        return sorted(self.t.history[app.id], key=lambda h: (h.update_no, h.id))

    def pruned_candidates(self, app: App) -> list[Any]:
        """By update, then score (a missing score first, as SQLite sorts NULL)."""
        rows = [SimpleNamespace(idx=i, **r) for i, r in enumerate(self.t.candidates[app.id]) if r["status"] == "pruned"]
        rows.sort(key=lambda r: (r.pruned_update, r.pruned_score is not None, r.pruned_score or 0.0))
        return [SimpleNamespace(id=r.id, pruned_update=r.pruned_update, pruned_at=r.pruned_at,
                                pruned_score=r.pruned_score, pruned_reason=r.pruned_reason, idx=r.idx) for r in rows]

    def runs(self, app: App, statuses: tuple[str, ...] | None = None) -> list[Any]:
        return [r for r in self.t.runs.values() if r.app_id == app.id and (statuses is None or r.status in statuses)]

    def runs_by_id(self, app: App, ids: list[int]) -> dict[int, Any]:
        return {i: self.t.runs[i] for i in ids if i in self.t.runs and self.t.runs[i].app_id == app.id}

    def set_run_status(self, ids: list[int], status: str, note: str) -> None:
        for i in ids:
            self.t.runs[i].status, self.t.runs[i].note = status, note

    def insert_samples(self, rows: list[dict[str, Any]]) -> None:
        self.t.samples.extend(SimpleNamespace(host=r["host"], at=r["at"], cpu=r.get("cpu"), bw=r.get("bw"))
                              for r in rows)

    def samples(self, host: str | None = None) -> list[Any]:
        return sorted((s for s in self.t.samples if host is None or s.host == host), key=lambda s: s.at)
