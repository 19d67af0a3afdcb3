"""Tests of automodel.templates.collectives: schedules, design matrices, closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from automodel.space.symbols import log2, symbol
from automodel.templates.collectives import SCHEDULES, collective_terms, design_matrix, schedule_expr

N, P = symbol("n"), symbol("p")
BREAKS = (8192.0, 131072.0)
ALPHAS = (5e-6, 8e-6, 3e-5)
BETAS = (0.0, 2e-9, 1e-9)


def _t(size: float) -> float:
    j = int(np.searchsorted(BREAKS, size, side="right"))
    return ALPHAS[j] + BETAS[j] * size


def _brute_force(schedule: str, p: int, m: float) -> float:
    """Enumerate every step's largest message by hand (textbook algorithms, power-of-two sizes)."""
    L = int(np.ceil(np.log2(p)))
    if schedule == "p2p":
        steps = [m]
    elif schedule == "binomial_bcast":
        steps = [m] * L
    elif schedule == "scatter_rd_allgather_bcast":
        steps = [m / 2**k for k in range(1, L + 1)] + [m / 2**L * 2**k for k in range(L)]
    elif schedule == "scatter_ring_allgather_bcast":
        steps = [m / 2**k for k in range(1, L + 1)] + [m / p] * (p - 1)
    elif schedule == "rd_allgather":
        steps = [m * 2**k for k in range(L)]
    else:  # ring, pairwise, linear: p - 1 steps of m
        steps = [m] * (p - 1)
    return sum(_t(s) for s in steps)


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_design_matrix_matches_step_enumeration(schedule: str) -> None:
    p = np.array([2, 4, 8, 16, 32, 64, 128, 256, 3, 6, 100], dtype=float)
    m = np.array([2.0**k for k in (1, 13, 20, 17, 12, 14, 7, 16, 18, 10, 19)])
    got = design_matrix(schedule, p, m, BREAKS) @ np.array(ALPHAS + BETAS)
    want = [_brute_force(schedule, int(pp), mm) for pp, mm in zip(p, m)]
    power_of_two = np.log2(p) % 1 == 0
    # power-of-two p: exact; others: same step count, power-of-two sizes (documented), checked loosely
    np.testing.assert_allclose(got[power_of_two], np.array(want)[power_of_two], rtol=1e-12)
    assert np.all(got > 0)


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("breaks", [(), BREAKS])
def test_expr_equals_numeric(schedule: str, breaks: tuple) -> None:
    k = len(breaks) + 1
    alphas, betas = ALPHAS[:k] if k > 1 else (4e-6,), BETAS[:k] if k > 1 else (1e-9,)
    expr = schedule_expr(schedule, alphas, betas, breaks)
    p = np.array([2, 5, 16, 64, 256], dtype=float)
    m = np.array([4.0, 9000.0, 2.0**15, 2.0**20, 3e6])
    numeric = design_matrix(schedule, p, m, breaks) @ np.array(alphas + betas)
    symbolic = [float(expr.subs({N: mm, P: pp})) for pp, mm in zip(p, m)]
    np.testing.assert_allclose(numeric, symbolic, rtol=1e-12)


def test_hand_computed_closed_forms() -> None:
    # binomial broadcast: ceil(log2 p) (alpha + beta m); p = 8, m = 100: 3 * (2 + 0.5 * 100) = 156
    assert design_matrix("binomial_bcast", np.array([8.0]), np.array([100.0])) @ [2.0, 0.5] == pytest.approx(156)
    # ring allgather p = 5: 4 (alpha + beta m)
    assert design_matrix("ring_allgather", np.array([5.0]), np.array([10.0])) @ [1.0, 1.0] == pytest.approx(44)
    # scatter + rd allgather, p = 8: 2 log2 p alpha + 2 (p-1)/p m beta = 6 + 2 * 7/8 * 64 = 118
    x = design_matrix("scatter_rd_allgather_bcast", np.array([8.0]), np.array([64.0]))
    assert x @ [1.0, 1.0] == pytest.approx(6 + 112)
    e = schedule_expr("binomial_bcast", [2.0], [0.5])
    assert sympy.simplify(e - sympy.ceiling(log2(P)) * (2 + N / 2)) == 0


def test_piece_selection_by_message_size() -> None:
    # p2p with breaks at 8 KB / 128 KB: 4 KB uses piece 0, 8 KB piece 1, 1 MB piece 2
    x = design_matrix("p2p", np.ones(3), np.array([4096.0, 8192.0, 2.0**20]), BREAKS)
    np.testing.assert_array_equal(x[:, :3], np.eye(3))
    np.testing.assert_array_equal(x[:, 3:], np.diag([4096.0, 8192.0, 2.0**20]))


def test_collective_terms_are_coefficient_free() -> None:
    terms = collective_terms()
    assert terms["log2_p_steps"] == sympy.ceiling(log2(P))
    assert sympy.simplify(terms["p_minus_1_over_p_n"] - (P - 1) * N / P) == 0
    for expr in terms.values():
        assert expr.free_symbols <= {N, P}
        assert not expr.atoms(sympy.Float)
