"""The term language: what parse_term rejects."""

import pytest

from automodel.errors import SpaceError
from automodel.space.parse import parse_term


@pytest.mark.parametrize("bad", ["", "n^", "exp(n)", "n+p", "__import__('os')", "1/log2(n)"])
def test_parse_rejects(bad):
    with pytest.raises(SpaceError):
        parse_term(bad)


@pytest.mark.parametrize("text, fragment", [
    ("p^(1/0)", "an exponent is a fraction a/b"),  # issue 17, cause 11: was a ZeroDivisionError
    ("n^(10000000000000000000000)", "|a| <= 1000"),
    ("n^(1/" + "9" * 10000 + ")", "(10008 chars)"),  # echoes are cut, parsing stays linear
    ("sigmoid(p, 1e999)", "bad sigmoid centre"),
])
def test_cause11_exponents_are_bounded_fractions(text, fragment):
    with pytest.raises(SpaceError) as err:
        parse_term(text)
    assert fragment in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize("text, fragment", [
    ("*".join(["n"] * 10000), "got 10000"),  # each atom was within bounds, their product n^10000 not
    ("n^1000*n", "got 1001"),
    ("*".join(["over1(p)"] * 17), "at most 16 factors, got 17 factors"),
    ("*".join(["log2(n)"] * 9), "'log_exponent' must be an integer 0..8, got 9"),
])
def test_a_term_is_one_a_model_file_can_hold(text, fragment):
    """A space's term became a model whose file no command could read (the loader's bounds)."""
    with pytest.raises(SpaceError) as err:
        parse_term(text)
    assert fragment in str(err.value) and "\n" not in str(err.value)
    assert str(parse_term("n^999*n*sigmoid(p, n/64)/cap(p)")) != ""
