"""What every seeded template is: the :class:`Template` protocol, its cost classes, and the base class and
helpers the template modules share (column access, least squares, validation of model dictionaries).

A template is a fixed model of the literature that enters the same leaderboard as the searched
candidates (DESIGN.md, sec. 4). Its fitted core satisfies :class:`automodel.model.core.Core`; the registry
of templates is :mod:`automodel.templates`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np
import pandas as pd

from automodel.data.cells import finite_number, shown
from automodel.errors import DataError, ModelFileError, OptionError
from automodel.model.core import Core  # the fitted core every template returns
from automodel.options import weights
from automodel.solve import metrics
from automodel.solve.design import design
from automodel.solve.lstsq import solve_one

__all__ = ["Template", "COSTS", "ColumnTemplate", "MODEL_VERSION", "MissingColumn", "frame_source", "column", "json_float", "times",
           "missing_reason", "standard_error", "solve_weighted", "read_floats", "read_float", "read_str", "read_header",
           "read_notes", "option_error", "check_option", "whole", "positive"]

#: cost classes of a template's fit: name -> what it means for ``automodel fit``
COSTS: dict[str, str] = {
    "fast": "well under a second on typical data; runs by default",
    "slow": "a simulation or a posterior, whose time grows with the data (to seconds or more); runs "
            "when named, or by default when its estimate on the data is within a second",
}


@runtime_checkable
class Template(Protocol):
    """A seeded model of the literature that enters the leaderboard beside the searched candidates.

    Attributes
    ----------
    name, title, source : str
        Registry key, one-line description, and the seed (file, section, equation) it implements.
    requires : tuple of str
        Columns it needs (``applicable`` says why it does not apply otherwise).
    cost : str
        A key of :data:`COSTS`: ``"fast"`` templates run in every fit, ``"slow"`` ones when named
        (``automodel fit --templates NAME``) or when their estimate is within the budget of
        :mod:`automodel.fitting`; a slow template's ``fit`` takes ``progress=True`` and
        shows a progress bar once it has run for a second.
    """

    name: str
    title: str
    source: str
    requires: tuple[str, ...]
    cost: str

    def applicable(self, frame: pd.DataFrame) -> str | None:
        """``None`` when it can be fitted on ``frame``, else the reason (``"not applicable: ..."``)."""

    def seconds(self, frame: pd.DataFrame) -> float:
        """Estimated CPU seconds of ``fit(frame)`` on one core (for the leaderboard's note)."""

    def fit(self, frame: pd.DataFrame, **options: Any) -> Core:
        """The fitted core on ``frame`` (canonical columns and ``time``)."""

    def from_dict(self, d: dict[str, Any]) -> Core:
        """The fitted core from its :meth:`Core.to_dict` form, every field validated."""

    def check_options(self, options: Mapping[str, Any]) -> None:
        """A one-line :class:`~automodel.errors.OptionError` when a value of ``options`` (every option of
        ``fit``: :func:`automodel.templates.options.check_options` gives the defaults of those not set) is
        one ``fit`` does not take, whatever the data; ``fit`` runs the same checks before reading them."""


#: the version of a template's model dictionary (:func:`read_header` checks it)
MODEL_VERSION = 1


def frame_source(frame: pd.DataFrame) -> str:
    """Where the rows of ``frame`` come from, for messages (its ``source`` attribute, else "data")."""
    return str(frame.attrs.get("source", "data"))


class MissingColumn(DataError):
    """A column a template reads that its frame lacks (:func:`column`); ``name`` is the column."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def column(frame: pd.DataFrame, name: str, positive: bool = True) -> np.ndarray:
    """Column ``name`` of ``frame`` as a float array, checked to be finite (and positive).

    Raises
    ------
    MissingColumn
        No column ``name``.
    DataError
        Naming the column and the first offending row (as a file line: header is line 1).
    """
    if name not in frame.columns:
        raise MissingColumn(f"{frame_source(frame)}: missing column '{name}'", name)
    try:
        values = np.asarray(frame[name], dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{frame_source(frame)}, column '{name}': expected numbers") from None
    bad = ~np.isfinite(values)
    if positive:
        bad |= ~(values > 0)
    if bad.any():
        i = int(np.argmax(bad))
        what = "a finite positive number" if positive else "a finite number"
        raise DataError(
            f"{frame_source(frame)}, row {i + 2}, column '{name}': expected {what}, got {frame[name].iloc[i]!r}"
        )
    return values


def times(frame: pd.DataFrame, min_rows: int = 1) -> np.ndarray:
    """The ``time`` column (seconds, > 0), with at least ``min_rows`` rows."""
    t = column(frame, "time")
    if t.size < min_rows:
        raise DataError(f"{frame_source(frame)}: need at least {min_rows} rows to fit, got {t.size}")
    return t


def missing_reason(frame: pd.DataFrame, required: Iterable[str]) -> str | None:
    """``None`` when every required column is present, else ``"not applicable: no column x"``."""
    absent = [c for c in required if c not in frame.columns]
    if absent:
        return "not applicable: no column " + ", ".join(absent)
    return None


class ColumnTemplate:
    """What every template shares (:class:`Template`): it applies when its ``requires``
    columns are there, it loads its fitted models from JSON through ``model_class.from_dict``, and it is
    ``"fast"``: a few least-squares solves, milliseconds on typical data (``benchmarks/speed.py``)."""

    model_class: ClassVar[type]
    requires: tuple[str, ...]
    cost: ClassVar[str] = "fast"

    def applicable(self, frame: pd.DataFrame) -> str | None:
        return missing_reason(frame, self.requires)

    def seconds(self, frame: pd.DataFrame) -> float:
        """Estimated CPU seconds of a fit on ``frame``: a few milliseconds."""
        return 0.01

    def from_dict(self, d: dict) -> Any:
        return self.model_class.from_dict(d)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """No value checks (:meth:`Template.check_options`): a template with some overrides this."""


def standard_error(residuals: np.ndarray, n_coefficients: int) -> float:
    """Standard error of the regression ``sqrt(RSS / (m - k))`` (``inf`` when ``m <= k``)."""
    return float(metrics.standard_error(np.sum(residuals**2), residuals.size, n_coefficients))


def solve_weighted(
    basis: np.ndarray, t: np.ndarray, relative: bool, nonnegative: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Least squares ``basis @ c ~ t``; rows weighted by ``1/t`` when ``relative`` (bayesian-kohashi eq. 7).

    One system on its weighted, unit-scaled columns (:func:`automodel.solve.lstsq.solve_one`; exact
    NNLS when ``nonnegative``). Returns ``(coefficients, weighted residuals)``.
    """
    return solve_one(design(basis, t, weights(t, "relative" if relative else "none")), nonnegative)


def read_header(d: Any, template: str) -> dict:
    """Check the common part of a model dictionary (kind, template, version)."""
    if not isinstance(d, dict):
        raise ModelFileError(f"model for template '{template}': expected a JSON object, got {type(d).__name__}")
    if d.get("kind") != "template" or d.get("template") != template:
        raise ModelFileError(f"expected kind 'template' and template '{template}', got {d.get('kind')!r}/{d.get('template')!r}")
    if d.get("version") != MODEL_VERSION:
        raise ModelFileError(f"template '{template}': unsupported version {d.get('version')!r}, expected {MODEL_VERSION}")
    return d


def read_floats(d: dict, key: str, length: int | None = None, allow_none: bool = False) -> tuple[float, ...] | None:
    """A list of finite numbers under ``key`` (exact ``length`` when given); no evaluation of any string."""
    value = d.get(key)
    if value is None and allow_none:
        return None
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        raise ModelFileError(f"model field '{key}': expected a list of numbers, got {value!r:.80}")
    if not all(finite_number(v) for v in value):
        raise ModelFileError(f"model field '{key}': numbers must be finite")
    if length is not None and len(value) != length:
        raise ModelFileError(f"model field '{key}': expected {length} numbers, got {len(value)}")
    return tuple(float(v) for v in value)


def json_float(value: float) -> float | None:
    """``value`` as a model file writes it: None (JSON null) when it is NaN or infinite, which JSON cannot
    hold; :func:`read_float` with ``allow_none`` reads it back."""
    return float(value) if math.isfinite(value) else None


def read_str(d: dict, key: str, allowed: Sequence[str] | None = None) -> str:
    """A string field, optionally restricted to ``allowed`` values."""
    value = d.get(key)
    if not isinstance(value, str) or (allowed is not None and value not in allowed):
        want = f"one of {list(allowed)}" if allowed is not None else "a string"
        raise ModelFileError(f"model field '{key}': expected {want}, got {value!r:.80}")
    return value


def read_float(d: dict, key: str, allow_none: bool = False) -> float | None:
    """One finite number under ``key``."""
    value = d.get(key)
    if value is None and allow_none:
        return None
    if not finite_number(value):
        raise ModelFileError(f"model field '{key}': expected a finite number, got {shown(value)}")
    return float(value)


def read_notes(d: dict) -> tuple[str, ...]:
    """The optional ``notes`` list of strings."""
    notes = d.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(s, str) for s in notes):
        raise ModelFileError("model field 'notes': expected a list of strings")
    return tuple(notes)


def option_error(template: str, option: str, expected: str, value: Any) -> OptionError:
    """The one-line :class:`OptionError` of a template option's value: ``kohashi: option n_terms must be
    2 to 6, got -4``."""
    return OptionError(f"{template}: option {option} must be {expected}, got {shown(value)}")


def check_option(ok: bool, template: str, option: str, expected: str, value: Any) -> None:
    """Raise :func:`option_error` unless ``ok`` (a test of the option's value alone, not of the data)."""
    if not ok:
        raise option_error(template, option, expected, value)


def _finite(value: Any) -> bool:
    """:func:`~automodel.data.cells.finite_number` of a number of JSON or of numpy (``math.isfinite`` of a
    400-digit integer of a model file raised an OverflowError)."""
    return finite_number(value.item() if isinstance(value, (np.integer, np.floating)) else value)


def whole(value: Any, low: float, high: float = math.inf) -> bool:
    """``value`` is a whole number (not a bool) from ``low`` to ``high``."""
    return _finite(value) and value == int(value) and low <= value <= high


def positive(value: Any, allow_none: bool = False) -> bool:
    """``value`` is a finite number > 0 (or None when ``allow_none``)."""
    if value is None:
        return allow_none
    return _finite(value) and value > 0
