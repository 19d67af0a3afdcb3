"""Scale-out of many kernels: serial against 2 loky workers against a 2-worker dask ``LocalCluster``.

One Extra-P text file per case (``benchmarks.extrap_text.synthetic_kernels``: kernels of ``p``, 5
points; ``benchmarks.kernels.two_parameter_kernels``: kernels of ``p`` and ``n``, 25 points), modelled
by ``automodel.fit_many`` three ways, each in a fresh Python process so that its numbers are its own:

* ``serial``: ``jobs=1``;
* ``loky``: ``jobs=2``, ``parallel_after=0`` (the rest of the work always goes to the workers);
* ``dask``: a ``LocalCluster`` of 2 worker processes (one thread each, started with
  ``automodel.kernels.fit_many.DASK_WORKER_ENVIRON``), ``scheduler=client`` (needs the ``dask``
  extra; "not available" without it).

Measured: wall seconds of ``fit_many`` (the cluster's start and stop excluded, the workers' start
included for loky), the speed-up against serial, the peak resident memory of the main process and of
the largest worker (:func:`benchmarks.scaling.peak_bytes`, asked of each worker after the run), and
that the models equal the serial run's. The target (issue 16): >= 1.7x with 2 workers where the serial work takes over 5 s, no
loss below. Extra-P's CLI on the 10^4-kernel one-parameter file: wall seconds and the held-out error
against automodel's.

Run: ``python -m benchmarks.scale [--quick]`` (``--quick``: 10^3 kernels only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.scaling import peak_bytes

#: (parameters, kernels) of the full run and of ``--quick``
CASES = ((1, 1_000), (1, 10_000), (1, 100_000), (2, 1_000), (2, 10_000))
QUICK_CASES = ((1, 1_000), (2, 1_000))
MODES = ("serial", "loky", "dask")
#: the goal: speed-up with 2 workers where the serial work is over ``GOAL_WORK`` seconds
GOAL_SPEEDUP, GOAL_WORK = 1.7, 5.0


def write_case(params: int, n_kernels: int, folder: Path) -> Path:
    """The Extra-P text file of a case; its truths beside it as JSON (``<file>.truths.json``)."""
    from benchmarks.extrap_text import synthetic_kernels
    from benchmarks.kernels import two_parameter_kernels

    text, truths = synthetic_kernels(n_kernels=n_kernels) if params == 1 else two_parameter_kernels(n_kernels)
    path = folder / f"kernels-{params}p-{n_kernels}.txt"
    path.write_text(text)
    Path(f"{path}.truths.json").write_text(json.dumps(truths))
    return path


def run_mode(path: str, mode: str) -> dict[str, Any]:
    """``fit_many`` of ``path`` one way (:data:`MODES`) in this process: wall seconds, peak memories and a
    digest of the formulas."""
    import hashlib
    import time

    from automodel.kernels.fit_many import fit_many

    client = cluster = None
    if mode == "dask":
        import dask
        from dask.distributed import Client, LocalCluster

        from automodel.kernels.fit_many import DASK_WORKER_ENVIRON

        dask.config.set({"distributed.nanny.pre-spawn-environ": DASK_WORKER_ENVIRON})
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    start = time.perf_counter()
    workers = 0
    if mode == "serial":
        result = fit_many(path, jobs=1)
    elif mode == "loky":
        result = fit_many(path, jobs=2, parallel_after=0.0)
    else:
        result = fit_many(path, scheduler=client)
    seconds = time.perf_counter() - start
    if client is not None:
        workers = max(client.run(peak_bytes).values())
        client.close()
        cluster.close()
    elif mode == "loky":
        from joblib import Parallel, delayed

        workers = max(Parallel(n_jobs=2)(delayed(_worker_peak)() for _ in range(8)))  # every worker answers
    formulas = "\n".join(f"{k}={m.formula}" for k, m in result.models.items())
    return {"seconds": seconds, "main_bytes": peak_bytes(), "worker_bytes": workers,
            "models": len(result.models), "digest": hashlib.sha256(formulas.encode()).hexdigest(),
            "how": result.notes[-1]}


def _worker_peak() -> int:
    """:func:`peak_bytes` of the worker that runs this, after a pause that lets the other workers take
    the other calls."""
    import time

    time.sleep(0.2)
    return peak_bytes()


def _child(path: Path, mode: str) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--one", str(path), mode],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": f"not available: {last}"}
    return {"status": "ok", **json.loads(done.stdout.strip().splitlines()[-1])}


def extrap_versus(path: Path) -> dict[str, Any]:
    """Extra-P's CLI and ``fit_many`` (serial) on one one-parameter file: wall seconds and the median
    held-out error at p = 128 against the true functions."""
    import time

    from automodel.kernels.fit_many import fit_many
    from benchmarks.extrap_tool import ensure_extrap, time_cli
    from benchmarks.kernels import extrap_terms, _value

    truths = json.loads(Path(f"{path}.truths.json").read_text())
    test_p = 128.0
    true = np.array([t["a"] + t["b"] * test_p ** t["e"] * np.log2(test_p) ** t["l"] for t in truths])
    start = time.perf_counter()
    result = fit_many(path, jobs=1)
    seconds = time.perf_counter() - start
    names = [f"{t['region']} [time]" for t in truths]
    ours = np.array([float(result.models[n].predict({"p": [test_p]})[0]) if n in result.models else np.nan
                     for n in names])
    out = {"kernels": len(truths), "automodel_seconds": seconds,
           "automodel_error_median": float(np.nanmedian(np.abs(ours / true - 1)))}
    python, status = ensure_extrap(install=False)
    if python is None:
        return {**out, "extrap_status": status}
    with tempfile.TemporaryDirectory() as tmp:
        functions = Path(tmp) / "functions.txt"
        timing = time_cli(["--text", str(path), "--print", "{callpath};{model:python}", "--disable-progress",
                           "--out", str(functions)])
        if timing.status != "ok":
            return {**out, "extrap_status": timing.status}
        found = dict(line.split(";", 1) for line in functions.read_text().splitlines() if ";" in line)
    theirs = np.array([_value(extrap_terms(found[t["region"]]), test_p) if t["region"] in found else np.nan
                       for t in truths])
    return {**out, "extrap_status": "ok", "extrap_seconds": timing.seconds,
            "extrap_error_median": float(np.nanmedian(np.abs(theirs / true - 1))),
            "ratio": timing.seconds / seconds}


def collect(quick: bool = False, log=print) -> dict[str, Any]:
    """Every case every way (:data:`CASES`), and Extra-P against automodel on the 10^4-kernel file."""
    rows = []
    versus = None
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        for params, n_kernels in QUICK_CASES if quick else CASES:
            path = write_case(params, n_kernels, Path(tmp))
            runs = {mode: _child(path, mode) for mode in MODES}
            base = runs["serial"]
            for mode, r in runs.items():
                row = {"params": params, "kernels": n_kernels, "mode": mode, **r}
                if r["status"] == "ok" and base["status"] == "ok":
                    row["speedup"] = base["seconds"] / r["seconds"]
                    row["same_as_serial"] = r["digest"] == base["digest"]
                rows.append(row)
                log(f"{n_kernels:>7,} kernels of {params} parameter(s), {mode:6}: "
                    + (f"{r['seconds']:7.2f} s, x{row.get('speedup', float('nan')):.2f}, main "
                       f"{r['main_bytes'] / 2 ** 20:6.0f} MiB, largest worker {r['worker_bytes'] / 2 ** 20:6.0f} MiB"
                       if r["status"] == "ok" else r["status"]))
            if params == 1 and n_kernels == 10_000:
                versus = extrap_versus(path)
    judged = [r for r in rows if r["mode"] != "serial" and "speedup" in r]
    big = [r for r in judged if next(b["seconds"] for b in rows if b["mode"] == "serial" and
                                     (b["params"], b["kernels"]) == (r["params"], r["kernels"])) > GOAL_WORK]
    small = [r for r in judged if r not in big]
    return {"rows": [{k: v for k, v in r.items() if k != "digest"} for r in rows], "extrap": versus,
            "goal_met": bool(all(r["speedup"] >= GOAL_SPEEDUP for r in big)
                             and all(r["speedup"] >= 1.0 for r in small) and judged),
            "all_same_as_serial": bool(all(r.get("same_as_serial", False) for r in judged))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^3 kernels only")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "MODE"), help=argparse.SUPPRESS)  # a child process
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_mode(*args.one)))
        return 0
    out = collect(args.quick)
    print(f"goal (>= {GOAL_SPEEDUP}x with 2 workers above {GOAL_WORK:g} s of serial work, no loss below): "
          f"{'met' if out['goal_met'] else 'not met'}; every parallel run equals the serial one: "
          f"{out['all_same_as_serial']}")
    if out["extrap"]:
        print(f"Extra-P on {out['extrap']['kernels']} kernels: {out['extrap']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
