"""The t test of one coefficient against an independent computation (numpy least squares, scipy's t)."""

import numpy as np
import pytest
from scipy import stats

from automodel.solve.design import design
from automodel.solve.significance import coefficient_pvalues


def _reference(X, y, w, i, floor=0.0):
    sw = np.sqrt(w)
    A, t = X * sw[:, None], y * sw
    coef, *_ = np.linalg.lstsq(A, t, rcond=None)
    dof = len(y) - X.shape[1]
    var = max(np.sum((t - A @ coef) ** 2) / dof, floor ** 2)
    se = np.sqrt(var * np.linalg.inv(A.T @ A)[i, i])
    return 2 * stats.t.sf(abs(coef[i] / se), dof)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    x = np.repeat([4.0, 8.0, 16.0, 32.0, 64.0], 2)
    X = np.column_stack([np.ones_like(x), x, np.log2(x)])
    Y = np.column_stack([3.0 + 0.5 * x, 0.5 * x, 0.5 * x + np.log2(x)]) * (1 + 0.05 * rng.standard_normal((10, 3)))
    return X, Y


@pytest.mark.parametrize("floor", [0.0, 0.04, 0.3])
def test_pvalues_match_least_squares_with_every_target_and_column(data, floor):
    X, Y = data
    W = 1.0 / Y ** 2
    des = design(X, Y, W)
    cols = np.array([[0, 1], [0, 1], [1, 0], [0, 1, 2][:2], [2, 0]])
    kern = np.array([0, 1, 2, 2, 1])
    position = np.array([0, 0, 1, 1, 0])
    got = coefficient_pvalues(des, kern, cols, position, len(X), floor)
    want = [_reference(X[:, c], Y[:, k], W[:, k], j, floor) for c, k, j in zip(cols, kern, position)]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_an_offset_is_measured_and_none_is_not(data):
    X, Y = data
    des = design(X, Y, 1.0 / Y ** 2)
    p = coefficient_pvalues(des, np.array([0, 1]), np.array([[0, 1], [0, 1]]), np.array([0, 0]), len(X))
    assert p[0] < 1e-4  # 3 + 0.5 x: the constant is 3
    noisy = coefficient_pvalues(des, np.array([0]), np.array([[0, 1]]), np.array([0]), len(X), floor=5.0)
    assert noisy[0] > p[0]  # the repetitions' noise as the least scatter weakens the evidence


def test_no_residual_dof_or_collinear_columns_give_nan():
    x = np.array([1.0, 2.0, 3.0])
    des = design(np.column_stack([np.ones(3), x, 2 * x]), 1 + x)
    assert np.isnan(coefficient_pvalues(des, np.zeros(1), np.array([[0, 1, 2]]), np.zeros(1), 3)).all()
    assert np.isnan(coefficient_pvalues(des, np.zeros(1), np.array([[0, 1, 2]]), np.zeros(1), 4)).all()
    assert coefficient_pvalues(des, np.zeros(0), np.zeros((0, 2)), np.zeros(0), 3).shape == (0,)


def test_a_constant_that_is_not_there_is_measured_at_the_rate_alpha():
    """0.5 x with 5 % noise, 2000 times: "measured at p < 0.05" about 5 % of the time (the test's size)."""
    rng = np.random.default_rng(7)
    x = np.repeat([4.0, 8.0, 16.0, 32.0, 64.0], 2)
    Y = 0.5 * x[:, None] * (1 + 0.05 * rng.standard_normal((10, 2000)))
    des = design(np.column_stack([np.ones_like(x), x]), Y, 1.0 / Y ** 2)
    K = Y.shape[1]
    p = coefficient_pvalues(des, np.arange(K), np.tile([0, 1], (K, 1)), np.zeros(K, int), len(x))
    assert 0.03 < np.mean(p < 0.05) < 0.08
