"""``automodel predict | show | best-p``: use a model file."""

from __future__ import annotations

import argparse

from automodel.cli.common import write_atomic


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("predict", help="predict run times for the rows of a CSV",
                       description="Print (or write) the input rows plus a column 'predicted'.")
    p.add_argument("model", metavar="MODEL.json", nargs="?")
    p.add_argument("data", metavar="DATA.csv", nargs="?")
    p.add_argument("-o", "--output", metavar="OUT.csv")
    p.add_argument("--level", type=float, default=0.95, help="prediction band level when the model has one")
    from automodel.cli.store import add_predict_options
    add_predict_options(p)
    p.set_defaults(handler=predict)

    s = sub.add_parser("show", help="print a model's formula in a chosen format")
    s.add_argument("model", metavar="MODEL.json")
    s.add_argument("--format", default="text", choices=("text", "latex", "python", "c", "json"))
    s.set_defaults(handler=show)

    b = sub.add_parser("best-p", help="the process count with the least predicted time")
    b.add_argument("model", metavar="MODEL.json")
    b.add_argument("--n", type=float, default=None, help="problem size")
    b.add_argument("--cpu", type=float, default=1.0, help="free CPU fraction (default 1)")
    b.add_argument("--bw", type=float, default=1.0, help="free bandwidth fraction (default 1)")
    b.add_argument("--p-max", type=int, default=None, help="largest p to consider")
    b.add_argument("--p-min", type=int, default=1)
    b.add_argument("--param", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="values of extra parameters")
    b.set_defaults(handler=best_p)


def predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from automodel.data import read_csv
    from automodel.model import load_model
    from pathlib import Path

    if args.store:
        from automodel.cli.store import predict_from_store
        return predict_from_store(args)
    if not (args.model and args.data):
        from automodel.errors import DataError
        raise DataError("predict needs MODEL.json DATA.csv, or --store S --app NAME")
    model = load_model(args.model)
    frame = read_csv(Path(args.data))
    out = frame.copy()
    out["predicted"] = model.predict(frame, source=args.data)
    band = model.predict_interval(frame, level=args.level)
    if band is not None:
        out["lower"], out["upper"] = band
    if args.output:
        write_atomic(args.output, lambda tmp: out.to_csv(tmp, index=False))
        print(f"{len(out)} predictions written to {args.output}")
    else:
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(out.to_string(index=False))
    return 0


def show(args: argparse.Namespace) -> int:
    from automodel.export import export
    from automodel.model import load_model

    print(export(load_model(args.model), args.format))
    return 0


def best_p(args: argparse.Namespace) -> int:
    from automodel.errors import DataError
    from automodel.model import load_model

    model = load_model(args.model)
    extras = {}
    for item in args.param:
        name, _, value = item.partition("=")
        try:
            extras[name] = float(value)
        except ValueError:
            raise DataError(f"--param {item!r}: expected NAME=NUMBER") from None
    if "n" in model.params and args.n is None:
        raise DataError("this model depends on n: give --n N")
    p, t = model.best_p(n=args.n, cpu=args.cpu, bw=args.bw, p_max=args.p_max, p_min=args.p_min, **extras)
    print(f"best p = {p} (predicted time {t:.6g} s)")
    return 0
