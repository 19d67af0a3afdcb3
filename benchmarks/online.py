"""Online re-ranking speed: one new run with 10^4 live candidates (target: under 10 ms), and the
latency of a store observe. Run: ``python -m benchmarks.online [--candidates N] [--updates U]``."""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from automodel.search.online import LivePool, OnlineOptions, PoolStats
from automodel.space.terms import term_values
from automodel.space.parse import parse_term

COMP = ["1", "n", "n^2", "n^3", "log2(n)", "n*log2(n)", "n^2*log2(n)", "sqrt(n)", "n^(3/2)", "n^(5/2)"]
PFUN = ["1", "1/p", "log2(p)", "p", "sqrt(p)", "1/sqrt(p)", "log2(p)/p"]
LOAD = ["1", "1/cpu", "1/bw"]


def truth(n, p, cpu, bw):
    return 2e-10 * n ** 3 / (p * cpu) + 3e-8 * n ** 2 * np.log2(p) / bw + 0.5


def synthetic_runs(rng: np.random.Generator, m: int) -> pd.DataFrame:
    n = rng.uniform(1000, 8000, m)
    p = rng.choice([1, 2, 4, 8, 16], m).astype(float)
    cpu, bw = rng.uniform(0.4, 1, m), rng.uniform(0.4, 1, m)
    return pd.DataFrame(dict(n=n, p=p, cpu=cpu, bw=bw, time=truth(n, p, cpu, bw) * (1 + 0.02 * rng.standard_normal(m))))


def pool(rng: np.random.Generator, n_candidates: int, runs: pd.DataFrame, options: OnlineOptions) -> LivePool:
    """``n_candidates`` distinct candidates of 2-6 terms from a pool of f(n) * g(p) * load terms."""
    terms = list(dict.fromkeys(parse_term(f"{c}*{g}*{l}".replace("1*", "").replace("*1", "") or "1")
                               for c in COMP for g in PFUN for l in LOAD))
    combos: set[tuple[int, ...]] = set()
    while len(combos) < n_candidates:
        k = int(rng.integers(2, 7))
        combos.add(tuple(sorted(rng.choice(len(terms), k, replace=False))))
    combos_l = sorted(combos)
    index = np.full((len(combos_l), 6), -1, dtype=np.intp)
    width = np.array([len(c) for c in combos_l])
    for i, c in enumerate(combos_l):
        index[i, :len(c)] = c
    cols = {q: runs[q].to_numpy(float) for q in ("n", "p", "cpu", "bw")}
    values = term_values(terms, cols, len(runs))
    y = runs["time"].to_numpy(float)
    live = LivePool(terms, index, width, np.ones(len(index), bool), PoolStats.empty(len(terms)),
                    np.empty((0, len(terms))), np.empty(0), options)
    live.admit(values, y)
    live.refit()
    return live


def bench_memory(n_candidates: int, n_updates: int, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    opts = OnlineOptions.from_dict({"prune_percentile": 100.0})  # keep all candidates alive: measure at full size
    live = pool(rng, n_candidates, synthetic_runs(rng, 100), opts)
    new = synthetic_runs(rng, n_updates)
    nv = term_values(live.terms, {q: new[q].to_numpy(float) for q in ("n", "p", "cpu", "bw")}, len(new))
    ny = new["time"].to_numpy(float)
    times, exact = [], 0
    for i in range(n_updates):
        t0 = time.perf_counter()
        upd = live.update(nv[i:i + 1], ny[i:i + 1])
        times.append(time.perf_counter() - t0)
        exact += upd.n_exact
    t = np.array(times[1:]) * 1e3
    return {"candidates": int(live.alive.sum()), "terms": len(live.terms), "runs": int(live.stats.n_runs),
            "median_ms": float(np.median(t)), "p90_ms": float(np.percentile(t, 90)), "exact": exact / n_updates}


def bench_store(n_updates: int, seed: int = 0) -> dict[str, float]:
    from automodel.store import observe

    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.db")
        first = synthetic_runs(rng, 40)
        t0 = time.perf_counter()
        rep = observe(path, "bench", first)
        t_first = time.perf_counter() - t0
        times = []
        for _ in range(n_updates):
            batch = synthetic_runs(rng, 1)
            t0 = time.perf_counter()
            rep = observe(path, "bench", batch)
            times.append(time.perf_counter() - t0)
    return {"first_s": t_first, "observe_median_ms": float(np.median(times) * 1e3), "live_end": rep.n_live}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--updates", type=int, default=50)
    a = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    r = bench_memory(a.candidates, a.updates)
    print(f"in memory: one new run, {r['candidates']} live candidates over {r['terms']} pool terms, "
          f"{r['runs']} runs: update+refit+screen+rank median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms "
          f"(target < 10 ms); exact NNLS fallbacks per update {r['exact']:.1f}")
    s = bench_store(20)
    print(f"store (SQLite): first observe with staged search {s['first_s']:.2f} s; one-run observe median "
          f"{s['observe_median_ms']:.1f} ms ({s['live_end']} candidates live at the end)")


if __name__ == "__main__":
    main()
