"""Collective operations as schedules of point-to-point steps, and their Hockney closed forms.

A collective's time is the sum over its steps of the maximum, over the messages sent
concurrently in that step, of the point-to-point time ``t(m)`` (contention-hockney-singh,
sec. 3.1 "(a) estimate the time needed for each send, (b) find the maximum ... over all the steps
that run in parallel and (c) sum the estimates"). With ``t`` non-decreasing in ``m``, the maximum
is ``t`` of the step's largest message, so a schedule is fully described by the largest message
of every step. Schedules here are lists of *phases* of two kinds:

* ``("uniform", c, f)``: ``c`` steps, each with largest message ``f * m``;
* ``("doubling", c, f)``: ``c`` steps with largest messages ``f*m, 2 f*m, ..., 2^(c-1) f*m``.

``c`` and ``f`` are written once as arithmetic in ``p`` and ``L = ceil(log2 p)``, so the same code
yields numpy arrays (for fitting and prediction) and sympy expressions (for export).
Sizes are those of power-of-two process counts (the textbook algorithms); for other ``p`` the
step count ``L = ceil(log2 p)`` is exact and the message sizes are the power-of-two ones.

Message-size convention (``n`` column): the whole buffer for broadcasts; the per-process block
for allgather, all-to-all, scatter and gather (what OSU benchmarks report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["Schedule", "SCHEDULES", "collective_terms", "phases", "design_matrix", "schedule_expr",
           "column_names"]

Phase = tuple[str, Any, Any]


@dataclass(frozen=True)
class Schedule:
    """A named collective algorithm: ``build(p, L)`` returns its phases (see module docstring)."""

    name: str
    title: str
    build: Callable[[Any, Any], list[Phase]]


def _p2p(p: Any, L: Any) -> list[Phase]:
    return [("uniform", 1, 1)]


def _binomial_bcast(p: Any, L: Any) -> list[Phase]:
    return [("uniform", L, 1)]


def _linear(p: Any, L: Any) -> list[Phase]:
    return [("uniform", p - 1, 1)]


def _scatter_rd_allgather(p: Any, L: Any) -> list[Phase]:
    # binomial scatter (messages m/2, m/4, ..., m/2^L) then recursive-doubling allgather of m/2^L blocks
    return [("doubling", L, 2**-L), ("doubling", L, 2**-L)]


def _scatter_ring_allgather(p: Any, L: Any) -> list[Phase]:
    # binomial scatter then ring allgather: p - 1 steps of m/p
    return [("doubling", L, 2**-L), ("uniform", p - 1, 1 / p)]


def _rd_allgather(p: Any, L: Any) -> list[Phase]:
    # step k exchanges 2^k blocks of m bytes
    return [("doubling", L, 1)]


SCHEDULES: dict[str, Schedule] = {
    s.name: s
    for s in (
        Schedule("p2p", "point-to-point message, t(m)", _p2p),
        Schedule("binomial_bcast", "binomial-tree broadcast, ceil(log2 p) steps of m", _binomial_bcast),
        Schedule("scatter_rd_allgather_bcast", "broadcast as binomial scatter + recursive-doubling allgather",
                 _scatter_rd_allgather),
        Schedule("scatter_ring_allgather_bcast", "broadcast as binomial scatter + ring allgather",
                 _scatter_ring_allgather),
        Schedule("rd_allgather", "recursive-doubling allgather (m per process)", _rd_allgather),
        Schedule("ring_allgather", "ring allgather, p - 1 steps of m", _linear),
        Schedule("pairwise_alltoall", "pairwise all-to-all, p - 1 steps of m", _linear),
        Schedule("linear_scatter", "linear scatter: root sends p - 1 blocks of m in turn", _linear),
        Schedule("linear_gather", "linear gather: root receives p - 1 blocks of m in turn", _linear),
        Schedule("linear_bcast", "linear broadcast: root sends m to p - 1 ranks in turn", _linear),
    )
}


def phases(schedule: str, p: np.ndarray) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Numeric phases of ``schedule`` for process counts ``p`` (arrays broadcast to ``p``'s shape)."""
    p = np.asarray(p, dtype=float)
    L = np.ceil(np.log2(p))
    return [(kind, np.broadcast_to(np.asarray(c, dtype=float), p.shape),
             np.broadcast_to(np.asarray(f, dtype=float), p.shape))
            for kind, c, f in SCHEDULES[schedule].build(p, L)]


def column_names(n_pieces: int) -> list[str]:
    """Names of the design columns: ``alpha_0..alpha_{K-1}, beta_0..beta_{K-1}``."""
    return [f"alpha_{j}" for j in range(n_pieces)] + [f"beta_{j}" for j in range(n_pieces)]


def _steps_below(bound: float, s0: np.ndarray, c: np.ndarray) -> np.ndarray:
    """How many of the doubling sizes ``s0 * 2^k`` (k < c) are ``< bound``."""
    if bound == np.inf:
        return c
    if bound <= 0:
        return np.zeros_like(c)
    return np.clip(np.ceil(np.log2(bound / s0)), 0.0, c)


def design_matrix(schedule: str, p: np.ndarray, m: np.ndarray, breakpoints: Sequence[float] = ()) -> np.ndarray:
    """Design matrix ``X`` with ``T = X @ [alpha_0..alpha_{K-1}, beta_0..beta_{K-1}]``.

    Piece ``j`` of the piecewise Hockney time ``t(m) = alpha_j + beta_j m`` covers message sizes
    ``breakpoints[j-1] <= m < breakpoints[j]`` (contention-hockney-singh, sec. 3.3.1); with no
    breakpoints it is the plain Hockney model (sec. 2.1). Column ``alpha_j`` counts the steps whose
    largest message falls in piece ``j``; column ``beta_j`` sums their sizes. One numpy pass per
    phase, no loop over rows.

    Examples
    --------
    >>> design_matrix("binomial_bcast", np.array([8.0]), np.array([100.0]))
    array([[  3., 300.]])
    """
    m = np.asarray(m, dtype=float)
    p = np.broadcast_to(np.asarray(p, dtype=float), m.shape)
    bounds = [0.0, *map(float, breakpoints), np.inf]
    k = len(bounds) - 1
    x = np.zeros((m.size, 2 * k))
    for kind, c, f in phases(schedule, p):
        s0 = f * m
        if kind == "uniform":
            piece = np.searchsorted(np.asarray(bounds[1:-1]), s0, side="right")
            onehot = piece[:, None] == np.arange(k)[None, :]
            x[:, :k] += c[:, None] * onehot
            x[:, k:] += (c * s0)[:, None] * onehot
        else:
            below = [_steps_below(b, s0, c) for b in bounds]
            for j in range(k):
                x[:, j] += below[j + 1] - below[j]
                x[:, k + j] += s0 * (np.exp2(below[j + 1]) - np.exp2(below[j]))
    return x


def _piecewise_t(size: sympy.Expr, alphas: Sequence[float], betas: Sequence[float],
                 breakpoints: Sequence[float]) -> sympy.Expr:
    import sympy
    pieces = [sympy.Float(a) + sympy.Float(b) * size for a, b in zip(alphas, betas)]
    if len(pieces) == 1:
        return pieces[0]
    args = [(e, size < sympy.Float(b)) for e, b in zip(pieces[:-1], breakpoints)]
    return sympy.Piecewise(*args, (pieces[-1], True))


def schedule_expr(schedule: str, alphas: Sequence[float], betas: Sequence[float],
                  breakpoints: Sequence[float] = ()) -> sympy.Expr:
    """Closed form of ``schedule`` under the (piecewise) Hockney model, in ``n`` and ``p``.

    Examples
    --------
    >>> schedule_expr("binomial_bcast", [2.0], [0.5])
    (0.5*n + 2.0)*ceiling(log2(p))
    """
    import sympy
    from automodel.space.symbols import log2, symbol
    n, p = symbol("n"), symbol("p")
    L = sympy.ceiling(log2(p))
    two = sympy.Integer(2)
    total = sympy.Integer(0)
    bounds = [sympy.Integer(0), *[sympy.Float(b) for b in breakpoints], sympy.oo]
    for kind, c, f in SCHEDULES[schedule].build(p, L):
        c, f = sympy.sympify(c), sympy.sympify(f)
        s0 = f * n
        if kind == "uniform":
            total += c * _piecewise_t(s0, alphas, betas, breakpoints)
            continue
        if len(alphas) == 1:
            total += c * sympy.Float(alphas[0]) + sympy.Float(betas[0]) * s0 * (two**c - 1)
            continue

        def below(b: sympy.Expr) -> sympy.Expr:
            if b == 0:
                return sympy.Integer(0)
            if b == sympy.oo:
                return c
            return sympy.Min(sympy.Max(sympy.ceiling(log2(b / s0)), 0), c)

        for j in range(len(alphas)):
            lo, hi = below(bounds[j]), below(bounds[j + 1])
            total += sympy.Float(alphas[j]) * (hi - lo) + sympy.Float(betas[j]) * s0 * (two**hi - two**lo)
    return total


def collective_terms() -> dict[str, sympy.Expr]:
    """Coefficient-free communication terms (in ``n`` = message bytes and ``p``) for the staged search.

    They are the distinct pieces of the Hockney closed forms of :data:`SCHEDULES`
    (contention-hockney-singh sec. 2.1 and 3.3; DESIGN.md sec. 2): latency terms count steps,
    bandwidth terms count bytes on the critical path.
    """
    import sympy
    from automodel.space.symbols import log2, symbol
    n, p = symbol("n"), symbol("p")
    L = sympy.ceiling(log2(p))
    return {
        "log2_p_steps": L,                      # binomial tree latency
        "log2_p_steps_n": L * n,                # binomial tree bandwidth
        "p_minus_1": p - 1,                     # ring / pairwise / linear latency
        "p_minus_1_n": (p - 1) * n,             # ring allgather, pairwise all-to-all, linear scatter
        "p_minus_1_over_p_n": (p - 1) * n / p,  # scatter + allgather broadcast bandwidth
        "log2_p_plus_p_minus_1": L + p - 1,     # scatter + ring allgather latency
        "n": n,                                 # a single message
    }
