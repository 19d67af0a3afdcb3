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
    Floats with 17 significant digits, so the code reproduces the model exactly; ``log2`` is
    :class:`sympy.codegen.cfunctions.log2`, which C prints as ``log2(p)`` and Python as
    ``math.log2(p)`` natively.

A fitted term model is a sum ``c_1 t_1 + ... + c_k t_k`` of terms from a small set, so
:func:`formula` prints each term once (cached per :class:`~automodel.space.terms.Term`) and each set
of terms' order once (the printer's own order of a sum, asked of sympy once per set), and only formats
the coefficients per model, with the text printer's own number format. It gives the text printer's
output for the model's expression (tested on random models) at a small fraction of the cost, which is
what lets ``automodel kernels`` print thousands of formulas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
import sympy
from mpmath.libmp import dps_to_prec, from_float, to_str
from sympy.printing.c import C99CodePrinter
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import precedence
from sympy.printing.pycode import PythonCodePrinter
from sympy.printing.str import StrPrinter

from automodel.space.terms import ONE, Term, term_sum

__all__ = ["TextPrinter", "PRINTERS", "to_text", "to_latex", "to_python", "to_c", "formula", "formulas", "prime_orders",
           "terms_text"]


class TextPrinter(StrPrinter):
    """One-line formulas: ``1.0e-6*n^2/p + 0.0001*p``.

    Settings: ``digits``, the significant digits of every coefficient (default 4).

    Examples
    --------
    >>> from automodel.space.symbols import symbol
    >>> n, p = symbol("n"), symbol("p")
    >>> TextPrinter().doprint(sympy.Float(1.23456e-6) * n ** 2 / p + sympy.Float(0.5) * sympy.sqrt(p))
    '1.235e-6*n^2/p + 0.5*sqrt(p)'
    """

    _default_settings = {**StrPrinter._default_settings, "digits": 4}

    def number(self, value: float) -> str:
        """``value`` with the printer's significant digits, as sympy prints a ``Float`` of that precision."""
        digits = self._settings["digits"]
        text = to_str(from_float(value, dps_to_prec(digits), "n"), digits, strip_zeros=True)
        if text.startswith("-.0"):
            text = "-0." + text[3:]
        elif text.startswith(".0"):
            text = "0." + text[2:]
        return text.removeprefix("+")

    def _print_Float(self, expr: sympy.Float) -> str:
        return self.number(float(expr))

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


class CFormulaPrinter(C99CodePrinter):
    """C99 with floats that round-trip exactly (sympy prints ``0.0032000000000000002``)."""

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))


class PythonFormulaPrinter(PythonCodePrinter):
    """Python (``math`` module) with floats that round-trip exactly."""

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))


#: format name -> printer class
PRINTERS: dict[str, type] = {"text": TextPrinter, "latex": LatexFormulaPrinter, "python": PythonFormulaPrinter,
                             "c": CFormulaPrinter}


def to_text(expr: sympy.Expr, digits: int = 4) -> str:
    """A readable one-line formula with ``digits`` significant digits per coefficient."""
    return TextPrinter({"digits": digits}).doprint(expr)


def to_latex(expr: sympy.Expr, digits: int = 4) -> str:
    """LaTeX of ``expr`` with ``digits`` significant digits per coefficient."""
    return LatexFormulaPrinter({"digits": digits}).doprint(expr)


def to_python(expr: sympy.Expr) -> str:
    """A Python expression (``math.log2``, ``math.sqrt``, ...) that reproduces ``expr`` exactly."""
    return PythonFormulaPrinter().doprint(expr)


def to_c(expr: sympy.Expr) -> str:
    """A C99 expression (``log2``, ``pow``, ``exp``, ``ceil`` from ``<math.h>``)."""
    return CFormulaPrinter().doprint(expr)


# -- term models --------------------------------------------------------------------------------
_PRINTER = TextPrinter()  # the default settings: 4 digits


@lru_cache(maxsize=None)
def _piece(term: Term) -> str | None:
    """The text after the coefficient in ``c * term`` (None when the printer does not print it so)."""
    if term == ONE:
        return ""
    text = _PRINTER.doprint(sympy.Float(1.5) * term.expr)
    return text[3:] if text.startswith("1.5") and text[3:4] in ("*", "/") else None


_ORDERS: dict[tuple[Term, ...], tuple[int, ...] | None] = {}


def prime_orders(sums: Iterable[tuple[Term, ...]]) -> None:
    """Find the printer's order of many sums of terms with one sympy call.

    The order of a sum (:meth:`StrPrinter._as_ordered_terms`) compares the terms' exponent vectors
    over all the sum's generators; a generator that two terms both lack does not change how they
    compare, so the order of any subset is the order of the whole set restricted to it. A probe sum
    with coefficients 2, 3, ... names each term by its coefficient.
    """
    todo = [s for s in dict.fromkeys(sums) if s not in _ORDERS and len(s) > 1]
    distinct = list(dict.fromkeys(t for s in todo for t in s))
    if len(distinct) < 2:
        _ORDERS.update({s: tuple(range(len(s))) for s in todo})
        return
    probe = sympy.Add(*[sympy.Float(2 + i) * t.expr for i, t in enumerate(distinct)])
    ordered = _PRINTER._as_ordered_terms(probe)
    rank = {distinct[int(float(a.as_coeff_Mul()[0])) - 2]: r for r, a in enumerate(ordered)}
    if len(ordered) != len(distinct) or len(rank) != len(distinct):  # merged terms: one sum at a time
        if len(todo) > 1:
            for s in todo:
                prime_orders([s])
        else:
            _ORDERS[todo[0]] = None  # formula() prints the expression itself
        return
    for s in todo:
        _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: rank[s[i]]))


@lru_cache(maxsize=4096)
def _single_factor(term: Term) -> bool:
    """Whether ``c * term`` is a product of two factors (the coefficient and one more)."""
    return not isinstance(term.expr, sympy.Mul)


@dataclass(frozen=True)
class _Layout:
    """How the printer prints a sum of distinct terms with nonzero coefficients: the order of the
    terms, the text after each coefficient, and which term (if any) sympy's ``c0 - c1*x`` rule puts
    first."""

    order: tuple[int, ...]
    pieces: tuple[str, ...]
    constant_first: int


def _layout(terms: tuple[Term, ...]) -> _Layout | None:
    pieces = tuple(_piece(t) for t in terms)
    if not terms or None in pieces or (len(terms) == 1 and terms[0] == ONE) or len(set(terms)) < len(terms):
        return None
    if len(terms) > 1 and terms not in _ORDERS:
        prime_orders([terms])
    order = _ORDERS[terms] if len(terms) > 1 else (0,)
    if order is None:
        return None
    first = -1
    if len(terms) == 2 and ONE in terms:
        i = terms.index(ONE)
        first = i if _single_factor(terms[1 - i]) else -1
    return _Layout(order, pieces, first)


def _render(layout: _Layout, coefficients: Sequence[float]) -> str:
    order = layout.order
    i = layout.constant_first
    if i >= 0 and coefficients[i] > 0 > coefficients[1 - i]:  # sympy prints "c0 - c1*x" constant first
        order = (i, 1 - i)
    text = ""
    for i in order:
        c = float(coefficients[i])
        sign = ("-" if c < 0 else "") if not text else (" - " if c < 0 else " + ")
        text += sign + _PRINTER.number(abs(c)) + layout.pieces[i]
    return text


def formula(terms: Sequence[Term], coefficients: Sequence[float]) -> str:
    """The text of the term model ``sum(c * t)``: :func:`to_text` of its expression, from cached parts.

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> formula((power("n", 2) * power("p", -1), power("p")), (1e-6, 1e-4))
    '1.0e-6*n^2/p + 0.0001*p'
    """
    nz = [(t, c) for t, c in zip(terms, coefficients) if c != 0.0]
    layout = _layout(tuple(t for t, _ in nz)) if all(math.isfinite(c) for _, c in nz) else None
    if layout is None:
        return to_text(term_sum(terms, coefficients))
    return _render(layout, tuple(c for _, c in nz))


def formulas(terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray) -> list[str]:
    """The formula of every kernel's model (candidate ``best[j]`` with coefficients ``coefs[j]``; an
    empty string where ``best[j] < 0``); the layout of each distinct set of nonzero terms is found once."""
    finite = np.isfinite(np.where(np.isnan(coefs), 0.0, coefs)).all(axis=1)
    keys = [(int(b), tuple(coefs[j, :len(terms[b])] != 0.0)) if b >= 0 else None for j, b in enumerate(best)]
    chosen = {k: tuple(t for t, keep in zip(terms[k[0]], k[1]) if keep) for k in set(keys) - {None}}
    prime_orders(chosen.values())
    layouts = {k: _layout(t) for k, t in chosen.items()}
    out = []
    for j, key in enumerate(keys):
        if key is None:
            out.append("")
            continue
        c = coefs[j, :len(key[1])]
        layout = layouts[key]
        out.append(_render(layout, c[list(key[1])]) if layout is not None and finite[j]
                   else formula(terms[key[0]], tuple(c)))
    return out


def terms_text(terms: Iterable[Term]) -> str:
    """The structure of a candidate without its coefficients: ``n^2/p + log2(p)``."""
    return " + ".join(_PRINTER.doprint(t.expr) for t in terms)
