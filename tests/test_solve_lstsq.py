"""The batched solve (automodel.solve.lstsq): least squares and exact NNLS against numpy and scipy."""

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import nnls

from automodel.solve.design import design, gather, pairs
from automodel.solve.lstsq import _exact, leverages, solve
from automodel.solve.nnls import active_set


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_batched_solve_matches_lstsq(problem, k):
    A, y = problem
    combos = np.array(list(combinations(range(A.shape[1]), k)))
    des = design(A, y)
    fit = solve(des, combos, nonnegative=False)
    coef = fit.coefficients(des)
    for i in range(0, len(combos), 7):
        ref, *_ = np.linalg.lstsq(A[:, combos[i]], y, rcond=None)
        r = y - A[:, combos[i]] @ ref
        assert np.allclose(coef[i], ref, rtol=1e-7, atol=1e-9)
        assert fit.rss[i] == pytest.approx(r @ r, rel=1e-7)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_nonnegative_is_exact_nnls(problem, k):
    A, y = problem
    combos = np.array(list(combinations(range(A.shape[1]), k)))
    des = design(A, y)
    fit = solve(des, combos, nonnegative=True)
    coef = fit.coefficients(des)
    assert (coef >= 0).all()
    for i in range(len(combos)):
        ref, rnorm = nnls(A[:, combos[i]], y)
        assert fit.rss[i] == pytest.approx(rnorm ** 2, rel=1e-6, abs=1e-12)


def test_weights_give_relative_fit():
    x = np.linspace(1, 10, 20)
    y = 3.0 * x * (1 + 0.05 * np.sin(7 * x))
    A = x[:, None]
    w = 1.0 / y ** 2
    des = design(A, y, w)
    c = solve(des, np.array([[0]]), nonnegative=False).coefficients(des)[0, 0]
    # minimise sum(((c x - y) / y)^2): c = sum(x/y) / sum(x^2/y^2)
    assert c == pytest.approx(np.sum(x / y) / np.sum(x ** 2 / y ** 2), rel=1e-10)


def test_collinear_columns_fall_back_to_svd():
    x = np.linspace(1, 2, 12)
    A = np.column_stack([x, 2 * x, x ** 2])
    y = 1.0 + 0 * x + x ** 2
    des = design(A, y)
    fit = solve(des, np.array([[0, 1, 2]]), nonnegative=False)
    assert np.isfinite(fit.coef_scaled).all()
    assert fit.rss[0] < y @ y


def _nnls_problem(case, m=40, T=12):
    rng = np.random.default_rng(11)
    A = rng.uniform(0.1, 2.0, size=(m, T))
    if case == "collinear":  # column t + 6 is column t perturbed by 1e-4
        A[:, 6:] = A[:, :6] * (1 + 1e-4 * rng.standard_normal((m, 6)))
    if case == "dependent":  # rank-deficient candidates: non-unique coefficients, unique RSS
        A[:, 9], A[:, 10] = A[:, 0] + A[:, 1], 2 * A[:, 2]
    y = A @ rng.standard_normal(T) + 0.1 * rng.standard_normal(m)  # terms of either sign
    return rng, A, y


@pytest.mark.parametrize("case", ["random", "collinear", "dependent"])
def test_nonnegative_matches_scipy_nnls_up_to_six_terms(case):
    rng, A, y = _nnls_problem(case)
    des = design(A, y)
    n_infeasible = 0
    for k in range(1, 7):
        combos = np.array(list(combinations(range(A.shape[1]), k)))
        combos = combos[rng.permutation(len(combos))[:600]]
        fit = solve(des, combos, nonnegative=True)
        n_infeasible += (solve(des, combos, nonnegative=False).coef_scaled < 0).any(axis=1).sum()
        coef = fit.coefficients(des)
        assert (coef >= 0).all()
        for i, c in enumerate(combos):
            ref, rnorm = nnls(A[:, c], y, maxiter=100 * k)
            assert fit.rss[i] == pytest.approx(rnorm ** 2, rel=1e-9, abs=1e-12 * (y @ y))
            if case != "dependent":  # on the scaled (unit) columns, coefficients compare with |y|
                np.testing.assert_allclose(coef[i] * des.scale[0, c], ref * des.scale[0, c], rtol=0,
                                           atol=1e-7 * np.sqrt(y @ y))
    assert n_infeasible > 1500  # most candidates took the constrained path


@pytest.mark.parametrize("case", ["random", "collinear"])
def test_active_set_certifies_and_agrees_with_subset_search(case):
    _, A, y = _nnls_problem(case)
    des = design(A, y)
    combos = np.array(list(combinations(range(A.shape[1]), 6)))
    fit = solve(des, combos, nonnegative=False)
    coef, rss = fit.coef_scaled.copy(), fit.rss.copy()
    infeasible = np.flatnonzero((coef < 0).any(axis=1))
    zeros = np.zeros(len(infeasible), np.intp)
    gram, rhs = gather(des, zeros, combos[infeasible])
    x, ok = active_set(gram, rhs, coef[infeasible].T > 0, des.target_ss[0])
    assert ok.all()  # nothing left for the exhaustive search
    coef[infeasible], rss[infeasible] = _exact(des, zeros, combos[infeasible], "fast")
    np.testing.assert_allclose(x.T, coef[infeasible], rtol=0, atol=1e-9 * np.sqrt(des.target_ss[0]))
    np.testing.assert_allclose(solve(des, combos).rss, rss, rtol=1e-10)


def test_nonnegative_exact_on_ill_conditioned_power_terms():
    """Power-law terms (condition ~1e7 after scaling) fitted to ~1e-12 of y'y: a KKT tolerance
    relative to |y| instead of the residual certified supports with up to 12% more RSS."""
    rng = np.random.default_rng(0)
    x = np.linspace(1, 100, 30)
    A = np.column_stack([x ** rng.uniform(0, 3) * np.log2(x + 1) ** rng.integers(0, 3) for _ in range(10)])
    y = A @ rng.standard_normal(10) + rng.standard_normal(30)
    combos = np.array(list(combinations(range(10), 6)))
    fit = solve(design(A, y), combos)
    ref = np.array([nnls(A[:, c], y, maxiter=1000)[1] ** 2 for c in combos])
    np.testing.assert_allclose(fit.rss, ref, rtol=1e-8)


def _design(seed: int = 1, m: int = 6, K: int = 40):
    rng = np.random.default_rng(seed)
    x = np.linspace(1, 10, m)
    A = np.column_stack([np.ones(m), x, x ** 2, np.log2(x), 1 / x, np.sqrt(x), x * np.log2(x),
                         x + 1e-9 * x ** 2])  # the last column is numerically dependent on x
    Y = np.abs(rng.normal(size=(m, K))) + A[:, [0, 1]] @ rng.uniform(0.1, 2, (2, K))
    return A, Y


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("nonnegative", [False, True])
def test_many_target_solver_matches_the_single_target_solver(k, nonnegative):
    A, Y = _design()
    W = 1.0 / Y ** 2
    combos = np.array(list(combinations(range(A.shape[1]), k)), dtype=np.intp).reshape(-1, k) if k else np.zeros((1, 0), np.intp)
    cand, kern = pairs(len(combos), Y.shape[1])
    des = design(A, Y, W)
    sol = solve(des, combos[cand], kern, nonnegative, rss="exact", keep_factor=True)
    coef, rss = sol.coefficients(des), sol.rss
    lev = leverages(des, sol)
    n = len(combos)
    for j in range(Y.shape[1]):
        d = design(A, Y[:, j], W[:, j])
        fit = solve(d, combos, nonnegative=nonnegative)
        cut = slice(j * n, (j + 1) * n)
        np.testing.assert_allclose(rss[cut], fit.rss, rtol=1e-7, atol=1e-12)
        pred = np.einsum("mnk,nk->mn", A[:, combos], coef[cut])  # coefficients are not unique where
        want = np.einsum("mnk,nk->mn", A[:, combos], fit.coefficients(d))  # columns are dependent
        np.testing.assert_allclose(pred, want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(lev[:, cut], leverages(d, fit), atol=1e-9)
    if nonnegative:
        assert (coef >= 0).all()


def test_cause1_no_svd_on_non_finite_columns(monkeypatch):
    """Issue 17, cause 1: with inf in a column OpenBLAS's SVD never returned (``automodel fit`` hung).
    Dependent columns go to the pseudo-inverse only when finite; the others get NaN coefficients."""
    from automodel.solve import lstsq as lstsq_mod
    des = design(np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), np.array([1.0, 2.0, 3.0]))
    columns = des.columns.copy()
    columns[0, 1, 0] = np.inf
    hostile = type(des)(des.scale, des.gram, des.moment, des.target_ss, (columns, des.target))
    seen = []
    real = np.linalg.pinv
    monkeypatch.setattr(np.linalg, "pinv", lambda X, **kw: seen.append(np.isfinite(X).all()) or real(X, **kw))
    x = lstsq_mod._pseudo_inverse_solve(hostile, np.zeros(2, np.intp), np.array([[0, 1], [0, 0]]))
    assert np.isnan(x[:, 0]).all() and np.isfinite(x[:, 1]).all() and seen == [True]


def test_cause1_one_system_with_non_finite_values_is_refused():
    from automodel.solve.lstsq import solve_one
    des = design(np.array([[1.0], [2.0], [3.0]]), np.array([1.0, 2.0, 3.0]))
    columns = des.columns.copy()
    columns[0, 0, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        solve_one(type(des)(des.scale, des.gram, des.moment, des.target_ss, (columns, des.target)))
