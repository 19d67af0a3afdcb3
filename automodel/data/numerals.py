"""How a number is written as text: the one reading of a number in a cell of a table read without pandas,
in a value given on a command line or in the environment, in a step of a run grid, in an Extra-P text file.

Python's ``float`` and ``int`` read more than a table means by a number: Unicode digits (``'١٠٠'``,
full-width ``'６４'``) and underscores (``'1_0'``), which pandas' CSV parser does not take. Here only ASCII
digits count. No numpy: the command line reads its options with these before anything else is imported.
"""

from __future__ import annotations

import math
import re

__all__ = ["NUMBER", "WHOLE", "as_float", "is_number", "number_text"]

#: a number as pandas' CSV parser reads one (and so :func:`automodel.data.rows.read_rows`): ASCII digits, a
#: point, an exponent, ``inf``
NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)\s*", re.IGNORECASE | re.ASCII)
#: a whole number: ASCII digits with an optional sign
WHOLE = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def as_float(value: object) -> float:
    """``float(value)`` that never raises: ``inf`` (with its sign) for an integer beyond the range of
    floats (``10**400``), NaN for what is not a number."""
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]
    except (TypeError, ValueError):
        return math.nan


def is_number(text: str) -> bool:
    """Whether ``text`` is written as a number: :data:`NUMBER`, or ``nan`` (a number, if not a finite one:
    what to say of it is the reader's, such as "must be a finite number").

    >>> [is_number(t) for t in ("1e3", " nan", "fast", "\uff16\uff14")]
    [True, True, False, False]
    """
    return bool(NUMBER.fullmatch(text)) or text.strip().lower() == "nan"


def number_text(text: str) -> float:
    """``text`` as a number where it is written as one (:func:`is_number`), else NaN.

    Examples
    --------
    >>> number_text(" 1e3 "), number_text("-inf"), number_text("\\u0661\\u0660\\u0660"), number_text("1_0")
    (1000.0, -inf, nan, nan)
    """
    return as_float(text) if is_number(text) else math.nan
