"""Cells in: read a CSV file and turn one column into checked floats, with one-line errors.

Every reader of measurements (runs, kernels, machine-load samples, model inputs) goes through these two
functions, so an error always names the file, the row as a person counts it, the column and what was
expected.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from automodel.errors import DataError, where
from automodel.files import check_input

__all__ = ["read_csv", "numeric", "RULES"]

#: what each role must hold: (predicate, description used in error messages)
RULES = {
    "time": (lambda v: v > 0, "a positive time in seconds"),
    "n": (lambda v: v > 0, "a positive problem size"),
    "p": (lambda v: v > 0, "a positive process count"),
    "cpu": (lambda v: (v > 0) & (v <= 1), "a free-CPU fraction in (0, 1]"),
    "bw": (lambda v: (v > 0) & (v <= 1), "a free-bandwidth fraction in (0, 1]"),
}


def read_csv(path: Path) -> pd.DataFrame:
    """Read a CSV file of runs; a missing, empty or unreadable file is a one-line :class:`DataError`."""
    src = str(path)
    check_input(path, "a CSV file", DataError)
    try:
        frame = pd.read_csv(path, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"{src}: the file is empty, expected a CSV header and one row per run") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{src}: not a readable CSV file ({msg})") from None
    if frame.empty:
        raise DataError(f"{src}: the file has a header but no rows, expected one row per run")
    return frame


def numeric(frame: pd.DataFrame, column: str, role: str, source: str, row_offset: int) -> np.ndarray:
    """The column as floats; the first non-numeric, missing or non-finite cell is an error."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        cell = raw.iloc[i]
        got = "an empty cell" if pd.isna(cell) else repr(cell)
        what = RULES[role][1] if role in RULES else "a finite number"
        raise DataError(f"{where(source, i + row_offset, column)}: expected {what}, got {got}")
    if role in RULES:
        ok, what = RULES[role]
        bad = ~ok(values)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataError(f"{where(source, i + row_offset, column)}: expected {what}, got {values[i]:g}")
    return values
