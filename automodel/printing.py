"""Formula text of many term models at once, equal to ``automodel.export.to_text`` of their expressions.

Printing a sympy expression per model costs about a third of a millisecond; a thousand kernels would
spend more time printing than fitting. Each model here is a sum ``c_1 t_1 + ... + c_k t_k`` of terms
from a small set, so what sympy prints is fixed per term (the text after the coefficient) and per set
of terms (their order), and only the coefficients change: those are cached, the coefficients are
formatted as sympy formats a 4-digit ``Float``. Anything unusual (a lone constant, a term sympy would
merge or print differently) falls back to sympy itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

import numpy as np

from automodel.model import TermModel
from automodel.space.terms import ONE, Term

__all__ = ["formula", "formulas", "prime_orders"]


@lru_cache(maxsize=4096)
def _piece(term: Term) -> str | None:
    """``to_text`` of ``1.5 * term`` without the ``1.5``, or None when sympy would not print it that way."""
    if term == ONE:
        return ""
    from automodel.export import to_text
    import sympy
    text = to_text(sympy.Float(1.5) * term.expr)
    return text[3:] if text.startswith("1.5") and text[3:4] in ("*", "/") else None


_ORDERS: dict[tuple[Term, ...], tuple[int, ...] | None] = {}


def _order(terms: tuple[Term, ...]) -> tuple[int, ...] | None:
    """The order in which sympy prints a sum of these terms (it does not depend on the coefficients);
    None when sympy merges some of them."""
    if terms not in _ORDERS:
        prime_orders([terms])
    return _ORDERS[terms]


def prime_orders(sums: Iterable[tuple[Term, ...]]) -> None:
    """Find the print order of many sums of terms with one sympy call.

    sympy orders the terms of a sum lexicographically by their exponent vectors over all the sum's
    generators; a generator that two terms both lack does not change how they compare, so the order
    of any subset is the order of the whole set restricted to it.
    """
    import sympy
    todo = [s for s in dict.fromkeys(sums) if s not in _ORDERS and len(s) > 1]
    distinct = list(dict.fromkeys(t for s in todo for t in s))
    if len(distinct) < 2:
        _ORDERS.update({s: tuple(range(len(s))) for s in todo})
        return
    probe = sympy.Add(*[sympy.Float(2 + i) * t.expr for i, t in enumerate(distinct)])
    ordered = probe.as_ordered_terms()
    rank = {distinct[int(float(a.as_coeff_Mul()[0])) - 2]: r for r, a in enumerate(ordered)}
    if len(ordered) != len(distinct) or len(rank) != len(distinct):  # sympy merged terms: one sum at a time
        if len(todo) > 1:
            for s in todo:
                prime_orders([s])
        else:
            _ORDERS[todo[0]] = None  # formula() asks sympy itself
        return
    for s in todo:
        _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: rank[s[i]]))


@lru_cache(maxsize=4096)
def _single_factor(term: Term) -> bool:
    """Whether sympy sees ``c * term`` as a product of two factors (the coefficient and one more)."""
    import sympy
    return not isinstance(term.expr, sympy.Mul)


def _number(c: float) -> str:
    """``c`` as :func:`automodel.export.to_text` prints a coefficient (4 significant digits)."""
    from mpmath.libmp import from_float, to_str
    rv = to_str(from_float(c, 17, "n"), 4, strip_zeros=True)  # sympy.Float(c, 4): 17 bits, 4 digits
    if rv.startswith(".0"):
        rv = "0." + rv[2:]
    return rv.removeprefix("+")


@dataclass(frozen=True)
class _Layout:
    """How sympy prints a sum of distinct terms with nonzero coefficients: the order of the terms, the
    text after each coefficient, and which term (if any) sympy's ``c0 - c1*x`` rule puts first."""

    order: tuple[int, ...]
    pieces: tuple[str, ...]
    constant_first: int


def _layout(terms: tuple[Term, ...]) -> _Layout | None:
    pieces = tuple(_piece(t) for t in terms)
    if not terms or None in pieces or (len(terms) == 1 and terms[0] == ONE) or len(set(terms)) < len(terms):
        return None
    order = _order(terms) if len(terms) > 1 else (0,)
    if order is None:
        return None
    first = -1
    if len(terms) == 2 and ONE in terms:
        i = terms.index(ONE)
        first = i if _single_factor(terms[1 - i]) else -1
    return _Layout(order, pieces, first)


def _render(layout: _Layout, coefficients: np.ndarray | tuple[float, ...]) -> str:
    order = layout.order
    i = layout.constant_first
    if i >= 0 and coefficients[i] > 0 > coefficients[1 - i]:  # sympy prints "c0 - c1*x" constant first
        order = (i, 1 - i)
    text = ""
    for i in order:
        c = float(coefficients[i])
        sign = ("-" if c < 0 else "") if not text else (" - " if c < 0 else " + ")
        text += sign + _number(abs(c)) + layout.pieces[i]
    return text


def formula(terms: tuple[Term, ...], coefficients: tuple[float, ...]) -> str:
    """The text formula of ``TermModel(terms, coefficients)``, equal to its ``to_text(expr)``, without
    building a sympy expression per model (the print order and each term's text are cached)."""
    nz = [(t, c) for t, c in zip(terms, coefficients) if c != 0.0]
    layout = _layout(tuple(t for t, _ in nz)) if all(math.isfinite(c) for _, c in nz) else None
    if layout is None:
        from automodel.export import to_text
        return to_text(TermModel(tuple(terms), tuple(coefficients)).expr)
    return _render(layout, tuple(c for _, c in nz))


def formulas(terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray) -> list[str]:
    """The formula of every kernel's model (candidate ``best[j]`` with coefficients ``coefs[j]``); layouts
    are found once per distinct set of nonzero terms."""
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
