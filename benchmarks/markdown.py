"""What the written results are made of: Markdown tables, and the revision of the code they measured."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the benchmarks' own outputs: a change to them does not make the measured code "uncommitted"
OUTPUTS = ("RESULTS.md", "results.json", "known_formulas_cases.json", "plots")


def revision(root: Path = Path(__file__).resolve().parents[1]) -> str | None:
    """``git`` commit of the code that ran, and the files that differed from it (outputs excepted)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30,
                              check=True).stdout
    try:
        commit = git("rev-parse", "--short", "HEAD").strip()
        dirty = git("status", "--porcelain", "--", "automodel", "benchmarks",
                    *(f":!benchmarks/{out}" for out in OUTPUTS)).splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    if not dirty:
        return commit
    names = sorted(line[3:] for line in dirty)
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return f"{commit} with uncommitted changes to {shown}"


def number_text(value: Any) -> str:
    """A cell's text: a float to 4 significant digits, anything else as ``str``."""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (``|`` in cells escaped)."""
    def cell(v: Any) -> str:
        return number_text(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
