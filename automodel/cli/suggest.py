"""``automodel suggest``: the next runs that narrow the band at a target most per core-hour.

Examples
--------
::

    automodel suggest runs.csv --target n=1600000,p=256 --max-p 256 --count 3
    automodel suggest model.json --target n=1e6,p=1024 --p 1:1024:*2 --budget 0.5 --json
    automodel suggest --store runs.db --app cg --target n=1e6,p=1024 --max-p 1024
"""

from __future__ import annotations

import argparse
from typing import Any

from automodel.cli.common import number, number_pairs, whole, width
from automodel.names import split_pairs
from automodel.terminal import status

__all__ = ["register", "handle", "parse_target"]


def register(sub: Any) -> None:
    """Add the ``suggest`` subcommand to an argparse ``subparsers`` object."""
    s = sub.add_parser(
        "suggest", help="which runs to make next for the narrowest band at a target per core-hour",
        description="Fit the runs (or read a model file) and rank candidate configurations by the "
                    "expected narrowing of the prediction band at the target per core-hour: runs that "
                    "extend the measured range towards the target, and runs where the candidates the "
                    "data cannot tell apart disagree most. Each comes with its expected cost (p x "
                    "predicted time) and the reason.")
    s.add_argument("data", metavar="RUNS", nargs="?",
                   help="runs (CSV, ...) with columns n, p, time, or a model file")
    s.add_argument("--store", metavar="PATH|URL", help="plan for the leading model of --app in this store "
                   "instead (automodel observe)")
    s.add_argument("--app", help="the application of --store")
    s.add_argument("--target", required=True, metavar="NAME=V,...",
                   help="where the prediction matters, e.g. n=1000000,p=1024")
    s.add_argument("--count", type=whole, default=5, help="configurations to suggest (default 5)")
    s.add_argument("--max-p", type=number, default=None, help="the largest p that can be run")
    s.add_argument("--p", default=None, metavar="LIST",
                   help="the process counts that can be run, e.g. 1,2,4,8 or 1:1024:*2")
    s.add_argument("--grid", action="append", default=[], metavar="NAME=SPEC",
                   help="levels of a parameter, e.g. n=1e5:1.6e6:*2 (repeatable; default: the measured "
                        "levels and doublings towards the target)")
    s.add_argument("--budget", type=number, default=None, metavar="CORE_HOURS",
                   help="core-hours the suggested runs may cost in total")
    s.add_argument("--reps", type=whole, default=1, help="repetitions per suggested run (default 1)")
    s.add_argument("--new-only", action="store_true", help="never suggest a configuration already measured")
    s.add_argument("--level", type=number, default=0.9, help="level of the band (default 0.9)")
    s.add_argument("--json", action="store_true", help="print the plan as one JSON document")
    s.set_defaults(handler=handle)


def parse_target(text: str, flag: str = "--target") -> dict[str, float]:
    """``"n=1e6,p=1024"`` -> ``{"n": 1e6, "p": 1024.0}``; a one-line DataError otherwise.

    Examples
    --------
    >>> parse_target("n=1e6, p=1024")
    {'n': 1000000.0, 'p': 1024.0}
    """
    import math

    from automodel.errors import DataError

    out = number_pairs(text.split(","), flag, "NAME=NUMBER,... e.g. n=1000000,p=1024", shown=text)
    for name, value in out.items():
        if not math.isfinite(value):  # refused before `run --adaptive` runs its seed
            raise DataError(f"{flag} {text!r}: {name} must be a finite number, got {value:g}")
    return out


def _grid(items: list[str]) -> dict[str, list[float]]:
    from automodel.errors import DataError
    from automodel.runner.grid import parse_values

    out: dict[str, list[float]] = {}
    for name, spec in split_pairs(items, "--grid", DataError, "NAME=SPEC, e.g. n=1e5:1.6e6:*2").items():
        values = parse_values(spec, name)
        if any(isinstance(v, str) for v in values):
            raise DataError(f"--grid {name + '=' + spec!r}: the levels must be numbers")
        out[name] = [float(v) for v in values]
    return out


def _source(path: str) -> Any:
    """A model file when ``path`` is one (JSON of format automodel-model), else ``path`` (runs to fit)."""
    if path.endswith(".json"):
        import json

        from automodel.errors import AutomodelError, DataError
        from automodel.files import read_text
        from automodel.model_file import load_model

        try:  # bounded, a FIFO or a device refused unopened (open() of a FIFO waited for ever)
            head = json.loads(read_text(path, "a model JSON file", DataError))
        except (AutomodelError, ValueError, RecursionError):  # not a model: the reader of runs says why
            return path
        if isinstance(head, dict) and head.get("format") == "automodel-model":
            return load_model(path)
    return path


def _check_named_columns(path: str) -> None:
    """Refuse runs whose time or process count is not in a column of that name, with the ``fit`` that
    names them: ``suggest`` reads the runs by the names ``time``, ``p`` and ``n`` (its ``--p`` lists the
    process counts that can be run, not a column), and a file of ``procs, size, walltime_ms`` was told
    ``--time walltime_ms``, an option ``suggest`` does not have."""
    from pathlib import Path

    from automodel.data import read
    from automodel.data.dataset import role_hint
    from automodel.errors import DataError
    from automodel.names import listing, printable

    columns = [str(c) for c in read(Path(path)).columns]
    if "time" in columns and "p" in columns:
        return
    named = role_hint("time", columns).strip() or "(--time COL --p COL --n COL)"
    raise DataError(f"{path}: suggest reads the runs' columns named time, p and n, and the file has "
                    f"{listing([printable(c) for c in columns])}; fit it first with the options that name them "
                    f"{named} and -o model.json, then give suggest model.json")


def handle(args: argparse.Namespace) -> int:
    from automodel.cli.common import check_app, print_json
    from automodel.errors import DataError
    from automodel.names import printable
    from automodel.runner.grid import parse_values
    from automodel.suggestion import suggest

    check_app(args)
    if not 0 < args.level < 1:
        raise DataError(f"--level must be between 0 and 1 (exclusive), got {args.level:g}")
    target = parse_target(args.target)
    allowed = None
    if args.p is not None:
        values = parse_values(args.p, "p")
        if any(isinstance(v, str) for v in values):
            raise DataError(f"--p {args.p!r}: the process counts must be numbers")
        allowed = [float(v) for v in values]
    if args.store:
        if not args.app or args.data:
            raise DataError("suggest --store needs --app NAME and no RUNS")
        from automodel.store import leader_model

        source = leader_model(args.store, args.app)
    elif args.data:
        source = _source(args.data)
        if isinstance(source, str):
            _check_named_columns(source)
    else:
        raise DataError("suggest needs RUNS (or a model file), or --store S --app NAME")
    with status("suggest: fitting and weighing the candidate runs"):
        plan = suggest(source, target, count=args.count, allowed_p=allowed, max_p=args.max_p,
                       grid=_grid(args.grid), budget=args.budget, reps=args.reps, level=args.level,
                       new_only=args.new_only)
    if args.json:
        print_json({"target": plan.target, "predicted": plan.predicted, "lower": plan.lower, "upper": plan.upper,
                    "width": plan.width, "level": plan.level, "candidates": plan.n_candidates,
                    "core_hours": plan.cost, "suggestions": plan.frame(), "notes": list(plan.notes)})
    else:
        print("\n".join(printable(line) for line in plan.lines(width(args))))
    return 0
