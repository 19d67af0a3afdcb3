"""Known-formula suite (issue 11): synthetic functions of known formula, fitted by automodel and Extra-P.

Every function of :data:`FUNCTIONS` lies in Extra-P's hypothesis space (PMNF: a constant plus sums and
products of ``c * x^(i/j) * log2(x)^k``; exponents 0 to 3, k in 0..2), with one to four parameters.
Each is measured, without and with noise, on the same rows for every contender:

- parameter values :data:`GRIDS` (five per parameter): the full grid for up to three parameters; for
  four, Extra-P's sparse layout (the cross of five values per parameter with the others at their
  smallest value) plus the points where every parameter takes its 2nd, ..., 5th value;
- :data:`REPETITIONS` repetitions per point, each ``f * (1 + u)`` with ``u`` uniform in
  ``[-noise, noise]`` (mean and median unbiased), noise levels :data:`NOISES`, seeded per function,
  noise level and seed (several seeds for the noisy levels);
- each function under every naming of :data:`NAMINGS`: Score-P's names ``x, y, z, w`` and the roles
  ``n``, ``p`` (one parameter: ``n`` and ``p`` separately; three or four: ``n, p`` and the extra
  parameters ``iters``, ``clusters``). The rows are the same under every naming.

Contenders: ``automodel`` (``automodel.fit``, default search space, through
:func:`benchmarks.contenders.automodel_contender`, in :data:`WORKERS` processes) and Extra-P's default
and refining modelers (:func:`benchmarks.contenders.extrap_contender`, in a thread beside them). Extra-P
does not look at names, so it runs once per data set and its model serves every naming (its formula
renamed).

Scores per case (:func:`score_case`):

1. **structure right**: for every parameter the asymptotically dominant pair ``(i/j, k)`` of the chosen
   model equals the true one (:func:`lead_pairs`, :func:`same_structure`);
2. **relative error** ``|pred - true| / true`` against the noise-free function at 4x and 16x the
   largest measured value: of every parameter at once (the diagonal point) and of each parameter alone
   (the others at their largest measured value);
3. **fit time**: the contender's wall seconds for the case.

Run: ``python -m benchmarks.known_formulas [--quick] [--no-extrap] [--write]``: prints the tables;
``--write`` puts the records into ``benchmarks/results.json`` (the case records into
``benchmarks/known_formulas_cases.json``) and renders ``benchmarks/RESULTS.md`` again (section
"Known-formula suite"). ``python -m benchmarks`` runs it too (``--quick``: :data:`QUICK_FUNCTIONS`
at :data:`QUICK_NOISES`, one seed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import os
import re
import socket
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import sympy
from sympy.codegen.cfunctions import log2

from benchmarks.contenders import (OK, Key, Outcome, automodel_contender, extrap_contender, query_points,
                                   run_contenders)
from benchmarks.records import jsonable, number, pct, short, write_results
from benchmarks import report
from benchmarks.scoring import relative_errors, summarize
from benchmarks.tasks import Task

SUITE = "known-formulas"
#: positional parameter names of the formulas below
PARAMS = ("x", "y", "z", "w")
#: the five measured values of each parameter, by position
GRIDS = ((4, 8, 16, 32, 64), (2, 4, 8, 16, 32), (10, 20, 30, 40, 50), (16, 32, 64, 128, 256))
#: the names each function is fitted under, by number of parameters
NAMINGS: dict[int, tuple[tuple[str, ...], ...]] = {
    1: (("x",), ("n",), ("p",)),
    2: (("x", "y"), ("n", "p")),
    3: (("x", "y", "z"), ("n", "p", "iters")),
    4: (("x", "y", "z", "w"), ("n", "p", "iters", "clusters")),
}
NOISES = (0.0, 0.01, 0.05, 0.10, 0.20)
REPETITIONS = 5
#: seeds per noisy level (the noise-free level has one data set)
SEEDS = 5
#: the prediction points: this many times the largest measured value
FACTORS = (4, 16)
#: an exponent (i/j or k) of a model equals the true one within this (printed formulas round floats)
EXPONENT_TOL = 1e-3
#: the reference that knows the suite's structures (:func:`oracle_outcome`): not a tool, a measure of
#: what the rows can tell
ORACLE = report.KNOWN_ORACLE
CONTENDERS = ("automodel", "extrap-default", "extrap-refining", ORACLE)
#: the reference's fits closer than this (RMS relative residual) are exact: rounding, not signal
EXACT = 1e-10
#: processes that fit automodel (Extra-P runs beside them), and cases handed to a process at a time
WORKERS = min(2, os.cpu_count() or 1)
CHUNK = 4


@dataclass(frozen=True)
class Known:
    """A function of known formula: ``formula`` in the first ``n_params`` names of :data:`PARAMS`."""

    key: str
    n_params: int
    formula: str


def _single(key: str, term: str) -> Known:
    return Known(key, 1, f"200 + 10*{term}")


#: The suite's functions. One parameter: Extra-P's exponents with constant 200 and coefficient 10 (as in
#: its own modeler tests), the constant model, and other scales; two to four: sums, products, mixtures,
#: constants and parameters without effect.
FUNCTIONS: tuple[Known, ...] = (
    Known("1-const", 1, "4.068"),
    *(_single(f"1-{name}", term) for name, term in (
        ("x1/4", "x^(1/4)"), ("x1/3", "x^(1/3)"), ("x1/2", "x^(1/2)"), ("x2/3", "x^(2/3)"),
        ("x3/4", "x^(3/4)"), ("x1", "x"), ("x5/4", "x^(5/4)"), ("x4/3", "x^(4/3)"), ("x3/2", "x^(3/2)"),
        ("x5/3", "x^(5/3)"), ("x2", "x^2"), ("x9/4", "x^(9/4)"), ("x5/2", "x^(5/2)"), ("x3", "x^3"),
        ("l1", "log2(x)"), ("l2", "log2(x)^2"), ("x1/3l2", "x^(1/3)*log2(x)^2"), ("x1/2l1", "x^(1/2)*log2(x)"),
        ("x2/3l1", "x^(2/3)*log2(x)"), ("x1l1", "x*log2(x)"), ("x1l2", "x*log2(x)^2"),
        ("x3/2l2", "x^(3/2)*log2(x)^2"), ("x2l1", "x^2*log2(x)"))),
    Known("1-small", 1, "3 + 0.5*x^(3/2)"),
    Known("1-offset", 1, "20000 + 10*x"),
    Known("1-tiny", 1, "0.01 + 2e-4*x^(5/4)*log2(x)"),
    Known("2-const", 2, "42.5"),
    Known("2-prod", 2, "200 + 10*x*y"),
    Known("2-sum", 2, "200 + 10*x + 20*y^(1/2)"),
    Known("2-x2/3logy", 2, "200 + 10*x^(2/3)*log2(y)"),
    Known("2-mixed", 2, "100 + 2*x^(3/2) + 5*y*log2(y)"),
    Known("2-xlogx-y1/2", 2, "50 + 0.5*x*log2(x)*y^(1/2)"),
    Known("2-logx-y4/3", 2, "200 + 10*log2(x) + 3*y^(4/3)"),
    Known("2-prod-log", 2, "1 + 0.1*x^(5/4)*y^(1/3)*log2(y)"),
    Known("2-x-only", 2, "200 + 10*x^(1/2)"),
    Known("2-sum-prod", 2, "5 + 0.02*x^2*y + 3*y"),
    Known("3-z-only", 3, "1000 + z^2"),
    Known("3-prod", 3, "200 + 10*x*y*z"),
    Known("3-sum", 3, "200 + 10*x + 20*y^(1/2) + 30*z^(1/3)"),
    Known("3-mixed", 3, "100 + 2*x*log2(y) + 0.5*z^2"),
    Known("3-prod-sum", 3, "10 + 0.1*x^(3/2)*z + 5*log2(y)"),
    Known("3-prod-log", 3, "5 + 0.01*x^(2/3)*y^(3/4)*z^(1/2)*log2(z)"),
    Known("4-const", 4, "7.5"),
    Known("4-prod", 4, "200 + 10*x*y*z*w"),
    Known("4-mixed", 4, "100 + x^(1/2)*y*log2(z) + 3*w"),
    Known("4-sum-prod", 4, "20 + 0.1*x^2 + 2*y*z^(1/3) + w^(1/4)"),
)
#: ``--quick``: these functions, noise 0 and 10 %, one seed
QUICK_FUNCTIONS = ("1-const", "1-x2/3l1", "1-x3", "2-prod", "2-mixed", "3-mixed", "4-sum-prod")
QUICK_NOISES = (0.0, 0.10)

# --- structure -----------------------------------------------------------------------------

Pair = tuple[float, float]
#: the growth of the zero expression (below every pair)
ABSENT: Pair = (-math.inf, -math.inf)


def _symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, positive=True)


def parse_formula(text: str, names: Sequence[str]) -> sympy.Expr:
    """A formula as either tool prints it (``^`` or ``**``, ``log2``, ``sqrt``) as a sympy expression.

    Examples
    --------
    >>> parse_formula("200.0 + 10.0 * x^(2/3) * log2(x)^(1)", ["x"])
    10.0*x**(2/3)*log2(x) + 200.0
    """
    local: dict = {name: _symbol(name) for name in names}
    local.update(log2=log2, log=sympy.log, exp=sympy.exp, sqrt=sympy.sqrt)
    return sympy.sympify(text.replace("^", "**"), locals=local)


def _exponential(arg: sympy.Expr, x: sympy.Symbol) -> Pair | None:
    """Growth of ``exp(arg)``: a power ``x^a`` when ``arg = a ln x + (terms free of x)``; :data:`ABSENT` when
    ``arg`` tends to minus infinity otherwise (``exp(-x)`` vanishes beside any power); else None."""
    level = sympy.Dummy("L")  # log2(x)
    arg = sympy.expand(arg).subs(log2(x), level).subs(sympy.log(x), level * sympy.log(2))
    if arg.has(x):
        try:
            vanishes = sympy.limit(arg.subs(level, log2(x)), x, sympy.oo) == -sympy.oo
        except (NotImplementedError, ValueError, TypeError):
            return None
        return ABSENT if vanishes else None
    try:
        poly = sympy.Poly(arg, level)
    except sympy.PolynomialError:
        return None
    if poly.degree() <= 0:
        return (0.0, 0.0)
    slope = poly.coeff_monomial(level)
    if poly.degree() > 1 or not slope.is_number:
        return None
    return (float(slope / sympy.log(2)), 0.0)


def growth(expr: sympy.Expr, x: sympy.Symbol) -> Pair | None:
    """The asymptotically dominant pair ``(a, k)`` of ``expr`` in ``x``: ``expr = Θ(x^a log2(x)^k)``.

    The other parameters are held at fixed positive values. Rules: a sum grows as its fastest term
    (pairs compared lexicographically, whatever the coefficient's sign), a product adds its factors'
    pairs, a constant power multiplies them, ``log2`` or ``log`` of a power of ``x`` is ``(0, 1)``,
    ``b^g`` and ``exp(g)`` with ``g`` linear in ``log2(x)`` are powers of ``x``. The zero expression,
    and ``exp(g)`` with ``g`` tending to minus infinity, are :data:`ABSENT` (so a sigmoid
    ``x / (1 + exp(-(x - c)))`` grows as ``x``). Anything else (``exp(x)``, ``x^p``, ``log2(log2(x))``,
    ``2^(log2(x)^2)``, piecewise or unknown functions) has no pair: None. ``min`` and ``max`` grow as
    their slowest and fastest argument (``over1(x) = min(1, x - 1)`` is a constant).

    Examples
    --------
    >>> x, y = sympy.symbols("x y", positive=True)
    >>> growth(3 + x ** sympy.Rational(2, 3) * log2(x) + y * x ** 2, x)
    (2.0, 0.0)
    >>> growth(2 ** (sympy.Float(0.5) * log2(x) + log2(y)), x)
    (0.5, 0.0)
    """
    if not expr.has(x):
        return ABSENT if expr.is_zero else (0.0, 0.0)
    if expr == x:
        return (1.0, 0.0)
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        parts = [growth(arg, x) for arg in expr.args]
        if None in parts:
            return None
        if isinstance(expr, sympy.Add):
            return max(parts)
        return ABSENT if ABSENT in parts else (sum(a for a, _ in parts), sum(k for _, k in parts))
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.args
        if not exponent.has(x):
            inner = growth(base, x)
            if inner is None or inner == ABSENT or not exponent.is_number:
                return None  # 0^e, x^p
            return (inner[0] * float(exponent), inner[1] * float(exponent))
        if base.is_number and base.is_positive:
            return _exponential(exponent * sympy.log(base), x)
        return None
    if isinstance(expr, sympy.exp):
        return _exponential(expr.args[0], x)
    if isinstance(expr, (log2, sympy.log)):
        inner = growth(expr.args[0], x)
        if inner is None or inner == ABSENT or (inner[0] == 0 and inner[1] != 0):
            return None  # log of zero, log log x
        return (0.0, 1.0) if inner[0] != 0 else (0.0, 0.0)
    if isinstance(expr, sympy.Abs):
        return growth(expr.args[0], x)
    if isinstance(expr, (sympy.Min, sympy.Max)):  # over1(x) = min(1, x - 1)
        parts = [growth(arg, x) for arg in expr.args]
        return None if None in parts else (min(parts) if isinstance(expr, sympy.Min) else max(parts))
    return None


def lead_pairs(formula: str | sympy.Expr, names: Sequence[str]) -> tuple[Pair | None, ...]:
    """:func:`growth` in each parameter of ``names``, in order; all None when the text does not parse."""
    try:
        expr = parse_formula(formula, names) if isinstance(formula, str) else formula
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
        return (None,) * len(names)
    symbols = {str(s): s for s in expr.free_symbols}  # by name: automodel's symbols are also real=True
    return tuple(growth(expr, symbols.get(name, _symbol(name))) for name in names)


def same_structure(model: Sequence[Pair | None], truth: Sequence[Pair | None],
                   tol: float = EXPONENT_TOL) -> bool:
    """True when every parameter's lead pair of the model equals the true one (within ``tol``).

    Examples
    --------
    >>> same_structure(lead_pairs("4.02 + 1.3e-15*p^3*log2(p)", ["p"]), lead_pairs("4.068", ["p"]))
    False
    """
    return len(model) == len(truth) and all(
        m is not None and t is not None and abs(m[0] - t[0]) <= tol and abs(m[1] - t[1]) <= tol
        for m, t in zip(model, truth))


def pair_text(name: str, pair: Pair | None) -> str:
    """``x^(2/3) log2^1``-style text of a lead pair: ``x:2/3,1``; ``x:?`` without one."""
    if pair is None or pair == ABSENT:
        return f"{name}:{'?' if pair is None else '0'}"
    exact = [Fraction(v).limit_denominator(12) for v in pair]
    shown = [str(f) if abs(float(f) - v) < 1e-9 else f"{v:.4g}" for f, v in zip(exact, pair)]
    return f"{name}:{shown[0]},{shown[1]}"


# --- cases ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Case:
    """One function under one naming, noise level and seed, as a task (train: noisy rows; test: the
    prediction points of :func:`prediction_points` with the noise-free value)."""

    function: Known
    names: tuple[str, ...]
    noise: float
    seed: int
    task: Task

    @property
    def naming(self) -> str:
        return ",".join(self.names)

    @property
    def dataset(self) -> tuple[str, float, int]:
        """The rows' identity: the same under every naming."""
        return (self.function.key, self.noise, self.seed)


def layout(n_params: int, grids: Sequence[Sequence[float]] = GRIDS) -> np.ndarray:
    """The measured points (one row each) of ``grids`` (one per parameter, by position): the full grid, or for
    four parameters the cross plus diagonal."""
    grids = grids[:n_params]
    if n_params <= 3:
        return np.array(list(itertools.product(*grids)), dtype=float)
    low = [g[0] for g in grids]
    cross = [low] + [[*low[:i], v, *low[i + 1:]] for i, g in enumerate(grids) for v in g[1:]]
    diagonal = [[g[j] for g in grids] for j in range(1, 5)]
    return np.array(cross + diagonal, dtype=float)


def prediction_points(names: Sequence[str], grids: Sequence[Sequence[float]] = GRIDS) -> pd.DataFrame:
    """Column ``point`` (``"4x all"``, ``"16x n"``, ...) and the parameter values of every prediction point.

    ``<f>x all``: every parameter at ``f`` times its largest measured value; ``<f>x <name>``: that
    parameter alone, the others at their largest measured value (of ``grids``, by position).
    """
    top = [max(g) for g in grids[:len(names)]]
    rows = []
    for factor in FACTORS:
        rows.append({"point": f"{factor}x all", **{n: factor * t for n, t in zip(names, top)}})
        for i, name in enumerate(names):
            rows.append({"point": f"{factor}x {name}", **{n: t * (factor if j == i else 1)
                                                          for j, (n, t) in enumerate(zip(names, top))}})
    return pd.DataFrame(rows)


@lru_cache(maxsize=None)
def _compiled(function: Known) -> Callable[..., np.ndarray]:
    names = PARAMS[:function.n_params]
    return sympy.lambdify([_symbol(n) for n in names], parse_formula(function.formula, names),
                          modules=[{"log2": np.log2}, "numpy"])


def evaluate(function: Known, points: np.ndarray) -> np.ndarray:
    """The noise-free function at ``points`` (one row per point, columns in :data:`PARAMS` order)."""
    values = _compiled(function)(*np.asarray(points, dtype=float).T)
    return np.broadcast_to(np.asarray(values, dtype=float), (len(points),)).copy()


def make_case(function: Known, names: tuple[str, ...], noise: float, seed: int,
              grids: Sequence[Sequence[float]] = GRIDS, suite: str = SUITE) -> Case:
    """The rows of ``function`` at ``noise`` and ``seed`` (the same under every naming) as a case of ``suite``,
    measured at :func:`layout` of ``grids`` and predicted at :func:`prediction_points` beyond them."""
    points = np.repeat(layout(function.n_params, grids), REPETITIONS, axis=0)
    rng = np.random.default_rng([zlib.crc32(function.key.encode()), round(noise * 1000), seed])
    measured = evaluate(function, points) * (1 + noise * rng.uniform(-1.0, 1.0, len(points)))
    train = pd.DataFrame(points, columns=list(names)).assign(time=measured)
    test = prediction_points(names, grids)
    test["time"] = evaluate(function, test[list(names)].to_numpy(float))
    naming = ",".join(names)
    task = Task(suite, f"{function.key} {naming} noise {noise:.0%} seed {seed}", {n: n for n in names},
                train, test, False, "synthetic", unit="s",
                split=f"{len(points) // REPETITIONS} points x {REPETITIONS}; predict at {FACTORS}x")
    return Case(function, names, noise, seed, task)


def build_cases(quick: bool = False, seeds: int | None = None, functions: Iterable[Known] | None = None,
                noises: Sequence[float] | None = None) -> list[Case]:
    """Every function under every naming, noise level and seed (``quick``: the small selection)."""
    if functions is None:
        functions = [f for f in FUNCTIONS if f.key in QUICK_FUNCTIONS] if quick else FUNCTIONS
    seeds = seeds if seeds is not None else (1 if quick else SEEDS)
    noises = noises if noises is not None else (QUICK_NOISES if quick else NOISES)
    return [make_case(f, names, noise, seed) for f in functions for noise in noises
            for seed in range(seeds if noise else 1) for names in NAMINGS[f.n_params]]


# --- the reference: least squares among the suite's own structures ----------------------------


@lru_cache(maxsize=None)
def _structure(function: Known) -> tuple[sympy.Expr, ...]:
    """The terms of ``function`` without their coefficients and constant (``()`` for a constant)."""
    expr = sympy.expand(parse_formula(function.formula, PARAMS[:function.n_params]))
    return tuple(term.as_coeff_Mul()[1] for term in expr.as_coeff_add()[1])


@lru_cache(maxsize=None)
def _structure_columns(function: Known) -> Callable[..., list[np.ndarray]]:
    return sympy.lambdify([_symbol(n) for n in PARAMS[:function.n_params]], list(_structure(function)),
                          modules=[{"log2": np.log2}, "numpy"])


def _design(function: Known, points: np.ndarray) -> np.ndarray:
    """The constant and the terms of ``function``'s structure at ``points`` (columns in PARAMS order)."""
    points = np.asarray(points, dtype=float)
    terms = _structure_columns(function)(*points.T) if _structure(function) else []
    return np.column_stack([np.ones(len(points)), *(np.broadcast_to(t, (len(points),)) for t in terms)])


def oracle_outcome(case: Case) -> Outcome:
    """The reference of the suite: it knows the true structures of all functions with as many parameters
    as ``case`` and picks the one of least BIC.

    Each structure (the constant and the terms of one of :data:`FUNCTIONS`, coefficients free) is
    fitted by least squares of the relative residuals (the noise is multiplicative); the choice
    minimises ``m log(RSS / m) + k log m`` over the ``m`` runs (``k`` coefficients; a fit within
    :data:`EXACT` is exact, so among exact fits the fewest coefficients win). No tool can know
    this list, so this is not a contender: its share of structure right says how often the rows, read
    by a likelihood, point to the true structure among a few dozen plausible ones.
    """
    start = time.perf_counter()
    n_params = len(case.names)
    points = case.task.train[list(case.names)].to_numpy(float)
    y = case.task.train["time"].to_numpy(float)
    best: tuple[float, Known, np.ndarray] | None = None
    for function in (f for f in FUNCTIONS if f.n_params == n_params):
        design = _design(function, points)
        coef = np.linalg.lstsq(design / y[:, None], np.ones_like(y), rcond=None)[0]
        rss = float(np.sum((design @ coef / y - 1.0) ** 2))
        bic = len(y) * math.log(max(rss / len(y), EXACT**2)) + design.shape[1] * math.log(len(y))
        if best is None or bic < best[0]:
            best = (bic, function, coef)
    _, function, coef = best
    symbols = [_symbol(n) for n in case.names]
    positional = dict(zip((_symbol(n) for n in PARAMS), symbols))
    formula = coef[0] + sum(c * t.xreplace(positional) for c, t in zip(coef[1:], _structure(function)))
    queried = query_points(case.task)[list(case.names)].to_numpy(float)
    return Outcome(OK, str(formula), _design(function, queried) @ coef, time.perf_counter() - start,
                   note=f"structure of {function.key}")


# --- running and scoring -------------------------------------------------------------------


def _rename(formula: str | None, names: Sequence[str], to: Sequence[str]) -> str | None:
    if formula is None or tuple(names) == tuple(to):
        return formula
    mapping = dict(zip(names, to))
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: mapping[m.group(1)], formula)


def _automodel_outcomes(tasks: Sequence[Task]) -> dict[Key, Outcome]:
    """The ``automodel`` contender on ``tasks`` (run in a worker process)."""
    return automodel_contender().run(tasks, {})


def _fit_automodel(tasks: Sequence[Task], workers: int, log: Callable[[str], None]) -> dict[Key, Outcome]:
    """automodel on every task, in ``workers`` forked processes (chunks handed out as workers free up)."""
    start = time.perf_counter()
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        out = _automodel_outcomes(tasks)
    else:
        chunks = [tasks[i:i + CHUNK] for i in range(0, len(tasks), CHUNK)]
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            out = {k: v for part in pool.map(_automodel_outcomes, chunks) for k, v in part.items()}
    log(f"automodel: {sum(o.ok for o in out.values())}/{len(tasks)} cases modelled in "
        f"{time.perf_counter() - start:.1f} s ({max(workers, 1)} process(es))")
    return out


def run(cases: Sequence[Case], extrap: bool = True, install: bool = True, workers: int = WORKERS,
        log: Callable[[str], None] = print, oracle: bool = True) -> dict[str, dict[Key, Outcome]]:
    """Fit every case with every contender: ``contender -> task.key -> Outcome``.

    automodel fits in ``workers`` processes; meanwhile a thread runs Extra-P (one process at a time), which
    models each data set once (under its first naming): its outcome serves the data set's other namings.
    The suite's reference (:func:`oracle_outcome`) runs last unless ``oracle`` is false.
    """
    first: dict[tuple, Case] = {}
    for case in cases:
        first.setdefault(case.dataset, case)
    others = [extrap_contender(m, install) for m in ("default", "refining")] if extrap else []
    with ThreadPoolExecutor(max_workers=1) as thread:
        pending = thread.submit(run_contenders, others, [c.task for c in first.values()], None, log)
        out = {"automodel": _fit_automodel([c.task for c in cases], workers, log)}
        by_first = pending.result()
    for name, outcomes in by_first.items():
        out[name] = {}
        for case in cases:
            source = first[case.dataset]
            outcome = outcomes[source.task.key]
            out[name][case.task.key] = replace(outcome, formula=_rename(outcome.formula, source.names, case.names))
    if oracle:
        out[ORACLE] = {case.task.key: oracle_outcome(case) for case in cases}
    return out


@lru_cache(maxsize=None)
def true_pairs(function: Known) -> tuple[Pair | None, ...]:
    """The lead pairs of ``function`` in its parameters, in order (:func:`lead_pairs`)."""
    return lead_pairs(function.formula, PARAMS[:function.n_params])


def score_case(case: Case, contender: str, outcome: Outcome) -> dict:
    """The record of one contender on one case: structure, errors at the prediction points, seconds."""
    names = case.names
    truth = true_pairs(case.function)
    model = lead_pairs(outcome.formula, names) if outcome.ok and outcome.formula else (None,) * len(names)
    labels = sorted(case.task.test["point"].unique())  # relative_errors returns the points in this order
    errors = dict(zip(labels, relative_errors(case.task.test, outcome.split(case.task)[0], ["point"])))
    per = {f: [errors[f"{f}x {n}"] for n in names] for f in FACTORS}
    return {"function": case.function.key, "n_params": len(names), "naming": case.naming,
            "noise": case.noise, "seed": case.seed, "contender": contender, "status": outcome.status,
            "formula": outcome.formula,
            "structure": same_structure(model, truth),
            "lead": " ".join(pair_text(n, p) for n, p in zip(names, model)),
            **{f"e{f}": errors[f"{f}x all"] for f in FACTORS},
            **{f"e{f}_each": per[f] for f in FACTORS}, "seconds": outcome.seconds}


def compact(record: Mapping) -> dict:
    """A case record for ``results.json``: numbers to six significant digits (:func:`benchmarks.records.short`)."""
    return {k: (short(v) if isinstance(v, list) else short([v])[0] if isinstance(v, float) else v)
            for k, v in record.items()}


#: how the case records are summarised: per group, per noise level, and everything at once
LEVELS: dict[str, tuple[str, ...]] = {"group": ("n_params", "noise", "naming"), "noise": ("noise",),
                                      "params": ("n_params",), "all": ()}


def _median(values: Iterable[float | None]) -> float:
    return summarize(np.nan if v is None else v for v in values).median


def aggregate(records: Sequence[Mapping], level: str) -> list[dict]:
    """Per contender and key of :data:`LEVELS` ``[level]``: cases, share with the structure right,
    median errors (diagonal at each factor, each parameter alone at the largest) and median seconds.

    A failed fit counts as wrong structure and infinite errors.
    """
    keys = LEVELS[level]
    groups: dict[tuple, list[Mapping]] = {}
    for r in records:
        groups.setdefault((*(r[k] for k in keys), r["contender"]), []).append(r)
    big = FACTORS[-1]
    out = []
    for key, rows in groups.items():
        failed = [r["status"] for r in rows if r["status"] != "ok"]
        out.append({"level": level, **dict(zip(keys, key)), "contender": key[-1], "cases": len(rows),
                    "failed": len(failed), "status": failed[0] if len(failed) == len(rows) else "ok",
                    "structure": float(np.mean([r["structure"] for r in rows])),
                    **{f"e{f}": _median(r[f"e{f}"] for r in rows) for f in FACTORS},
                    f"e{big}_each": _median(e for r in rows for e in r[f"e{big}_each"]),
                    "seconds": _median(r["seconds"] for r in rows)})
    return out


def collect(quick: bool = False, extrap: bool = True, install: bool = True, seeds: int | None = None,
            command: str = "", log: Callable[[str], None] = print, functions: Iterable[Known] | None = None,
            noises: Sequence[float] | None = None, workers: int = WORKERS) -> dict:
    """Run the suite (:func:`build_cases` of ``quick``, ``seeds``, ``functions``, ``noises``; :func:`run` with
    ``workers``); the records for ``results.json``.

    Returns
    -------
    dict
        ``known_formulas_meta`` (date, machine, cores, git, seconds, command, grid), ``known_formulas_groups``
        (:func:`aggregate` at every level of :data:`LEVELS`) and ``known_formulas_cases`` (one record per
        case and tool, :func:`score_case`; Extra-P's under each data set's first naming only, as its
        model serves the other namings unchanged; not the oracle's).
    """
    start, load = time.perf_counter(), round(os.getloadavg()[0], 2)
    cases = build_cases(quick, seeds, functions, noises)
    log(f"known-formula suite: {len(cases)} cases of {len({c.function.key for c in cases})} functions")
    outcomes = run(cases, extrap, install, workers, log)
    records = [score_case(c, name, outcomes[name][c.task.key]) for name in outcomes for c in cases]
    groups = [g for level in LEVELS for g in aggregate(records, level)]
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": socket.gethostname(),
            "cores": os.cpu_count(), "load_average": load, "git": report.revision(), "quick": quick,
            "command": command, "seconds": time.perf_counter() - start,
            "functions": len({c.function.key for c in cases}),
            "noises": sorted({c.noise for c in cases}), "seeds": max(c.seed for c in cases) + 1,
            "repetitions": REPETITIONS, "factors": list(FACTORS), "grids": [list(g) for g in GRIDS],
            "exponent_tol": EXPONENT_TOL, "contenders": list(outcomes), "workers": workers}
    stored = [compact(r) for r in records  # Extra-P's copies for the other namings add nothing; the oracle
              if r["contender"] == "automodel"  # is recomputed in seconds from this file (its groups stay)
              or (r["contender"] != ORACLE and r["naming"] == ",".join(NAMINGS[r["n_params"]][0]))]
    return {"known_formulas_meta": meta, "known_formulas_groups": groups, "known_formulas_cases": stored}


# --- output --------------------------------------------------------------------------------

PUBLISHED = Path(__file__).resolve().parent
SHORT = {"automodel": "automodel", "extrap-default": "Extra-P def", "extrap-refining": "Extra-P ref",
         ORACLE: "oracle"}


def table_text(groups: Sequence[Mapping], level: str = "group") -> str:
    """The summaries of one level of :data:`LEVELS` as a plain-text table (80 columns)."""
    big = FACTORS[-1]
    head = (f"{'P':>1} {'noise':>5} {'naming':18} {'contender':11} {'cases':>5} {'struct':>6} "
            f"{f'{FACTORS[0]}x':>7} {f'{big}x':>7} {'each':>7} {'sec':>4}")
    lines = [head, "-" * len(head)]
    previous = None
    for g in sorted((g for g in groups if g["level"] == level),
                    key=lambda g: (g.get("n_params", 0), g.get("noise", 0), g.get("naming", ""),
                                   CONTENDERS.index(g["contender"]))):
        where = (str(g.get("n_params", "*")), f"{100 * g['noise']:.0f}%" if "noise" in g else "*",
                 g.get("naming", "*"))
        shown = where if where != previous else ("", "", "")
        previous = where
        if g["status"] != "ok":
            lines.append(f"{shown[0]:>1} {shown[1]:>5} {shown[2]:18} {SHORT[g['contender']]:11} {g['status'][:40]}")
            continue
        errors = (pct(number(g[key])) for key in (f"e{FACTORS[0]}", f"e{big}", f"e{big}_each"))
        lines.append(f"{shown[0]:>1} {shown[1]:>5} {shown[2]:18} {SHORT[g['contender']]:11} {g['cases']:>5} "
                     f"{100 * g['structure']:5.0f}% " + " ".join(f"{e:>7}" for e in errors) + f" {g['seconds']:4.2f}")
    return "\n".join(lines)


def publish(results: Mapping, out: Path = PUBLISHED) -> Path:
    """Put the suite's records into ``out/results.json`` (its cases into ``known_formulas_cases.json``,
    :func:`benchmarks.records.write_results`) and render the generated blocks of ``out/RESULTS.md`` again from
    it (:func:`benchmarks.report.write`: every hand-written line kept)."""
    stored = json.loads((out / "results.json").read_text())
    stored.update(jsonable(results))
    target = report.write(stored, out / "RESULTS.md")
    write_results(stored, out)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.known_formulas", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"functions {', '.join(QUICK_FUNCTIONS)}; noise {QUICK_NOISES}; one seed")
    ap.add_argument("--seeds", type=int, default=None, help=f"seeds per noisy level (default {SEEDS})")
    ap.add_argument("--no-extrap", action="store_true", help="automodel only")
    ap.add_argument("--workers", type=int, default=WORKERS, help=f"automodel processes (default {WORKERS})")
    ap.add_argument("--write", action="store_true",
                    help=f"publish into {PUBLISHED}/results.json and RESULTS.md (not with --quick)")
    args = ap.parse_args(argv)
    if args.quick and args.write:
        ap.error("--quick never writes the published results")
    command = " ".join(["python -m benchmarks.known_formulas", *(argv if argv is not None else sys.argv[1:])])
    results = collect(args.quick, not args.no_extrap, install=not args.quick, seeds=args.seeds, command=command,
                      workers=args.workers)
    print(table_text(results["known_formulas_groups"], "group"))
    print()
    print(table_text(results["known_formulas_groups"], "noise"))
    print(f"{results['known_formulas_meta']['seconds']:.0f} s")
    if args.write:
        print(f"wrote {publish(results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
