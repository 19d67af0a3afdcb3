"""The experiment grid: parameter axes from their specifications, their Cartesian product, and
command templates turned into argument vectors for one grid point.

An axis is written as a range (``1000:8000:8``, ``10:1000:3:log``, ``1:256:*2``, ``0:1:+0.25``)
or a list (``1,2,4,8``). A command template such as ``'mpirun -np {p} ./app {n}'`` is split
like a shell would *before* the values are inserted, so a value is always one whole argument
and nothing in it is ever interpreted.

Examples
--------
>>> axes = {"n": parse_values("100:400:4", "n"), "p": parse_values("1,2", "p")}
>>> [tuple(point.values()) for point in expand_grid(axes)][:3]
[(100, 1), (100, 2), (200, 1)]
>>> substitute("./app {n} --procs={p}", {"n": 100, "p": 2})
['./app', '100', '--procs=2']
"""

from __future__ import annotations

import itertools
import math
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence

from automodel.data.numerals import is_number, number_text
from automodel.errors import DataError

__all__ = ["BUILTIN_PLACEHOLDERS", "expand_grid", "format_value", "parse_values", "placeholders", "substitute"]

#: Placeholders every campaign provides besides its axes: repetition and run index.
BUILTIN_PLACEHOLDERS = ("rep", "index")

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _number(text: str, name: str) -> int | float:
    if not is_number(text):
        raise DataError(f"parameter '{name}': '{text}' is not a number (expected e.g. 1000:8000:8)")
    value = number_text(text)
    if not math.isfinite(value):
        raise DataError(f"parameter '{name}': '{text}' is not finite")
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _tidy(values: list[float], integral: bool) -> list[int | float]:
    if integral:
        out: list[int | float] = []
        for v in values:
            r = int(round(v))
            if not out or out[-1] != r:
                out.append(r)
        return out
    return [float(f"{v:.12g}") for v in values]


#: most values one axis of a grid may have (a typo such as ``1:1e12:1e12`` is refused, not expanded)
MAX_AXIS_VALUES = 100_000


def _check_count(count: float, name: str, spec: str) -> None:
    if count > MAX_AXIS_VALUES:
        raise DataError(f"parameter '{name}': '{spec}' gives {count:.3g} values, more than the "
                        f"{MAX_AXIS_VALUES} an axis may have")


def parse_values(spec: str, name: str = "value") -> list[int | float | str]:
    """Expand one axis specification into its list of values.

    Parameters
    ----------
    spec : str
        ``a:b:k`` -- ``k`` values linearly spaced from ``a`` to ``b`` inclusive;
        ``a:b:k:log`` -- ``k`` values geometrically spaced; ``a:b:*f`` -- ``a, a*f, a*f^2, ...``
        up to ``b``; ``a:b:+s`` -- ``a, a+s, ...`` up to ``b``; ``v1,v2,...`` -- an explicit list
        (numbers or strings); a single value. Ranges whose ends are integers give integers
        (rounded, duplicates removed).
    name : str
        The parameter name, used in error messages.

    Returns
    -------
    list
        The values in order.

    Raises
    ------
    DataError
        If the specification is empty or malformed, or a number in it is not finite (``nan``,
        ``inf``, ``1e999``: in a list too, where other text is kept as a name).

    Examples
    --------
    >>> parse_values("1:256:*2", "p")
    [1, 2, 4, 8, 16, 32, 64, 128, 256]
    >>> parse_values("10:1000:3:log", "n")
    [10, 100, 1000]
    """
    spec = spec.strip()
    if not spec:
        raise DataError(f"parameter '{name}': empty value specification")
    if ":" not in spec:
        items = [s.strip() for s in spec.split(",")]
        if any(not s for s in items):
            raise DataError(f"parameter '{name}': empty item in list '{spec}'")
        out: list[int | float | str] = []
        for s in items:
            if is_number(s):
                out.append(_number(s, name))  # a number, refused when not finite (nan, inf, 1e999)
            else:
                out.append(s)  # a name such as 'fast' (or '١٠٠': digits a table does not read as a number)
        return out
    parts = spec.split(":")
    if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] not in ("log", "lin")):
        raise DataError(f"parameter '{name}': '{spec}' is not a range (expected a:b:k, a:b:k:log, a:b:*f or a:b:+s)")
    lo, hi = _number(parts[0], name), _number(parts[1], name)
    integral = isinstance(lo, int) and isinstance(hi, int)
    step = parts[2]
    if step.startswith("*") or step.startswith("+"):
        if len(parts) == 4:
            raise DataError(f"parameter '{name}': '{spec}' mixes a step with a spacing")
        s = float(_number(step[1:], name))
        geometric = step.startswith("*")
        if (geometric and (s <= 1 or lo <= 0)) or (not geometric and s <= 0) or hi < lo:
            raise DataError(f"parameter '{name}': '{spec}' does not go from a up to b (need b >= a, factor > 1, step > 0)")
        if not geometric and (lo + s == lo or hi + s == hi):
            raise DataError(f"parameter '{name}': the step of '{spec}' is below the precision of its numbers")
        top = hi + 1e-12 * abs(hi)  # b itself despite rounding
        count = (math.log(top / lo) / math.log(s) if geometric else (top - lo) / s) + 1
        _check_count(count if math.isinf(count) else math.floor(count), name, spec)
        values = [lo * s ** i if geometric else lo + s * i for i in range(math.floor(count))]
        return list(_tidy(values, integral and (geometric or float(s).is_integer())))
    number = _number(step, name)
    if not float(number).is_integer() or number < 1:
        raise DataError(f"parameter '{name}': count '{step}' in '{spec}' must be a positive integer")
    _check_count(number, name, spec)
    count = int(number)
    if count == 1:
        return [lo]
    if len(parts) == 4 and parts[3] == "log":
        if lo <= 0 or hi <= 0:
            raise DataError(f"parameter '{name}': geometric range '{spec}' needs positive ends")
        ratio = (hi / lo) ** (1.0 / (count - 1))
        values = [lo * ratio**i for i in range(count)]
    else:
        values = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
    return list(_tidy(values, integral))


def expand_grid(axes: Mapping[str, Sequence[object]]) -> Iterator[dict[str, object]]:
    """The Cartesian product of the axes, first axis varying slowest, one point at a time.

    Parameters
    ----------
    axes : mapping of str to sequence
        Parameter name -> its values, in the order the columns should appear.

    Yields
    ------
    dict
        One grid point (the axes are checked before the first).
    """
    for name, values in axes.items():
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise DataError(f"parameter name '{name}' is not an identifier (letters, digits, underscore)")
        if name in BUILTIN_PLACEHOLDERS:
            raise DataError(f"parameter name '{name}' is reserved (built-in placeholder)")
        if len(values) == 0:
            raise DataError(f"parameter '{name}' has no values")
        for value in values:  # an axis given in Python, not parsed by parse_values
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isfinite(value):
                raise DataError(f"parameter '{name}': '{value}' is not finite")
    names = list(axes)
    return (dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names)))


def format_value(value: object) -> str:
    """How a parameter value is written on the command line and in the CSV (``100``, ``0.5``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def substitute(template: str | Sequence[str], point: Mapping[str, object]) -> list[str]:
    """Turn a command template into an argument vector for ``point``; no shell is involved.

    The template is split with :func:`shlex.split` *before* substitution, so a value is
    inserted literally into its argument: spaces, ``;`` or ``$(...)`` in a value are never
    interpreted.

    Raises
    ------
    DataError
        If the template names a placeholder that ``point`` does not define, or is empty.
    """
    try:
        argv = shlex.split(template) if isinstance(template, str) else list(template)
    except ValueError as exc:
        raise DataError(f"command template: cannot split {template!r} ({exc})") from None
    if not argv:
        raise DataError("command template is empty (expected e.g. 'mpirun -np {p} ./app {n}')")

    def repl(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in point:
            known = ", ".join("{" + k + "}" for k in point)
            raise DataError(f"command template: unknown placeholder {{{key}}} (known: {known})")
        return format_value(point[key])

    return [_PLACEHOLDER.sub(repl, arg) for arg in argv]


def placeholders(template: str) -> set[str]:
    """The placeholder names a command template uses."""
    return set(_PLACEHOLDER.findall(template))
