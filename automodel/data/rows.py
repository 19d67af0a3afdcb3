"""Tables without pandas, for what must start fast (``automodel predict MODEL.json DATA.csv``, the service).

:func:`read_rows` reads a CSV (or TSV) file with the standard :mod:`csv` module into :class:`Rows`: the
same checks and one-line messages as :func:`automodel.data.cells.read_csv` (they share
:func:`~automodel.data.cells.records` and :func:`~automodel.data.cells.check_table`), and the cells typed as
pandas types them (a column of whole numbers is ``int64``, of numbers ``float64``, of ``True``/``False``
``bool``, else text with NaN for an empty cell), so :func:`automodel.data.cells.numeric` checks them
with the same rules and messages. :class:`Columns` holds the checked float columns a model reads.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from automodel.data.cells import check_header_line, check_table, empty_file, records
from automodel.data.numerals import NUMBER, WHOLE
from automodel.errors import DataError
from automodel.files import check_input

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Rows", "Columns", "read_rows", "typed", "table_rows"]

#: the cells pandas reads as booleans
BOOLEANS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}
INT64 = 2 ** 63


def typed(cells: Sequence[str | None]) -> np.ndarray | list:
    """A column of text cells (None: empty) typed as pandas' CSV reader types it: ``int64``, ``float64``
    or ``bool`` arrays, else a list of the text with NaN for the empty cells (whole numbers beyond
    ``int64`` as Python integers)."""
    present = [c for c in cells if c is not None]
    if present and len(present) == len(cells) and all(c in BOOLEANS for c in present):
        return np.array([BOOLEANS[c] for c in present], bool)
    if all(WHOLE.fullmatch(c) for c in present) and present:
        whole = [int(c) for c in present]
        if len(present) == len(cells) and all(-INT64 <= v < INT64 for v in whole):
            return np.array(whole, np.int64)
        if len(present) == len(cells):
            return whole
    if all(NUMBER.fullmatch(c) for c in present):
        return np.array([math.nan if c is None else float(c) for c in cells], float)
    return [math.nan if c is None else c for c in cells]


class Rows:
    """A table of typed columns in the order of its header: ``columns``, ``rows[name]`` (an array or a
    list), ``len(rows)``, ``attrs`` (``source``, ``first_row``, and ``lines`` when rows are not on
    consecutive lines), as much of a pandas DataFrame as ``automodel predict`` uses."""

    def __init__(self, data: Mapping[str, Any], n_rows: int, attrs: Mapping[str, Any] | None = None) -> None:
        self.data: dict[str, Any] = dict(data)
        self.n_rows = n_rows
        self.attrs: dict[str, Any] = dict(attrs or {})

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    def __len__(self) -> int:
        return self.n_rows

    def __getitem__(self, column: str) -> Any:
        return self.data[column]

    def __setitem__(self, column: str, values: Any) -> None:
        """Set a column: an array of one value per row, or one value for every row."""
        values = np.asarray(values)
        self.data[column] = np.full(self.n_rows, values) if values.ndim == 0 else values

    def copy(self) -> "Rows":
        return Rows(self.data, self.n_rows, self.attrs)

    def select(self, columns: Iterable[str]) -> "Rows":
        """The ``columns`` only."""
        return Rows({c: self.data[c] for c in columns}, self.n_rows, self.attrs)

    def take(self, positions: Sequence[int]) -> "Rows":
        """The rows at ``positions``, in that order (their lines kept for messages)."""
        at = np.asarray(positions, np.intp)
        data = {c: v[at] if isinstance(v, np.ndarray) else [v[i] for i in at] for c, v in self.data.items()}
        attrs = dict(self.attrs)
        lines = attrs.get("lines")
        attrs["lines"] = ([lines[i] for i in at] if lines is not None and len(lines) == self.n_rows else
                          [int(attrs.get("first_row", 0)) + int(i) for i in at])
        return Rows(data, len(at), attrs)

    def to_frame(self) -> pd.DataFrame:
        """The table as a pandas DataFrame (imports pandas)."""
        import pandas as pd

        frame = pd.DataFrame({c: v if isinstance(v, np.ndarray) else pd.array(v, dtype=object)
                              for c, v in self.data.items()}, index=range(self.n_rows))
        frame.attrs.update(self.attrs)
        return frame


def read_rows(path: str | Path, sep: str = ",") -> Rows:
    """Read a CSV file of runs (a TSV file with ``sep="\\t"``) without pandas: what
    :func:`automodel.data.cells.read_csv` reads, refused with the same one-line :class:`DataError`."""
    src, kind = str(path), "TSV" if sep == "\t" else "CSV"
    path = Path(path)
    check_input(path, f"a {kind} file", DataError)
    check_header_line(path, sep, src)
    header, found = records(path, sep, src, kind, keep=True)
    if header is None:
        raise DataError(empty_file(src, kind))
    names = [name if name else f"Unnamed: {i}" for i, name in enumerate(header)]  # as pandas names them
    check_table(src, sep, names, len(found), [name if name else None for name in header])
    width = len(header)
    cells = [[row[j] if j < len(row) and row[j] != "" else None for _, row in found] for j in range(width)]
    lines = [line for line, _ in found]
    attrs: dict[str, Any] = {"source": src, "first_row": 2}
    if lines and lines[-1] != len(lines) + 1:
        attrs["lines"] = lines  # blank lines or quoted line breaks: each row's own line for messages
    return Rows({name: typed(column) for name, column in zip(names, cells)}, len(found), attrs)


def table_rows(records_: Sequence[Mapping[str, Any]], listed: str = "rows") -> Rows:
    """JSON records (one object a row, as the service receives them, the list ``listed`` of its body) as
    :class:`Rows`: a column of numbers as a float array, any other as a list (None where a record lacks
    the column: NaN); an error names a row as the body does, ``rows[0]`` for the first."""
    names = list(dict.fromkeys(k for r in records_ for k in r))
    data: dict[str, Any] = {}
    for name in names:
        cells = [r.get(name) for r in records_]
        numbers = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cells)
        data[name] = (np.array(cells, float) if numbers and all(abs(c) < 1e300 for c in cells) else
                      [math.nan if c is None else c for c in cells])
    return Rows(data, len(records_), {"lines": [f"{listed}[{i}]" for i in range(len(records_))]})


class Columns(dict):
    """The canonical parameter columns a model reads (name -> float array) and their number of rows
    ``n_rows``: what :meth:`automodel.model.Model.predict` hands a term model; :meth:`frame` gives a
    template the pandas DataFrame it reads."""

    def __init__(self, arrays: Mapping[str, np.ndarray], n_rows: int) -> None:
        super().__init__(arrays)
        self.n_rows = n_rows

    def frame(self) -> pd.DataFrame:
        """The columns as a pandas DataFrame (imports pandas)."""
        import pandas as pd

        return pd.DataFrame(dict(self), index=range(self.n_rows))
