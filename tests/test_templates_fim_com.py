"""Tests of the FiM-Com template and its queueing simulation (seed fim-bhimani-2019, sec. 3)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
import sympy

from automodel.errors import DataError, ModelFileError
from automodel.space.symbols import symbol
from automodel.templates import _fim_queue as fq
from automodel.templates.fim_com import TEMPLATE, FimComModel, simulate_frame

DATASETS = Path("/work/shared/datasets")
ZERO = dict(meta_mean=0.0, meta_log=0.0, init_mean=0.0, recv_mean=0.0)


def _brute_fifo_with_log_queue(a: np.ndarray, e: np.ndarray, k: float) -> np.ndarray:
    """Event-by-event reference for station M (eq. 14 as in the released broadcast.c)."""
    d = np.empty_like(a)
    prev = 0.0
    for i in range(len(a)):
        start = max(a[i], prev)
        waiting = int(np.sum(a <= start)) - i - 1
        d[i] = start + e[i] + k * np.log(max(waiting, 1))
        prev = d[i]
    return d


def test_lindley_and_job_sizes_by_hand():
    assert fq.lindley(np.array([0.0, 0.0, 5.0]), np.array([1.0, 2.0, 1.0])).tolist() == [1.0, 3.0, 6.0]
    assert fq.job_sizes(10.0, 4.0).tolist() == [4.0, 4.0, 2.0]
    assert fq.job_sizes(3.0, 4.0).tolist() == [3.0]
    with pytest.raises(DataError):
        fq.job_sizes(0.0, 1.0)


def test_metadata_station_matches_an_event_by_event_queue():
    rng = np.random.default_rng(7)
    for gap in ((0.01, 0.02), (0.1, 0.3), (1.0, 2.0)):
        a = np.cumsum(rng.uniform(*gap, size=(3, 150)), axis=-1)
        e = rng.exponential(0.5, size=(3, 150))
        got = fq._metadata_station(a, e, 0.2)
        want = np.array([_brute_fifo_with_log_queue(a[i], e[i], 0.2) for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_deterministic_limits_by_hand():
    q = fq.QueueParams(zeta_max=100.0, zeta_ratio=1.0, **ZERO)
    # broadcast: the root sends n once -> n / rate; scatter: one block per receiver -> (p-1) n / rate
    assert fq.simulate("broadcast", 1000.0, 5, q, 100.0, 2).tolist() == pytest.approx([10.0, 10.0])
    assert fq.simulate("scatter", 1000.0, 5, q, 100.0, 2).tolist() == pytest.approx([40.0, 40.0])
    # gather: 4 senders in parallel -> n / rate
    assert fq.simulate("gather", 1000.0, 5, q, 100.0, 2).tolist() == pytest.approx([10.0, 10.0])
    # receiver-bound gather: one FIFO receives (p-1) * jobs exponentials of mean psi
    slow = fq.QueueParams(zeta_max=1e9, meta_mean=0.0, meta_log=0.0, init_mean=0.0, recv_mean=2.0)
    times = fq.simulate("gather", 1000.0, 5, slow, 100.0, 4000)
    assert times.mean() == pytest.approx(4 * 10 * 2.0, rel=0.02)
    assert times.std() == pytest.approx(np.sqrt(40) * 2.0, rel=0.05)
    # one job, one receiver: D + C + R with exponential means eta and psi (eqs. 15-16)
    one = fq.QueueParams(zeta_max=1.0, zeta_ratio=1.0, meta_mean=0.0, meta_log=0.0, init_mean=3.0, recv_mean=1.0)
    assert fq.simulate("broadcast", 2.0, 2, one, 10.0, 20000).mean() == pytest.approx(2 + 3 + 1, rel=0.02)


def test_uniform_rate_bounds_of_eq_13():
    q = fq.QueueParams(zeta_max=10.0, zeta_ratio=0.5, **ZERO)
    times = fq.simulate("broadcast", 1.0, 2, q, 1.0, 20000)  # one job of size 1: 1 / U(5, 10)
    assert times.min() >= 0.1 - 1e-12 and times.max() <= 0.2 + 1e-12
    assert times.mean() == pytest.approx(np.log(2) / 5, rel=0.01)  # E[1/U(a, b)] = ln(b/a)/(b-a)


def test_simulation_is_seeded_and_broadcast_slows_with_receivers():
    q = fq.QueueParams(zeta_max=50.0, meta_mean=0.1, meta_log=0.05, init_mean=1.0, recv_mean=0.5)
    a = fq.simulate("broadcast", 400.0, 8, q, 50.0, 200, seed=3)
    np.testing.assert_array_equal(a, fq.simulate("broadcast", 400.0, 8, q, 50.0, 200, seed=3))
    assert not np.array_equal(a, fq.simulate("broadcast", 400.0, 8, q, 50.0, 200, seed=4))
    means = [fq.simulate("broadcast", 400.0, p, q, 50.0, 400).mean() for p in (2, 8, 64)]
    assert means[0] < means[1] < means[2]


def _synthetic_frame(pattern: str, q: fq.QueueParams) -> pd.DataFrame:
    rows = [{"n": n, "p": p} for n in (64.0, 256.0, 1024.0, 4096.0) for p in (2, 4, 8, 16)]
    frame = pd.DataFrame(rows)
    frame["time"] = simulate_frame(frame, pattern, q, job_size=128.0, reps=64, seed=11).mean(axis=1)
    return frame


def test_calibration_recovers_a_known_model_and_extrapolates():
    true = fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.0, init_mean=4.0, recv_mean=1.0)
    frame = _synthetic_frame("scatter", true)
    model = TEMPLATE.fit(frame, pattern="scatter", job_size=128.0, fit_reps=16, reps=64)
    train_err = np.abs(model.predict(frame) / frame["time"] - 1)
    assert np.median(train_err) < 0.05
    big = pd.DataFrame({"n": [4096.0, 1024.0], "p": [64, 32]})
    want = simulate_frame(big, "scatter", true, job_size=128.0, reps=64, seed=5).mean(axis=1)
    assert np.all(np.abs(model.predict(big) / want - 1) < 0.15)
    low, high = model.predict_interval(big, level=0.9)
    assert np.all(low <= model.predict(big)) and np.all(model.predict(big) <= high) and np.all(low < high)


def test_auto_pattern_prefers_the_generating_pattern():
    true = fq.QueueParams(zeta_max=20.0, meta_mean=0.2, meta_log=0.0, init_mean=1.0, recv_mean=0.5)
    frame = _synthetic_frame("scatter", true)
    model = TEMPLATE.fit(frame, pattern="auto", job_size=128.0, max_nfev=60)
    assert model.pattern == "scatter"


def test_round_trip_expr_and_hostile_files():
    q = fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.1, init_mean=4.0, recv_mean=1.0)
    model = FimComModel("broadcast", q, job_size=128.0, reps=32, seed=2)
    frame = pd.DataFrame({"n": [100.0, 5000.0], "p": [4, 64]})
    first = model.predict(frame)
    np.testing.assert_array_equal(first, model.predict(frame))  # deterministic
    d = json.loads(json.dumps(model.to_dict()))
    assert d["kind"] == "template" and d["template"] == "fim_com" and d["version"] == 1
    np.testing.assert_array_equal(FimComModel.from_dict(d).predict(frame), first)
    for bad in ({**d, "version": 9}, {**d, "zeta_max": "1e3"}, {**d, "pattern": "alltoall"},
                {**d, "reps": 0}, {**d, "zeta_ratio": 2.0}, {**d, "job_size": 0.0}, "model"):
        with pytest.raises(ModelFileError):
            FimComModel.from_dict(bad)
    expr = model.expr
    assert isinstance(expr, sympy.Expr) and expr.free_symbols == {symbol("n"), symbol("p")}
    approx = float(expr.subs({symbol("n"): 5000.0, symbol("p"): 64}))
    assert 0.3 < approx / first[1] < 3.0  # a fluid approximation, not the simulation


def test_applicability_and_bad_rows():
    assert TEMPLATE.applicable(pd.DataFrame({"n": [1.0], "time": [1.0]})) == "not applicable: no column p"
    assert TEMPLATE.applicable(pd.DataFrame({"n": [1.0], "p": [2], "time": [1.0]})) is None
    with pytest.raises(DataError, match="row 1, column 'p'"):
        TEMPLATE.fit(pd.DataFrame({"n": [1.0, 2.0], "p": [2, 2.5], "time": [1.0, 1.0]}))
    with pytest.raises(DataError, match="column 'time'"):
        TEMPLATE.fit(pd.DataFrame({"n": [1.0, 2.0], "p": [2, 4], "time": [1.0, -1.0]}))


@pytest.mark.skipif(not (DATASETS / "osu_coll_orfeo_tanjaderin.csv").exists(), reason="shared datasets absent")
def test_osu_bcast_runs_end_to_end():
    data = pd.read_csv(DATASETS / "osu_coll_orfeo_tanjaderin.csv")
    data = data[(data["collective"] == "bcast") & (data["algorithm"].astype(str) == "3")]
    data = data.rename(columns={"P": "p", "msg_bytes": "n"})
    train = data[(data["p"] <= 32) & (data["n"] >= 1024)]
    model = TEMPLATE.fit(train[["n", "p", "time"]], pattern="scatter", max_nfev=40, reps=16)
    test = data[(data["p"] == 64) & (data["n"] >= 1024)]
    err = np.abs(model.predict(test) / test["time"].to_numpy() - 1)
    assert np.all(np.isfinite(err)) and np.median(err) < 1.0  # measured ~0.3 (benchmarks/fim_com_check.py)


def test_template_exposes_the_loader():
    q = fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.1, init_mean=4.0, recv_mean=1.0)
    model = FimComModel("gather", q, job_size=64.0, reps=8, seed=1)
    frame = pd.DataFrame({"n": [100.0], "p": [8]})
    np.testing.assert_array_equal(TEMPLATE.from_dict(model.to_dict()).predict(frame), model.predict(frame))


def test_cause7_fim_com_allocation_is_bounded():
    """Issue 17, cause 7: a model file's ``reps`` or a prediction at p = 10^6 allocated gigabytes."""
    import tracemalloc
    q = fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.1, init_mean=4.0, recv_mean=1.0)
    d = FimComModel("scatter", q, job_size=128.0, reps=64, seed=2).to_dict()
    with pytest.raises(ModelFileError, match=r"'reps' must be an integer from 1 to 4096, got 1e\+09"):
        FimComModel.from_dict({**d, "reps": 10 ** 9})
    model = FimComModel.from_dict(d)
    tracemalloc.start()
    with pytest.raises(automodel.DataError, match=r"FiM-Com: simulating p = 1e\+06 at n = 4096 needs .* the "
                                                  r"largest p it simulates there is \d+"):
        model.predict(pd.DataFrame({"n": [4096.0], "p": [10 ** 6]}))
    assert tracemalloc.get_traced_memory()[1] < 20e6
    tracemalloc.stop()


def _queue() -> fq.QueueParams:
    return fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.1, init_mean=4.0, recv_mean=1.0)


def test_cause7_fim_com_memory_is_bounded_over_many_configurations(monkeypatch):
    """Issue 17, cause 7: each configuration was bounded, but a frame of many (best_p over p = 1..256 of a
    FiM-Com model) was drawn whole: 4.7 GB. Configurations are drawn, simulated and dropped in batches of
    at most MAX_VARIATES variates of a kind (here 2^14, so that 32 configurations make 16 batches)."""
    import tracemalloc
    monkeypatch.setattr(fq, "MAX_VARIATES", 2 ** 14)
    model = FimComModel("scatter", _queue(), job_size=128.0, reps=16, seed=2)
    frame = pd.DataFrame({"n": 4096.0, "p": np.arange(2, 34)})  # 16 x (p - 1) x 32 jobs: at most 2^14
    tracemalloc.start()
    got = model.predict(frame)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6e6  # about 33 MB drawn whole
    for i in (0, 15, 31):  # a configuration's draws depend on it alone
        assert model.predict(frame.iloc[[i]])[0] == got[i]


def test_cause7_fim_com_calibration_holds_a_bounded_training_set(monkeypatch):
    """Issue 17, cause 7: calibration keeps the draws of every training configuration (common random
    numbers); a training set beyond MAX_HELD variates of a kind is refused before any is drawn."""
    monkeypatch.setattr(fq, "MAX_HELD", 2 ** 12)
    frame = pd.DataFrame({"n": 4096.0, "p": np.arange(2, 12), "time": 1.0})  # 8 x 32 x 55 peers = 14080
    with pytest.raises(DataError, match=r"^FiM-Com: calibrating on 10 configurations holds 1\.41e\+04 random "
                                        r"variates of each kind, more than the 4096 it keeps"):
        TEMPLATE.fit(frame, pattern="scatter", fit_reps=8)


def test_cause7_fim_com_refuses_a_message_too_large_at_any_p():
    """Issue 17, cause 7: ``job_sizes`` allocated one float per job before any check (n = 1e12 bytes in
    jobs of 128: 62 GB); a message needing more than MAX_VARIATES variates even at p = 2 names the
    largest n it simulates, and p beyond 2^53 is not read as a negative int64."""
    model = FimComModel("broadcast", _queue(), job_size=128.0, reps=64, seed=2)
    with pytest.raises(DataError, match=r"^FiM-Com: simulating n = 1e\+12 needs 5e\+11 random variates of each "
                                        r"kind at any p .*; the largest n it simulates is 4194304$"):
        model.predict(pd.DataFrame({"n": [1e12], "p": [2]}))
    with pytest.raises(DataError, match=r"row 0, column 'p': expected a whole number from 1 to 2\^53"):
        model.predict(pd.DataFrame({"n": [4096.0], "p": [1e19]}))


def test_cause7_fim_cal_chain_allocation_is_bounded(monkeypatch):
    """Issue 17, cause 7 (FiM-Cal's Markov chain, method 'chain', beside FiM-Com's queue): t = 10^6
    processes asked for a 931 GiB matrix and t = 2000 took 8 s (t = 1001 was refused only after every
    smaller t of the same call was solved); many configurations of one t were solved at once. The chain
    is refused beyond MAX_CHAIN_T processes, before any work, and solved in batches of at most
    MAX_CHAIN_ENTRIES transition probabilities (here 2^16: four configurations of t = 120)."""
    import tracemalloc
    from automodel.templates import _fim_markov as mk
    monkeypatch.setattr(mk, "MAX_CHAIN_ENTRIES", 2 ** 16)
    with pytest.raises(DataError, match=r"^FiM-Cal: the full chain solves at most t = 512 processes, got "
                                        r"1e\+06 \(method 'first_step' has no limit\)$"):
        mk.chain_time(0.5, 1e9, 1e8, 2e9, [500, 1e6])  # t = 500 alone takes 0.1 s
    with pytest.raises(DataError, match=r"process count t must be a positive integer, got inf"):
        mk.chain_time(0.5, 1e9, 1e8, 2e9, np.inf)
    rows = np.arange(1.0, 65.0)
    one = [float(mk.chain_time(0.5, 1e3 * r, 1e2 * r, 2e9, 120)) for r in (1.0, 64.0)]
    tracemalloc.start()
    many = mk.chain_time(0.5, 1e3 * rows, 1e2 * rows, 2e9, 120)  # 64 x 121^2 x 8 bytes: 7.5 MB a matrix
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8e6 and [many[0], many[-1]] == pytest.approx(one, rel=1e-9)
