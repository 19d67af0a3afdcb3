"""The ``automodel`` command line: one module per group of subcommands, each with ``register(subparsers)``."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from importlib import import_module

from automodel.errors import AutomodelError
from automodel.names import printable
from automodel.terminal import Status, interactive

__all__ = ["main", "build_parser"]

#: modules under automodel/cli/ that add subcommands, in the order ``--help`` lists them
COMMAND_MODULES = ("fit", "predict", "model", "plot", "report", "kernels", "demo", "templates", "run", "suggest",
                   "store", "serve")


def build_parser() -> argparse.ArgumentParser:
    from automodel.cli.common import examples

    parser = argparse.ArgumentParser(
        prog="automodel",
        description="Find performance models of parallel applications from timed runs.",
        **examples(("automodel demo", "the whole job on bundled runs: models, formula, predictions, best p, plot"),
                   ("automodel fit runs.csv -o model.json", "columns time, n, p (else --time walltime_ms --n size "
                    "--p procs)"),
                   ("automodel predict model.json rows.csv", "the time of each row, with its 90% band"),
                   ("automodel best-p model.json --n 800000", "the process count of least time"),
                   ("automodel COMMAND --help", "a command's options")))
    parser.add_argument("--version", action="version", version="automodel 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        import_module(f"automodel.cli.{name}").register(sub)
    for command in _commands(parser):
        command.add_argument("--wide", action="store_true",
                             help="lines as long as their content (default: at most 80 columns)")
    return parser


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run a command: those without subcommands, under ``parser``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for action in subs for child in action.choices.values() for leaf in _commands(child)]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input exits 2 with a one-line message on stderr and no traceback."""
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # a newcomer's first try: the commands and examples,
        parser.print_help(sys.stderr)  # not "error: the following arguments are required: COMMAND"
        return 2
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AutomodelError as exc:
        Status(interactive()).clear()  # a status line on the terminal is not the start of the error's
        print(f"automodel: error: {printable(str(exc))}", file=sys.stderr)  # one line, no escapes
        return 2
    except KeyboardInterrupt:
        Status(interactive()).clear()
        print("automodel: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``automodel templates | head``): stop quietly
        _silence_stdout()
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by a broken pipe
    except OSError as exc:  # after BrokenPipeError, one of them
        if exc.errno != errno.ENAMETOOLONG:
            raise
        Status(interactive()).clear()  # pathlib raises it from is_dir() and exists() of every path given
        name = "a path" if exc.filename is None else str(exc.filename)
        shown = name if len(name) <= 120 else f"{name[:100]}... ({len(name):,} characters)"
        print(f"automodel: error: {printable(shown)}: file name too long, expected a path the system can "
              f"open", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that the interpreter's final flush of what is left in its
    buffer does not raise a second BrokenPipeError (the recipe of the Python documentation, signal
    module, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
