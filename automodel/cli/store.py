"""``automodel observe | ranking | runs | load``: the persistent store and online re-ranking."""

from __future__ import annotations

import argparse

from automodel.options import AGGREGATES
from automodel.cli.common import (INPUT_HELP, STORE_HELP, add_forecast_options, add_input_options, add_role_options,
                                  number, print_json, read_input, role_kwargs, add_pooling_options, rows_count, whole, width)
from automodel.terminal import fit_lines, status, table, wrap

__all__ = ["register"]

#: columns of the ranking's tables printed under each row, wrapped, rather than beside the others (the
#: history's time too: its other columns take 74 of the 80)
TEXT_COLUMNS = ("formula", "structure", "reason", "at", "leader")


def _store_option(p: argparse.ArgumentParser, app: bool = True) -> None:
    p.add_argument("--store", required=True, metavar="PATH|URL", help=STORE_HELP)
    if app:
        p.add_argument("--app", required=True, metavar="NAME", help="application name")


def register(sub: argparse._SubParsersAction) -> None:
    o = sub.add_parser("observe", help="add runs to the store, refit, re-rank and prune the live models",
                       description="Add the runs of FILE to an application; the first observe runs the "
                                   "staged search. Prints the new leader, pruned count and flagged runs. Runs "
                                   "the store already has (same parameters and time) are skipped, so "
                                   "observing a file again adds nothing.",
                       conflict_handler="resolve")
    _store_option(o)
    o.add_argument("data", metavar="FILE", help=INPUT_HELP)
    add_input_options(o)
    add_role_options(o)
    add_pooling_options(o, unit=False)  # the store keeps no unit yet
    o.add_argument("--aggregate", choices=AGGREGATES, default=None,
                   help="combine repetitions (identical parameters) of FILE into one run each "
                        "(default: store every run)")
    o.add_argument("--allow-duplicates", action="store_true",
                   help="store runs the store already has (genuinely repeated measurements)")
    o.add_argument("--space", default="default", metavar="NAME|FILE", help="search space of the first observe")
    o.set_defaults(handler=observe)

    r = sub.add_parser("ranking", help="the live candidates of an application, best first")
    _store_option(r)
    r.add_argument("--top", type=rows_count, default=10, metavar="K", help="rows to print (0: all)")
    r.add_argument("--history", action="store_true", help="one line per update instead")
    r.add_argument("--pruned", action="store_true", help="the deleted candidates, with when and why")
    r.add_argument("--json", action="store_true", help="print the rows as one JSON array")
    r.set_defaults(handler=ranking)

    u = sub.add_parser("runs", help="list an application's runs; re-admit flagged runs or exclude runs")
    _store_option(u)
    u.add_argument("--flagged", action="store_true", help="only the runs set aside as anomalous")
    u.add_argument("--readmit", type=whole, nargs="+", default=[], metavar="ID", help="put these runs back into the fit")
    u.add_argument("--exclude", type=whole, nargs="+", default=[], metavar="ID", help="take these runs out of the fit")
    u.set_defaults(handler=runs)

    ld = sub.add_parser("load", help="record, import and forecast machine load (free CPU, bandwidth)")
    lsub = ld.add_subparsers(dest="load_command", metavar="ACTION")
    lsub.required = True
    rec = lsub.add_parser("record", help="record one sample (or import a CSV of samples: time, host, cpu, bw)")
    _store_option(rec, app=False)
    rec.add_argument("--cpu", type=number, default=None, help="available CPU fraction in (0, 1]")
    rec.add_argument("--bw", type=number, default=None, help="available bandwidth fraction in (0, 1]")
    rec.add_argument("--host", default=None, help="host name (default: this machine)")
    rec.add_argument("--at", type=number, default=None, help="sample time, seconds (default: now)")
    rec.add_argument("--csv", default=None, metavar="SAMPLES.csv", help="import periodic samples per host")
    rec.set_defaults(handler=load_record)
    fc = lsub.add_parser("forecast", help="forecast the next available CPU and bandwidth (NWS mixture of experts)")
    _store_option(fc, app=False)
    fc.add_argument("--app", default=None, help="use this application's run history when there are no samples")
    fc.add_argument("--host", default=None)
    add_forecast_options(fc)
    fc.set_defaults(handler=load_forecast)


def observe(args: argparse.Namespace) -> int:
    from automodel.store import observe as do_observe

    kwargs = role_kwargs(args)
    aggregate = kwargs.pop("aggregate")
    if not kwargs["explicit"] and not kwargs["params"]:
        kwargs = {"ignore": kwargs["ignore"]} if kwargs["ignore"] else {}  # the application's remembered columns
    with status(f"observe: reading {args.data}") as say:
        frame = read_input(args)
        say(f"observe: {len(frame)} runs into {args.app}: refitting")
        report = do_observe(args.store, args.app, frame, space=args.space, aggregate=aggregate,
                            allow_duplicates=args.allow_duplicates, **kwargs)
    print("\n".join(fit_lines(report.lines(), width(args))))
    return 0


def ranking(args: argparse.Namespace) -> int:
    import pandas as pd

    from automodel.store import history, ranking as do_ranking

    top = args.top or None
    if args.history:
        frame = history(args.store, args.app).drop(columns=["top", "leader_id"])
        frame["at"] = pd.to_datetime(frame["at"], unit="s").dt.strftime("%Y-%m-%d %H:%M:%S")
    else:
        frame = do_ranking(args.store, args.app, top, pruned=args.pruned)
        if args.pruned and len(frame):
            frame["at"] = pd.to_datetime(frame["at"], unit="s").dt.strftime("%Y-%m-%d %H:%M:%S")
    if args.json:
        print_json(frame)
        return 0
    print(table(frame, width(args), below=_below(frame, args),
                float_format=lambda v: f"{v:.4g}") if len(frame) else "(none)")
    return 0


def _below(frame, args: argparse.Namespace) -> list[str]:  # noqa: ANN001  (a DataFrame)
    """The columns of a ranking table printed under each row (none with ``--wide``)."""
    if width(args) is None:
        return []
    return [c for c in TEXT_COLUMNS if c in frame.columns and (c != "at" or args.history)]


def runs(args: argparse.Namespace) -> int:
    from automodel.store import runs as do_runs
    from automodel.store.observe import change_status

    for report in change_status(args.store, args.app, args.readmit, args.exclude):
        print("\n".join(fit_lines(report.lines(), width(args))))
    frame = do_runs(args.store, args.app, ("flagged",) if args.flagged else None)
    frame = frame.drop(columns=["observed_at"])
    print(table(frame, width(args), float_format=lambda v: f"{v:.6g}") if len(frame) else "(no runs)")
    return 0


def load_record(args: argparse.Namespace) -> int:
    from automodel.store import import_samples, record

    if args.csv:
        print(f"{import_samples(args.store, args.csv)} load samples imported")
    else:
        record(args.store, args.cpu, args.bw, args.host, args.at)
        print("load sample recorded")
    return 0


def load_forecast(args: argparse.Namespace) -> int:
    from automodel.errors import StoreError
    from automodel.store import forecast_load, open_store

    store = open_store(args.store, create=False)
    done = 0
    for res in ("cpu", "bw"):
        try:
            f, src = forecast_load(store, res, args.app, args.host, args.error, args.window)
        except StoreError as exc:
            print("\n".join(wrap(f"{res}: {exc}", width(args))))
            continue
        print("\n".join(wrap(f"{res}: {f.line()}; history: {src}", width(args))))
        done += 1
    return 0 if done else 2
