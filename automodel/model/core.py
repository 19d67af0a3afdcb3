"""A fitted model: predictions, the best process count, its sympy expression and its JSON form.

:class:`Core` is the protocol every fitted core satisfies: a searched :class:`TermModel` (terms and
coefficients) or a seeded template's fit (a template is :class:`automodel.templates.base.Template`).
:class:`Model` wraps any core with what a user needs around it: the mapping from parameter roles to the user's column names, the training ranges, the metrics,
and a versioned JSON form (:meth:`Model.to_dict`; read back by :mod:`automodel.model_file`, which
executes nothing from the file).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from automodel.data.cells import finite_number, numeric, rows_of, shown
from automodel.data.rows import Columns
from automodel.errors import DataError, ModelFileError
from automodel.options import ROW_BUDGET
from automodel.files import write_text
from automodel.model.best_p import BEYOND_FACTOR, MAX_P, RANGE_GRID, BestP, best_integer, float_argument, whole_number
from automodel.model.interval import Interval
from automodel.space.terms import Term, term_from_dict, term_sum, term_values

if TYPE_CHECKING:  # sympy and the printers (0.5 s) are imported by the expressions and formulas only
    import pandas as pd  # pandas (0.3 s): by the templates, best_p and predict_parts only
    import sympy

__all__ = ["Core", "TermModel", "Model", "FORMAT", "VERSION", "term_batches", "predict_many", "PARTS"]

FORMAT = "automodel-model"
VERSION = 1


@runtime_checkable
class Core(Protocol):
    """What a fitted model is: the one contract of :class:`TermModel` and every template's fit.

    ``predict`` takes a frame of canonical parameter columns (``n``, ``p``, ``cpu``, ``bw``, extras);
    ``to_dict`` is the JSON body of a model file (``{"kind": "terms" | "template", ...}``), read back
    by :mod:`automodel.model_file`.
    """

    @property
    def name(self) -> str: ...

    @property
    def expr(self) -> sympy.Expr: ...

    @property
    def n_coefficients(self) -> int: ...

    def predict(self, frame: pd.DataFrame) -> np.ndarray: ...

    def to_dict(self) -> dict[str, Any]: ...


#: the parts of a run time a model can tell apart (adaptive-model-sanjay-slides.txt, slides 20-21: the
#: computation and communication models times their processor functions, plus an overhead P-term and
#: the serial constant); ``other`` is what a template's equations do not assign to either
PARTS = ("computation", "communication", "overhead", "other")
@dataclass(frozen=True)
class TermModel:
    """``T = sum_k coefficients[k] * terms[k]``."""

    terms: tuple[Term, ...]
    coefficients: tuple[float, ...]
    name: str = "searched"
    #: the part of the run time each term models (:data:`PARTS`); empty when unknown
    parts: tuple[str, ...] = ()

    @property
    def n_coefficients(self) -> int:
        return len(self.terms)

    @property
    def expr(self) -> sympy.Expr:
        return term_sum(self.terms, self.coefficients)

    def _contributions(self, frame: Mapping[str, Any]) -> tuple[int, list[tuple[str, np.ndarray]]]:
        """The number of rows and each non-zero term's ``(part, c * term)`` at the rows of ``frame``."""
        n_rows = getattr(frame, "n_rows", None)
        if n_rows is None:
            n_rows = len(frame[next(iter(frame))]) if len(frame) else 1
        columns = {k: np.asarray(frame[k], float) for k in frame}
        parts = self.parts or ("",) * len(self.terms)
        return n_rows, [(q, c * t.evaluate(columns, n_rows))
                        for c, t, q in zip(self.coefficients, self.terms, parts) if c != 0.0]

    def predict(self, frame: Mapping[str, Any]) -> np.ndarray:
        n_rows, contributions = self._contributions(frame)
        return sum((v for _, v in contributions), np.zeros(n_rows))

    def predict_parts(self, frame: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The prediction split into its parts (:data:`PARTS` order, the parts it has), summing to
        :meth:`predict`; empty when the parts are unknown."""
        n_rows, contributions = self._contributions(frame)
        out: dict[str, np.ndarray] = {part: np.zeros(n_rows) for part in PARTS if part in self.parts}
        for part, value in contributions if self.parts else ():
            out[part] = out[part] + value
        return out

    @classmethod
    def from_fit(cls, terms: Sequence[Term], coefficients: Sequence[float], parts: Sequence[str] = ()
                 ) -> "TermModel":
        """The fitted sum without the terms that non-negative least squares set to exactly zero (they
        are not part of the model); the first term with coefficient 0 when every one is zero.
        ``parts`` names the part of each term (:data:`PARTS`), when known."""
        labels = list(parts) or [""] * len(terms)
        kept = [(t, float(c), q) for t, c, q in zip(terms, coefficients, labels) if c != 0.0] or [
            (terms[0], 0.0, labels[0])]
        return cls(tuple(t for t, _, _ in kept), tuple(c for _, c, _ in kept),
                   parts=tuple(q for _, _, q in kept) if parts else ())

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": "terms", "terms": [t.to_dict() for t in self.terms],
               "coefficients": [float(c) for c in self.coefficients]}
        return {**out, "parts": list(self.parts)} if self.parts else out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], params: frozenset[str]) -> "TermModel":
        terms = d.get("terms")
        coefs = d.get("coefficients")
        if not isinstance(terms, list) or not isinstance(coefs, list) or len(terms) != len(coefs):
            raise ModelFileError("model body: 'terms' and 'coefficients' must be lists of equal length")
        if len(terms) > 64:
            raise ModelFileError(f"model body: {len(terms)} terms, at most 64 expected")
        for i, c in enumerate(coefs):
            if not finite_number(c):
                raise ModelFileError(f"model body: coefficient {i} must be a finite number, got {shown(c)}")
        parts = d.get("parts", [])
        if not isinstance(parts, list) or (parts and len(parts) != len(terms)) or any(q not in PARTS for q in parts):
            raise ModelFileError(f"model body: 'parts' must be a list naming one of {', '.join(PARTS)} per "
                                 f"term, got {shown(parts)}")
        return cls(tuple(term_from_dict(t, params, f"term {i}") for i, t in enumerate(terms)),
                   tuple(float(c) for c in coefs), parts=tuple(parts))


def term_batches(cores: Sequence[Any], columns: Mapping[str, np.ndarray], n_rows: int
                 ) -> tuple[np.ndarray, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The term models among ``cores`` for batched work: every distinct term evaluated once at the rows
    of ``columns`` (``(n_rows, T)`` values), and per width the members' positions in ``cores``, their
    ``(G, width)`` term columns and ``(G, width)`` coefficients."""
    is_terms = [isinstance(c, TermModel) for c in cores]
    distinct = list(dict.fromkeys(t for c, ok in zip(cores, is_terms) if ok for t in c.terms))
    index = {t: j for j, t in enumerate(distinct)}
    values = term_values(distinct, dict(columns), n_rows) if distinct else np.empty((n_rows, 0))
    widths = np.array([len(c.terms) if ok else 0 for c, ok in zip(cores, is_terms)])
    groups = {}
    for width in np.unique(widths[np.array(is_terms, bool)]) if any(is_terms) else ():
        members = np.flatnonzero(np.array(is_terms, bool) & (widths == width))
        columns_of = np.array([[index[t] for t in cores[i].terms] for i in members], dtype=np.intp)
        coefs = np.array([cores[i].coefficients for i in members], float).reshape(len(members), int(width))
        groups[int(width)] = (members, columns_of, coefs)
    return values, groups


def predict_many(cores: Sequence[Any], frame: pd.DataFrame,
                 batches: tuple[np.ndarray, dict] | None = None) -> np.ndarray:
    """``(len(cores), len(frame))`` predictions of ``cores`` at the rows of ``frame`` (canonical
    columns): the term models in one product per width (:func:`term_batches`, or ``batches`` made
    before), the others one by one; NaN where a core cannot predict."""
    values, groups = batches if batches is not None else term_batches(
        cores, {q: frame[q].to_numpy(float) for q in frame}, len(frame))
    pred = np.full((len(cores), len(frame)), np.nan)
    by_term = np.ascontiguousarray(values.T)  # (T, m): each term's values contiguous
    step = max(1, ROW_BUDGET // max(2 * len(frame), 1))  # models predicted at once: bounded memory
    for members, columns_of, coefs in groups.values():
        for lo in range(0, len(members), step):
            part = slice(lo, lo + step)
            total = np.zeros((len(members[part]), len(frame)))
            for j in range(columns_of.shape[1]):
                total += by_term.take(columns_of[part, j], axis=0) * coefs[part, j, None]
            pred[members[part]] = total
    done = {int(i) for members, _, _ in groups.values() for i in members}
    for i, core in enumerate(cores):
        if i not in done:
            try:
                with np.errstate(all="ignore"):
                    pred[i] = np.asarray(core.predict(frame), float)
            except (DataError, ValueError, ArithmeticError):
                pass
    return pred


@dataclass
class Model:
    """A fitted model with its context; what ``automodel.fit(...).best`` returns.

    Attributes
    ----------
    core : Core
        A :class:`TermModel` or a fitted template (``expr``, ``predict``, ``n_coefficients``,
        ``to_dict``, ``name``).
    params : tuple of str
        Canonical parameter names the model was trained on.
    roles : dict
        Canonical name -> the user's column name (``time`` included).
    ranges : dict
        Training range ``[min, max]`` of each parameter.
    metrics : dict
        Scores on the training data (see :mod:`automodel.solve.metrics`).
    space : str
        Name of the search space that produced it.
    """

    core: Core
    params: tuple[str, ...]
    roles: dict[str, str]
    ranges: dict[str, list[float]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    space: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    interval: Interval | None = None

    @property
    def unit(self) -> str:
        """The unit of the times it predicts (``options["unit"]``; seconds when the data did not say)."""
        return str(self.options.get("unit", "s"))

    # -- what a notebook shows ----------------------------------------------------------------
    def __repr__(self) -> str:
        ranges = ", ".join(f"{self.roles.get(q, q)} {r[0]:g}..{r[1]:g}" for q, r in self.ranges.items())
        band = "with" if self.interval is not None else "without"
        return f"Model({self.name}: T = {self.formula}; trained on {ranges or 'no ranges'}; {band} a band)"

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(f"<tr><td>{escape(k)}</td><td>{v:.4g}</td></tr>" for k, v in self.metrics.items()
                       if isinstance(v, (int, float)))
        return (f"<p><b>{escape(self.name)}</b>: T = <code>{escape(self.formula)}</code></p>"
                f"<p>{escape(repr(self).split('; ', 1)[1].rstrip(')'))}</p>"
                + (f"<table><tr><th>metric</th><th>value</th></tr>{rows}</table>" if rows else ""))

    # -- the mathematics ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.core.name

    @property
    def expr(self) -> sympy.Expr:
        """The model as a sympy expression in the canonical symbols ``n``, ``p``, ``cpu``, ``bw``, ..."""
        return self.core.expr

    @property
    def formula(self) -> str:
        """The formula as one line of text (:mod:`automodel.text.printing`)."""
        from automodel.text import printing

        if isinstance(self.core, TermModel):
            return printing.formula(self.core.terms, self.core.coefficients)
        return printing.to_text(self.expr)

    def _columns(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>") -> Columns:
        """Canonical parameter columns from user data (user column names first, canonical names second):
        a DataFrame, :class:`~automodel.data.rows.Rows` or a mapping of column name -> values."""
        if hasattr(data, "columns"):
            frame, names, n_rows = data, list(data.columns), len(data)
        else:
            frame = {k: np.atleast_1d(np.asarray(v, float)) for k, v in data.items()}
            names, n_rows = list(frame), max((len(v) for v in frame.values()), default=0)
        out = {}
        for q in self.params:
            col = self.roles.get(q, q)
            if col not in names:
                if q in names:
                    col = q
                elif q in ("cpu", "bw"):
                    out[q] = np.ones(n_rows)  # a dedicated machine
                    continue
                else:
                    raise DataError(f"{source}, column '{col}': missing; the model needs "
                                    f"{', '.join(self.roles.get(x, x) for x in self.params)}")
            # where each row is: the lines or records the rows carry (a file's, a request's), else a CSV's
            where = rows_of(frame) if {"lines", "first_row"} & set(getattr(frame, "attrs", {})) else (
                2 if source != "<DataFrame>" else 0)
            out[q] = numeric(frame, col, q, source, where)
        return Columns(out, n_rows)

    def _input(self, core: Any, columns: Columns) -> Any:
        """What ``core`` reads: the columns themselves for a term model, a DataFrame for a template."""
        return columns if isinstance(core, TermModel) else columns.frame()

    def predict(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>",
                checked: bool = True) -> np.ndarray:
        """Predicted time for every row of ``data`` (columns named as in training, or canonically).

        Missing ``cpu``/``bw`` columns mean a dedicated machine (1.0). ``checked=False``: NaN or an
        infinity where the model gives no finite time, for rows the engine makes rather than reads (the
        points of a plot's curve), where an error would name a row no file has.

        Raises
        ------
        DataError
            When the model gives no finite time for a row (a fractional power of a negative number, an
            overflow far outside the training range): the row, its parameters and the value.
        """
        columns = self._columns(data, source)
        with np.errstate(all="ignore"):
            t = np.asarray(self.core.predict(self._input(self.core, columns)), float)
        bad = ~np.isfinite(t)
        if checked and bad.any():
            i = int(np.argmax(bad))
            at = ", ".join(f"{self.roles.get(q, q)} = {columns[q][i]:g}" for q in self.params)
            row = i + (2 if source != "<DataFrame>" else 0)
            raise DataError(f"{source}, row {row}: the model predicts no finite time at {at or 'this row'} "
                            f"(got {t[i]:g}; trained on {self._training_ranges()})")
        return t

    def predict_averaged(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>") -> np.ndarray:
        """The geometric mean of this model's prediction and those of the candidates the data cannot
        tell apart from it (its band's alternatives), at every row; this model's own prediction where
        it has no alternatives. Alternatives that predict no positive time at a row are left out there.
        """
        t = self.predict(data, source)
        if self.interval is None or not self.interval.alternatives:
            return t
        columns = self._columns(data, source)
        with np.errstate(all="ignore"):
            logs = np.column_stack([np.log(t)] + [np.log(np.asarray(a.predict(self._input(a, columns)), float))
                                                  for a in self.interval.alternatives])
        finite = np.isfinite(logs)
        mean = np.where(finite, logs, 0.0).sum(axis=1) / np.maximum(finite.sum(axis=1), 1)
        return np.where((t > 0) & finite.any(axis=1), np.exp(mean), t)

    def described(self) -> str:
        """``T in ms; n: column size, 1000 to 8000; p: column procs, 1 to 16``: what the formula's symbols
        are and where they were measured, the line ``automodel show`` prints under the formula (it spoke of
        ``n`` and ``p`` to one whose file said ``size`` and ``procs``, and of no unit)."""
        parts = [f"T in {self.unit}"]
        for q in self.params:
            column = self.roles.get(q, q)
            where = [f"column {column}"] if column != q else []
            if q in self.ranges:
                where.append(f"{self.ranges[q][0]:g} to {self.ranges[q][1]:g}")
            parts.append(f"{q}: {', '.join(where)}" if where else q)
        return "; ".join(parts)

    def _parameter_names(self, params: Sequence[str] | None = None) -> str:
        """``n (column 'size'), p (column 'procs'), iters``: the parameters by the names :meth:`best_p`
        takes, with the column each was read from where it differs."""
        return ", ".join(q if self.roles.get(q, q) == q else f"{q} (column {self.roles[q]!r})"
                         for q in (self.params if params is None else params))

    def _training_ranges(self) -> str:
        """``n in [1000, 8000], p in [1, 8]``: where the model was fitted, for messages."""
        return ", ".join(f"{self.roles.get(q, q)} in [{lo:g}, {hi:g}]" for q, (lo, hi) in self.ranges.items()
                         ) or "no parameter"

    def predict_parts(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>") -> pd.DataFrame:
        """The prediction at every row of ``data`` split into its parts (columns of :data:`PARTS` that
        the model has), which sum to :meth:`predict`.

        Searched models know the part of each term from the stage that added it; templates whose
        equations separate the parts define ``predict_parts`` (FiM-Cal: computation, FiM-Com:
        communication, the rational polynomial: its CPU and bandwidth polynomials).

        Raises
        ------
        DataError
            When the model does not tell its parts apart (a p-only or pmnf search, most templates).
        """
        columns = self._columns(data, source)
        fn = getattr(self.core, "predict_parts", None)
        with np.errstate(all="ignore"):
            parts = fn(self._input(self.core, columns)) if fn is not None else {}
        if not parts:
            raise DataError(f"this model ({self.name}) does not tell computation and communication apart "
                            "(only searched models with n and p, FiM-Cal, FiM-Com and the rational "
                            "polynomial do)")
        import pandas as pd

        return pd.DataFrame({q: np.asarray(v, float) for q, v in parts.items()})

    def predict_interval(self, data: pd.DataFrame | Mapping[str, Any], level: float = 0.9, kind: str = "run",
                         source: str = "<DataFrame>") -> tuple[np.ndarray, np.ndarray] | None:
        """Lower and upper ends of the ``level`` prediction band at every row of ``data``.

        ``kind="run"`` covers one new run (repetition noise included), ``"mean"`` the expected time of
        the configuration. The band is the model's :class:`~automodel.model.interval.Interval` (every model
        that :func:`automodel.fit` returns has one); a model without one (built by hand) gives its
        core's own band when it has one (a posterior, a simulation), else ``None``. Rows where the
        model predicts no positive time get NaN.
        """
        if not 0 < level < 1:
            raise DataError(f"level must be between 0 and 1 (exclusive), got {shown(level)}")
        columns = self._columns(data, source)
        if self.interval is None:
            fn = getattr(self.core, "predict_interval", None)
            return None if fn is None else fn(self._input(self.core, columns), level=level)
        with np.errstate(all="ignore"):
            yhat = np.asarray(self.core.predict(self._input(self.core, columns)), float)
        return self.interval.bounds(columns, self.core, yhat, level, kind)

    def default_p_max(self) -> int:
        """The largest process count :meth:`best_p` searches by default: 4x the largest trained p, at
        least 64."""
        return min(MAX_P, int(max(64, 4 * self.ranges.get("p", [1, 16])[1])))

    def best_p(self, n: float | None = None, cpu: float = 1.0, bw: float = 1.0, p_max: int | None = None,
               p_min: int = 1, level: float = 0.9, **extras: float) -> BestP:
        """The integer process count in ``[p_min, p_max]`` with the least predicted time, and its range.

        ``p_max`` defaults to 4x the largest trained p (at least 64). ``n`` and the ``extras`` (the
        other parameters, by name) may also be given by their columns' names, as :meth:`predict` reads
        them (``size=16000`` for a model fitted with ``n="size"``). Ranges of up to
        :data:`EXHAUSTIVE_P` counts are searched exhaustively; wider ones coarse to fine
        (:func:`best_integer`), so the work is bounded for any ``p_max`` up to :data:`MAX_P`. The
        result (:class:`BestP`) carries the ``level`` band of the time there, the range of counts the
        model cannot tell apart from the best, and warnings.

        Raises
        ------
        DataError
            A ``p_min`` or ``p_max`` that is not a whole number in ``[1, MAX_P]``, ``p_max < p_min``, a
            missing or non-finite ``n`` or extra value, an extra the model does not have (it was ignored
            without a word), ``n`` given twice, ``cpu`` or ``bw`` outside (0, 1], or a model that
            predicts no positive finite time at the best count.
        """
        if "p" not in self.params:
            raise DataError("this model does not depend on p, so it has no best process count")
        if not 0 < level < 1:
            raise DataError(f"level must be between 0 and 1 (exclusive), got {shown(level)}")
        default = p_max is None
        if default:
            p_max = self.default_p_max()
        p_min, p_max = whole_number("p_min", p_min, 1), whole_number("p_max", p_max, 1)
        if p_max < p_min:
            raise DataError(f"p_max must be >= p_min ({p_min}), got {p_max}"
                            f"{' (the default: 4x the largest trained p, at least 64)' if default else ''}")
        values: dict[str, Any] = {"n": n, "cpu": float_argument("cpu", cpu), "bw": float_argument("bw", bw)}
        columns = {self.roles.get(q, q): q for q in self.params}  # a parameter by its column too, as predict
        for name, v in extras.items():  # reads it: best_p(size=16000) of a model fitted with n="size"
            q = columns.get(name, name)
            if q == "p" or q not in self.params:
                raise DataError(f"best p: {'p is what it chooses' if q == 'p' else f'no parameter {name!r}'}; "
                                f"the model's parameters: {self._parameter_names()}")
            if q == "n" and n is not None:
                raise DataError(f"best p: n given twice, as n and as its column {name!r}")
            values[q] = v
        fixed = {}
        for q in self.params:
            if q == "p":
                continue
            v = values.get(q)
            if v is None:
                raise DataError(f"best p needs a value of {self._parameter_names([q])}")
            fixed[q] = float_argument(q, v)

        import pandas as pd

        def frame(ps: np.ndarray) -> pd.DataFrame:
            return pd.DataFrame({q: np.full(len(ps), fixed[q]) if q != "p" else ps for q in self.params})

        def raw(ps: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return np.asarray(self.core.predict(frame(ps)), float)

        def times(ps: np.ndarray) -> np.ndarray:
            t = raw(ps)
            return np.where(np.isfinite(t) & (t > 0), t, np.inf)

        p, t = best_integer(times, p_min, p_max)
        at = ", ".join(f"{self.roles.get(q, q)} = {v:g}" for q, v in fixed.items())
        if not np.isfinite(t):
            raise DataError(f"the model predicts no positive finite time for p in [{p_min}, {p_max}]"
                            f"{' at ' + at if at else ''}")
        grid = (np.arange(p_min, p_max + 1, dtype=float) if p_max - p_min < RANGE_GRID else
                np.unique(np.concatenate([np.round(np.geomspace(p_min, p_max, RANGE_GRID)), [p]])))
        grid_t = raw(grid)
        warnings = self._best_p_warnings(p, t, p_min, p_max, grid, grid_t, fixed)
        if self.interval is None:
            return BestP(p, t, level=level, p_low=p, p_high=p, warnings=warnings, unit=self.unit)
        here = frame(np.array([float(p)]))
        (lower,), (upper,) = self.interval.bounds(here, self.core, np.array([t]), level)
        (_,), (limit,) = self.interval.bounds(here, self.core, np.array([t]), level, kind="mean")
        close = np.isfinite(grid_t) & (grid_t > 0) & (grid_t <= limit)  # limit inf: an unbounded band
        i = int(np.searchsorted(grid, p))
        close[i] = True
        left, right = close[i::-1], close[i:]
        lo_i = i - (len(left) if left.all() else int(np.argmin(left))) + 1
        hi_i = i + (len(right) if right.all() else int(np.argmin(right))) - 1
        return BestP(p, t, float(lower), float(upper), int(grid[lo_i]), int(grid[hi_i]), level, warnings,
                     self.unit)

    def _best_p_warnings(self, p: int, t: float, p_min: int, p_max: int, grid: np.ndarray, grid_t: np.ndarray,
                         fixed: Mapping[str, float]) -> tuple[str, ...]:
        """What a user must know about a best p: see :class:`BestP`."""
        out = []
        for q, v in fixed.items():
            low, high = self.ranges.get(q, [v, v])
            if v > BEYOND_FACTOR * high > 0 or 0 < v < low / BEYOND_FACTOR:
                name = self.roles.get(q, q)
                out.append(f"{name} = {v:g} is outside its measured range {low:g} to {high:g} by more than "
                           f"{BEYOND_FACTOR:g}x: an extrapolation")
        lo, hi = self.ranges.get("p", [math.nan, math.nan])
        if p > BEYOND_FACTOR * hi:
            out.append(f"best p = {p} is {p / hi:.3g}x the largest measured p ({hi:g}): an extrapolation")
        elif p < lo / BEYOND_FACTOR:
            out.append(f"best p = {p} is below the smallest measured p ({lo:g}) by {lo / p:.3g}x: an extrapolation")
        if p == p_max and p_max > p_min:
            out.append(f"best p = {p} is the upper end of the searched range {p_min}-{p_max}: the time may "
                       f"still fall beyond it (raise p_max: automodel best-p MODEL --p-max N)")
        elif p == p_min and p_min > 1:
            out.append(f"best p = {p} is the lower end of the searched range {p_min}-{p_max} (lower p_min: "
                       "--p-min of automodel best-p)")
        noise = self.interval.noise_seconds if self.interval is not None else 0.0
        if t < noise:
            out.append(f"the predicted time {t:.3g} {self.unit} is below the noise of the fit "
                       f"({noise:.3g} {self.unit})")
        bad = ~(np.isfinite(grid_t) & (grid_t > 0))
        if bad.any():
            out.append(f"the model predicts no positive time at {int(bad.sum())} of {len(grid)} counts "
                       f"evaluated (first p = {grid[bad][0]:g}); they were skipped")
        return tuple(out)

    # -- files -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "space": self.space, "params": list(self.params),
                "roles": dict(self.roles), "ranges": self.ranges,
                "metrics": {k: (float(v) if np.isfinite(v) else None) for k, v in self.metrics.items()},
                "options": self.options, "formula": self.formula, "model": self.core.to_dict(),
                **({"interval": self.interval.to_dict()} if self.interval is not None else {})}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def save(self, path: str | Path) -> None:
        """Write the JSON file atomically (:func:`automodel.files.write_text`); read it back with
        :func:`automodel.model_file.load_model`."""
        write_text(path, self.to_json())
