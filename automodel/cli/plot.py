"""``automodel plot``: a picture of a model file, or of its equivalent candidates."""

from __future__ import annotations

import argparse

from automodel.cli.common import add_model_options, load_chosen, number, width
from automodel.terminal import wrap


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("plot", help="draw a model (its runs, fit, band, best p) or its candidates",
                       description="Draw a model file: time against n per process count and against p "
                                   "per problem size, the fit dashed beyond the training range, its "
                                   "prediction band shaded, each curve's best p starred; with "
                                   "--candidates, the model and the candidates the data cannot tell "
                                   "apart from it, out to 4x the largest trained n and p.")
    add_model_options(s)
    s.add_argument("runs", metavar="RUNS.csv", nargs="?", default=None,
                   help="measured runs to draw as points (the model's column names; of a models file, the "
                        "rows of --kernel when they have a 'kernel' column); runs beyond the model's "
                        "training ranges are drawn as held out (open triangles)")
    s.add_argument("-o", "--out", required=True, metavar="FIG", help="output file: .png, .svg or .pdf")
    s.add_argument("--candidates", action="store_true",
                   help="draw the model with its statistically equivalent candidates instead")
    s.add_argument("--level", type=number, default=0.9, help="level of the shaded band (default 0.9)")
    s.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from pathlib import Path

    from automodel.data import read_csv
    from automodel.data.cells import numeric, rows_of
    from automodel.errors import DataError
    from automodel.files import check_output
    from automodel.output.plot import figure_format, plot_candidates, plot_model

    if not 0 < args.level < 1:
        raise DataError(f"--level must be between 0 and 1 (exclusive), got {args.level:g}")
    figure_format(args.out)
    check_output(args.out, inputs=(args.model, args.runs))
    model = next(iter(load_chosen(args, one=True).values()))
    runs = held_out = None
    if args.runs is not None:
        frame = read_csv(Path(args.runs))
        rows = rows_of(frame)
        rows = 2 if isinstance(rows, int) and rows == 0 else rows  # a CSV file's rows start on line 2
        for q in (*model.params, "time"):  # a cell that is no number: one line (numpy's TypeError in the plot)
            column = model.roles.get(q, q) if model.roles.get(q, q) in frame.columns else q
            if column in frame.columns:
                numeric(frame, column, q if q != "time" else "value", args.runs, rows)
        if args.kernel is not None and "kernel" in frame.columns:
            frame = frame[frame["kernel"] == args.kernel]
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
        if runs is not None:
            runs, held_out = _split(model, runs)
        plot_model(model, args.out, runs=runs, held_out=held_out, level=args.level)
        beyond = f"; {len(held_out)} run(s) beyond the training ranges drawn as held out" if held_out is not None else ""
        print("\n".join(wrap(f"{args.out}: T = {model.formula}{beyond}", width(args), "", "    ")))
    return 0


def _split(model, runs):  # noqa: ANN001, ANN202  (a Model, a DataFrame; two DataFrames)
    """``runs`` (canonical column names) cut into those inside the model's training ranges and those
    beyond them in some parameter (None when there are none): the fit never saw the latter."""
    import numpy as np

    inside = np.ones(len(runs), bool)
    for q, (lo, hi) in model.ranges.items():
        if q in runs.columns:
            values = runs[q].to_numpy(float)
            inside &= (values >= lo - 1e-9 * abs(lo)) & (values <= hi + 1e-9 * abs(hi))
    return runs[inside], runs[~inside] if not inside.all() else None
