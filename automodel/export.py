"""Exports of a model's formula: one sympy printer per format, no string surgery.

``log2`` is :class:`sympy.codegen.cfunctions.log2`, so C prints ``log2(p)`` and Python
``math.log2(p)`` natively; two small printer subclasses make LaTeX print ``\\log_{2}`` and C print
floats with 17 significant digits (round-trip exact) instead of sympy's default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import sympy
from sympy.printing.c import C99CodePrinter
from sympy.printing.latex import LatexPrinter
from sympy.printing.pycode import PythonCodePrinter

if TYPE_CHECKING:
    from automodel.model import Model

__all__ = ["FORMATS", "export", "to_text", "to_latex", "to_python", "to_c"]


class _Latex(LatexPrinter):
    def _print_log2(self, expr, exp=None):
        arg = self._print(expr.args[0])
        base = rf"\log_{{2}}\left({arg}\right)"
        return rf"{base}^{{{exp}}}" if exp else base


class _C(C99CodePrinter):
    def _print_Float(self, flt):
        return repr(float(flt))


class _Python(PythonCodePrinter):
    def _print_Float(self, flt):
        return repr(float(flt))


def _rounded(expr: sympy.Expr, digits: int) -> sympy.Expr:
    return expr.xreplace({f: sympy.Float(f, digits) for f in expr.atoms(sympy.Float)})


def to_text(expr: sympy.Expr, digits: int = 4) -> str:
    """A readable one-line formula with ``digits`` significant digits per coefficient."""
    return sympy.sstr(_rounded(expr, digits)).replace("**", "^")


def to_latex(expr: sympy.Expr, digits: int = 4) -> str:
    return _Latex().doprint(_rounded(expr, digits))


def to_c(expr: sympy.Expr) -> str:
    """A C99 expression (uses ``log2``, ``pow``, ``exp``, ``ceil`` from ``<math.h>``)."""
    return _C().doprint(expr)


def _signature(model: "Model") -> str:
    args = []
    for q in model.params:
        args.append(f"{q}=1.0" if q in ("cpu", "bw") else q)
    return ", ".join(args)


def to_python(model: "Model") -> str:
    """Source of a self-contained Python function ``predicted_time(...)`` (standard library only)."""
    body = _Python().doprint(model.expr)
    return (f"import math\n\n\ndef predicted_time({_signature(model)}):\n"
            f"    \"\"\"Predicted run time in seconds (automodel, space {model.space!r}).\"\"\"\n"
            f"    return {body}\n")


def to_c_function(model: "Model") -> str:
    args = ", ".join(f"double {q}" for q in model.params)
    return (f"#include <math.h>\n\n/* Predicted run time in seconds (automodel). */\n"
            f"double predicted_time({args})\n{{\n    return {to_c(model.expr)};\n}}\n")


FORMATS: dict[str, Callable[["Model"], str]] = {
    "text": lambda m: to_text(m.expr, 6),
    "latex": lambda m: to_latex(m.expr),
    "python": to_python,
    "c": to_c_function,
    "json": lambda m: m.to_json(),
}


def export(model: "Model", fmt: str) -> str:
    """The model in format ``fmt`` (one of :data:`FORMATS`)."""
    try:
        return FORMATS[fmt](model)
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
