"""A block of one parameter fitted on every line of a grid (``automodel.solve.lines``)."""

from __future__ import annotations

import numpy as np
import pytest

from automodel.solve.lines import LINE_FLOATS, effect_pvalue, line_rss


def _by_hand(f: np.ndarray, y: np.ndarray, w: np.ndarray, line: np.ndarray) -> float:
    """Each line fitted alone by weighted least squares (numpy's lstsq), the residuals pooled."""
    total = 0.0
    for g in np.unique(line):
        at = line == g
        X = np.c_[np.ones(at.sum()), f[at]] * np.sqrt(w[at])[:, None]
        t = y[at] * np.sqrt(w[at])
        coef = np.linalg.lstsq(X, t, rcond=None)[0]
        total += float(np.sum((t - X @ coef) ** 2))
    return total


def test_pooled_rss_is_each_line_fitted_alone():
    rng = np.random.default_rng(3)
    x = np.tile([2.0, 4.0, 8.0, 16.0, 32.0], 6)
    line = np.repeat(rng.permutation(6), 5)  # labels in any order
    F = np.c_[np.log2(x), x, x ** 1.5, 1 / x]
    Y = np.c_[1 + line * x ** 1.5, 50 + x] * (1 + 0.05 * rng.standard_normal((30, 2)))
    W = 1 / Y ** 2
    rss, constant = line_rss(F, Y, W, line)
    for t in range(F.shape[1]):
        for k in range(Y.shape[1]):
            assert rss[t, k] == pytest.approx(_by_hand(F[:, t], Y[:, k], W[:, k], line), rel=1e-9)
    for k in range(Y.shape[1]):
        centred = [np.sum(W[line == g, k] * (Y[line == g, k] - np.average(Y[line == g, k], weights=W[line == g, k])) ** 2)
                   for g in range(6)]
        assert constant[k] == pytest.approx(sum(centred), rel=1e-9)
    assert np.argmin(rss[:, 0]) == 2 and np.argmin(rss[:, 1]) == 1  # each target finds its block


def test_blocks_in_chunks_and_not_finite_blocks(monkeypatch):
    x = np.tile([0.0, 1.0, 2.0, 3.0], 3)
    Y = (1 + x ** 2 + np.repeat([0.0, 1.0, 2.0], 4))[:, None]
    F = np.c_[x, x ** 2, np.where(x > 0, 1 / np.where(x > 0, x, 1), np.inf)]
    whole, _ = line_rss(F, Y, np.ones_like(Y), np.repeat([0, 1, 2], 4))
    import automodel.solve.lines as lines
    monkeypatch.setattr(lines, "LINE_FLOATS", 1)  # one block per chunk
    chunked, _ = lines.line_rss(F, Y, np.ones_like(Y), np.repeat([0, 1, 2], 4))
    assert LINE_FLOATS > 1 and np.array_equal(whole, chunked)
    assert whole[1, 0] == pytest.approx(0.0, abs=1e-12) and whole[0, 0] > 0 and whole[2, 0] == np.inf


def test_effect_pvalue_tells_an_effect_from_noise():
    rng = np.random.default_rng(0)
    x = np.tile(np.arange(1.0, 6.0), 8)
    line = np.repeat(np.arange(8), 5)
    noise = 1 + 0.05 * rng.standard_normal(40)
    for slope, significant in ((0.5, True), (0.0, False)):
        y = ((10 + line) * (1 + slope * x) * noise)[:, None]
        rss, constant = line_rss(x[:, None], y, 1 / y ** 2, line)
        p = effect_pvalue(rss.min(axis=0), constant, 40, 8)
        assert (p[0] < 1e-6) if significant else (p[0] > 1e-3)
    assert np.isnan(effect_pvalue(np.array([1.0]), np.array([2.0]), 16, 8)[0])  # no residual dof
    assert effect_pvalue(np.array([0.0]), np.array([0.0]), 40, 8)[0] == 1.0   # exactly constant lines


def test_a_column_whose_squares_overflow_fits_nothing_and_warns_nothing():
    import warnings

    from automodel.solve.lines import line_rss

    x = np.array([1.0, 1.0, 1.0, 2.0, 1.059669017922105e-93])  # the property suite's example: k^-3 ~ 1e279
    y = np.ones((5, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rss, constant = line_rss(np.c_[x, x ** -3.0], y, np.ones_like(y), np.zeros(5, int))
    assert rss.shape == (2, 1) and np.all(rss >= 0)


def test_line_sums_have_the_bits_of_the_sparse_indicator_product():
    """The sums per line are added up in the order of the runs, as the (lines x runs) indicator matrix
    of scipy.sparse adds them (its product was the sums before): the same bits, NaN and inf included."""
    from scipy import sparse

    from automodel.solve.lines import _line_sums

    rng = np.random.default_rng(5)
    m, c = 200, 7
    X = rng.standard_normal((m, c)) * 10.0 ** rng.integers(-12, 12, (m, c))
    X[3, 1], X[8, 2], X[9, 4], X[11, 5] = np.inf, np.nan, -0.0, 1e308
    X[12, 5] = 1e308
    group = rng.integers(0, 9, m)
    group[group == 4] = 3  # a line with no run
    group[12] = group[11]  # a sum that overflows
    E = sparse.csr_matrix((np.ones(m), (group, np.arange(m))), shape=(9, m))
    for cols in (slice(None), slice(0, 1), slice(2, 6)):
        part = X[:, cols]
        assert _line_sums(group, 9, part).tobytes() == (E @ part).tobytes()
    assert _line_sums(group, 9, np.asfortranarray(X)).tobytes() == (E @ X).tobytes()
