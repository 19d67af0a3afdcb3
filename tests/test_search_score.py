"""The one scorer (automodel.search.score): one target, many targets, hold-out, against naive refits."""

import numpy as np
import pytest

from automodel.solve.metrics import METRICS
from automodel.search.score import TermCache, prepare, score, score_pairs
from automodel.space.structure import Structure
from automodel.solve.design import pairs
from automodel.space.parse import parse_term


def _values(m: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = 2.0 ** np.arange(1, m + 1)
    A = np.column_stack([np.ones(m), p, np.log2(p), np.sqrt(p), 1 / p])
    Y = A[:, [0, 2]] @ rng.uniform(0.5, 2, (2, 5)) * (1 + 0.02 * rng.standard_normal((m, 5)))
    return p, A, Y


def test_many_targets_score_as_each_target_alone():
    _, A, Y = _values()
    hold = np.zeros(len(A), bool)
    hold[-1] = True
    combos = np.array([[0, 1], [0, 2], [1, 3], [2, 4]], dtype=np.intp)
    cand, kern = pairs(len(combos), Y.shape[1])
    coef, got = score_pairs(prepare(A, Y, "relative", hold), combos[cand], kern)
    for j in range(Y.shape[1]):
        c1, one = score_pairs(prepare(A, Y[:, j], "relative", hold), combos)
        cut = slice(j * len(combos), (j + 1) * len(combos))
        np.testing.assert_allclose(coef[cut], c1, rtol=1e-12)
        for name in METRICS:
            np.testing.assert_allclose(got[name][cut], one[name], rtol=1e-9, err_msg=name)


def test_score_matches_a_naive_weighted_fit_and_hold_out():
    p, A, Y = _values()
    y = Y[:, 0]
    cache = TermCache({"p": p}, len(p))
    structures = [Structure((parse_term("1"), parse_term("log2(p)"))), Structure((parse_term("p"),))]
    hold = np.zeros(len(p), bool)
    hold[-1] = True
    sc = score(cache, np.ones(len(p), bool), y, structures, holdout=hold)
    for i, s in enumerate(structures):
        X = np.column_stack([t.evaluate({"p": p}, len(p)) for t in s.terms])
        c, *_ = np.linalg.lstsq(X / y[:, None], np.ones_like(y), rcond=None)
        c = np.maximum(c, 0.0)
        np.testing.assert_allclose(sc.coefficients[i, :len(c)], c, rtol=1e-8)
        rel = (y - X @ c) / y
        assert sc.metric("rel_s")[i] == pytest.approx(np.sqrt(rel @ rel / (len(y) - len(c))))
        ch, *_ = np.linalg.lstsq(X[~hold] / y[~hold, None], np.ones(int((~hold).sum())), rcond=None)
        assert sc.metric("holdout")[i] == pytest.approx(abs(X[hold] @ ch / y[hold] - 1.0)[0], rel=1e-8)
    assert sc.n_fits == 2 and sc.valid.all()


def test_non_finite_terms_make_a_candidate_invalid():
    p, _, Y = _values()
    cache = TermCache({"p": p - 2.0}, len(p))  # log2(0) at the first row
    sc = score(cache, np.ones(len(p), bool), Y[:, 0], [Structure((parse_term("log2(p)"),))])
    assert not sc.valid[0] and np.isinf(sc.metric("rel_s")[0])


def test_cause4_a_candidate_with_all_coefficients_zero_is_invalid():
    """Issue 17, cause 4: a model whose coefficients are all zero (a term identically 0) was chosen,
    with ``best p = 1 (predicted 0 s)``. T = 0 is no model of a time: it scores inf and is invalid."""
    k = np.array([0.0, 0.0, 0.0, 0.0])
    n = np.array([1.0, 2.0, 3.0, 4.0])
    cache = TermCache({"k": k, "n": n}, 4)
    structures = [Structure((parse_term("k"),)), Structure((parse_term("n"),))]
    sc = score(cache, np.ones(4, bool), 2.0 * n, structures)
    assert sc.valid.tolist() == [False, True]
    assert all(np.isinf(v[0]) for v in sc.metrics.values())
    assert np.isclose(sc.metrics["rel_s"][1], 0.0)


def test_terms_cached_together_have_the_columns_and_bits_of_terms_cached_one_by_one():
    """TermCache.indices evaluates the terms it has not seen in one plan: the same columns, numbered in
    the order of first sight, and the same values to the bit as TermCache.index one term at a time."""
    p = np.array([1.0, 2.0, 3.0, 5.0, 8.0])
    n = np.array([7.0, 0.5, 11.0, 2.0, 1e300])
    terms = [parse_term(t) for t in ("1", "p^(3/2)*log2(n)", "n^2/p", "log2(p)", "p^(3/2)*log2(n)", "n^(1/3)")]
    one, together = TermCache({"p": p, "n": n}, 5), TermCache({"p": p, "n": n}, 5)
    assert together.indices(terms[:2]) == [one.index(t) for t in terms[:2]] == [0, 1]
    assert together.indices(terms) == [one.index(t) for t in terms] == [0, 1, 2, 3, 1, 4]
    assert together.terms == one.terms
    assert together.matrix.tobytes() == one.matrix.tobytes()  # NaN where n^2 overflows, in both
    assert np.isnan(together.matrix[-1, 2])
