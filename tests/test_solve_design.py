"""Designs: scaled weighted columns and their Gram statistics, from data or from pooled statistics."""

import numpy as np
import pytest

from automodel.solve.design import design, from_stats, gather, pairs, usable


def test_design_of_many_targets_is_a_stack_of_one_target_designs():
    rng = np.random.default_rng(0)
    A = rng.uniform(0.5, 2.0, (12, 5))
    Y = rng.uniform(1.0, 3.0, (12, 3))
    W = 1.0 / Y ** 2
    many = design(A, Y, W)
    for j in range(3):
        one = design(A, Y[:, j], W[:, j])
        assert np.allclose(many.gram[j], one.gram[0]) and np.allclose(many.moment[j], one.moment[0])
        assert np.allclose(many.scale[j], np.sqrt(((A * np.sqrt(W[:, [j]])) ** 2).sum(axis=0)))
    assert np.allclose(np.diagonal(many.gram, axis1=1, axis2=2), 1.0)  # unit-diagonal Gram matrices


def test_gather_and_pairs():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((10, 4))
    des = design(A, rng.standard_normal((10, 2)))
    cand, kern = pairs(3, 2)
    assert cand.tolist() == [0, 1, 2, 0, 1, 2] and kern.tolist() == [0, 0, 0, 1, 1, 1]
    cols = np.array([[0, 2], [1, 3], [2, 3]])[cand]
    gram, rhs = gather(des, kern, cols)
    for b in range(len(cand)):
        c = cols[b]
        assert np.allclose(gram[:, :, b], des.gram[kern[b]][np.ix_(c, c)])
        assert np.allclose(rhs[:, b], des.moment[kern[b]][c])


def test_from_stats_has_the_statistics_of_the_runs():
    rng = np.random.default_rng(2)
    A = rng.uniform(0.5, 2.0, (15, 3))
    y = rng.uniform(1.0, 2.0, 15)
    direct, pooled = design(A, y), from_stats(A.T @ A, A.T @ y, float(y @ y))
    assert np.allclose(direct.gram, pooled.gram) and np.allclose(direct.moment, pooled.moment)
    assert np.allclose(direct.target_ss, pooled.target_ss)


def test_cause1_design_is_finite_for_columns_whose_squares_overflow():
    """Issue 17, cause 1: ``cols.T @ cols`` overflowed and an infinite norm was replaced by 1 with the
    column kept; a column beyond the range of floats is now unusable, the others exact."""
    n = np.array([1e90, 2e95, 3e99, 5e99])
    A = np.column_stack([n, n ** 3, np.ones(4)])  # n^3 ~ 1e297: its square overflows
    y = 2e-199 * n  # relative weights 1 / y^2 up to 1e218
    des = design(A, y, 1.0 / y ** 2)
    assert np.isfinite(des.gram).all() and np.isfinite(des.moment).all() and np.isfinite(des.columns).all()
    assert usable(des).tolist() == [True, False, True]  # sqrt(w) n^3 = n^2 / 2e-199 > 1e308
    assert np.allclose(np.diagonal(des.gram[0])[[0, 2]], 1.0) and des.gram[0, 1, 1] == 0.0
    assert np.allclose(des.scale[0, 0], 2 / 2e-199)  # |sqrt(w) n| = |(1 / 2e-199) * (1, 1, 1, 1)|
    assert np.allclose(des.moment[0, 0] * des.scale[0, 0], 4 / 2e-199)  # sum sqrt(w) n * sqrt(w) y


@pytest.mark.parametrize("m", [5, 50, 5000])
def test_a_target_has_the_same_design_alone_as_beside_others(m):
    """Kernels split between parallel workers form groups of other sizes: each target's scaled columns,
    Gram matrix, right-hand side and scale must be the same bits in every group (so a parallel run
    equals the serial one exactly)."""
    rng = np.random.default_rng(m)
    A, Y = rng.random((m, 8)) + 0.1, rng.random((m, 3)) + 1.0
    together = design(A, Y, 1.0 / Y ** 2)
    for k in range(3):
        alone = design(A, Y[:, k], 1.0 / Y[:, k] ** 2)
        for name in ("columns", "gram", "moment", "scale", "target_ss"):
            assert np.array_equal(getattr(alone, name)[0], getattr(together, name)[k]), name
