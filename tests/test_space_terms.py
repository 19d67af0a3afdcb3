"""Terms: evaluation, the sigmoid of Kohashi eq. 6, merged powers, JSON round trip."""

from fractions import Fraction

import numpy as np
import pytest

from automodel.errors import ModelFileError
from automodel.space.parse import parse_term
from automodel.errors import SpaceError
from automodel.space.terms import Cap, CeilLog2, Over1, PowerLog, Sigmoid, Term, caps_measured, term_from_dict


def test_parse_and_evaluate_terms():
    cols = {"n": np.array([4.0, 16.0]), "p": np.array([2.0, 8.0])}
    assert np.allclose(parse_term("n^(3/2)*log2(n)/p").evaluate(cols), [8 * 2 / 2, 64 * 4 / 8])
    assert np.allclose(parse_term("log2(p)/sqrt(p)").evaluate(cols), [1 / np.sqrt(2), 3 / np.sqrt(8)])
    assert np.allclose(parse_term("1/p^2").evaluate(cols), [0.25, 1 / 64])
    assert np.allclose(parse_term("ceil_log2(p)").evaluate({"p": np.array([3.0, 4.0, 5.0])}), [2, 2, 3])
    assert np.allclose(parse_term("1").evaluate(cols, 2), [1, 1])


def test_over1_is_zero_on_one_process_and_one_from_two_on():
    t = parse_term("over1(p)*log2(n)")
    assert np.allclose(t.evaluate({"p": np.array([1.0, 2.0, 64.0]), "n": np.array([4.0, 4.0, 8.0])}), [0, 2, 3])
    assert str(parse_term("over1(p)")) == "Min(1, p - 1)"
    assert term_from_dict(t.to_dict(), {"n", "p"}) == t and Over1("p") in t.factors
    with pytest.raises(SpaceError, match="over1"):
        parse_term("over1(p)^2")


def test_sigmoid_matches_kohashi_eq6_and_never_overflows():
    t = parse_term("sigmoid(p, n/4)")
    p = np.array([1.0, 10.0, 5000.0])
    n = np.array([40.0, 40.0, 40.0])
    expected = p / (1 + np.exp(-(p - n / 4)))
    with np.errstate(over="raise"):
        assert np.allclose(t.evaluate({"p": p, "n": n}), expected)
        assert np.isfinite(t.evaluate({"p": np.array([1e6]), "n": np.array([1e9])})).all()


def test_powers_merge_and_print():
    t = parse_term("n^2") * parse_term("n*log2(n)") * parse_term("1/cpu")
    assert t.factors == (PowerLog("cpu", Fraction(-1)), PowerLog("n", Fraction(3), 1))
    assert str(t) == "n**3*log2(n)/cpu"


def test_term_json_round_trip_and_hostile_input():
    t = parse_term("n^(5/2)*log2(n)^2/p") * Term((Sigmoid("p", 0.0, "n", 0.25), CeilLog2("p")))
    assert term_from_dict(t.to_dict(), {"n", "p"}) == t
    for bad in ([{"kind": "power", "param": "n", "exponent": "__import__('os')"}],
                [{"kind": "eval", "param": "n"}],
                [{"kind": "power", "param": "q", "exponent": 1}],
                [{"kind": "power", "param": "n", "exponent": 1, "code": "x"}],
                "n**2"):
        with pytest.raises(ModelFileError):
            term_from_dict(bad, {"n", "p"})


def test_cap_levels_off_divides_round_trips_and_refuses_bad_centres():
    """Issue 36, failure 6: a time that stops falling (1/min(p, c)) or a cost that levels off (min(p, c))."""
    p = np.array([1.0, 4.0, 8.0, 32.0])
    assert np.allclose(parse_term("1/cap(p, 8)").evaluate({"p": p}), [1, 0.25, 0.125, 0.125])
    assert np.allclose(parse_term("cap(p, 8)^2").evaluate({"p": p}), [1, 16, 64, 64])
    t = parse_term("n/cap(p, 8)")
    assert str(t) == "n/Min(8, p)" and Cap("p", 8.0, Fraction(-1)) in t.factors
    assert term_from_dict(t.to_dict(), {"n", "p"}) == t
    for bad in ("cap(p, -2)", "cap(p, 1e999)", "cap(p, x)"):
        with pytest.raises(SpaceError):
            parse_term(bad)
    for bad in ([{"kind": "cap", "param": "p", "center": 0}], [{"kind": "cap", "param": "p"}],
                [{"kind": "cap", "param": "p", "center": 8, "exponent": "x"}]):
        with pytest.raises(ModelFileError):
            term_from_dict(bad, {"p"})


def test_a_cap_is_only_where_runs_measure_the_levelling():
    """A centre needs two measured levels above it; runs that stop below them (a forward split) do not
    take a cap that only the dropped runs placed."""
    levels = {"p": np.array([1.0, 2.0, 4.0, 8.0, 16.0])}
    assert caps_measured(parse_term("1/cap(p, 4)"), levels) and caps_measured(parse_term("1/p"), levels)
    assert not caps_measured(parse_term("1/cap(p, 8)"), levels)  # one level above
    assert not caps_measured(parse_term("1/cap(p, 4)"), {"p": levels["p"][:4]})
