"""Scale-out of many kernels, and of one large fit: serial against 2 loky workers against a 2-worker dask
``LocalCluster``.

One Extra-P text file per case (``benchmarks.extrap_text.synthetic_kernels``: kernels of ``p``, 5
points; ``benchmarks.kernels.two_parameter_kernels``: kernels of ``p`` and ``n``, 25 points), modelled
by ``automodel.fit_many`` three ways, each in a fresh Python process so that its numbers are its own:

* ``serial``: ``jobs=1``;
* ``loky``: ``jobs=2``, ``parallel_after=0`` (the rest of the work always goes to the workers);
* ``dask``: a ``LocalCluster`` of 2 worker processes (one thread each, started with
  ``automodel.search.workers.DASK_WORKER_ENVIRON``), ``scheduler=client`` (needs the ``dask``
  extra; "not available" without it).

Measured: wall seconds of ``fit_many`` (the cluster's start and stop excluded, the workers' start
included for loky), the speed-up against serial, the peak resident memory of the main process and of
the largest worker (:func:`benchmarks.scaling.peak_bytes`, asked of each worker after the run), and
that the models equal the serial run's. The target (issue 16): >= 1.7x with 2 workers where the serial work takes over 5 s, no
loss below. Extra-P's CLI on the 10^4-kernel one-parameter file: wall seconds and the held-out error
against automodel's.

One large fit (issue 16): ``automodel.fit`` of ``benchmarks.scaling.runs(10^5)`` (4 parameters, no
two runs at one configuration; templates off) the same three ways (``jobs=1``, ``jobs=2``,
``scheduler=client``), :data:`FIT_REPEATS` fresh processes each (the median wall time counts: this
2-core machine's times vary by 10-20 % from run to run; ``--quick``: one). Its wall time excludes the imports (a fit
of 100 runs first) and includes the loky workers' start; its digest covers the leaderboard and every
model (coefficients and bands), so "same as serial" is bit for bit.

Run: ``python -m benchmarks.scale [--quick]`` (``--quick``: 10^3 kernels and a fit of 10^4 runs only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from benchmarks.scaling import peak_bytes

#: (parameters, kernels) of the full run and of ``--quick``
CASES = ((1, 1_000), (1, 10_000), (1, 100_000), (2, 1_000), (2, 10_000))
QUICK_CASES = ((1, 1_000), (2, 1_000))
MODES = ("serial", "loky", "dask")
#: the goal: speed-up with 2 workers where the serial work is over ``GOAL_WORK`` seconds
GOAL_SPEEDUP, GOAL_WORK = 1.7, 5.0
#: runs of the one large fit, full and ``--quick``, and the fresh processes per way (the median counts;
#: ``--quick``: one)
FIT_RUNS, QUICK_FIT_RUNS, FIT_REPEATS = 100_000, 10_000, 3


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

    cluster, client = start_cluster() if mode == "dask" else (None, None)
    start = time.perf_counter()
    if mode == "serial":
        result = fit_many(path, jobs=1)
    elif mode == "loky":
        result = fit_many(path, jobs=2, parallel_after=0.0)
    else:
        result = fit_many(path, scheduler=client)
    seconds = time.perf_counter() - start
    workers = 0 if mode == "serial" else workers_peak(client)
    if client is not None:
        client.close()
        cluster.close()
    formulas = "\n".join(f"{k}={m.formula}" for k, m in result.models.items())
    return {"seconds": seconds, "main_bytes": peak_bytes(), "worker_bytes": workers,
            "models": len(result.models), "digest": hashlib.sha256(formulas.encode()).hexdigest(),
            "how": result.notes[-1]}


def start_cluster() -> tuple[Any, Any]:
    """A ``LocalCluster`` of 2 worker processes (one thread each, started with
    :data:`automodel.search.workers.DASK_WORKER_ENVIRON`) and its client."""
    import dask
    from dask.distributed import Client, LocalCluster

    from automodel.search.workers import DASK_WORKER_ENVIRON

    dask.config.set({"distributed.nanny.pre-spawn-environ": DASK_WORKER_ENVIRON})
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    return cluster, Client(cluster)


def workers_peak(client: Any) -> int:
    """The peak memory of the largest worker: of the cluster of ``client``, else of the 2 loky workers."""
    if client is not None:
        return max(client.run(peak_bytes).values())
    from joblib import Parallel, delayed

    return max(Parallel(n_jobs=2)(delayed(_worker_peak)() for _ in range(8)))  # every worker answers


def run_fit(size: int, mode: str) -> dict[str, Any]:
    """``automodel.fit`` of ``benchmarks.scaling.runs(size)`` one way (:data:`MODES`) in this process:
    wall seconds (imports excluded), peak memories and a digest of the leaderboard and the models."""
    import hashlib
    import time

    import automodel
    from benchmarks.scaling import runs

    automodel.fit(runs(100), templates="none", progress=False)  # imports and caches out of the timing
    data = runs(size)
    cluster, client = start_cluster() if mode == "dask" else (None, None)
    how = {"serial": {"jobs": 1}, "loky": {"jobs": 2}, "dask": {"scheduler": client}}[mode]
    start = time.perf_counter()
    result = automodel.fit(data, templates="none", progress=False, **how)
    seconds = time.perf_counter() - start
    workers = 0 if mode == "serial" else workers_peak(client)
    if client is not None:
        client.close()
        cluster.close()
    text = result.leaderboard.to_csv() + "\n".join(m.to_json() for m in result.models)
    return {"seconds": seconds, "main_bytes": peak_bytes(), "worker_bytes": workers,
            "formula": result.best.formula, "digest": hashlib.sha256(text.encode()).hexdigest()}


def _worker_peak() -> int:
    """:func:`peak_bytes` of the worker that runs this, after a pause that lets the other workers take
    the other calls."""
    import time

    time.sleep(0.2)
    return peak_bytes()


def _child(path: Path | int, mode: str) -> dict[str, Any]:
    """One way in a fresh process: of the kernels file ``path``, or of the fit of ``path`` runs."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    what = ["--one-fit", str(path)] if isinstance(path, int) else ["--one", str(path)]
    done = subprocess.run([sys.executable, "-m", "benchmarks.scale", *what, mode],
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
    fit = collect_fit(QUICK_FIT_RUNS, 1, log) if quick else collect_fit(FIT_RUNS, FIT_REPEATS, log)
    judged = [r for r in rows if r["mode"] != "serial" and "speedup" in r]
    return {"rows": [{k: v for k, v in r.items() if k != "digest"} for r in rows], "extrap": versus,
            "goal_met": _goal_met(rows, judged, lambda r: (r["params"], r["kernels"])),
            "all_same_as_serial": bool(all(r.get("same_as_serial", False) for r in judged)), **fit}


def collect_fit(size: int, repeats: int = FIT_REPEATS, log=print) -> dict[str, Any]:
    """The one large fit of ``size`` runs every way, ``repeats`` fresh processes each: the median wall
    time, the largest peak memories, whether every run equals the first serial one."""
    runs = {mode: [_child(size, mode) for _ in range(repeats)] for mode in MODES}
    base = runs["serial"][0]
    rows = []
    for mode, done in runs.items():
        ok = [r for r in done if r["status"] == "ok"]
        row = {"runs": size, "mode": mode, "status": "ok" if ok else done[0]["status"]}
        if ok:
            row.update(seconds=float(np.median([r["seconds"] for r in ok])), all_seconds=[r["seconds"] for r in ok],
                       main_bytes=max(r["main_bytes"] for r in ok), worker_bytes=max(r["worker_bytes"] for r in ok),
                       formula=ok[0]["formula"], same_as_serial=all(r["digest"] == base.get("digest") for r in ok))
        rows.append(row)
    serial = rows[0]
    for row in rows:
        if row["status"] == "ok" and serial["status"] == "ok":
            row["speedup"] = serial["seconds"] / row["seconds"]
        log(f"fit of {size:>9,} runs, {row['mode']:6}: "
            + (f"{row['seconds']:7.2f} s (median of {', '.join(f'{t:.2f}' for t in row['all_seconds'])}), "
               f"x{row.get('speedup', float('nan')):.2f}, main {row['main_bytes'] / 2 ** 20:6.0f} MiB, largest worker "
               f"{row['worker_bytes'] / 2 ** 20:6.0f} MiB, same as serial: {row['same_as_serial']}"
               if row["status"] == "ok" else row["status"]))
    judged = [r for r in rows if r["mode"] != "serial" and "speedup" in r]
    return {"fit_rows": rows, "fit_goal_met": _goal_met(rows, judged, lambda r: r["runs"]),
            "fit_same_as_serial": bool(judged and all(r["same_as_serial"] for r in judged))}


def _goal_met(rows: list[dict], judged: list[dict], case: Callable[[dict], Any]) -> bool:
    """>= GOAL_SPEEDUP where the serial run of the case took over GOAL_WORK seconds, no loss below."""
    serial = {case(r): r["seconds"] for r in rows if r["mode"] == "serial" and r["status"] == "ok"}
    big = [r for r in judged if serial[case(r)] > GOAL_WORK]
    return bool(judged and all(r["speedup"] >= GOAL_SPEEDUP for r in big)
                and all(r["speedup"] >= 1.0 for r in judged if r not in big))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^3 kernels and a fit of 10^4 runs only")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "MODE"), help=argparse.SUPPRESS)  # a child process
    ap.add_argument("--one-fit", nargs=2, metavar=("RUNS", "MODE"), help=argparse.SUPPRESS)  # a child process
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_mode(*args.one)))
        return 0
    if args.one_fit:
        print(json.dumps(run_fit(int(args.one_fit[0]), args.one_fit[1])))
        return 0
    out = collect(args.quick)
    goal = f"(>= {GOAL_SPEEDUP}x with 2 workers above {GOAL_WORK:g} s of serial work, no loss below)"
    print(f"kernels: goal {goal} {'met' if out['goal_met'] else 'not met'}; every parallel run equals the "
          f"serial one: {out['all_same_as_serial']}")
    print(f"one fit: goal {goal} {'met' if out['fit_goal_met'] else 'not met'}; every parallel run equals the "
          f"serial one: {out['fit_same_as_serial']}")
    if out["extrap"]:
        print(f"Extra-P on {out['extrap']['kernels']} kernels: {out['extrap']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
