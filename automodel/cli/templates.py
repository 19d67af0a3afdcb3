"""``automodel templates``: list the seeded templates, their required columns, sources and cost."""

from __future__ import annotations

import argparse
import textwrap


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("templates", help="list the seeded models of the literature and their cost")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from automodel.templates.base import COSTS
    from automodel.templates import TEMPLATES, describe
    from automodel.templates.options import template_options

    rows = describe()
    if not rows:
        print("no templates registered")
    for r in rows:
        print(f"{r['name']} ({r['cost']})")
        for key in ("title", "requires", "source"):
            label = "" if key == "title" else key + ": "
            print(textwrap.fill(f"{label}{r[key] or '-'}", 80, initial_indent="    ", subsequent_indent="      "))
        options = template_options(TEMPLATES[r["name"]])
        if options:
            print("    options (automodel fit --template-option NAME.OPTION=VALUE):")
            for option in options.values():
                print(textwrap.fill(option.line(), 80, initial_indent="      ", subsequent_indent="        "))
    print("\ncost classes:")
    for name, meaning in COSTS.items():
        print(textwrap.fill(f"{name}: {meaning}", 80, initial_indent="    ", subsequent_indent="      "))
    print("'automodel fit --templates NAME,...' runs the named ones ('all': every one).")
    return 0
