"""The best process count of a model: the integer p of least predicted time, its range and how sure it is.

:meth:`automodel.model.core.Model.best_p` asks; this module holds the answer (:class:`BestP`), the search over
integers (:func:`best_integer`) and the checks of its arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from automodel.data.cells import MAGNITUDE, RULES, shown, violation
from automodel.data.numerals import as_float
from automodel.errors import DataError

__all__ = ["BestP", "figure", "best_integer", "best_p_at", "search_p_max", "whole_number", "float_argument",
           "EXHAUSTIVE_P", "CHUNK_P", "MAX_P", "BEYOND_FACTOR", "RANGE_GRID"]

#: the widest range of process counts :meth:`automodel.model.core.Model.best_p` searches exhaustively (in chunks of
#: :data:`CHUNK_P`); a term model takes about 25 ms for all of them
EXHAUSTIVE_P = 2 ** 20
#: process counts evaluated at once
CHUNK_P = 2 ** 16
#: the largest process count it accepts: every integer up to it is exact in a float
MAX_P = 2 ** 53
#: a best p more than this factor beyond the measured p range is reported as an extrapolation
BEYOND_FACTOR = 2.0
#: process counts evaluated for the range of :class:`BestP` (every one when the range is this narrow)
RANGE_GRID = 4096


@dataclass(frozen=True)
class BestP:
    """The best process count, how sure the model is of it, and what a user should know.

    Attributes
    ----------
    p : int
        The process count with the least predicted time.
    time : float
        Its predicted time; ``lower`` and ``upper`` the ``level`` band of one run there (NaN when the
        model has no band).
    p_low, p_high : int
        The contiguous range of process counts around ``p`` whose predicted time is within the
        ``level`` band of the expected time at ``p`` (statistically indistinguishable from the best;
        ``p`` itself when the model has no band). Searched on every count up to :data:`RANGE_GRID`
        counts, else on that many geometrically spaced ones.
    warnings : tuple of str
        An answer far outside the measured p range (:data:`BEYOND_FACTOR`), at the edge of the
        searched range, below the noise of the fit, or counts where the model predicts no positive time.
    """

    p: int
    time: float
    lower: float = math.nan
    upper: float = math.nan
    p_low: int = 0
    p_high: int = 0
    level: float = 0.9
    warnings: tuple[str, ...] = ()
    unit: str = "s"

    def lines(self, name: str = "p") -> list[str]:
        """``["p = 44 (36 to 58 at 90%)", "predicted 0.52 s (90% band 0.41 to 0.66 s)"]``: the answer (the
        process count by ``name``, its column's: ``procs = 44``) and its time in the model's unit, each
        well within 80 columns."""
        head = f"{name} = {self.p}" + (f" ({self.p_low} to {self.p_high} at {self.level:.0%})"
                                  if self.p_low != self.p_high else "")
        time = f"predicted {figure(self.time, 4)} {self.unit}"
        if math.isfinite(self.lower):
            time += f" ({self.level:.0%} band {figure(self.lower)} to {figure(self.upper)} {self.unit})"
        return [head, time]


def figure(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, without an exponent from 1 to 10^6: a time in ms
    beside its band read ``predicted 3131 ms (90% band 2.1e+03 to 4.66e+03 ms)``.

    >>> figure(2104.49), figure(4658.45), figure(0.005682), figure(1234567.0), figure(3131.08, 4)
    ('2104', '4658', '0.00568', '1.23e+06', '3131')
    """
    text = f"{value:.{digits}g}"
    return f"{value:.0f}" if "e" in text and 1 <= abs(value) < 1e6 else text


def best_integer(times: Callable[[np.ndarray], np.ndarray], low: int, high: int) -> tuple[int, float]:
    """The integer ``x`` in ``[low, high]`` with the least ``times(x)`` (vectorised), and that value.

    Exhaustive over ranges of at most :data:`EXHAUSTIVE_P` integers (the first least one, as ``np.argmin``),
    :data:`CHUNK_P` at a time; wider ranges coarse to fine: the least of about 2000 geometrically spaced
    integers, then the same inside the bracket of its two neighbours, until the bracket is narrow
    enough to search whole. The work is ``O(log(high - low))`` evaluations of 2000 points plus one
    exhaustive search, the memory that of :data:`CHUNK_P` points. Beyond :data:`EXHAUSTIVE_P` the answer is
    exact for a cost with one minimum between the grid points around the coarse one (the usual U shape
    of run time over p); a narrower dip elsewhere, or a near tie between distant plateaus, may be missed.
    """
    while high - low + 1 > EXHAUSTIVE_P:
        grid = np.unique(np.round(np.geomspace(low, high, 2048)).astype(np.int64))
        i = int(np.argmin(times(grid.astype(float))))
        low, high = int(grid[max(i - 1, 0)]), int(grid[min(i + 1, len(grid) - 1)])
    best, least = low, math.inf
    for start in range(low, high + 1, CHUNK_P):
        ps = np.arange(start, min(start + CHUNK_P, high + 1), dtype=float)
        t = times(ps)
        i = int(np.argmin(t))
        if t[i] < least:
            best, least = int(ps[i]), float(t[i])
    return best, least


def whole_number(name: str, value: Any, low: int) -> int:
    """``value`` as an int when it is a whole number in ``[low, MAX_P]`` (an int exactly, not through a
    float); else a one-line DataError."""
    number: int | float = math.nan
    text = shown(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
        text = f"{number}" if abs(number) < 10 ** 20 else text
    elif not isinstance(value, bool) and not math.isnan(as_float(value)):
        number = as_float(value)
        text = f"{number:g}"
    if not (low <= number <= MAX_P and number == math.floor(number)):
        raise DataError(f"{name} must be a whole number from {low} to 2^53, got {text}")
    return int(number)


def float_argument(name: str, value: Any) -> float:
    """A parameter value given to :meth:`automodel.model.core.Model.best_p`, checked as a cell of its role is: finite, its
    role's rule (:data:`automodel.data.cells.RULES`: ``n`` positive, ``cpu`` and ``bw`` in (0, 1]) and
    0 or of a magnitude in :data:`automodel.data.cells.MAGNITUDE`; else a one-line DataError."""
    number = as_float(value)
    if math.isnan(number) and not isinstance(value, (float, np.floating)):
        raise DataError(f"{name} must be a number, got {shown(value)}")
    if not math.isfinite(number):
        raise DataError(f"{name} must be a finite number, got {number:g}")
    found = violation(np.array([number]), name)
    if found is not None:
        _, what, magnitude = found
        if magnitude:
            low, high = MAGNITUDE
            what = f"{what if name in RULES else '0 or a number'} of magnitude {low:g} to {high:g}"
        raise DataError(f"{name} must be {what}, got {number:g}")
    return number


def search_p_max(model: Any, *frames: Any) -> int | None:
    """The largest p to search for the best p of ``model`` drawn with the runs of ``frames`` (DataFrames
    or None): the largest p among them where it is beyond the default range
    (:meth:`~automodel.model.core.Model.default_p_max`), else None (the default). The demo's text said
    ``p = 64``, at the edge of the default range, beside a plot of runs up to 256 that marked p = 70."""
    drawn = [float(f["p"].max()) for f in frames if f is not None and "p" in f and len(f)]
    if "p" not in model.params or not drawn or max(drawn) <= model.default_p_max():
        return None
    return min(MAX_P, int(max(drawn)))


def best_p_at(model: Any, p_max: int | None = None) -> tuple[dict[str, float], BestP | str]:
    """The best process count of ``model`` (a :class:`~automodel.model.core.Model`) at the largest trained
    value of its other parameters (cpu and bw at 1), as ``automodel fit`` prints it and reports show it;
    searched up to ``p_max`` (default: the model's, :func:`search_p_max` for a model drawn with runs).

    Returns
    -------
    tuple
        ``(where, BestP)``, or ``(where, reason)`` when there is none: the model does not depend on p,
        predicts no time there, or has no trained range of a parameter to choose the best p at (a model
        file may leave out its ``ranges``).
    """
    at: dict[str, float] = {}
    for q in model.params:
        if q in ("p", "cpu", "bw"):
            continue
        if q not in model.ranges:
            return at, f"no trained range of {model.roles.get(q, q)!r} to choose the best p at"
        at[q] = float(model.ranges[q][1])
    try:
        return at, model.best_p(**at, p_max=p_max)
    except DataError as exc:  # the model is fitted and written all the same
        return at, str(exc)
