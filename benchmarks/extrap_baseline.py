"""Extra-P's accuracy on the canonical extrapolation tasks, and its command-line speed.

Run ``python -m benchmarks.extrap_baseline [--quick] [--out results.json]``.  Prints one
line per task group and modeler (relative error median / mean / worst over held-out
configurations, best-p hits, mean Spearman correlation of the p ordering, modelling
seconds, formula), a per-task summary over rows and over groups, and the wall time of
``extrap --version`` and of the ``extrap`` CLI on a file of 1000 one-parameter kernels.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.extrap_text import synthetic_kernels_text
from benchmarks.extrap_tool import MODELERS, ensure_extrap, extrap_version, run_extrap, time_cli
from benchmarks.scoring import GroupScore, aggregate, score_group
from benchmarks.tasks import build_tasks


def _pct(value: float) -> str:
    return f"{100 * value:9.1f}%" if np.isfinite(value) else f"{'inf':>10}"


def _row(task, modeler: str, result, score: GroupScore | None, width: int) -> str:
    if score is None:
        return f"{task.name:18} {task.group:40} {modeler:9} {result.status}"
    s = score.summary
    best = f"{score.best_p_hits}/{len(score.best_p)}" if score.best_p else "-"
    rho = f"{score.mean_spearman:5.2f}" if np.isfinite(score.mean_spearman) else "  nan"
    formula = (result.formula or "")[:width]
    return (f"{task.name:18} {task.group:40} {modeler:9} {_pct(s.median)} {_pct(s.mean)} "
            f"{_pct(s.worst)} {best:>6} {rho} {result.seconds:6.3f}  {formula}")


def accuracy(tasks, modelers=MODELERS, width: int = 90) -> dict:
    """Run Extra-P on every task group and print the accuracy table; return the records."""
    header = (f"{'task':18} {'group':40} {'modeler':9} {'median':>10} {'mean':>10} {'worst':>10} "
              f"{'best p':>6} {'rho':>5} {'sec':>6}  formula")
    records: dict = {}
    for modeler in modelers:
        results = run_extrap(tasks, modeler)
        print(header)
        per_task: dict[str, list[GroupScore]] = {}
        for task in tasks:
            result = results[task.key]
            score = (score_group(task, result.predictions, result.train_predictions)
                     if result.ok else None)
            print(_row(task, modeler, result, score, width))
            if score is not None:
                per_task.setdefault(task.name, []).append(score)
            records[f"{modeler}|{task.name}|{task.group}"] = {
                "status": result.status, "formula": result.formula, "seconds": result.seconds,
                "warnings": list(result.warnings),
                **({"median": score.summary.median, "mean": score.summary.mean,
                    "worst": score.summary.worst, "n_points": score.summary.n_points,
                    "best_p_hits": score.best_p_hits, "best_p_slices": len(score.best_p),
                    "spearman": score.mean_spearman,
                    "best_p": [{"fixed": [float(v) for v in b.fixed], "actual": b.actual_best_p,
                                "predicted": b.predicted_best_p, "spearman": b.spearman}
                               for b in score.best_p]} if score else {})}
        print(f"\nsummary ({modeler}): relative error over rows (pooled) | over group medians")
        for name, scores in per_task.items():
            agg = aggregate(scores)
            r, g = agg["rows"], agg["groups"]
            hits = sum(s.best_p_hits for s in scores)
            slices = sum(len(s.best_p) for s in scores)
            print(f"  {name:18} rows n={r.n_points:4} median {_pct(r.median)} mean {_pct(r.mean)} "
                  f"worst {_pct(r.worst)} | groups n={g.n_points:2} median {_pct(g.median)} "
                  f"mean {_pct(g.mean)} worst {_pct(g.worst)} | best p {hits}/{slices}")
            records[f"{modeler}|{name}|summary"] = {
                "rows": vars(r), "groups": vars(g), "best_p_hits": hits, "best_p_slices": slices}
        print()
    return records


def speed(n_kernels: int = 1000) -> dict:
    """Time ``extrap --version`` and the CLI on ``n_kernels`` 5-point kernels (both modelers)."""
    out: dict = {}
    timing = time_cli(["--version"])
    print(f"extrap --version: wall {timing.seconds:.3f} s, cpu {timing.cpu_seconds:.3f} s "
          f"({timing.status})")
    out["version"] = timing._asdict()
    with tempfile.TemporaryDirectory(prefix="extrap-speed-") as tmp:
        path = Path(tmp) / "kernels.txt"
        path.write_text(synthetic_kernels_text(n_kernels=n_kernels, n_points=5))
        for modeler in MODELERS:
            timing = time_cli(["--text", str(path), "--modeler", modeler,
                               "--print", "functions", "--disable-progress"])
            print(f"extrap --text ({n_kernels} kernels x 5 points) --modeler {modeler}: "
                  f"wall {timing.seconds:.2f} s, cpu {timing.cpu_seconds:.2f} s ({timing.status})")
            out[f"cli_{modeler}"] = timing._asdict()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="representative groups only")
    parser.add_argument("--datasets", type=Path, default=None, help="shared datasets folder")
    parser.add_argument("--no-speed", action="store_true", help="skip the CLI timings")
    parser.add_argument("--speed-only", action="store_true", help="only the CLI timings")
    parser.add_argument("--out", type=Path, default=None, help="write results as JSON here")
    args = parser.parse_args(argv)

    if args.speed_only:
        speed()
        return 0
    python, status = ensure_extrap()
    print(f"Extra-P {extrap_version() if python else '-'} ({status}); "
          f"{platform.node()} {platform.processor() or platform.machine()}; "
          f"{datetime.datetime.now().isoformat(timespec='seconds')}")
    tasks, skipped = build_tasks(args.datasets, quick=args.quick)
    print(f"{len(tasks)} task groups; skipped:")
    for s in skipped:
        print(f"  {s.name} {s.group}: {s.reason}")
    print()
    report = {"extrap_version": extrap_version() if python else None, "status": status,
              "machine": platform.node(), "date": datetime.datetime.now().isoformat(),
              "accuracy": accuracy(tasks)}
    if not args.no_speed:
        report["speed"] = speed()
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
