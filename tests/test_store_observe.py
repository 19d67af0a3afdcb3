"""observe: bad input is a one-line error and adds nothing; an observe reads the anomaly window, not
every run, and writes in batches (concurrency, idempotence and the other backends:
test_store_conformance.py). Shared runs of a known formula for the store tests."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event, select, update

from automodel import data
from automodel import store as S
from automodel.errors import DataError, StoreError
from automodel.online import live as online
from automodel.store import schema
from automodel.store.db import pack, unpack
from automodel.store.sql import SqlSession

observe_module = sys.modules["automodel.store.observe"]  # automodel.store.observe is also the function


def _runs(seed: int, m: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = rng.choice(np.linspace(1000, 8000, 8), m)
    p = rng.choice([1.0, 2.0, 4.0, 8.0], m)
    cpu, bw = rng.uniform(0.5, 1, m), rng.uniform(0.5, 1, m)
    t = 2e-10 * n ** 3 / (p * cpu) + 3e-9 * n ** 2 * np.log2(p) / bw + 0.5
    return pd.DataFrame(dict(n=n, p=p, cpu=cpu, bw=bw, time=t * (1 + 0.02 * rng.standard_normal(m))))


def _grid(seed: int = 0) -> pd.DataFrame:
    g = _runs(seed, 32)
    g["n"] = np.tile(np.linspace(1000, 8000, 8), 4)
    g["p"] = np.repeat([1.0, 2.0, 4.0, 8.0], 8)
    g["time"] = (2e-10 * g.n ** 3 / (g.p * g.cpu) + 3e-9 * g.n ** 2 * np.log2(g.p) / g.bw + 0.5) * \
        (1 + 0.02 * np.random.default_rng(seed).standard_normal(32))
    return g


def test_bad_input_is_a_one_line_error(tmp_path):
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    with pytest.raises(DataError, match="'bw'"):
        S.observe(path, "app", _runs(1, 2).drop(columns=["bw"]))
    with pytest.raises(DataError, match="row 1, column 'time'"):
        S.observe(path, "app", _runs(1, 2).assign(time=[1.0, -1.0]))
    with pytest.raises(StoreError, match="no application 'other'; the store has app"):
        S.ranking(path, "other")
    empty, header = tmp_path / "empty.csv", tmp_path / "header.csv"
    empty.write_text("")
    header.write_text("n,p,cpu,bw,time\n")
    for bad in (empty, header):
        with pytest.raises(DataError, match="no rows|empty"):
            S.observe(path, "app", bad)
    assert S.verify(path, "app")["runs"] == 32  # failed observes added nothing


def _window(monkeypatch, size: int) -> None:
    """Make the anomaly rule's window ``size`` runs (where the online stage and the store read it)."""
    monkeypatch.setattr(online, "ANOMALY_WINDOW", size)
    monkeypatch.setattr(observe_module, "ANOMALY_WINDOW", size)


def test_an_observe_reads_the_window_not_every_run(tmp_path, monkeypatch):
    """Issue 18: an observe read and evaluated every stored run; it reads the persisted statistics and
    recent runs (the ANOMALY_WINDOW fitted runs stored last) and no stored run. After an exclude or a
    readmit, whose state keeps no recent runs, it reads them with one query; never the whole run table."""
    _window(monkeypatch, 10)
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    S.observe(path, "app", _runs(1, 30))
    read: list[tuple[int | None, int]] = []
    real = SqlSession.fitted_runs

    def counted(db, app, last=None):
        out = real(db, app, last)
        read.append((last, len(out[0])))
        return out

    def forbidden(*args, **kwargs):
        raise AssertionError("run_frame read every run on the observe path")

    monkeypatch.setattr(SqlSession, "fitted_runs", counted)
    monkeypatch.setattr(SqlSession, "runs", forbidden)
    rep = S.observe(path, "app", _runs(2, 3))
    assert read == [] and len(rep.run_ids) == 3 and rep.n_admitted == 65
    S.exclude(path, "app", rep.run_ids[:1])
    rep = S.observe(path, "app", _runs(3, 2))
    assert read == [(10, 10)] and len(rep.run_ids) == 2 and rep.n_admitted == 66
    S.observe(path, "app", _runs(4, 2))
    assert read == [(10, 10)]
    monkeypatch.undo()
    assert S.verify(path, "app")["fitted"] == 68  # the statistics are those of every fitted run


def test_a_stream_ranks_as_when_every_update_reads_its_window_from_the_runs(tmp_path, monkeypatch):
    """Runs observed one at a time, some of them anomalous, rank, prune and flag as when every update
    reads the anomaly rule's recent runs from the run table (a state that keeps none)."""
    _window(monkeypatch, 12)
    batch = _runs(7, 50)
    batch.loc[[20, 33, 41], "time"] *= [3.0, 0.2, 5.0]

    def stream(path):
        S.observe(path, "app", _grid())
        return [S.observe(path, "app", batch.iloc[i:i + 1]) for i in range(len(batch))]

    kept = stream(tmp_path / "kept.db")
    save = SqlSession.save_pool
    monkeypatch.setattr(SqlSession, "save_pool", lambda db, app, pool, recent=None: save(db, app, pool))
    read = stream(tmp_path / "read.db")
    assert kept == read and sum(len(r.flagged) for r in kept) >= 2
    same = ["update", "event", "added", "admitted", "flagged", "live", "pruned", "cutoff", "leader_id",
            "leader_score", "leader", "top"]
    pd.testing.assert_frame_equal(S.history(tmp_path / "kept.db", "app")[same],
                                  S.history(tmp_path / "read.db", "app")[same])
    monkeypatch.undo()
    assert S.verify(tmp_path / "kept.db", "app")["runs"] == 82


def test_pruned_candidates_are_written_in_one_statement(tmp_path):
    """One executemany UPDATE marks every pruned candidate, each with the score it had when deleted."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    store = S.open_store(path)
    before = S.ranking(path, "app", top=None)
    statements: list[tuple[str, bool]] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append((statement.split()[0:2], executemany))

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        rep = S.observe(path, "app", _runs(3, 2))
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    updates = [many for words, many in statements if words == ["UPDATE", "candidates"]]
    assert updates == [True] and rep.n_pruned > 0
    pruned = S.ranking(path, "app", top=None, pruned=True)
    now = pruned[pruned["update"] == rep.update_no]
    assert len(now) == rep.n_pruned and set(now["id"]) <= set(before["id"])
    assert not set(now["id"]) & set(S.ranking(path, "app", top=None)["id"])
    assert now["score"].notna().all() and (now["score"] >= rep.cutoff).all()
    assert now["reason"].str.contains(f"after update {rep.update_no}").all()


def test_run_ids_follow_the_rows_of_a_batch(store_url):
    """The batched insert returns each run's id in the order of the rows, on every backend."""
    S.observe(store_url, "app", _grid())
    batch = _runs(4, 6)
    rep = S.observe(store_url, "app", batch)
    stored = S.runs(store_url, "app").set_index("id").loc[rep.run_ids]
    np.testing.assert_array_equal(stored["time"].to_numpy(), batch["time"].to_numpy())
    assert rep.run_ids == sorted(rep.run_ids)


def test_parts_count_repetitions_within_each_and_get_their_own_ids(tmp_path):
    """The service stores the requests that arrive together as one observe: the rows were one batch, so
    a run two requests both sent was its repetition and stored twice, and when one was skipped every
    request was answered with the ids of all. With ``parts``, as if they had come one after the other."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    stored, fresh = _grid().iloc[[3]], _runs(5, 3)
    rows = pd.concat([fresh.iloc[[0]], fresh.iloc[[0, 1]], stored, fresh.iloc[[1, 1, 2]]], ignore_index=True)
    rep = S.observe(path, "app", rows, parts=[1, 2, 1, 3])
    ids = rep.part_run_ids
    assert [len(i) for i in ids] == [1, 1, 0, 2] and rep.run_ids == [i for part in ids for i in part]
    assert rep.n_skipped == 3 and S.verify(path, "app")["runs"] == 32 + 4
    times = S.runs(path, "app").set_index("id")["time"]
    assert times[ids[0][0]] == fresh.time.iloc[0] and times[ids[1][0]] == fresh.time.iloc[1]
    assert list(times[ids[3]]) == [fresh.time.iloc[1], fresh.time.iloc[2]]  # the second 1 repeats part 3's own
    with pytest.raises(DataError, match="rows in parts"):
        S.observe(path, "app", rows, parts=[1, 2])
    failed = _runs(6, 2).assign(status=[0, 1])  # one part is the data: its failed run set aside as ever
    assert len(S.observe(path, "app", failed, parts=[2]).part_run_ids[0]) == 1


def test_a_run_that_leaves_no_candidate_a_score_is_refused_and_nothing_stored(tmp_path):
    """n = 1e100 in 1e-100 s (each within the range automodel fits) overflows every candidate's terms:
    the anomaly rule took a minimum over no leader (a ValueError traceback); judged by none, the run
    was then stored and every candidate pruned, the application without a model for good."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    before = S.ranking(path, "app", None)
    extreme = pd.DataFrame({"n": [1e100], "p": [1.0], "cpu": [1.0], "bw": [1.0], "time": [1e-100]})
    with pytest.raises(DataError, match=r"no candidate with a finite score .* n 1e\+100.*nothing stored"):
        S.observe(path, "app", extreme)
    assert S.verify(path, "app")["runs"] == 32
    pd.testing.assert_frame_equal(S.ranking(path, "app", None), before)


def test_runs_in_another_unit_than_seconds_are_stored_in_seconds(tmp_path):
    """The store keeps seconds: runs whose unit column or time column's name says ms are converted (they
    were stored as that many seconds, and predict --store answered 1000 times the time); values that are
    not times (a count's unit) are refused in one line."""
    path = tmp_path / "s.db"
    grid = _grid()
    S.observe(path, "app", grid.assign(time=lambda g: g.time * 1000, unit="ms"))
    np.testing.assert_allclose(np.sort(S.runs(path, "app")["time"]), np.sort(grid["time"]), rtol=1e-12)
    S.observe(path, "named", grid.assign(time_ms=lambda g: g.time * 1000).drop(columns="time"), time="time_ms")
    np.testing.assert_allclose(np.sort(S.runs(path, "named")["time"]), np.sort(grid["time"]), rtol=1e-12)
    with pytest.raises(DataError, match="column 'time': the values are .*, not times; the store keeps times"):
        S.observe(path, "counts", grid.assign(unit="PAPI_L3_TCM"))
    assert S.observe(path, "plain", grid.assign(unit="s")).n_admitted == 32


def test_a_recreated_store_does_not_reuse_the_pool_layout_it_replaced(tmp_path):
    """The process keeps each application's terms and candidates by store, id and creation time."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    path.unlink()
    other = _grid(5).drop(columns=["cpu", "bw"])
    S.observe(path, "app", other)
    S.observe(path, "app", _runs(6, 2).drop(columns=["cpu", "bw"]))
    assert "cpu" not in S.leader_model(path, "app").formula and S.verify(path, "app")["runs"] == 34


def test_verify_checks_the_recent_runs_the_state_keeps(tmp_path):
    """The state keeps the anomaly rule's recent runs (their parameters and times); verify compares them
    with the fitted runs stored last."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    S.observe(path, "app", _runs(1, 3))
    assert S.verify(path, "app")["fitted"] == 35
    st, state = S.open_store(path), schema.state
    with st.engine.begin() as conn:
        blob = conn.execute(select(state.c.arrays)).scalar_one()
        arrays = unpack(blob, "state")
        assert arrays["window"].shape == (35, 5)
        arrays["window"][-1, -1] *= 2.0
        conn.execute(update(state).values(arrays=pack(**arrays)))
    with pytest.raises(StoreError, match="recent runs of the state differ"):
        S.verify(path, "app")


def test_observe_reads_the_runs_of_load_without_aggregating(tmp_path):
    """An observe of an application the store has reads its runs with load_runs: the runs, columns and
    errors of automodel.data.load, without grouping the repetitions."""
    frame = pd.concat([_runs(8, 10), _runs(8, 3)], ignore_index=True).rename(columns={"time": "seconds"})
    ds, runs = data.load(frame, time="seconds"), data.load_runs(frame, time="seconds")
    pd.testing.assert_frame_equal(ds.runs, runs.runs)
    assert (ds.params, dict(ds.roles), ds.source, ds.notes) == (runs.params, dict(runs.roles), runs.source, runs.notes)
    for bad in (frame.assign(seconds=-1.0), frame.drop(columns=["p"]).assign(p="x")):
        with pytest.raises(DataError) as a:
            data.load(bad, time="seconds")
        with pytest.raises(DataError) as b:
            data.load_runs(bad, time="seconds")
        assert str(a.value) == str(b.value)
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid().rename(columns={"time": "seconds"}), time="seconds")
    rep = S.observe(path, "app", frame)  # the application's columns
    assert len(rep.run_ids) == 13 and S.verify(path, "app")["runs"] == 45
