"""Run every benchmark and publish the numbers: ``python -m benchmarks [--quick] [--out DIR]``.

Accuracy: on every canonical task group, automodel (default search space, each ranking metric),
Extra-P (default and refining modelers, in its own venv) and the seeded baselines, on the same
rows (``benchmarks.contenders``), scored by ``benchmarks.records``. Known formulas: automodel and
Extra-P on synthetic functions of known formula (``benchmarks.known_formulas``). SMPI workloads: n and p
beyond the training runs of the bundled sweeps (``benchmarks.workloads``). Model selection: the chosen model
against the best candidate on the development part of ``benchmarks.corpus`` (``benchmarks.selection``; two
tasks without Extra-P with ``--quick``). Speed: ``benchmarks.speed.collect``.
Writes ``RESULTS.md`` (``benchmarks.report``: only the generated blocks between their markers are replaced;
every hand-written line is kept; a file with damaged markers is refused before the run),
``results.json`` (the known-formula fits in ``known_formulas_cases.json``) and ``plots/<task>.png``
into ``--out`` (default: ``benchmarks/``).

``--quick`` runs one representative group per task, a few known formulas, the short speed
measurements, never installs Extra-P, and writes to ``out/benchmarks-quick/`` (it refuses to
overwrite the published results).
Without the shared datasets it falls back to a task built from the bundled SMPI runs
(``benchmarks.tasks.BUNDLED_FILES``), but never into the published results.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # per-core speed numbers: single-threaded BLAS, set before numpy

import argparse  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

from automodel.solve.metrics import METRICS  # noqa: E402
from benchmarks import bands, known_formulas, plots, records, report, selection, speed, workloads  # noqa: E402
from benchmarks.contenders import default_contenders, run_contenders  # noqa: E402
from benchmarks.extrap_tool import ensure_extrap, extrap_version  # noqa: E402
from benchmarks.tasks import bundled_tasks, by_name, tasks_or_bundled  # noqa: E402

PUBLISHED = Path(__file__).resolve().parent
QUICK_OUT = PUBLISHED.parent / "out" / "benchmarks-quick"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="representative groups, short speed runs (< 2 min)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {PUBLISHED}, or {QUICK_OUT} with --quick)")
    ap.add_argument("--datasets", type=Path, default=None, help="shared datasets folder")
    ap.add_argument("--bundled", action="store_true", help="use the bundled task even if the datasets exist")
    ap.add_argument("--metrics", nargs="*", default=list(METRICS), choices=METRICS,
                    help="ranking metrics of the automodel contenders besides the space default")
    ap.add_argument("--space", default="default", help="automodel search space")
    ap.add_argument("--no-extrap", action="store_true", help="leave Extra-P out")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    ap.add_argument("--no-known", action="store_true", help="skip the known-formula suite")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = QUICK_OUT if args.quick else PUBLISHED
    if args.quick and args.out.resolve() == PUBLISHED:
        ap.error(f"--quick never writes the published results in {PUBLISHED}; pass another --out")
    return args


def run_accuracy(args: argparse.Namespace, notes: list[str]) -> dict:
    """Run every contender on every task group; return the records with the plots drawn.

    What the reader must know about the run (fallbacks, Extra-P missing) is appended to ``notes``.
    """
    fallback = None
    if args.bundled:
        tasks, skipped = bundled_tasks(), []
        notes.append("--bundled: the task built from the bundled SMPI runs replaces the canonical tasks")
    else:
        tasks, skipped, fallback = tasks_or_bundled(args.datasets, args.quick)
        notes += [fallback] if fallback else []
    if (args.bundled or fallback) and args.out.resolve() == PUBLISHED:
        raise SystemExit(f"{notes[-1]}\nThe published results in {PUBLISHED} are made on the canonical tasks: "
                         "pass --datasets (or set AUTOMODEL_DATASETS), or write elsewhere with --out.")
    install = not args.quick
    if not args.no_extrap:
        python, status = ensure_extrap(install=install)
        if python is None:
            notes.append("Extra-P not installed; run the full benchmark to install it" if args.quick
                         else f"Extra-P could not be installed: {status}")
    for note in notes:
        print(f"note: {note}")
    contenders = default_contenders(args.metrics, args.space, extrap=not args.no_extrap, install=install)
    panels = {name: plots.panels(groups) for name, groups in by_name(tasks).items()}
    extra = plots.curve_points([p for ps in panels.values() for p in ps])
    outcomes = run_contenders(contenders, tasks, extra)
    results = records.build(tasks, contenders, outcomes)
    results["skipped"] = [vars(s) for s in skipped]
    results["bands"] = bands.collect(tasks, outcomes.get(records.HEADLINE, {}), args.quick)
    drawn = [c for c in contenders if c.kind != "automodel" or c.name == "automodel"]
    results["plots"] = {}
    for name, task_panels in panels.items():
        path = plots.plot_task(task_panels, outcomes, drawn, args.out / "plots" / f"{name}.png")
        results["plots"][name] = path.relative_to(args.out).as_posix()
    return results


def command(argv: list[str]) -> str:
    """The command line that reproduces this run (with ``AUTOMODEL_DATASETS`` when it is set)."""
    env = os.environ.get("AUTOMODEL_DATASETS")
    prefix = [f"AUTOMODEL_DATASETS={shlex.quote(env)}"] if env else []
    return " ".join([*prefix, shlex.join(["python", "-m", "benchmarks", *argv])])


def _refuse_damaged(action: Callable[..., object], *args: object) -> None:
    """``action(*args)``; damaged generated markers in ``RESULTS.md`` end the run with their one-line error."""
    try:
        action(*args)
    except report.DamagedMarkers as err:
        raise SystemExit(f"error: {err}") from None


def main(argv: list[str] | None = None) -> int:
    start = time.perf_counter()
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    target = args.out / "RESULTS.md"
    _refuse_damaged(report.check, target)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": command(argv), "quick": args.quick,
            "machine": report.machine(), "notes": []}
    results = run_accuracy(args, meta["notes"])
    if not args.no_known:
        results.update(known_formulas.collect(args.quick, extrap=not args.no_extrap, install=not args.quick,
                                              command=meta["command"]))
        print(known_formulas.table_text(results["known_formulas_groups"], "noise"))
    results["workloads"] = speed.guarded(workloads.collect, args.quick, extrap=not args.no_extrap,
                                         install=not args.quick)
    if results["workloads"]["status"] == "ok":
        workloads.print_result(results["workloads"]["result"])
    results["selection"] = speed.guarded(selection.development, args.quick, extrap=not args.no_extrap)
    if results["selection"]["status"] == "ok":
        print("\n".join(selection.section_lines(results["selection"]["result"])))
    results["speed"] = None if args.no_speed else speed.collect(args.quick)
    meta["versions"] = report.versions(None if args.no_extrap else extrap_version())
    meta["seconds"] = time.perf_counter() - start
    results = records.jsonable({"meta": meta, **results})
    _refuse_damaged(report.write, results, target)
    records.write_results(results, args.out)
    for goal in results["goal"]:
        print(f"{goal['task']:20} goal met? {goal['text']}")
    if results["workloads"]["status"] == "ok":
        print(f"{workloads.TASK:20} goal met? {results['workloads']['result']['goal']['text']}")
    print(f"wrote {target}, {args.out / 'results.json'}, the known-formula cases and {len(results['plots'])} plot(s) "
          f"in {meta['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
