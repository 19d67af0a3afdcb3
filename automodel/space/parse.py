"""Read a term written in the small term language of the search-space files, without ``eval``.

Grammar: a product of atoms joined by ``*`` or ``/``. Atoms (``x`` any parameter name):

* ``1``, ``x``, ``x^r`` with ``r`` an integer or ``(a/b)`` / ``a/b`` fraction, ``sqrt(x)``,
* ``log2(x)``, ``log2(x)^k``,
* ``ceil_log2(x)`` (contention-hockney-singh.txt, sec. 3.3),
* ``over1(x)``: ``min(1, x - 1)``, 0 on one process and 1 from two on (:class:`~automodel.space.terms.Over1`),
* ``sigmoid(x)``, ``sigmoid(x, pc)`` or ``sigmoid(x, y/c)``: ``x / (1 + exp(-(x - pc)))`` with
  ``pc`` a number or ``y / c`` (bayesian-kohashi-2022.txt, eq. 6, ``pc = n / cores_per_node``),
* ``cap(x)`` or ``cap(x, c)``: ``min(x, c)`` (:class:`~automodel.space.terms.Cap`), with a power and
  divisible (``1/cap(p)``); without ``c`` the stage puts in each measured level of ``x`` with two
  levels above it.

Examples
--------
>>> str(parse_term("n^3*log2(n)/p"))
'n**3*log2(n)/p'
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from automodel.data.cells import shown
from automodel.errors import ModelFileError, SpaceError
from automodel.space.terms import (Cap, CeilLog2, ONE, Over1, PowerLog, Sigmoid, Term, exponent_problem,
                                  term_from_dict)

__all__ = ["parse_term"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_EXP = r"(?:\^\s*(?:\(\s*(-?\d+)\s*(?:/\s*(\d+))?\s*\)|(-?\d+)(?:\s*/\s*(\d+))?))?"
_ATOM = re.compile(
    rf"\s*(?:(?P<one>1)(?![0-9])|sqrt\(\s*(?P<sqrt>{_NAME})\s*\)|log2\(\s*(?P<log>{_NAME})\s*\)"
    rf"|ceil_log2\(\s*(?P<ceil>{_NAME})\s*\)|over1\(\s*(?P<over>{_NAME})\s*\)"
    rf"|cap\(\s*(?P<cap>{_NAME})\s*(?:,\s*(?P<capc>[0-9.eE+]+))?\s*\)"
    rf"|sigmoid\(\s*(?P<sig>{_NAME})\s*(?:,\s*(?:(?P<pcnum>[0-9.eE+-]+)|(?P<pcpar>{_NAME})\s*/\s*(?P<pcdiv>[0-9.eE+-]+)))?\s*\)"
    rf"|(?P<var>{_NAME})){_EXP}\s*"
)


def _exponent(m: re.Match, text: str) -> Fraction:
    num, den, num2, den2 = m.groups()[-4:]  # the exponent groups close the pattern
    num, den = (num, den) if num is not None else (num2, den2)
    if num is None:
        return Fraction(1)
    # numbers of at most 7 digits (more are out of bounds): int() of a string of any length would be
    # quadratic in its length
    too_long = len(num.lstrip("-")) > 7 or (den and len(den) > 7)
    problem = exponent_problem(0, 0) if too_long else exponent_problem(int(num), int(den) if den else 1)
    if problem is not None:
        raise SpaceError(f"in term {shown(text)}: {problem}, got {shown(m.group(0).strip())}")
    return Fraction(int(num), int(den) if den else 1)


def parse_term(text: str) -> Term:
    """Parse ``text`` (see module docstring) into a :class:`Term`; raise SpaceError if it does not parse."""
    if not isinstance(text, str) or not text.strip():
        raise SpaceError(f"expected a term such as 'n^2*log2(n)/p', got {shown(text)}")
    pos, sign, term = 0, 1, ONE
    s = text.strip()
    while True:
        m = _ATOM.match(s, pos)
        if not m or m.end() == pos:
            raise SpaceError(f"cannot read term {shown(text)} at position {pos}: expected an atom such as "
                             f"n, n^(3/2), sqrt(n), log2(n), ceil_log2(p), over1(p), sigmoid(p, n/64), cap(p, 8) or 1")
        e = _exponent(m, text)
        if m.group("one"):
            factor = ONE
        elif m.group("sqrt"):
            factor = Term((PowerLog(m.group("sqrt"), Fraction(1, 2) * e),))
        elif m.group("log"):
            if e.denominator != 1 or e < 0:
                raise SpaceError(f"in term {shown(text)}: log2(...) takes a non-negative integer power")
            factor = Term((PowerLog(m.group("log"), Fraction(0), int(e)),))
        elif m.group("ceil"):
            if e != 1:
                raise SpaceError(f"in term {shown(text)}: ceil_log2(...) cannot take a power")
            factor = Term((CeilLog2(m.group("ceil")),))
        elif m.group("over"):
            if e != 1:
                raise SpaceError(f"in term {shown(text)}: over1(...) cannot take a power")
            factor = Term((Over1(m.group("over")),))
        elif m.group("cap"):
            try:
                center = float(m.group("capc") or 0.0)
            except ValueError:
                center = math.nan
            if not (math.isfinite(center) and center >= 0):
                raise SpaceError(f"in term {shown(text)}: bad cap centre {shown(m.group('capc'))}")
            factor = Term((Cap(m.group("cap"), center, e),))
        elif m.group("sig"):
            if e != 1:
                raise SpaceError(f"in term {shown(text)}: sigmoid(...) cannot take a power")
            try:
                if m.group("pcpar"):
                    sig = Sigmoid(m.group("sig"), 0.0, m.group("pcpar"), 1.0 / float(m.group("pcdiv")))
                else:
                    sig = Sigmoid(m.group("sig"), float(m.group("pcnum") or 0.0))
                if not (math.isfinite(sig.center) and math.isfinite(sig.center_scale)):
                    raise ValueError("not finite")
            except (ValueError, ZeroDivisionError):
                raise SpaceError(f"in term {shown(text)}: bad sigmoid centre") from None
            factor = Term((sig,))
        else:
            factor = Term((PowerLog(m.group("var"), e),))
        if sign < 0:
            factor = Term(tuple(_invert(f) for f in factor.factors))
        term = term * factor
        pos = m.end()
        if pos == len(s):
            return _storable(term, text)
        op = s[pos]
        if op not in "*/":
            raise SpaceError(f"cannot read term {shown(text)} at position {pos}: expected '*' or '/'")
        sign = -1 if op == "/" else 1
        pos += 1


def _storable(term: Term, text: str) -> Term:
    """``term`` when a model file may hold it (:func:`~automodel.space.terms.term_from_dict`'s rules: at
    most 16 factors, exponents within bounds); else SpaceError. Products merge their factors
    (``n*n*...`` is one power), so each atom within bounds did not make the product so: a fit chose
    ``n^10000`` and wrote a model file that no command could read."""
    # ``cap(p)`` has centre 0 until the stage puts in each measured level of p (a positive number)
    data = [{**d, "center": 1.0} if d["kind"] == "cap" and d["center"] == 0 else d for d in term.to_dict()]
    try:
        term_from_dict(data, {d[key] for d in data for key in ("param", "center_param") if d.get(key)})
    except ModelFileError as exc:
        raise SpaceError(f"in term {shown(text)}: {str(exc).removeprefix('term: ')}") from None
    return term


def _invert(f):
    if isinstance(f, PowerLog) and f.log_exponent == 0:
        return PowerLog(f.param, -f.exponent, 0, f.offset)
    if isinstance(f, Cap):
        return Cap(f.param, f.center, -f.exponent)
    raise SpaceError("only plain powers (x, x^r, sqrt(x)) and cap(x) can be divided by")
