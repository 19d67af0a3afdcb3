"""Extrapolation accuracy of automodel on the canonical tasks of the shared datasets, per metric.

Trains on the small runs of every task group, predicts the held-out large ones, and prints per task
the relative error over pooled held-out configurations (median / mean / worst) and the best-p hits,
scored exactly like every other contender of ``python -m benchmarks`` (``benchmarks.records``).

Run: ``python -m benchmarks.accuracy [--quick] [--metric rel_s forward ...] [--space default]``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from benchmarks.contenders import automodel_contender
from benchmarks.records import task_summary
from benchmarks.tasks import by_name, load_tasks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one or two groups per task")
    ap.add_argument("--space", default="default")
    ap.add_argument("--metric", nargs="+", default=[None], help="ranking metric(s) to compare")
    args = ap.parse_args(argv)
    tasks = load_tasks(quick=args.quick)
    rows = []
    for metric in args.metric:
        start = time.perf_counter()
        contender = automodel_contender(metric, args.space)
        outcomes = contender.run(tasks, {})
        for name, groups in by_name(tasks).items():
            s = task_summary(groups, contender.name, outcomes)
            slices = s.get("best_p_slices", 0)
            rows.append({"metric": metric or "space default", "task": name, "groups": len(groups),
                         "median": s.get("median"), "mean": s.get("mean"), "worst": s.get("worst"),
                         "best p hits": f"{s['best_p_hits']}/{slices}" if slices else "-",
                         "status": s["status"]})
        print(f"metric {metric or 'space default'}: {time.perf_counter() - start:.1f} s for {len(tasks)} groups")
    table = pd.DataFrame(rows).astype({"median": float, "mean": float, "worst": float})
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False, float_format=lambda v: f"{100 * v:.1f}%", na_rep="inf"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
