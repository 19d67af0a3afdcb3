"""Writes to the store: observe new runs (the first observe runs the staged search), re-admit or
exclude runs. Each call is one transaction (see :mod:`automodel.store.db`).

An observe reads the persisted statistics and the anomaly rule's window of recent runs (both in the
state row), not the stored runs, and writes the new runs, the flags and the pruned candidates with one
batched statement each, so its time and I/O grow with the new runs, not with the store. An observe of an
application the store has is one write transaction (the runs are read with the application's columns
once it is locked); a new application's staged search runs before its write transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd
from automodel import data as data_mod
from automodel.errors import DataError, StoreError
from automodel.options import DEFAULT_AGGREGATE, DEFAULT_UNIT, TIME_UNITS
from automodel.online.anomaly import ANOMALY_WINDOW
from automodel.online.live import LivePool, OnlineOptions, PoolStats, Update
from automodel.space.structure import Structure
from automodel.space.config import SearchSpace
from automodel.space.terms import Term
from automodel.online.variants import load_variants
from automodel.store import schema
from automodel.store.db import Store, now
from automodel.store.storage import Session, Storage, open_storage
from automodel.store.pool import ADMITTED, App, check_params, missing_app, run_columns, window_rows

__all__ = ["ObserveReport", "observe", "readmit", "exclude", "change_status", "search_pool"]


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
    n_skipped: int = 0  # runs the store had already
    #: with ``parts`` (:func:`observe`): the ids of the runs of each part that were stored
    part_run_ids: list[list[int]] = field(default_factory=list)

    @property
    def leader_changed(self) -> bool:
        return self.leader_id_before != self.leader_id_after

    def lines(self) -> list[str]:
        if not self.run_ids:
            return [f"{self.app}: nothing added, no update: its {self.n_skipped} run(s) are in the store already",
                    "  (--allow-duplicates stores repeated measurements)", f"  leader: T = {self.leader_after}"]
        out = [f"{self.app}: update {self.update_no}: {len(self.run_ids)} run(s) added"
               + (" (new application: staged search)" if self.created else "")
               + f", {self.n_admitted} runs fitted, {self.n_live} candidates live"]
        if self.n_skipped:
            out.append(f"  skipped {self.n_skipped} run(s) the store has already (--allow-duplicates stores them)")
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


def search_pool(ds: data_mod.Dataset, space: SearchSpace) -> tuple[list[Term], list[Structure], list[str]]:
    """The staged search's candidates scored on all runs (every final stage) plus their load variants."""
    from automodel.search.engine import staged_search  # a new application only: observe starts without it

    outcome = staged_search(ds, space, progress=False)
    sc = outcome.scores
    found = [s for s, ok in zip(sc.structures, sc.valid) if ok and not s.signed]
    signed = sum(1 for s, ok in zip(sc.structures, sc.valid) if ok and s.signed)
    structures = load_variants(found, ds.params)
    terms = list(dict.fromkeys(t for s in structures for t in s.terms))
    notes = list(outcome.notes) + [f"{len(structures)} candidates live ({len({s.key for s in found})} from the "
                                   f"staged search plus load variants) over {len(terms)} distinct terms"]
    if signed:  # the online refit fits every live candidate with the space's sign constraint
        notes.append(f"{signed} signed candidates of the PMNF route not kept live (the online refit is "
                     "non-negative)")
    return terms, structures, notes


def _roles(app: App | None, roles: dict) -> dict:
    """The column options: those given, else the columns the application was first observed with."""
    if app is not None and not set(roles) - {"ignore"}:
        roles = {**roles, **{r: app.roles.get(r) for r in ("time", "n", "p", "cpu", "bw")}}
        roles.update(params=[q for q in app.params if q not in ("n", "p", "cpu", "bw")],
                     explicit=[r for r in ("time", "n", "p", "cpu", "bw") if r in app.roles])
    return roles


def _needs_loads(frame: pd.DataFrame, roles: dict) -> bool:
    """Whether the runs take their loads from the load samples: ``start`` and ``end`` columns, no load
    columns."""
    loads = {roles.get("cpu") or "cpu", roles.get("bw") or "bw"}
    return {"start", "end"} <= set(frame.columns) and not loads <= set(frame.columns)


def _read(frame: pd.DataFrame, app: App | None, roles: dict, aggregate: str | None,
          store: Storage | None) -> data_mod.Dataset | data_mod.Runs:
    """The runs of ``frame`` with the application's remembered columns (when no role is given); runs
    with ``start`` and ``end`` columns but no load columns get their loads from the load samples.

    A :class:`~automodel.data.Dataset` (``aggregate``, default median) when the runs are aggregated
    or searched (a new application); else only the validated runs
    (:func:`automodel.data.load_runs`: the same runs, without grouping the repetitions)."""
    roles = _roles(app, roles)
    source = frame.attrs.get("source", "<DataFrame>")
    time = roles.get("time") or "time"
    unit = data_mod.data_unit(frame, source, None, time)
    if unit != DEFAULT_UNIT:  # the store keeps seconds: runs in ms are converted (they were stored as seconds)
        if unit not in TIME_UNITS:
            raise DataError(f"{source}, column '{time}': the values are {unit}, not times; the store keeps "
                            "times in seconds")
        if time in frame:
            frame = frame.assign(**{time: frame[time] * TIME_UNITS[unit]})
        frame = frame.drop(columns=["unit"], errors="ignore")
    if _needs_loads(frame, roles):
        from automodel.store.machine_load import fill_run_loads
        database = getattr(store, "store", None)  # the load samples are tables of a SQL store
        if database is None:
            raise StoreError(f"{getattr(store, 'target', 'the store')}: runs without cpu and bw columns take their "
                             "loads from the load samples, which only a database store keeps")
        frame = fill_run_loads(database, frame, roles, source)
    if aggregate is None and app is not None:
        return data_mod.load_runs(frame, source=source, **roles)
    # None is the default; any other value is the loader's to check ('' or [] were read as the default)
    return data_mod.load(frame, source=source, aggregate=DEFAULT_AGGREGATE if aggregate is None else aggregate,
                         **roles)


def _record(db: Session, app: App, pool: LivePool, cand_ids: np.ndarray, update_no: int, event: str,
            n_added: int, n_flagged: int, upd: Update | None, lead: int, recent: np.ndarray | None = None
            ) -> tuple[str | None, float]:
    """Mark pruned candidates, write the state (with the ``recent`` runs' rows when given:
    :meth:`Session.save_pool`) and a history row, bump the update counter; ``lead`` is the leading
    candidate (:attr:`LivePool.leader`)."""
    at = now()
    pruned = []
    if upd is not None and len(upd.pruned):
        reason = (f"score above the {app.options.prune_percentile:g}th percentile ({upd.cutoff:.4g}) of the "
                  f"live candidates after update {update_no}")
        pruned = [  # the score each had when it was deleted
            {"cand_id": int(cand_ids[i]), "score": float(pool.score[i]) if np.isfinite(pool.score[i]) else None,
             "update_no": update_no, "at": at, "reason": reason} for i in upd.pruned]
    db.save_pool(app, pool, recent)
    text = pool.formula(lead) if lead >= 0 else None
    score = float(pool.score[lead]) if lead >= 0 else float("inf")
    top = [[int(cand_ids[i]), float(pool.score[i])] for i in pool.ranking()[:10] if np.isfinite(pool.score[i])]
    db.record_update(app, pruned, dict(
        update_no=update_no, at=at, event=event, n_added=n_added, n_admitted=int(pool.stats.n_runs),
        n_flagged=n_flagged, n_live=int(pool.alive.sum()), n_pruned=len(upd.pruned) if upd else 0,
        cutoff=upd.cutoff if upd is not None and np.isfinite(upd.cutoff) else None,
        leader_id=int(cand_ids[lead]) if lead >= 0 else None, leader_score=score if np.isfinite(score) else None,
        leader_formula=text, top=json.dumps(top)))
    return text, score


def _flag(db: Session, run_ids: np.ndarray, pool: LivePool, values: np.ndarray, y: np.ndarray,
          flagged: np.ndarray, lead: int) -> list[tuple[int, float]]:
    """Mark the flagged new runs; each with its relative residual under the leading candidate ``lead``."""
    if not len(flagged):
        return []
    width = pool.width[lead]
    pred = np.nansum(pool.coef[lead, :width] * values[flagged][:, pool.index[lead, :width]], axis=1)
    out = [(int(run_ids[f]), float(r)) for f, r in zip(flagged, (y[flagged] - pred) / y[flagged])]
    db.flag_runs([(rid, f"anomaly: relative residual {r:+.3g} under the leading models") for rid, r in out])
    return out


class _Search(NamedTuple):
    """The staged search of a new application's first runs (:func:`search_pool`), done before the
    write transaction so that it holds no lock."""

    space: SearchSpace
    options: OnlineOptions
    terms: list[Term]
    structures: list[Structure]
    notes: list[str]


def observe(store: str | Path | Store | Storage, app: str, data: str | Path | pd.DataFrame, *,
            space: str | Path | SearchSpace = "default", options: OnlineOptions | None = None,
            aggregate: str | None = None, allow_duplicates: bool = False, parts: Sequence[int] | None = None,
            **roles) -> ObserveReport:
    """Add runs of ``app``, refit every live candidate, re-rank, prune, set aside anomalous runs.

    The first observe of an application runs the staged search (:func:`search_pool`) and makes its
    candidates the live pool.

    Parameters
    ----------
    store : path, URL, Store or Storage
        The store (created when it does not exist), or any :class:`~automodel.store.storage.Storage`.
    app : str
        The application's name.
    data : path or DataFrame
        The runs, one row each.
    space, options
        Search space and online options of the first observe (the space is read and checked first,
        whether the application is new or not: a space file with a template option its template does
        not take is a one-line SpaceError and nothing is stored).
    aggregate : {"robust", "median", "mean", "min"} or None
        Combine the repetitions of ``data`` (rows with identical parameters) into one run each
        first, as :func:`automodel.fit` does; None stores every row as a run.
    allow_duplicates : bool
        Store every run, even one the store already has (a repeated measurement); by default a run
        whose content (:func:`automodel.store.schema.run_identities`) is stored is skipped.
    parts : sequence of int, optional
        The sizes of the submissions ``data`` holds one after the other (the service stores the requests
        that arrive together as one observe): the repetitions of a run are counted within its part, so
        a run two parts both hold is stored once, as if they were observed one after the other, and
        the report's ``part_run_ids`` are the ids of each part's runs. Not with ``aggregate``; every
        row must be a run (none set aside as failed by a ``status`` column).
    **roles
        The column options of :func:`automodel.data.load` (remembered from the first observe).
    """
    from automodel.templates.options import checked_space  # template modules only for template options

    space = checked_space(space)
    st = open_storage(store, create=True)
    frame = data if isinstance(data, pd.DataFrame) else data_mod.read(Path(data))
    parts = None if parts is None or len(parts) < 2 else tuple(int(k) for k in parts)  # one part: the data
    if parts is not None and (aggregate is not None or sum(parts) != len(frame)):
        raise DataError(f"parts: {sum(parts)} rows in parts of {len(frame)}, or runs to aggregate; expected "
                        "one part a submission of the runs as they are")
    done = st.session(lambda db: _observe_known(db, app, frame, roles, aggregate, allow_duplicates, parts))
    if done is not None:
        return done
    # a new application (its search runs before the write transaction, so that it holds no lock), or runs
    # that take their loads from the load samples
    existing = st.session(lambda db: db.find_app(app), write=False)
    ds = _read(frame, existing, roles, aggregate, st)
    search = None if existing is not None else _search(ds, space, options)
    return st.session(lambda db: _write(db, st, app, ds, _runs(ds, aggregate), search, allow_duplicates, parts))


def _runs(ds: data_mod.Dataset | data_mod.Runs, aggregate: str | None) -> pd.DataFrame:
    """The runs to store: the aggregated configurations with ``aggregate``, else every run."""
    return ds.frame[[*ds.params, "time"]] if aggregate else ds.runs


def _observe_known(db: Session, name: str, frame: pd.DataFrame, roles: dict, aggregate: str | None,
                   allow_duplicates: bool, parts: tuple[int, ...] | None = None) -> ObserveReport | None:
    """The observe of an application the store has, in one write transaction: lock it, read the runs
    with its columns, add them; None (nothing done) for a new application or for runs that take their
    loads from the load samples (:func:`observe` then reads them before the write transaction)."""
    app = db.find_app(name, lock=True)
    if app is None or _needs_loads(frame, _roles(app, roles)):
        return None
    ds = _read(frame, app, roles, aggregate, None)
    return _add(db, app, ds, _runs(ds, aggregate), None, allow_duplicates, parts)


def _search(ds: data_mod.Dataset, sp: SearchSpace, options: OnlineOptions | None) -> _Search:
    opts = options or OnlineOptions.from_dict({"weighting": sp.fit.weighting, "nonnegative": sp.fit.nonnegative})
    return _Search(sp, opts, *search_pool(ds, sp))


def _write(db: Session, st: Storage, name: str, ds: data_mod.Dataset | data_mod.Runs, runs: pd.DataFrame,
           search: _Search | None, allow_duplicates: bool, parts: tuple[int, ...] | None = None) -> ObserveReport:
    """The write transaction of :func:`observe`: lock (or create) the application, skip the runs it
    has, add the others as one update."""
    app, created = db.find_app(name, lock=True), False
    if app is None and search is not None:
        app = db.create_app(name, ds.params, dict(ds.roles), search.options, search.space.name, search.terms,
                         search.structures)
        created = app is not None
        app = app or db.find_app(name, lock=True)  # another observer created it first
    if app is None:
        raise StoreError(f"{st.target}: application {name!r} disappeared during the observe")
    return _add(db, app, ds, runs, search if created else None, allow_duplicates, parts)


def _add(db: Session, app: App, ds: data_mod.Dataset | data_mod.Runs, runs: pd.DataFrame,
         search: _Search | None, allow_duplicates: bool, parts: tuple[int, ...] | None = None) -> ObserveReport:
    """Skip the runs the (locked) application has, add the others as one update; ``search``: the
    application was just created with the candidates of this search; ``parts``: the sizes of the
    submissions ``runs`` holds (:func:`observe`)."""
    check_params(app, ds.params, ds.source)
    names = (*app.params, "time")
    columns = {q: runs[q].to_numpy(float) for q in names}
    cells = {q: columns[q].tolist() for q in names}
    sizes = parts or (len(runs),)
    if sum(sizes) != len(runs):  # rows set aside as failed (a status column): no longer the parts' rows
        raise DataError(f"{ds.source}: {len(runs)} runs of the {sum(sizes)} rows of its parts; expected every "
                        "row of a part to be a run")
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    identities = [None] * len(runs) if allow_duplicates else [
        identity for a, b in zip(starts[:-1], starts[1:])
        for identity in schema.run_identities({q: cells[q][i] for q in names} for i in range(a, b))]
    known = db.stored_identities(app, [i for i in identities if i is not None])
    new = np.array([i is None or i not in known for i in identities], bool)
    claimed: set[str] = set()
    for k, identity in enumerate(identities):  # a run of an earlier part: stored once
        if identity is not None and new[k]:
            new[k] = identity not in claimed
            claimed.add(identity)
    if not new.any():
        return replace(_unchanged(db, app, len(runs)), part_run_ids=[[] for _ in sizes])
    report = _add_new(db, app, columns, identities, new, search)
    ids = iter(report.run_ids)
    report.part_run_ids = [[next(ids) for _ in range(int(new[a:b].sum()))] for a, b in zip(starts[:-1], starts[1:])]
    return report


def _add_new(db: Session, app: App, columns: dict[str, np.ndarray], identities: list[str | None], new: np.ndarray,
             search: _Search | None) -> ObserveReport:
    """Add the runs of ``columns`` marked ``new`` (the others skipped) as one update of ``app``."""
    if not new.all():
        columns, identities = {q: c[new] for q, c in columns.items()}, [i for i, keep in zip(identities, new) if keep]
    if search is not None:
        pool, cand_ids = _new_pool(search), np.array(db.candidate_ids(app))
        recent = window_rows({q: np.zeros(0) for q in app.params}, np.zeros(0), app)
        return _apply(db, app, pool, recent, columns, identities, cand_ids, 1, "search", search.notes, True, 0)
    pool, cand_ids, recent = db.load_pool(app, ANOMALY_WINDOW)
    return _apply(db, app, pool, recent, columns, identities, cand_ids, app.n_updates + 1, "observe", [], False,
                  int((~new).sum()))


def _new_pool(search: _Search) -> LivePool:
    """The live pool of a new application: every candidate of the search, no run yet."""
    structures, terms = search.structures, search.terms
    index = np.full((len(structures), max(len(s.terms) for s in structures)), -1, dtype=np.intp)
    pos = {t: i for i, t in enumerate(terms)}
    for i, s in enumerate(structures):
        index[i, :len(s.terms)] = [pos[t] for t in s.terms]
    width = np.array([len(s.terms) for s in structures], dtype=np.intp)
    return LivePool(terms, index, width, np.ones(len(structures), bool), PoolStats.empty(len(terms)),
                    np.empty((0, len(terms))), np.empty(0), search.options)


def _apply(db: Session, app: App, pool: LivePool, recent: np.ndarray, runs: dict[str, np.ndarray],
           identities: list[str | None], cand_ids: np.ndarray, update_no: int, event: str, notes: list[str],
           created: bool, n_skipped: int) -> ObserveReport:
    """Insert the new runs (their parameter and time columns), update the pool with them, flag, prune
    and record; ``recent`` are the rows (:func:`~automodel.store.pool.window_rows`) of the pool's recent
    runs, kept in the state with the new runs not flagged."""
    run_ids = db.insert_runs(app, runs, update_no, identities)
    y = runs["time"]
    columns = {q: runs[q] for q in app.params}
    values = pool.term_values(columns, len(y))
    lead = pool.leader
    before, id_before = _described(pool, cand_ids, lead)
    upd = pool.update(values, y, before=lead)
    if before is not None and not len(pool.leaders(1)):  # the transaction is undone: nothing stored
        shown = ", ".join(f"{q} {float(np.max(np.abs(c))):.3g}" for q, c in runs.items())
        raise DataError(f"application {app.name!r}: these runs leave no candidate with a finite score (the values "
                        f"of its terms overflow; the largest: {shown}); nothing stored")
    flagged = _flag(db, run_ids, pool, values, y, upd.flagged, upd.leader_after)
    kept = np.ones(len(y), bool)
    kept[upd.flagged] = False
    recent = np.concatenate([recent, window_rows(columns, y, app)[kept]])[-ANOMALY_WINDOW:]
    text, score = _record(db, app, pool, cand_ids, update_no, event, len(y), len(flagged), upd,
                          upd.leader_after, recent)
    return ObserveReport(app.name, created, update_no, [int(i) for i in run_ids], flagged, len(upd.pruned),
                         int(pool.alive.sum()), int(pool.stats.n_runs), before, text, score, upd.cutoff, notes,
                         id_before, _described(pool, cand_ids, upd.leader_after, text)[1], n_skipped)


def _unchanged(db: Session, app: App, n_skipped: int) -> ObserveReport:
    """The report of an observe whose runs were all stored already: no update, the last one's leader."""
    last = db.last_history(app)
    score = float("inf") if last.leader_score is None else last.leader_score
    return ObserveReport(app.name, False, app.n_updates, [], [], 0, last.n_live, last.n_admitted, last.leader_formula,
                         last.leader_formula, score, float("inf"), [], last.leader_id, last.leader_id, n_skipped)


def _described(pool: LivePool, cand_ids: np.ndarray, i: int, text: str | None = None
               ) -> tuple[str | None, int | None]:
    """The formula (``text`` when known) and candidate id of the pool's candidate ``i``; None and None
    when it has no finite score."""
    if i < 0 or not np.isfinite(pool.score[i]):
        return None, None
    return text or pool.formula(i), int(cand_ids[i])


def change_status(store: str | Path | Store | Storage, app: str, readmit: Iterable[int] = (),
                  exclude: Iterable[int] = ()) -> list[ObserveReport]:
    """Re-admit the runs ``readmit``, then exclude the runs ``exclude``, in one transaction: both or neither
    (a run that named no run, given to the second, left the first done and stored, and the command failed);
    a run in both is refused. One report per list that names runs, an update each.

    Raises
    ------
    DataError
        A run given to both, or one :func:`readmit` or :func:`exclude` refuses; nothing is changed.
    """
    changes = [(sorted({int(i) for i in ids}), admit) for ids, admit in ((readmit, True), (exclude, False))]
    both = sorted(set(changes[0][0]) & set(changes[1][0]))
    if both:
        raise DataError(f"run {both[0]}: given to re-admit and to exclude; expected each run once")
    st = open_storage(store, create=False)
    return st.session(lambda db: [_set_status_locked(db, _require(db, app, st.target), ids, admit)
                                  for ids, admit in changes if ids])


def _require(db: Session, name: str, target: str) -> App:
    """The application called ``name``, locked; a one-line :class:`StoreError` when there is none."""
    app = db.find_app(name, lock=True)
    if app is None:
        raise StoreError(missing_app(target, name, db.app_names()))
    return app


#: run ids are SQL integers (64 bits, from 1): another number names no run
RUN_IDS = range(1, 1 << 63)


def _set_status_locked(db: Session, a: App, ids: list[int], admit: bool) -> ObserveReport:
    rows = db.runs_by_id(a, [i for i in ids if i in RUN_IDS])  # no query of a number SQL cannot hold
    for i in ids:
        if i not in rows:
            raise DataError(f"run {i}: not a run of application {a.name!r}")
        if admit and rows[i].status in ADMITTED:
            raise DataError(f"run {i}: already fitted (status {rows[i].status}); nothing to re-admit")
        if not admit and rows[i].status not in ADMITTED:
            raise DataError(f"run {i}: not fitted (status {rows[i].status}); nothing to exclude")
    pool, cand_ids, _ = db.load_pool(a)
    before, id_before = _described(pool, cand_ids, pool.leader)
    _, columns, y = run_columns([(rows[i].id, rows[i].params, rows[i].cpu, rows[i].bw, rows[i].time) for i in ids],
                                a)
    (pool.admit if admit else pool.exclude)(pool.term_values(columns, len(ids)), y)
    pool.refit()
    update_no = a.n_updates + 1
    db.set_run_status(ids, "readmitted" if admit else "excluded",
                      ("re-admitted by hand" if admit else "excluded by hand") + f" at update {update_no}")
    lead = pool.leader
    text, score = _record(db, a, pool, cand_ids, update_no, "readmit" if admit else "exclude", 0, 0, None, lead)
    return ObserveReport(a.name, False, update_no, ids, [], 0, int(pool.alive.sum()), int(pool.stats.n_runs),
                         before, text, score, float("inf"), [], id_before, _described(pool, cand_ids, lead, text)[1])


def readmit(store: str | Path | Store | Storage, app: str, run_ids: Iterable[int]) -> ObserveReport:
    """Put flagged (or excluded) runs back into the fit and re-rank."""
    return _one(change_status(store, app, readmit=run_ids))


def exclude(store: str | Path | Store | Storage, app: str, run_ids: Iterable[int]) -> ObserveReport:
    """Take fitted runs out of the fit by hand (kept in the store, status ``excluded``) and re-rank."""
    return _one(change_status(store, app, exclude=run_ids))


def _one(reports: list[ObserveReport]) -> ObserveReport:
    """The report of the one change of :func:`readmit` or :func:`exclude`; no run given is a DataError."""
    if not reports:
        raise DataError("no run given; expected the ids of the runs to change (automodel runs lists them)")
    return reports[0]
