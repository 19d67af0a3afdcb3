"""observe: concurrent observers lose no run, a killed writer leaves a consistent store, bad input is a
one-line error and adds nothing."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

from automodel import store as S
from automodel.errors import DataError, StoreError


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


def _worker(path: str, seed: int, n_batches: int) -> None:
    for b in range(n_batches):
        S.observe(path, "app", _runs(1000 * seed + b, 2))


def test_concurrent_observers_lose_no_run(tmp_path):
    path = str(tmp_path / "shared.db")
    S.observe(path, "app", _grid())
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(path, s, 4)) for s in range(1, 4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    counts = S.verify(path, "app")
    assert counts["runs"] == 32 + 3 * 4 * 2
    hist = S.history(path, "app")
    assert sorted(hist["update"]) == list(range(1, 1 + 1 + 12))  # every observe got its own update
    assert hist["added"].sum() == counts["runs"]


_KILLED = textwrap.dedent("""
    import sys, time, pathlib
    from automodel import store as S
    obs = sys.modules["automodel.store.observe"]
    import pandas as pd
    real = obs.save_pool
    def slow(*a, **k):
        real(*a, **k)
        pathlib.Path(sys.argv[2]).write_text("inside")  # runs and state written, not committed
        time.sleep(60)
    obs.save_pool = slow
    S.observe(sys.argv[1], "app", pd.read_csv(sys.argv[3]))
""")


def test_killed_writer_leaves_a_consistent_store(tmp_path):
    path = str(tmp_path / "s.db")
    S.observe(path, "app", _grid())
    before = S.verify(path, "app")
    marker, batch = tmp_path / "marker", tmp_path / "batch.csv"
    _runs(7, 3).to_csv(batch, index=False)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, path, str(marker), str(batch)])
    try:
        deadline = time.time() + 90
        while not marker.exists():
            assert proc.poll() is None and time.time() < deadline, "writer ended before the marker"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
    after = S.verify(path, "app")
    assert after == before  # the uncommitted runs are gone, the statistics match the committed runs
    rep = S.observe(path, "app", _runs(8, 2))  # and the store keeps working
    assert S.verify(path, "app")["runs"] == before["runs"] + 2 and rep.update_no == 2


def test_bad_input_is_a_one_line_error(tmp_path):
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    with pytest.raises(DataError, match="'bw'"):
        S.observe(path, "app", _runs(1, 2).drop(columns=["bw"]))
    with pytest.raises(DataError, match="row 1, column 'time'"):
        S.observe(path, "app", _runs(1, 2).assign(time=[1.0, -1.0]))
    with pytest.raises(StoreError, match="no application 'other'; the store has app"):
        S.ranking(path, "other")
    assert S.verify(path, "app")["runs"] == 32  # failed observes added nothing
