"""The sympy printer classes of :mod:`automodel.text.printing`, one per format (sympy's printer protocol,
one ``_print_<Node>`` method per change from sympy's defaults).

They live apart from :mod:`automodel.text.printing` so that printing a term model's formula from the cached
texts of its terms (:func:`automodel.text.printing.formula`) imports no sympy.
"""

from __future__ import annotations

import sympy
from sympy.printing.c import C99CodePrinter
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import precedence
from sympy.printing.pycode import PythonCodePrinter
from sympy.printing.str import StrPrinter

from automodel.text.coefficients import number

__all__ = ["TextPrinter", "LatexFormulaPrinter", "CFormulaPrinter", "PythonFormulaPrinter"]


class TextPrinter(StrPrinter):
    """One-line formulas: ``1.0e-6*n^2/p + 0.0001*p``.

    Settings: ``digits``, the significant digits of every coefficient (default 4); trailing zeros are
    stripped (``full_prec=False``) wherever the number stands. Functions print in lower case
    (``min(16, p)``, ``ceiling(log2(p))``).

    Examples
    --------
    >>> from automodel.space.symbols import symbol
    >>> n, p = symbol("n"), symbol("p")
    >>> TextPrinter().doprint(sympy.Float(1.23456e-6) * n ** 2 / p + sympy.Float(0.5) * sympy.sqrt(p))
    '1.235e-6*n^2/p + 0.5*sqrt(p)'
    """

    _default_settings = {**StrPrinter._default_settings, "digits": 4, "full_prec": False}

    def number(self, value: float) -> str:
        """``value`` as this printer prints a coefficient: ``0.0032``, ``1.235e-6``, ``2.0``
        (:func:`automodel.text.coefficients.number` with this printer's ``digits``)."""
        return number(value, self._settings["digits"])

    def _print_Float(self, expr: sympy.Float) -> str:
        """sympy's own format of ``expr`` rounded to ``digits`` significant digits, zeros stripped."""
        return super()._print_Float(sympy.Float(expr, self._settings["digits"]))

    def _print_MinMaxBase(self, expr: sympy.Min | sympy.Max) -> str:
        """``min(1, p - 1)``, ``max(...)`` (sympy prints ``Min``, ``Max``): in lower case as every other
        function, the ``min`` of Python and of sympy's parser, which read it back."""
        return f"{type(expr).__name__.lower()}({self.stringify(expr.args, ', ')})"

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        special = expr.exp is sympy.S.Half or (expr.is_commutative and (-expr.exp is sympy.S.Half
                                                                      or expr.exp is sympy.S.NegativeOne))
        if special and not rational:
            return super()._print_Pow(expr, rational)  # sqrt(x), 1/sqrt(x), 1/x
        prec = precedence(expr)
        return f"{self.parenthesize(expr.base, prec, strict=False)}^{self.parenthesize(expr.exp, prec, strict=False)}"


class LatexFormulaPrinter(LatexPrinter):
    """LaTeX with ``\\log_{2}`` and coefficients rounded to ``digits`` significant digits."""

    _default_settings = {**LatexPrinter._default_settings, "digits": 4}

    def _print_Float(self, expr: sympy.Float) -> str:
        return super()._print_Float(sympy.Float(expr, self._settings["digits"]))

    def _print_log2(self, expr: sympy.Expr, exp: str | None = None) -> str:
        base = rf"\log_{{2}}\left({self._print(expr.args[0])}\right)"
        return rf"{base}^{{{exp}}}" if exp else base


class _ExactFloats:
    """Code printers' floats: ``repr``, which reads back as the same double (sympy's code printers
    print ``0.0032000000000000002``)."""

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))


class _Names:
    """Code printers' symbols: the name each has in the code (setting ``names``, a dict from the
    parameter to its name, :func:`automodel.names.code_names`), so that a parameter named ``lambda``,
    ``math`` or ``double`` prints as a name the code can hold; a symbol not in it prints as itself."""

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        names = self._settings.get("names") or {}
        return names[expr.name] if expr.name in names else super()._print_Symbol(expr)


class CFormulaPrinter(_Names, _ExactFloats, C99CodePrinter):
    """C99 (``<math.h>``) with floats that round-trip exactly."""

    _default_settings = {**C99CodePrinter._default_settings, "names": {}}


class PythonFormulaPrinter(_Names, _ExactFloats, PythonCodePrinter):
    """Python (``math`` module) with floats that round-trip exactly."""

    _default_settings = {**PythonCodePrinter._default_settings, "names": {}}
