"""Extrapolation accuracy of automodel on the canonical tasks of the shared datasets, per metric.

Trains on the small runs of every task group, predicts the held-out large ones, and prints per task
the relative error over pooled held-out configurations (median / mean / worst) and the best-p hits,
scored exactly like Extra-P in ``benchmarks.extrap_baseline`` (``benchmarks.scoring``).

Run: ``python -m benchmarks.accuracy [--quick] [--metric rel_s forward ...] [--space default]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import automodel
from benchmarks.scoring import aggregate, score_group
from benchmarks.tasks import load_tasks


def run_automodel(task, space: str = "default", metric: str | None = None):
    """Fit one task group; return (test predictions, train predictions, formula)."""
    roles = {r: c for r, c in task.params.items() if r in ("n", "p")}
    extras = [c for r, c in task.params.items() if r not in ("n", "p")]
    result = automodel.fit(task.train, time=task.target, n=roles.get("n"), p=roles.get("p"), cpu=None,
                           bw=None, params=extras, space=space, metric=metric, progress=False)
    return result.best.predict(task.test), result.best.predict(task.train), result.best.formula


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one or two groups per task")
    ap.add_argument("--space", default="default")
    ap.add_argument("--metric", nargs="+", default=[None], help="ranking metric(s) to compare")
    args = ap.parse_args(argv)
    tasks = load_tasks(quick=args.quick)
    rows = []
    for metric in args.metric:
        t0 = time.perf_counter()
        per_task: dict[str, list] = {}
        for task in tasks:
            test_pred, train_pred, _ = run_automodel(task, args.space, metric)
            per_task.setdefault(task.name, []).append(score_group(task, test_pred, train_pred))
        for name, scores in per_task.items():
            summary = aggregate(scores)["rows"]
            hits = sum(s.best_p_hits for s in scores if hasattr(s, "best_p_hits"))
            slices = sum(len(s.best_p) for s in scores)
            rows.append({"metric": metric or "space default", "task": name, "groups": len(scores),
                         "median": summary.median, "mean": summary.mean, "worst": summary.worst,
                         "best p hits": f"{hits}/{slices}" if slices else "-"})
        print(f"metric {metric or 'space default'}: {time.perf_counter() - t0:.1f} s for {len(tasks)} groups")
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False, float_format=lambda v: f"{100 * v:.1f}%"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
