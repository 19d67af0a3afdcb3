"""The automodel error tree: one base class, each error also a built-in so callers can catch either."""

from __future__ import annotations


class AutomodelError(Exception):
    """Base class of every error automodel raises on purpose (the CLI turns these into exit code 2)."""


class DataError(AutomodelError, ValueError):
    """Measurements are missing, malformed or insufficient (names file, row, column, expectation)."""


class SpaceError(AutomodelError, ValueError):
    """A search-space TOML file is malformed or asks for something unknown."""


class OptionError(SpaceError):
    """A template option's value is outside what the template takes (``kohashi.n_terms=-4``)."""


class ModelFileError(AutomodelError, ValueError):
    """A model JSON file is malformed, of an unknown version, or hostile."""


class OutputError(AutomodelError, OSError):
    """An output file cannot be written (its folder is missing or read-only, the disk is full, ...)."""


class StoreError(AutomodelError, RuntimeError):
    """The persistent store cannot be opened, read or written."""


#: the distribution's name on the package index (``automodel`` there is an unrelated project); the
#: import name and the command stay ``automodel``
DISTRIBUTION = "automodel-hpc"


def install_hint(extra: str) -> str:
    """The command that installs an optional extra of this project: ``pip install 'automodel-hpc[cube]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def where(source: str | None = None, row: int | None = None, column: str | None = None) -> str:
    """Format the location part of an error message: ``file 'x.csv', row 7, column 'time'``.

    Rows are numbered as a person reading the file would: the header is line 1, so data row ``i``
    (0-based) is line ``i + 2``. A column name is shown with its non-printable characters escaped
    (:func:`automodel.names.printable`).
    """
    from automodel.names import printable

    parts = []
    if source:
        parts.append(f"{source}")
    if row is not None:
        parts.append(f"row {row}")
    if column is not None:
        parts.append(f"column '{printable(column)}'")
    return ", ".join(parts)
