"""Measurements in any supported format through one entry: :func:`read` detects the format and reads it.

The formats are the registry :data:`~automodel.data.readers.formats.FORMATS`, one line each (name, what it
is, its reader): CSV, TSV and Parquet tables, Extra-P text, JSON, JSON Lines, Talpas, saved experiments
and folders of CUBE profiles.
Tables keep their columns; every Extra-P format gives the tidy frame of :mod:`automodel.data.tidy`
(``kernel, callpath, metric, <params...>, time``; one row per repetition).

Examples
--------
>>> frame = read("profile.jsonl")                       # doctest: +SKIP
>>> frame.attrs["params"], frame["kernel"].nunique()    # doctest: +SKIP
(['x', 'y'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from automodel.data.readers.formats import FORMATS
from automodel.errors import DataError
from automodel.files import TEXT_ENCODING, read_bounded, read_bytes

if TYPE_CHECKING:  # pragma: no cover  (pandas and the readers are imported by read, not by the registry)
    import pandas as pd

__all__ = ["read", "detect", "starts_with_keyword", "FORMATS", "KEYWORDS"]

#: the path that means standard input
STDIN = "-"
#: bytes of a file that detection looks at
HEAD = 1 << 16
#: the keywords of Extra-P's text input (:mod:`automodel.data.readers.extrap_text`)
KEYWORDS = ("PARAMETER", "POINTS", "METRIC", "REGION", "DATA")


def starts_with_keyword(lines: Iterable[str]) -> bool:
    """Whether the first of ``lines`` that is not blank or a ``#`` comment starts with an Extra-P keyword."""
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            return line.split(None, 1)[0] in KEYWORDS
    return False


def detect(path: str | Path) -> str:
    """The format of ``path`` (a key of :data:`FORMATS`), from its content.

    A folder is a CUBE set; leading bytes a format registers (:attr:`InputFormat.magic`: a ZIP archive
    is a saved experiment, ``PAR1`` a Parquet file) settle it; else a name ending a format registers
    (:attr:`InputFormat.suffixes`: ``.extra-p``, ``.parquet``, ``.jsonl``) settles it. Text whose first
    non-blank character is ``{`` or ``[`` is JSON Lines or Talpas when its first line is one record of
    theirs, else a JSON document, as is any other text of a ``.json`` file; text whose first line
    (comments aside) starts with an Extra-P keyword
    is Extra-P text; anything else is a table, tab-separated when its header has tabs and no commas,
    else comma-separated.

    Raises
    ------
    DataError
        The file does not exist or cannot be read.
    """
    path = Path(path)
    if path.is_dir():
        return "cube"
    head = read_bytes(path, "a file of measurements", DataError, limit=HEAD)
    suffix = path.suffix.lower()
    for fmt in FORMATS.values():
        if any(head.startswith(magic) for magic in fmt.magic):
            return fmt.name
    for fmt in FORMATS.values():
        if suffix in fmt.suffixes:
            return fmt.name
    lines = head.decode(TEXT_ENCODING, errors="replace").splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first[:1] in ("{", "["):
        from automodel.data.readers.json_lines import looks_like  # pandas: only for JSON

        return looks_like(first) or "json"
    if suffix == ".json":  # a JSON document that is not an object ("hello", 3): the JSON reader says so
        return "json"
    if starts_with_keyword(lines):
        return "text"
    return "tsv" if "\t" in first and "," not in first else "csv"


def read(path: str | Path, format: str | None = None) -> pd.DataFrame:  # noqa: A002  (the CLI's --format)
    """Read measurements in any supported format.

    Parameters
    ----------
    path : str or Path
        A file, a folder of CUBE profiles, or ``-`` for standard input (any format but CUBE).
    format : str, optional
        One of :data:`FORMATS`; None detects it (:func:`detect`).

    Returns
    -------
    DataFrame
        A table of runs (CSV, TSV, Parquet: the columns as they are), or the tidy frame of an Extra-P
        format (:mod:`automodel.data.tidy`). ``attrs`` hold ``source`` (the file), ``format``, where each
        row is (``lines`` or ``first_row``, for messages), and for a tidy frame ``params`` and ``notes``.

    Raises
    ------
    DataError
        An unknown format, a missing or unreadable file, or a malformed one: one line naming the file,
        the line or record, and what was expected.
    """
    if str(path) == STDIN:
        return _read_stdin(format)
    name = detect(path) if format is None else format
    fmt = FORMATS.get(name)
    if fmt is None:
        raise DataError(f"format {name!r} is not known; expected one of {', '.join(FORMATS)}")
    frame = fmt.reader(Path(path))
    frame.attrs["format"] = name
    return frame


def _read_stdin(format: str | None) -> pd.DataFrame:  # noqa: A002
    """Standard input, read whole into a temporary file and then as any file; messages name
    ``<stdin>``."""
    import sys
    import tempfile

    data = read_bounded(sys.stdin.buffer, "<stdin>", "standard input", DataError)
    with tempfile.TemporaryDirectory(prefix="automodel-stdin-") as folder:
        tmp = Path(folder) / "stdin"
        tmp.write_bytes(data)
        try:
            frame = read(tmp, format)
        except DataError as exc:
            raise DataError(str(exc).replace(str(tmp), "<stdin>")) from None
    frame.attrs["source"] = "<stdin>"
    return frame
