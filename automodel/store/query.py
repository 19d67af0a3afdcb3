"""Reads from the store: the current ranking, the ranking history, the runs, the leading model, and a
consistency check of the persisted fit state; on any backend, through the store's interface
(:mod:`automodel.store.storage`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.model.calibration import calibrate
from automodel.data import load
from automodel.errors import DataError, StoreError
from automodel.names import printable
from automodel.model.interval import MAX_ALTERNATIVES, Interval
from automodel.model.core import Model, TermModel
from automodel.options import ROLE_NAMES, weights
from automodel.space.structure import Structure
from automodel.search.choice import choose
from automodel.online.live import PoolStats
from automodel.space.terms import term_values
from automodel.store.db import Store
from automodel.store.pool import ADMITTED, App, window_rows
from automodel.store.schema import stored_json
from automodel.store.storage import Session, Storage, read_app, run_frame

__all__ = ["ranking", "history", "runs", "admitted_runs", "leader_model", "verify"]


def ranking(store: str | Path | Store | Storage, app: str, top: int | None = 10, pruned: bool = False) -> pd.DataFrame:
    """Live candidates best first (rank, id, score, n_terms, formula); or, with ``pruned``, the deleted
    candidates with when and why. ``top``: rows (None or 0: all)."""
    if top is not None and top < 0:
        raise DataError(f"top: expected a number of rows >= 0 (0: all), got {top}")
    return read_app(store, app, lambda db, a: (_pruned if pruned else _live)(db, a, top or None))


def _live(db: Session, a: App, top: int | None) -> pd.DataFrame:
    pool, ids, _ = db.load_pool(a)
    order = pool.ranking()[:top]
    texts = pool.formulas(order)
    return pd.DataFrame([{"rank": r + 1, "id": int(ids[i]), "score": float(pool.score[i]),
                          "n_terms": int(pool.width[i]), "formula": texts[r]} for r, i in enumerate(order)],
                        columns=["rank", "id", "score", "n_terms", "formula"])


def _pruned(db: Session, a: App, top: int | None) -> pd.DataFrame:
    pool, _, _ = db.load_pool(a)
    rows = db.pruned_candidates(a)[:top]
    return pd.DataFrame([{"id": r.id, "update": r.pruned_update, "at": r.pruned_at, "score": r.pruned_score,
                          "n_terms": int(pool.width[r.idx]), "structure": pool.structure(r.idx),
                          "reason": r.pruned_reason} for r in rows],
                        columns=["id", "update", "at", "score", "n_terms", "structure", "reason"])


def history(store: str | Path | Store | Storage, app: str) -> pd.DataFrame:
    """One row per update: update, at, event, added, admitted, flagged, live, pruned, cutoff, leader."""
    rows = read_app(store, app, lambda db, a: db.history(a))
    return pd.DataFrame([{"update": r.update_no, "at": r.at, "event": r.event, "added": r.n_added,
                          "admitted": r.n_admitted, "flagged": r.n_flagged, "live": r.n_live, "pruned": r.n_pruned,
                          "cutoff": r.cutoff, "leader_id": r.leader_id, "leader_score": r.leader_score,
                          "leader": None if r.leader_formula is None else printable(r.leader_formula), "top": stored_json(r.top or "[]", "history", r.id, "top", list)} for r in rows],
                        columns=["update", "at", "event", "added", "admitted", "flagged", "live", "pruned", "cutoff",
                                 "leader_id", "leader_score", "leader", "top"])


def runs(store: str | Path | Store | Storage, app: str, status: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The application's runs (id, parameters, time, observed_at, update_no, status, note)."""
    return read_app(store, app, lambda db, a: run_frame(db, a, status))


def admitted_runs(store: str | Path | Store | Storage, app: str) -> tuple[pd.DataFrame, dict]:
    """The runs of ``app`` the live pool fits (status admitted or re-admitted), with the column names of
    the files they came from, and the roles :func:`automodel.fit` reads them with
    (``automodel.fit(frame, **roles)``).

    The leader that ``observe`` keeps is chosen among fewer candidates and by a simpler rule than
    ``fit``'s (:meth:`automodel.online.live.LivePool.leader`); to predict with ``fit``'s choice, fit
    these runs (``automodel fit --store S --app NAME``).
    """
    a, frame = read_app(store, app, lambda db, a: (a, run_frame(db, a, ADMITTED)))
    names = {q: a.roles.get(q, q) for q in (*a.params, "time")}
    roles: dict = {role: a.roles.get(role, role) for role in ("time", *ROLE_NAMES)}
    roles["params"] = [names[q] for q in a.params if q not in ROLE_NAMES]
    roles["explicit"] = [role for role in ("time", *ROLE_NAMES) if role in a.roles]
    roles["unit"] = "s"  # the store keeps seconds (observe converts), whatever the time column's name says
    frame = frame[[*a.params, "time"]].rename(columns=names).reset_index(drop=True)
    frame.attrs["source"] = f"application {a.name!r}"
    return frame, roles


def leader_model(store: str | Path | Store | Storage, app: str, position: int | None = None) -> Model:
    """The leader that ``observe`` reports (the selection rule's choice among the live candidates), or
    the live candidate at ``position`` of the ranking by score (0: the best-scored), as a :class:`Model`."""
    a, (pool, ids, _), fitted = read_app(store, app, lambda db, a: (a, db.load_pool(a), run_frame(db, a, ADMITTED)))
    order = pool.ranking()
    if position is None:
        i = pool.leader
        if i < 0 or not np.isfinite(pool.score[i]):
            raise StoreError(f"application {app!r}: no fitted candidate leads")
    else:
        if position >= len(order) or not np.isfinite(pool.score[order[position]]):
            raise StoreError(f"application {app!r}: no fitted candidate at rank {position + 1}")
        i = order[position]
    core = TermModel(pool.terms_of(i), pool.coefficients_of(i), name=f"candidate {ids[i]}")
    metric = a.options.metric
    ranges = {q: [float(fitted[q].min()), float(fitted[q].max())] for q in a.params} if len(fitted) else {}
    model = Model(core, a.params, dict(a.roles), ranges, {metric: float(pool.score[i])}, a.space,
                  {"weighting": a.options.weighting, "nonnegative": a.options.nonnegative, "metric": metric})
    model.interval = _band(a, pool, order, i, core, fitted, app)
    return model


def _band(a: App, pool, order: np.ndarray, i: int, core: TermModel, fitted: pd.DataFrame, app: str
          ) -> Interval | None:
    """The prediction band of the live candidate ``i`` (:func:`automodel.model.calibration.calibrate`
    on the admitted runs, the live ranking as the search's candidates); None on fewer than 3
    configurations."""
    ds = load(fitted[[*a.params, "time"]], params=[q for q in a.params if q not in ROLE_NAMES],
              source=f"application {app!r}")
    if ds.n_points < 3:
        return None
    ranked = [j for j in order[:100] if np.isfinite(pool.score[j])]
    opt = replace(a.options.fit, metric=a.options.metric)
    n_terms = np.array([len(pool.terms_of(j)) for j in ranked])
    chosen = choose(pool.score[ranked], n_terms, ds.n_points, opt.metric, opt.selection)
    peers = [TermModel(pool.terms_of(j), pool.coefficients_of(j)) for k, j in enumerate(ranked)
             if chosen.equivalent[k] and j != i][:MAX_ALTERNATIVES]
    structures = [Structure(pool.terms_of(j)) for j in ranked]
    return calibrate(ds, opt, [core, *peers], np.ones(len(peers) + 1, bool), structures)[0]


def verify(store: str | Path | Store | Storage, app: str, rtol: float = 1e-8) -> dict[str, int]:
    """Check that the persisted statistics equal a rebuild from the admitted runs, that the persisted
    recent runs (if any) are the fitted runs stored last, that the persisted live candidates are those
    of the candidate rows, and that every run row is well-formed; raise :class:`StoreError` otherwise.
    Returns counts."""
    a, state, (pool, ids, _), (run_ids, columns, y), live, all_runs = read_app(store, app, lambda db, a: (
        a, db.pool_state(a), db.load_pool(a), db.fitted_runs(a), set(db.candidate_ids(a, "live")), run_frame(db, a)))
    if state is None:
        raise StoreError(f"application {app!r}: no fit state")
    recent = state.arrays.get("window")
    if recent is not None and (len(recent) > len(y) or not np.array_equal(
            recent, window_rows(columns, y, a)[len(y) - len(recent):])):
        raise StoreError(f"application {app!r}: the recent runs of the state differ from the fitted runs stored last")
    fresh = PoolStats.from_runs(term_values(pool.terms, columns, len(y)), y, weights(y, pool.options.weighting))
    if state.n_runs != len(run_ids) or pool.stats.n_runs != len(run_ids):
        raise StoreError(f"application {app!r}: state counts {state.n_runs} runs, the store has {len(run_ids)} fitted")
    scale = max(1.0, float(np.abs(fresh.gram).max(initial=0.0)))
    if not np.allclose(pool.stats.gram, fresh.gram, rtol=rtol, atol=rtol * scale) or not np.allclose(
            pool.stats.moment, fresh.moment, rtol=rtol, atol=rtol * scale):
        raise StoreError(f"application {app!r}: persisted statistics differ from the runs")
    if live != set(ids[pool.alive].tolist()):
        raise StoreError(f"application {app!r}: the live candidates of the state differ from the candidate rows")
    if not set(all_runs["status"]) <= {"admitted", "flagged", "readmitted", "excluded"}:
        raise StoreError(f"application {app!r}: unknown run status")
    return {"runs": len(all_runs), "fitted": len(run_ids), "candidates": len(ids), "live": int(pool.alive.sum())}
