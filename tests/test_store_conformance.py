"""The store's contract, on every backend (:data:`postgres_server.BACKENDS`: SQLite and a real PostgreSQL
server; the observe contract at the end also on the in-memory store, :data:`postgres_server.STORAGES`):
runs stored exactly once whatever the concurrency, update numbers without gaps or repeats, a ranking
equal to a sequential replay, idempotent observe, old stores migrated, transient failures retried, every
database failure a one-line error.

Concurrency runs N = 4 real processes observing small chunks through the command line
(:func:`automodel.cli.main`), each forked from a warm interpreter that has imported automodel's store
and command line (tests/warm_python.py: a process without the second of imports a new one would take).
Each scenario prints its counts (``pytest -rP``).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import OperationalError

from automodel import store as S
from automodel.cli import main
from automodel.errors import StoreError
from automodel.store import db, schema
from postgres_server import USER, free_port
from test_store_observe import _grid, _runs
from warm_python import Warm

N_PROCESSES = 4
#: ``python -c WORKER URL CSV...``: observe each CSV in turn through the command line; its status
WORKER = textwrap.dedent("""
    import sys
    from automodel.cli import main
    for csv in sys.argv[2:]:
        status = main(["observe", "--store", sys.argv[1], "--app", "app", csv])
        if status:
            sys.exit(status)
""")
#: ``python -c KILLED URL MARKER CSV``: observe the CSV, and, with its runs and state written but not
#: committed, write MARKER and sleep (to be killed)
KILLED = textwrap.dedent("""
    import pathlib, sys, time
    from automodel import store as S
    from automodel.store.sql import SqlSession
    real = SqlSession.save_pool
    def save_and_sleep(*args, **kwargs):
        real(*args, **kwargs)
        pathlib.Path(sys.argv[2]).write_text("inside the transaction")
        time.sleep(60)
    SqlSession.save_pool = save_and_sleep
    S.observe(sys.argv[1], "app", sys.argv[3])
""")


def _write(frames: list[pd.DataFrame], folder: Path, stem: str) -> list[str]:
    paths = []
    for i, frame in enumerate(frames):
        paths.append(str(folder / f"{stem}{i}.csv"))
        frame.to_csv(paths[-1], index=False)
    return paths


@pytest.fixture(scope="module")
def warm():
    """The interpreter the concurrent processes are forked from, with the store's modules imported."""
    server = Warm(sys.executable, ("automodel.cli", "automodel.cli.store", "automodel.store", "automodel.store.observe",
                                   "automodel.store.sql", "automodel.fitting", "sqlalchemy", "psycopg"))
    yield server
    server.stop()


def _start(warm: Warm, script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([*warm.command("python"), "-c", script, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _finish(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err


def _content(frame: pd.DataFrame) -> list[tuple[float, ...]]:
    return sorted(map(tuple, frame[["n", "p", "cpu", "bw", "time"]].to_numpy(float)))


def _identities(url: str) -> list[str | None]:
    return S.open_store(url, create=False).transaction(
        lambda conn: conn.execute(select(schema.runs.c.identity)).scalars().all(), write=False)


def _replay(url: str, folder: Path) -> pd.DataFrame:
    """The ranking of a new SQLite store given the runs of ``url``'s updates one after the other."""
    stored = S.runs(url, "app")
    replay = str(folder / "replay.db")
    for _, batch in stored.groupby("update_no", sort=True):
        S.observe(replay, "app", batch[["n", "p", "cpu", "bw", "time"]].reset_index(drop=True))
    return S.ranking(replay, "app", top=None)


def _check(url: str, written: list[str], n_updates: int, folder: Path, scenario: str) -> None:
    """Every written run stored once (content and identity), updates 1..n_updates, one search, the
    persisted statistics right, the ranking that of a sequential replay."""
    frames = [pd.read_csv(p) for p in written]
    stored = S.runs(url, "app")
    assert _content(stored) == _content(pd.concat(frames))
    identities = _identities(url)
    expected = {i for f in frames for i in schema.run_identities(f[["n", "p", "cpu", "bw", "time"]]
                                                                .to_dict("records"))}
    assert None not in identities and len(set(identities)) == len(identities) and set(identities) == expected
    history = S.history(url, "app")
    assert history["update"].tolist() == list(range(1, n_updates + 1))
    assert history["event"].tolist() == ["search"] + ["observe"] * (n_updates - 1)
    assert history["added"].sum() == len(stored) and S.verify(url, "app")["runs"] == len(stored)
    got, want = S.ranking(url, "app", top=None), _replay(url, folder)
    assert got["formula"].tolist() == want["formula"].tolist()
    np.testing.assert_allclose(got["score"], want["score"], rtol=1e-9)
    backend = "sqlite" if "://" not in url else "postgresql"
    print(f"{scenario} [{backend}]: runs written {sum(map(len, frames))}, runs found {len(stored)}, "
          f"updates {history['update'].min()}..{history['update'].max()} ({len(history)} distinct)")


def test_processes_creating_one_application(store_url, tmp_path, warm):
    chunks = _write([_grid(seed) for seed in range(N_PROCESSES)], tmp_path, "grid")
    _finish([_start(warm, WORKER, store_url, chunk) for chunk in chunks])
    _check(store_url, chunks, N_PROCESSES, tmp_path, "create race")


def test_processes_observing_disjoint_chunks(store_url, tmp_path, warm):
    (first,) = _write([_grid()], tmp_path, "grid")
    S.observe(store_url, "app", first)
    chunks = [_write([_runs(100 * w + b, 2) for b in range(2)], tmp_path, f"w{w}_") for w in range(N_PROCESSES)]
    _finish([_start(warm, WORKER, store_url, *mine) for mine in chunks])
    _check(store_url, [first] + [c for mine in chunks for c in mine], 1 + 2 * N_PROCESSES, tmp_path,
           "disjoint chunks")


def test_writer_killed_mid_transaction(store_url, tmp_path, warm):
    (first,) = _write([_grid()], tmp_path, "grid")
    S.observe(store_url, "app", first)
    (doomed,) = _write([_runs(7, 3)], tmp_path, "doomed")
    marker = tmp_path / "marker"
    started = time.monotonic()
    killed = _start(warm, KILLED, store_url, str(marker), doomed)
    *others, after = _write([_runs(50 + i, 2) for i in range(N_PROCESSES)], tmp_path, "other")
    waiting = [_start(warm, WORKER, store_url, chunk) for chunk in others]
    while not marker.exists():
        assert killed.poll() is None and time.monotonic() < started + 90, killed.stderr.read()
        time.sleep(0.05)
    time.sleep(max(0.0, started + 2.0 - time.monotonic()))  # the others are started and wait for its lock
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(30)
    _finish(waiting)
    assert S.observe(store_url, "app", after).update_no == N_PROCESSES + 1  # and the store goes on
    _check(store_url, [first, *others, after], N_PROCESSES + 1, tmp_path, "writer killed")
    lost = set(_content(pd.read_csv(doomed))) & set(_content(S.runs(store_url, "app")))
    print(f"  the killed writer's uncommitted runs: 3 written, {len(lost)} found")
    assert not lost


def test_observing_a_file_again_adds_nothing(store_url, tmp_path):
    grid = _grid()
    (path,) = _write([grid], tmp_path, "grid")
    assert S.observe(store_url, "app", path).run_ids
    again = S.observe(store_url, "app", path)
    assert (again.run_ids, again.n_skipped, again.update_no) == ([], 32, 1)
    assert "nothing added, no update" in again.lines()[0]
    more = pd.concat([grid.iloc[:2], _runs(3, 2)], ignore_index=True)
    rep = S.observe(store_url, "app", more)
    assert (len(rep.run_ids), rep.n_skipped, rep.update_no) == (2, 2, 2)
    twice = pd.concat([_runs(4, 1)] * 2, ignore_index=True)  # a repeated measurement, same time
    assert len(S.observe(store_url, "app", twice).run_ids) == 2
    assert len(S.observe(store_url, "app", grid.iloc[:3], allow_duplicates=True).run_ids) == 3
    assert S.verify(store_url, "app")["runs"] == 32 + 2 + 2 + 3
    assert S.observe(store_url, "app", twice).run_ids == []
    assert _identities(store_url).count(None) == 3


def test_aggregate_observes_one_run_per_configuration(store_url):
    grid = _grid()
    reps = pd.concat([grid, grid.assign(time=grid["time"] * 1.1), grid.assign(time=grid["time"] * 1.3)])
    S.observe(store_url, "app", reps, aggregate="median")
    stored = S.runs(store_url, "app")
    assert len(stored) == 32
    np.testing.assert_allclose(np.sort(stored["time"]), np.sort(grid["time"] * 1.1))


def test_reading_a_missing_store_creates_nothing(store_url):
    with pytest.raises(StoreError, match="no such store|not an automodel store") as err:
        S.ranking(store_url, "app")
    assert "\n" not in str(err.value)
    if "://" not in store_url:
        assert not Path(store_url).exists()
    else:
        count = S.open_store(store_url).transaction(  # a writer creates the tables
            lambda conn: conn.execute(text("SELECT count(*) FROM applications")).scalar())
        assert count == 0


def test_a_store_from_before_run_identities_is_migrated(store_url, tmp_path):
    (path,) = _write([_grid()], tmp_path, "grid")
    S.observe(store_url, "app", path)
    old = S.Store(store_url)
    with old.engine.begin() as conn:  # back to schema version 1: no identity column, no index
        conn.execute(text("DROP INDEX uq_runs_identity"))
        conn.execute(text("ALTER TABLE runs DROP COLUMN identity"))
    old.dispose()
    assert len(S.ranking(store_url, "app")) == 10  # opening migrates it
    assert None not in _identities(store_url)
    assert S.observe(store_url, "app", path).run_ids == []  # its runs got their identities


def test_a_store_of_schema_version_2_is_migrated_and_read(store_url):
    """A store written before the anomaly window: its runs indexed on app_id alone, its history likewise,
    a state blob without the live candidates. Opening it adds the indexes the window query needs and
    drops the retired ones; its state is read (the live candidates from their rows) and updated."""
    S.observe(store_url, "app", _grid())
    ranked = S.ranking(store_url, "app", top=None)
    old = S.Store(store_url)
    with old.engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_runs_app_id"))
        conn.execute(text("DROP INDEX ix_history_app_update"))
        conn.execute(text("CREATE INDEX ix_runs_app ON runs (app_id)"))
        conn.execute(text("CREATE INDEX ix_history_app ON history (app_id)"))
        arrays = db.unpack(conn.execute(select(schema.state.c.arrays)).scalar_one(), "state")
        del arrays["alive"]
        conn.execute(schema.state.update().values(arrays=db.pack(**arrays)))
    old.dispose()
    again = S.ranking(store_url, "app", top=None)  # opening migrates it
    assert again["id"].tolist() == ranked["id"].tolist()
    indexes = S.open_store(store_url).transaction(lambda conn: {
        t: {i["name"] for i in inspect(conn).get_indexes(t)} for t in ("runs", "history")}, write=False)
    assert {"ix_runs_app_id", "uq_runs_identity"} <= indexes["runs"] and "ix_runs_app" not in indexes["runs"]
    assert "ix_history_app_update" in indexes["history"] and "ix_history_app" not in indexes["history"]
    assert len(S.observe(store_url, "app", _runs(1, 2)).run_ids) == 2
    assert S.verify(store_url, "app")["fitted"] == 34


def test_postgresql_keeps_the_state_blob_without_pglz(postgres):
    """The state blob, rewritten by every update, is kept lz4-compressed (else uncompressed) instead of
    with PostgreSQL's default, pglz (1.3 to 2.2 ms of each update): in a new store, and in an older one
    once its owner opens it; a role that does not own the tables reads and writes it as it is."""
    url = postgres.fresh_database()
    S.observe(url, "app", _grid())
    old = S.Store(url)
    assert old.transaction(schema.blob_storage, write=False) is None
    writer = "writer_" + url.rpartition("/")[2]
    with old.engine.begin() as conn:  # as a store of an earlier version has it
        conn.execute(text("ALTER TABLE state ALTER COLUMN arrays SET STORAGE EXTENDED"))
        if conn.dialect.server_version_info >= (14,):
            conn.execute(text("ALTER TABLE state ALTER COLUMN arrays SET COMPRESSION pglz"))
        assert schema.blob_storage(conn) is not None
        conn.execute(text(f"CREATE ROLE {writer} LOGIN"))
        conn.execute(text(f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {writer}"))
        conn.execute(text(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {writer}"))
    old.dispose()
    other = url.replace(f"{USER}@", f"{writer}@")
    assert len(S.observe(other, "app", _runs(2, 2)).run_ids) == 2  # not the owner: not altered
    assert S.open_store(other).transaction(schema.blob_storage, write=False) is not None
    assert len(S.ranking(url, "app")) == 10  # the owner opening it alters it
    assert S.open_store(url).transaction(schema.blob_storage, write=False) is None
    assert len(S.observe(url, "app", _runs(1, 2)).run_ids) == 2


def _failure(sqlite: bool, transient: bool) -> OperationalError:
    """An error as the driver raises it: SQLite's locked file, PostgreSQL's serialisation failure, or
    a missing table."""
    if sqlite:
        return OperationalError("SELECT", {}, sqlite3.OperationalError(
            "database is locked" if transient else "no such table: runs"))
    cause = type("Failure", (Exception,), {"sqlstate": "40001" if transient else "42P01"})("failure")
    return OperationalError("SELECT", {}, cause)


@pytest.mark.parametrize("transient", [True, False])
def test_transient_failures_are_retried_others_reported_at_once(store_url, monkeypatch, transient):
    monkeypatch.setattr(db, "BACKOFF_S", 0.001)
    monkeypatch.setenv(db.RETRY_VARIABLE, "0.05")
    store = S.Store(store_url)
    failure, calls = _failure(store.is_sqlite, transient), []

    def flaky(conn, failures: int) -> int:
        calls.append(conn)
        if len(calls) <= failures:
            raise failure
        return conn.execute(text("SELECT 1")).scalar()

    if transient:
        assert store.transaction(lambda conn: flaky(conn, 2)) == 1 and len(calls) == 3
        calls.clear()
    with pytest.raises(StoreError) as err:
        store.transaction(lambda conn: flaky(conn, 10 ** 6))
    assert (len(calls) > 3 if transient else len(calls) == 1) and "\n" not in str(err.value)
    assert ("gave up after" in str(err.value)) is transient
    store.dispose()


def test_a_restarted_server_is_waited_for(postgres, monkeypatch):
    url = postgres.fresh_database()
    S.observe(url, "app", _grid())
    store = S.Store(url)  # its pooled connection dies with the server
    waits, sleep = [], time.sleep
    monkeypatch.setattr(db.time, "sleep", lambda s: waits.append(s) or sleep(s))
    postgres.stop("fast")
    restart = threading.Timer(0.5, postgres.start)
    restart.start()
    try:
        assert len(S.ranking(store, "app")) == 10 and waits  # refused while down, retried
    finally:
        restart.join()
        store.dispose()


def test_an_unreachable_server_is_one_line_within_its_retry_budget(capsys, monkeypatch):
    monkeypatch.setenv(db.RETRY_VARIABLE, "1.5")
    monkeypatch.setattr(db, "NOTE_AFTER_S", 0.2)
    url = f"postgresql://me:secret@127.0.0.1:{free_port()}/runs"
    started = time.monotonic()
    assert main(["ranking", "--store", url, "--app", "lu"]) == 2
    note, error = capsys.readouterr().err.splitlines()  # a note once the retries have lasted a while
    assert time.monotonic() - started < 10
    assert note.startswith("automodel: note: postgresql://me:***@127.0.0.1") and "retrying for up to 1.5 s" in note
    assert error.startswith("automodel: error:") and "gave up after" in error
    assert "127.0.0.1" in error and "secret" not in note + error


# -- the observe contract on every backend of the store's interface, the in-memory store among them -----------


def _scenario(target) -> list[S.ObserveReport]:
    """A search, batches with anomalies, a batch observed again, a re-admission and an exclusion."""
    reports = [S.observe(target, "app", _grid())]
    batch = _runs(7, 30)
    batch.loc[[5, 9, 21], "time"] *= [3.0, 0.2, 4.0]
    reports += [S.observe(target, "app", batch.iloc[i:i + 5]) for i in range(0, 30, 5)]
    reports.append(S.observe(target, "app", batch.iloc[:5]))
    flagged = [run_id for r in reports for run_id, _ in r.flagged]
    assert flagged, "the scenario flags a run"
    reports.append(S.readmit(target, "app", flagged[:1]))
    reports.append(S.exclude(target, "app", reports[1].run_ids[:2]))
    return reports


def _reads(target) -> dict[str, object]:
    """What the readers (:mod:`automodel.store.query`) return, but the clock's times."""
    pruned = S.ranking(target, "app", None, pruned=True).drop(columns="at")  # ties of score in any order
    pruned = pruned.sort_values(["update", "score", "id"], na_position="first", ignore_index=True)
    return {"live": S.ranking(target, "app", top=None), "pruned": pruned,
            "history": S.history(target, "app").drop(columns="at"),
            "runs": S.runs(target, "app").drop(columns="observed_at"),
            "flagged": S.runs(target, "app", ("flagged",)).drop(columns="observed_at"),
            "leader": S.leader_model(target, "app").to_dict(), "second": S.leader_model(target, "app", 1).to_dict(),
            "verify": S.verify(target, "app")}


def test_every_backend_reports_as_a_sqlite_store(storage, tmp_path):
    """The same observes, re-admissions and exclusions give the same reports (ranking, leaders, flags,
    pruning, run and candidate ids) on every backend as on a SQLite file, and the readers the same
    rankings, history, runs, leading models and checks."""
    reference = str(tmp_path / "reference.db")
    got = _scenario(storage)
    assert got == _scenario(reference)
    assert [r.update_no for r in got] == [1, 2, 3, 4, 5, 6, 7, 7, 8, 9]  # the observe again is no update
    assert (got[7].run_ids, got[7].n_skipped) == ([], 5)
    mine, theirs = _reads(storage), _reads(reference)
    assert len(mine["pruned"]) and len(mine["flagged"])
    for key, value in mine.items():
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(value, theirs[key], obj=key)
        else:
            assert value == theirs[key], key


def test_every_backend_keeps_load_samples(storage, tmp_path):
    """Load samples recorded and imported read back the same, by time, per host, and forecast the same
    (:mod:`automodel.store.machine_load`); a store without samples forecasts from an application's runs."""
    csv = tmp_path / "samples.csv"
    pd.DataFrame({"time": [30.0, 10.0, 20.0, 40.0], "host": ["b", "a", "a", "b"], "cpu": [0.5, 0.9, 0.8, 0.6],
                  "bw": [1.0, 0.7, 0.8, 0.9]}).to_csv(csv, index=False)
    for target in (storage, str(tmp_path / "reference.db")):
        S.record(target, cpu=0.25, host="a", at=5.0)
        assert S.import_samples(target, csv) == 4
    mine, theirs = S.samples(storage), S.samples(str(tmp_path / "reference.db"))
    pd.testing.assert_frame_equal(mine, theirs)
    assert mine["at"].tolist() == [5.0, 10.0, 20.0, 30.0, 40.0]
    pd.testing.assert_frame_equal(S.samples(storage, "b"), theirs[theirs["host"] == "b"].reset_index(drop=True))
    assert S.forecast_load(storage, "cpu") == S.forecast_load(str(tmp_path / "reference.db"), "cpu")


def test_every_session_reads_what_it_wrote(storage):
    """The session's readers on every backend: candidates by status, the persisted state, the fitted
    runs (all, or the last stored), the runs by status, the history and the pruned candidates."""
    from automodel.store.storage import open_storage

    reports = [S.observe(storage, "app", _grid()), S.observe(storage, "app", _runs(5, 6))]
    S.exclude(storage, "app", reports[1].run_ids[:1])
    st = open_storage(storage)

    def read(db):
        app = db.find_app("app")
        return (app, db.candidate_ids(app), db.candidate_ids(app, "live"), db.candidate_ids(app, "pruned"),
                db.pool_state(app), db.fitted_runs(app), db.fitted_runs(app, 3), db.runs(app),
                db.runs(app, ("excluded",)), db.history(app), db.pruned_candidates(app))

    app, ids, live, pruned, state, every, last, runs, excluded, history, gone = st.session(read, write=False)
    assert sorted(live + pruned) == sorted(ids) and len(live) == reports[1].n_live
    assert sorted(r.id for r in gone) == pruned and [r.id for r in gone] == [ids[r.idx] for r in gone]
    assert [r.pruned_update for r in gone] == sorted(r.pruned_update for r in gone) and gone[0].pruned_reason
    assert [(r.update_no, r.event) for r in history][-1][0] == 3 and len(history) == 3
    assert state.n_runs == len(every[0]) == 32 + 6 - 1 - sum(len(r.flagged) for r in reports)
    assert np.array_equal(last[0], every[0][-3:]) and np.array_equal(last[2], every[2][-3:])
    assert set(last[1]) == set(app.params) and np.array_equal(last[1]["n"], every[1]["n"][-3:])
    assert [r.id for r in runs] == sorted(r.id for r in runs) and len(runs) == 38
    assert [r.id for r in excluded] == reports[1].run_ids[:1] and excluded[0].status == "excluded"


def test_a_failed_transaction_leaves_the_store_as_it_was(storage):
    """Work that raises inside a session writes nothing: the runs it inserted are gone."""
    from automodel.store.storage import open_storage

    S.observe(storage, "app", _grid())
    st = open_storage(storage)
    identity = schema.run_identities([{"n": 1.0, "p": 1.0, "cpu": 1.0, "bw": 1.0, "time": 1.0}])

    def insert_then_fail(db):
        app = db.find_app("app", lock=True)
        db.insert_runs(app, {q: np.ones(1) for q in (*app.params, "time")}, app.n_updates + 1, identity)
        raise RuntimeError("in the middle of an update")

    with pytest.raises(RuntimeError, match="in the middle"):
        st.session(insert_then_fail)
    assert st.session(lambda db: db.stored_identities(db.find_app("app"), identity), write=False) == set()
    assert S.observe(storage, "app", _runs(3, 2)).update_no == 2


def test_threads_observing_disjoint_chunks_store_every_run_once(storage):
    """Threads sharing one store handle: each run stored once, update numbers 2..N+1 without gaps."""
    from automodel.store.storage import open_storage

    S.observe(storage, "app", _grid())
    chunks = [_runs(200 + w, 3) for w in range(N_PROCESSES)]
    reports: list[S.ObserveReport] = []
    threads = [threading.Thread(target=lambda c=c: reports.append(S.observe(storage, "app", c))) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(r.update_no for r in reports) == list(range(2, N_PROCESSES + 2))
    ids = [i for r in reports for i in r.run_ids]
    assert len(ids) == len(set(ids)) == 3 * N_PROCESSES
    st = open_storage(storage)
    last = st.session(lambda db: db.last_history(db.find_app("app")), write=False)
    assert (last.update_no, last.n_admitted) == (N_PROCESSES + 1, 32 + 3 * N_PROCESSES - sum(
        len(r.flagged) for r in reports))
