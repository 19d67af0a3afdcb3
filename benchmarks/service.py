"""A load benchmark of ``automodel serve`` on 127.0.0.1: predict latency under concurrent clients, and
sustained observe throughput with concurrent writers, every run checked in the store afterwards.

Run ``python -m benchmarks.service [--requests N] [--clients C] [--writers W] [--runs R] [--postgres]``.
The server runs in its own process (``python -m automodel serve --port 0``); the clients are threads of
this one, each with its own connections (one request per connection, as the server speaks HTTP/1.0).
Bounded: ``N`` predict requests and ``R`` observed runs in all.

- **predict**: ``C`` clients send ``N`` requests in all, each one row of the model file (with its band);
  latency percentiles (ms) and requests per second.
- **observe**: ``W`` writers send ``R`` runs in all into one application of a store (SQLite, and
  PostgreSQL with ``--postgres`` when its binaries are installed), one run per request; runs per second,
  then the store is read back: every run must be stored exactly once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "automodel" / "demo" / "cg_fast.csv"


def _post(url: str, body: dict) -> tuple[int, float]:
    data = json.dumps(body).encode()
    start = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST"), timeout=60) as answer:
        answer.read()
        return answer.status, time.perf_counter() - start


def start_server(arguments: list[str], cache: Path, tree: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """``python -m automodel serve ARGUMENTS --port 0`` with the code of ``tree`` in a new process (its
    printing cache in the folder ``cache``), and its URL."""
    env = {**os.environ, "PYTHONPATH": str(tree), "AUTOMODEL_CACHE_DIR": str(cache)}
    server = subprocess.Popen([sys.executable, "-m", "automodel", "serve", *arguments, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tree)
    return server, server.stdout.readline().split()[2]


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    server.wait(timeout=60)


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far (Linux: ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def concurrent_posts(url: str, bodies: list[dict], workers: int, pid: int | None) -> tuple[list, float, float]:
    """POST every body from ``workers`` concurrent clients: the answers, the seconds it took and the CPU
    seconds the server ``pid`` used meanwhile (NaN without ``pid``)."""
    cpu = process_cpu(pid) if pid else math.nan
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        answers = list(pool.map(lambda b: _post(url, b), bodies))
    elapsed = time.perf_counter() - start
    return answers, elapsed, (process_cpu(pid) - cpu) if pid else math.nan


def predict_load(url: str, requests: int, clients: int, pid: int | None = None) -> dict:
    """Latency percentiles of ``requests`` one-row predictions from ``clients`` concurrent clients, and
    the server's CPU milliseconds per request (``pid``: the server's process, Linux)."""
    rng = np.random.default_rng(0)
    bodies = [{"model": "cg", "rows": [{"n": float(n), "p": float(p)}]}
              for n, p in zip(rng.choice([1e5, 2e5, 4e5, 8e5], requests), rng.choice([8, 16, 32, 64], requests))]
    for body in bodies[:20]:  # warm-up
        _post(url + "/predict", body)
    answers, elapsed, cpu = concurrent_posts(url + "/predict", bodies, clients, pid)
    ms = np.array([s for _, s in answers]) * 1e3
    return {"requests": requests, "clients": clients, "ok": sum(s == 200 for s, _ in answers),
            "p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)),
            "max_ms": float(ms.max()), "per_second": requests / elapsed, "server_cpu_ms": cpu / requests * 1e3}


def observe_load(url: str, store: str, runs: int, writers: int, pid: int | None = None) -> dict:
    """Runs per second of ``runs`` one-run observes from ``writers`` concurrent writers, and whether the
    store holds each exactly once afterwards."""
    from automodel import store as S

    rng = np.random.default_rng(1)
    n = rng.uniform(5e4, 4e5, runs)
    p = rng.choice([1.0, 2.0, 4.0, 8.0, 16.0], runs)
    t = 1.6e-7 * n / p + 5e-4 * np.log2(p) + 1.6e-3
    times = t * (1 + 0.02 * rng.standard_normal(runs))
    bodies = [{"app": "cg", "runs": [{"n": float(a), "p": float(b), "time": float(c)}]} for a, b, c in zip(n, p, times)]
    before = len(S.runs(store, "cg"))
    answers, elapsed, cpu = concurrent_posts(url + "/observe", bodies, writers, pid)
    stored = S.runs(store, "cg")["time"].to_numpy()[before:]
    once = len(stored) == runs and bool(np.array_equal(np.sort(stored), np.sort(times)))
    return {"runs": runs, "writers": writers, "ok": sum(s == 200 for s, _ in answers),
            "per_second": runs / elapsed, "stored_once": once, "server_cpu_ms": cpu / runs * 1e3}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--postgres", action="store_true", help="also a PostgreSQL store (a throwaway server)")
    ap.add_argument("--tree", type=Path, default=ROOT,
                    help="serve with the code of this folder (another revision, for a before/after)")
    args = ap.parse_args(argv)
    from automodel import store as S

    with tempfile.TemporaryDirectory(prefix="automodel-service-") as tmp:
        folder = Path(tmp)
        (folder / "models").mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "AUTOMODEL_CACHE_DIR": str(folder)}
        os.environ["AUTOMODEL_CACHE_DIR"] = str(folder)  # this process's observes too
        subprocess.run([sys.executable, "-m", "automodel", "fit", str(DEMO), "--quiet", "-o",
                        str(folder / "models" / "cg.json")], check=True, env=env, capture_output=True)
        stores = {"sqlite": str(folder / "store.db")}
        postgres: list = []
        try:
            if args.postgres:
                sys.path.insert(0, str(ROOT / "tests"))
                from postgres_server import Server, unavailable

                reason = unavailable()
                if reason is None:
                    postgres.append(Server.create())
                    stores["postgresql"] = postgres[0].fresh_database()
                else:
                    print(f"postgresql: skipped ({reason})")
            for kind, store in stores.items():
                S.observe(store, "cg", pd.read_csv(DEMO))
                server, url = start_server(["--store", store, "--models", str(folder / "models")], folder, args.tree)
                try:
                    for clients in (args.clients, 1) if kind == "sqlite" and args.requests else ():
                        r = predict_load(url, args.requests if clients > 1 else args.requests // 4, clients, server.pid)
                        print(f"predict: {r['requests']} requests, {r['clients']} clients: p50 {r['p50_ms']:.1f} ms, "
                              f"p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms, {r['per_second']:.0f}/s, "
                              f"{r['ok']} ok; server CPU {r['server_cpu_ms']:.2f} ms a request")
                    r = observe_load(url, store, args.runs, args.writers, server.pid)
                    print(f"observe ({kind}): {r['runs']} runs, {r['writers']} writers: {r['per_second']:.0f} runs/s, "
                          f"{r['ok']} ok, each stored once: {'yes' if r['stored_once'] else 'NO'}; server CPU "
                          f"{r['server_cpu_ms']:.2f} ms a run")
                finally:
                    stop_server(server)
        finally:
            for server in postgres:
                server.remove()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
