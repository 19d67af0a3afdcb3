"""Ranking and percentile pruning (adaptive-model-sanjay-slides.txt, slide 22)."""

import numpy as np

from automodel.search.prune import prune, rank


def test_rank_puts_non_finite_last_and_keeps_ties_in_order():
    assert rank(np.array([0.3, np.nan, 0.1, np.inf, 0.3])).tolist() == [2, 0, 4, 1, 3]


def test_prune_by_percentile_with_survivors_and_top():
    scores = np.array([5.0, 1.0, 4.0, 2.0, 3.0, np.inf])
    kept, deleted = prune(scores, 50.0, min_survivors=1)
    assert kept.tolist() == [1, 3, 4] and deleted == 3  # the median (3.0) and better; inf always goes
    kept, deleted = prune(scores, 20.0, min_survivors=4)
    assert kept.tolist() == [1, 3, 4, 2] and deleted == 2
    kept, _ = prune(scores, 100.0, min_survivors=1, top=2)
    assert kept.tolist() == [1, 3]
    kept, deleted = prune(np.array([np.nan, np.inf]), 50.0, 1)
    assert kept.tolist() == [] and deleted == 2


def test_rank_takes_scores_equal_to_rounding_as_ties_in_input_order():
    """The online store's ranking after one observe at a time must equal a fresh fit's: two candidates
    that fit alike (log2(p) and ceil(log2(p)) on powers of two) differ only by rounding, in either order."""
    fresh = rank(np.array([0.2, 0.1 * (1 + 1e-13), 0.1, 0.05]))
    updated = rank(np.array([0.2, 0.1, 0.1 * (1 + 1e-13), 0.05]))
    assert fresh.tolist() == updated.tolist() == [3, 1, 2, 0]
    assert rank(np.array([0.1 + 1e-6, 0.1])).tolist() == [1, 0]  # a real difference still counts
