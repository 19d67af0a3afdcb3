"""Exact NNLS (automodel.solve.nnls) of many (candidate, target) pairs against scipy.optimize.nnls."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import nnls

from automodel.solve import nnls as nnls_mod
from automodel.solve.design import design, gather, pairs
from automodel.solve.lstsq import solve


def _problem(seed: int, m: int, K: int, T: int = 8):
    """Weighted problems whose unconstrained fits are mostly infeasible: targets that fall with x while
    every column but a signed one rises or falls, columns spanning several orders of magnitude."""
    rng = np.random.default_rng(seed)
    x = np.linspace(1.0, 16.0, m)
    A = np.column_stack([np.ones(m), x, x ** 2, np.log2(x), 1 / x, np.sqrt(x), x * np.log2(x), np.sin(x)])[:, :T]
    Y = np.abs(rng.normal(size=(m, K))) + 0.2
    Y[:, ::2] += (1 / x)[:, None] * rng.uniform(0.5, 3, K // 2 + K % 2)
    Y[:, 1::2] = 5.0 - 0.2 * x[:, None] + 0.3 * rng.normal(size=(m, K // 2))
    Y = np.abs(Y) + 0.05
    return A, Y, rng.uniform(0.5, 2.0, (m, K)) / Y ** 2


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("seed,m", [(0, 5), (1, 6), (2, 9)])
def test_nonnegative_pairs_match_scipy_nnls(k, seed, m):
    A, Y, W = _problem(seed, m, K=30)
    combos = np.array(list(combinations(range(A.shape[1]), k)), dtype=np.intp)
    cand, kern = pairs(len(combos), Y.shape[1])
    des = design(A, Y, W)
    free = solve(des, combos[cand], kern, nonnegative=False).coef_scaled
    sol = solve(des, combos[cand], kern, nonnegative=True, rss="exact")
    coef, rss = sol.coef_scaled, sol.rss
    assert (free < 0).any(axis=1).mean() > (0.02 if k == 1 else 0.3)  # infeasible-heavy
    assert (coef >= 0).all()
    for b in range(len(kern)):
        X = des.columns[kern[b], combos[cand[b]]].T  # (m, k) scaled, weighted columns
        ref, r = nnls(X, des.target[kern[b]])
        assert rss[b] == pytest.approx(r * r, rel=1e-9, abs=1e-12 * des.target_ss[kern[b]])
        resid = des.target[kern[b]] - X @ coef[b]
        assert rss[b] == pytest.approx(resid @ resid, rel=1e-12, abs=1e-14 * des.target_ss[kern[b]])


def test_nonnegative_without_rss_gives_the_same_coefficients():
    A, Y, W = _problem(3, 5, K=20)
    combos = np.array(list(combinations(range(A.shape[1]), 3)), dtype=np.intp)
    cand, kern = pairs(len(combos), Y.shape[1])
    des = design(A, Y, W)
    sol = solve(des, combos[cand], kern, rss="exact")
    without = solve(des, combos[cand], kern, rss=None)
    assert without.rss is None and np.array_equal(sol.coef_scaled, without.coef_scaled)


@pytest.mark.parametrize("k", [2, 3])
def test_kkt_enumeration_agrees_with_the_active_set(k):
    A, Y, W = _problem(4, 7, K=30)
    combos = np.array(list(combinations(range(A.shape[1]), k)), dtype=np.intp)
    cand, kern = pairs(len(combos), Y.shape[1])
    des = design(A, Y, W)
    free = solve(des, combos[cand], kern, nonnegative=False).coef_scaled
    bad = np.flatnonzero((free < 0).any(axis=1))
    gram, rhs = gather(des, kern[bad], combos[cand][bad])
    x_kkt, ok_kkt = nnls_mod.kkt_small(gram, rhs, des.target_ss[kern[bad]])
    x_as, ok_as = nnls_mod.active_set(gram, rhs, free[bad].T > 0, des.target_ss[kern[bad]])
    both = ok_kkt & ok_as
    assert both.mean() > 0.9
    np.testing.assert_array_equal(x_kkt[:, both], x_as[:, both])  # the same operations: the same numbers


def test_exhaustive_keeps_the_feasible_subset_of_least_rss():
    # one system of width 2 whose unconstrained optimum is infeasible; subsets {0}, {1}
    solutions = {(0,): (np.array([[2.0]]), np.array([3.0])), (1,): (np.array([[-1.0]]), np.array([1.0]))}
    coef, rss = nnls_mod.exhaustive(lambda sub: solutions[tuple(sub)], 1, 2, np.array([10.0]))
    assert coef.tolist() == [[2.0, 0.0]] and rss.tolist() == [3.0]
    coef, rss = nnls_mod.exhaustive(lambda sub: (-np.ones((1, 1)), np.ones(1)), 1, 2, np.array([10.0]))
    assert coef.tolist() == [[0.0, 0.0]] and rss.tolist() == [10.0]  # the empty subset
