"""The ``automodel run`` subcommand: run an application over a designed grid, then fit the runs.

Examples
--------
::

    automodel run --cmd 'mpirun -np {p} ./app {n}' --n 1000:8000:8 --p 1,2,4,8 --reps 3 -o runs.csv
    automodel run --cmd 'smpirun -np {p} ./kmeans {n} {k}' --n 1000:4000:4 --p 1:64:*2 \\
        --param k=4,8 --time-regex 'time=(\\S+)' --capture comp='comp=(\\S+)' --dry-run
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from automodel.cli.common import STORE_HELP, check_app, number, rows_count, whole, width
from automodel.data.numerals import is_number, number_text
from automodel.names import printable, split_pairs
from automodel.terminal import fit_lines, interactive, shorten, wrap
from automodel.errors import DataError

if TYPE_CHECKING:  # the runner is imported when the command runs: building the parser stays cheap
    from automodel.runner import Campaign

__all__ = ["register", "handle"]

_NOT_PARAMS = {"rep", "time", "cpu", "bw", "status", "error", "started"}


def register(subparsers: Any) -> None:
    """Add the ``run`` subcommand to an argparse ``subparsers`` object."""
    parser = subparsers.add_parser(
        "run",
        help="run an application over a grid of n, p (and extras), record time and load, then fit",
        description=(
            "Expand the grid, run each point without a shell (placeholders {n}, {p}, extras, {rep}, {index} "
            "are substituted as whole arguments), append each run to the CSV as it finishes (a re-run "
            "resumes), then fit the successful runs. Ranges: a:b:k (k linear points), a:b:k:log, a:b:*f, "
            "a:b:+s, or lists v1,v2,..."
        ),
    )
    parser.add_argument("--cmd", required=True, help="command template, e.g. 'mpirun -np {p} ./app {n}'")
    parser.add_argument("--n", help="values of n (problem size), e.g. 1000:8000:8")
    parser.add_argument("--p", help="values of p (processes), e.g. 1,2,4,8 or 1:256:*2")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=SPEC",
                        help="an extra parameter and its values, e.g. k=4,8 (repeatable)")
    parser.add_argument("--reps", type=whole, default=1, help="repetitions per grid point (default 1)")
    parser.add_argument("--timeout", type=number, help="seconds after which a run is killed and recorded as failed")
    parser.add_argument("--time-regex", help="regex whose first group is the time the application prints "
                        "(default: measured wall time)")
    parser.add_argument("--capture", action="append", default=[], metavar="NAME=REGEX",
                        help="record another number the application prints, e.g. comp='comp=(\\S+)'; "
                        "a cpu or bw capture replaces the measured load (repeatable)")
    parser.add_argument("--bw-probe", help="command run before each run that prints the free bandwidth fraction")
    parser.add_argument("--no-cpu", action="store_true", help="do not sample the free CPU fraction")
    parser.add_argument("-o", "--output", default="runs.csv", help="CSV of runs, appended to and resumed (default runs.csv)")
    parser.add_argument("--retry-failed", action="store_true", help="run again the runs recorded as failed")
    parser.add_argument("--cwd", help="working directory of the runs")
    parser.add_argument("--dry-run", action="store_true", help="print the expanded grid and commands, run nothing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-fit", action="store_true", help="only run, do not fit")
    parser.add_argument("--top", type=rows_count, default=5, help="models to print after the fit (default 5)")
    parser.add_argument("--space", default="default", help="search space for the fit (default 'default')")
    parser.add_argument("--store", metavar="PATH|URL", help="also record the runs in this store: " + STORE_HELP)
    parser.add_argument("--app", help="application name under which runs are stored (with --store)")
    adaptive = parser.add_argument_group(
        "adaptive campaign", "with --adaptive the grid is what may be run: a seed of its smallest levels (3 of "
        "each, 4 of p) is run, then after each fit the runs automodel suggest ranks best (the most narrowing "
        "of the band at --target per core-hour), until the band is within --until or --budget is spent; "
        "each step is printed and appended to OUTPUT.history.csv; a re-run resumes")
    adaptive.add_argument("--adaptive", action="store_true", help="run suggested points, not the whole grid")
    adaptive.add_argument("--target", metavar="NAME=V,...", help="where the prediction matters, e.g. n=1e6,p=1024")
    adaptive.add_argument("--until", metavar="WIDTH%", help="stop when the 90%% band at the target is within "
                          "+-WIDTH, e.g. 15%%")
    adaptive.add_argument("--budget", type=number, metavar="CORE_HOURS",
                          help="stop when the campaign (seed included) has spent this many core-hours")
    adaptive.add_argument("--per-step", type=whole, default=3, help="runs per step (default 3)")
    adaptive.add_argument("--max-p", type=number, help="the largest p the machine has: the target's p may not exceed it")
    adaptive.add_argument("--plot", metavar="FIG", help="draw the band at the target against the core-hours "
                          "spent, step by step (.png, .svg, .pdf)")
    parser.set_defaults(handler=handle)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    """``NAME=VALUE`` items of ``flag`` (``--param``, ``--capture``), each name once and each value given."""
    out = split_pairs(items, flag, DataError)
    for name, value in out.items():
        if not value:
            raise DataError(f"{flag} {name + '='!r}: expected NAME=VALUE")
    return out


def build_campaign(args: argparse.Namespace) -> Campaign:
    """The :class:`~automodel.runner.Campaign` described by parsed ``run`` arguments."""
    from automodel.runner import Campaign, parse_values

    axes: dict[str, list[object]] = {}
    if args.n:
        axes["n"] = parse_values(args.n, "n")
    if args.p:
        axes["p"] = parse_values(args.p, "p")
    for name, spec in _pairs(args.param, "--param").items():
        if name in axes:
            raise DataError(f"--param {name}: parameter given twice")
        axes[name] = parse_values(spec, name)
    if not axes:
        raise DataError("no parameters: give --n, --p and/or --param NAME=SPEC")
    return Campaign(
        command=args.cmd, axes=axes, reps=args.reps, timeout=args.timeout, time_regex=args.time_regex,
        captures=_pairs(args.capture, "--capture"), bw_probe=args.bw_probe, sample_cpu=not args.no_cpu,
        cwd=args.cwd,
    )


#: runs a dry run lists (the count is always printed; a grid of 10^8 points is not listed)
DRY_RUN_SHOWN = 50


def _dry_run(campaign: Campaign) -> int:
    from automodel.runner import count_runs, format_value, iter_plan, substitute
    from automodel.runner.campaign import check

    total = count_runs(campaign)
    names = list(campaign.axes) + ["rep"]
    print("\t".join(names + ["command"]))
    for run in itertools.islice(iter_plan(campaign), DRY_RUN_SHOWN):
        argv = substitute(campaign.command, run)
        print("\t".join([format_value(run[n]) for n in names] + [shlex.join(argv)]))
    if total > DRY_RUN_SHOWN:
        print(f"... and {total - DRY_RUN_SHOWN:,} more")
    print(f"# {total:,} runs", file=sys.stderr)
    check(campaign)  # what the run would refuse, the dry run refuses too (exit 2), after its listing
    return 0


def _fit_frame(path: str, campaign: Campaign) -> tuple[Any, dict[str, object]]:
    """The successful runs (axes, time, cpu, bw columns) and the role options of :func:`automodel.fit`;
    the frame names ``path`` and each run's line in it (``attrs``), so a bad value is reported there."""
    from automodel.data import read_csv
    from automodel.data.cells import floats

    frame = read_csv(Path(path))
    ok = frame[floats(frame["status"]) == 0]
    keep = [c for c in list(campaign.axes) + ["time", "cpu", "bw"] if c in ok.columns and ok[c].notna().any()]
    roles: dict[str, object] = {"time": "time",
                                "params": tuple(c for c in campaign.axes if c not in ("n", "p"))}
    for role in ("n", "p", "cpu", "bw"):
        roles[role] = role if role in keep else None
    runs = ok[keep].reset_index(drop=True)
    runs.attrs.update(source=path, lines=ok.index.to_numpy() + 2)  # the header is line 1
    return runs, roles


def _fit_and_print(path: str, campaign: Campaign, top: int, space: str, progress: bool,
                   cols: int | None) -> None:
    try:
        from automodel import fit
        from automodel.cli.fit import print_result
    except (ImportError, AttributeError) as exc:
        print(f"note: fit skipped, the engine is not available ({exc}); runs are in {path}")
        return
    frame, roles = _fit_frame(path, campaign)
    print_result(fit(frame, space=space, progress=progress, **roles), top=top, width=cols)


def _store(path: str, campaign: Campaign, url: str, app: str | None, space: str, cols: int | None) -> None:
    if not app:
        raise DataError("--store needs --app NAME (the application the runs belong to)")
    try:
        from automodel.store import observe
    except (ImportError, AttributeError) as exc:
        print(f"note: runs not stored, the store is not available ({exc}); runs are in {path}")
        return
    frame, roles = _fit_frame(path, campaign)
    report = observe(url, app, frame, space=space, **roles)
    print("\n".join(fit_lines(report.lines(), cols)))


def _width(text: str) -> float:
    """``"15%"`` or ``"0.15"`` -> 0.15; a one-line DataError otherwise."""
    percent = text.strip().endswith("%")
    digits = text.strip()[:-1] if percent else text
    if not is_number(digits):
        raise DataError(f"--until {text!r}: expected a width such as 15%")
    value = number_text(digits) / (100 if percent else 1)
    if not value > 0:
        raise DataError(f"--until {text!r}: the width must be positive")
    return value


def _adaptive(args: argparse.Namespace, campaign: Campaign) -> int:
    """``run --adaptive``: the seed, then suggested runs until the band or the budget (the group's help)."""
    from dataclasses import replace

    import pandas as pd

    from automodel.cli.suggest import parse_target
    from automodel.data.cells import floats
    from automodel.runner import run_campaign
    from automodel.runner.adaptive import STOPS, adaptive, check_campaign, seed_design
    from automodel.runner.campaign import columns_for
    from automodel.suggestion.candidates import LOAD_ROLES

    if not args.target:
        raise DataError("--adaptive needs --target NAME=V,..., e.g. n=1000000,p=1024")
    until = None if args.until is None else _width(args.until)
    if args.plot:
        from automodel.files import check_output
        from automodel.output.plot import figure_format

        figure_format(args.plot)
        check_output(args.plot, others=(args.output, str(args.output) + ".history.csv"))
    target = parse_target(args.target)
    numeric = {q: [float(v) for v in values] for q, values in campaign.axes.items()
               if all(isinstance(v, (int, float)) for v in values)}
    if set(numeric) != set(campaign.axes):
        raise DataError("--adaptive needs numeric values on every axis")
    max_p = args.max_p  # the grid limits the runs; the target may lie beyond it
    loads = [q for q in LOAD_ROLES if q not in numeric and q in columns_for(campaign)]  # measured, not set
    check_campaign([*numeric, *loads], target, until=until, budget=args.budget, count=args.per_step, max_p=max_p)
    history = Path(str(args.output) + ".history.csv")
    before = _history(history)  # a damaged history is refused before the seed runs
    seed = seed_design(numeric)
    first = replace(campaign, axes={q: sorted(seed[q].unique()) for q in seed})
    progress = not args.no_progress and interactive()  # never into a redirected file
    counts = run_campaign(first, args.output, progress=progress, retry_failed=args.retry_failed)
    print("\n".join(wrap(f"seed: {counts['ran']} runs done ({counts['failed']} failed), {counts['skipped']} "
                         f"already in {args.output}", width(args))))

    def runs() -> pd.DataFrame:
        frame, _ = _fit_frame(args.output, campaign)
        frame.attrs.clear()  # the lines of the file: concatenated runs have none
        return frame.astype({q: float for q in campaign.axes})

    def measure(configs: pd.DataFrame) -> pd.DataFrame:
        """Run each configuration (resumable: a run already in the CSV is skipped) and return its rows."""
        for row in configs.to_dict(orient="records"):
            point = replace(campaign, axes={q: [_axis_value(campaign.axes[q], row[q])] for q in campaign.axes})
            run_campaign(point, args.output, progress=False)
        return runs().merge(configs[list(campaign.axes)].astype(float), on=list(campaign.axes))

    offset = len(before)
    last_width = float(floats(before["width"])[-1]) if offset and "width" in before else float("nan")

    def on_step(step) -> None:  # noqa: ANN001  (a Step)
        print(step.line())
        row = pd.DataFrame([{**step.record(), "step": offset + step.index}])
        fresh = not history.exists() or history.stat().st_size == 0
        if not fresh:  # a history begun by an older version keeps its columns
            row = row.reindex(columns=pd.read_csv(history, nrows=0).columns)
        row.to_csv(history, mode="a", header=fresh, index=False)

    _, roles = _fit_frame(args.output, campaign)
    outcome = adaptive(runs(), measure, target, until=until, budget=args.budget, count=args.per_step,
                       grid=numeric, max_p=max_p, on_step=on_step, last_width=last_width, space=args.space,
                       **roles)
    print(f"stopped: {STOPS[outcome.stop]} ({len(outcome.runs)} runs)")
    print(f"history: {history}")
    print("\n".join(wrap(f"model: T = {outcome.result.best.formula}", width(args), "", "    ")))
    if args.plot:
        from automodel.output.plot import plot_campaign

        print(f"plot: {plot_campaign(pd.read_csv(history), args.plot, until=until)}")
    return 0


def _history(path: Path) -> Any:
    """The steps of an adaptive campaign so far, from ``OUTPUT.history.csv`` (none when it is absent or
    empty). A history that is not a regular file (a FIFO: the first step's append waited for a reader for
    ever) or not a readable CSV (a pandas ParserError traceback) is a one-line DataError naming it."""
    import pandas as pd

    from automodel.data import read_csv
    from automodel.files import check_input

    if not (path.exists() or path.is_symlink()):
        return pd.DataFrame()
    check_input(path, "the CSV history of an adaptive campaign", DataError)
    return read_csv(path) if path.stat().st_size else pd.DataFrame()


def _axis_value(values: Any, value: float) -> object:
    """The value of an axis equal to ``value`` as the axis spells it (``8``, not ``8.0``, in the command)."""
    return next((v for v in values if float(v) == value), value)


def handle(args: argparse.Namespace) -> int:
    """Run the campaign described by ``args``; exit code 0 if at least one run succeeded."""
    from automodel.runner import iter_rows, run_campaign
    from automodel.templates.options import checked_space

    check_app(args)
    campaign = build_campaign(args)
    checked_space(args.space)  # a space file the fit would refuse is refused before anything runs
    if args.adaptive and not args.dry_run:
        return _adaptive(args, campaign)
    if args.target or args.until or args.budget is not None:
        raise DataError("--target, --until and --budget are for --adaptive campaigns")
    if args.dry_run:
        return _dry_run(campaign)
    if args.store and not args.app:
        raise DataError("--store needs --app NAME (the application the runs belong to)")
    progress = not args.no_progress and interactive()  # never into a redirected file
    counts = run_campaign(campaign, args.output, progress=progress, retry_failed=args.retry_failed)
    print("\n".join(wrap(f"{counts['ran']} runs done ({counts['failed']} failed), {counts['skipped']} already in "
                         f"{args.output}", width(args))))
    rows = list(iter_rows(args.output))  # the campaign's own reader
    if not any(row.get("status") == "0" for row in rows):
        # the first failure said here: every run of a command that cannot start fails alike
        first = next((row.get("error") for row in rows if row.get("error")), "")
        said = f"; the first: {shorten(printable(first), 240)}" if first else ""
        print("\n".join(wrap(f"error: no successful run in {args.output}{said} (each run's in its 'error' column)",
                              width(args))), file=sys.stderr)
        return 1
    if args.store:
        _store(args.output, campaign, args.store, args.app, args.space, width(args))
    if not args.no_fit:
        _fit_and_print(args.output, campaign, args.top, args.space, progress, width(args))
    return 0

