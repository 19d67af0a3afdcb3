"""Replay a measured sweep as if it were the application: ``replay.py RUNS.csv N P`` prints ``time=<s>``.

The time is the one measured at (n, p) in RUNS.csv (the mean of its repetitions); a configuration
that was not measured fails (exit 1), as a run that crashed would. It lets an adaptive campaign run
anywhere, on data measured once::

    automodel run --cmd 'python3 examples/replay.py examples/data/sweeps/cg_fast.csv {n} {p}' \\
        --n 50000:1600000:*2 --p 1:256:*2 --time-regex 'time=(\\S+)' --no-cpu -o cg_adaptive.csv \\
        --adaptive --target n=1600000,p=256 --until 15%
"""

from __future__ import annotations

import csv
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: replay.py RUNS.csv N P", file=sys.stderr)
        return 2
    path, n, p = argv[0], float(argv[1]), float(argv[2])
    with open(path, newline="", encoding="utf-8") as fh:
        times = [float(row["time"]) for row in csv.DictReader(fh)
                 if float(row["n"]) == n and float(row["p"]) == p and row.get("status", "0") == "0"]
    if not times:
        print(f"replay: n={n:g} p={p:g} was not measured in {path}", file=sys.stderr)
        return 1
    print(f"time={sum(times) / len(times):.9g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
