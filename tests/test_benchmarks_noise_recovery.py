"""The noise-recovery benchmark (``benchmarks.noise_recovery``): its table of Extra-P's test functions and
its scoring, without fitting anything."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import known_formulas as kf  # noqa: E402
from benchmarks import noise_recovery as nr  # noqa: E402
from benchmarks.contenders import OK, Outcome  # noqa: E402


def test_the_table_holds_extrap_tests_functions_once_each_with_their_structure():
    assert [len(nr.FUNCTIONS[f.key]) for f in nr.FAMILIES] == [4, 43]
    keys = [fn.key for f in nr.FAMILIES for fn in nr.FUNCTIONS[f.key]]
    assert len(keys) == len(set(keys))
    assert set(nr.QUICK_FUNCTIONS) <= set(keys)
    assert len(nr.EXTRAP_COMMIT) == 40
    for (e, k, _, _), function in zip(nr.REFINING_TERMS, nr.FUNCTIONS["refining-test"]):
        truth = (0.0, 0.0) if e is None else (float(Fraction(e)), float(k))
        assert kf.true_pairs(function) == (truth,)
        assert 0 <= truth[0] <= 3 and truth[1] in (0, 1, 2)  # Extra-P's hypothesis space
    adaptive = [kf.true_pairs(fn)[0] for fn in nr.FUNCTIONS["adaptive-test"]]
    assert adaptive == [(a / b, float(c)) for a, b, c in nr.ADAPTIVE_TERMS]


def test_the_functions_take_the_tests_values():
    # test_compare's first values: the constant c0 + c1, and 392.84 + 683.86 log2(4) = 1760.57 at x = 4
    first = [kf.evaluate(fn, np.array([[4.0]]))[0] for fn in nr.FUNCTIONS["refining-test"][:2]]
    assert first == pytest.approx([124.67898380110276, 1760.5671478913678], rel=1e-12)
    x_log_x = nr.FUNCTIONS["adaptive-test"][1]
    assert kf.evaluate(x_log_x, np.array([[8.0]]))[0] == pytest.approx(200 + 10 * 8 * 3)


def _outcome(case: kf.Case, formula: str) -> Outcome:
    """The outcome of a tool that chose ``formula``, predicting its values at the test and training rows."""
    function = kf.Known("model", 1, formula)
    points = np.concatenate([case.task.test[["x"]].to_numpy(float), case.task.train[["x"]].to_numpy(float)])
    return Outcome(OK, formula, kf.evaluate(function, points), 0.01)


def test_a_perfect_formula_is_recovered_and_a_wrong_one_is_not():
    cases = nr.build_cases(quick=True)
    assert len(cases) == len(nr.QUICK_FUNCTIONS)
    case = next(c for c in cases if c.function.key == "a-x1l1")
    assert sorted(case.task.train["x"].unique()) == [2, 4, 8, 16, 32]
    assert len(case.task.train) == 5 * kf.REPETITIONS
    outcomes = {"automodel": {case.task.key: _outcome(case, "200 + 10*x^(4/3)")},
                "extrap-refining": {case.task.key: _outcome(case, case.function.formula)}}
    records = nr.score([case], outcomes)
    wrong, right = sorted(records, key=lambda r: r["contender"])
    assert (right["structure"], right["e4"], right["family"]) == (True, 0.0, "adaptive-test")
    assert not wrong["structure"] and wrong["e4"] > 0.1
    found = nr.misses(records)
    assert [(m["function"], m["truth"], m["automodel"]) for m in found] == [("a-x1l1", "x:1,1", "x:4/3,0")]
    groups = {(g["level"], g["contender"]): g for g in nr.aggregate(records)}
    assert groups[("criterion", "extrap-refining")]["recovered"] == 1
    assert groups[("criterion", "automodel")]["recovered"] == 0
    assert "| **criterion**: adaptive-test | 5-20 % | 1 | 0 / 1 |" in nr.groups_table(nr.aggregate(records))
    assert not math.isnan(groups[("all", "automodel")]["e16"])
