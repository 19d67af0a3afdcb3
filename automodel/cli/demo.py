"""``automodel demo``: the whole job on a bundled dataset of real (simulated-cluster) runs.

Trains on the smaller runs, predicts the held-out larger ones, and prints the leaderboard, the chosen
formula, the predictions against the measured times and the best process count; writes a PNG plot and,
beside it, the HTML report of the fit (``automodel-demo.html``).
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path

from automodel.cli.common import rows_count
from automodel.files import check_output
from automodel.terminal import WIDTH, status, wrap

#: the bundled dataset (package data): conjugate gradient under SimGrid SMPI on a simulated 256-host
#: cluster (examples/data/README.md in the source tree gives the exact command, platform file and date)
DEMO_DATA = Path(str(files("automodel") / "demo" / "cg_fast.csv"))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="fit the bundled dataset, predict held-out runs, plot",
                       description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEMO_DATA), help="CSV to use instead of the bundled one")
    p.add_argument("--plot", default="automodel-demo.png", metavar="PNG",
                   help="where to write the plot; the HTML report goes beside it (.html)")
    p.add_argument("--top", type=rows_count, default=10)
    p.set_defaults(handler=run)


def report_path(plot: str | Path) -> Path:
    """The HTML report beside the plot: ``automodel-demo.png`` -> ``automodel-demo.html``."""
    return Path(plot).with_suffix(".html")


def split(frame, params):
    """Hold out the runs a user would want predicted: the largest p levels, else the largest n."""
    import numpy as np

    if "p" in params and frame["p"].nunique() >= 5:
        levels = np.sort(frame["p"].unique())
        cut = levels[min(3, len(levels) - 2)]
        return (frame["p"] <= cut).to_numpy(), f"p <= {cut:g}"
    if "n" in params and frame["n"].nunique() >= 5:
        levels = np.sort(frame["n"].unique())
        cut = levels[int(len(levels) * 0.7) - 1]
        return (frame["n"] <= cut).to_numpy(), f"n <= {cut:g}"
    return np.ones(len(frame), bool), "all runs"


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    import automodel
    from automodel.cli.fit import print_result
    from automodel.model.best_p import search_p_max
    from automodel.output.plot import figure_format, plot_model

    check_output(args.plot, inputs=(args.data,))
    check_output(report_path(args.plot), inputs=(args.data,))
    figure_format(args.plot)  # before the search: --plot report.html cost a fit and then was refused
    ds = automodel.load(args.data)
    frame = ds.runs
    mask, text = split(ds.frame, ds.params)
    train, test = ds.frame[mask], ds.frame[~mask]
    keys = list(ds.params)
    train_runs = frame.merge(train[keys], on=keys)
    train_runs.attrs["source"] = f"{Path(args.data).name}, {text}"  # named in the fit's messages
    print("\n".join(wrap(f"demo data: {args.data} ({len(frame)} runs)", WIDTH)))  # a long path alone
    print(f"training on {text}, {len(test)} larger configurations held out\n")
    with status("demo: searching"):
        result = automodel.fit(train_runs, progress=False)
    print_result(result, args.top, p_max=search_p_max(result.best, ds.frame))  # as the plot and the page
    if len(test):
        pred = result.best.predict(test)
        y = test["time"].to_numpy()
        err = np.abs(pred - y) / y
        lower, upper = result.best.predict_interval(test, 0.9, kind="mean")
        table = test[keys + ["time"]].assign(predicted=pred, lower=lower, upper=upper, rel_error=err)
        print("\nheld-out configurations: median time, prediction, 90 % band of the expected time")
        with pd.option_context("display.max_rows", 40, "display.width", 200):
            print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(f"median relative error {np.median(err):.1%}, mean {np.mean(err):.1%}, worst {np.max(err):.1%}; "
              f"{np.mean((lower <= y) & (y <= upper)):.0%} inside the band")
    plot_model(result.best, args.plot, runs=train, held_out=test if len(test) else None)
    print("\n" + "\n".join(wrap(f"plot written to {args.plot}", WIDTH, "", "  ")))
    page = result.report(report_path(args.plot), held_out=test if len(test) else None,
                         title="automodel demo: conjugate gradient under SimGrid SMPI" if args.data == str(DEMO_DATA)
                         else "")
    print("\n".join(wrap(f"report written to {page} (open it in a browser)", WIDTH, "", "  ")))
    return 0
