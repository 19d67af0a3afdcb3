"""The batch-last Cholesky: factors, solves and masked solves against numpy, one system at a time."""

import numpy as np

from automodel.solve.cholesky import cholesky, cholesky_solve, masked_solve


def _systems(k: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3 * k, k))
    gram = np.einsum("nmi,nmj->ijn", X, X)  # (k, k, n), batch last
    return gram, rng.standard_normal((k, n))


def test_factor_and_solve_match_numpy():
    gram, rhs = _systems(4, 50)
    L, pivot = cholesky(gram)
    x, L2, _ = cholesky_solve(gram, rhs)
    for i in range(gram.shape[2]):
        assert np.allclose(L[:, :, i], np.linalg.cholesky(gram[:, :, i]))
        assert np.allclose(x[:, i], np.linalg.solve(gram[:, :, i], rhs[:, i]))
    assert np.array_equal(L, L2) and (pivot > 0).all()


def test_singular_systems_are_flagged_not_raised():
    gram, rhs = _systems(3, 4)
    gram[:, 2, 1] = gram[:, 1, 1]
    gram[2, :, 1] = gram[1, :, 1]  # system 1 has two equal columns
    _, pivot = cholesky(gram)
    assert pivot[1] < 1e-10 * gram[:, :, 1].max() and (np.delete(pivot, 1) > 1e-3).all()


def test_masked_solve_pins_variables_at_zero():
    gram, rhs = _systems(4, 20, seed=1)
    free = np.random.default_rng(2).random((4, 20)) < 0.6
    x, _ = masked_solve(gram, rhs, free)
    assert (x[~free] == 0).all()
    for i in range(20):
        f = free[:, i]
        if f.any():
            assert np.allclose(x[f, i], np.linalg.solve(gram[np.ix_(f, f, [i])][:, :, 0], rhs[f, i]))
