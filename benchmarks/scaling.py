"""How ``automodel.fit`` grows with the number of runs: CPU time, wall time and peak memory at 10^2 ..
10^6 runs of 4 parameters (n, p, cpu, bw; default space, templates off), and the growth exponent.

Every size runs in a fresh Python process, so its peak resident memory (:func:`peak_bytes`) is its own; the
runs are ``c n^3/(p cpu) + d n^2 log2 p / bw + e`` with 2 % noise at random loads, so no two runs share
a configuration and nothing is aggregated away. The growth exponent is the slope of log CPU time
against log runs between the two largest sizes (1.0: linear). Targets (issue 18): 10^6 runs under a
minute and under 24 GiB, exponent <= 1.1.

Run: ``python -m benchmarks.scaling [--sizes 100 1000 ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

#: sizes of the full run and of ``--quick``
SIZES = (100, 1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (100, 1_000, 10_000)
#: the goals for the largest size (issue 18)
GOAL_SECONDS, GOAL_BYTES, GOAL_EXPONENT = 60.0, 24 * 2 ** 30, 1.1


def runs(size: int, seed: int = 0):
    """``size`` runs of the 4-parameter workload (a DataFrame)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = rng.choice([1000.0, 2000.0, 4000.0, 8000.0], size)
    p = rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], size)
    cpu, bw = rng.uniform(0.4, 1.0, size), rng.uniform(0.4, 1.0, size)
    time = (2e-10 * n ** 3 / (p * cpu) + 3e-8 * n ** 2 * np.log2(p) / bw + 0.5) * (1 + 0.02 * rng.standard_normal(size))
    return pd.DataFrame({"n": n, "p": p, "cpu": cpu, "bw": bw, "time": time})


def peak_bytes() -> int:
    """This process's peak resident memory: ``VmHWM`` of ``/proc/self/status`` (Linux; it starts afresh
    at ``exec``, whereas ``ru_maxrss`` keeps the high-water mark of the parent the process was forked
    from), else ``ru_maxrss``."""
    import resource

    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def measure(size: int) -> dict[str, Any]:
    """One ``automodel.fit`` of ``size`` runs in this process: CPU and wall seconds, peak memory."""
    import time

    import automodel

    data = runs(size)
    automodel.fit(runs(100), templates="none", progress=False)  # imports and caches out of the timing
    t0, w0 = time.process_time(), time.perf_counter()
    result = automodel.fit(data, templates="none", progress=False)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    peak = peak_bytes()
    return {"runs": size, "cpu_seconds": cpu, "wall_seconds": wall, "peak_bytes": peak,
            "formula": result.models[0].formula}


def _child(size: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.scaling", "--one", str(size)], capture_output=True,
                         text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1",
                                                     "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def collect(quick: bool = False, sizes: tuple[int, ...] | None = None, log=print) -> dict[str, Any]:
    """Every size in its own process; the growth exponent and whether the goals are met."""
    rows = []
    for size in sizes or (QUICK_SIZES if quick else SIZES):
        rows.append(_child(size))
        r = rows[-1]
        log(f"fit of {size:>9,} runs: {r['cpu_seconds']:8.2f} s CPU, {r['wall_seconds']:8.2f} s wall, "
            f"peak {r['peak_bytes'] / 2 ** 20:8.0f} MiB")
    out: dict[str, Any] = {"rows": rows}
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        out["exponent"] = float(np.log(b["cpu_seconds"] / a["cpu_seconds"]) / np.log(b["runs"] / a["runs"]))
        out["bytes_per_run"] = float((b["peak_bytes"] - rows[0]["peak_bytes"]) / (b["runs"] - rows[0]["runs"]))
        last = rows[-1]
        out["goal_met"] = bool(last["runs"] >= 1_000_000 and last["cpu_seconds"] < GOAL_SECONDS
                               and last["peak_bytes"] < GOAL_BYTES and out["exponent"] <= GOAL_EXPONENT)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=None, help=f"numbers of runs (default {SIZES})")
    ap.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one)))
        return 0
    out = collect(args.quick, tuple(args.sizes) if args.sizes else None)
    if "exponent" in out:
        print(f"growth exponent {out['exponent']:.2f} (goal <= {GOAL_EXPONENT}); "
              f"{out['bytes_per_run'] / 1024:.1f} KiB per run; goals met: {out['goal_met']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
