"""A fitted model's prediction band, stored as data: what :meth:`Model.predict_interval` evaluates.

:class:`Interval` holds the parts of the band's log-space standard deviation that
:mod:`automodel.solve.band` combines: the noise of one run, the model's misfit, the coefficients'
covariance (term models), the candidates the data cannot tell apart, and the error gained per
doubling beyond the measured range, measured on forward splits of the training data
(:func:`automodel.model.calibration.calibrate` builds it). It is written into the model JSON file as plain
numbers and the alternatives' own model bodies, so a loaded model gives the same bands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from automodel.data.cells import finite_number, ranges_problem, shown
from automodel.data.rows import Columns
from automodel.errors import ModelFileError
from automodel.solve import band
from automodel.space.terms import term_values

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Interval", "KINDS", "METHOD", "DEFAULT_GROWTH", "MAX_ALTERNATIVES", "union_bounds"]

#: what a band covers: one new run, or the expected (aggregated) time
KINDS: dict[str, str] = {"run": "one new run", "mean": "the expected time of a configuration"}
#: the method, as ``automodel show`` states it
METHOD = ("log-normal band: repetition noise + misfit + coefficient covariance + spread of the "
          "equivalent candidates + error growth per doubling beyond the data (forward splits); "
          "Student-t on the Welch-Satterthwaite degrees of freedom of those parts")
#: the prior of the error gained per doubling beyond the data (log units): the growth that the forward
#: splits of :mod:`automodel.model.calibration` measure on the training runs alone of all canonical tasks
#: pooled run by run (0.34; per task 0 to 0.54; benchmarks/RESULTS.md, "Prediction bands"). Pooled split
#: by split, as the growth is now measured, they give 0.21, and the errors beyond the data of the
#: development corpus grow by about 0.4 a doubling (benchmarks/RESULTS.md, issue 36, 06:30 UTC): the
#: splits see less than what lies beyond them, and the prior stays between the two
DEFAULT_GROWTH = 0.35
#: equivalent candidates kept with a model for the choice part of its band
MAX_ALTERNATIVES = 8


@dataclass(frozen=True)
class Interval:
    """The parts of a model's prediction band (log-space standard deviations, see :mod:`automodel.solve.band`).

    Attributes
    ----------
    run : float
        Relative standard deviation of one run about its configuration's time (0 when nothing was
        repeated: the misfit then holds the noise too).
    misfit : float
        What the model misses inside the data beyond the aggregate noise.
    dof : int
        Residual degrees of freedom of the fit (the Student-t quantile's).
    ranges : dict
        Measured ``[min, max]`` of each parameter.
    growth : dict
        Error gained per doubling beyond the range of each parameter.
    growth_source : dict
        How each growth was found: ``"K forward point(s) in S split(s) and the prior 0.35"`` or the prior alone.
    covariance : (k, k) array or None
        Covariance of a term model's coefficients, in the order of its terms.
    alternatives : tuple
        Fitted cores of the candidates statistically equivalent to the model.
    noise_seconds : float
        Root mean square absolute residual of the fit: below it a predicted time is noise.
    run_dof : int
        Degrees of freedom of ``run`` (the repetition differences it was estimated from).
    growth_dof : dict
        Degrees of freedom of each growth (forward points plus the prior's weight).
    frontier : dict
        Each parameter's values at the measured configurations that bound the data from above
        (:func:`automodel.solve.band.frontier`; empty: the box of :attr:`ranges`), from which the
        distance beyond the data is counted (:func:`automodel.solve.band.doublings_beyond_frontier`).
    """

    run: float
    misfit: float
    dof: int
    ranges: dict[str, tuple[float, float]]
    growth: dict[str, float]
    growth_source: dict[str, str] = field(default_factory=dict)
    covariance: np.ndarray | None = None
    alternatives: tuple[Any, ...] = ()
    noise_seconds: float = 0.0
    run_dof: int = 1
    growth_dof: dict[str, float] = field(default_factory=dict)
    frontier: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def parts(self, columns: pd.DataFrame, core: Any, yhat: np.ndarray, kind: str = "run"
              ) -> list[tuple[np.ndarray | float, float]]:
        """Each part of the band at the rows of ``columns``: (log-space standard deviation, its degrees of
        freedom), for ``core``'s prediction ``yhat``.

        The coefficient part needs the core's ``terms`` (a term model) and :attr:`covariance`, or the
        core's own ``coefficient_spread(columns)`` (a Bayesian template's posterior spread).
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        yhat = np.asarray(yhat, float)
        coefficients = np.zeros(len(yhat))
        terms = getattr(core, "terms", None)
        spread = getattr(core, "coefficient_spread", None)
        if self.covariance is not None and terms is not None:
            values = term_values(list(terms), {q: np.asarray(columns[q], float) for q in columns}, len(yhat))
            with np.errstate(all="ignore"):
                coefficients = np.sqrt(band.quadratic_form(values, self.covariance)) / np.abs(yhat)
        elif spread is not None and (posterior := spread(_frame(columns))) is not None:
            coefficients = np.asarray(posterior, float)
        choice = np.zeros(len(yhat))
        if self.alternatives:
            arrays = {q: np.asarray(columns[q], float) for q in columns}  # what a term model reads, made once
            with np.errstate(all="ignore"):
                ratios = np.column_stack([band.log_ratio(np.asarray(a.predict(
                    arrays if getattr(a, "terms", None) is not None else _frame(columns)), float), yhat)
                    for a in self.alternatives])
            ratios = np.where(np.isfinite(ratios), ratios, np.nan)
            counted = np.isfinite(ratios).sum(axis=1)
            choice = np.sqrt(np.nansum(ratios ** 2, axis=1) / np.maximum(counted, 1))
        distance = band.doublings_beyond_frontier(
            columns, {q: r for q, r in self.ranges.items() if q in columns},
            {q: np.asarray(v, float) for q, v in self.frontier.items()},
            {q: self.growth.get(q, DEFAULT_GROWTH) for q in self.ranges})
        with np.errstate(over="ignore", invalid="ignore"):  # a model file's growth of 1e308: inf, no warning
            growth = [(self.growth.get(q, DEFAULT_GROWTH) * d, self.growth_dof.get(q, 1.0))
                      for q, d in distance.items()]
        run = (self.run if kind == "run" else 0.0, float(self.run_dof))
        return [run, (self.misfit, self.dof), (coefficients, self.dof),
                (choice, float(max(len(self.alternatives), 1))), *growth]

    def scale(self, columns: pd.DataFrame, core: Any, yhat: np.ndarray, kind: str = "run") -> np.ndarray:
        """The log-space standard deviation of ``core``'s prediction ``yhat`` at each row of ``columns``."""
        return band.combine(*[sd for sd, _ in self.parts(columns, core, yhat, kind)])

    def spreads(self, columns: pd.DataFrame, core: Any, yhat: np.ndarray, kind: str = "run"
                ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The bands whose union is the band of ``kind`` at each row: ``(log-space scale, Welch-Satterthwaite
        degrees of freedom)`` of the parts (:func:`automodel.solve.band.satterthwaite`). The band of one run
        contains the band of its expected time: where a part on few degrees of freedom (the equivalent
        candidates' spread) dominates, adding the well-estimated run noise can raise the degrees of
        freedom more than the scale; so ``"run"`` gives both, ``"mean"`` the second alone."""
        parts = self.parts(columns, core, yhat, kind)
        sets = [parts, [(0.0, parts[0][1]), *parts[1:]]] if kind == "run" else [parts]
        rows = np.ones(len(yhat))
        return [(band.combine(*[sd for sd, _ in p]) * rows, band.satterthwaite(p) * rows) for p in sets]

    def bounds(self, columns: pd.DataFrame, core: Any, yhat: np.ndarray, level: float, kind: str = "run"
               ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper ends of the ``level`` band about ``yhat`` (0 where ``yhat`` is 0, NaN where it is
        negative): :func:`union_bounds` of :meth:`spreads`."""
        return union_bounds(np.asarray(yhat, float), self.spreads(columns, core, yhat, kind), level)

    def describe(self, core: Any = None) -> list[str]:
        """How the band is made, in lines of at most 80 columns (for ``automodel show``); ``core`` is
        the model's fitted core (a Bayesian template's posterior samples give its coefficient part)."""
        coefficients = ("from their covariance" if self.covariance is not None else
                        "from the posterior samples" if getattr(core, "samples", None) is not None else
                        "not modelled")
        lines = ["prediction band: log-normal, Student-t on Welch-Satterthwaite dof; parts:",
                 (f"  one run {self.run:.3g} ({self.run_dof} dof)" if self.run_dof else
                  "  one run: no repetitions (the misfit holds the noise)") +
                 f", misfit {self.misfit:.3g} ({self.dof} dof)",
                 f"  coefficients {coefficients}"
                 f"; {len(self.alternatives)} equivalent candidate(s)"]
        for q, g in self.growth.items():
            lines.append(f"  {q}: {g:.3g} per doubling beyond {self.ranges[q][0]:g} to {self.ranges[q][1]:g}"
                         if q in self.ranges else f"  {q}: {g:.3g} per doubling")
            if self.growth_source.get(q):
                lines.append(f"     ({self.growth_source[q]})")
        if self.frontier:
            names = list(self.frontier)
            corners = ", ".join("(" + ", ".join(f"{q}={v:g}" for q, v in zip(names, point)) + ")"
                                for point in list(zip(*self.frontier.values()))[:3])
            more = len(next(iter(self.frontier.values()))) - 3
            lines.append(f"  beyond counted from the measured configurations nearest above: {corners}"
                         + (f" and {more} more" if more > 0 else ""))
        return lines

    # -- files -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"method": METHOD, "run": self.run, "misfit": self.misfit, "dof": self.dof,
                "ranges": {q: list(r) for q, r in self.ranges.items()}, "growth": dict(self.growth),
                "growth_source": dict(self.growth_source),
                "covariance": None if self.covariance is None else
                [[float(v) if np.isfinite(v) else None for v in row] for row in np.asarray(self.covariance)],
                "alternatives": [a.to_dict() for a in self.alternatives], "noise_seconds": self.noise_seconds,
                "run_dof": self.run_dof, "growth_dof": dict(self.growth_dof),
                "frontier": {q: list(v) for q, v in self.frontier.items()}}

    @classmethod
    def from_dict(cls, d: Any, params: Sequence[str], n_terms: int | None,
                  core_from_dict: Callable[[Any], Any]) -> "Interval":
        """The interval of a model file, every field checked (a one-line :class:`ModelFileError`).

        ``n_terms`` is the term count of the model's core (None for a template: no covariance);
        ``core_from_dict`` reads an alternative's model body.
        """
        if not isinstance(d, dict):
            raise ModelFileError("'interval' must be an object")
        ranges = d.get("ranges", {})
        growth = d.get("growth", {})
        growth_dof = d.get("growth_dof", {})
        growth_source = d.get("growth_source", {})
        if not all(isinstance(x, dict) for x in (ranges, growth, growth_dof, growth_source)):
            raise ModelFileError("interval: 'ranges', 'growth', 'growth_dof' and 'growth_source' must be objects")
        problem = ranges_problem(ranges, params)
        if problem is not None:
            raise ModelFileError(f"interval: 'ranges': {problem}")
        checked_ranges = {q: (float(r[0]), float(r[1])) for q, r in ranges.items()}
        covariance = d.get("covariance")
        if covariance is not None:
            matrix = np.asarray(covariance, dtype=object)
            k = n_terms if n_terms is not None else -1
            if matrix.shape != (k, k):
                raise ModelFileError(f"interval: 'covariance' must be a {k} x {k} list of lists, one row per term")
            covariance = np.array([[_finite(v, "covariance", nan_ok=True) for v in row] for row in covariance])
        alternatives = d.get("alternatives", [])
        if not isinstance(alternatives, list) or len(alternatives) > MAX_ALTERNATIVES:
            raise ModelFileError(f"interval: 'alternatives' must be a list of at most {MAX_ALTERNATIVES} models")
        return cls(run=_nonnegative(d, "run"), misfit=_nonnegative(d, "misfit"),
                   dof=int(_nonnegative(d, "dof", whole=True)),
                   ranges=checked_ranges,
                   growth={str(q): _finite(g, f"growth of {q}") for q, g in growth.items()},
                   growth_source={str(q): str(v) for q, v in growth_source.items()},
                   covariance=covariance, alternatives=tuple(core_from_dict(a) for a in alternatives),
                   noise_seconds=_nonnegative(d, "noise_seconds"),
                   run_dof=int(_nonnegative(d, "run_dof", whole=True)),
                   growth_dof={str(q): _finite(g, f"growth_dof of {q}") for q, g in growth_dof.items()},
                   frontier=_frontier(d.get("frontier", {}), checked_ranges))


def union_bounds(yhat: np.ndarray, spreads: list[tuple[np.ndarray, np.ndarray]], level: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` band about ``yhat`` that holds the band of each ``(scale, dof)`` of ``spreads``
    (:meth:`Interval.spreads`); 0 where ``yhat`` is 0 (a log-normal band about 0 is 0: a counter of zeros
    only, T = 0). The rows may be those of many models (their spreads concatenated): the Student-t
    quantiles of all rows are then solved together."""
    lo, hi = band.bounds(yhat, spreads[0][0], level, spreads[0][1])
    for scale, dof in spreads[1:]:
        other_lo, other_hi = band.bounds(yhat, scale, level, dof)
        lo, hi = np.fmin(lo, other_lo), np.fmax(hi, other_hi)
    zero = yhat == 0
    return np.where(zero, 0.0, lo), np.where(zero, 0.0, hi)


def _frontier(value: Any, ranges: Mapping[str, tuple[float, float]]) -> dict[str, tuple[float, ...]]:
    """A model file's ``interval.frontier``: for parameters of ``ranges``, as many positive values each,
    at most :data:`~automodel.solve.band.MAX_FRONTIER`, within the parameter's range (absent: ``{}``)."""
    if not isinstance(value, dict):
        raise ModelFileError("interval: 'frontier' must be an object of lists, one per parameter")
    out: dict[str, tuple[float, ...]] = {}
    for q, values in value.items():
        if q not in ranges or not isinstance(values, list) or not 0 < len(values) <= band.MAX_FRONTIER:
            raise ModelFileError(f"interval: 'frontier' {shown(q)}: expected a list of 1 to {band.MAX_FRONTIER} "
                                 "values of a parameter of 'ranges'")
        numbers = tuple(_finite(v, f"frontier of {q}") for v in values)
        low, high = ranges[q]
        if not all(low <= v <= high and v > 0 for v in numbers):
            raise ModelFileError(f"interval: 'frontier' {shown(q)}: values must be positive and within its range")
        out[str(q)] = numbers
    if len({len(v) for v in out.values()}) > 1:
        raise ModelFileError("interval: 'frontier': every parameter must have as many values")
    return out


def _finite(value: Any, what: str, nan_ok: bool = False) -> float:
    """``value`` as a float when it is a finite number (or None -> NaN with ``nan_ok``)."""
    if nan_ok and value is None:
        return math.nan
    if not finite_number(value):
        raise ModelFileError(f"interval: {what} must be a finite number, got {shown(value)}")
    return float(value)


def _nonnegative(d: Mapping[str, Any], key: str, whole: bool = False) -> float:
    """``d[key]`` when it is a finite number >= 0 (a whole one with ``whole``)."""
    value = _finite(d.get(key), f"'{key}'")
    if value < 0 or (whole and value != int(value)):
        raise ModelFileError(f"interval: '{key}' must be a non-negative {'whole ' if whole else ''}number, "
                             f"got {shown(d.get(key))}")
    return value


def _frame(columns: Any) -> Any:
    """``columns`` as a template reads them: a pandas DataFrame (:class:`automodel.data.rows.Columns` made
    into one)."""
    return columns.frame() if isinstance(columns, Columns) else columns
