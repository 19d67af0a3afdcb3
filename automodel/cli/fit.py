"""``automodel fit FILE``: search, print the leaderboard and the chosen formula, write the model."""

from __future__ import annotations

import argparse

from automodel.cli.common import INPUT_HELP, add_input_options, add_role_options, read_input, role_kwargs, warn
from automodel.files import check_output, write_text
from automodel.errors import DataError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fit", help="search for the model of timed runs (CSV, Extra-P files, CUBE profiles)",
                       description="Run the staged search on the runs in FILE and print the ranked candidates. "
                                   "A file of several kernels needs --kernel NAME (or automodel kernels).")
    p.add_argument("data", metavar="FILE", help=INPUT_HELP)
    add_input_options(p)
    add_role_options(p)
    p.add_argument("--space", default="default", metavar="NAME|FILE",
                   help="search space: a shipped one (default, pmnf) or a TOML file (default: default)")
    p.add_argument("--metric", default=None,
                   help="ranking metric (s, rel_s, loo, aic, smape, holdout, forward; default: the space's)")
    p.add_argument("--selection", default=None, choices=("simplest", "best"),
                   help="chosen model: the simplest statistically equivalent to rank 1, or rank 1 "
                        "(default: the space's, simplest)")
    p.add_argument("--templates", default=None, metavar="none|all|NAME,...",
                   help="seeded templates beside the search (default: the space's; a slow one runs "
                        "when its estimate is within 1 s, else its row gives the estimate; see "
                        "'automodel templates')")
    p.add_argument("--template-option", nargs="+", action="extend", default=[], metavar="NAME.OPTION=VALUE",
                   help="an option of a template's fit, e.g. kohashi.n_terms=6 hockney.breakpoints=8192,131072 "
                        "(lists: comma-separated; 'automodel templates' lists every option)")
    p.add_argument("--drop-anomalies", action="store_true",
                   help="set aside the runs no leading model explains and search again (default: list "
                        "them and keep them)")
    p.add_argument("--top", type=int, default=10, metavar="K", help="leaderboard rows to print (default 10)")
    p.add_argument("-o", "--output", metavar="MODEL.json", help="write the chosen model here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run)


def print_result(result, top: int = 10) -> None:
    """Print a :class:`automodel.FitResult` the way ``automodel fit`` does."""
    print(result.summary(top))
    best = result.best
    if "p" in best.params:
        at = {q: best.ranges[q][1] for q in best.params if q not in ("p", "cpu", "bw")}
        where = ", ".join(f"{q} = {v:g}" for q, v in at.items())
        try:
            found = best.best_p(**at)
        except DataError as exc:  # the model is fitted and written all the same
            print(f"best process count{' at ' + where if where else ''}: none ({exc})")
        else:
            head, time = found.lines()
            print(f"best process count{' at ' + where if where else ''}: {head}\n  {time}")
            warn(found.warnings)


def run(args: argparse.Namespace) -> int:
    import automodel
    from automodel.templates.options import parse_assignments

    if args.output:
        check_output(args.output)
    result = automodel.fit(read_input(args), space=args.space, metric=args.metric, selection=args.selection,
                           templates=args.templates, progress=not args.quiet,
                           template_options=parse_assignments(args.template_option),
                           drop_anomalies=args.drop_anomalies, **role_kwargs(args))
    print_result(result, args.top)
    if args.output:
        write_text(args.output, result.best.to_json())
        print(f"model written to {args.output}")
    return 0
