"""Every code block of the README and of docs/*.md runs as written, and the outputs they show are true.

Each page runs in a fresh folder (with the checkout's ``examples/``), its ``bash`` and ``python`` blocks in order (a block may use the
files an earlier one wrote), with ``automodel`` and ``python3`` on the PATH running this checkout (or,
with ``AUTOMODEL_README_PYTHON`` set to an interpreter, that interpreter's installed automodel: CI
points it at a fresh virtual environment holding only the built wheel and its dependencies). Each
``automodel`` and ``python3`` command is a process of its own, forked from one warm interpreter of that
Python that has imported the third-party libraries (numpy, pandas, scipy, sympy, matplotlib:
tests/warm_python.py), so a command starts without a second of imports; automodel itself is imported by
each command, as a new interpreter would. A
``text`` block shows output: each of its lines must appear in the output of the code block before it.
A block may be skipped only with a reason, in a comment right above it:
``<!-- readme-test: skip (installs the package) -->``. Blocks without a language are pictures (the
layout tree), never commands.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from warm_python import Warm

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!-- readme-test: skip \((?P<why>[^)]+)\) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$",
                   re.S | re.M)


def blocks(page: Path) -> list[tuple[str, str, str | None, int]]:
    """``(language, body, reason to skip or None, line)`` of every fenced block of ``page``."""
    text = page.read_text()
    return [(m["lang"], m["body"], m["why"], text.count("\n", 0, m.start("body"))) for m in BLOCK.finditer(text)]


#: the interpreter the blocks run with: this one on the checkout, or an installed wheel's
PYTHON = os.environ.get("AUTOMODEL_README_PYTHON") or sys.executable


#: what the warm interpreter imports before it forks a command: the third-party libraries the commands use
PRELOAD = ("numpy", "pandas", "scipy.linalg", "scipy.optimize", "scipy.sparse", "scipy.spatial", "scipy.special",
           "sympy", "matplotlib", "matplotlib.pyplot", "tqdm", "charset_normalizer")


def _env() -> dict[str, str]:
    env = {**os.environ, "MPLBACKEND": "Agg", "COLUMNS": "80"}
    if PYTHON == sys.executable:
        env["PYTHONPATH"] = str(ROOT)
    else:  # the installed wheel, not this checkout
        env.pop("PYTHONPATH", None)
    return env


@pytest.fixture(scope="module")
def warm():
    """A warm :data:`PYTHON` (tests/warm_python.py) that forks every command of the pages."""
    server = Warm(PYTHON, PRELOAD, _env())
    yield server
    server.stop()


def _bin(folder: Path, warm: Warm) -> Path:
    """A folder with ``automodel`` and ``python3`` that run :data:`PYTHON` (on this checkout, unless
    ``AUTOMODEL_README_PYTHON`` names another interpreter), each command forked by the warm interpreter."""
    folder.mkdir()
    for name, command in (("automodel", f'exec {shlex.join(warm.command("automodel"))} "$@"'),
                          ("python3", f'exec {shlex.join(warm.command("python"))} "$@"')):
        path = folder / name
        path.write_text(f"#!/bin/sh\n{command}\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


def test_every_page_has_blocks_and_every_skip_a_reason():
    found = {page.name: blocks(page) for page in PAGES}
    assert len([b for b in found["README.md"] if b[0] in ("bash", "python") and b[2] is None]) >= 6
    for page, items in found.items():
        for lang, body, why, line in items:
            assert lang in ("bash", "python", "text", ""), f"{page}:{line}: block of {lang!r}"
            if lang == "":  # a picture, not a command
                assert not re.match(r"\s*(automodel|python3?|pip) ", body), f"{page}:{line}: a command without a language"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_code_blocks_run_as_written(page, tmp_path, warm):
    env = {**_env(), "PATH": f"{_bin(tmp_path / '.bin', warm)}{os.pathsep}{os.environ['PATH']}"}
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")  # the blocks run from a checkout: its examples/ is there
    output = None
    for lang, body, why, line in blocks(page):
        if why is not None or lang == "":
            output = None
            continue
        if lang == "text":
            if output is None:
                continue  # output of a skipped block
            lines = [ln.rstrip() for ln in output.splitlines()]
            for shown in filter(None, (ln.rstrip() for ln in body.splitlines())):
                assert shown in lines, f"{page.name}:{line}: shown {shown!r}, not printed:\n{output}"
            continue
        python3 = str(tmp_path / ".bin" / "python3")
        command = ["bash", "-e", "-o", "pipefail", "-c", body] if lang == "bash" else [python3, "-c", body]
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{page.name}:{line}: exit {done.returncode}:\n{body}\n{output}"
