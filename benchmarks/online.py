"""Online speed (issue 18): the re-rank of one new run with 10^4 live candidates, a one-run observe into
SQLite stores of 10 to 10^5 runs, runs streamed one at a time through ``observe``, and the command line's
one-run observe. Times are CPU (``time.process_time``) next to wall.

Run: ``python -m benchmarks.online [--quick] [--sizes 10 1000 ...] [--stream N]``. Targets: re-rank
under 10 ms CPU; a one-run observe into a 10^5-run store within 2x of one into a 10-run store; 10^4 runs
streamed under a minute of CPU; ``automodel observe`` of one run under 0.5 s. :func:`collect` returns
the numbers.

Every store is built the same way with the public :func:`automodel.store.observe`: a first observe of
:data:`FIRST` runs (the staged search), one observe of the rest (so every store has had two updates
and has about the same live candidates), then the measured one-run observes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.online.live import LivePool, OnlineOptions, PoolStats
from automodel.space.parse import parse_term
from automodel.space.terms import term_values
from benchmarks.startup import automodel_command

COMP = ["1", "n", "n^2", "n^3", "log2(n)", "n*log2(n)", "n^2*log2(n)", "sqrt(n)", "n^(3/2)", "n^(5/2)"]
PFUN = ["1", "1/p", "log2(p)", "p", "sqrt(p)", "1/sqrt(p)", "log2(p)/p"]
LOAD = ["1", "1/cpu", "1/bw"]
#: runs of a store's first observe (the staged search)
FIRST = 5
#: store sizes of the full run and of ``--quick``
SIZES, QUICK_SIZES = (10, 1_000, 10_000, 100_000), (10, 1_000, 10_000)
#: runs streamed one at a time by default (``--stream 10000`` for the target's 10^4)
STREAM, QUICK_STREAM = 1_000, 200
TARGETS = {"rerank_cpu_ms": 10.0, "size_ratio": 2.0, "stream_10k_cpu_s": 60.0, "cli_observe_s": 0.5}


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


def _spread(seconds: list[float]) -> tuple[float, float]:
    """Median and 90th percentile, in milliseconds."""
    ms = np.array(seconds) * 1e3
    return float(np.median(ms)), float(np.percentile(ms, 90))


def bench_memory(n_candidates: int, n_updates: int, seed: int = 0) -> dict:
    """One new run at a time into an in-memory pool of ``n_candidates`` (all kept alive): CPU and wall
    milliseconds per update (the first update, which warms caches, left out)."""
    rng = np.random.default_rng(seed)
    opts = OnlineOptions.from_dict({"prune_percentile": 100.0})  # keep all candidates alive: measure at full size
    live = pool(rng, n_candidates, synthetic_runs(rng, 100), opts)
    new = synthetic_runs(rng, n_updates)
    nv = term_values(live.terms, {q: new[q].to_numpy(float) for q in ("n", "p", "cpu", "bw")}, len(new))
    ny = new["time"].to_numpy(float)
    cpu, wall, exact = [], [], 0
    for i in range(n_updates):
        t0, c0 = time.perf_counter(), time.process_time()
        upd = live.update(nv[i:i + 1], ny[i:i + 1])
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
        exact += upd.n_exact
    (cpu_med, cpu_p90), (wall_med, wall_p90) = _spread(cpu[1:]), _spread(wall[1:])
    return {"candidates": int(live.alive.sum()), "terms": len(live.terms), "runs": int(live.stats.n_runs),
            "cpu_median_ms": cpu_med, "cpu_p90_ms": cpu_p90, "wall_median_ms": wall_med, "wall_p90_ms": wall_p90,
            "exact_per_update": exact / n_updates, "leader": int(live.leader),
            "leader_score": float(live.score[live.leader])}


def build_store(path: str, n_runs: int, seed: int = 0) -> float:
    """A store of ``n_runs`` runs of application ``bench`` (module docstring); the CPU seconds it took."""
    from automodel.store import observe

    rng = np.random.default_rng(seed)
    c0 = time.process_time()
    observe(path, "bench", synthetic_runs(rng, FIRST))
    observe(path, "bench", synthetic_runs(rng, n_runs - FIRST))
    return time.process_time() - c0


def bench_size(n_runs: int, n_observes: int = 7, seed: int = 0) -> dict:
    """CPU and wall milliseconds of a one-run :func:`~automodel.store.observe` into a new SQLite store of
    ``n_runs`` runs (median over ``n_observes``)."""
    from automodel.store import observe

    rng = np.random.default_rng(seed + 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.db")
        build = build_store(path, n_runs, seed)
        cpu, wall = [], []
        for _ in range(n_observes):
            batch = synthetic_runs(rng, 1)
            t0, c0 = time.perf_counter(), time.process_time()
            rep = observe(path, "bench", batch)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - t0)
    return {"runs": n_runs, "build_cpu_s": build, "observe_cpu_ms": _spread(cpu)[0],
            "observe_wall_ms": _spread(wall)[0], "live": rep.n_live}


def bench_stream(n_runs: int, seed: int = 0) -> dict:
    """``n_runs`` runs observed one at a time (after a first observe of :data:`FIRST` runs, not counted):
    CPU and wall seconds in all."""
    from automodel.store import observe

    rng = np.random.default_rng(seed)
    runs = synthetic_runs(rng, FIRST + n_runs)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.db")
        observe(path, "bench", runs.iloc[:FIRST])
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(FIRST, FIRST + n_runs):
            rep = observe(path, "bench", runs.iloc[i:i + 1])
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    return {"runs": n_runs, "cpu_s": cpu, "wall_s": wall, "cpu_ms_per_observe": cpu / n_runs * 1e3,
            "admitted": rep.n_admitted, "live": rep.n_live}


def _child(command: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of a command run in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_cli(repeats: int = 5, seed: int = 0) -> dict:
    """``automodel observe --help`` and ``automodel observe`` of one run into a store of 40 runs, each in a
    new process: the median wall and CPU seconds of ``repeats``."""
    rng = np.random.default_rng(seed)
    command = automodel_command()
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "cli.db")
        build_store(store, 40, seed)
        helps = [_child(command + ["observe", "--help"]) for _ in range(repeats)]
        observes = []
        for i in range(repeats):
            csv = Path(tmp) / f"one{i}.csv"
            synthetic_runs(rng, 1).to_csv(csv, index=False)
            observes.append(_child(command + ["observe", "--store", store, "--app", "bench", str(csv)]))
    return {"command": " ".join(command), "help_wall_s": float(np.median([w for w, _ in helps])),
            "help_cpu_s": float(np.median([c for _, c in helps])),
            "observe_wall_s": float(np.median([w for w, _ in observes])),
            "observe_cpu_s": float(np.median([c for _, c in observes]))}


def collect(quick: bool, sizes: tuple[int, ...] | None = None, stream: int | None = None) -> dict:
    """Every number of this benchmark (module docstring); ``quick`` measures smaller stores and streams."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    stream = stream or (QUICK_STREAM if quick else STREAM)
    rerank = bench_memory(10_000, 21 if quick else 51)
    by_size = [bench_size(n) for n in sizes]
    streamed = bench_stream(stream)
    cli = bench_cli(3 if quick else 5)
    ratio = by_size[-1]["observe_cpu_ms"] / by_size[0]["observe_cpu_ms"]
    return {"machine": f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
                       f"python {platform.python_version()}",
            "when": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC", "rerank": rerank, "sizes": by_size,
            "size_ratio": ratio, "size_ratio_runs": (sizes[-1], sizes[0]), "stream": streamed,
            "stream_10k_cpu_s_estimate": streamed["cpu_s"] * 10_000 / stream, "cli": cli, "targets": TARGETS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"stores up to 10^4 runs, {QUICK_STREAM} runs streamed")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, metavar="RUNS", help="store sizes to observe into")
    ap.add_argument("--stream", type=int, default=None, metavar="N", help="runs to stream one at a time")
    a = ap.parse_args()
    r = collect(a.quick, tuple(a.sizes) if a.sizes else None, a.stream)
    m, s, c = r["rerank"], r["stream"], r["cli"]
    print(f"machine: {r['machine']}, {r['when']}")
    print(f"re-rank: one new run, {m['candidates']} live candidates over {m['terms']} terms, {m['runs']} runs: "
          f"CPU median {m['cpu_median_ms']:.2f} ms, p90 {m['cpu_p90_ms']:.2f} ms (wall {m['wall_median_ms']:.2f} / "
          f"{m['wall_p90_ms']:.2f} ms; target < 10 ms CPU); exact NNLS fallbacks per update "
          f"{m['exact_per_update']:.1f}")
    for z in r["sizes"]:
        print(f"one-run observe into a store of {z['runs']:>7} runs: CPU {z['observe_cpu_ms']:6.1f} ms, wall "
              f"{z['observe_wall_ms']:6.1f} ms ({z['live']} live; store built in {z['build_cpu_s']:.1f} s CPU)")
    hi, lo = r["size_ratio_runs"]
    print(f"ratio {hi} / {lo} runs: {r['size_ratio']:.2f} (target < 2)")
    print(f"streamed {s['runs']} runs one at a time: {s['cpu_s']:.1f} s CPU ({s['cpu_ms_per_observe']:.1f} ms per "
          f"observe), {s['wall_s']:.1f} s wall; 10^4 runs at this rate: {r['stream_10k_cpu_s_estimate']:.0f} s CPU "
          "(target < 60 s)")
    print(f"CLI ({c['command']}): observe --help {c['help_wall_s']:.2f} s wall / {c['help_cpu_s']:.2f} s CPU; "
          f"one-run observe {c['observe_wall_s']:.2f} s wall / {c['observe_cpu_s']:.2f} s CPU (target < 0.5 s)")


if __name__ == "__main__":
    main()
