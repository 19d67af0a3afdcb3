"""The shared vocabulary: one registry per strategy, and every registered name is implemented."""

import numpy as np
import pytest

from automodel.errors import SpaceError
from automodel.options import SELECTIONS, WEIGHTINGS, FitOptions, check_choice, weights
from automodel.search.choice import choose as select
from automodel.search.select import tolerance
from automodel.solve.metrics import METRICS, SCALES, check_metric, compute


def test_weights_and_their_standard_error():
    y = np.array([[0.5, 2.0], [4.0, 1.0]])
    assert np.array_equal(weights(y, "relative"), 1.0 / y ** 2)
    assert np.array_equal(weights(y, "none"), np.ones_like(y))
    assert {w.standard_error for w in WEIGHTINGS.values()} <= set(METRICS)
    with pytest.raises(SpaceError, match="unknown weighting 'squared'; expected one of none, relative"):
        weights(y, "squared")


def test_every_metric_is_computed_and_selectable():
    rng = np.random.default_rng(0)
    y = rng.uniform(1, 2, 12)
    pred = y[:, None] * (1 + 0.01 * rng.standard_normal((12, 3)))
    lev = np.full((12, 3), 0.2)
    got = compute(y, pred, np.array([1, 2, 3]), np.ones(3), lev, 0.01 * rng.standard_normal((2, 3)))
    assert list(got) == list(METRICS)
    for name, metric in METRICS.items():
        assert np.isfinite(got[name]).all(), name
        for rule in SELECTIONS:
            chosen = select(got[name], np.array([1, 2, 3]), 12, name, rule)
            assert 0 <= chosen.index < 3
        thr, why = tolerance(float(got[name].min()), name, dof=9)
        assert thr >= got[name].min() and why
        assert metric.scale in SCALES


def test_fit_options_check_names_the_place():
    FitOptions().check()
    with pytest.raises(SpaceError, match=r"space.toml: \[fit\]: unknown metric 'r2'"):
        check_metric(FitOptions(metric="r2").metric, "space.toml: [fit]")
    with pytest.raises(SpaceError, match="unknown selection 'first'; expected one of simplest, best"):
        check_choice("selection", "first", SELECTIONS)
