"""Measurements in any supported format through one entry: :func:`read` detects the format and reads it.

=============  =========================================================================================
format         what it is (reader)
=============  =========================================================================================
``csv``        a table of runs, comma-separated (:mod:`~automodel.data.readers.tables`)
``tsv``        the same, tab-separated
``parquet``    the same as Parquet (needs pyarrow: ``pip install 'automodel-hpc[parquet]'``)
``text``       Extra-P text input (:mod:`automodel.data.readers.extrap_text`)
``json``       Extra-P JSON, new or old form (:mod:`~automodel.data.readers.extrap_json`)
``jsonl``      Extra-P JSON Lines (:mod:`~automodel.data.readers.json_lines`)
``talpas``     Talpas (:mod:`~automodel.data.readers.json_lines`)
``experiment`` a saved Extra-P experiment, ``.extra-p`` (:mod:`~automodel.data.readers.experiment`)
``cube``       a folder of Score-P CUBE4 profiles (needs pycubexr: ``pip install 'automodel-hpc[cube]'``)
=============  =========================================================================================

Tables keep their columns; every Extra-P format gives the tidy frame of :mod:`automodel.data.tidy`
(``kernel, callpath, metric, <params...>, time``; one row per repetition).

Examples
--------
>>> frame = read("profile.jsonl")                       # doctest: +SKIP
>>> frame.attrs["params"], frame["kernel"].nunique()    # doctest: +SKIP
(['x', 'y'], 1)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from automodel.data.readers.extrap_text import read_extrap_text, starts_with_keyword
from automodel.data.readers.cube import read_cube
from automodel.data.readers.experiment import read_experiment
from automodel.data.readers.extrap_json import read_extrap_json
from automodel.data.readers.json_lines import looks_like, read_json_lines, read_talpas
from automodel.data.readers.tables import read_csv_table, read_parquet_table, read_tsv_table
from automodel.errors import DataError
from automodel.files import read_bounded, read_bytes

__all__ = ["read", "detect", "FORMATS"]

#: format name -> reader
FORMATS: dict[str, Callable[[Path], pd.DataFrame]] = {
    "csv": read_csv_table, "tsv": read_tsv_table, "parquet": read_parquet_table, "text": read_extrap_text,
    "json": read_extrap_json, "jsonl": read_json_lines, "talpas": read_talpas, "experiment": read_experiment,
    "cube": read_cube}
#: the path that means standard input
STDIN = "-"
#: bytes of a file that detection looks at
HEAD = 1 << 16
_MAGIC = {b"PK\x03\x04": "experiment", b"PAR1": "parquet"}
#: name endings that settle the format of a file whose first bytes do not (one that is damaged, or empty)
SUFFIXES = {".extra-p": "experiment", ".parquet": "parquet", ".jsonl": "jsonl"}


def detect(path: str | Path) -> str:
    """The format of ``path`` (a key of :data:`FORMATS`), from its content.

    A folder is a CUBE set; a ZIP archive a saved experiment; ``PAR1`` a Parquet file; else a name
    ending in ``.extra-p``, ``.parquet`` or ``.jsonl`` (:data:`SUFFIXES`) settles it. Text whose first
    non-blank character is ``{`` or ``[`` is JSON Lines or Talpas when its first line is one record of
    theirs, else a JSON document; text whose first line (comments aside) starts with an Extra-P keyword
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
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            return name
    if path.suffix.lower() in SUFFIXES:
        return SUFFIXES[path.suffix.lower()]
    lines = head.decode("utf-8-sig", errors="replace").splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first[:1] in ("{", "["):
        return looks_like(first) or "json"
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
    reader = FORMATS.get(name)
    if reader is None:
        raise DataError(f"format {name!r} is not known; expected one of {', '.join(FORMATS)}")
    frame = reader(Path(path))
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
