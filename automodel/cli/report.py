"""``automodel report RUNS_OR_MODEL [RUNS] -o report.html``: one self-contained HTML page of a fit.

Given runs, it searches as ``automodel fit`` does (same options) and writes the report of that fit
(:meth:`automodel.FitResult.report`); given a model file (``automodel fit -o``), the report of that
model, drawn over the runs when they are given too (:func:`automodel.output.report.fit.model_page`).
"""

from __future__ import annotations

import argparse
import sys

from automodel.cli.common import (INPUT_HELP, add_input_options, add_pooling_options, add_role_options, read_input,
                                  role_kwargs, tell)
from automodel.files import check_output, write_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an HTML report of a fit (or of a saved model) to open in a browser",
                       description="Search for the model of the runs in RUNS_OR_MODEL (or read the model file "
                                   "RUNS_OR_MODEL and, optionally, its runs RUNS) and write one self-contained "
                                   "HTML page: the formula, why it was chosen, the sortable leaderboard, the "
                                   "plots with the band, the best process count, the anomalies and the data.")
    p.add_argument("data", metavar="RUNS_OR_MODEL", help=f"runs ({INPUT_HELP}) or a model file (automodel fit -o)")
    p.add_argument("runs", metavar="RUNS", nargs="?", default=None,
                   help="with a model file: its runs, drawn and tabled with it")
    p.add_argument("-o", "--output", metavar="HTML", default="report.html",
                   help="where to write the page (default: %(default)s)")
    add_input_options(p)
    add_role_options(p)
    add_pooling_options(p)
    p.add_argument("--space", default="default", metavar="NAME|FILE", help="search space (default: default)")
    p.add_argument("--metric", default=None, help="ranking metric (default: the space's)")
    p.add_argument("--templates", default=None, metavar="none|all|NAME,...",
                   help="seeded templates beside the search (default: the space's)")
    p.add_argument("--title", default="", help="the page's title (default: the data's name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run)


def _is_model_file(path: str, runs: str | None) -> bool:
    """Whether ``path`` is a model file: JSON whose first key is ``"format"`` (what Model.save writes), or
    any ``.json`` file given with ``runs`` (whose model file errors then say what is wrong with it).

    Raises
    ------
    DataError
        A ``.json`` path that is not a regular file (a FIFO was opened and waited on for ever).
    """
    from automodel.errors import DataError
    from automodel.files import read_bytes

    if path == "-" or not path.lower().endswith(".json"):
        return False
    if runs is not None:
        return True
    head = read_bytes(path, "a model JSON file or runs", DataError, limit=64).decode("utf-8", "replace")
    return head.lstrip("\ufeff \t\r\n").startswith("{") and '"format"' in head


def run(args: argparse.Namespace) -> int:
    import automodel

    check_output(args.output, inputs=(args.data, args.runs, getattr(args, "space", None)))
    if _is_model_file(args.data, args.runs):
        return _model_report(args)
    if args.runs is not None:
        raise automodel.DataError(f"{args.data}: not a model file, so RUNS ({args.runs}) has no use; give the runs "
                                  "alone, or a model file and its runs")
    result = automodel.fit(read_input(args, sys.stderr), space=args.space, metric=args.metric,
                           templates=args.templates, progress=not args.quiet, **role_kwargs(args))
    result.report(args.output, title=args.title)
    tell(f"chosen model: T = {result.best.formula}", args)
    tell(f"report written to {args.output}", args)
    return 0


def _model_report(args: argparse.Namespace) -> int:
    """The report of the model file ``args.data``, over the runs ``args.runs`` when given (read with the
    model's column names unless the options name others)."""
    from automodel.data import load
    from automodel.model_file import load_model
    from automodel.options import ROLE_NAMES
    from automodel.output.report.fit import model_page

    model = load_model(args.data)
    runs = None
    if args.runs is not None:
        columns = {role: model.roles[role] for role in (*ROLE_NAMES, "time") if role in model.roles}
        given = role_kwargs(args)
        extras = [model.roles.get(q, q) for q in model.params if q not in ROLE_NAMES]
        frame = read_input(argparse.Namespace(**{**vars(args), "data": args.runs}), sys.stderr)
        if not given["ignore"]:  # the columns the fit pooled over (fit --ignore), as the model file keeps them
            given["ignore"] = [c for c in model.options.get("ignore", []) if c in frame.columns]
        runs = load(frame, **{**columns, **given, "params": [*given["params"], *extras]}).frame
        model.predict(runs, source=args.runs)  # a column the model needs is missing: one line (the plot's KeyError)
    write_text(args.output, model_page(model, runs, source=args.data, runs_source=args.runs or "",
                                       title=args.title))
    tell(f"model: T = {model.formula}", args)
    tell(f"report written to {args.output}", args)
    return 0
