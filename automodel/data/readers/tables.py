"""Read tables of runs through pandas: CSV, TSV and Parquet (one row per run, a header of column names).

These keep the columns as they are (roles are mapped later, by :func:`automodel.data.load` or
:func:`automodel.fit_many`). ``attrs["first_row"]`` is the line of the first data row (2 after a CSV
header; 1 for the first record of a Parquet file), so a message names the row a person would look at.
Parquet needs ``pyarrow``, an optional dependency (``pip install 'automodel-hpc[parquet]'``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from automodel.data.cells import FIRST_RECORD, read_csv
from automodel.errors import DataError, install_hint
from automodel.files import check_input

__all__ = ["read_csv_table", "read_tsv_table", "read_parquet_table", "PARQUET_INSTALL"]

PARQUET_INSTALL = install_hint("parquet")


def _table(frame: pd.DataFrame, source: str, first_row: int) -> pd.DataFrame:
    params = frame.attrs.get("params")  # a tidy frame written to Parquet keeps its parameter list
    lines = frame.attrs.get("lines")  # a CSV file's rows' own lines (it has blank lines)
    frame.attrs = {"source": source, "first_row": first_row, **({"lines": lines} if lines else {})}
    if isinstance(params, list) and params and all(isinstance(q, str) and q in frame.columns for q in params):
        frame.attrs["params"] = params
    return frame


def read_csv_table(path: str | Path) -> pd.DataFrame:
    """Read a comma-separated file (:func:`automodel.data.read_csv`)."""
    return _table(read_csv(Path(path)), str(path), 2)


def read_tsv_table(path: str | Path) -> pd.DataFrame:
    """Read a tab-separated file."""
    return _table(read_csv(Path(path), sep="\t"), str(path), 2)


def read_parquet_table(path: str | Path) -> pd.DataFrame:
    """Read a Parquet file with pyarrow; a missing pyarrow, a damaged file or an empty table is a one-line
    :class:`DataError`."""
    src = str(path)
    check_input(path, "a Parquet file", DataError)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataError(f"{src}: reading Parquet needs pyarrow: {PARQUET_INSTALL}") from None
    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except Exception as exc:  # noqa: BLE001  (pyarrow's errors have no common base but Exception)
        reason = str(exc).strip().splitlines()[0][:100] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{src}: not a readable Parquet file ({reason})") from None
    if frame.empty:
        raise DataError(f"{src}: the table has no rows, expected one row per run")
    return _table(frame.reset_index(drop=True), src, FIRST_RECORD)
