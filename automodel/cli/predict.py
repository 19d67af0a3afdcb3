"""``automodel predict``: predict run times with a model file, or with the leader of a store."""

from __future__ import annotations

import argparse

from automodel.cli.common import (STORE_HELP, add_forecast_options, check_extras, load_chosen, load_values,
                                  examples, number, parse_param_values, print_json, tell, warn, whole, width)
from automodel.files import check_output, write_atomic

__all__ = ["register", "predict", "add_predict_options", "predict_from_store", "predict_rows", "store_prediction",
           "store_predictions", "ranked_model", "readable"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``predict`` subcommand to an argparse ``subparsers`` object."""
    p = sub.add_parser("predict", help="predict run times for the rows of a CSV",
                       description="Print (or write) the input rows plus a column 'predicted'.",
                       **examples(("automodel predict model.json rows.csv",
                                   "rows of the model's columns; adds predicted, lower, upper"),
                                  ("automodel predict model.json rows.csv --level 0.5 -o out.csv",
                                   "a 50% band, written as CSV"),
                                  ("automodel predict --store runs.db --app lu --n 9000 --p 16",
                                   "with the leading model of an application of a store")))
    p.add_argument("model", metavar="MODEL.json", nargs="?",
                   help="a model file, or a models file of automodel kernels --out (with --kernel, or a "
                        "'kernel' column in DATA)")
    p.add_argument("data", metavar="DATA.csv", nargs="?", help="the rows to predict ('-': standard input)")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="write the rows as CSV ('-': on standard output)")
    p.add_argument("--kernel", default=None, metavar="NAME", help="the kernel's model of a models file")
    p.add_argument("--json", action="store_true", help="print the rows as one JSON array")
    add_predict_options(p)
    p.set_defaults(handler=predict)


def add_predict_options(p: argparse.ArgumentParser) -> None:
    """Options of ``automodel predict --store S --app NAME --n N --p P [--cpu X] [--bw Y]``."""
    p.add_argument("--store", default=None, metavar="PATH|URL",
                   help="predict with the leader of a store instead: " + STORE_HELP)
    p.add_argument("--app", default=None, metavar="NAME")
    p.add_argument("--n", type=number, default=None)
    p.add_argument("--p", type=number, default=None)
    p.add_argument("--cpu", type=number, default=None, help="free CPU fraction (default: forecast)")
    p.add_argument("--bw", type=number, default=None, help="free bandwidth fraction (default: forecast)")
    p.add_argument("--param", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="values of extra parameters")
    p.add_argument("--load-from", default=None, metavar="STORE",
                   help="predict model.json data.csv: forecast the cpu/bw columns the data lack from the "
                        "load samples of this store (default: 1, a dedicated machine)")
    p.add_argument("--rank", type=whole, default=None,
                   help="use the candidate at this rank by score (default: the leader observe reports)")
    p.add_argument("--level", type=number, default=0.9,
                   help="level of the prediction band (columns lower and upper; default 0.9)")
    p.add_argument("--band", choices=("run", "mean"), default="run",
                   help="the band covers one new run (default) or the expected time")
    p.add_argument("--parts", action="store_true",
                   help="MODEL.json DATA.csv: add the computation, communication and overhead parts "
                        "of each prediction (models that tell them apart)")
    add_forecast_options(p)


def predict(args: argparse.Namespace) -> int:
    """Predict the rows of ``DATA.csv`` with ``MODEL.json``; with ``--store``, the next run of ``--app``.

    A CSV or TSV file is read without pandas (:func:`automodel.data.rows.read_rows`) unless the rows
    are written as CSV (``-o``): the table, ``--json`` and the model's evaluation need numpy only.
    """
    import sys

    import numpy as np

    from automodel.errors import DataError

    if args.store:
        return predict_from_store(args)
    if not (args.model and args.data):
        raise DataError("predict needs MODEL.json DATA.csv, or --store S --app NAME")
    # the options of a prediction from a store: with MODEL.json DATA the rows give the values (--n 5 was
    # ignored without a word)
    unused = [f"--{name}" for name in ("app", "n", "p", "cpu", "bw", "param", "rank") if getattr(args, name, None)
              not in (None, [])]
    if unused:
        raise DataError(f"{unused[0]}: an option of predict --store S --app NAME; with MODEL.json DATA each row of "
                        f"{args.data} gives the values (cpu and bw missing there: --load-from)")
    to_stdout = args.output == "-"
    if args.output and not to_stdout:
        check_output(args.output, inputs=(args.model, args.data))
    models = load_chosen(args)
    frame = read_input(args.data, plain=not args.output)
    if args.kernel is not None and "kernel" in frame.columns:
        check_chosen_kernel(frame, next(iter(models)), str(args.data))
    if len(models) > 1 and "kernel" not in frame.columns:
        raise DataError(f"{args.model}: holds {len(models)} models; choose one with --kernel NAME, or give "
                        f"{args.data} a 'kernel' column")
    names = list(frame["kernel"]) if len(models) > 1 else [None] * len(frame)
    added: dict[str, np.ndarray] = {}
    beyond = np.zeros(len(frame), bool)
    for name in dict.fromkeys(names):
        if name is not None and name not in models:
            raise DataError(f"{args.data}, column 'kernel': no model for kernel {name!r} in {args.model}")
        at = [i for i, k in enumerate(names) if k == name]
        rows = frame if len(at) == len(frame) else subset(frame, at)
        model = models[name] if name is not None else next(iter(models.values()))
        for column, values in predict_rows(args, model, rows).items():
            added.setdefault(column, np.full(len(frame), np.nan))[at] = values
        beyond[at] = beyond_ranges(model, rows)
    out = frame.copy()
    for column, values in added.items():
        out[column] = values
    if args.json:
        print_json(out)
    elif to_stdout:
        out.to_csv(sys.stdout, index=False)
    elif args.output:
        write_atomic(args.output, lambda tmp: out.to_csv(tmp, index=False))
        tell(f"{len(out)} predictions written to {args.output}", args)
    else:
        # a column of the input the prediction replaced (the 'predicted' of an earlier output) is one it added
        print(shown(out, [c for c in frame.columns if c not in added], _inputs(models, frame), width(args)))
        sys.stdout.flush()  # the table first, then its legend on standard error (a note, as warnings are)
        tell(legend(models, args, "lower" in added, int(beyond.sum()), len(frame)), args, sys.stderr)
    return 0


def beyond_ranges(model, rows) -> "np.ndarray":  # noqa: ANN001  (a Model; Rows or a DataFrame)
    """Whether each of ``rows`` has a parameter outside the range the model was trained on (read from
    the parameter's column, or its canonical name as :meth:`~automodel.model.core.Model.predict` reads it):
    a prediction there is an extrapolation."""
    import numpy as np

    out = np.zeros(len(rows), bool)
    for q, (low, high) in model.ranges.items():
        column = model.roles.get(q, q) if model.roles.get(q, q) in rows.columns else q
        if column in rows.columns:
            with np.errstate(invalid="ignore"):
                values = np.asarray(rows[column], dtype=float)
                out |= (values < low) | (values > high)
    return out


def legend(models: dict, args: argparse.Namespace, band: bool, beyond: int, total: int) -> str:
    """The line under the table of ``predict``: the unit of the times, what ``lower`` and ``upper`` are,
    and how many rows are extrapolations (a newcomer read ``3672.97`` with no unit and no level).

    >>> from types import SimpleNamespace
    >>> legend({None: SimpleNamespace(unit="ms")}, SimpleNamespace(level=0.9, band="run"), True, 2, 3)
    'times in ms; lower, upper: the 90% band of one run; 2 of 3 rows beyond the measured range (extrapolated)'
    """
    text = f"times in {', '.join(dict.fromkeys(m.unit for m in models.values()))}"
    if band:
        text += f"; lower, upper: the {args.level:.0%} band of {'one run' if args.band == 'run' else 'the mean'}"
    if beyond:
        text += f"; {beyond} of {total} rows beyond the measured range (extrapolated)"
    return text


def check_chosen_kernel(frame, chosen: str, source: str) -> None:  # noqa: ANN001  (Rows or a DataFrame)
    """Refuse a row of ``frame`` whose ``kernel`` cell names another kernel than ``chosen`` (the one
    ``--kernel`` chose): it was predicted with the chosen kernel's model and printed under its own name."""
    from automodel.data.cells import located, rows_of
    from automodel.errors import DataError
    from automodel.names import kernel_label, printable

    names = [str(name) for name in frame["kernel"]]
    for name in dict.fromkeys(names):  # each distinct name once, not once a row
        try:
            kernel_label(name, [chosen], DataError, source)
        except DataError:
            raise DataError(f"{located(source, names.index(name), 'kernel', rows_of(frame))}: a row of kernel "
                            f"{printable(repr(name))}, but --kernel chose {printable(repr(chosen))}; drop "
                            "--kernel to predict each row with its kernel's model") from None


def read_input(path: str, plain: bool):  # noqa: ANN201  (Rows or a DataFrame)
    """The rows of ``path``: :class:`~automodel.data.rows.Rows` (no pandas) when ``plain`` and the file
    is a table (:func:`automodel.data.readers.detect`: CSV or TSV); else a DataFrame of
    :func:`automodel.data.read` (any format, standard input)."""
    from pathlib import Path

    from automodel.data.readers import detect
    from automodel.data.rows import read_rows

    separators = {"csv": ",", "tsv": "\t"}
    if plain and path != "-" and (fmt := detect(path)) in separators:
        return read_rows(Path(path), separators[fmt])
    from automodel.data import read

    return read(path)


def subset(frame, positions: list[int]):  # noqa: ANN001, ANN201  (Rows or a DataFrame)
    """The rows of ``frame`` at ``positions``."""
    return frame.take(positions) if hasattr(frame, "n_rows") else frame.iloc[positions]


def _inputs(models: dict, frame) -> list[str]:  # noqa: ANN001  (a DataFrame)
    """The columns of ``frame`` a prediction reads (every model's parameters, by their columns or by their
    canonical names, as :meth:`~automodel.model.core.Model.predict` reads them: rows of ``n, p`` for a model
    of ``size, procs`` were printed without them), and ``kernel`` and the measured time when present."""
    used = {name for model in models.values() for q in model.params for name in (q, model.roles.get(q, q))}
    used |= {"kernel", *(model.roles.get("time", "time") for model in models.values())}
    return [c for c in frame.columns if c in used]


def shown(out, given: list, inputs: list[str], width: int | None) -> str:  # noqa: ANN001  (a DataFrame)
    """The predictions ``out`` as text: within ``width`` columns the ``inputs`` and the columns added to
    the ``given`` ones (a line names the columns left out), blocks of columns where even those are
    wider; every column with ``width`` None. The added columns (times) read as ``fit`` prints a time
    (:func:`readable`)."""
    from automodel.terminal import table, wrap

    out = readable(out, [c for c in out.columns if c not in given])
    if width is None:
        return table(out, None)
    kept = [c for c in out.columns if c in inputs or c not in given]
    left = [str(c) for c in out.columns if c not in kept]
    note = wrap(f"(not shown: {', '.join(left)}; --wide shows every column, -o FILE writes them)", width)
    return "\n".join([table(out.select(kept) if hasattr(out, "select") else out[kept], width),
                      *(note if left else [])])


def readable(out, columns: list[str]):  # noqa: ANN001, ANN201  (Rows or a DataFrame)
    """A copy of ``out`` whose ``columns`` (times) are text of significant digits, as ``fit`` prints the
    time at the best p (:func:`automodel.model.best_p.figure`: 4 digits, 3 for a band's ends ``lower``
    and ``upper``), not six decimals (``0.000000`` for a time in microseconds, ``348269.872415``)."""
    import numpy as np

    from automodel.model.best_p import figure

    text = out.copy()
    for column in columns:
        digits = 3 if column in ("lower", "upper") else 4
        text[column] = ["NaN" if v != v else figure(v, digits) for v in np.asarray(out[column], float).tolist()]
    return text


def predict_rows(args: argparse.Namespace, model, frame) -> dict:  # noqa: ANN001  (Model; Rows or a DataFrame)
    """The columns ``predicted``, ``lower``/``upper`` and with ``--parts`` the parts at the rows of
    ``frame``, by name (``args``: ``data``, the rows' source for messages, ``load_from``, ``error``,
    ``window``, ``level``, ``band``, ``parts``; the service passes the same)."""
    missing = [q for q in ("cpu", "bw") if q in model.params and model.roles.get(q, q) not in frame.columns
               and q not in frame.columns]
    if missing:
        frame = frame.copy()
    for q in missing:
        value, said = load_values([q], {}, args.load_from, args.error, args.window,
                                  f"{args.data}: no column '{model.roles.get(q, q)}': ")
        frame[model.roles.get(q, q)] = value[q]
        warn(said)
    out = {"predicted": model.predict(frame, source=args.data)}
    band = model.predict_interval(frame, level=args.level, kind=args.band, source=args.data)
    if band is not None:
        out["lower"], out["upper"] = band
    if args.parts:
        parts = model.predict_parts(frame, source=args.data)
        for part in parts:
            out[part] = parts[part].to_numpy()
    return out


def predict_from_store(args: argparse.Namespace) -> int:
    """Predict the next run of ``--app`` with its leading model; forecast cpu/bw when not given."""
    import math

    from automodel.errors import DataError
    from automodel.model.best_p import figure
    from automodel.terminal import fit_lines

    if not args.app:
        raise DataError("predict --store needs --app NAME")
    # the options of a prediction of rows from a file (-o wrote nothing, --json printed text, without a word)
    unused = [flag for flag, name in (("MODEL.json", "model"), ("DATA", "data"), ("-o", "output"),
                                      ("--kernel", "kernel"), ("--json", "json"), ("--parts", "parts"),
                                      ("--load-from", "load_from")) if getattr(args, name, None) not in (None, False)]
    if unused:
        raise DataError(f"{unused[0]}: for predict MODEL.json DATA; with --store S --app NAME the values are "
                        "--n, --p, --cpu, --bw and --param")
    values = parse_param_values(getattr(args, "param", []))
    given = {**values, **{q: getattr(args, q, None) for q in ("n", "p", "cpu", "bw")}}
    found = store_prediction(args.store, args.app, args.rank, given, args.level, args.band, args.error, args.window,
                             extras=list(values))
    lines = [f"model: T = {found['formula']}", *found["forecasts"]]
    at = ", ".join(f"{q} = {v:g}" for q, v in found["values"].items())
    lines.append(f"predicted time at {at}: {figure(found['predicted'], 4)} {found['unit']}")
    if found["lower"] is not None and math.isfinite(found["lower"]):
        lines.append(f"{args.level:.0%} band ({'one run' if args.band == 'run' else 'expected time'}): "
                     f"{figure(found['lower'])} to {figure(found['upper'])} {found['unit']}")
    print("\n".join(fit_lines(lines, width(args))))
    return 0


def store_prediction(store, app: str, rank: int | None, given: dict, level: float = 0.9,  # noqa: ANN001 (a Store)
                     band: str = "run", error: str = "mse", window: int | None = None, extras: list[str] = ()
                     ) -> dict:
    """The predicted time of the next run of ``app`` with its leading model (the candidate at ``rank``
    by score when given) at the parameter values ``given`` (name -> value; ``cpu`` and ``bw`` forecast
    from the store when None or missing): :func:`store_predictions` of one row. ``extras``: the names
    given with ``--param`` (:func:`~automodel.cli.common.check_extras`: a misspelt one was ignored).

    Returns
    -------
    dict
        ``formula``, ``values`` (every parameter's value), ``forecasts`` (lines saying how cpu and bw
        were forecast), ``predicted``, ``lower``/``upper`` (None without a band) and ``unit``.

    Raises
    ------
    DataError
        A parameter of the model without a value, or an extra it does not have.
    """
    found = store_predictions(store, app, rank, [given], level, band, error, window, extras)
    return {**found, "values": found["values"][0],
            **{k: None if found[k] is None else found[k][0] for k in ("predicted", "lower", "upper")}}


def ranked_model(store, app: str, rank: int | None):  # noqa: ANN001, ANN201 (a Store; a Model)
    """The model of ``app`` that predictions use: its leader, or with ``rank`` the live candidate at that
    rank by score (1: the best-scored), the rank the ranking prints; the one translation of a rank into
    :func:`automodel.store.leader_model`'s position (the service's best-p gave the candidate one rank
    further down). A rank below 1 is a DataError (``--rank 0`` and ``--rank -5`` were read as 1, the
    best-scored, which is not the leader a prediction without ``--rank`` uses)."""
    from automodel.errors import DataError
    from automodel.store import leader_model

    if rank is not None and rank < 1:
        raise DataError(f"--rank: expected a rank of the ranking, 1 (the best-scored) or more, got {rank}")
    return leader_model(store, app, None if rank is None else rank - 1)


def store_predictions(store, app: str, rank: int | None, rows: list[dict], level: float = 0.9,  # noqa: ANN001
                      band: str = "run", error: str = "mse", window: int | None = None, extras: list[str] = (),
                      source: str | None = None) -> dict:
    """:func:`store_prediction` at every row of ``rows`` at once: the model is read from the store once
    and ``cpu`` and ``bw`` forecast once (the service read and refitted the leader once a row: 0.1 s a
    row, minutes for a request of a thousand rows, and a shutdown waited for it). ``source``: the name
    of ``rows`` for messages (the service's ``rows``: ``rows, row 2`` for the second,
    :func:`~automodel.data.cells.record_attrs`); None for the values of the command's options.

    Returns
    -------
    dict
        ``formula``, ``forecasts``, ``unit``, and a list per row of ``values``, ``predicted``,
        ``lower`` and ``upper`` (these two None without a band).

    Raises
    ------
    DataError
        A parameter of the model without a value, or a value it cannot predict at (with the row's
        number when ``source`` is given).
    """
    import numpy as np

    from automodel.data.cells import FIRST_RECORD, located, record_attrs
    from automodel.data.rows import Rows
    from automodel.errors import DataError
    from automodel.model.best_p import float_argument
    from automodel.store import forecast_load

    model = ranked_model(store, app, rank)
    check_extras(model, extras, "predict")
    forecast, lines = {}, []
    columns: dict[str, list[float]] = {q: [] for q in model.params}
    for i, given in enumerate(rows):
        for q in model.params:
            value = given.get(q)
            if value is None and q in ("cpu", "bw"):
                if q not in forecast:
                    f, src = forecast_load(store, q, app, None, error, window)
                    forecast[q] = f.value
                    lines.append(f"{q} forecast: {f.line()}; history: {src}")
                value = forecast[q]
            if value is None:
                where = "" if source is None else f"{located(source, i, None, FIRST_RECORD)}: "
                flag = q if q in ("n", "p") else "param"
                raise DataError(f"{where}the model of {app!r} depends on {q}: give --{flag}")
            # the values of the options, checked as best-p checks them ('<DataFrame>, row 0' named no option)
            columns[q].append(float(value) if source is not None else float_argument(q, value))
    point = Rows({q: np.asarray(v, dtype=float) for q, v in columns.items()}, len(rows),
                 None if source is None else record_attrs(source))
    predicted = model.predict(point, source=source or "<DataFrame>")
    found = model.predict_interval(point, level=level, kind=band, source=source or "<DataFrame>")
    lower, upper = (None, None) if found is None else ([float(v) for v in found[0]], [float(v) for v in found[1]])
    return {"formula": model.formula, "values": [{q: columns[q][i] for q in model.params} for i in range(len(rows))],
            "forecasts": lines, "predicted": [float(v) for v in predicted], "lower": lower, "upper": upper,
            "unit": model.unit}
