"""automodel.data.readers.formats: one registry line per input format, read by read(), detection and
every command's --format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from automodel.data.readers import detect, read
from automodel.data.readers.formats import FORMATS, InputFormat, register


def read_toy(path: Path) -> pd.DataFrame:
    """A toy format: ``n p time`` on each line, separated by ``|``."""
    rows = [line.split("|") for line in path.read_text().split("\n") if line.strip()]
    return pd.DataFrame([[float(v) for v in row] for row in rows], columns=["n", "p", "time"])


@pytest.fixture
def toy_format():
    """A format registered for one test, detected by its name ending ``.toy``."""
    toy = register(InputFormat("toy", "rows of n|p|time (a test's format)", f"{__name__}:read_toy",
                               suffixes=(".toy",)))
    yield toy
    del FORMATS[toy.name]


def test_a_registered_format_is_read_detected_and_offered_by_the_command_line(toy_format, tmp_path, capsys):
    """A new input format is one reader and one register call: read() reads it, detect() knows its name
    ending, and ``fit --format`` offers it (choices and help read from the registry)."""
    from automodel.cli import build_parser, main

    path = tmp_path / "runs.toy"
    path.write_text("".join(f"{n}|{p}|{n * 1e-6 + p * 1e-3}\n" for n in (1e4, 2e4, 4e4, 8e4) for p in (1, 2, 4, 8)))
    assert detect(path) == "toy"
    frame = read(path)
    assert frame.attrs["format"] == "toy" and len(frame) == 16
    parser = build_parser()
    assert parser.parse_args(["fit", "runs.csv", "--format", "toy"]).format == "toy"
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "--help"])
    assert "toy: rows of n|p|time (a test's format)" in " ".join(capsys.readouterr().out.split())
    assert main(["fit", str(path), "--format", "toy"]) == 0
    assert "16 runs, 16 distinct configurations; parameters n, p" in capsys.readouterr().out


def test_register_refuses_a_taken_name_or_a_loader_without_a_function():
    with pytest.raises(ValueError, match="already registered"):
        register(InputFormat("csv", "again", "automodel.data.readers.tables:read_csv_table"))
    with pytest.raises(ValueError, match="module:function"):
        register(InputFormat("bad_loader", "no function", "automodel.data.readers.tables"))
    assert "bad_loader" not in FORMATS


def test_every_loader_names_a_reader():
    for fmt in FORMATS.values():
        assert callable(fmt.reader), fmt.name


def test_the_registry_imports_no_pandas():
    code = ("import sys; import automodel.data.readers.formats as f; import automodel.cli.common; "
            "assert 'pandas' not in sys.modules, 'pandas imported'; print(len(f.FORMATS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "9"
