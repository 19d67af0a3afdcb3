"""Rational polynomial models of run time under CPU and bandwidth load (Yagnik et al., ICPP 2006).

Source: rational-polynomial-yagnik-icpp2006.txt. Eqs. 1-5: ``T = P_n(n) + P_cpu(n) / cpu + P_bw(n) / bw``
(the paper's ScaLAPACK case: cubic, cubic, quadratic); eqs. 6-8: the "type 1" and "type 2"
multivariate forms ``(a n^3 + b n^2 + c n + d) / g`` with ``g = 1 + e cpu + f bw`` (eq. 7) or
``g = 1 + e cpu bw`` (eq. 8), fitted by nonlinear least squares.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError, ModelFileError
from automodel.templates.base import (MODEL_VERSION, ColumnTemplate, check_option, column, read_floats,
                                           read_header, read_notes, solve_weighted, standard_error, times, whole)

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["RATIONAL", "MULTIVARIATE_TYPE1", "MULTIVARIATE_TYPE2", "TEMPLATES", "RationalModel",
           "MultivariateModel"]

PARTS = ("n", "cpu", "bw")  # P_n, P_cpu / cpu, P_bw / bw
#: the degrees of each polynomial P (a model file holds 1 to 8 coefficients a part)
DEGREES = (0, 7)


def _poly(n: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    return np.vander(n, len(coefficients), increasing=True) @ np.asarray(coefficients, dtype=float)


def _poly_expr(coefficients: Sequence[float]) -> sympy.Expr:
    import sympy
    from automodel.space.symbols import symbol
    n = symbol("n")
    return sympy.Add(*[sympy.Float(c) * n**j for j, c in enumerate(coefficients)])


def _load_columns(frame: pd.DataFrame, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The load columns among ``names`` that are present and vary, and notes about the others."""
    kept, notes = [], []
    for name in names:
        if name not in frame.columns:
            notes.append(f"no column {name}: its part is dropped")
        elif np.unique(column(frame, name)).size < 2:
            notes.append(f"column {name} is constant: its part is dropped (absorbed by the others)")
        else:
            kept.append(name)
    return kept, notes


@dataclass(frozen=True)
class RationalModel:
    """``T = P_n(n) + P_cpu(n)/cpu + P_bw(n)/bw`` (eqs. 1-4); ``parts`` lists the parts in use, each
    with its coefficients from degree 0 upwards."""

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    parts: tuple[str, ...]
    coefficients: tuple[tuple[float, ...], ...]
    notes: tuple[str, ...] = ()
    name: str = "rational"

    @property
    def n_coefficients(self) -> int:
        return sum(len(c) for c in self.coefficients)

    @property
    def expr(self) -> sympy.Expr:
        import sympy
        from automodel.space.symbols import symbol
        return sympy.Add(*[_poly_expr(c) / (1 if part == "n" else symbol(part))
                           for part, c in zip(self.parts, self.coefficients)])

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        n = column(frame, "n")
        total = np.zeros_like(n)
        for part, c in zip(self.parts, self.coefficients):
            total += _poly(n, c) / (1.0 if part == "n" else column(frame, part))
        return total

    def predict_parts(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """``P_cpu(n)/cpu`` as the computation, ``P_bw(n)/bw`` as the communication and ``P_n(n)``,
        which the loads do not touch, as ``other`` (eqs. 1-4)."""
        n = column(frame, "n")
        names = {"n": "other", "cpu": "computation", "bw": "communication"}
        return {names[part]: _poly(n, c) / (1.0 if part == "n" else column(frame, part))
                for part, c in zip(self.parts, self.coefficients)}

    def to_dict(self) -> dict:
        return {"kind": "template", "template": "rational", "version": MODEL_VERSION, "parts": list(self.parts),
                "coefficients": [list(c) for c in self.coefficients], "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "RationalModel":
        read_header(d, "rational")
        parts, coef = d.get("parts"), d.get("coefficients")
        if (not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts)
                or len(set(parts)) != len(parts) or any(p not in PARTS for p in parts)):
            raise ModelFileError(f"model field 'parts': expected distinct names among {list(PARTS)}")
        if not isinstance(coef, list) or len(coef) != len(parts):
            raise ModelFileError("model field 'coefficients': expected one list of numbers per part")
        rows = tuple(read_floats({"c": c}, "c") for c in coef)
        if any(not whole(len(r) - 1, *DEGREES) for r in rows):
            raise ModelFileError(f"model field 'coefficients': each part needs {DEGREES[0] + 1} to {DEGREES[1] + 1} "
                                 "numbers")
        return cls(parts=tuple(parts), coefficients=rows, notes=read_notes(d))


@dataclass(frozen=True)
class RationalTemplate(ColumnTemplate):
    """Eqs. 1-5 with degrees given or searched by standard error; linear least squares."""

    model_class: ClassVar[type] = RationalModel

    name: str = "rational"
    title: str = "Rational polynomial P_n(n) + P_cpu(n)/cpu + P_bw(n)/bw"
    source: str = "rational-polynomial-yagnik-icpp2006.txt, sec. 3, eqs. 1-5"
    requires: tuple[str, ...] = ("n",)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The checks of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        degrees, max_degree = options["degrees"], options["max_degree"]
        span = f"{DEGREES[0]} to {DEGREES[1]}"
        check_option(whole(max_degree, *DEGREES), "rational", "max_degree", f"a whole number from {span}", max_degree)
        check_option(degrees == "search" or (not isinstance(degrees, str) and hasattr(degrees, "__len__") and len(degrees) == len(PARTS) and all(
            whole(d, *DEGREES) for d in degrees)), "rational", "degrees",
            f"'search' or {len(PARTS)} whole numbers from {span}", degrees)

    def fit(self, frame: pd.DataFrame, degrees: Sequence[int] | str = (3, 3, 2), max_degree: int = 3,
            relative: bool = False, **options: Any) -> RationalModel:
        """Fit the coefficients by least squares (eq. 4 is linear in them).

        Parameters
        ----------
        degrees : degrees of ``(P_n, P_cpu, P_bw)`` (default cubic, cubic, quadratic as for ScaLAPACK,
            sec. 3), or ``"search"``: every combination up to ``max_degree``, lowest standard error.
        relative : weight rows by ``1/T``.
        """
        self.check_options({"degrees": degrees, "max_degree": max_degree})
        t = times(frame)
        n = column(frame, "n")
        loads, notes = _load_columns(frame, ("cpu", "bw"))
        parts = ("n", *loads)
        scale = float(np.max(n))
        if isinstance(degrees, str):
            choices = list(itertools.product(range(max_degree + 1), repeat=len(parts)))
        else:
            choices = [tuple(int(d) for d, part in zip(degrees, PARTS) if part in parts)]
        divisors = [np.ones_like(n) if part == "n" else column(frame, part) for part in parts]
        best = None
        for degs in choices:
            basis = np.column_stack([np.vander(n / scale, d + 1, increasing=True) / div[:, None]
                                     for d, div in zip(degs, divisors)])
            if basis.shape[0] <= basis.shape[1] or np.linalg.matrix_rank(basis) < basis.shape[1]:
                continue
            coef, res = solve_weighted(basis, t, relative=relative, nonnegative=False)
            se = standard_error(res, basis.shape[1])
            if best is None or se < best[0]:
                best = (se, degs, coef)
        if best is None:
            raise DataError(f"{frame.attrs.get('source', 'data')}: too few rows / distinct n for degrees {choices[0]}")
        se, degs, coef = best
        if isinstance(degrees, str):
            notes.append(f"degrees {dict(zip(parts, degs))} chosen by standard error {se:.4g}")
        split = np.cumsum([d + 1 for d in degs])[:-1]
        rows = tuple(tuple(float(v) for v in c / scale ** np.arange(c.size)) for c in np.split(coef, split))
        return RationalModel(parts=parts, coefficients=rows, notes=tuple(notes))


@dataclass(frozen=True)
class MultivariateModel:
    """``(a n^3 + b n^2 + c n + d) / g`` with ``g`` of eq. 7 (type 1) or eq. 8 (type 2)."""

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    kind: str                      # "type1" or "type2"
    loads: tuple[str, ...]         # load columns used in g
    numerator: tuple[float, ...]   # d, c, b, a (degree 0 upwards)
    g: tuple[float, ...]           # e (and f for type 1 with both loads)
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"multivariate_{self.kind}"

    @property
    def n_coefficients(self) -> int:
        return len(self.numerator) + len(self.g)

    def _g_terms(self, values: Sequence[Any]) -> list[Any]:
        if self.kind == "type2" and len(values) == 2:
            return [values[0] * values[1]]
        return list(values)

    @property
    def expr(self) -> sympy.Expr:
        import sympy
        from automodel.space.symbols import symbol
        terms = self._g_terms([symbol(v) for v in self.loads])
        g = 1 + sympy.Add(*[sympy.Float(e) * x for e, x in zip(self.g, terms)])
        return _poly_expr(self.numerator) / g

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        n = column(frame, "n")
        terms = self._g_terms([column(frame, v) for v in self.loads])
        g = 1.0 + sum((e * x for e, x in zip(self.g, terms)), np.zeros_like(n))
        return _poly(n, self.numerator) / g

    def to_dict(self) -> dict:
        return {"kind": "template", "template": self.name, "version": MODEL_VERSION, "type": self.kind,
                "loads": list(self.loads), "numerator": list(self.numerator), "g": list(self.g),
                "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "MultivariateModel":
        kind = d.get("type") if isinstance(d, dict) else None
        if kind not in ("type1", "type2"):
            raise ModelFileError(f"model field 'type': expected 'type1' or 'type2', got {kind!r:.40}")
        read_header(d, f"multivariate_{kind}")
        loads = d.get("loads")
        if not isinstance(loads, list) or any(v not in ("cpu", "bw") for v in loads) or len(set(loads)) != len(loads):
            raise ModelFileError("model field 'loads': expected a subset of ['cpu', 'bw']")
        n_g = 1 if kind == "type2" and len(loads) == 2 else len(loads)
        return cls(kind=kind, loads=tuple(loads), numerator=read_floats(d, "numerator", length=4),
                   g=read_floats(d, "g", length=n_g), notes=read_notes(d))


@dataclass(frozen=True)
class MultivariateTemplate(ColumnTemplate):
    """Type 1 / type 2 multivariate forms (eqs. 6-8) by nonlinear least squares."""

    model_class: ClassVar[type] = MultivariateModel

    kind: str = "type1"
    requires: tuple[str, ...] = ("n",)

    @property
    def name(self) -> str:
        return f"multivariate_{self.kind}"

    @property
    def title(self) -> str:
        g = "1 + e*cpu + f*bw" if self.kind == "type1" else "1 + e*cpu*bw"
        return f"Multivariate {self.kind.replace('type', 'type ')}: (a n^3 + b n^2 + c n + d) / ({g})"

    @property
    def source(self) -> str:
        return f"rational-polynomial-yagnik-icpp2006.txt, sec. 4.1, eq. 6 with eq. {7 if self.kind == 'type1' else 8}"

    def fit(self, frame: pd.DataFrame, relative: bool = False, **options: Any) -> MultivariateModel:
        """Fit ``a, b, c, d, e (, f)`` with :func:`scipy.optimize.least_squares` (trust region),
        started from the linear fit of the numerator with ``g = 1``; missing or constant load
        columns are dropped from ``g`` (noted). Without load columns that linear fit is the fit
        (the same residuals, no ``e``, ``f``), and scipy.optimize (0.6 s of CPU to import) is not
        loaded."""
        t = times(frame)
        n = column(frame, "n")
        loads, notes = _load_columns(frame, ("cpu", "bw"))
        probe = MultivariateModel(self.kind, tuple(loads), (0.0,) * 4, ())
        terms = probe._g_terms([column(frame, v) for v in loads])
        k_num = min(4, int(np.unique(n).size))
        if t.size < k_num + len(terms):
            raise DataError(f"{frame.attrs.get('source', 'data')}: {self.name} needs at least "
                            f"{k_num + len(terms)} rows, got {t.size}")
        scale = float(np.max(n))
        v = np.vander(n / scale, k_num, increasing=True)
        z = np.column_stack(terms) if terms else np.zeros((n.size, 0))
        w = 1.0 / t if relative else np.ones_like(t)
        x0 = np.concatenate([solve_weighted(v, t, relative, nonnegative=False)[0], np.zeros(z.shape[1])])
        t_scale = float(np.median(t))

        def residuals(x: np.ndarray) -> np.ndarray:
            g = 1.0 + z @ x[k_num:]
            return (v @ x[:k_num] / g - t) * w / (1.0 if relative else t_scale)

        if terms:
            from scipy.optimize import least_squares

            fit = least_squares(residuals, x0, x_scale="jac", method="trf")
            x, converged, message = fit.x, fit.success, fit.message
        else:
            x, converged, message = x0, True, ""
        num = x[:k_num] / scale ** np.arange(k_num)
        numerator = tuple(float(c) for c in np.concatenate([num, np.zeros(4 - k_num)]))
        if not terms:
            notes.append("no load columns: g = 1 (the Prophesy cubic)")
        if not converged:
            notes.append(f"least_squares did not converge: {message}")
        return MultivariateModel(self.kind, tuple(loads), numerator, tuple(float(e) for e in x[k_num:]),
                                 tuple(notes))


RATIONAL = RationalTemplate()
MULTIVARIATE_TYPE1 = MultivariateTemplate("type1")
MULTIVARIATE_TYPE2 = MultivariateTemplate("type2")
TEMPLATES = [RATIONAL, MULTIVARIATE_TYPE1, MULTIVARIATE_TYPE2]
