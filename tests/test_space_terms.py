"""Terms: evaluation, the sigmoid of Kohashi eq. 6, merged powers, JSON round trip."""

from fractions import Fraction

import numpy as np
import pytest

from automodel.errors import ModelFileError
from automodel.space.parse import parse_term
from automodel.errors import SpaceError
from automodel.space.terms import CeilLog2, Over1, PowerLog, Sigmoid, Term, term_from_dict


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
