"""Pieces shared by the subcommands: input, data-role, metric, jobs and forecast options, NAME=VALUE parameters."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from automodel.data.numerals import WHOLE, is_number, number_text
from automodel.data.readers.formats import FORMATS as INPUT_FORMATS
from automodel.errors import DataError, install_hint
from automodel.names import listing, printable, shortened, split_pairs
from automodel.options import AGGREGATES, DEFAULT_AGGREGATE, ROLE_NAMES
from automodel.solve.metrics import METRICS
from automodel.terminal import WIDTH, Status, interactive, wrap

ROLE_OPTIONS = ("time", "n", "p", "cpu", "bw")
#: what an input file may be, for help texts
INPUT_HELP = ("runs (CSV, TSV, Parquet), an Extra-P file (text, JSON, JSON Lines, Talpas, .extra-p) or a "
              "folder of CUBE profiles")
#: what ``--store`` takes, for every command that has it
#: ``automodel serve``: the environment variable of its bearer token, and its default bounds (bytes of a
#: request body, seconds a connection may stay silent); here so that building the parser imports no http.server
TOKEN_ENV, MAX_BYTES, TIMEOUT_S = "AUTOMODEL_SERVE_TOKEN", 1 << 20, 10.0
STORE_HELP = ("SQLite file or database URL, e.g. postgresql://user@host/db (needs "
              f"{install_hint('postgres')}); observe and load record create a missing store")


class ExamplesFormatter(argparse.HelpFormatter):
    """argparse's help layout, but an epilog of examples (text that starts with ``examples:``) is kept
    line for line as written: ``automodel --help`` and the commands a newcomer starts with show how they are
    called, which wrapped as prose would run the command lines together."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def examples(*pairs: tuple[str, str]) -> dict[str, Any]:
    """Keyword arguments of ``add_parser`` (or ``ArgumentParser``) for an epilog of examples, one
    ``(command, what it does)`` pair a line, each within 80 columns (``tests/test_cli_width.py``)."""
    lines = [f"  {command}" + (f"\n      {what}" if what else "") for command, what in pairs]
    return {"epilog": "examples:\n" + "\n".join(lines), "formatter_class": ExamplesFormatter}


def rows_count(text: str) -> int:
    """An ``argparse`` type: a number of rows to print, a whole number >= 0 (``--top -1`` printed every row
    but the last under the heading "top -1")."""
    value = int(text) if WHOLE.fullmatch(text) else -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows >= 0, got {text!r}")
    return value


def add_metric_option(parser: argparse.ArgumentParser) -> None:
    """``--metric NAME``: its choices and help read from the metric registry (:data:`automodel.solve.metrics.METRICS`)."""
    listed = "; ".join(f"{m.name}: {m.description}" for m in METRICS.values())
    parser.add_argument("--metric", default=None, choices=list(METRICS), metavar="NAME",
                        help=f"ranking metric (default: the space's). {listed}")


def add_jobs_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--jobs N``, with the same default for every command: the idle cores, used only when the work pays for them."""
    parser.add_argument("--jobs", type=whole, default=None, metavar="N",
                        help=f"worker processes at most for {what} (default: the cores the machine's load leaves "
                             "idle; used only when the work pays for them, the result unchanged)")


def add_role_options(parser: argparse.ArgumentParser) -> None:
    """``--time COL --n COL --p COL --cpu COL --bw COL --param COL ...``."""
    for role in ROLE_OPTIONS:
        parser.add_argument(f"--{role}", metavar="COL", default=None,
                            help=f"column holding {role!r} (default: {role!r} if present)")
    parser.add_argument("--param", metavar="COL", nargs="+", action="extend", default=[],
                        help="extra numeric parameter column(s) (iterations, clusters, ...)")
    parser.add_argument("--aggregate", choices=AGGREGATES, default=DEFAULT_AGGREGATE,
                        help="how repetitions (identical parameters) are combined (default: %(default)s: the "
                             "mean of the runs that are not outliers, the median when the noise is heavy-tailed)")


def add_input_options(parser: argparse.ArgumentParser, kernel: bool = True) -> None:
    """``--format NAME`` and (``kernel``) ``--kernel NAME``: how the input file is read, which kernel of it;
    the formats and their help read from the registry (:data:`automodel.data.readers.formats.FORMATS`)."""
    listed = "; ".join(f"{f.name}: {f.description}" for f in INPUT_FORMATS.values())
    parser.add_argument("--format", choices=list(INPUT_FORMATS), default=None, metavar="FORMAT",
                        help=f"input format (default: detected from the content). {listed}")
    if kernel:
        parser.add_argument("--kernel", metavar="NAME", default=None,
                            help="the kernel to model when the file holds several, by its label, e.g. "
                                 "'main->solve [time]' (automodel kernels lists them)")


def add_pooling_options(parser: argparse.ArgumentParser, unit: bool = True) -> None:
    """``--where EXPR``, ``--ignore COL ...`` and (``unit``) ``--unit UNIT``: which rows, which undeclared
    columns may differ between repetitions (:func:`automodel.data.dataset.check_pooling`), and the
    unit of the times."""
    parser.add_argument("--where", metavar="EXPR", default=None,
                        help="model only the rows where this pandas condition holds, e.g. "
                             "\"collective == 'MPI_Bcast' and P >= 4\"")
    if unit:
        parser.add_argument("--unit", metavar="UNIT", default=None,
                            help="unit of the times: s, ms, us, ns, or a label for a value that is not a "
                                 "time (default: the data's 'unit' column, else s); printed times and plots "
                                 "use it")
    parser.add_argument("--ignore", metavar="COL", nargs="+", action="extend", default=[],
                        help="undeclared column(s) whose values may differ between repetitions (pooled "
                             "knowingly); any other such column is an error")


def read_input(args: argparse.Namespace, out=None, kernel: bool = True):  # noqa: ANN001, ANN201  (a DataFrame)
    """The runs of ``args.data`` (:func:`automodel.data.read` with ``args.format``; ``-``: standard
    input), cut to the rows of ``args.where`` and (``kernel``) to the kernel ``args.kernel``; the
    reader's notes printed as ``note: ...`` on ``out`` (default stdout)."""
    from automodel.data import one_kernel, read
    from automodel.data.tidy import select_rows
    from automodel.names import printable

    frame = read(args.data, args.format)
    if getattr(args, "where", None):
        frame = select_rows(frame, args.where)
    frame = one_kernel(frame, args.kernel) if kernel else frame
    if frame.attrs.get("notes"):
        Status(interactive()).clear()  # a status line shown on the terminal makes room for them
    for note in frame.attrs.get("notes", ()):
        print(f"note: {printable(note)}", file=out)
    return frame


def width(args: argparse.Namespace) -> int | None:
    """The width of the command's lines: :data:`automodel.terminal.WIDTH`, None (no limit) with ``--wide``."""
    return None if getattr(args, "wide", False) else WIDTH


def tell(text: str, args: argparse.Namespace, out=None) -> None:  # noqa: ANN001  (a stream)
    """Print ``text`` (``"model written to PATH"``, ``"chosen model: T = ..."``) on ``out`` within the
    command's width (:func:`width`), broken at spaces: ``kernels --out`` on a path of 60 characters printed
    a line of 81."""
    print("\n".join(wrap(text, width(args))), file=out)


def check_app(args: argparse.Namespace) -> None:
    """Refuse ``--app NAME`` without ``--store``: the name of an application of a store, it was ignored
    without a word (``fit runs.csv --app lu`` fitted the file, ``run --app lu`` stored nothing)."""
    if getattr(args, "app", None) is not None and getattr(args, "store", None) is None:
        raise DataError(f"--app {printable(repr(args.app))}: an application of a store; give --store S too, or "
                        "drop --app")


def check_extras(model, extras: Iterable[str], command: str) -> None:  # noqa: ANN001  (a Model)
    """Refuse a ``--param NAME`` the model does not have (a misspelt name would otherwise be ignored without
    a word) or that is one of its roles (n, p, cpu, bw have options of their own; best-p chooses p)."""
    canonical = {model.roles.get(q, q): q for q in model.params}
    for name in extras:
        q, said = canonical.get(name, name), shortened(printable(name))
        if q in ROLE_NAMES:
            raise DataError(f"--param {said}: " + (f"{command} chooses p; give the other parameters"
                                                    if q == "p" and command == "best-p"
                                                    else f"give {q} with --{q}, not --param"))
        if q not in model.params:
            raise DataError(f"--param {said}: the model has no parameter {shortened(printable(repr(name)))} (its "
                            f"parameters: {listing([model.roles.get(q, q) for q in model.params], printable)})")


def role_kwargs(args: argparse.Namespace) -> dict:
    """Keyword arguments for :func:`automodel.fit` / :func:`automodel.data.load` from the options."""
    kwargs = {role: getattr(args, role) for role in ROLE_OPTIONS if getattr(args, role) is not None}
    return {**kwargs, "params": list(args.param), "aggregate": args.aggregate,
            "explicit": [role for role in kwargs], "ignore": list(getattr(args, "ignore", [])),
            **({"unit": args.unit} if getattr(args, "unit", None) is not None else {})}


def add_forecast_options(parser: argparse.ArgumentParser) -> None:
    """``--error mse|mae --window K``: how the load forecasters are judged (``predict --store``, ``load forecast``)."""
    parser.add_argument("--error", choices=("mse", "mae"), default="mse", help="postcast error (default mse)")
    parser.add_argument("--window", type=whole, default=None, metavar="K",
                        help="judge forecasters on their last K postcasts (default: all history)")


def number(text: str) -> float:
    """An option's number (``type=number``), read as every number written as text is
    (:func:`automodel.data.numerals.number_text`: ASCII digits; ``float`` also took ``'١٠٠'`` and ``'1_0'``)."""
    if not is_number(text):
        raise argparse.ArgumentTypeError(f"expected a number such as 1000 or 1e6, got {shortened(printable(repr(text)))}")
    return number_text(text)


def whole(text: str) -> int:
    """An option's whole number (``type=whole``): ASCII digits with an optional sign (``int`` also took
    ``'６４'`` and ``'1_0'``)."""
    if not WHOLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a whole number such as 8, got {shortened(printable(repr(text)))}")
    return int(text)


def number_pairs(items: Iterable[str], flag: str, expected: str = "NAME=NUMBER", shown: str | None = None
                 ) -> dict[str, float]:
    """``NAME=NUMBER`` items of the option ``flag`` as name -> number, each number read as every number
    written as text is (:func:`automodel.data.numerals.number_text`): ``--param``, ``--report-at``,
    ``--target``.

    Raises
    ------
    DataError
        If an item is not ``expected`` (quoting the item, or ``shown``) or names a parameter an earlier
        one named.

    Examples
    --------
    >>> number_pairs(["k=8", "iters=1e3"], "--param")
    {'k': 8.0, 'iters': 1000.0}
    """
    values: dict[str, float] = {}
    for name, value in split_pairs(items, flag, DataError, expected, shown=shown).items():
        if not is_number(value):
            said = name + "=" + value if shown is None else shown
            raise DataError(f"{flag} {shortened(printable(repr(said)))}: expected {expected}")
        values[name] = number_text(value)
    return values


def parse_param_values(items: list[str]) -> dict[str, float]:
    """Values of extra parameters from ``--param NAME=VALUE ...`` (:func:`number_pairs`)."""
    return number_pairs(items, "--param")


def warn(warnings: Iterable[str], width: int | None = WIDTH) -> None:
    """Print each warning on stderr as ``warning: ...`` (stdout stays the answer, for scripts), wrapped
    to ``width`` columns (None: no limit)."""
    from automodel.names import printable

    for text in warnings:
        print("\n".join(wrap(f"warning: {printable(text)}", width, "", "  ")), file=sys.stderr)


def load_values(params: Iterable[str], given: dict[str, float | None], load_from: str | None, error: str,
                window: int | None, where: str = "") -> tuple[dict[str, float], list[str]]:
    """The free CPU and bandwidth fractions a prediction uses, and what it says about them.

    For each of ``cpu``/``bw`` in ``params`` that ``given`` leaves None: the Network-Weather-Service
    forecast from the load samples of the store ``load_from`` (``automodel load record``), else 1 (a
    dedicated machine); the lines say which, for stderr.
    """
    values, lines = {}, []
    for q in ("cpu", "bw"):
        if q not in params:
            continue
        if given.get(q) is not None:
            values[q] = float(given[q])
        elif load_from:
            from automodel.store import forecast_load

            found, history = forecast_load(load_from, q, None, None, error, window)
            values[q] = found.value
            lines.append(f"{where}{q} forecast {found.value:.3g} from {load_from} ({history})")
        else:
            values[q] = 1.0
            lines.append(f"{where}{q} = 1 assumed (a dedicated machine; --{q} or --load-from STORE sets it)")
    return values, lines


def jsonable(value: Any) -> Any:
    """``value`` with NaN and infinities as None and numpy scalars, arrays, tuples and DataFrames as
    plain JSON values, for ``--json`` output."""
    import math

    import numpy as np

    pd = sys.modules.get("pandas")  # only a pandas value needs pandas: none can be given before it is loaded
    if pd is not None and isinstance(value, pd.DataFrame):  # column by column: to_dict(orient="records") costs ms per row
        names = [str(k) for k in value.columns]
        columns = [jsonable(value.iloc[:, j].tolist()) for j in range(value.shape[1])]
        return [dict(zip(names, row)) for row in zip(*columns)] if names else [{} for _ in range(len(value))]
    if hasattr(value, "n_rows") and hasattr(value, "to_frame"):  # automodel.data.rows.Rows
        names = [str(k) for k in value.columns]
        columns = [jsonable(list(value[c])) for c in value.columns]
        return [dict(zip(names, row)) for row in zip(*columns)] if names else [{} for _ in range(len(value))]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if pd is not None and value is pd.NA:
        return None
    return value


def print_json(value: Any) -> None:
    """One JSON document on standard output (NaN as null)."""
    import json

    print(json.dumps(jsonable(value), allow_nan=False))


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``MODEL.json --kernel NAME``: a model file or a models file of ``automodel kernels --out``."""
    parser.add_argument("model", metavar="MODEL.json",
                        help="a model file (automodel fit -o) or a models file (automodel kernels --out)")
    parser.add_argument("--kernel", default=None, metavar="NAME",
                        help="the kernel's model of a models file (default: every one where that makes sense)")


def load_chosen(args: argparse.Namespace, one: bool = False) -> dict:
    """The models of ``args.model`` by name (:func:`automodel.model_file.load_models`), cut to
    ``args.kernel``; with ``one``, exactly one must be left."""
    from automodel.errors import DataError
    from automodel.model_file import load_models

    models = load_models(args.model, kernel=args.kernel)
    if one and len(models) > 1:
        raise DataError(f"{args.model}: holds {len(models)} models; choose one with --kernel NAME "
                        f"({listing(list(models))})")
    return models
