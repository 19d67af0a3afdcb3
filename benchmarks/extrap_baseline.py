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

from benchmarks.contenders import extrap_contender
from benchmarks.extrap_text import synthetic_kernels_text
from benchmarks.extrap_tool import MODELERS, ensure_extrap, extrap_version, time_cli
from benchmarks.records import group_meta, group_record, jsonable, task_summary
from benchmarks.tasks import build_tasks, by_name


def _pct(value: float | None) -> str:
    return f"{100 * value:9.1f}%" if value is not None else f"{'inf':>10}"


def _row(record: dict, modeler: str, width: int) -> str:
    head = f"{record['task']:18} {record['group']:40} {modeler:9}"
    if record["status"] != "ok":
        return f"{head} {record['status']}"
    best = f"{record['best_p_hits']}/{record['best_p_slices']}" if record["best_p_slices"] else "-"
    rho = f"{record['spearman']:5.2f}" if record["spearman"] is not None else "  nan"
    return (f"{head} {_pct(record['median'])} {_pct(record['mean'])} {_pct(record['worst'])} {best:>6} "
            f"{rho} {record['seconds']:6.3f}  {(record['formula'] or '')[:width]}")


def accuracy(tasks, modelers=MODELERS, width: int = 90) -> dict:
    """Run Extra-P on every task group and print the accuracy table; return the records."""
    header = (f"{'task':18} {'group':40} {'modeler':9} {'median':>10} {'mean':>10} {'worst':>10} "
              f"{'best p':>6} {'rho':>5} {'sec':>6}  formula")
    records: dict = {}
    for modeler in modelers:
        contender = extrap_contender(modeler)
        outcomes = contender.run(tasks, {})
        print(header)
        for task in tasks:
            record = group_record(task, contender.name, outcomes[task.key])
            print(_row(record, modeler, width))
            records[f"{modeler}|{task.name}|{task.group}"] = {**group_meta(task), **record}
        print(f"\nsummary ({modeler}): relative error over rows (pooled) | median over group medians")
        for name, groups in by_name(tasks).items():
            s = task_summary(groups, contender.name, outcomes)
            records[f"{modeler}|{name}|summary"] = s
            if "median" not in s:
                print(f"  {name:18} {s['status']}")
                continue
            print(f"  {name:18} rows n={s['n_points']:4} median {_pct(s['median'])} mean {_pct(s['mean'])} "
                  f"worst {_pct(s['worst'])} | groups n={s['n_groups']:2} ok {s['n_ok']:2} median "
                  f"{_pct(s['group_median_of_medians'])} | best p {s['best_p_hits']}/{s['best_p_slices']}")
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
        args.out.write_text(json.dumps(jsonable(report), indent=1, allow_nan=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
