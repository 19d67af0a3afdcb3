"""Tests of automodel.runner.grid: axis specifications, the Cartesian grid, command templates."""

from __future__ import annotations

import math

import pytest

from automodel.errors import DataError
from automodel.runner.grid import expand_grid, format_value, parse_values, placeholders, substitute


def test_parse_values_ranges_and_lists() -> None:
    assert parse_values("1000:8000:8", "n") == [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]
    assert parse_values("1:256:*2", "p") == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert parse_values("10:1000:3:log", "n") == [10, 100, 1000]
    assert parse_values("0:1:+0.25", "x") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_values("1,2,4,8", "p") == [1, 2, 4, 8]
    assert parse_values("0.5,fast", "mode") == [0.5, "fast"]
    assert parse_values("7", "n") == [7]
    for bad in ["", "1:2", "a:5:2", "1:10:0", "1:10:*1", "10:1:+1", "1,,2", "0:10:3:log"]:
        with pytest.raises(DataError):
            parse_values(bad, "n")


def test_expand_grid_order_and_names() -> None:
    grid = expand_grid({"n": [1, 2], "p": [1, 4], "k": ["a"]})
    assert [tuple(g.values()) for g in grid] == [(1, 1, "a"), (1, 4, "a"), (2, 1, "a"), (2, 4, "a")]
    with pytest.raises(DataError, match="reserved"):
        expand_grid({"rep": [1]})
    with pytest.raises(DataError, match="no values"):
        expand_grid({"n": []})


def test_substitute_whole_arguments_and_unknown_placeholder() -> None:
    argv = substitute("./app -n {n} --p={p} 'a b'", {"n": 10, "p": 2.0})
    assert argv == ["./app", "-n", "10", "--p=2", "a b"]
    assert substitute("x {n}", {"n": "two words"}) == ["x", "two words"]
    with pytest.raises(DataError, match="unknown placeholder"):
        substitute("./app {m}", {"n": 1})


def test_format_value_and_placeholders() -> None:
    assert [format_value(v) for v in (100, 100.0, 0.5, "fast")] == ["100", "100", "0.5", "fast"]
    assert placeholders("mpirun -np {p} ./app {n} --seed={rep}") == {"p", "n", "rep"}


def test_cause7_an_axis_count_is_read_as_typed_and_bounded() -> None:
    """Issue 17, cause 7: ``1:1e12:1e12`` was refused as a count that is not a positive integer (it is
    one: 10^12, too many values); ``1e1`` values are ten."""
    assert parse_values("1:10:1e1", "n") == list(range(1, 11))
    with pytest.raises(DataError, match=r"^parameter 'n': '1:1e12:1e12' gives 1e\+12 values, more than the "
                                        r"100000 an axis may have$"):
        parse_values("1:1e12:1e12", "n")
    with pytest.raises(DataError, match="count '2.5' in '1:10:2.5' must be a positive integer"):
        parse_values("1:10:2.5", "n")


def test_cause7_a_step_below_the_precision_of_the_range_is_refused_not_repeated_forever() -> None:
    """Issue 17, cause 7 ("never hang"): ``1e20:1e20:+1`` added 1 to 1e20 forever (the sum is 1e20 again);
    values are now counted first and computed by index."""
    with pytest.raises(DataError, match=r"^parameter 'n': the step of '1e20:1e20:\+1' is below the precision "
                                        r"of its numbers$"):
        parse_values("1e20:1e20:+1", "n")
    assert parse_values("0:1:+0.1", "x") == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert parse_values("3:3:+2", "n") == [3] and parse_values("1:1000:*10", "n") == [1, 10, 100, 1000]
    with pytest.raises(DataError, match="gives inf values"):
        parse_values("-1e308:1e308:+1e300", "n")


@pytest.mark.parametrize("spec", ["nan", "inf,1", "1,-inf", "NaN", "Infinity", "1e999", "1,2,-1E999"])
def test_a_list_item_that_is_a_number_but_not_finite_is_refused_like_the_range_form(spec: str) -> None:
    """``--n nan`` or ``--n inf,1`` gave a grid with n = nan (the range ``1:nan:3`` was refused): a list
    item that reads as a number but is not finite is the same one-line error; names stay names."""
    bad = next(s for s in spec.split(",") if s not in ("1", "2"))
    with pytest.raises(DataError, match=rf"^parameter 'n': '{bad}' is not finite$"):
        parse_values(spec, "n")
    assert parse_values("fast,slow,nano,information", "mode") == ["fast", "slow", "nano", "information"]
    assert parse_values("1,fast,2.5", "mode") == [1, "fast", 2.5]


def test_an_axis_given_in_python_with_a_value_that_is_not_finite_is_refused() -> None:
    with pytest.raises(DataError, match=r"^parameter 'n': 'nan' is not finite$"):
        next(expand_grid({"n": [1, float("nan")]}))
    with pytest.raises(DataError, match=r"^parameter 'p': '-inf' is not finite$"):
        next(expand_grid({"n": [1], "p": [2, -math.inf]}))
    assert list(expand_grid({"flag": [True], "mode": ["nan-free"]})) == [{"flag": True, "mode": "nan-free"}]
