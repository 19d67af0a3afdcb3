"""The per-kernel choice (automodel.kernels.choice): every kernel of a group gets the candidate the search's
scorer and selection rule give it alone."""

import numpy as np

from automodel.kernels.choice import best_per_kernel, choose
from automodel.search.score import prepare, score_pairs
from automodel.space.config import load_space


def test_best_per_kernel_is_each_kernel_scored_alone():
    rng = np.random.default_rng(5)
    p = 2.0 ** np.arange(1, 7)
    values = np.column_stack([np.ones_like(p), p, np.log2(p), np.sqrt(p), p * np.log2(p)])
    truth = rng.integers(1, 5, 12)
    Y = (1.0 + rng.uniform(0.5, 2, 12) * values[:, truth]) * (1 + 0.01 * rng.standard_normal((6, 12)))
    term_idx = [[0], [0, 1], [0, 2], [0, 3], [0, 4], [1, 2]]
    sp = load_space("default")
    noise = (np.zeros(12), np.zeros(12))
    best, coefs, mets = best_per_kernel(values, Y, term_idx, sp, None, noise)
    for j in range(12):
        scores, n_terms = [], []
        for idx in term_idx:
            c, m = score_pairs(prepare(values, Y[:, j], sp.fit.weighting), np.array([idx]), names=(sp.fit.metric,))
            scores.append(m[sp.fit.metric][0])
            n_terms.append(max(int((c != 0).sum()), 1))
        want = choose(np.array([scores]), np.array([n_terms]), np.ones(len(term_idx), bool), len(p), sp,
                      (noise[0][:1], noise[1][:1]))[0]
        assert best[j] == want
        assert mets[sp.fit.metric][j] == scores[want]
    assert (best == truth).mean() > 0.8  # the true term is found


def test_no_valid_candidate_gives_minus_one():
    sp = load_space("default")
    best = choose(np.full((2, 3), np.inf), np.ones((2, 3), int), np.zeros(3, bool), 6, sp, (np.zeros(2), np.zeros(2)))
    assert best.tolist() == [-1, -1]
