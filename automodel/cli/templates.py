"""``automodel templates``: list the seeded templates, their required columns and sources."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("templates", help="list the seeded models of the literature")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from automodel.templates import describe

    rows = describe()
    if not rows:
        print("no templates registered")
    for r in rows:
        print(f"{r['name']:<12} {r['title']}\n{'':<12} requires: {r['requires'] or '-'}\n{'':<12} source: {r['source']}")
    return 0
