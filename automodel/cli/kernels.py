"""``automodel kernels FILE``: one model per kernel of a profile (any Extra-P format, a CUBE set, or a table
with a kernel column), printed one line per kernel; optionally all models (JSON) or the summary (CSV)
written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from automodel.cli.common import (INPUT_HELP, add_input_options, add_jobs_option, add_metric_option, add_pooling_options,
                                  print_json, read_input, tell, width)
from automodel.terminal import Status, interactive, status, wrap
from automodel.files import check_output, write_atomic, write_text
from automodel.errors import DataError, install_hint
from automodel.options import AGGREGATES, DEFAULT_AGGREGATE

if TYPE_CHECKING:
    import pandas as pd

OUT_SUFFIXES = (".json", ".csv")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kernels", help="model every kernel of a profile (Extra-P files, CUBE profiles, CSV)",
                       description="Model every kernel of FILE (any Extra-P format, a folder of CUBE profiles, or "
                                   "a table with a kernel column) with the search space of 'automodel fit'; print "
                                   "one line per kernel.")
    p.add_argument("data", metavar="FILE", help=INPUT_HELP)
    add_input_options(p, kernel=False)
    p.add_argument("--kernel", default="kernel", metavar="COL", help="kernel column of a CSV (default: kernel)")
    p.add_argument("--time", default="time", metavar="COL", help="value column of a CSV (default: time)")
    p.add_argument("--param", metavar="COL", nargs="+", action="extend", default=None,
                   help="parameter column(s) of a CSV (default: those named n, p, cpu, bw, as fit takes them)")
    add_pooling_options(p)
    p.add_argument("--aggregate", choices=AGGREGATES, default=DEFAULT_AGGREGATE,
                   help="how repetitions are combined (default: %(default)s)")
    p.add_argument("--space", default="default", metavar="NAME|FILE", help="search space (default: default)")
    add_metric_option(p)
    p.add_argument("--selection", default=None, choices=("simplest", "best"),
                   help="simplest equivalent candidate or rank 1 (default: the space's setting)")
    add_jobs_option(p, "the kernels")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on this dask.distributed cluster (e.g. tcp://host:8786) with as many tasks as it "
                        f"has worker threads; needs {install_hint('dask')}")
    p.add_argument("--out", metavar="models.json|summary.csv",
                   help="write every model (.json, one object per kernel) or the summary table (.csv); "
                        "'-': the models file on standard output, the report on standard error")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON array (and the notes "
                                                        "on standard error)")
    p.add_argument("--report", metavar="HTML", help="also write the HTML report of the profile: its call tree, "
                   "each kernel's formula, growth, error and band, sortable, its plot on a click")
    p.add_argument("--report-at", metavar="NAME=VALUE", nargs="+", action="extend", default=[],
                   help="the configuration the report compares kernels at, e.g. p=4096 (default: 4x the largest "
                        "measured value of each parameter)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from automodel.model_file import models_body, save_models

    import json
    import sys

    if args.report:
        check_output(args.report, inputs=(args.data, args.space), others=(args.out,))
    at = _report_at(args.report_at)
    if args.out == "-":
        if args.json:
            raise DataError("--out - and --json both write to standard output; choose one")
        data = _read(args)
        result = _fit(args, data)
        page = _report(args, result, data, at) if args.report else None
        print("\n".join(_lines(result, args)), file=sys.stderr)
        print(json.dumps(models_body(result.models), indent=1, allow_nan=False))
        _write_report(args, result, page, sys.stderr)
        return 0
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower() not in OUT_SUFFIXES:
        raise DataError(f"--out {args.out}: expected a file name ending in .json (models) or .csv (summary)")
    if out is not None:
        check_output(out, inputs=(args.data, args.space))
    data = _read(args)
    result = _fit(args, data)
    page = _report(args, result, data, at) if args.report else None  # a bad --report-at: before any output
    written = []  # the files first: '| head' going away during the lines ended the command before them
    if out is not None:
        if out.suffix.lower() == ".json":
            with status(f"writing {len(result.models)} models to {out}"):
                save_models(result.models, out)
            written.append(f"{len(result.models)} models written to {out}")
        else:
            write_atomic(out, lambda tmp: _text_cells(result.summary).to_csv(tmp, index=False))
            written.append(f"summary of {len(result.summary)} kernels written to {out}")
    if page is not None:
        write_text(args.report, page)
        written.append(f"report of {len(result.summary)} kernels written to {args.report}")
    if args.json:
        print_json(result.summary)
        print("\n".join([*_described(result, args), *_notes(result, args)]), file=sys.stderr)
    else:
        print("\n".join(_lines(result, args)))
    for line in written:
        tell(line, args, sys.stderr if args.json else None)
    if result.interrupted:  # what finished is printed and written; the exit status of an interrupted command
        print("automodel: interrupted: kept the kernels whose tasks had finished", file=sys.stderr)
        return 130
    return 0


def _described(result, args: argparse.Namespace) -> list[str]:  # noqa: ANN001  (a ManyResult)
    """The line that says the unit of the values (:meth:`ManyResult.described
    <automodel.kernels.result.ManyResult.described>`) within the command's width."""
    return wrap(result.described(args.data), width(args), "", "    ")


def _notes(result, args: argparse.Namespace) -> list[str]:  # noqa: ANN001  (a ManyResult)
    """The notes of ``result`` as ``note: ...`` lines within the command's width."""
    return [line for note in result.notes for line in wrap(f"note: {note}", width(args), "", "  ")]


def _lines(result, args: argparse.Namespace) -> list[str]:  # noqa: ANN001  (a ManyResult)
    """The unit (:func:`_described`), one line per kernel (:meth:`ManyResult.lines
    <automodel.kernels.result.ManyResult.lines>`), then the notes."""
    return [*_described(result, args), *result.lines(width(args)), *_notes(result, args)]


def _read(args: argparse.Namespace):  # noqa: ANN202  (a DataFrame, or the path for fit_many to read)
    """The profile: read here when it is filtered (``--where``) or when the report needs its measurements."""
    Status(interactive())(f"kernels: reading {args.data}")  # before the imports; fit_many's own line follows
    from automodel.kernels.fit_many import load_kernels

    if args.where:
        return read_input(args, sys.stderr, kernel=False)
    return load_kernels(args.data, args.format)[0] if args.report else args.data


def _fit(args: argparse.Namespace, data):  # noqa: ANN001, ANN202  (a ManyResult)
    from automodel.kernels.fit_many import fit_many

    return fit_many(data, kernel=args.kernel, time=args.time, params=args.param, space=args.space,
                    aggregate=args.aggregate, metric=args.metric, selection=args.selection, jobs=args.jobs,
                    scheduler=args.scheduler, format=args.format, progress=interactive(),
                    ignore=args.ignore, unit=args.unit)


def _write_report(args: argparse.Namespace, result, page: str | None, out) -> None:  # noqa: ANN001
    """Write the profile report ``page`` (None: not asked for) and say so on ``out``."""
    if page is not None:
        write_text(args.report, page)
        tell(f"report of {len(result.summary)} kernels written to {args.report}", args, out)


def _report_at(items: list[str]) -> dict[str, float]:
    """The values of ``--report-at NAME=VALUE ...``."""
    from automodel.cli.common import number_pairs

    return number_pairs(items, "--report-at")


def _report(args: argparse.Namespace, result, data, at: dict[str, float]) -> str:  # noqa: ANN001
    """The profile report (:mod:`automodel.output.report.profile`) of ``result``, compared at ``at`` (the
    user's parameter names)."""
    from automodel.output.report.profile import profile_page

    from automodel.model.best_p import float_argument

    known = {m.roles.get(q, q): q for m in list(result.models.values())[:1] for q in m.params}
    unknown = [q for q in at if q not in known]
    if unknown and known:
        raise DataError(f"--report-at {unknown[0]}: not a parameter of the models; they have "
                        f"{', '.join(known)}")
    target = {known.get(q, q): v for q, v in at.items()}
    for q, v in target.items():  # as best-p checks its values: p=0, p=-4 and p=nan drew a page at them
        try:
            float_argument(q, v)
        except DataError as exc:
            raise DataError(f"--report-at {exc}") from None
    return profile_page(result, data, target, kernel=args.kernel, time=args.time, source=args.data)


def _text_cells(summary: "pd.DataFrame") -> "pd.DataFrame":
    """The summary with each text cell (a kernel's name from the profile, a formula, a note) as
    :func:`automodel.names.text_cell` writes it: a formula with a negative first coefficient
    (``-0.5*log2(p) + 3``) or a kernel named ``=1+1`` was a formula in a spreadsheet (#NAME?)."""
    from automodel.names import text_cell

    texts = summary.select_dtypes(include=["object", "string"]).columns
    return summary.assign(**{c: summary[c].map(text_cell, na_action="ignore") for c in texts})
