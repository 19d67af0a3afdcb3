"""observe: bad input is a one-line error and adds nothing; an observe reads the anomaly window, not
every run, and writes in batches (concurrency, idempotence and the other backends:
test_store_conformance.py). Shared runs of a known formula for the store tests."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import event

from automodel import store as S
from automodel.errors import DataError, StoreError
from automodel.search import online
from automodel.store import pool as pool_module

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
    the ANOMALY_WINDOW fitted runs stored last, with one query, and never the whole run table."""
    _window(monkeypatch, 10)
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    S.observe(path, "app", _runs(1, 30))
    read: list[tuple[int | None, int]] = []
    real = pool_module.fitted_runs

    def counted(conn, app, last=None):
        out = real(conn, app, last)
        read.append((last, len(out[0])))
        return out

    def forbidden(*args, **kwargs):
        raise AssertionError("run_frame read every run on the observe path")

    monkeypatch.setattr(pool_module, "fitted_runs", counted)
    monkeypatch.setattr(pool_module, "run_frame", forbidden)
    rep = S.observe(path, "app", _runs(2, 3))
    assert read == [(10, 10)] and len(rep.run_ids) == 3 and rep.n_admitted == 65
    monkeypatch.undo()
    assert S.verify(path, "app")["fitted"] == 65  # the statistics are those of every fitted run


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


def test_a_recreated_store_does_not_reuse_the_pool_layout_it_replaced(tmp_path):
    """The process keeps each application's terms and candidates by store, id and creation time."""
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    path.unlink()
    other = _grid(5).drop(columns=["cpu", "bw"])
    S.observe(path, "app", other)
    S.observe(path, "app", _runs(6, 2).drop(columns=["cpu", "bw"]))
    assert "cpu" not in S.leader_model(path, "app").formula and S.verify(path, "app")["runs"] == 34
