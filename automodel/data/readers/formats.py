"""The input formats: one registry line per format (name, what it is, the name endings and leading bytes
that settle it, where its reader is).

The reader is named by its import path (``"module:function"``) and imported on first use, so the command
line builds its ``--format`` choices from :data:`FORMATS` without importing pandas.

A new format is one reader module and one :func:`register` call: :func:`automodel.data.readers.read`
reads it, detects it by its :attr:`InputFormat.suffixes` and :attr:`InputFormat.magic`, and every
command's ``--format`` offers it.

Examples
--------
>>> FORMATS["csv"].reader.__name__
'read_csv_table'
>>> sorted(FORMATS)[:3]
['csv', 'cube', 'experiment']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["InputFormat", "FORMATS", "register"]


@dataclass(frozen=True)
class InputFormat:
    """One input format.

    Parameters
    ----------
    name : str
        What ``--format`` and :func:`automodel.data.readers.read` call it (lowercase).
    description : str
        What it is, one line, for help texts.
    loader : str
        Where its reader is, ``"package.module:function"``; the function takes a :class:`~pathlib.Path`
        and returns a DataFrame.
    suffixes : tuple of str
        Name endings (lowercase, with the dot) that settle the format of a file whose first bytes do not.
    magic : tuple of bytes
        Leading bytes that settle the format.
    """

    name: str
    description: str
    loader: str
    suffixes: tuple[str, ...] = ()
    magic: tuple[bytes, ...] = ()

    @property
    def reader(self) -> Callable[[Path], pd.DataFrame]:
        """The reader, imported on first use."""
        module, _, function = self.loader.partition(":")
        return getattr(import_module(module), function)


#: format name -> format, in the order help texts list them
FORMATS: dict[str, InputFormat] = {}


def register(fmt: InputFormat) -> InputFormat:
    """Add ``fmt`` to :data:`FORMATS` and return it; a name already taken is a :class:`ValueError`."""
    if fmt.name in FORMATS:
        raise ValueError(f"input format {fmt.name!r} is already registered")
    if ":" not in fmt.loader:
        raise ValueError(f"input format {fmt.name!r}: loader {fmt.loader!r} is not 'module:function'")
    FORMATS[fmt.name] = fmt
    return fmt


_READERS = "automodel.data.readers"
register(InputFormat("csv", "a table of runs, comma-separated", f"{_READERS}.tables:read_csv_table"))
register(InputFormat("tsv", "a table of runs, tab-separated", f"{_READERS}.tables:read_tsv_table"))
register(InputFormat("parquet", "a table of runs as Parquet (needs pyarrow)", f"{_READERS}.tables:read_parquet_table",
                     suffixes=(".parquet",), magic=(b"PAR1",)))
register(InputFormat("text", "Extra-P text input", f"{_READERS}.extrap_text:read_extrap_text"))
register(InputFormat("json", "Extra-P JSON, new or old form", f"{_READERS}.extrap_json:read_extrap_json"))
register(InputFormat("jsonl", "Extra-P JSON Lines", f"{_READERS}.json_lines:read_json_lines", suffixes=(".jsonl",)))
register(InputFormat("talpas", "Talpas", f"{_READERS}.json_lines:read_talpas"))
register(InputFormat("experiment", "a saved Extra-P experiment (.extra-p)", f"{_READERS}.experiment:read_experiment",
                     suffixes=(".extra-p",), magic=(b"PK\x03\x04",)))
register(InputFormat("cube", "a folder of Score-P CUBE4 profiles (needs pycubexr)", f"{_READERS}.cube:read_cube"))
