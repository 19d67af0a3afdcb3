"""Baseline templates: Prophesy's cubic, RBASP's log-linear regression, Amdahl's law.

What every template shares (the base class, column access, validation of model dictionaries, the
standard error) is in :mod:`automodel.templates.base`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError, ModelFileError
from automodel.templates.base import (MODEL_VERSION, ColumnTemplate, check_option, column, frame_source, read_float,
                                      read_floats, read_header, read_notes, solve_weighted, standard_error, times,
                                      whole)

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["TEMPLATES", "PROPHESY", "RBASP", "AMDAHL", "PolynomialModel", "RbaspModel", "AmdahlModel",
           "ProphesyTemplate", "RbaspTemplate", "AmdahlTemplate"]

#: the degrees of Prophesy's polynomial (a model file holds 1 to 8 coefficients)
DEGREES = (0, 7)
#: RBASP's g(p): linear or quadratic in log2 p, or the one of lower standard error
G_CHOICES = ("linear", "quadratic", "auto")
#: columns that are never RBASP's x_i: the time it regresses (log2 T on log2 T fitted exactly, led the
#: leaderboard and could predict nothing) and p, which enters through g(p)
NOT_VARIABLES = ("time", "p")


def _f(x: float) -> sympy.Float:
    import sympy
    return sympy.Float(float(x))


# --------------------------------------------------------------------------------------------
# Prophesy: a n^3 + b n^2 + c n + d
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolynomialModel:
    """A single polynomial in ``n`` (Prophesy), coefficients from degree 0 upwards."""

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    coefficients: tuple[float, ...]
    notes: tuple[str, ...] = ()
    name: str = "prophesy"

    @property
    def n_coefficients(self) -> int:
        return len(self.coefficients)

    @property
    def expr(self) -> sympy.Expr:
        import sympy
        from automodel.space.symbols import symbol
        n = symbol("n")
        return sympy.Add(*[_f(c) * n**j for j, c in enumerate(self.coefficients)])

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        n = column(frame, "n")
        return np.vander(n, len(self.coefficients), increasing=True) @ np.asarray(self.coefficients)

    def to_dict(self) -> dict:
        return {"kind": "template", "template": self.name, "version": MODEL_VERSION,
                "coefficients": list(self.coefficients), "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "PolynomialModel":
        read_header(d, "prophesy")
        coef = read_floats(d, "coefficients")
        if not whole(len(coef) - 1, *DEGREES):
            raise ModelFileError(f"model field 'coefficients': expected {DEGREES[0] + 1} to {DEGREES[1] + 1} numbers")
        return cls(coefficients=coef, notes=read_notes(d))


@dataclass(frozen=True)
class ProphesyTemplate(ColumnTemplate):
    """Prophesy's one-dimensional polynomial ``a n^3 + b n^2 + c n + d`` fitted by least squares."""

    model_class: ClassVar[type] = PolynomialModel

    name: str = "prophesy"
    title: str = "Prophesy cubic polynomial in n"
    source: str = ("rational-polynomial-yagnik-icpp2006.txt, sec. 4.1 (Prophecy's model ax^3 + bx^2 + cx + d)")
    requires: tuple[str, ...] = ("n",)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The check of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        degree = options["degree"]
        check_option(whole(degree, *DEGREES), "prophesy", "degree", f"a whole number from {DEGREES[0]} to "
                     f"{DEGREES[1]}", degree)

    def fit(self, frame: pd.DataFrame, degree: int = 3, relative: bool = False, **options: Any) -> PolynomialModel:
        """Fit the polynomial of ``degree`` (default 3) by ordinary (or relative, ``1/T``-weighted) least squares.

        Examples
        --------
        >>> import pandas as pd
        >>> f = pd.DataFrame({"n": [1.0, 2, 3, 4, 5], "time": [2.0, 9, 28, 65, 126]})
        >>> [round(c, 6) + 0.0 for c in PROPHESY.fit(f).coefficients]
        [1.0, 0.0, 0.0, 1.0]
        """
        self.check_options({"degree": degree})
        t = times(frame, min_rows=1)
        n = column(frame, "n")
        n_distinct = np.unique(n).size
        notes: list[str] = []
        if n_distinct <= degree:
            notes.append(f"degree lowered from {degree} to {n_distinct - 1}: only {n_distinct} distinct n")
            degree = n_distinct - 1
        scale = float(np.max(n))
        basis = np.vander(n / scale, degree + 1, increasing=True)
        coef, _ = solve_weighted(basis, t, relative=relative, nonnegative=False)
        coef = coef / scale ** np.arange(degree + 1)
        return PolynomialModel(coefficients=tuple(float(c) for c in coef), notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# RBASP: log2 T = b0 + sum_i b_i log2 x_i + g(p)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RbaspModel:
    """``log2 T = b0 + sum_i b_i log2 x_i + g1 log2 p (+ g2 log2^2 p)`` (fim-bhimani eq. 17)."""

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    intercept: float
    variables: tuple[str, ...]
    slopes: tuple[float, ...]
    g: tuple[float, ...]
    notes: tuple[str, ...] = ()
    name: str = "rbasp"

    @property
    def n_coefficients(self) -> int:
        return 1 + len(self.slopes) + len(self.g)

    @property
    def expr(self) -> sympy.Expr:
        import sympy
        from automodel.space.symbols import log2, symbol
        lp = log2(symbol("p"))
        exponent = _f(self.intercept) + sympy.Add(*[_f(b) * log2(symbol(v)) for v, b in zip(self.variables, self.slopes)])
        exponent += sympy.Add(*[_f(g) * lp ** (k + 1) for k, g in enumerate(self.g)])
        return sympy.Integer(2) ** exponent

    def _log_design(self, frame: pd.DataFrame) -> np.ndarray:
        lp = np.log2(column(frame, "p"))
        cols = [np.ones_like(lp)] + [np.log2(column(frame, v)) for v in self.variables]
        cols += [lp ** (k + 1) for k in range(len(self.g))]
        return np.column_stack(cols)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        coef = np.array((self.intercept, *self.slopes, *self.g))
        return np.exp2(self._log_design(frame) @ coef)

    def to_dict(self) -> dict:
        return {"kind": "template", "template": self.name, "version": MODEL_VERSION,
                "intercept": self.intercept, "variables": list(self.variables), "slopes": list(self.slopes),
                "g": list(self.g), "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "RbaspModel":
        read_header(d, "rbasp")
        variables = d.get("variables")
        if not isinstance(variables, list) or not all(isinstance(v, str) and v.isidentifier() for v in variables):
            raise ModelFileError("model field 'variables': expected a list of column names")
        slopes = read_floats(d, "slopes", length=len(variables))
        g = read_floats(d, "g")
        if len(g) not in (1, 2):
            raise ModelFileError("model field 'g': expected 1 (linear) or 2 (quadratic) numbers")
        return cls(intercept=read_float(d, "intercept"), variables=tuple(variables), slopes=slopes, g=g,
                   notes=read_notes(d))


@dataclass(frozen=True)
class RbaspTemplate(ColumnTemplate):
    """RBASP (Barnes et al. 2008 as used in fim-bhimani sec. 5, eq. 17): regression of log2 T."""

    model_class: ClassVar[type] = RbaspModel

    name: str = "rbasp"
    title: str = "RBASP log-linear regression with g(p)"
    source: str = "fim-bhimani-2019.txt, sec. 5 (RBASP), eq. 17; the x_i enter as log2 x_i"
    requires: tuple[str, ...] = ("p",)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The check of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        check_option(options["g"] in G_CHOICES, "rbasp", "g", ", ".join(map(repr, G_CHOICES)), options["g"])
        variables = options.get("variables")
        check_option(variables is None or not any(v in NOT_VARIABLES for v in variables), "rbasp", "variables",
                     "none or columns other than time and p (p enters through g)", variables)

    def fit(self, frame: pd.DataFrame, g: str = "auto", variables: Sequence[str] | None = None,
            **options: Any) -> RbaspModel:
        """Fit by ordinary least squares in log2 space.

        Parameters
        ----------
        g : "linear", "quadratic" or "auto" (lower standard error of log2 T; needs enough rows).
        variables : the x_i; default every numeric column except ``time`` and ``p`` that varies.
        """
        self.check_options({"g": g, "variables": variables})
        t = times(frame)
        lp = np.log2(column(frame, "p"))
        notes: list[str] = []
        if variables is None:
            variables = [c for c in frame.columns if c not in NOT_VARIABLES
                         and pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() > 1]
        logs = [np.log2(column(frame, v)) for v in variables]
        y = np.log2(t)
        fits = []
        for degree in ((1, 2) if g == "auto" else (1 if g == "linear" else 2,)):
            basis = np.column_stack([np.ones_like(y), *logs, *[lp ** (k + 1) for k in range(degree)]])
            if basis.shape[0] < basis.shape[1] or np.linalg.matrix_rank(basis) < basis.shape[1]:
                continue
            coef, res = solve_weighted(basis, y, relative=False, nonnegative=False)
            fits.append((standard_error(res, basis.shape[1]), degree, coef))
        if not fits:
            raise DataError(f"{frame_source(frame)}: rbasp needs more distinct p values / rows than coefficients")
        se, degree, coef = min(fits, key=lambda f: f[0])
        if g == "auto":
            notes.append(f"g(p) chosen {'quadratic' if degree == 2 else 'linear'} (standard error of log2 T {se:.4g})")
        k = len(variables)
        return RbaspModel(intercept=float(coef[0]), variables=tuple(variables),
                          slopes=tuple(float(c) for c in coef[1:1 + k]),
                          g=tuple(float(c) for c in coef[1 + k:]), notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# Amdahl: c1 / p + c2
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AmdahlModel:
    """Amdahl's law ``c1 / p + c2`` (bayesian-kohashi eqs. 1-2)."""

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    c1: float
    c2: float
    notes: tuple[str, ...] = ()
    name: str = "amdahl"
    n_coefficients: int = 2

    @property
    def expr(self) -> sympy.Expr:
        from automodel.space.symbols import symbol
        return _f(self.c1) / symbol("p") + _f(self.c2)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return self.c1 / column(frame, "p") + self.c2

    def to_dict(self) -> dict:
        return {"kind": "template", "template": self.name, "version": MODEL_VERSION,
                "c1": self.c1, "c2": self.c2, "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "AmdahlModel":
        read_header(d, "amdahl")
        return cls(c1=read_float(d, "c1"), c2=read_float(d, "c2"), notes=read_notes(d))


@dataclass(frozen=True)
class AmdahlTemplate(ColumnTemplate):
    """Amdahl's law with non-negative coefficients and the relative-error cost (bayesian-kohashi eq. 7)."""

    model_class: ClassVar[type] = AmdahlModel

    name: str = "amdahl"
    title: str = "Amdahl's law c1/p + c2"
    source: str = "bayesian-kohashi-2022.txt, sec. 2.1, eqs. 1-2 (T1 + T2 is Amdahl's law); cost eq. 7"
    requires: tuple[str, ...] = ("p",)

    def fit(self, frame: pd.DataFrame, relative: bool = True, nonnegative: bool = True, **options: Any) -> AmdahlModel:
        """Fit ``c1, c2 >= 0`` minimising sum ((T - T_obs) / T_obs)^2 (or plain squares if not ``relative``)."""
        t = times(frame, min_rows=2)
        p = column(frame, "p")
        if np.unique(p).size < 2:
            raise DataError(f"{frame_source(frame)}, column 'p': amdahl needs at least 2 distinct p values")
        coef, _ = solve_weighted(np.column_stack([1.0 / p, np.ones_like(p)]), t, relative, nonnegative)
        return AmdahlModel(c1=float(coef[0]), c2=float(coef[1]))


PROPHESY = ProphesyTemplate()
RBASP = RbaspTemplate()
AMDAHL = AmdahlTemplate()
TEMPLATES = [PROPHESY, RBASP, AMDAHL]
