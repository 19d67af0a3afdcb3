"""Read a saved Extra-P experiment (``.extra-p``): a ZIP archive holding ``experiment.json``.

Extra-P 4 (``extrap/fileio/experiment_io.py``) saves the parameter names and, per call path and metric,
one entry per point::

    {"Extra-P": "4.2.0", "parameters": ["x", "y"],
     "measurements": {"main": {"time": [{"coordinate": [20.0, 1.0], "median": 1.0, "mean": 1.0,
                                         "minimum": 0.98, "maximum": 1.01, "std": 0.01,
                                         "repetitions": 5, "values": null}, ...]}},
     "modelers": [...]}

``values`` is null unless the experiment kept the single repetitions; then it is ``[chunk, index]``: the
``index``-th numpy array of ``values/<chunk>.vals`` in the archive, found through the offsets in
``values/<chunk>.indx`` (both files start with a 16-byte magic string; the index holds a count and then
one little-endian 64-bit offset per array). Where the repetitions are kept, each is a row; where they are
not, the point's **median** (which Extra-P stores per point) is its one row, and ``attrs["notes"]``
says so. Extra-P's fitted models (``modelers``) are not read.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.data.readers.extrap_json import nested
from automodel.data.readers.json_fields import child, field, parse
from automodel.data.tidy import number
from automodel.errors import DataError
from automodel.files import check_input, decode, input_limit, os_reason, read_bounded, too_large

__all__ = ["read_experiment", "member", "DATA_FILE", "MAX_ARRAY_ELEMENTS"]

DATA_FILE = "experiment.json"
#: members an archive may list (``experiment.json`` and two files per chunk of kept repetitions)
MAX_MEMBERS = 10_000
WHAT = "a saved Extra-P experiment (.extra-p: a ZIP archive holding experiment.json)"
_MAGIC = {"indx": b"Extra-P INDEX\0\0\0", "vals": b"Extra-P VALUES\0\0"}
_OFFSET = struct.Struct("<Q")
#: values one array of kept repetitions may hold (its stated shape is checked before it is read)
MAX_ARRAY_ELEMENTS = 1 << 24


def member(archive: zipfile.ZipFile, name: str, source: str) -> bytes | None:
    """The bytes of ``name`` in the archive ``source``, at most :func:`~automodel.files.input_limit` of
    them unpacked; None when it has no such member; a damaged or larger member is a one-line
    :class:`DataError`."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > input_limit():  # a zip bomb: said before a byte is unpacked
        raise DataError(too_large(f"{source}, {name}", info.file_size, "a member", unpacked=True))
    try:
        with archive.open(info) as stream:
            return read_bounded(stream, f"{source}, {name}", "a member", DataError)
    except (zipfile.BadZipFile, zlib.error, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
        reason = str(exc).splitlines()[0][:80] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{source}, {name}: cannot be unpacked ({reason})") from None


class _Values:
    """The kept repetitions of an archive, each chunk read once."""

    def __init__(self, archive: zipfile.ZipFile, source: str) -> None:
        self.archive, self.source, self.chunks = archive, source, {}

    def chunk(self, number_: int, at: str) -> tuple[bytes, bytes]:
        if number_ not in self.chunks:
            files = []
            for ext in ("indx", "vals"):
                name = f"values/{number_}.{ext}"
                data = member(self.archive, name, self.source)
                if data is None:
                    raise DataError(f"{at}: the archive has no {name} for these values")
                if not data.startswith(_MAGIC[ext]):
                    raise DataError(f"{self.source}, {name}: expected an Extra-P {ext} file (it starts with "
                                    f"{_MAGIC[ext]!r})")
                files.append(data)
            self.chunks[number_] = (files[0], files[1])
        return self.chunks[number_]

    def read(self, ref: object, at: str) -> list[float]:
        if (not isinstance(ref, list) or len(ref) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ref)):
            raise DataError(f"{at}: expected null or [chunk, index] (two whole numbers >= 0), got {ref!r:.40}")
        index, vals = self.chunk(ref[0], at)
        start = len(_MAGIC["indx"]) + _OFFSET.size * (ref[1] + 1)
        if start + _OFFSET.size > len(index):
            raise DataError(f"{at}: index {ref[1]} is beyond values/{ref[0]}.indx")
        (offset,) = _OFFSET.unpack_from(index, start)
        stream, here = io.BytesIO(vals[offset:]), f"{at}: values/{ref[0]}.vals at offset {offset}"
        try:
            problem = _shape_problem(stream, len(vals) - offset)
            if problem is None:
                got = np.asarray(np.lib.format.read_array(stream, allow_pickle=False), float).ravel()
        except (ValueError, TypeError, EOFError) as exc:
            raise DataError(f"{here} is not an array of numbers "
                            f"({str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__})") from None
        if problem is not None:
            raise DataError(f"{here}: {problem}")
        return [number(v, f"{at}[{j}]") for j, v in enumerate(got.tolist())]


def _check_members(path: str | Path, src: str) -> None:
    """Refuse an archive listing more than :data:`MAX_MEMBERS` members, from the count its end record
    states, before :class:`zipfile.ZipFile` builds an object of each (200,000 empty members, 17 MB on
    disk, took 126 MB and 10 s to open; the limit of an input allowed 3 million)."""
    with open(path, "rb") as fh:
        end = zipfile._EndRecData(fh)  # the standard library's reader of that record (zip64 too)
    count = end[zipfile._ECD_ENTRIES_TOTAL] if end else 0
    if count > MAX_MEMBERS:
        raise DataError(f"{src}: an archive of {count:,} members; expected {WHAT} of at most {MAX_MEMBERS:,}")


def _shape_problem(stream: io.BytesIO, available: int) -> str | None:
    """What is wrong with the stated shape or type of the ``.npy`` array at the start of ``stream`` (None
    when it is 1 to :data:`MAX_ARRAY_ELEMENTS` real numbers, all held in the ``available`` bytes), read
    from its header before numpy allocates the array; ``stream`` is rewound to the array's start. An
    empty array dropped its point without a word, a complex one its imaginary parts with a warning."""
    version = np.lib.format.read_magic(stream)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(stream)
    stream.seek(0)
    if dtype.kind not in "iuf":
        return f"an array of {str(dtype)[:40]} values; expected real numbers (the repetitions)"
    count = math.prod(int(n) for n in shape)
    if count == 0:
        return f"an array of shape {shape}, no values; expected at least one repetition"
    if count > MAX_ARRAY_ELEMENTS or count * dtype.itemsize > available:
        return (f"an array of shape {shape} ({count:,} values) in {available:,} bytes; expected at most "
                f"{MAX_ARRAY_ELEMENTS:,} values, all of them in the file")
    return None


def read_experiment(path: str | Path) -> pd.DataFrame:
    """Read a saved Extra-P experiment (see the module docstring).

    Returns
    -------
    DataFrame
        The tidy frame of :mod:`automodel.data.tidy`; ``attrs["lines"]`` holds the JSON path of each
        row in ``experiment.json``.

    Raises
    ------
    DataError
        Not a ZIP archive, no ``experiment.json``, or a malformed one: the file, the JSON path and what
        was expected.
    """
    src = str(path)
    check_input(path, WHAT, DataError)
    try:
        _check_members(path, src)
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise DataError(f"{src}: not a ZIP archive; expected {WHAT}") from None
    except OSError as exc:
        raise DataError(f"{src}: cannot be read ({os_reason(exc)})") from None
    with archive:
        raw = member(archive, DATA_FILE, src)
        if raw is None:
            raise DataError(f"{src}: the archive holds no {DATA_FILE}; expected {WHAT}")
        source = f"{src}, {DATA_FILE}"
        doc = parse(decode(raw, source, "Extra-P's experiment.json", DataError), source, "an Extra-P experiment")
        stored = _Values(archive, src)
        medians: list[int] = []

        def values(entry: dict, here: str) -> list[float]:
            kept = entry.get("values") if isinstance(entry, dict) else None
            if kept is not None:
                return stored.read(kept, f"{src}, {child(here, 'values')}")
            count = entry.get("repetitions")  # may be null: it only goes into the note
            medians.append(count if isinstance(count, int) and not isinstance(count, bool) else 0)
            return [number(field(entry, "median", src, here, (int, float), "the median of the point"),
                           f"{src}, {child(here, 'median')}")]

        frame = nested(doc, src, "coordinate", values)
    if medians:
        low, high = min(medians), max(medians)
        counts = "" if not low else f" ({low})" if low == high else f" ({low} to {high})"
        frame.attrs["notes"] = [f"{src} keeps no single repetitions: each of its {len(medians)} measurements "
                                f"is one row, the median of its repetitions{counts}"]
    return frame
