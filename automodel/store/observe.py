"""Writes to the store: observe new runs (the first observe runs the staged search), re-admit or
exclude runs. Each call is one transaction (see :mod:`automodel.store.db`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from automodel import data as data_mod
from automodel.errors import DataError, StoreError
from automodel.search.online import LivePool, OnlineOptions, PoolStats, Update
from automodel.search.score import Structure
from automodel.search.staged import staged_search
from automodel.space.config import SearchSpace, load_space
from automodel.space.terms import Term, power, term_values
from automodel.store import schema
from automodel.store.db import Store, now, open_store
from automodel.store.pool import (ADMITTED, App, check_params, create_app, find_app, insert_runs, load_pool,
                                   require_app, save_pool)

__all__ = ["ObserveReport", "observe", "readmit", "exclude", "search_pool", "load_variants"]


@dataclass
class ObserveReport:
    """What an observe (or readmit / exclude) changed."""

    app: str
    created: bool
    update_no: int
    run_ids: list[int]
    flagged: list[tuple[int, float]]  # (run id, relative residual under the leader)
    n_pruned: int
    n_live: int
    n_admitted: int
    leader_before: str | None
    leader_after: str | None
    leader_score: float
    cutoff: float
    notes: list[str] = field(default_factory=list)
    leader_id_before: int | None = None
    leader_id_after: int | None = None

    @property
    def leader_changed(self) -> bool:
        return self.leader_id_before != self.leader_id_after

    def lines(self) -> list[str]:
        out = [f"{self.app}: update {self.update_no}: {len(self.run_ids)} run(s) added"
               + (" (new application: staged search)" if self.created else "")
               + f", {self.n_admitted} runs fitted, {self.n_live} candidates live"]
        out += [f"  note: {n}" for n in self.notes]
        for rid, r in self.flagged:
            out.append(f"  flagged run {rid} as anomalous (relative residual {r:+.3g} under the leader)")
        out.append(f"  pruned {self.n_pruned} candidate(s)"
                   + (f" above the cutoff {self.cutoff:.4g}" if np.isfinite(self.cutoff) and self.n_pruned else ""))
        if self.leader_changed:
            out.append(f"  new leader: T = {self.leader_after}   (was: {self.leader_before or 'none'})")
        else:
            out.append(f"  leader unchanged: T = {self.leader_after}")
        out.append(f"  leader score {self.leader_score:.4g}")
        return out


def load_variants(structures: Iterable[Structure], params: Iterable[str]) -> list[Structure]:
    """Each structure plus its variants with the computation part divided (or not) by ``cpu`` and the
    communication part divided (or not) by ``bw`` (rational-polynomial-yagnik-icpp2006.txt, eq. 5):
    a load that was constant so far may change, so both forms stay alive."""
    params = set(params)

    def toggle(part: tuple[Term, ...], load: str) -> tuple[Term, ...]:
        return tuple(t * power(load, 1 if load in t.params else -1) for t in part)

    out: dict = {}
    for s in structures:
        comps = [s.comp, toggle(s.comp, "cpu")] if "cpu" in params and s.comp else [s.comp]
        comms = [s.comm, toggle(s.comm, "bw")] if "bw" in params and s.comm else [s.comm]
        for c in comps:
            for g in comms:
                v = Structure(c, g, s.extra)
                out.setdefault(v.key, v)
    return list(out.values())


def search_pool(ds: data_mod.Dataset, space: SearchSpace) -> tuple[list[Term], list[Structure], list[str]]:
    """The staged search's candidates scored on all runs (every final stage) plus their load variants."""
    outcome = staged_search(ds, space, progress=False)
    sc = outcome.scores
    found = [s for s, ok in zip(sc.structures, sc.valid) if ok]
    structures = load_variants(found, ds.params)
    terms = list(dict.fromkeys(t for s in structures for t in s.terms))
    notes = list(outcome.notes) + [f"{len(structures)} candidates live ({len({s.key for s in found})} from the "
                                   f"staged search plus load variants) over {len(terms)} distinct terms"]
    return terms, structures, notes


def _read(data: str | Path | pd.DataFrame, app: App | None, roles: dict, store: Store) -> data_mod.Dataset:
    if app is not None and not roles:  # the columns the application was first observed with
        roles = {r: app.roles.get(r) for r in ("time", "n", "p", "cpu", "bw")}
        roles.update(params=[q for q in app.params if q not in ("n", "p", "cpu", "bw")],
                     explicit=[r for r in ("time", "n", "p", "cpu", "bw") if r in app.roles])
    frame = data if isinstance(data, pd.DataFrame) else None
    if frame is None and _needs_load_fill(data, roles):
        frame = data_mod.read_csv(Path(data))
    if frame is not None and {"start", "end"} <= set(frame.columns):
        from automodel.store.machine_load import fill_run_loads
        frame = fill_run_loads(store, frame, roles, str(data) if frame is not data else "<DataFrame>")
    source = str(data) if not isinstance(data, pd.DataFrame) else "<DataFrame>"
    return data_mod.load(frame if frame is not None else data, source=source, **roles)


def _needs_load_fill(data, roles: dict) -> bool:
    header = pd.read_csv(data, nrows=0, skipinitialspace=True).columns if Path(data).is_file() else []
    return {"start", "end"} <= set(header) and not {roles.get("cpu", "cpu"), roles.get("bw", "bw")} <= set(header)


def _record(conn: Connection, app: App, pool: LivePool, cand_ids: np.ndarray, update_no: int, event: str,
            n_added: int, n_flagged: int, upd: Update | None) -> tuple[str | None, float]:
    """Mark pruned candidates, write the state and a history row, bump the update counter."""
    at = now()
    if upd is not None and len(upd.pruned):
        pct = app.options.prune_percentile
        conn.execute(update(schema.candidates).where(schema.candidates.c.id.in_([int(cand_ids[i]) for i in upd.pruned]))
                     .values(status="pruned", pruned_update=update_no, pruned_at=at,
                             pruned_reason=f"score above the {pct:g}th percentile ({upd.cutoff:.4g}) of the "
                                           f"live candidates after update {update_no}"))
        for i in upd.pruned:  # the score each had when it was deleted
            s = float(pool.score[i])
            conn.execute(update(schema.candidates).where(schema.candidates.c.id == int(cand_ids[i]))
                         .values(pruned_score=s if np.isfinite(s) else None))
    save_pool(conn, app, pool)
    lead = pool.leader
    text = pool.formula(lead) if lead >= 0 else None
    score = float(pool.score[lead]) if lead >= 0 else float("inf")
    top = [[int(cand_ids[i]), float(pool.score[i])] for i in pool.ranking()[:10] if np.isfinite(pool.score[i])]
    conn.execute(insert(schema.history).values(
        app_id=app.id, update_no=update_no, at=at, event=event, n_added=n_added, n_admitted=int(pool.stats.n_runs),
        n_flagged=n_flagged, n_live=int(pool.alive.sum()), n_pruned=len(upd.pruned) if upd else 0,
        cutoff=upd.cutoff if upd is not None and np.isfinite(upd.cutoff) else None,
        leader_id=int(cand_ids[lead]) if lead >= 0 else None, leader_score=score if np.isfinite(score) else None,
        leader_formula=text, top=json.dumps(top)))
    conn.execute(update(schema.applications).where(schema.applications.c.id == app.id)
                 .values(n_updates=update_no))
    return text, score


def _flag(conn: Connection, run_ids: np.ndarray, pool: LivePool, values: np.ndarray, y: np.ndarray,
          flagged: np.ndarray) -> list[tuple[int, float]]:
    out = []
    for f in flagged:
        i = pool.leader
        pred = float(np.nansum(pool.coef[i, :pool.width[i]] * values[f, pool.index[i, :pool.width[i]]]))
        r = (y[f] - pred) / y[f]
        out.append((int(run_ids[f]), r))
        conn.execute(update(schema.runs).where(schema.runs.c.id == int(run_ids[f])).values(
            status="flagged", note=f"anomaly: relative residual {r:+.3g} under the leading models"))
    return out


def observe(store: str | Path | Store, app: str, data: str | Path | pd.DataFrame, *,
            space: str | Path | SearchSpace = "default", options: OnlineOptions | None = None,
            **roles) -> ObserveReport:
    """Add runs of ``app``, refit every live candidate, re-rank, prune, set aside anomalous runs.

    The first observe of an application runs the staged search (:func:`search_pool`) and makes its
    candidates the live pool. ``roles`` are the column options of :func:`automodel.data.load`
    (remembered from the first observe).
    """
    st = open_store(store)
    with st.read() as conn:
        existing = find_app(conn, app)
    ds = _read(data, existing, roles, st)
    prepared = None
    if existing is None:  # the search runs outside the write lock
        sp = space if isinstance(space, SearchSpace) else load_space(space)
        opts = options or OnlineOptions.from_dict({"weighting": sp.fit.weighting, "nonnegative": sp.fit.nonnegative})
        prepared = (sp, opts, *search_pool(ds, sp))
    with st.write() as conn:
        current = find_app(conn, app)
        if current is None:
            if prepared is None:
                raise StoreError(f"{st.target}: application {app!r} disappeared during the observe")
            return _create(conn, st, app, ds, *prepared)
        st.lock_application(conn, current.id)
        check_params(current, ds.params, ds.source)
        return _observe(conn, current, ds)


def _create(conn: Connection, st: Store, name: str, ds: data_mod.Dataset, sp: SearchSpace, opts: OnlineOptions,
            terms: list[Term], structures: list[Structure], notes: list[str]) -> ObserveReport:
    app = create_app(conn, name, ds.params, dict(ds.roles), opts, sp.name, terms, structures)
    index = np.full((len(structures), max(len(s.terms) for s in structures)), -1, dtype=np.intp)
    pos = {t: i for i, t in enumerate(terms)}
    for i, s in enumerate(structures):
        index[i, :len(s.terms)] = [pos[t] for t in s.terms]
    width = np.array([len(s.terms) for s in structures], dtype=np.intp)
    pool = LivePool(terms, index, width, np.ones(len(structures), bool), PoolStats.empty(len(terms)),
                    np.empty((0, len(terms))), np.empty(0), opts)
    return _apply(conn, app, pool, ds, np.array([c for c in _cand_ids(conn, app)]), 1, "search", notes, True)


def _cand_ids(conn: Connection, app: App) -> list[int]:
    c = schema.candidates
    return [r.id for r in conn.execute(select(c.c.id).where(c.c.app_id == app.id).order_by(c.c.idx))]


def _observe(conn: Connection, app: App, ds: data_mod.Dataset) -> ObserveReport:
    pool, cand_ids, _ = load_pool(conn, app)
    return _apply(conn, app, pool, ds, cand_ids, app.n_updates + 1, "observe", [], False)


def _apply(conn: Connection, app: App, pool: LivePool, ds: data_mod.Dataset, cand_ids: np.ndarray,
           update_no: int, event: str, notes: list[str], created: bool) -> ObserveReport:
    runs = ds.runs
    run_ids = insert_runs(conn, app, runs, update_no)
    values = term_values(pool.terms, {q: runs[q].to_numpy(float) for q in app.params}, len(runs))
    y = runs["time"].to_numpy(float)
    before, id_before = _leader(pool, cand_ids)
    upd = pool.update(values, y)
    flagged = _flag(conn, run_ids, pool, values, y, upd.flagged)
    text, score = _record(conn, app, pool, cand_ids, update_no, event, len(runs), len(flagged), upd)
    return ObserveReport(app.name, created, update_no, [int(i) for i in run_ids], flagged, len(upd.pruned),
                         int(pool.alive.sum()), int(pool.stats.n_runs), before, text, score, upd.cutoff, notes,
                         id_before, _leader(pool, cand_ids)[1])


def _leader(pool: LivePool, cand_ids: np.ndarray) -> tuple[str | None, int | None]:
    i = pool.leader
    if i < 0 or not np.isfinite(pool.score[i]):
        return None, None
    return pool.formula(i), int(cand_ids[i])


def _set_status(store: str | Path | Store, app: str, run_ids: Iterable[int], admit: bool) -> ObserveReport:
    st = open_store(store)
    ids = sorted({int(i) for i in run_ids})
    with st.write() as conn:
        a = require_app(conn, app, st.target)
        st.lock_application(conn, a.id)
        t = schema.runs
        rows = {r.id: r for r in conn.execute(select(t).where(t.c.app_id == a.id).where(t.c.id.in_(ids)))}
        for i in ids:
            if i not in rows:
                raise DataError(f"run {i}: not a run of application {app!r}")
            if admit and rows[i].status in ADMITTED:
                raise DataError(f"run {i}: already fitted (status {rows[i].status}); nothing to re-admit")
            if not admit and rows[i].status not in ADMITTED:
                raise DataError(f"run {i}: not fitted (status {rows[i].status}); nothing to exclude")
        pool, cand_ids, admitted_ids = load_pool(conn, a)
        before, id_before = _leader(pool, cand_ids)
        if admit:
            frame = pd.DataFrame([{**json.loads(rows[i].params), "cpu": rows[i].cpu, "bw": rows[i].bw,
                                   "time": rows[i].time} for i in ids])
            pool.admit(term_values(pool.terms, {q: frame[q].to_numpy(float) for q in a.params}, len(frame)),
                       frame["time"].to_numpy(float))
        else:
            pool.exclude(np.flatnonzero(np.isin(admitted_ids, ids)))
        pool.refit()
        conn.execute(update(t).where(t.c.id.in_(ids)).values(
            status="readmitted" if admit else "excluded",
            note=("re-admitted by hand" if admit else "excluded by hand") + f" at update {a.n_updates + 1}"))
        text, score = _record(conn, a, pool, cand_ids, a.n_updates + 1, "readmit" if admit else "exclude",
                              0, 0, None)
    return ObserveReport(app, False, a.n_updates + 1, ids, [], 0, int(pool.alive.sum()), int(pool.stats.n_runs),
                         before, text, score, float("inf"), [], id_before, _leader(pool, cand_ids)[1])


def readmit(store: str | Path | Store, app: str, run_ids: Iterable[int]) -> ObserveReport:
    """Put flagged (or excluded) runs back into the fit and re-rank."""
    return _set_status(store, app, run_ids, True)


def exclude(store: str | Path | Store, app: str, run_ids: Iterable[int]) -> ObserveReport:
    """Take fitted runs out of the fit by hand (kept in the store, status ``excluded``) and re-rank."""
    return _set_status(store, app, run_ids, False)
