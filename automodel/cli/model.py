"""``automodel show | best-p``: use a model file."""

from __future__ import annotations

import argparse

from automodel.cli.common import (add_forecast_options, add_model_options, check_extras, examples, load_chosen,
                                  load_values, number, parse_param_values, print_json, tell, warn, whole,
                                  width)
from automodel.data.numerals import WHOLE
from automodel.output.export import FORMATS
from automodel.terminal import fit_lines, shorten, wrap


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("show", help="print a model's formula in a chosen format")
    add_model_options(s)
    s.add_argument("--format", default="text", choices=list(FORMATS),
                   help="; ".join(f"{f.name}: {f.description}" for f in FORMATS.values()) + " (default: text)")
    s.add_argument("--json", action="store_true", help="the model file's JSON (as --format json)")
    s.set_defaults(handler=show)

    b = sub.add_parser("best-p", help="the process count with the least predicted time",
                       **examples(("automodel best-p model.json --n 800000",
                                   "p of least predicted time at n = 800000, its range and band"),
                                  ("automodel best-p model.json --n 800000 --p-max 1024",
                                   "searching p up to 1024")))
    add_model_options(b)
    b.add_argument("--n", type=number, default=None, help="problem size")
    b.add_argument("--cpu", type=number, default=None, help="free CPU fraction (default 1: a dedicated machine)")
    b.add_argument("--bw", type=number, default=None, help="free bandwidth fraction (default 1: a dedicated machine)")
    b.add_argument("--p-max", type=count, default=None,
                   help="largest p to consider, up to 2^53 (default 4x the largest trained p, at least "
                        "64)")
    b.add_argument("--p-min", type=count, default=1, help="smallest p to consider (default 1)")
    b.add_argument("--param", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="values of extra parameters")
    b.add_argument("--load-from", default=None, metavar="STORE",
                   help="forecast cpu and bw not given from the load samples of this store (automodel load record)")
    add_forecast_options(b)
    b.add_argument("--level", type=number, default=0.9,
                   help="level of the time's band and of the range of equally good p (default 0.9)")
    b.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    b.set_defaults(handler=best_p)


    e = sub.add_parser("evaluate", help="score a model on measured runs: errors, rank order, band coverage")
    add_model_options(e)
    e.add_argument("runs", metavar="RUNS.csv",
                   help="measured runs, the model's column names, one row per run (any input format); with a "
                        "models file, a 'kernel' column says which model scores each row (--kernel: only its rows)")
    e.add_argument("--level", type=number, default=0.9, help="level of the bands whose coverage is counted (default 0.9)")
    e.add_argument("--json", action="store_true", help="print the scores as one JSON object")
    e.set_defaults(handler=evaluate)


def count(text: str) -> int | float:
    """A process count as typed: ``1024`` exactly, ``1e11`` as a float (:meth:`Model.best_p` checks it
    is whole)."""
    return whole(text) if WHOLE.fullmatch(text) else number(text)


def show(args: argparse.Namespace) -> int:
    from automodel.output.export import export
    from automodel.names import printable

    fmt = "json" if args.json else args.format
    models = load_chosen(args)
    cols = width(args)
    if len(models) == 1:
        model = next(iter(models.values()))
        print(export(model, fmt, cols))
        if fmt == "text":
            print("\n".join(fit_lines([model.described(), *(
                model.interval.describe(model.core) if model.interval is not None else
                ["prediction band: none (this model file has no 'interval')"])], cols)))
    elif fmt == "json":
        print_json({name: model.to_dict() for name, model in models.items()})
    else:
        for name, model in models.items():
            label, text = printable(name), export(model, fmt)
            if cols is None or len(label) + 2 + len(text) <= cols and "\n" not in text:
                print(f"{label}: {text}")
            else:  # the name on a line of its own, the model below it
                print(f"{shorten(label, cols - 1)}:")
                print(export(model, fmt, cols) if fmt in ("python", "c") else "\n".join(wrap(text, cols, "    ")))
    return 0


def best_p(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    model = next(iter(load_chosen(args, one=True).values()))
    found, said = best_p_of(model, args.n, args.cpu, args.bw, parse_param_values(args.param), args.p_max,
                            args.p_min, args.level, args.load_from, args.error, args.window)
    warn(said, width(args))
    if args.json:
        print_json(asdict(found))
    else:
        head, time = found.lines(model.roles.get("p", "p"))
        print("\n".join(fit_lines([f"best {head}", f"  {time}"], width(args))))
    warn(found.warnings, width(args))
    return 0


def best_p_of(model, n: float | None, cpu: float | None, bw: float | None, extras: dict,  # noqa: ANN001
              p_max: int | float | None = None, p_min: int | float = 1, level: float = 0.9,
              load_from=None, error: str = "mse", window: int | None = None):  # noqa: ANN001, ANN201
    """:meth:`Model.best_p <automodel.model.core.Model.best_p>` of ``model`` with cpu and bw not given
    forecast from the load samples of the store ``load_from`` (else 1: a dedicated machine); the
    answer (a :class:`~automodel.model.core.BestP`) and the lines that say how cpu and bw were found, or
    that a value given is not used (the model does not depend on it).

    Raises
    ------
    DataError
        ``n`` missing where the model depends on it, or an extra parameter the model does not have
        (a misspelt name would otherwise be ignored without a word).
    """
    from automodel.errors import DataError

    if "n" in model.params and n is None:
        column = model.roles.get("n", "n")  # the size a newcomer knows by the column's name, 'size'
        raise DataError(f"this model depends on n{'' if column == 'n' else f' (the column {column!r})'}: "
                        "give --n N")
    check_extras(model, extras, "best-p")  # a role given twice to best_p was a TypeError traceback
    load, said = load_values(model.params, {"cpu": cpu, "bw": bw}, load_from, error, window)
    said += [f"--{q} {value:g} not used: the model does not depend on {q}"
             for q, value in (("n", n), ("cpu", cpu), ("bw", bw)) if value is not None and q not in model.params]
    found = model.best_p(n=n, cpu=load.get("cpu", 1.0) if cpu is None else cpu,
                         bw=load.get("bw", 1.0) if bw is None else bw, p_max=p_max, p_min=p_min, level=level,
                         **extras)
    return found, said


def evaluate(args: argparse.Namespace) -> int:
    """Score a model on measured runs; a models file scores each row with its kernel's model (the
    rows' ``kernel`` column, as ``predict`` does), ``--kernel K`` only K's rows."""
    import json
    import sys

    from automodel.data import read
    from automodel.errors import DataError
    from automodel.evaluation import evaluate as score, evaluate_kernels
    from automodel.model_file import read_models
    from automodel.names import printable

    if not 0 < args.level < 1:
        raise DataError(f"--level must be between 0 and 1 (exclusive), got {args.level:g}")
    models, of_kernels = read_models(args.model, kernel=args.kernel)
    runs = read(args.runs)
    if args.kernel is not None and "kernel" in runs.columns:
        runs = runs[runs["kernel"].isin([args.kernel, *models])]  # as written, or the kernel it means
        if not len(runs):
            raise DataError(f"{args.runs}, column 'kernel': no row of kernel {printable(args.kernel)!r}")
    if len(models) == 1:
        model = next(iter(models.values()))  # a kernel's values of 0 are counters, as kernels reads them
        result = score(model, runs, args.level, source=str(args.runs), counts=True if of_kernels else None)
        print(json.dumps(result.to_dict()) if args.json else "\n".join(result.lines()))
        if model.where:  # its runs were a subset of theirs: scored here on every row of args.runs
            tell(f"note: {printable(args.model)} was fitted on the rows where {model.where} (fit --where); "
                 f"scored here on every row of {printable(str(args.runs))}", args, sys.stderr)
        return 0
    by_kernel, overall = evaluate_kernels(models, runs, args.level, source=str(args.runs))
    if args.json:
        print_json({"kernels": {k: v.to_dict() for k, v in by_kernel.items()}, "all": overall.to_dict()})
        return 0
    names = {name: printable(name) for name in by_kernel}
    column = 38 if width(args) else max(map(len, names.values()))  # 38 + 5 columns of scores: 76
    print(f"{'kernel':<{column}} {'runs':>6} {'median':>7} {'mean':>7} {'worst':>7} {'inside':>6}")
    for name, result in by_kernel.items():
        label = shorten(names[name], column)  # the middle cut: call paths differ at their ends
        inside = "-" if result.coverage != result.coverage else f"{result.coverage:.0%}"
        print(f"{label:<38} {result.runs:>6} {result.median_error:>7.1%} {result.mean_error:>7.1%} "
              f"{result.worst_error:>7.1%} {inside:>6}")
    print(f"all {len(by_kernel)} kernels, each row scored with its kernel's model:")
    print("\n".join("  " + line for line in overall.lines()))
    return 0
