"""``automodel fit FILE`` (or ``--store S --app NAME``): search, print the leaderboard and the chosen formula,
write the model."""

from __future__ import annotations

import argparse

from automodel.cli.common import (INPUT_HELP, ROLE_OPTIONS, STORE_HELP, add_input_options, add_jobs_option, check_app,
                                  add_metric_option, add_pooling_options, add_role_options, examples, print_json,
                                  read_input, role_kwargs, rows_count, tell, warn, width)
from automodel.terminal import WIDTH, fit_lines, interactive, status, wrap
from automodel.files import check_output, write_text
from automodel.errors import DataError, install_hint


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fit", help="search for the model of timed runs (CSV, Extra-P files, CUBE profiles)",
                       description="Run the staged search on the runs in FILE (or on the runs of an "
                                   "application in a store) and print the ranked candidates. A file of several "
                                   "kernels needs --kernel NAME (or automodel kernels).",
                       **examples(("automodel fit runs.csv -o model.json", "columns time (in s), n and p"),
                                  ("automodel fit runs.csv --time walltime_ms --n size --p procs",
                                   "other column names (a time column ending in _ms is read in ms)"),
                                  ("automodel fit runs.csv --param iters --ignore hostname date",
                                   "a further parameter; runs differing only in hostname, date pooled"),
                                  ("automodel fit runs.csv --where \"solver == 'cg'\" --unit ms",
                                   "some rows only; times in ms"),
                                  ("automodel fit runs.csv --json --quiet", "one JSON document, for scripts")))
    p.add_argument("data", metavar="FILE", nargs="?", default=None, help=INPUT_HELP)
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="fit the runs an application of this store fits (with --app, in place of FILE): "
                        "the choice of fit, where observe's leader is chosen by a simpler rule; " + STORE_HELP)
    p.add_argument("--app", default=None, metavar="NAME", help="the application of --store")
    add_input_options(p)
    add_role_options(p)
    add_pooling_options(p)
    p.add_argument("--space", default="default", metavar="NAME|FILE",
                   help="search space: a shipped one (default, pmnf) or a TOML file (default: default)")
    add_metric_option(p)
    p.add_argument("--selection", default=None, choices=("simplest", "best"),
                   help="chosen model: the simplest statistically equivalent to rank 1, or rank 1 "
                        "(default: the space's, simplest)")
    p.add_argument("--templates", default=None, metavar="none|all|NAME,...",
                   help="seeded templates beside the search (default: the space's; a slow one runs "
                        "when its estimate is within 1 s, else its row gives the estimate; see "
                        "'automodel templates')")
    p.add_argument("--template-option", nargs="+", action="extend", default=[], metavar="NAME.OPT=VAL",
                   help="an option of a template's fit, e.g. kohashi.n_terms=6 hockney.breakpoints=8192,131072 "
                        "(lists: comma-separated; 'automodel templates' lists every option)")
    p.add_argument("--drop-anomalies", action="store_true",
                   help="set aside the runs no leading model explains and search again (default: list "
                        "them and keep them)")
    add_jobs_option(p, "the per-row work of scoring large data")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="send that work to this dask.distributed cluster (e.g. tcp://host:8786) instead; "
                        f"needs {install_hint('dask')}")
    p.add_argument("--top", type=rows_count, default=10, metavar="K", help="leaderboard rows to print (default 10)")
    p.add_argument("-o", "--output", metavar="MODEL.json",
                   help="write the chosen model here ('-': on standard output, the report on standard error)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (chosen model, leaderboard rows, best p, notes) instead")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (there is none when standard error is not a terminal)")
    p.set_defaults(handler=run)


def print_result(result, top: int = 10, out=None, width: int | None = WIDTH,  # noqa: ANN001
                 p_max: int | None = None) -> None:
    """Print a :class:`automodel.FitResult` the way ``automodel fit`` does (on ``out``, default stdout),
    on lines of at most ``width`` columns (None: no limit); the best p searched up to ``p_max`` (default:
    the model's)."""
    print(result.summary(top, width), file=out)
    from automodel.model.best_p import best_p_at  # numpy: not at the parser's start-up

    best = result.best
    if "p" in best.params:
        at, found = best_p_at(best, p_max)
        where = ", ".join(f"{best.roles.get(q, q)} = {v:g}" for q, v in at.items())  # the file's own names
        if isinstance(found, str):
            print("\n".join(wrap(f"best process count{' at ' + where if where else ''}: none ({found})", width)),
                  file=out)
        else:
            head, time = found.lines(best.roles.get("p", "p"))
            print("\n".join(fit_lines([f"best process count{' at ' + where if where else ''}: {head}", f"  {time}"],
                                      width)), file=out)
            warn(found.warnings, width)


def as_json(result, top: int = 10) -> dict:  # noqa: ANN001
    """What ``automodel fit --json`` prints: the chosen model, the top of the leaderboard (and every
    template without a model), the best p, the notes, the anomalous runs and the stages of the search
    (each one's rows and how many candidates it fitted, deleted and kept, as the stage log prints them)."""
    from dataclasses import asdict

    from automodel.model.best_p import best_p_at

    board = result.leaderboard
    ranked = board["rank"].notna()
    shown = board[(ranked & (board["rank"] <= top)) | ~ranked | (board["choice"] == "chosen")]
    out = {"source": result.dataset.source, "runs": len(result.dataset.runs),
           "chosen": {"formula": result.best.formula, "model": result.best.to_dict()},
           "leaderboard": shown, "notes": list(result.notes),
           "anomalies": result.anomalies, "best_p": None, "stages": [asdict(r) for r in result.reports]}
    if "p" in result.best.params:
        _, found = best_p_at(result.best)
        out["best_p"] = {"none": found} if isinstance(found, str) else asdict(found)
    return out


def stored_runs(args: argparse.Namespace) -> tuple:
    """``fit --store S --app NAME``: the application's fitted runs (cut to ``--where``) and the roles to
    read them with (:func:`automodel.store.admitted_runs`); a one-line error for FILE, a role or a
    parameter given beside them (the application has its own)."""
    from automodel.data.tidy import select_rows
    from automodel.store import admitted_runs

    if args.data is not None:
        raise DataError("fit takes FILE or --store S --app NAME, not both")
    if args.app is None:
        raise DataError("fit --store needs --app NAME (the application whose runs to fit)")
    given = [f"--{role}" for role in ROLE_OPTIONS if getattr(args, role) is not None] + ["--param"] * bool(args.param)
    given += ["--unit (the store keeps seconds)"] * (getattr(args, "unit", None) is not None)
    if given:
        raise DataError(f"fit --store reads the roles the application was observed with; leave out "
                        f"{', '.join(given)}")
    frame, roles = admitted_runs(args.store, args.app)
    if args.where:
        frame = select_rows(frame, args.where)
    return frame, {**roles, "aggregate": args.aggregate, "ignore": list(args.ignore)}


def run(args: argparse.Namespace) -> int:
    import automodel
    from automodel.templates.options import parse_assignments

    import sys

    to_stdout = args.output == "-"
    if to_stdout and args.json:
        raise DataError("-o - and --json both write to standard output; choose one")
    if args.store is None and args.data is None:
        raise DataError("fit needs FILE, or --store S --app NAME")
    check_app(args)
    if args.output and not to_stdout:
        check_output(args.output, inputs=(args.data, args.store, args.space))  # -o space.toml lost the space
    progress = not args.quiet and interactive()  # never into a redirected file
    source = args.data if args.store is None else f"application {args.app!r} of {args.store}"
    with status(f"fit: reading {source}", progress) as say:
        frame, roles = stored_runs(args) if args.store else (
            read_input(args, sys.stderr if to_stdout or args.json else None), role_kwargs(args))
        say(f"fit: {len(frame)} rows of {source}: searching")
        result = automodel.fit(frame, space=args.space, metric=args.metric, selection=args.selection,
                               templates=args.templates, progress=progress,
                               template_options=parse_assignments(args.template_option),
                               drop_anomalies=args.drop_anomalies, jobs=args.jobs, scheduler=args.scheduler,
                               **roles)
    if args.output and not to_stdout:  # before the report: 'fit ... -o m.json | head' ended when head went
        write_text(args.output, result.best.to_json())  # away, in the report, and the model was never written
    if args.json:
        print_json(as_json(result, args.top))
    else:
        print_result(result, args.top, sys.stderr if to_stdout else None, width(args))
    if to_stdout:
        print(result.best.to_json())
    elif args.output:
        tell(f"model written to {args.output}", args, sys.stderr if args.json else None)
    return 0
