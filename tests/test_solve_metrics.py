"""Every metric (automodel.solve.metrics) against a naive loop: refits for leave-one-out, per-column targets."""

import numpy as np
import pytest

from automodel.solve import metrics
from automodel.solve.design import design, residuals
from automodel.solve.lstsq import leverages, solve


def test_metrics_and_leave_one_out_against_refits(problem):
    A, y = problem
    y = np.abs(y) + 1.0
    combos = np.array([[0, 3, 4], [1, 2, 5]])
    w = 1.0 / y ** 2
    des = design(A, y, w)
    fit = solve(des, combos, nonnegative=False, keep_factor=True)
    pred = y[:, None] - residuals(des, fit.kern, combos, fit.coef_scaled).T / np.sqrt(w)[:, None]
    lev = leverages(des, fit)
    got = metrics.compute(y, pred, combos.shape[1], fit.rss, lev)
    for j, cols in enumerate(combos):
        X = A[:, cols]
        e = y - pred[:, j]
        m, k = len(y), len(cols)
        assert got["s"][j] == pytest.approx(np.sqrt(e @ e / (m - k)))
        assert got["rel_s"][j] == pytest.approx(np.sqrt(np.sum((e / y) ** 2) / (m - k)))
        assert got["smape"][j] == pytest.approx(100 * np.mean(2 * np.abs(e) / (np.abs(y) + np.abs(pred[:, j]))))
        loo = []
        for i in range(m):  # explicit refits without row i
            keep = np.arange(m) != i
            sw = np.sqrt(w[keep])
            c, *_ = np.linalg.lstsq(X[keep] * sw[:, None], y[keep] * sw, rcond=None)
            loo.append((y[i] - X[i] @ c) / y[i])
        assert got["loo"][j] == pytest.approx(np.sqrt(np.mean(np.square(loo))), rel=1e-6)


def test_no_degrees_of_freedom_is_infinite():
    y = np.array([1.0, 2.0])
    got = metrics.compute(y, y[:, None], 2, np.array([0.0]))
    assert np.isinf(got["s"][0]) and np.isinf(got["aic"][0])


def test_metrics_for_per_column_targets_match_compute():
    rng = np.random.default_rng(2)
    m, B = 6, 30
    Y = rng.uniform(0.1, 100, (m, B))
    pred = Y * (1 + 0.05 * rng.standard_normal((m, B)))
    wrss, lev, hold = rng.uniform(0.01, 1, B), rng.uniform(0, 0.9, (m, B)), rng.normal(0, 0.1, (1, B))
    got = metrics.compute(Y, pred, 2, wrss, lev, hold)
    for b in range(B):
        want = metrics.compute(Y[:, b], pred[:, [b]], 2, wrss[[b]], lev[:, [b]], hold[:, [b]])
        for name in metrics.METRICS:
            np.testing.assert_allclose(got[name][b], want[name][0], rtol=1e-9, err_msg=name)
    only = metrics.compute(Y, pred, 2, None, names=("rel_s",))  # a subset needs no weighted RSS
    assert set(only) == {"rel_s"}
    np.testing.assert_allclose(only["rel_s"], got["rel_s"], rtol=1e-12)


def test_standard_error_and_holdout_errors():
    rss = np.array([6.0, 2.0, 5.0])
    np.testing.assert_array_equal(metrics.standard_error(rss, 5, np.array([2, 4, 5])),
                                  [np.sqrt(2.0), np.sqrt(2.0), np.inf])
    err = metrics.holdout_errors(np.array([[1.1], [1.8]]), np.array([[1.0], [2.0]]), 4, 3)
    np.testing.assert_allclose(err[:, 0], [0.1, -0.1])
    assert np.isinf(metrics.holdout_errors(np.full((1, 1), 1.5), np.ones((1, 1)), 3, 3)).all()


@pytest.fixture
def toy_metric():
    """A metric registered for one test: the largest relative error (lower is better)."""
    toy = metrics.register(metrics.Metric("toy_max", "relative", "largest relative error (a test's metric)",
                                          lambda f: np.abs(f.rel).max(axis=0)))
    yield toy
    del metrics.METRICS[toy.name]


def test_a_registered_metric_is_computed_checked_and_offered_by_the_command_line(toy_metric, capsys):
    """A new metric is one Metric and one register call: compute() computes it, a space may name it, and
    ``fit --metric`` offers it (choices and help read from the registry)."""
    from automodel.cli import build_parser

    y = np.array([1.0, 2.0, 4.0])
    pred = np.array([[1.1, 1.0], [2.0, 2.0], [4.0, 3.0]])
    got = metrics.compute(y, pred, 1, None, names=["toy_max"])
    np.testing.assert_allclose(got["toy_max"], [0.1, 0.25])
    metrics.check_metric("toy_max")
    parser = build_parser()
    assert parser.parse_args(["fit", "runs.csv", "--metric", "toy_max"]).metric == "toy_max"
    assert parser.parse_args(["kernels", "runs.csv", "--metric", "toy_max"]).metric == "toy_max"
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "--help"])
    assert "toy_max: largest relative error (a test's metric)" in " ".join(capsys.readouterr().out.split())


def test_register_refuses_a_taken_name_or_an_unknown_scale():
    from automodel.errors import SpaceError

    with pytest.raises(SpaceError, match="metric name 's'"):
        metrics.register(metrics.Metric("s", "seconds", "again", lambda f: f.k))
    with pytest.raises(SpaceError, match="unknown metric scale 'hours'"):
        metrics.register(metrics.Metric("hours_metric", "hours", "bad scale", lambda f: f.k))
