"""Read Extra-P's line formats, JSON Lines and Talpas: one measurement record per line.

JSON Lines (Extra-P 4, ``extrap/fileio/file_reader/jsonlines_file_reader.py``)::

    {"params": {"x": 4, "y": 10}, "callpath": "main", "metric": "time", "value": 1.5}
    {"params": {"x": 4, "y": 10}, "value": [1.5, 1.6]}

``callpath`` and ``metric`` may be left out (the call path is then ``<root>``, Extra-P's name, and the
kernel is named by it alone), ``value`` is one repetition or a list of them, other fields are ignored
(as Extra-P does) and the points need not form a full grid. Talpas (``talpas_file_reader.py``) writes the
same records with ``parameters`` for ``params`` and ``;`` between the fields (read, as Extra-P does, by
turning every ``;`` into ``,``), and needs ``callpath`` and ``metric``.

Every record names the same parameters as the first; every kernel has values at every point of the file
(Extra-P's rule: its ``talpas_10_neg.txt`` sample, a metric measured at 3 of 5 points, is refused).
Blank lines are skipped; anything else is a one-line :class:`~automodel.errors.DataError` naming the file,
the line and what was expected.

Examples
--------
>>> frame = read_json_lines("input.jsonl")        # doctest: +SKIP
>>> frame.attrs["params"], frame.attrs["lines"][:2]   # doctest: +SKIP
(['x', 'y'], [1, 1])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.data.readers.json_fields import field, kind, numbers, parse
from automodel.data.tidy import ROOT, check_params, every_point, number, tidy
from automodel.errors import DataError
from automodel.files import read_text

__all__ = ["read_json_lines", "read_talpas", "Dialect", "JSON_LINES", "TALPAS"]


@dataclass(frozen=True)
class Dialect:
    """One of the line formats: its name, the field of the parameters, whether call path and metric may
    be left out, and a record as an example for messages."""

    name: str
    params: str
    optional: bool
    semicolons: bool
    example: str

    def text(self, line: str) -> str:
        """The JSON text of one line."""
        return line.replace(";", ",") if self.semicolons else line

    def decode(self, line: str, at: str) -> dict:
        """The record of one line (a JSON object)."""
        record = parse(self.text(line), at, f"one record per line such as {self.example}")
        if not isinstance(record, dict):
            raise DataError(f"{at}: expected a record such as {self.example}, got {kind(record)}")
        return record


JSON_LINES = Dialect("JSON Lines", "params", True, False, '{"params": {"x": 4}, "value": 1.5}')
TALPAS = Dialect("Talpas", "parameters", False, True,
                 '{"parameters": {"x": 4}; "metric": "time"; "callpath": "main"; "value": 1.5}')


def _name(record: dict, key: str, at: str, dialect: Dialect, default: str) -> str:
    """The call path or metric (``key``) of a record; ``default`` when the dialect lets it be left out."""
    what = f"a {key} name (a non-empty string)"
    if dialect.optional and key not in record:
        return default
    value = field(record, key, at, "", str, what)
    if not value:
        raise DataError(f"{at}, {key}: expected {what}, got an empty string")
    return value


def read_records(path: str | Path, dialect: Dialect) -> pd.DataFrame:
    """Read a file of ``dialect`` into a tidy frame (:mod:`automodel.data.tidy`); ``attrs["lines"]``
    holds the line of every row."""
    src = str(path)
    text = read_text(path, f"a {dialect.name} file", DataError)
    params: list[str] | None = None
    first = 0
    kernels: dict[tuple[str, str], int] = {}
    kernel: list[int] = []
    points: list[list[float]] = []
    values: list[float] = []
    lines: list[int] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{src}, line {line_no}"
        record = dialect.decode(line, at)
        where = field(record, dialect.params, at, "", dict,
                      f"the parameters as an object such as {{\"x\": 4}} ({dialect.example})")
        if params is None:
            params, first = check_params(list(where), f"{at}, {dialect.params}"), line_no
        elif set(where) != set(params):
            raise DataError(f"{at}, {dialect.params}: parameters {', '.join(map(str, where)) or 'none'}; "
                            f"expected those of line {first}: {', '.join(params)}")
        point = [number(where[q], f"{at}, {dialect.params}.{q}") for q in params]
        callpath = _name(record, "callpath", at, dialect, ROOT)
        metric = _name(record, "metric", at, dialect, "")
        if "value" not in record:
            raise DataError(f"{at}: no \"value\" field; expected a record such as {dialect.example}")
        reps = numbers(record["value"], f"{at}, value")
        k = kernels.setdefault((callpath, metric), len(kernels))
        kernel += [k] * len(reps)
        points += [point] * len(reps)
        values += reps
        lines += [line_no] * len(reps)
    if params is None:
        raise DataError(f"{src}: no records; expected one {dialect.name} record per line such as "
                        f"{dialect.example}")
    return every_point(tidy(src, params, list(kernels), np.asarray(kernel), np.asarray(points, float),
                            np.asarray(values, float), np.asarray(lines, np.int64)))


def read_json_lines(path: str | Path) -> pd.DataFrame:
    """Read an Extra-P JSON Lines file (see the module docstring)."""
    return read_records(path, JSON_LINES)


def read_talpas(path: str | Path) -> pd.DataFrame:
    """Read a Talpas file (see the module docstring)."""
    return read_records(path, TALPAS)


def looks_like(line: str) -> str | None:
    """Which line format the first non-blank ``line`` of a file is written in: ``"jsonl"`` (a JSON object
    with ``params``), ``"talpas"`` (not JSON as it stands, but an object with ``parameters`` once its
    semicolons are commas) or None (neither: a JSON document, say)."""
    for name, dialect in (("jsonl", JSON_LINES), ("talpas", TALPAS)):
        try:
            record = json.loads(dialect.text(line))
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and dialect.params in record:
            return name
        if not dialect.semicolons:
            return None  # valid JSON as it stands: not Talpas
    return None
