"""``automodel plot``: a picture of a model file, or of its equivalent candidates."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("plot", help="draw a model (its runs, fit, band, best p) or its candidates",
                       description="Draw a model file: time against n per process count and against p "
                                   "per problem size, the fit dashed beyond the training range, its "
                                   "prediction band shaded, each curve's best p starred; with "
                                   "--candidates, the model and the candidates the data cannot tell "
                                   "apart from it, out to 4x the largest trained n and p.")
    s.add_argument("model", metavar="MODEL.json")
    s.add_argument("runs", metavar="RUNS.csv", nargs="?", default=None,
                   help="measured runs to draw as points (the model's column names)")
    s.add_argument("-o", "--out", required=True, metavar="FIG", help="output file: .png, .svg or .pdf")
    s.add_argument("--candidates", action="store_true",
                   help="draw the model with its statistically equivalent candidates instead")
    s.add_argument("--level", type=float, default=0.9, help="level of the shaded band (default 0.9)")
    s.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from pathlib import Path

    from automodel.data import read_csv
    from automodel.errors import DataError
    from automodel.files import check_output
    from automodel.model_file import load_model
    from automodel.plot import figure_format, plot_candidates, plot_model

    if not 0 < args.level < 1:
        raise DataError(f"--level must be between 0 and 1 (exclusive), got {args.level:g}")
    figure_format(args.out)
    check_output(args.out)
    model = load_model(args.model)
    runs = None
    if args.runs is not None:
        frame = read_csv(Path(args.runs))
        canonical = {user: q for q, user in model.roles.items()}
        runs = frame.rename(columns=canonical)
        missing = [model.roles.get(q, q) for q in (*model.params, "time") if q not in runs]
        if missing:
            raise DataError(f"{args.runs}, column '{missing[0]}': missing; the model needs "
                            f"{', '.join(model.roles.get(q, q) for q in (*model.params, 'time'))}")
    if args.candidates:
        alternatives = model.interval.alternatives if model.interval is not None else ()
        models = [model] + [replace(model, core=core, interval=None) for core in alternatives]
        out = plot_candidates(models, args.out, runs=runs, level=args.level)
        print(f"{out}: the model and {len(models) - 1} equivalent candidate(s)")
    else:
        out = plot_model(model, args.out, runs=runs, level=args.level)
        print(f"{out}: {model.formula}")
    return 0
