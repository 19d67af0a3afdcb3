"""automodel.suggestion: which runs narrow the band at a target most per core-hour."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.errors import DataError
from automodel.model.interval import Interval
from automodel.model.core import Model, TermModel
from automodel.space.terms import ONE, power
from automodel.suggestion import candidate_grid, check_target, suggest
from automodel.suggestion.alternatives import untested


def hand_model(alternatives=(), covariance=None, growth=0.3, misfit=0.02):
    """T = 1 + 8/p, measured on p in [1, 8], with a band built by hand."""
    core = TermModel((ONE, power("p", -1)), (1.0, 8.0))
    interval = Interval(run=0.0, misfit=misfit, dof=5, ranges={"p": (1.0, 8.0)}, growth={"p": growth},
                        covariance=covariance, alternatives=tuple(alternatives), growth_dof={"p": 6.0})
    return Model(core, ("p",), {"p": "procs", "time": "time"}, {"p": [1.0, 8.0]}, interval=interval)


def test_growth_drives_runs_towards_the_target_and_costs_are_p_times_time():
    model = hand_model()
    plan = suggest(model, {"p": 64}, count=3)
    assert plan.suggestions, plan.lines()
    first = plan.suggestions[0]
    assert first.config["p"] > 8  # a run inside the range teaches the growth nothing
    assert first.width_after < plan.width
    assert "extends procs" in first.reason
    for s in plan.suggestions:
        assert s.cost == pytest.approx(s.config["p"] * (1 + 8 / s.config["p"]) / 3600)
    widths = [plan.width] + [s.width_after for s in plan.suggestions]
    assert all(a > b for a, b in zip(widths, widths[1:]))  # every run narrows it further
    configs = [s.config["p"] for s in plan.suggestions]
    assert len(set(configs)) == len(configs)  # a batch never names a configuration twice


def test_the_candidates_disagreement_beyond_the_data_picks_where_a_run_tells_them_apart():
    # the alternative agrees on p <= 8 (within 1 %) and parts ways beyond: 1 + 8/p + 0.01 p
    alternative = TermModel((ONE, power("p", -1), power("p", 1)), (1.0, 8.0, 0.01))
    alone = suggest(hand_model(growth=0.0), {"p": 256}, count=1, allowed_p=[1, 2, 4, 8, 16, 32], max_p=256)
    tied = suggest(hand_model([alternative], growth=0.0), {"p": 256}, count=2, allowed_p=[1, 2, 4, 8, 16, 32], max_p=256)
    assert not alone.suggestions  # no growth, no alternative, no covariance: nothing to learn
    assert tied.width > alone.width
    first, second = tied.suggestions
    # beyond the data, where they differ by 6 % (p = 16) and 22 % (p = 32) beyond the 4 % they differ at p = 8:
    # p = 16 tells them apart against 2 % noise at half the cost of p = 32, which settles the rest
    assert (first.config["p"], second.config["p"]) == (16, 32)
    assert "equivalent candidates differ here" in first.reason
    assert first.width_after < tied.width / 100
    assert second.width_after == pytest.approx(alone.width, rel=1e-2)  # the choice resolved


def test_the_coefficient_part_shrinks_by_sherman_morrison():
    cov = np.diag([1e-4, 1e-2])
    plan = suggest(hand_model(covariance=cov, growth=0.0), {"p": 4}, count=1, allowed_p=[1, 2, 4, 8])
    (best,) = plan.suggestions
    assert "pins the coefficients" in best.reason
    assert best.width_after < plan.width


def test_budget_limits_the_total_cost():
    model = hand_model()
    cheap = suggest(model, {"p": 64}, count=10, budget=0.03)
    assert cheap.cost <= 0.03
    assert len(cheap.suggestions) < len(suggest(model, {"p": 64}, count=10).suggestions)


@pytest.mark.parametrize("kwargs, message", [
    ({"target": {"p": 512}, "max_p": 256}, "outside the allowed p"),
    ({"target": {"p": 64}, "budget": 0}, "budget must be a positive"),
    ({"target": {"p": 64}, "budget": 1e-9}, "no configuration fits the budget"),
    ({"target": {"p": 64}, "allowed_p": [1000], "max_p": 100}, "no configuration meets the constraints"),
    ({"target": {"p": 64}, "count": 0}, "count must be"),
    ({"target": {"q": 64}}, "unknown parameter"),
    ({"target": {"p": 6.5}}, "whole number"),
    ({"target": {"p": 64}, "allowed_p": [0.5]}, "whole numbers >= 1"),
    # levels and targets beyond the numbers the engine fits were weighed (bands of 1e+275 s, overflow
    # warnings on stderr) and levels <= 0 silently dropped
    ({"target": {"p": 1e150}}, "target: p must be a positive process count between 1e-100 and 1e"),
    ({"target": {"p": 64}, "allowed_p": [1e300]}, "allowed p must be a positive process count between"),
    ({"target": {"p": 64}, "grid": {"p": [-4, 8]}}, "grid: p must be a positive process count, got -4"),
])
def test_bad_input_is_one_line(kwargs, message):
    target = kwargs.pop("target")
    with pytest.raises(DataError, match=message) as info:
        suggest(hand_model(), target, **kwargs)
    assert "\n" not in str(info.value)


def test_target_by_user_name_and_grid_defaults():
    model = hand_model()
    assert check_target(model, {"procs": 32}) == {"p": 32.0}
    grid = candidate_grid(model, {"p": 32.0})
    assert grid["p"].tolist() == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]  # doublings across and beyond, the target


def test_untested_removes_what_the_data_already_survived():
    D = np.array([[0.05, 0.0], [0.2, -0.3], [0.01, 0.0]])
    out = untested(D, np.array([[0.05, 0.0], [np.nan, 0.0]]), np.array([True, False, False]))
    assert out[0].tolist() == [0.0, 0.0]
    assert out[1].tolist() == pytest.approx([0.15, -0.3])
    assert out[2].tolist() == [0.0, 0.0]


def test_a_disagreement_the_measured_runs_already_tested_buys_nothing():
    from automodel.suggestion import plan_runs

    # the alternative is 4 % above the model everywhere, at the measured p = 8 too: a run at p = 16 tells
    # nothing new (without the measured runs, 4 % against 2 % noise would look decisive)
    alternative = TermModel((ONE, power("p", -1)), (1.04, 8.32))
    model = hand_model([alternative], growth=0.0)
    grid = candidate_grid(model, {"p": 16.0}, {"p": [16.0]})
    tested, _ = plan_runs(model, {"p": 16.0}, grid, count=1, tested=pd.DataFrame({"p": [1.0, 2.0, 4.0, 8.0]}))
    untested, _ = plan_runs(model, {"p": 16.0}, grid, count=1, tested=pd.DataFrame({"p": []}))
    assert not tested
    assert len(untested) == 1 and "equivalent candidates" in untested[0].reason


def test_from_runs_fits_and_never_repeats_with_new_only(tmp_path):
    rows = [(n, p, 1e-8 * n * np.log2(n) / p + 1e-4 * np.log2(p) + 1e-3)
            for n in (1e4, 2e4, 4e4) for p in (1, 2, 4, 8)]
    runs = pd.DataFrame(rows, columns=["n", "p", "time"])
    plan = automodel.suggest(runs, {"n": 3.2e5, "p": 64}, count=4, new_only=True, max_p=64)
    measured = {(n, p) for n, p, _ in rows}
    assert plan.suggestions
    assert not measured & {(s.config["n"], s.config["p"]) for s in plan.suggestions}
    assert all(len(line) <= 80 for line in plan.lines())
    assert list(plan.frame().columns[:2]) == ["n", "p"]


def test_listed_configurations_only():
    listed = pd.DataFrame({"procs": [2, 16, 16, 128]})
    plan = suggest(hand_model(), {"p": 64}, count=5, configurations=listed, max_p=64)
    assert plan.n_candidates == 2  # 16 once, 128 beyond max p
    assert {s.config["p"] for s in plan.suggestions} <= {2.0, 16.0}


def test_check_runs_are_the_nearest_to_the_target_within_the_budget():
    from automodel.suggestion.facade import check_runs

    model = hand_model()
    runs = check_runs(model, {"p": 64}, count=2, allowed_p=[1, 2, 4, 8, 16, 32], max_p=64)
    assert [r["p"] for r in runs] == [32.0, 16.0]
    cost_32 = 32 * (1 + 8 / 32) / 3600
    assert [r["p"] for r in check_runs(model, {"p": 64}, count=2, allowed_p=[16, 32], budget=cost_32 * 0.99)] == [16.0]


def test_a_design_that_never_measured_the_corner_is_asked_for_it():
    """Runs at large n on one process and at small n on many leave the corner of large n on many
    unmeasured: the band at a target beyond that corner counts from the nearest measured configuration
    above it, so the plan asks for runs that measure large n and large p together."""
    rng = np.random.default_rng(3)
    law = lambda n, p: 1e-5 * n / p + 2e-3 * np.log2(p) + 0.01  # noqa: E731
    configs = [(n, p) for n in (1e3, 2e3, 4e3, 8e3) for p in (1.0, 2.0, 4.0, 8.0) if n == 1e3 or p == 1.0]
    runs = pd.DataFrame([(n, p, law(n, p) * np.exp(0.02 * rng.standard_normal())) for n, p in configs for _ in range(3)],
                        columns=["n", "p", "time"])
    plan = automodel.suggest(runs, {"n": 16e3, "p": 16}, count=3, grid={"n": [1e3, 2e3, 4e3, 8e3, 16e3],
                                                                       "p": [1, 2, 4, 8, 16]}, templates="none")
    assert plan.suggestions and any(s.config["n"] >= 4e3 and s.config["p"] >= 4 for s in plan.suggestions)
