"""The formula typeset: MathML (presentation markup), which browsers draw without fonts or scripts.

:class:`MathMLFormulaPrinter` is sympy's presentation printer with the house's two changes, as the
LaTeX printer of :mod:`automodel.text.printers` has them: coefficients rounded to ``digits`` significant
digits and ``log2(x)`` written as a logarithm to base 2. :func:`formula_mathml` prints a model's
expression with the parameters renamed to the user's column names.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

__all__ = ["MathMLFormulaPrinter", "formula_mathml"]


class MathMLFormulaPrinter(MathMLPresentationPrinter):
    """MathML with ``log_2`` and coefficients rounded to ``digits`` significant digits.

    Examples
    --------
    >>> from automodel.space.symbols import log2, symbol
    >>> text = MathMLFormulaPrinter().doprint(sympy.Float(0.123456) * log2(symbol("p")))
    >>> "<mn>0.1235</mn>" in text, "<msub><mi>log</mi><mn>2</mn></msub>" in text, '<mo stretchy="false">(</mo>' in text
    (True, True, True)
    """

    _default_settings = {**MathMLPresentationPrinter._default_settings, "digits": 4}

    def _print_Symbol(self, sym: sympy.Symbol, style: str = "plain") -> Any:
        """sympy's symbol with its text escaped: sympy writes text nodes raw (so that its entities such as
        ``&InvisibleTimes;`` survive), and a parameter's name is a column of the user's file
        (``<img src=x onerror=...>`` would be markup of the page)."""
        node = super()._print_Symbol(sym, style)
        stack = [node]
        while stack:
            item = stack.pop()
            if item.nodeType == item.TEXT_NODE:
                item.data = escape(item.data, quote=False)
            stack.extend(item.childNodes)
        return node

    def _print_Float(self, expr: sympy.Float) -> Any:
        return super()._print_Float(sympy.Float(expr, self._settings["digits"]))

    def _print_log2(self, expr: sympy.Expr) -> Any:
        row, sub, argument = (self.dom.createElement(tag) for tag in ("mrow", "msub", "mrow"))
        for tag, text in (("mi", "log"), ("mn", "2")):
            element = self.dom.createElement(tag)
            element.appendChild(self.dom.createTextNode(text))
            sub.appendChild(element)
        row.appendChild(sub)
        for part in ("(", self._print(expr.args[0]), ")"):
            if isinstance(part, str):
                fence = self.dom.createElement("mo")
                fence.setAttribute("stretchy", "false")
                fence.appendChild(self.dom.createTextNode(part))
                part = fence
            argument.appendChild(part)
        row.appendChild(argument)
        return row


def formula_mathml(expr: sympy.Expr, names: Mapping[str, str] | None = None, digits: int = 4) -> str:
    """``T = expr`` as a ``<math>`` element, each parameter named as in ``names`` (canonical name ->
    the user's column name; the canonical name when absent), escaped
    (:meth:`MathMLFormulaPrinter._print_Symbol`).

    Examples
    --------
    >>> from automodel.space.symbols import symbol
    >>> formula_mathml(2 * symbol("p"), {"p": "ranks"})
    '<math display="block"><mi>T</mi><mo>=</mo><mrow><mn>2</mn><mo>&InvisibleTimes;</mo><mi>ranks</mi></mrow></math>'
    >>> formula_mathml(symbol("p"), {"p": "<b>&p"})
    '<math display="block"><mi>T</mi><mo>=</mo><mi>&lt;b&gt;&amp;p</mi></math>'
    """
    renamed = {s: sympy.Symbol(names[s.name]) for s in expr.free_symbols
               if names and s.name in names and names[s.name] != s.name}
    body = MathMLFormulaPrinter({"digits": digits}).doprint(expr.xreplace(renamed) if renamed else expr)
    return f'<math display="block"><mi>T</mi><mo>=</mo>{body}</math>'
