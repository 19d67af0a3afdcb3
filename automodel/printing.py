"""Formula printers: one sympy printer class per format, and the cached text of term models.

Every formula automodel shows goes through this module: the leaderboard of ``automodel fit``, the
kernel summary of ``automodel kernels``, the store's ranking, the ``formula`` of a model file and
``automodel show``. :data:`PRINTERS` holds the printer classes (sympy's printer protocol, one
``_print_<Node>`` method per change from sympy's defaults):

``text``
    :class:`TextPrinter`, a :class:`~sympy.printing.str.StrPrinter` with ``^`` for powers and
    coefficients rounded to ``digits`` significant digits (4 by default).
``latex``
    ``\\log_{2}`` for ``log2`` (sympy prints ``\\operatorname{log}_{2}``), rounded coefficients.
``python``, ``c``
    Floats as Python's ``repr`` (the shortest text that reads back as the same double, at most 17
    significant digits), so the code reproduces the model exactly; ``log2`` is
    :class:`sympy.codegen.cfunctions.log2`, which C prints as ``log2(p)`` and Python as
    ``math.log2(p)`` natively.

A fitted term model is a sum ``c_1 t_1 + ... + c_k t_k`` of terms from a small set, so
:func:`formula` prints each term once (:func:`term_text`, cached per
:class:`~automodel.space.terms.Term`), takes each set of terms' order once from the printer's own
order of a sum (:func:`prime_orders`, one sympy call for many sets), and per model prints only the
coefficients, with the text printer's own number format. The result is the text printer's output for
the model's expression (tested on random models) at a small fraction of the cost, which is what lets
``automodel kernels`` print thousands of formulas; every path that shows a term model's formula
(``Model.formula``, the leaderboard, the kernel summary, the store) goes through :func:`formula`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
import sympy
from mpmath.libmp import dps_to_prec, from_float, round_nearest, to_str
from sympy.printing.c import C99CodePrinter
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import precedence
from sympy.printing.pycode import PythonCodePrinter
from sympy.printing.str import StrPrinter

from automodel.space.terms import ONE, Term, term_sum

__all__ = ["TextPrinter", "PRINTERS", "to_text", "to_latex", "to_python", "to_c", "formula", "formulas", "prime_orders",
           "term_text", "terms_text"]


class TextPrinter(StrPrinter):
    """One-line formulas: ``1.0e-6*n^2/p + 0.0001*p``.

    Settings: ``digits``, the significant digits of every coefficient (default 4); trailing zeros are
    stripped (``full_prec=False``) wherever the number stands.

    Examples
    --------
    >>> from automodel.space.symbols import symbol
    >>> n, p = symbol("n"), symbol("p")
    >>> TextPrinter().doprint(sympy.Float(1.23456e-6) * n ** 2 / p + sympy.Float(0.5) * sympy.sqrt(p))
    '1.235e-6*n^2/p + 0.5*sqrt(p)'
    """

    _default_settings = {**StrPrinter._default_settings, "digits": 4, "full_prec": False}

    def number(self, value: float) -> str:
        """``value`` as this printer prints a coefficient: ``0.0032``, ``1.235e-6``, ``2.0``.

        The text of :meth:`_print_Float` of ``sympy.Float(value)``, made by the function sympy's own
        float printing calls (``mpmath.libmp.to_str``) without building two sympy numbers per
        coefficient (a third of the time of ``automodel kernels`` on 1000 kernels); the tests check
        that both give the same text.
        """
        digits = self._settings["digits"]
        text = to_str(from_float(float(value), dps_to_prec(digits), round_nearest), digits, strip_zeros=True)
        if text.startswith("-.0"):
            text = "-0." + text[3:]
        elif text.startswith(".0"):
            text = "0." + text[2:]
        return text.removeprefix("+")

    def _print_Float(self, expr: sympy.Float) -> str:
        """sympy's own format of ``expr`` rounded to ``digits`` significant digits, zeros stripped."""
        return super()._print_Float(sympy.Float(expr, self._settings["digits"]))

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


#: format name -> printer class
PRINTERS: dict[str, type] = {"text": TextPrinter, "latex": LatexFormulaPrinter, "python": PythonFormulaPrinter,
                             "c": CFormulaPrinter}


def to_text(expr: sympy.Expr, digits: int = 4) -> str:
    """A readable one-line formula with ``digits`` significant digits per coefficient."""
    return TextPrinter({"digits": digits}).doprint(expr)


def to_latex(expr: sympy.Expr, digits: int = 4) -> str:
    """LaTeX of ``expr`` with ``digits`` significant digits per coefficient."""
    return LatexFormulaPrinter({"digits": digits}).doprint(expr)


def to_python(expr: sympy.Expr, names: dict[str, str] | None = None) -> str:
    """A Python expression (``math.log2``, ``math.sqrt``, ...) that reproduces ``expr`` exactly; each
    symbol under its name in ``names`` (:func:`automodel.names.code_names`), if there."""
    return PythonFormulaPrinter({"names": dict(names or {})}).doprint(expr)


def to_c(expr: sympy.Expr, names: dict[str, str] | None = None) -> str:
    """A C99 expression (``log2``, ``pow``, ``exp``, ``ceil`` from ``<math.h>``); each symbol under
    its name in ``names``, if there."""
    return CFormulaPrinter({"names": dict(names or {})}).doprint(expr)


# -- term models --------------------------------------------------------------------------------
_PRINTER = TextPrinter()  # the default settings: 4 digits


@lru_cache(maxsize=None)
def term_text(term: Term) -> str | None:
    """The text after the coefficient in ``c*term`` (``"*n^2/p"``; ``""`` for the constant), printed once
    per term; None when the printer does not print ``c*term`` as the coefficient and the term (a number
    times a sum is distributed: ``c*(p + 1)`` is ``c*p + c``).

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> term_text(power("n", 2) * power("p", -1))
    '*n^2/p'
    """
    if term == ONE:
        return ""
    product = sympy.Float(1.5) * term.expr
    if not (product.is_Mul and product.as_coeff_Mul() == (sympy.Float(1.5), term.expr)):
        return None
    text = _PRINTER.doprint(product)
    return text[3:] if text.startswith("1.5") and text[3:4] in ("*", "/") else None


#: terms (with nonzero coefficients) -> the printer's order of their sum; filled by :func:`prime_orders`
_ORDERS: dict[tuple[Term, ...], tuple[int, ...]] = {}


def prime_orders(sums: Iterable[tuple[Term, ...]]) -> None:
    """The printer's order of many sums of terms, from one sympy call.

    The order of a sum (:meth:`~sympy.core.expr.Expr.as_ordered_terms`) compares the terms' exponent
    vectors lexicographically, over the generators of the whole sum in one fixed order; a generator
    that two terms both lack does not change how they compare, so the order of any subset of terms is
    the order of the whole set restricted to it. The sum of all distinct terms is ordered once, with
    coefficients 2, 3, ... that name each term; each sum's order is read off from it.
    """
    todo = [s for s in dict.fromkeys(sums) if s not in _ORDERS and _printable(s)]
    exprs = list(dict.fromkeys(t.expr for s in todo for t in s))
    if len(exprs) < 2:
        _ORDERS.update(dict.fromkeys(todo, (0,)))
        return
    ordered = _PRINTER._as_ordered_terms(sympy.Add(*[sympy.Float(2 + i) * e for i, e in enumerate(exprs)]))
    if len(ordered) != len(exprs):  # term_text() rules this out; formula() then prints the expression
        return
    position = {exprs[int(a.as_coeff_Mul()[0]) - 2]: r for r, a in enumerate(ordered)}
    for s in todo:
        _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: position[s[i].expr]))


@lru_cache(maxsize=65536)
def _printable(terms: tuple[Term, ...]) -> bool:
    """Whether the sum of these terms (nonzero coefficients) prints as each coefficient and its term's
    text: every term has a text, no two terms are equal, and it is not the constant alone."""
    return (bool(terms) and terms != (ONE,) and all(term_text(t) is not None for t in terms)
            and len({t.expr for t in terms}) == len(terms))


@lru_cache(maxsize=4096)
def _lone_factor(term: Term) -> bool:
    """Whether ``c*term`` is a product of two factors, the coefficient and one more."""
    return not isinstance(term.expr, sympy.Mul)


def _layout(terms: tuple[Term, ...]) -> tuple[tuple[int, ...], int] | None:
    """How the printer prints a sum of these terms (nonzero coefficients, all finite): the order of
    its terms, and the index of the constant when sympy's one special case can apply (``c0 - c1*x``
    prints the positive constant first, ``Expr.as_ordered_terms``), else -1. None when the sum does not
    print as each coefficient and its term's text."""
    if not _printable(terms):
        return None
    if terms not in _ORDERS:
        prime_orders([terms])
    order = _ORDERS.get(terms)
    if order is None:
        return None
    first = -1
    if len(terms) == 2 and ONE in terms:
        i = terms.index(ONE)
        first = i if _lone_factor(terms[1 - i]) else -1
    return order, first


def _render(terms: tuple[Term, ...], coefficients: Sequence[float], layout: tuple[tuple[int, ...], int]) -> str:
    order, i = layout
    if i >= 0 and coefficients[i] > 0 > coefficients[1 - i]:
        order = (i, 1 - i)
    text = ""
    for j in order:
        c = coefficients[j]
        text += (" - " if c < 0 else " + ") if text else ("-" if c < 0 else "")
        text += _PRINTER.number(abs(c)) + term_text(terms[j])
    return text


def formula(terms: Sequence[Term], coefficients: Sequence[float]) -> str:
    """The text of the term model ``sum(c*t)``: :func:`to_text` of its expression, from cached parts.

    Each term's text (:func:`term_text`) and each set of terms' order (:func:`prime_orders`) is found
    once; per model only the coefficients are printed, with the text printer's number format. A model
    whose expression is not a plain sum of its terms (a term twice, a lone constant, a term sympy
    distributes, a coefficient that is not finite) is printed from its expression.

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> formula((power("n", 2) * power("p", -1), power("p")), (1e-6, 1e-4))
    '1.0e-6*n^2/p + 0.0001*p'
    """
    kept = [(t, float(c)) for t, c in zip(terms, coefficients) if c != 0.0]
    nonzero, values = tuple(t for t, _ in kept), [c for _, c in kept]
    layout = _layout(nonzero) if all(math.isfinite(c) for c in values) else None
    if layout is None:
        return to_text(term_sum(terms, coefficients))
    return _render(nonzero, values, layout)


def formulas(terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray) -> list[str]:
    """The formula of every kernel's model: candidate ``best[j]`` with coefficients ``coefs[j]`` (an
    empty string where ``best[j] < 0``), equal to :func:`formula` of each. The layout of each distinct
    (candidate, nonzero coefficients) is found once, the orders of all of them in one sympy call
    (:func:`prime_orders`); per kernel only its coefficients are printed."""
    finite = np.isfinite(np.where(np.isnan(coefs), 0.0, coefs)).all(axis=1)
    keys = [(int(b), tuple(coefs[j, :len(terms[b])] != 0.0)) if b >= 0 else None for j, b in enumerate(best)]
    chosen = {key: tuple(t for t, keep in zip(terms[key[0]], key[1]) if keep) for key in set(keys) - {None}}
    prime_orders(t for t in chosen.values() if _printable(t))
    layouts = {key: _layout(t) for key, t in chosen.items()}
    out = []
    for j, key in enumerate(keys):
        if key is None:
            out.append("")
            continue
        row = coefs[j, :len(key[1])]
        layout = layouts[key]
        out.append(_render(chosen[key], row[list(key[1])].tolist(), layout) if layout is not None and finite[j]
                   else formula(terms[key[0]], tuple(row.tolist())))
    return out


def terms_text(terms: Iterable[Term]) -> str:
    """The structure of a candidate without its coefficients, in its own order: ``n^2/p + log2(p)``."""
    return " + ".join(_PRINTER.doprint(t.expr) for t in terms)
