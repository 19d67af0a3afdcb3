"""Scale out: fit_many split by cost and run on 2 loky workers, on a joblib backend the caller chose, and
on a real dask.distributed cluster (2 worker processes on 127.0.0.1) gives the serial result exactly; so
does one large fit whose per-row scoring is split across the same kinds of workers."""

from __future__ import annotations

import json
import sys
import threading

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.errors import DataError
from automodel.kernels import fit_many as fit_many_mod
from automodel.search import score as score_mod
from automodel.search import workers as workers_mod
from automodel.kernels.fit_many import by_cost, fit_many
from automodel.model_file import load_models
from test_kernels_fit_many import _kernels


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    """Multi-stage groups (parameter n: 8 kernels, and 3 at other points) and batched ones (parameter p:
    12 kernels, and 3 at other points)."""
    def two(param: str, n_kernels: int) -> pd.DataFrame:
        values = np.array([100.0, 200, 400, 800, 1600, 3200]) if param == "n" else 2.0 ** np.arange(1, 7)
        return pd.concat([_kernels(param, values, n_kernels, seed=4),
                          _kernels(param, values[:5] * 2, 3, seed=5).assign(kernel=lambda f: f["kernel"] + "b")],
                         ignore_index=True)

    return {"staged": two("n", 8), "batched": two("p", 12)}


@pytest.fixture(scope="module")
def serial(frames):
    return {name: fit_many(frame, jobs=1) for name, frame in frames.items()}


def _same(results: dict, serial: dict) -> None:
    for name, result in results.items():
        _same_one(result, serial[name])


def _same_one(result, serial) -> None:
    assert "in parallel" in result.notes[0] and "in parallel" not in serial.notes[0]
    pd.testing.assert_frame_equal(result.summary, serial.summary, check_exact=True)
    assert list(result.models) == list(serial.models)
    for name, model in serial.models.items():
        assert result.models[name].formula == model.formula
        assert result.models[name].metrics == model.metrics


def test_the_serial_runs_have_both_kinds_of_group(serial):
    assert "0 group(s) solved batched, 2 group(s) of kernels searched one by one" in serial["staged"].notes[0]
    assert "2 group(s) solved batched, 0 group(s) of kernels searched" in serial["batched"].notes[0]
    assert len(serial["staged"].models) == 11 and len(serial["batched"].models) == 15


def test_tasks_are_cut_by_cost_largest_first(frames):
    from automodel.kernels.groups import groups

    _, found, _, _ = groups(frames["staged"], "kernel", "time", ["n"], "t", 0, "median")
    tasks = by_cost([(g, None, "t", i) for i, g in enumerate(found)], 2)
    costs = [len(t[0].names) * len(t[0].points) for t in tasks]
    assert costs == sorted(costs, reverse=True) and max(costs) <= 2 * sum(costs) / 8
    kernels = sorted(k for t in tasks for k in t[0].names)
    assert kernels == sorted(n for g in found for n in g.names)  # every kernel once


def test_two_loky_workers_give_the_serial_result(frames, serial):
    _same({k: fit_many(f, jobs=2, parallel_after=0.0) for k, f in frames.items()}, serial)


def test_the_joblib_backend_the_caller_chose_is_used(frames, serial, monkeypatch):
    import joblib

    threads = set()
    run = fit_many_mod._run

    def spy(task):
        threads.add(threading.current_thread().name)
        return run(task)

    monkeypatch.setattr(fit_many_mod, "_run", spy)
    with joblib.parallel_backend("threading", n_jobs=3):
        results = {k: fit_many(f, parallel_after=0.0) for k, f in frames.items()}
    _same(results, serial)
    assert "(3 workers)" in results["staged"].notes[0]  # the worker count of the active backend
    assert threads - {threading.main_thread().name}  # tasks ran on the backend's threads


def test_no_dask_is_a_one_line_error(frames, monkeypatch, capsys, tmp_path):
    frame = frames["batched"]
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails as without the extra
    with pytest.raises(DataError, match=r"pip install 'automodel-hpc\[dask\]'"):
        fit_many(frame, scheduler="tcp://127.0.0.1:1")
    csv = tmp_path / "runs.csv"
    frame.to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'automodel-hpc[dask]'" in err


def test_a_scheduler_that_never_answers_is_one_line_within_the_bound(frames, monkeypatch):
    """dask bounds the connect but not its read of the scheduler's handshake: an address that accepted
    and said nothing held ``kernels --scheduler`` for ever (killed after 120 s)."""
    pytest.importorskip("dask.distributed")
    import socket
    import time

    monkeypatch.setattr(workers_mod, "CONNECT_S", 1.0)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (the backlog), never answers
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(DataError) as err:
            fit_many(frames["batched"], scheduler=address)
    assert time.monotonic() - start < 15
    assert str(err.value) == f"scheduler {address}: cannot connect (no answer to dask's handshake within 2 s)"


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("dask.distributed", reason="dask's distributed scheduler is not installed "
                                                                 "(pip install 'automodel-hpc[dask]')")
    import dask

    with dask.config.set({"distributed.nanny.pre-spawn-environ": workers_mod.DASK_WORKER_ENVIRON}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                     dashboard_address=None, scheduler_port=0) as cl, \
            distributed.Client(cl, timeout="30s") as client:
        client.wait_for_workers(2, timeout=30)
        yield client


def test_a_dask_cluster_gives_the_serial_result(frames, serial, cluster, tmp_path, capsys):
    results = {k: fit_many(f, scheduler=cluster) for k, f in frames.items()}
    _same(results, serial)
    assert "(2 workers of <Client" in results["staged"].notes[0]
    frame = frames["staged"]  # the cluster's threads, not this machine's cores
    csv, out = tmp_path / "runs.csv", tmp_path / "summary.csv"
    frame.to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--scheduler", cluster.scheduler.address, "--out", str(out)]) == 0
    assert "in parallel (2 workers of tcp://127.0.0.1:" in " ".join(capsys.readouterr().out.split())
    pd.testing.assert_series_equal(pd.read_csv(out)["formula"], serial["staged"].summary["formula"])


def test_ctrl_c_keeps_the_kernels_whose_tasks_finished(frames, serial, monkeypatch, tmp_path, capsys):
    """A KeyboardInterrupt while tasks run (here after the first completed one) stops cleanly: the
    finished kernels keep their models (equal to the serial run's), the others say why they have none,
    and the command line writes what finished and exits 130."""
    from joblib import parallel_backend

    execute = fit_many_mod._execute

    def first_then_ctrl_c(tasks, jobs, client):
        for item in execute(tasks, jobs, client):
            yield item
            raise KeyboardInterrupt

    monkeypatch.setattr(fit_many_mod, "_execute", first_then_ctrl_c)
    frame = frames["staged"]
    with parallel_backend("threading", n_jobs=2):
        result = fit_many(frame, parallel_after=0.0)
    assert result.interrupted and "stopped (Ctrl-C)" in result.notes[-1]
    assert 0 < len(result.models) < len(serial["staged"].models)
    for name, model in result.models.items():
        assert model.formula == serial["staged"].models[name].formula
    notes = result.summary.set_index("kernel")["note"]
    assert (notes[~notes.index.isin(list(result.models))] == fit_many_mod.INTERRUPTED).all()
    run, calls = fit_many_mod._run, []

    def second_ctrl_c(task):  # serially: Ctrl-C during the second group's task
        calls.append(task)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run(task)

    monkeypatch.setattr(fit_many_mod, "_run", second_ctrl_c)
    csv, out = tmp_path / "runs.csv", tmp_path / "models.json"
    frame.to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--out", str(out), "--jobs", "1"]) == 130
    assert "interrupted: kept the kernels whose tasks had finished" in capsys.readouterr().err
    assert len(load_models(out)) == len(calls[0][0].names)  # the first group's, written


# -- one large fit -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    """2000 runs of the 4-parameter workload of benchmarks.scaling (no two at one configuration)."""
    from benchmarks.scaling import runs

    return runs(2000)


@pytest.fixture(scope="module")
def serial_fit(runs):
    return automodel.fit(runs, templates="none", progress=False)


@pytest.fixture
def parallel_path(monkeypatch) -> list[int]:
    """Every scoring of a fit with workers on them (the thresholds lowered, the data being small), and
    the number of pieces of each call that went to the workers."""
    monkeypatch.setattr("automodel.fitting.PARALLEL_ROWS", 0)
    monkeypatch.setattr(score_mod, "PARALLEL_PAIR_ROWS", 0)
    pieces, run = [], workers_mod.Workers.map

    def spy(self, func, shared, items):
        pieces.append(len(items))
        return run(self, func, shared, items)

    monkeypatch.setattr(workers_mod.Workers, "map", spy)
    return pieces


def _same_fit(result, serial) -> None:
    """The leaderboard, the choice, every model's coefficients and band: bit for bit."""
    pd.testing.assert_frame_equal(result.leaderboard, serial.leaderboard, check_exact=True)
    chosen, expected = result.selection, serial.selection
    assert result.best.formula == serial.best.formula and chosen.reason == expected.reason
    assert (chosen.index, chosen.threshold) == (expected.index, expected.threshold)
    np.testing.assert_array_equal(chosen.equivalent, expected.equivalent)
    assert [m.to_json() for m in result.models] == [m.to_json() for m in serial.models]
    assert result.notes == serial.notes


def test_a_large_fit_on_two_loky_workers_gives_the_serial_result(runs, serial_fit, parallel_path):
    _same_fit(automodel.fit(runs, templates="none", progress=False, jobs=2), serial_fit)
    assert len(parallel_path) > 10 and max(parallel_path) >= 2  # search, leaderboard metrics, forward refits


def test_a_large_fit_on_the_joblib_backend_the_caller_chose(runs, serial_fit, parallel_path):
    import joblib

    with joblib.parallel_backend("threading", n_jobs=2):  # jobs=None: the backend's worker count
        _same_fit(automodel.fit(runs, templates="none", progress=False), serial_fit)
    assert parallel_path


def test_a_fit_below_the_thresholds_stays_here(runs, serial_fit, monkeypatch):
    monkeypatch.setattr(workers_mod.Workers, "__init__", lambda *a: pytest.fail("workers started"))
    _same_fit(automodel.fit(runs, templates="none", progress=False, jobs=2), serial_fit)  # 2000 rows: small


def test_a_large_fit_on_a_dask_cluster_gives_the_serial_result(runs, serial_fit, parallel_path, cluster, tmp_path,
                                                               capsys):
    _same_fit(automodel.fit(runs, templates="none", progress=False, scheduler=cluster), serial_fit)
    assert parallel_path
    csv = tmp_path / "runs.csv"
    runs.to_csv(csv, index=False)
    assert main(["fit", str(csv), "--templates", "none", "--quiet", "--json",
                 "--scheduler", cluster.scheduler.address]) == 0
    assert json.loads(capsys.readouterr().out)["chosen"]["formula"] == serial_fit.best.formula


def test_fit_jobs_on_the_command_line(runs, serial_fit, parallel_path, tmp_path, capsys, monkeypatch):
    csv = tmp_path / "runs.csv"
    runs.to_csv(csv, index=False)
    assert main(["fit", str(csv), "--templates", "none", "--quiet", "--json", "--jobs", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["chosen"]["formula"] == serial_fit.best.formula
    assert parallel_path
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # without the extra: a one-line error
    assert main(["fit", str(csv), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'automodel-hpc[dask]'" in err


@pytest.mark.parametrize("jobs", ["100000", "-5", "5"])
@pytest.mark.parametrize("command", ["fit", "kernels"])
def test_jobs_beyond_the_machines_cores_are_refused_in_one_line(tmp_path, capsys, monkeypatch, command, jobs):
    """Before: ``--jobs 100000`` was taken (as many worker processes once the work was large) and
    ``--jobs -5`` read by joblib as one worker, exit 0; now one rule (workers.default_jobs) for every
    command that takes --jobs: exit 2, one line."""
    monkeypatch.setattr(workers_mod.os, "cpu_count", lambda: 4)
    path = tmp_path / "runs.csv"
    frame = _kernels("p", 2.0 ** np.arange(1, 6), 2)
    (frame if command == "kernels" else frame[frame["kernel"] == "k0"].drop(columns="kernel")).to_csv(path, index=False)
    assert main([command, str(path), "--jobs", jobs, "--quiet"] if command == "fit" else
                [command, str(path), "--jobs", jobs]) == 2
    assert capsys.readouterr().err == ("automodel: error: jobs: expected a whole number of workers from 1 to 4 (this "
                                       "machine's cores) or from -4 to -1 (-1: every core, -2: every core but one), "
                                       f"got {jobs}\n")
    assert workers_mod.default_jobs(4, 1) == 4 and workers_mod.default_jobs(-4, 1) == -4
