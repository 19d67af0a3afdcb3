"""Check FiM-Com on the OSU broadcast data (train P <= 32, test P >= 64) and measure its speed.

Run: ``python benchmarks/fim_com_check.py [--datasets DIR] [--patterns broadcast scatter]``.
Reads ``osu_coll_orfeo_tanjaderin.csv`` in place (never copied); times are microseconds. For each
bcast algorithm and queueing pattern it prints the relative error |pred - actual| / actual on the
held-out rows (median, mean, worst), then the simulation throughput in jobs per second.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.templates._fim_queue import QueueParams, config_rng, draw, run
from automodel.templates.fim_com import TEMPLATE

DATASET = "osu_coll_orfeo_tanjaderin.csv"


def load_bcast(datasets: Path) -> pd.DataFrame:
    """The bcast rows with canonical columns ``n`` (bytes), ``p``, ``time`` (microseconds)."""
    frame = pd.read_csv(datasets / DATASET)
    frame = frame[frame["collective"] == "bcast"].rename(columns={"P": "p", "msg_bytes": "n"})
    return frame[["algorithm", "n", "p", "time"]].astype({"algorithm": str})


def accuracy(frame: pd.DataFrame, patterns: list[str]) -> list[dict]:
    """Fit per (algorithm, pattern) on P <= 32 and score on P >= 64."""
    rows = []
    for algorithm, group in frame.groupby("algorithm", sort=True):
        train, test = group[group["p"] <= 32], group[group["p"] >= 64]
        for pattern in patterns:
            start = time.perf_counter()
            model = TEMPLATE.fit(train[["n", "p", "time"]], pattern=pattern)
            fitted = time.perf_counter()
            pred = model.predict(test)
            done = time.perf_counter()
            actual = test["time"].to_numpy()
            err = np.abs(pred - actual) / actual
            train_err = np.abs(model.predict(train) - train["time"].to_numpy()) / train["time"].to_numpy()
            label = pattern if pattern == model.pattern else f"{pattern}->{model.pattern}"
            rows.append({"algorithm": algorithm, "pattern": label, "test_rows": len(test),
                         "train_median": float(np.median(train_err)), "median": float(np.median(err)),
                         "mean": float(np.mean(err)), "worst": float(np.max(err)),
                         "fit_s": fitted - start, "predict_s": done - fitted})
    return rows


def throughput() -> list[dict]:
    """Jobs per second of the vectorised simulation (jobs entering D, summed over replications)."""
    q = QueueParams(zeta_max=1e4, meta_mean=0.05, meta_log=0.01, init_mean=1.0, recv_mean=0.1)
    out = []
    for pattern, p, jobs, reps in (("scatter", 256, 16, 256), ("gather", 256, 16, 256),
                                   ("broadcast", 256, 256, 32)):  # within MAX_VARIATES of a kind
        d = draw(pattern, jobs * 1024.0, p, 1024.0, reps, config_rng(0, pattern, jobs * 1024.0, p))
        start = time.perf_counter()
        run(d, q)
        seconds = time.perf_counter() - start
        received = reps * (p - 1) * jobs  # job visits at the R stations
        out.append({"pattern": pattern, "p": p, "jobs": d.n_jobs, "seconds": seconds,
                    "jobs_per_s": d.n_jobs / seconds, "receive_visits_per_s": received / seconds})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path,
                        default=Path(os.environ.get("AUTOMODEL_DATASETS", "/work/shared/datasets")))
    parser.add_argument("--patterns", nargs="+", default=["broadcast", "scatter", "auto"])
    args = parser.parse_args()
    print(f"# fim_com_check {datetime.datetime.now().isoformat(timespec='seconds')} "
          f"{platform.node()} {platform.processor() or platform.machine()} numpy {np.__version__}")
    if (args.datasets / DATASET).exists():
        table = pd.DataFrame(accuracy(load_bcast(args.datasets), args.patterns))
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        for pattern, sub in table.groupby("pattern"):
            print(f"pattern {pattern}: median over algorithms of per-algorithm median rel. error "
                  f"{sub['median'].median():.3f}")
    else:
        print(f"dataset {args.datasets / DATASET} absent: accuracy skipped")
    print(pd.DataFrame(throughput()).to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
