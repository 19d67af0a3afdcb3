"""A PostgreSQL server stopped in the middle of concurrent observers (issue 31, cause 11): every observer
waits for it (the store's retry budget, ``automodel.store.db.RETRY_S``) and finishes; no run is lost or
stored twice, and the updates are numbered without gaps.

Run: ``python -m benchmarks.store_restart [--observers 8] [--batches 12] [--down 10]``. It starts a
throwaway server as the store tests do (``tests/postgres_server.py``: ``initdb`` and ``pg_ctl`` on
``PATH`` or under ``/usr/lib/postgresql/*/bin``, and psycopg), makes an application with one observe,
starts the observers (each a process that observes its batches of two runs one after the other), stops
the server (``pg_ctl stop -m fast``) once every observer has stored a batch, starts it again ``--down``
seconds later, and checks the store. Prints one line per check and exits 1 when one fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: one observer: argv = url, observer number, batches; observes its batches one after the other
OBSERVER = """
import sys
import pandas as pd
from automodel.store import observe
url, k, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for b in range(batches):
    n = 1000.0 * (1 + k) + 10.0 * b
    observe(url, "app", pd.DataFrame({"n": [n, 2 * n], "p": [2, 4], "time": [1e-4 * n / 2 + 0.5, 1e-4 * n / 2 + 0.5]}))
    print("stored", b, flush=True)
"""


def _first_runs() -> "object":
    import pandas as pd

    return pd.DataFrame([{"n": n, "p": p, "time": 1e-4 * n / p + 0.01 * p + 0.5}
                         for n in (1000.0, 2000.0, 4000.0, 8000.0) for p in (1, 2, 4, 8)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--observers", type=int, default=8)
    ap.add_argument("--batches", type=int, default=12, help="batches of two runs per observer")
    ap.add_argument("--down", type=float, default=10.0, help="seconds the server is down")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests"))
    from postgres_server import Server, unavailable

    reason = unavailable()
    if reason:
        print(f"skipped: {reason}")
        return 0
    from automodel.store import observe, runs, verify
    from automodel.store.db import RETRY_S

    server = Server.create()
    try:
        url = server.fresh_database()
        observe(url, "app", _first_runs())
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        procs = [subprocess.Popen([sys.executable, "-c", OBSERVER, url, str(k), str(args.batches)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for k in range(args.observers)]
        for proc in procs:  # every observer has stored a batch: it is in the middle of its work
            proc.stdout.readline()
        started = time.monotonic()
        server.stop("fast")
        time.sleep(args.down)
        server.start()
        outputs = [proc.communicate(timeout=600) for proc in procs]
        took = time.monotonic() - started
        frame = runs(url, "app")
        expected = 16 + 2 * args.observers * args.batches
        updates = sorted(set(frame["update_no"]))
        checks = {
            f"every observer finished (exit 0), in {took:.1f} s after the stop": all(p.returncode == 0 for p in procs),
            f"runs stored: {len(frame)} of {expected}": len(frame) == expected,
            "no run stored twice": not frame.duplicated(["n", "p", "time"]).any(),
            f"updates numbered 1..{len(updates)} without gaps": updates == list(range(1, len(updates) + 1)),
            "persisted statistics equal a rebuild (verify)": verify(url, "app")["runs"] == expected,
        }
        print(f"{args.observers} observers x {args.batches} batches, server down {args.down:g} s, retry budget "
              f"{RETRY_S:g} s")
        for text, ok in checks.items():
            print(f"  {'ok  ' if ok else 'FAIL'} {text}")
        notes = sum("retrying for up to" in err for _, err in outputs)
        print(f"  {notes} of {args.observers} observers noted their retries on stderr")
        for k, (_, err) in enumerate(outputs):
            if procs[k].returncode:
                print(f"  observer {k}: {err.strip().splitlines()[-1] if err.strip() else 'no message'}")
        return 0 if all(checks.values()) else 1
    finally:
        server.remove()


if __name__ == "__main__":
    sys.exit(main())
