"""Terms: products of simple factors of the parameters, each with a sympy expression and a numpy evaluator.

A model is ``T = sum_k c_k * term_k(params)``. Every term is a product of *factors* drawn from a small,
closed vocabulary, so a term can be written to JSON as plain data and rebuilt without evaluating any
string (no ``eval``, no ``sympify``):

* :class:`PowerLog` ``(x + offset)^e * log2(x)^l`` covers polynomials with integer and fractional
  exponents, the logarithmic family of PMNF (Extra-P), the P-terms ``1/p``, ``log2 p``,
  ``log2 p / sqrt(p)``, ``1/p^2``, ``p``, ``sqrt(p)`` (bayesian-kohashi-2022.txt, sec. 2.1, eqs. 1-5)
  and the load divisors ``1/cpu``, ``1/bw`` (rational-polynomial-yagnik-icpp2006.txt, eqs. 2, 3, 5).
* :class:`Sigmoid` ``x / (1 + exp(-(x - pc)))``, the deceleration term of bayesian-kohashi-2022.txt,
  sec. 2.1, eq. 6, with ``pc`` a constant or ``scale * other_parameter`` (``pc = n / cores_per_node``).
* :class:`CeilLog2` ``ceiling(log2(x))``, the step count of tree-shaped collectives
  (contention-hockney-singh.txt, sec. 3.3).
* :class:`Cap` ``min(x, c)^e``: a resource that stops growing at ``x = c``; ``1/min(p, c)`` is a
  time that stops falling once ``c`` processes saturate what they share (the memory bandwidth of a
  node, a link), ``min(p, c)`` a cost that levels off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence, Union

import numpy as np

from automodel.data.cells import shown
from automodel.errors import ModelFileError

if TYPE_CHECKING:  # sympy (0.4 s) is imported by the expressions only: evaluating terms needs none of it
    import sympy

__all__ = ["PowerLog", "Sigmoid", "logistic", "CeilLog2", "Over1", "Cap", "CAP_LEVELS_APART", "cap_centres", "saturating", "caps_measured", "Factor", "Term", "ONE", "constant_index", "power", "term_from_dict", "term_sum", "term_values", "TermPlan",
           "MAX_EXPONENT_PART", "exponent_problem"]

Columns = Mapping[str, np.ndarray]


#: largest numerator and denominator of an exponent (``n^(7/4)``): beyond it a term is no model of a cost
MAX_EXPONENT_PART = 1000


def exponent_problem(numerator: int, denominator: int) -> str | None:
    """Why ``numerator/denominator`` cannot be an exponent (None when it can): ``|a| <= 1000`` and ``b``
    from 1 to 1000 (:data:`MAX_EXPONENT_PART`), for search spaces and model files alike."""
    if abs(numerator) > MAX_EXPONENT_PART or not 0 < denominator <= MAX_EXPONENT_PART:
        return (f"an exponent is a fraction a/b with |a| <= {MAX_EXPONENT_PART} and b from 1 to "
                f"{MAX_EXPONENT_PART}")
    return None


def _fraction(value: Any, what: str) -> Fraction:
    """A rational exponent from JSON data: an int, or a string ``"a/b"`` of two ints (no evaluation),
    within :func:`exponent_problem`'s bounds."""
    num, den = None, 1
    if isinstance(value, int) and not isinstance(value, bool):
        num = value
    elif isinstance(value, str) and len(value) <= 32:
        top, _, bottom = value.partition("/")
        try:
            num, den = int(top), int(bottom) if bottom else 1
        except ValueError:
            pass
    problem = None if num is None else exponent_problem(num, den)
    if num is None or problem is not None:
        raise ModelFileError(f"{what}: expected an exponent such as 2 or '3/2'"
                             f"{' (' + problem + ')' if problem else ''}, got {shown(value)}")
    return Fraction(num, den)


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.isidentifier() or len(value) > 64:
        raise ModelFileError(f"{what}: expected a parameter name, got {value!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise ModelFileError(f"{what}: expected a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True, order=True)
class PowerLog:
    """``(x + offset)^exponent * log2(x)^log_exponent``."""

    param: str
    exponent: Fraction = Fraction(1)
    log_exponent: int = 0
    offset: int = 0

    @property
    def description_length(self) -> int:
        """How much there is to write beyond a plain integer power: the exponent's denominator less 1,
        the power of the logarithm, 1 for an offset (:attr:`Term.description_length`)."""
        return self.exponent.denominator - 1 + self.log_exponent + (1 if self.offset else 0)

    @property
    def expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import log2, symbol

        x = symbol(self.param)
        e = sympy.Rational(self.exponent.numerator, self.exponent.denominator)
        return (x + self.offset) ** e * log2(x) ** self.log_exponent

    def evaluate(self, columns: Columns) -> np.ndarray:
        x = np.asarray(columns[self.param], dtype=float)
        out = np.ones_like(x)
        if self.exponent:
            out = out * np.power(x + self.offset, float(self.exponent))
        if self.log_exponent:
            out = out * np.log2(x) ** self.log_exponent
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "power", "param": self.param}
        e = self.exponent
        d["exponent"] = e.numerator if e.denominator == 1 else f"{e.numerator}/{e.denominator}"
        if self.log_exponent:
            d["log_exponent"] = self.log_exponent
        if self.offset:
            d["offset"] = self.offset
        return d


@dataclass(frozen=True, order=True)
class Sigmoid:
    """``x / (1 + exp(-(x - pc)))`` with ``pc = center + center_scale * center_param``.

    bayesian-kohashi-2022.txt, sec. 2.1, eq. 6: the deceleration once the cores exceed the matrix size,
    ``pc = M / n_core``; here ``center_param="n"``, ``center_scale=1/cores_per_node``.
    """

    param: str
    center: float = 0.0
    center_param: str = ""
    center_scale: float = 0.0

    def _pc_expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import symbol

        pc = sympy.Float(self.center) if self.center else sympy.Integer(0)
        if self.center_param:
            pc = pc + sympy.Float(self.center_scale) * symbol(self.center_param)
        return pc

    @property
    def description_length(self) -> int:
        """A centre and a curve: 2, and 1 more when the centre moves with another parameter."""
        return 2 + (1 if self.center_param else 0)

    @property
    def expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import symbol

        x = symbol(self.param)
        return x / (1 + sympy.exp(-(x - self._pc_expr())))

    def evaluate(self, columns: Columns) -> np.ndarray:
        x = np.asarray(columns[self.param], dtype=float)
        pc = self.center + (self.center_scale * np.asarray(columns[self.center_param], float)
                            if self.center_param else 0.0)
        return x * logistic(x - pc)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "sigmoid", "param": self.param, "center": self.center}
        if self.center_param:
            d["center_param"] = self.center_param
            d["center_scale"] = self.center_scale
        return d


@dataclass(frozen=True, order=True)
class CeilLog2:
    """``ceiling(log2(x))``: the number of steps of a binomial tree or recursive doubling on x processes."""

    param: str

    #: as ``log2(x)``
    description_length = 1

    @property
    def expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import log2, symbol

        return sympy.ceiling(log2(symbol(self.param)))

    def evaluate(self, columns: Columns) -> np.ndarray:
        return np.ceil(np.log2(np.asarray(columns[self.param], dtype=float)) - 1e-12)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "ceil_log2", "param": self.param}


@dataclass(frozen=True, order=True)
class Over1:
    """``min(1, x - 1)``: 0 on one process, 1 from two on: what only a parallel run pays.

    A run on one process sends no message, so its time has no communication part; from p = 2 on every
    run pays at least one message's latency (Hockney's ``alpha``, contention-hockney-singh.txt, sec.
    2.1). The seeds' staged search reads communication from the second p level for that reason
    (adaptive-model-sanjay-slides.txt, slides 18-20). As a factor of a P-term it lets a model start its
    communication at p = 2: ``c * over1(p) + d * log2(p)`` where ``c - c/p`` saturates.
    """

    param: str

    #: one step
    description_length = 1

    @property
    def expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import symbol

        return sympy.Min(1, symbol(self.param) - 1)

    def evaluate(self, columns: Columns) -> np.ndarray:
        return np.minimum(1.0, np.asarray(columns[self.param], dtype=float) - 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "over1", "param": self.param}


@dataclass(frozen=True, order=True)
class Cap:
    """``min(x, center)^exponent``: ``x`` up to ``center``, then level.

    Strong scaling stops where the processes saturate what they share: past the cores that saturate a
    node's memory bandwidth, more processes on it run no faster (the bandwidth ceiling of the roofline
    model, Williams, Waterman and Patterson, CACM 52(4), 2009), so a time ``a/p`` becomes
    ``a/min(p, c)``; a latency that grows with the processes until every link is busy levels off as
    ``min(p, c)``. The P-terms of bayesian-kohashi-2022.txt (eqs. 1-6) have a term that starts growing
    (the sigmoid of eq. 6) but none that stops falling or stops growing; Extra-P's normal form has neither.
    A ``center`` of 0 in a search space stands for every measured level of ``x`` with
    :data:`CAP_LEVELS_APART` levels below and above it (:func:`cap_centres`; the search puts them in,
    :func:`saturating`), so that the levelling is measured, never assumed
    beyond the data; runs that do not measure it (a forward split) do not take the term
    (:func:`caps_measured`).
    """

    param: str
    center: float = 0.0
    exponent: Fraction = Fraction(1)

    #: a centre and a kink, as a sigmoid
    description_length = 2

    @property
    def expr(self) -> sympy.Expr:
        import sympy

        from automodel.space.symbols import symbol

        e = sympy.Rational(self.exponent.numerator, self.exponent.denominator)
        c = sympy.Integer(int(self.center)) if float(self.center).is_integer() else sympy.Float(self.center)
        return sympy.Min(symbol(self.param), c) ** e

    def evaluate(self, columns: Columns) -> np.ndarray:
        return np.power(np.minimum(np.asarray(columns[self.param], dtype=float), self.center), float(self.exponent))

    def to_dict(self) -> dict[str, Any]:
        e = self.exponent
        return {"kind": "cap", "param": self.param, "center": self.center,
                "exponent": e.numerator if e.denominator == 1 else f"{e.numerator}/{e.denominator}"}


Factor = Union[PowerLog, Sigmoid, CeilLog2, Over1, Cap]

#: measured levels a cap's centre needs on each side: the fall (or the rise) and the level are then each
#: seen over two intervals, not one step that a single run's noise can make
CAP_LEVELS_APART = 2


def logistic(z: np.ndarray) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-z))``, written with ``exp`` of non-positive numbers only, so
    that it never overflows (the sigmoid of Kohashi et al.'s eq. 6, bayesian-kohashi-2022.txt, sec. 2.1).

    Examples
    --------
    >>> logistic(np.array([-1000.0, 0.0, 1000.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    ez = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + ez), ez / (1.0 + ez))


def cap_centres(values: np.ndarray) -> np.ndarray:
    """Where a cap may be put on a parameter measured at ``values``: the levels with
    :data:`CAP_LEVELS_APART` levels below and above them, at most one per doubling (from the lowest of
    them, each next one at least twice the last): runs a doubling apart cannot place a kink closer than
    that, and thirty levels of p would otherwise give thirty terms that fit alike.

    >>> cap_centres(np.array([1, 2, 2, 4, 8, 16, 32])).tolist()
    [4.0, 8.0]
    >>> cap_centres(np.arange(1, 41)).tolist()
    [3.0, 6.0, 12.0, 24.0]
    """
    candidates = np.unique(np.asarray(values, float))[CAP_LEVELS_APART:-CAP_LEVELS_APART]
    kept: list[float] = []
    for c in candidates.tolist():
        if not kept or c >= 2.0 * kept[-1]:
            kept.append(c)
    return np.array(kept)


def saturating(terms: Sequence["Term"], columns: Columns) -> tuple["Term", ...]:
    """``terms`` with every cap of a space's centre 0 (``cap(p)``) put at each of :func:`cap_centres` of
    its parameter's values in ``columns`` (the runs); a term whose cap has none is left out.

    >>> from automodel.space.parse import parse_term
    >>> [str(t) for t in saturating((parse_term("1/p"), parse_term("1/cap(p)")), {"p": np.array([1, 2, 4, 8, 16, 32])})]
    ['1/p', '1/Min(4, p)', '1/Min(8, p)']
    """
    out: list[Term] = []
    for term in terms:
        open_cap = next((f for f in term.factors if isinstance(f, Cap) and f.center == 0), None)
        if open_cap is None:
            out.append(term)
            continue
        rest = tuple(g for g in term.factors if g is not open_cap)
        centres = cap_centres(columns[open_cap.param]) if open_cap.param in columns else []
        out += [Term(rest + (Cap(open_cap.param, float(c), open_cap.exponent),)) for c in centres]
    return tuple(dict.fromkeys(out))


def caps_measured(term: "Term", columns: Columns) -> bool:
    """Whether every cap of ``term`` stands where the runs with these parameter ``columns`` could have put
    it (:func:`cap_centres`): not a centre that only runs beyond them place."""
    return all(not isinstance(f, Cap) or (f.param in columns and
                                          f.center in set(cap_centres(columns[f.param]).tolist()))
               for f in term.factors)


def _factor_key(f: Factor) -> tuple:
    return (type(f).__name__, f.param, repr(f))


def _merge(factors: tuple[Factor, ...]) -> tuple[Factor, ...]:
    """Canonical form: combine plain powers of the same parameter, drop unit factors, sort."""
    powers: dict[str, list[Fraction | int]] = {}
    others: list[Factor] = []
    for f in factors:
        if isinstance(f, PowerLog) and f.offset == 0:
            e, l = powers.get(f.param, [Fraction(0), 0])
            powers[f.param] = [e + f.exponent, l + f.log_exponent]
        else:
            others.append(f)
    merged: list[Factor] = [PowerLog(k, Fraction(e), int(l)) for k, (e, l) in powers.items() if e or l]
    return tuple(sorted(merged + others, key=_factor_key))


@dataclass(frozen=True)
class Term:
    """A product of factors; the empty product is the constant term ``1``.

    Examples
    --------
    >>> t = power("n", 3) * power("p", -1) * power("cpu", -1)
    >>> str(t)
    'n**3/(cpu*p)'
    """

    factors: tuple[Factor, ...] = ()
    _expr: sympy.Expr = field(default=None, init=False, repr=False, compare=False, hash=False)
    _hash: int = field(default=0, init=False, repr=False, compare=False, hash=False)
    _key: str = field(default="", init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", _merge(tuple(self.factors)))
        object.__setattr__(self, "_key", repr(self.factors))
        # of the text, not of the factors: Python hashes -1 and -2 alike, so p^-1 and p^-2 would collide
        object.__setattr__(self, "_hash", hash(self._key))

    @property
    def key(self) -> str:
        """The text of the term's canonical factors: equal terms have equal keys, in every process (a
        cache can be looked up by it without rebuilding its terms).

        >>> (power("n") * power("p", -1)).key == (power("p", -1) * power("n")).key
        True
        """
        return self._key

    def __hash__(self) -> int:  # computed once: terms key every cache (exponents are Fractions, slow to hash)
        return self._hash

    def __reduce__(self) -> tuple:  # rebuilt, not copied: string hashes differ between processes
        return Term, (self.factors,)

    def __mul__(self, other: "Term") -> "Term":
        return Term(self.factors + other.factors)

    @property
    def params(self) -> frozenset[str]:
        names = {f.param for f in self.factors}
        names |= {f.center_param for f in self.factors if isinstance(f, Sigmoid) and f.center_param}
        return frozenset(names)

    @property
    def description_length(self) -> int:
        """How much the term says beyond products of integer powers: the sum of its factors' (a
        fractional exponent counts its denominator less 1, a logarithm its power; a constant, ``n``,
        ``n^2 / p`` are 0, ``n log2 n`` and ``sqrt(n)`` 1, ``n^(3/4) log2(n)^2`` 5). The chooser's
        measure of simplicity among candidates with as many terms (:mod:`automodel.search.choice`).

        >>> [power("n", 1, 1).description_length, power("n", Fraction(3, 4), 2).description_length]
        [1, 5]
        """
        return sum(f.description_length for f in self.factors)

    @property
    def expr(self) -> sympy.Expr:
        if self._expr is None:
            import sympy

            e = sympy.Mul(*[f.expr for f in self.factors]) if self.factors else sympy.Integer(1)
            object.__setattr__(self, "_expr", e)
        return self._expr

    def __str__(self) -> str:
        return str(self.expr)

    def evaluate(self, columns: Columns, n_rows: int | None = None) -> np.ndarray:
        """The term's value on every row (vectorised; ``n_rows`` is needed for the constant term)."""
        if not self.factors:
            if n_rows is None:
                n_rows = len(next(iter(columns.values())))
            return np.ones(n_rows)
        out = self.factors[0].evaluate(columns)
        for f in self.factors[1:]:
            out = out * f.evaluate(columns)
        return out

    def to_dict(self) -> list[dict[str, Any]]:
        return [f.to_dict() for f in self.factors]


ONE = Term()


def constant_index(terms: Sequence[Term]) -> int:
    """The position of the constant term :data:`ONE` in ``terms``; -1 when it is not there.

    Examples
    --------
    >>> constant_index([power("n"), ONE]), constant_index([power("n")])
    (1, -1)
    """
    return next((i for i, t in enumerate(terms) if t == ONE), -1)


def term_values(terms: Iterable[Term], columns: Columns, n_rows: int) -> np.ndarray:
    """(n_rows, T) values of ``terms`` on every row; values that are not finite (an overflow, log2 of 0)
    become NaN, so callers can tell which terms are usable.

    Each distinct factor is evaluated once (vectorised) and each term is the product of its factors'
    values in order, as :meth:`Term.evaluate` computes it: many terms share factors (``n^2`` in
    ``n^2/p`` and ``n^2*log2(p)/bw``); see :class:`TermPlan`.
    """
    return TermPlan(list(terms)).values(columns, n_rows)


class TermPlan:
    """The pool's terms prepared for evaluation: each distinct factor once, each term the product of its
    factors' values in order, the terms of one width multiplied together.

    Made once, it evaluates the terms again without hashing the factors on every call (their exponents
    are Fractions, slow to hash), all of them or a subset (:func:`term_values` is a one-off plan).
    """

    def __init__(self, terms: list[Term] | tuple[Term, ...]) -> None:
        ids: dict = {}
        lists = [[ids.setdefault(f, len(ids)) for f in t.factors] for t in terms]
        self.factors = list(ids)
        self.width = np.array([len(x) for x in lists], dtype=np.intp)
        self.index = np.full((len(lists), max(self.width, default=0)), -1, dtype=np.intp)
        for j, x in enumerate(lists):
            self.index[j, :len(x)] = x

    def __len__(self) -> int:
        return len(self.width)

    def values(self, columns: Mapping[str, np.ndarray], n_rows: int, which: np.ndarray | None = None
               ) -> np.ndarray:
        """(n_rows, T) values of the terms (of ``terms[which]`` only: (n_rows, len(which))); values that
        are not finite become NaN."""
        which = np.arange(len(self)) if which is None else np.asarray(which, dtype=np.intp)
        index, width = self.index[which], self.width[which]
        out = np.empty((n_rows, len(which)))
        done = np.empty((n_rows, len(self.factors)))
        with np.errstate(all="ignore"):
            for f in np.unique(index[index >= 0]):
                done[:, f] = self.factors[f].evaluate(columns)
            for k in np.unique(width):
                sel = np.flatnonzero(width == k)
                if k == 0:
                    out[:, sel] = 1.0
                    continue
                value = done[:, index[sel, 0]]
                for i in range(1, k):
                    value = value * done[:, index[sel, i]]
                out[:, sel] = value
        out[~np.isfinite(out)] = np.nan
        return out


def term_sum(terms: Iterable[Term], coefficients: Iterable[float]) -> sympy.Expr:
    """The sympy expression ``sum(c * t)`` of a term model (terms with coefficient 0 left out)."""
    import sympy

    parts = [sympy.Float(c) * t.expr for c, t in zip(coefficients, terms) if c != 0.0]
    return sympy.Add(*parts) if parts else sympy.Float(0.0)


def power(param: str, exponent: Fraction | int | str = 1, log_exponent: int = 0) -> Term:
    """The single-factor term ``param^exponent * log2(param)^log_exponent``."""
    if isinstance(exponent, str):
        exponent = _fraction(exponent, "exponent")
    return Term((PowerLog(param, Fraction(exponent), int(log_exponent)),))


#: factors a term of a model file may have
MAX_FACTORS = 16


def term_from_dict(data: Any, allowed_params: frozenset[str] | set[str], what: str = "term") -> Term:
    """Rebuild a term from its JSON form, validating every field; never evaluates strings."""
    if not isinstance(data, list) or len(data) > MAX_FACTORS:
        got = f"{len(data)} factors" if isinstance(data, list) else type(data).__name__
        raise ModelFileError(f"{what}: expected a list of at most {MAX_FACTORS} factors, got {got}")
    factors: list[Factor] = []
    for i, f in enumerate(data):
        where = f"{what}, factor {i}"
        if not isinstance(f, dict):
            raise ModelFileError(f"{where}: expected an object, got {type(f).__name__}")
        kind = f.get("kind")
        param = _name(f.get("param"), f"{where}, 'param'")
        if param not in allowed_params:
            raise ModelFileError(f"{where}: parameter {param!r} is not one of the model's parameters")
        if kind == "power":
            known = {"kind", "param", "exponent", "log_exponent", "offset"}
            log_e = f.get("log_exponent", 0)
            offset = f.get("offset", 0)
            if not isinstance(log_e, int) or isinstance(log_e, bool) or not 0 <= log_e <= 8:
                raise ModelFileError(f"{where}: 'log_exponent' must be an integer 0..8, got {log_e!r}")
            if not isinstance(offset, int) or isinstance(offset, bool) or abs(offset) > 10**6:
                raise ModelFileError(f"{where}: 'offset' must be a small integer, got {offset!r}")
            factor: Factor = PowerLog(param, _fraction(f.get("exponent", 1), f"{where}, 'exponent'"),
                                      log_e, offset)
        elif kind == "sigmoid":
            known = {"kind", "param", "center", "center_param", "center_scale"}
            cparam = f.get("center_param", "")
            if cparam:
                cparam = _name(cparam, f"{where}, 'center_param'")
                if cparam not in allowed_params:
                    raise ModelFileError(f"{where}: parameter {cparam!r} is not one of the model's parameters")
            factor = Sigmoid(param, _number(f.get("center", 0.0), f"{where}, 'center'"), cparam,
                             _number(f.get("center_scale", 0.0), f"{where}, 'center_scale'"))
        elif kind in ("ceil_log2", "over1"):
            known = {"kind", "param"}
            factor = CeilLog2(param) if kind == "ceil_log2" else Over1(param)
        elif kind == "cap":
            known = {"kind", "param", "center", "exponent"}
            center = _number(f.get("center"), f"{where}, 'center'")
            if center <= 0:
                raise ModelFileError(f"{where}: 'center' must be positive, got {center!r}")
            factor = Cap(param, center, _fraction(f.get("exponent", 1), f"{where}, 'exponent'"))
        else:
            raise ModelFileError(f"{where}: unknown factor kind {kind!r} (expected power, sigmoid, ceil_log2, "
                                 "over1 or cap)")
        extra = set(f) - known
        if extra:
            raise ModelFileError(f"{where}: unexpected field(s) {sorted(extra)}")
        factors.append(factor)
    return Term(tuple(factors))
