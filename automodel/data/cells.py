"""Cells in: read a CSV (or TSV) file and turn one column into checked floats, with one-line errors.

Every reader of measurements (runs, kernels, machine-load samples, model inputs) goes through these two
functions, so an error always names the file, the row as a person counts it, the column and what was
expected.
"""

from __future__ import annotations

import csv
import math
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from automodel.errors import DataError, where
from automodel.data.numerals import as_float, number_text
from automodel.files import TEXT_ENCODING, check_input
from automodel.names import shortened

if TYPE_CHECKING:  # pandas (0.3 s) is imported by the readers and checks of its frames only
    import pandas as pd

__all__ = ["finite_number", "ranges_problem", "read_csv", "numeric", "records", "check_table", "missing", "empty_file",
           "check_header_line", "located", "place", "rows_of", "FIRST_RECORD", "record_attrs", "violation", "magnitude_note", "floats", "RULES", "MAGNITUDE", "shown"]

#: the magnitudes of numbers the engine fits: every cell is 0 (where its role allows it) or of an
#: absolute value in this range. It keeps weights ``1 / time^2`` and the products and norms of the
#: design finite (:func:`automodel.solve.design.design` scales what terms of these numbers produce).
MAGNITUDE = (1e-100, 1e100)
#: columns a table of runs may have, and bytes its header line may take
MAX_COLUMNS = 10_000
MAX_HEADER_BYTES = 1 << 20
#: the number a message gives the first of rows that have no header line before them (JSON objects of
#: a request, records of a Parquet file): 1, as a person counts them; a CSV file's first data row is
#: its line 2, after the header
FIRST_RECORD = 1

#: what each role must hold wherever it is read (measurements, points to predict at): (predicate,
#: description used in error messages); measured runs also have whole process counts (:data:`MEASURED`)
RULES = {
    "time": (lambda v: v > 0, "a positive time"),
    "n": (lambda v: v > 0, "a positive problem size"),
    "p": (lambda v: v > 0, "a positive process count"),
    "cpu": (lambda v: (v > 0) & (v <= 1), "a free-CPU fraction in (0, 1]"),
    "bw": (lambda v: (v > 0) & (v <= 1), "a free-bandwidth fraction in (0, 1]"),
}


#: what a role must hold in measured runs besides :data:`RULES`
MEASURED = {"p": (lambda v: (v >= 1) & (v == np.floor(v)), "a process count (an integer >= 1)")}


def read_csv(path: Path, sep: str = ",") -> pd.DataFrame:
    """Read a CSV file of runs (a TSV file with ``sep="\\t"``); a missing, empty or unreadable file is a
    one-line :class:`DataError`."""
    import pandas as pd

    src, kind = str(path), "TSV" if sep == "\t" else "CSV"
    check_input(path, f"a {kind} file", DataError)
    check_header_line(path, sep, src)
    try:
        # index_col=False: a row with more cells than the header never makes the first column an index
        # (records refuses it first); low_memory=False: one dtype per column, no DtypeWarning
        with warnings.catch_warnings():  # extra cells: records refuses them or they are trailing separators
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, skipinitialspace=True, keep_default_na=False, na_values=[""],
                                index_col=False, low_memory=False)
    except pd.errors.EmptyDataError:
        raise DataError(empty_file(src, kind)) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        if isinstance(exc, pd.errors.ParserError):
            records(path, sep, src, kind)  # a row wider than the header: its own message, naming the row
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{src}: not a readable {kind} file ({msg})") from None
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, skipinitialspace=True).iloc[0]
    check_table(src, sep, [str(c) for c in frame.columns], len(frame),
                [None if pd.isna(c) else str(c) for c in header])
    lines = [line for line, _ in records(path, sep, src, kind)[1]]
    if len(lines) == len(frame) and (len(lines) == 0 or lines[-1] != len(lines) + 1):
        frame.attrs["lines"] = lines  # blank lines or quoted line breaks: each row's own line for messages
    return frame


def empty_file(src: str, kind: str) -> str:
    """The message for a file without a header."""
    return f"{src}: the file is empty, expected a {kind} header and one row per run"


def check_table(src: str, sep: str, columns: list[str], n_rows: int, header: list[str | None]) -> None:
    """Refuse a table of runs read from ``src`` with no rows, of one column whose name holds another
    separator than ``sep``, or whose ``header`` (the names as written; None for an empty one) names a
    column twice: one :class:`DataError` for every reader of CSV files."""
    if n_rows == 0:
        raise DataError(f"{src}: the file has a header but no rows, expected one row per run")
    if len(columns) == 1:
        other = next((s for s in (";", "\t", "|", ",") if s != sep and s in columns[0]), None)
        if other is not None:
            kind = "tab" if sep == chr(9) else "comma"
            raise DataError(f"{src}, row 1: one column {shown(columns[0])}; automodel reads {kind}-separated "
                            f"values and this file seems to use {other!r}: save it {kind}-separated, decimals "
                            "with a point (1.5)" + ("" if kind == "tab" else ", or tab-separated as a .tsv file"))
    empty = [i + 1 for i, name in enumerate(header) if name is None]
    if len(empty) > 1:  # one empty name is a column pandas names itself; two cannot be told apart
        raise DataError(f"{src}, row 1: columns {', '.join(map(str, empty))} have no name in the header, expected "
                        "distinct column names")
    seen: set[str | None] = set()
    for name in header:
        if name in seen:
            raise DataError(f"{where(src, 1, str(name))}: the header names this column twice, expected distinct "
                            "column names")
        seen.add(name)


def check_header_line(path: Path, sep: str, src: str) -> None:
    """Refuse, before pandas reads the file, a header line longer than :data:`MAX_HEADER_BYTES` or of
    more than :data:`MAX_COLUMNS` columns (a file of one long line would become a table of millions of
    columns); blank lines before it are skipped, as pandas does."""
    try:
        with open(path, "rb") as handle:
            line, number = b"", 0
            while not line.strip():
                line, number = handle.readline(MAX_HEADER_BYTES + 1), number + 1
                if not line:
                    return  # empty: pandas says so
    except OSError:
        return  # pandas says what is wrong
    if len(line) > MAX_HEADER_BYTES:
        raise DataError(f"{src}, row {number}: the header line is longer than {MAX_HEADER_BYTES:,} bytes; expected "
                        f"at most {MAX_COLUMNS:,} column names")
    try:
        width = len(next(csv.reader([line.decode("utf-8", errors="replace")], delimiter=sep), []))
    except csv.Error:  # a stray carriage return: count the separators (an upper bound)
        width = line.count(sep.encode()) + 1
    if width > MAX_COLUMNS:
        raise DataError(f"{src}, row {number}: the header names {width:,} columns; expected at most {MAX_COLUMNS:,}")


def records(path: Path, sep: str, src: str, kind: str, keep: bool = False
            ) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The header of the file (None when it has none) and, for each data row, the line on which it starts
    (blank lines skipped, as pandas does) with its cells when ``keep`` (else an empty list), after
    checking that no row has more cells than the header names, except empty ones (trailing separators).

    A row with one cell more than the header is a header that lacks a name (pandas would make the first
    column the index and shift every value) or a separator inside a number (``1,000``); both are a
    one-line :class:`DataError` naming the row.
    """
    separated = "tab" if sep == "\t" else "comma"
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    end = 0
    try:
        with open(path, newline="", encoding=TEXT_ENCODING) as handle:
            reader = csv.reader(handle, delimiter=sep, skipinitialspace=True)
            for row in reader:
                start, end = end + 1, reader.line_num
                if row and row[-1].endswith(("\n", "\r")) and _unclosed(path, sep):
                    raise DataError(f"{src}, row {start}: a quote opened in this row is never closed, so every "
                                    f"line after it would be one cell; expected a quoted cell to end with a quote")
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if header is None:
                    header = row
                    continue
                if len(row) > len(header) and any(cell.strip() for cell in row[len(header):]):
                    raise DataError(
                        f"{src}, row {start}: {len(row)} cells, but the header names {len(header)} columns; "
                        f"expected a name in the header for every column, and no {separated} inside a value "
                        f"(write 1000, not 1,000, or quote the cell)")
                rows.append((start, row if keep else []))
    except csv.Error as exc:  # a cell beyond the csv module's limit: the row it starts on
        raise DataError(f"{src}, row {end + 1}: not a readable {kind} file ({str(exc).splitlines()[0][:120]})"
                        ) from None
    except (UnicodeDecodeError, OSError) as exc:
        raise DataError(f"{src}: not a readable {kind} file ({str(exc).splitlines()[0][:120]})") from None
    return header, rows


def _unclosed(path: Path, sep: str) -> bool:
    """Whether the file ends inside a quoted cell (the csv module, not strict, reads the rest of the file
    as that cell: predict's reader took the rows before it and dropped the others without a word)."""
    try:
        with open(path, newline="", encoding=TEXT_ENCODING) as handle:
            for _ in csv.reader(handle, delimiter=sep, skipinitialspace=True, strict=True):
                pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def shown(cell: object) -> str:
    """A cell as an error message quotes it: its repr, cut to :data:`~automodel.names.SHOWN_CHARACTERS`
    characters (:func:`automodel.names.shortened`); numbers as plain numbers (``inf``, not
    ``np.float64(inf)``)."""
    if isinstance(cell, (float, np.floating)) or (isinstance(cell, (int, np.integer)) and not isinstance(cell, bool)
                                                   and abs(cell) < 10 ** 20):
        return f"{float(cell):g}"
    text = repr(bool(cell)) if isinstance(cell, np.bool_) else repr(cell)
    return shortened(text)


def floats(raw: Any) -> np.ndarray:
    """The cells (a pandas Series, an array, or a list of a table read without pandas) as floats, NaN where
    a cell is not a number, inf where it is beyond the range of floats. A boolean is no number (``true``
    in a JSON row, a column of ``True`` in a CSV file was read as 1)."""
    dtype = getattr(raw, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return np.full(len(raw), math.nan)
    if isinstance(dtype, np.dtype) and dtype.kind in "fiu":  # numbers already (what to_numeric returns)
        return np.asarray(raw, float)
    if dtype is None or not hasattr(raw, "iloc"):  # cells of automodel.data.rows: numbers, text, NaN for an empty cell
        return np.array([math.nan if isinstance(c, (bool, np.bool_)) else as_float(c) if not isinstance(c, str) else
                         number_text(c) for c in raw], float)
    import pandas as pd

    try:
        return pd.to_numeric(raw, errors="coerce").to_numpy(float)
    except OverflowError:  # a Python integer too large for a float
        return np.array([as_float(cell) for cell in raw], float)


def missing(cell: object) -> bool:
    """Whether ``cell`` is an empty cell: None, NaN, or one of pandas' missing values."""
    if cell is None or (isinstance(cell, (float, np.floating)) and math.isnan(cell)):
        return True
    pd = sys.modules.get("pandas")  # only a pandas frame holds its other missing values
    return bool(pd is not None and pd.api.types.is_scalar(cell) and pd.isna(cell))


def _beyond_floats(cell: object) -> bool:
    """Whether ``cell`` is a number too large for a float: ``10**400``, ``'1e999'`` (not ``inf`` itself)."""
    return math.isinf(as_float(cell)) and "inf" not in str(cell).lower()


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a number of a JSON document (not a boolean) that is a finite float (not a
    400-digit integer)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(as_float(value))


def ranges_problem(ranges: Any, params: Sequence[str]) -> str | None:
    """Why ``ranges`` cannot be the measured ranges of a model file's parameters ``params`` (None when
    they can): an object mapping parameters to ``[min, max]``, two finite numbers with min <= max that a
    parameter of that role can measure (:data:`RULES`, :data:`MEASURED`: ``p`` from 1 up, ``n`` above 0),
    each 0 or of a magnitude in :data:`MAGNITUDE` (:func:`violation`).

    Examples
    --------
    >>> ranges_problem({"p": [1, 0]}, ["p"])
    "'p': expected [min, max] with min <= max, got [1, 0]"
    >>> ranges_problem({"n": [0, 0]}, ["n"])
    "'n': expected a positive problem size at both ends, got [0, 0]"
    """
    if not isinstance(ranges, dict):
        return "expected an object mapping parameter names to [min, max]"
    for name, bounds in ranges.items():
        if name not in params:
            return f"{shown(name)} is not a parameter of the model"
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(finite_number(x) for x in bounds)):
            return f"{name!r}: expected [min, max], two finite numbers"
        low, high = (float(x) for x in bounds)
        if low > high:
            return f"{name!r}: expected [min, max] with min <= max, got [{low:g}, {high:g}]"
        found = violation(np.array([low, high]), name, measured=True)
        if found is not None:
            what = found[1] + (magnitude_note(name) if found[2] else "")
            return f"{name!r}: expected {what} at both ends, got [{low:g}, {high:g}]"
    return None


def violation(values: np.ndarray, role: str, measured: bool = False) -> tuple[int, str, bool] | None:
    """The first of the finite ``values`` that breaks its role's rule (:data:`RULES`, and
    :data:`MEASURED` when ``measured``) or is neither 0 nor of a magnitude in :data:`MAGNITUDE`: its
    index, what was expected, and whether it was the magnitude; None when every value is fine."""
    for rules in (RULES, MEASURED) if measured else (RULES,):
        if role in rules:
            ok, what = rules[role]
            bad = ~ok(values)
            if bad.any():
                return int(np.argmax(bad)), what, False
    low, high = MAGNITUDE
    size = np.abs(values)
    bad = (size > high) | ((size < low) & (size > 0))
    if bad.any():
        return int(np.argmax(bad)), RULES[role][1] if role in RULES else "a finite number", True
    return None


def magnitude_note(role: str) -> str:
    """What a message adds to a role's expectation (:func:`violation`) when a value is beyond
    :data:`MAGNITUDE`: `` between 1e-100 and 1e+100 (the range automodel fits)``."""
    low, high = MAGNITUDE
    return ((f" between {low:g} and {high:g}" if role in RULES else f" 0 or of magnitude {low:g} to {high:g}")
            + " (the range automodel fits)")


def place(at: object) -> str:
    """Where a row is, as a message says it: ``line 12`` for a line number, else the text given (a JSON
    path such as ``measurements[3]``, a profile such as ``mm.x1.r1/profile.cubex``)."""
    return f"line {int(at)}" if isinstance(at, (int, np.integer)) else str(at)


def rows_of(frame: Any) -> int | np.ndarray:
    """Where the rows of ``frame`` are in its file, for messages: ``frame.attrs["lines"]`` (the line or
    record of every row) when it has one entry per row, else ``frame.attrs["first_row"]`` (the line of
    the first data row of a CSV file, :data:`FIRST_RECORD` of records), else 0 (a DataFrame or a
    mapping of columns built in Python, numbered as pandas numbers its positions). The one rule of
    every message that names a row."""
    attrs = getattr(frame, "attrs", None) or {}
    lines = attrs.get("lines")
    if lines is not None and len(lines) == len(frame):
        return np.asarray(lines)
    return int(attrs.get("first_row", 0))


def record_attrs(source: str) -> dict[str, Any]:
    """The ``attrs`` of a table made of records (the objects of a JSON list named ``source``), so that
    its messages name ``source, row 1`` for the first (:func:`rows_of`)."""
    return {"source": source, "first_row": FIRST_RECORD}


def located(source: str, i: int, column: str | None, rows: int | np.ndarray) -> str:
    """Where row ``i`` is: ``row i + rows`` of a CSV file, or ``rows[i]`` (:func:`place`) of a file whose
    rows come from given lines or records (an Extra-P file); then the ``column`` when given."""
    if isinstance(rows, np.ndarray):
        return f"{source}, {place(rows[i])}" + ("" if column is None else f", column '{column}'")
    return where(source, i + rows, column)


def numeric(frame: pd.DataFrame, column: str, role: str, source: str, row_offset: int | np.ndarray,
            measured: bool = False) -> np.ndarray:
    """The column as floats; the first non-numeric, missing, non-finite or out-of-range cell is an error.

    Every value must be 0 or of a magnitude in :data:`MAGNITUDE`, and satisfy its role's rule
    (:data:`RULES`; and :data:`MEASURED` when ``measured``: the column holds runs). Errors name row ``i + row_offset`` (a CSV file's line: ``row_offset`` 2 after the
    header), or line ``row_offset[i]`` when ``row_offset`` is an array of the rows' lines.
    """
    raw = frame[column]
    if getattr(raw, "ndim", 1) == 2:  # a pandas frame whose header names the column twice
        raise DataError(f"{where(source, column=column)}: {raw.shape[1]} columns have this name, expected one")
    values = floats(raw)
    what = RULES[role][1] if role in RULES else "a finite number"
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        cell = raw.iloc[i] if hasattr(raw, "iloc") else raw[i]
        got = "an empty cell" if missing(cell) else shown(cell)
        if _beyond_floats(cell):
            what += f" between {MAGNITUDE[0]:g} and {MAGNITUDE[1]:g} (the range automodel fits)"
        elif role == column and role not in RULES and isinstance(cell, str) and column.isidentifier():
            # a factor named as a parameter (--param hostname): what a parameter of text is is a selection
            got += f"; a parameter is a number: model one value with --where \"{column} == {cell.strip()!r}\""
        raise DataError(f"{located(source, i, column, row_offset)}: expected {what}, got {got}")
    found = violation(values, role, measured)
    if found is not None:
        i, what, magnitude = found
        what += magnitude_note(role) if magnitude else ""
        raise DataError(f"{located(source, i, column, row_offset)}: expected {what}, got {values[i]:g}")
    return values
