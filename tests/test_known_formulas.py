"""The known-formula suite (``benchmarks.known_formulas``): structure scoring, data layout, a tiny run."""

from __future__ import annotations

import re

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import known_formulas as kf  # noqa: E402
from benchmarks.records import dumps, jsonable  # noqa: E402

THIRD, HALF = 1 / 3, 1 / 2


def right(model: str, truth: str, names: list[str]) -> bool:
    return kf.same_structure(kf.lead_pairs(model, names), kf.lead_pairs(truth, names))


@pytest.mark.parametrize("formula, names, pairs", [
    ("200 + 10*x^(2/3)*log2(x)", ["x"], [(2 / 3, 1)]),
    ("200.00000000000003 + 9.999999999999998 * x^(2/3) * log2(x)^(1)", ["x"], [(2 / 3, 1)]),  # Extra-P's text
    ("4.068", ["p"], [(0, 0)]),
    ("0.0003207*n^3 - 0.06455*n^2 + 18.15*n + 178.8", ["n"], [(3, 0)]),
    ("5 - 0.001*x^2", ["x"], [(2, 0)]),                                   # the sign does not matter
    ("3 + 2/p", ["p"], [(0, 0)]),                                         # 1/p vanishes beside the constant
    ("sqrt(n)*log2(n)^2/p", ["n", "p"], [(HALF, 2), (-1, 0)]),
    ("10.0*n*log2(p) + 200.0", ["n", "p"], [(1, 0), (0, 1)]),
    ("log2(n/p)", ["n", "p"], [(0, 1), (0, 1)]),
    ("2^(0.8609*log2(iters) + 0.3386*log2(n) + 4.764)", ["n", "iters"], [(0.3386, 0), (0.8609, 0)]),
    ("exp(log(x)/3)", ["x"], [(THIRD, 0)]),
    ("7 + 0*x", ["x", "y"], [(0, 0), (0, 0)]),
    ("9.978*p/(1 + exp(-(p - 12.5))) + 200.5", ["p"], [(1, 0)]),          # a sigmoid grows as p
])
def test_lead_pairs_of_hand_made_formulas(formula, names, pairs):
    got = kf.lead_pairs(formula, names)
    assert len(got) == len(pairs)
    for (a, k), expected in zip(got, pairs):
        assert (a, k) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("formula", ["2^(0.5*log2(x)^2)", "x/(1 + exp(x - 12))", "log2(log2(x))", "x^y",
                                     "Piecewise((x, x < 3), (1, True))", "1 +* x"])
def test_formulas_outside_the_algebra_have_no_pair(formula):
    assert kf.lead_pairs(formula, ["x", "y"])[0] is None
    assert not right(formula, "x", ["x", "y"])


def test_structure_right_and_wrong_cases():
    assert right("9.99*x^(2/3)*log2(x)^(1) + 200.1", "200 + 10*x^(2/3)*log2(x)", ["x"])
    assert right("10.0*n*log2(p) + 200.0", "200 + 10*n*log2(p)", ["n", "p"])
    assert right("x^0.6667 + 1", "x^(2/3)", ["x"])                         # printed floats: within the tolerance
    assert not right("x^0.66 + 1", "x^(2/3)", ["x"])
    assert not right("4.02 + 1.3e-15*p^3*log2(p)", "4.068", ["p"])       # a negligible term is still a term
    assert not right("103.1*sqrt(x)", "200 + 10*x", ["x"])
    assert not right("55.95*sqrt(x)*sqrt(y)", "200 + 10*x*y", ["x", "y"])
    assert not right("200 + 10*x", "200 + 10*x + 0.1*y", ["x", "y"])    # every parameter counts
    assert right("1 + x*y + y^2", "y^2 + x", ["x", "y"])                 # per parameter, the others fixed
    assert not kf.same_structure((None,), ((0.0, 0.0),))


def test_growth_takes_automodel_symbols():
    n = sympy.Symbol("n", positive=True, real=True)
    expr = sympy.Float(2.0) * n ** sympy.Rational(3, 2) * kf.log2(n)
    assert kf.lead_pairs(expr, ["n"]) == ((1.5, 1.0),)
    assert kf.pair_text("n", (1.5, 1.0)) == "n:3/2,1" and kf.pair_text("n", None) == "n:?"


def test_every_function_is_in_the_hypothesis_space_and_positive():
    assert 30 <= len(kf.FUNCTIONS) <= 60 and len({f.key for f in kf.FUNCTIONS}) == len(kf.FUNCTIONS)
    allowed = {0, 1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4, 1, 5 / 4, 4 / 3, 3 / 2, 5 / 3, 2, 9 / 4, 5 / 2, 3}
    for f in kf.FUNCTIONS:
        pairs = kf.true_pairs(f)
        assert len(pairs) == f.n_params and None not in pairs
        assert all(min(abs(a - e) for e in allowed) < 1e-9 and k in (0, 1, 2) for a, k in pairs), f
        values = kf.evaluate(f, kf.layout(f.n_params))
        assert np.all(np.isfinite(values)) and np.all(values > 0), f
    assert {f.n_params for f in kf.FUNCTIONS} == {1, 2, 3, 4}
    assert all(any(kf.true_pairs(f) == ((0.0, 0.0),) * n for f in kf.FUNCTIONS if f.n_params == n) for n in (1, 2, 4))


def test_layout_grids_and_prediction_points():
    assert kf.layout(3).shape == (125, 3)
    sparse = kf.layout(4)
    assert sparse.shape == (21, 4)
    for i, grid in enumerate(kf.GRIDS):  # each parameter's line of five values, the others at their smallest
        others = np.delete(sparse, i, axis=1)
        line = sparse[np.all(others == np.delete([g[0] for g in kf.GRIDS], i), axis=1), i]
        assert sorted(line) == list(grid)
    points = kf.prediction_points(["n", "p"]).set_index("point")
    assert points.loc["16x all"].tolist() == [16 * 64, 16 * 32]
    assert points.loc["4x p"].tolist() == [64, 4 * 32]


def test_same_rows_under_every_naming_and_seeded_noise():
    function = next(f for f in kf.FUNCTIONS if f.key == "2-mixed")
    a, b = (kf.make_case(function, names, 0.05, 1) for names in (("x", "y"), ("n", "p")))
    np.testing.assert_array_equal(a.task.train.to_numpy(), b.task.train.to_numpy())
    assert list(b.task.train.columns) == ["n", "p", "time"] and b.task.params == {"n": "n", "p": "p"}
    clean = kf.make_case(function, ("x", "y"), 0.0, 0).task.train["time"].to_numpy()
    assert np.all(np.abs(a.task.train["time"].to_numpy() / clean - 1) <= 0.05)
    other_seed = kf.make_case(function, ("x", "y"), 0.05, 0).task.train["time"].to_numpy()
    assert not np.array_equal(other_seed, a.task.train["time"].to_numpy())
    assert len(kf.build_cases(quick=True)) < len(kf.build_cases()) // 10


def test_tiny_suite_without_extrap():
    function = next(f for f in kf.FUNCTIONS if f.key == "1-x1")
    out = kf.collect(extrap=False, functions=[function], noises=[0.0], log=lambda _: None, workers=1)
    cases = out["known_formulas_cases"]
    assert [c["naming"] for c in cases if c["contender"] == "automodel"] == ["x", "n", "p"]
    assert [c["contender"] for c in cases if c["contender"] != "automodel"] == []  # the oracle's: its groups only
    for c in cases:
        assert c["status"] == "ok" and isinstance(c["structure"], bool) and c["formula"]
        assert c["e16"] is not None and len(c["e16_each"]) == 1 and c["seconds"] > 0
    everything = {g["contender"]: g for g in out["known_formulas_groups"] if g["level"] == "all"}
    assert everything["automodel"]["cases"] == everything[kf.ORACLE]["cases"] == 3
    ours = [c["structure"] for c in cases if c["contender"] == "automodel"]
    assert everything["automodel"]["structure"] == pytest.approx(np.mean(ours))
    assert out["known_formulas_meta"]["contenders"] == ["automodel", kf.ORACLE]
    json.loads(dumps(jsonable(out)))
    text = kf.table_text(out["known_formulas_groups"], "group")
    assert all(len(line) <= 80 for line in text.splitlines()) and text.count("automodel") == 3


def test_the_oracle_knows_the_structures_and_reads_the_noise():
    """The reference: exact on noise-free rows of every function (among exact fits the fewest coefficients:
    the constant 4.068 is not read as 4.068 + 1e-18 x), and fooled by noise where the rows cannot tell."""
    clean = [kf.make_case(f, kf.NAMINGS[f.n_params][1], 0.0, 0) for f in kf.FUNCTIONS]
    for case in clean:
        outcome = kf.oracle_outcome(case)
        record = kf.score_case(case, kf.ORACLE, outcome)
        assert record["structure"] and record["e16"] < 1e-6, (case.function.key, outcome.formula)
    sqrt = next(f for f in kf.FUNCTIONS if f.key == "1-x1/2")
    noisy = [kf.oracle_outcome(kf.make_case(sqrt, ("n",), 0.2, seed)) for seed in range(5)]
    leads = [kf.lead_pairs(o.formula, ["n"]) for o in noisy]
    assert all(lead[0] is not None for lead in leads)
    assert set(leads) != {kf.true_pairs(sqrt)}  # 200 + 10 sqrt(n) at 20 %: a neighbour fits better


def test_a_route_choice_that_fits_clearly_worse_gives_way():
    """5 + 0.01 x^(2/3) y^(3/4) sqrt(z) log2(z) at 5 % noise (125 points): the staged search's best,
    sqrt(y z) log2(x) with no constant, fits far worse than the PMNF route's (rel_s 0.167 against 0.06)
    and was chosen on its holdout error, 95 % off at 16x; it is not tied with the best now (issue 36)."""
    import automodel

    function = next(f for f in kf.FUNCTIONS if f.key == "3-prod-log")
    task = kf.make_case(function, ("x", "y", "z"), 0.05, 0).task
    result = automodel.fit(task.train, params=["x", "y", "z"], progress=False, intervals=False)
    assert "staged" not in result.selection.reason  # one chooser for both routes: no route rule decides
    at = {"x": [4 * 64.0], "y": [32.0], "z": [50.0]}
    truth = 5 + 0.01 * 256 ** (2 / 3) * 32 ** 0.75 * 50 ** 0.5 * np.log2(50)
    assert abs(result.best.predict(at)[0] / truth - 1) < 0.25


@pytest.mark.parametrize("key, seed", [("3-mixed", 0), ("3-mixed", 1)])
def test_pmnf_judges_each_parameter_on_every_line_of_the_grid(key, seed):
    """100 + 2 x log2(y) + 0.5 z^2 at 5 % noise: on the one line y = 2, z = 10 the block x^(3/4) log2(x)
    fitted the noise best and the choice was x^(3/4) log2(x) log2(y); on all 25 lines of y, z fixed,
    each with its own intercept and slope, x is found."""
    import automodel

    function = next(f for f in kf.FUNCTIONS if f.key == key)
    task = kf.make_case(function, ("x", "y", "z"), 0.05, seed).task
    result = automodel.fit(task.train, params=["x", "y", "z"], progress=False, intervals=False)
    report = next(r for r in result.reports if r.name == "pmnf/x")
    assert report.rows == "25 line(s)" and report.n_rows == 125
    # the x block, judged on every line, pairs with log2(y) as in the truth (the least change beyond the
    # data took its tied neighbour x^(3/4) log2(x) log2(y) on seed 0; the weighted median does not)
    assert re.search(r"\*x\*log2\(y\)", result.best.formula), result.best.formula


def test_a_constant_of_parameters_without_effect_stays_a_constant():
    """42.5 at 5 % noise: three blocks of each parameter fitted to the noise made a crowd of steep, tiny
    terms that outvoted the constant (42.84 - 3.9e-6 y^(5/2) log2(y)^2 was chosen, 45x off at 16x);
    a parameter without a significant effect now offers its best block only."""
    import automodel

    function = next(f for f in kf.FUNCTIONS if f.key == "2-const")
    task = kf.make_case(function, ("x", "y"), 0.05, 0).task
    result = automodel.fit(task.train, params=["x", "y"], progress=False, intervals=False)
    assert result.best.core.n_coefficients == 1 and result.best.predict({"x": [1024.0], "y": [512.0]})[0] == \
        pytest.approx(42.5, rel=0.02)


