"""Read Extra-P's text input format into a tidy table: one row per repetition of one kernel at one point.

The format (Extra-P 4, ``extrap/fileio/file_reader/text_file_reader.py``; its documentation calls it
"text input")::

    # a comment
    PARAMETER p [n ...]        parameter names; several PARAMETER lines add up
    POINTS 2 4 8 16            one parameter: numbers (or "( 2 ) ( 4 )")
    POINTS ( 2 10 ) ( 4 10 )   several parameters: one parenthesised tuple per point
    METRIC time                the metric of the DATA that follow (default: none)
    REGION main->solve         a call path; its DATA lines follow
    DATA 1.2 1.3 1.1           one line per point, in POINTS order, repetitions on the line

A kernel is one (call path, metric) pair; METRIC and REGION lines both start a new one. The reader is
stricter than Extra-P: every kernel needs exactly one DATA line per point, a (call path, metric) pair
appears once, points are distinct, and every value is a finite number; anything else is a one-line
:class:`~automodel.errors.DataError` naming the file, the line and what was expected.

Examples
--------
>>> frame = read_extrap_text("profile.txt")            # doctest: +SKIP
>>> frame.attrs["params"]                              # doctest: +SKIP
['p']
>>> frame.columns.tolist()                             # doctest: +SKIP
['kernel', 'callpath', 'metric', 'p', 'time']
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.data.cells import shown
from automodel.data.numerals import number_text
from automodel.data.readers import KEYWORDS, starts_with_keyword
from automodel.data.tidy import check_params, kernel_name, tidy
from automodel.errors import DataError
from automodel.files import read_text

__all__ = ["read_extrap_text", "is_extrap_text", "starts_with_keyword", "kernel_name", "KEYWORDS"]

_TUPLE = re.compile(r"\(([^()]*)\)")


def is_extrap_text(path: str | Path) -> bool:
    """Whether the file ``path`` is Extra-P text input (:func:`starts_with_keyword`); False when it
    cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return starts_with_keyword(fh)
    except OSError:
        return False


class _Reader:
    """Parser state; ``fail`` raises the one-line error of the current line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.line_no = 0
        self.params: list[str] = []
        self.points: list[tuple[float, ...]] = []
        self.point_line: dict[tuple[float, ...], int] = {}
        self.metric = ""
        self.callpath: str | None = None
        self.kernels: dict[tuple[str, str], list] = {}  # (callpath, metric) -> [first line, values per point]
        self.current: list | None = None

    def fail(self, message: str, line: int | None = None) -> DataError:
        return DataError(f"{self.source}, line {line or self.line_no}: {message}")

    def numbers(self, text: str, what: str) -> list[float]:
        out = []
        for word in text.split():
            v = number_text(word)  # ASCII digits: float() read Arabic-Indic '١' as 1 and '1_0' as 10
            if not np.isfinite(v):
                raise self.fail(f"expected {what}, got {shown(word)}")
            out.append(v)
        return out

    def parameter(self, value: str) -> None:
        if self.points:
            raise self.fail("PARAMETER after POINTS; name every parameter before the first POINTS line")
        if not value.split():
            raise self.fail("PARAMETER needs at least one name")
        self.params = check_params(self.params + value.split(), f"{self.source}, line {self.line_no}")

    def point_values(self, value: str) -> None:
        d = len(self.params)
        if not d:
            raise self.fail("POINTS before PARAMETER; name the parameters first")
        if self.kernels:
            raise self.fail("POINTS after DATA; give every point before the first REGION")
        if "(" in value or ")" in value:
            groups = _TUPLE.findall(value)
            if _TUPLE.sub(" ", value).strip():
                raise self.fail(f"expected points as ( x{' y' if d > 1 else ''} ... ) tuples, got {shown(value)}")
            coords = [tuple(self.numbers(g, "a number")) for g in groups]
        elif d == 1:
            coords = [(v,) for v in self.numbers(value, "a number")]
        else:
            raise self.fail(f"expected one ( ... ) tuple of {d} numbers per point for parameters "
                            f"{', '.join(self.params)}, got {shown(value)}")
        if not coords:
            raise self.fail("POINTS needs at least one point")
        for c in coords:
            if len(c) != d:
                raise self.fail(f"expected {d} coordinate(s) per point ({', '.join(self.params)}), got {c}")
            if c in self.point_line:
                raise self.fail(f"point {c} is given twice (first on line {self.point_line[c]})")
            self.point_line[c] = self.line_no
            self.points.append(c)

    def start(self) -> None:
        self.current = None  # METRIC or REGION: the next DATA line opens a new kernel

    def data(self, value: str) -> None:
        if not self.points:
            raise self.fail("DATA before POINTS; give the parameters and points first")
        if self.callpath is None:
            raise self.fail("DATA before any REGION; name the call path first")
        values = self.numbers(value, "a finite number")
        if not values:
            raise self.fail("DATA needs at least one value")
        if self.current is None:
            key = (self.callpath, self.metric)
            if key in self.kernels:
                raise self.fail(f"region {shown(key[0])}{self._metric_text()} is given again (first on line "
                                f"{self.kernels[key][0]})")
            self.current = self.kernels[key] = [self.line_no, []]
        rows = self.current[1]
        if len(rows) == len(self.points):
            raise self.fail(f"more DATA lines than the {len(self.points)} POINTS for region "
                            f"{shown(self.callpath)}{self._metric_text()}")
        rows.append((self.line_no, values))

    def _metric_text(self) -> str:
        return f", metric {shown(self.metric)}" if self.metric else ""

    def line(self, text: str) -> None:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            return
        keyword, *rest = stripped.split(None, 1)
        value = " ".join(rest[0].split()) if rest else ""  # runs of blanks count as one, as in Extra-P
        if keyword == "DATA":
            self.data(value)
        elif keyword == "REGION":
            if not value:
                raise self.fail("REGION needs a call path name")
            self.callpath = value
            self.start()
        elif keyword == "METRIC":
            if not value:
                raise self.fail("METRIC needs a name")
            self.metric = value
            self.start()
        elif keyword == "POINTS":
            self.point_values(value)
        elif keyword == "PARAMETER":
            self.parameter(value)
        else:
            raise self.fail(f"unknown keyword {shown(keyword)}; expected one of {', '.join(KEYWORDS)} "
                            "or a # comment")

    def frame(self) -> pd.DataFrame:
        if not self.params:
            raise self.fail("no PARAMETER line; expected Extra-P text input", 1)
        if not self.points:
            raise self.fail("no POINTS line", 1)
        if not self.kernels:
            raise self.fail("no DATA lines; expected REGION and DATA lines after the POINTS", 1)
        kernel, point_idx, values, lines = [], [], [], []
        for k, ((callpath, metric), (first, rows)) in enumerate(self.kernels.items()):
            if len(rows) != len(self.points):
                raise self.fail(f"region {shown(callpath)}{', metric ' + shown(metric) if metric else ''} has "
                                f"{len(rows)} DATA line(s) for {len(self.points)} POINTS", first)
            for i, (line, reps) in enumerate(rows):
                kernel.extend([k] * len(reps))
                point_idx.extend([i] * len(reps))
                values.extend(reps)
                lines.extend([line] * len(reps))
        coords = np.asarray(self.points, float)[np.asarray(point_idx, dtype=np.intp)]
        return tidy(self.source, self.params, list(self.kernels), np.asarray(kernel), coords,
                    np.asarray(values, float), np.asarray(lines, np.int64))


def read_extrap_text(path: str | Path) -> pd.DataFrame:
    """Read an Extra-P text input file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    DataFrame
        One row per repetition: ``kernel`` (call path and metric, see :func:`kernel_name`), ``callpath``,
        ``metric``, one column per parameter (in the file's order) and ``time`` (the measured value of
        the metric, whatever its unit). ``frame.attrs["params"]`` lists the parameter columns,
        ``frame.attrs["source"]`` the file and ``frame.attrs["lines"]`` the DATA line of every row (for
        messages).

    Raises
    ------
    DataError
        A missing, unreadable or malformed file, with the line and what was expected.
    """
    src = str(path)
    text = read_text(path, "an Extra-P text file", DataError)
    reader = _Reader(src)
    for reader.line_no, line in enumerate(text.splitlines(), start=1):
        reader.line(line)
    return reader.frame()
