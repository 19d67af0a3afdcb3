"""The NWS mixture-of-experts forecaster and per-run min_avg_avail (rational-polynomial-yagnik, sec. 3)."""

from __future__ import annotations

import numpy as np
import pytest

from automodel.model.forecast import ADAPTIVE_WINDOWS, EXPERTS, GAINS, forecast, min_avg_avail, postcasts


def _naive(x: np.ndarray) -> dict[str, np.ndarray]:
    """Each expert's forecast of x[t] from x[:t], written as a plain loop over t."""
    out = {}
    n = len(x)
    for name in EXPERTS:
        out[name] = np.full(n + 1, np.nan)
    for t in range(1, n + 1):
        h = x[:t]
        out["last"][t] = h[-1]
        out["running_mean"][t] = h.mean()
        for w in (5, 31):
            win = h[-w:]
            out[f"mean_{w}"][t] = win.mean()
            out[f"median_{w}"][t] = np.median(win)
            s = np.sort(win)
            g = int(np.floor(0.3 * len(s)))
            out[f"trimmed_mean_{w}"][t] = s[g:len(s) - g].mean()
    for g in GAINS:
        f = np.full(n + 1, np.nan)
        f[1] = x[0]
        for t in range(2, n + 1):
            f[t] = f[t - 1] + g * (x[t - 1] - f[t - 1])
        out[f"exp_smooth_{g:g}"] = f
    return out


def test_vectorised_postcasts_equal_a_loop():
    x = np.random.default_rng(0).uniform(0.2, 1.0, 80)
    got = postcasts(x)
    ref = _naive(x)
    for i, name in enumerate(EXPERTS):
        if name != "adaptive_median":
            np.testing.assert_allclose(got[i], ref[name], rtol=1e-12, equal_nan=True, err_msg=name)
    # the adaptive median is, at every step, the median of one of its windows
    meds = np.vstack([[np.median(x[max(0, t - w):t]) for t in range(1, 81)] for w in ADAPTIVE_WINDOWS])
    assert np.isclose(meds, got[-1, 1:]).any(axis=0).all()


def _local_level(rng, n, q):
    level = np.cumsum(np.sqrt(q) * rng.standard_normal(n))
    return 0.5 + 0.01 * (level + rng.standard_normal(n))


@pytest.mark.parametrize("q, gain", [(0.01, 0.1), (0.1, 0.3), (0.5, 0.5), (3.0, 0.75)])
def test_exponential_smoothing_gain_tracks_the_signal_to_noise_ratio(q, gain):
    # random walk plus noise: the optimal gain is (-q + sqrt(q^2 + 4q)) / 2; the closest one is picked
    got = forecast(_local_level(np.random.default_rng(1), 3000, q))
    assert got.expert == f"exp_smooth_{gain:g}"


def test_each_series_gets_its_expert():
    rng = np.random.default_rng(2)
    assert forecast(np.cumsum(rng.standard_normal(2000))).expert == "last"  # a pure random walk
    iid = 0.6 + 0.05 * rng.standard_normal(2000)
    f = forecast(iid)
    assert f.expert == "running_mean" and f.value == pytest.approx(iid.mean())
    # level shifts every 60 samples plus frequent large drops: a short median ignores the drops and
    # follows the shifts (judged by MAE)
    level = np.repeat(rng.uniform(0.3, 0.9, 40), 60)[:2000]
    spiky = level + 0.005 * rng.standard_normal(2000)
    drop = rng.random(2000) < 0.15
    spiky[drop] -= rng.uniform(0.2, 0.3, drop.sum())
    f = forecast(spiky, "mae")
    assert f.expert == "median_5"
    assert f.errors["median_5"] < 0.85 * f.errors["mean_5"]


def test_a_window_longer_than_any_history_is_all_of_it():
    """A window of 10**21 postcasts (load forecast --window) was an OverflowError in numpy."""
    x = np.linspace(0.2, 0.8, 40)
    long, every = forecast(x, window=10 ** 21), forecast(x)
    assert (long.value, long.expert, long.errors) == (every.value, every.expert, every.errors)


def test_recent_window_follows_a_change_of_regime():
    rng = np.random.default_rng(3)
    x = np.r_[0.6 + 0.05 * rng.standard_normal(1000), 0.6 + np.cumsum(0.05 * rng.standard_normal(200))]
    assert forecast(x, window=50).expert == "last"
    assert forecast(x).expert != "last"


def test_forecast_reports_errors_and_rejects_bad_input():
    f = forecast(np.array([0.5]))
    assert f.value == 0.5 and f.expert == "last" and f.n_history == 1
    f = forecast(np.linspace(0.1, 1.0, 40), "mae")
    assert f.metric == "mae" and f.error == min(f.errors.values()) and np.isfinite(f.mixture_error)
    with pytest.raises(ValueError, match="finite"):
        forecast(np.array([0.5, np.nan]))
    with pytest.raises(ValueError, match="mse"):
        forecast(np.ones(3), "rmse")


def test_min_avg_avail_averages_per_host_then_takes_the_minimum():
    hosts = np.array(["a", "a", "a", "b", "b", "b"])
    at = np.array([0.0, 10.0, 20.0, 0.0, 10.0, 20.0])
    cpu = np.array([0.9, 0.7, 0.5, 0.6, 0.8, 1.0])
    got = min_avg_avail(hosts, at, cpu, np.array([0.0, 5.0, 25.0]), np.array([20.0, 15.0, 30.0]))
    # run 1: a 0.7, b 0.8 -> 0.7; run 2: a 0.7, b 0.8 -> 0.7; run 3: no sample inside, held: a 0.5, b 1.0
    np.testing.assert_allclose(got, [0.7, 0.7, 0.5])
    only_b = min_avg_avail(hosts, at, cpu, np.array([0.0]), np.array([20.0]), [["b"]])
    np.testing.assert_allclose(only_b, [0.8])
    assert np.isnan(min_avg_avail(hosts, at, cpu, np.array([-10.0]), np.array([-5.0])))[0]
