"""Tests of automodel.templates.remc: reflection, HDI, and sampling of known distributions."""

from __future__ import annotations

import numpy as np
import pytest

from automodel.templates.remc import DEFAULT_TEMPERATURES, hdi, replica_exchange


def test_default_temperatures_are_the_papers() -> None:
    np.testing.assert_allclose(DEFAULT_TEMPERATURES, [0.1, 0.464, 2.154, 10.0], rtol=1e-3)


def test_hdi_by_hand() -> None:
    # skewed sample: 0,0,0,0,1,2,...: shortest 50% interval sits on the pile at 0
    s = np.array([0.0] * 6 + [1.0, 2.0, 5.0, 9.0])
    lo, hi = hdi(s[:, None], 0.5)
    assert (lo[0], hi[0]) == (0.0, 0.0)
    lo, hi = hdi(np.arange(101.0)[:, None], 0.5)
    assert hi[0] - lo[0] == 50.0
    with pytest.raises(ValueError):
        hdi(s[:, None], 1.5)


def _quadratic(x: np.ndarray) -> np.ndarray:
    return np.sum((x - 1.0) ** 2, axis=1)


def test_samples_gaussian_posterior() -> None:
    # exp(-F/tau) with F = (x - 1)^2, tau = 0.1: normal, mean 1, standard deviation sqrt(tau / 2)
    r = replica_exchange(_quadratic, [-5.0, -5.0], [5.0, 5.0], [3.0, -3.0], n_steps=20000, seed=3)
    assert r.samples.shape == (10000, 2)
    np.testing.assert_allclose(r.samples.mean(axis=0), 1.0, atol=0.05)
    np.testing.assert_allclose(r.samples.std(axis=0), np.sqrt(0.05), rtol=0.15)
    assert np.all((r.acceptance > 0.1) & (r.acceptance < 0.7))
    assert np.all(r.exchange_acceptance > 0)


def test_box_prior_truncates_and_is_reproducible() -> None:
    cost = lambda x: np.sum((x + 0.5) ** 2, axis=1)  # optimum outside the box [0, 2]
    a = replica_exchange(cost, [0.0], [2.0], [1.0], n_steps=6000, seed=11)
    b = replica_exchange(cost, [0.0], [2.0], [1.0], n_steps=6000, seed=11)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.samples.min() >= 0.0 and a.samples.max() <= 2.0
    assert np.median(a.samples) < 0.2
