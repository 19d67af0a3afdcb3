"""Extrapolation accuracy of automodel on the canonical tasks of the shared datasets, per metric.

Trains on the small runs of every task group, predicts the held-out large ones, and prints per task
the relative error over pooled held-out configurations (median / mean / worst) and the best-p hits,
scored exactly like every other contender of ``python -m benchmarks`` (``benchmarks.records``).
``--all`` adds Extra-P (default and refining modelers, from its venv, never installed here) and the
seeded baselines, i.e. the accuracy part of ``python -m benchmarks`` on the chosen tasks.

Run: ``python -m benchmarks.accuracy [--quick] [--task NAME ...] [--all] [--metric rel_s forward ...]
[--space default]``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from benchmarks.contenders import BASELINES, automodel_contender, extrap_contender, template_contender
from benchmarks.records import task_summary
from benchmarks.tasks import by_name, load_tasks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one or two groups per task")
    ap.add_argument("--space", default="default")
    ap.add_argument("--metric", nargs="+", default=[None], help="ranking metric(s) to compare")
    ap.add_argument("--task", nargs="+", default=None, metavar="NAME", help="only these tasks")
    ap.add_argument("--all", action="store_true",
                    help="also Extra-P (default, refining; if installed) and the seeded baselines")
    args = ap.parse_args(argv)
    tasks = load_tasks(quick=args.quick)
    if args.task:
        unknown = set(args.task) - {t.name for t in tasks}
        if unknown:
            ap.error(f"unknown task(s) {', '.join(sorted(unknown))}; known: {', '.join(by_name(tasks))}")
        tasks = [t for t in tasks if t.name in args.task]
    contenders = [automodel_contender(metric, args.space) for metric in args.metric]
    if args.all:
        contenders += [extrap_contender(modeler, install=False) for modeler in ("default", "refining")]
        contenders += [template_contender(*baseline) for baseline in BASELINES]
    rows = []
    for contender in contenders:
        start = time.perf_counter()
        outcomes = contender.run(tasks, {})
        for name, groups in by_name(tasks).items():
            s = task_summary(groups, contender.name, outcomes)
            slices = s.get("best_p_slices", 0)
            rows.append({"contender": contender.name, "task": name, "groups": len(groups),
                         "median": s.get("median"), "mean": s.get("mean"), "worst": s.get("worst"),
                         "best p hits": f"{s['best_p_hits']}/{slices}" if slices else "-",
                         "status": s["status"]})
        print(f"{contender.name}: {time.perf_counter() - start:.1f} s for {len(tasks)} groups")
    table = pd.DataFrame(rows).astype({"median": float, "mean": float, "worst": float})
    if args.all:
        table = table.sort_values("task", kind="stable", key=lambda c: c.map(list(by_name(tasks)).index))
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        print(table.to_string(index=False, float_format=lambda v: f"{100 * v:.1f}%", na_rep="inf"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
