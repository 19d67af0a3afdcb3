"""A term model as compact data for the page's scripts, and its growth order in each parameter.

The page draws a kernel's curve on demand by evaluating its model in the browser
(``static/profile.js``, ``evaluate``): every distinct term of a profile is written once
(:class:`TermTable`) as a list of factors, and a kernel as pairs ``term index, coefficient``. The
factors are those of :mod:`automodel.space.terms`, as short lists:

========================================  =================================================
``["w", q, exponent, log_exponent, offset]``  ``(x_q + offset)^exponent * log2(x_q)^log_exponent``
``["s", q, center, center_q, scale]``        ``x_q / (1 + exp(-(x_q - center - scale * x_center_q)))``
``["c", q]``                                 ``ceiling(log2(x_q))``
``["o", q]``                                 ``min(1, x_q - 1)``
========================================  =================================================

``q`` is the position of the parameter in the page's parameter list (``center_q`` -1: none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from automodel.space.terms import Cap, CeilLog2, Over1, PowerLog, Sigmoid, Term

__all__ = ["TermTable", "growth", "COEFFICIENT_DIGITS"]

#: significant digits of a coefficient in the page (enough to draw the curve; the formula has 4)
COEFFICIENT_DIGITS = 7


def _factor(f: Any, params: Sequence[str]) -> list:
    """One factor as the page's short list (see the module docstring)."""
    q = params.index(f.param)
    if isinstance(f, PowerLog):
        return ["w", q, float(f.exponent), f.log_exponent, f.offset]
    if isinstance(f, Sigmoid):
        return ["s", q, f.center, params.index(f.center_param) if f.center_param else -1, f.center_scale]
    if isinstance(f, CeilLog2):
        return ["c", q]
    if isinstance(f, Over1):
        return ["o", q]
    if isinstance(f, Cap):
        return ["k", q, f.center, float(f.exponent)]
    raise TypeError(f"no page form for the factor {f!r}")


class TermTable:
    """The distinct terms of many models, each written once; :meth:`encode` gives a model's pairs.

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> table = TermTable(["p"])
    >>> table.encode([power("p", 0), power("p", 1, 1)], [2.0, 0.5])
    [0, 2.0, 1, 0.5]
    >>> table.terms
    [[], [['w', 0, 1.0, 1, 0]]]
    """

    def __init__(self, params: Sequence[str]) -> None:
        self.params = list(params)
        self.terms: list[list] = []
        self._index: dict[Term, int] = {}

    def encode(self, terms: Sequence[Term], coefficients: Sequence[float]) -> list:
        """``[term index, coefficient, term index, coefficient, ...]`` of a term model (a flat list)."""
        out: list = []
        for term, c in zip(terms, coefficients):
            if term not in self._index:
                self._index[term] = len(self.terms)
                self.terms.append([_factor(f, self.params) for f in term.factors])
            out += [self._index[term], float(f"{c:.{COEFFICIENT_DIGITS}g}")]
        return out


def growth(terms: Sequence[Term], coefficients: Sequence[float], param: str) -> tuple[float, int]:
    """The growth order of a term model in ``param``: the ``(exponent, log exponent)`` of its fastest
    growing term with a nonzero coefficient, as ``x`` grows (``(0, 0)``: constant; a negative exponent:
    it falls, as ``1/p``). A sigmoid grows
    as ``x``, a ceiling of ``log2`` as ``log2 x``, ``min(1, x - 1)`` and ``min(x, c)`` not at all.

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> growth([power("p", 0), power("p", 1, 1), power("p", -1)], [1.0, 0.5, 3.0], "p")
    (1.0, 1)
    >>> growth([power("p", -1)], [3.0], "p")
    (-1.0, 0)
    """
    best: tuple[float, int] | None = None
    for term, c in zip(terms, coefficients):
        if c == 0.0:
            continue
        e, l = 0.0, 0
        for f in term.factors:
            if f.param != param:
                continue
            if isinstance(f, PowerLog):
                e, l = e + float(f.exponent), l + f.log_exponent
            elif isinstance(f, Sigmoid):
                e += 1.0
            elif isinstance(f, CeilLog2):
                l += 1
        best = (e, l) if best is None else max(best, (e, l))
    return best or (0.0, 0)
