"""Text for a terminal: lines of at most :data:`WIDTH` columns (``--wide``: no limit), wrapped formulas,
tables that fit, and status lines on standard error only when it is a terminal."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # numpy and pandas: imported by the tables only
    import numpy as np
    import pandas as pd

__all__ = ["WIDTH", "wrap", "fit_lines", "shorten", "table", "interactive", "Status", "status"]

#: the width every command's text keeps to unless ``--wide`` (None: no limit)
WIDTH = 80


#: a group in parentheses of at most this many characters is not broken at its spaces (a formula's
#: ``min(1, p - 1)``, ``(2^ceiling(log2(p)) - 1)``); a longer one, a remark in prose, is
SHORT_GROUP = 24
#: stands for a space that is not a break point while :func:`wrap` wraps (a private-use character)
_KEPT_SPACE = "\ue000"


def _keep_short_groups(text: str) -> str:
    """``text`` with the spaces inside every parenthesised group of at most :data:`SHORT_GROUP`
    characters replaced by :data:`_KEPT_SPACE`."""
    chars, opened = list(text), []
    for i, c in enumerate(text):
        if c == "(":
            opened.append(i)
        elif c == ")" and opened:
            start = opened.pop()
            if i - start + 1 <= SHORT_GROUP:
                chars[start:i + 1] = [_KEPT_SPACE if ch == " " else ch for ch in chars[start:i + 1]]
    return "".join(chars)


def wrap(text: str, width: int | None, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``indent + text`` on lines of at most ``width`` columns, broken at spaces only, and not inside a
    short group in parentheses (:data:`SHORT_GROUP`): a formula's terms and calls stay whole;
    ``subsequent`` indents the continuation lines (default: ``indent`` and two spaces).

    Examples
    --------
    >>> wrap("T = 1.5*n + 2.0*p + 3.0", 12)
    ['T = 1.5*n +', '  2.0*p +', '  3.0']
    >>> wrap("T = 2.5*min(1, p - 1) + 3.0", 22)
    ['T = 2.5*min(1, p - 1)', '  + 3.0']
    >>> wrap("T = 1.5*n", None)
    ['T = 1.5*n']
    """
    if width is None or len(indent) + len(text) <= width:
        return [indent + text]
    rest = indent + "  " if subsequent is None else subsequent
    kept = _KEPT_SPACE in text  # the text's own private-use character is left as it is
    lines = textwrap.wrap(text if kept else _keep_short_groups(text), width, initial_indent=indent,
                          subsequent_indent=rest, break_long_words=False, break_on_hyphens=False) or [indent]
    return lines if kept else [line.replace(_KEPT_SPACE, " ") for line in lines]


def fit_lines(lines: Iterable[str], width: int | None) -> list[str]:
    """Each of ``lines`` wrapped to ``width`` columns, its continuation indented four spaces more than
    the line itself.

    Examples
    --------
    >>> fit_lines(["  new leader: T = 1.5*n + 2.5*p"], 24)
    ['  new leader: T = 1.5*n', '      + 2.5*p']
    """
    out = []
    for line in lines:
        text = line.lstrip(" ")
        indent = line[:len(line) - len(text)]
        out += wrap(text, width, indent, indent + "    ")
    return out


def shorten(text: str, width: int | None) -> str:
    """``text`` cut in the middle to ``width`` columns (``...`` marks the cut); whole when it fits.

    Examples
    --------
    >>> shorten("main->solve->inner [time]", 16)
    'main->s...[time]'
    """
    if width is None or len(text) <= width:
        return text
    head = (width - 3 + 1) // 2
    return text[:head] + "..." + text[len(text) - (width - 3 - head):]


def table(frame: "pd.DataFrame", width: int | None, below: Iterable[str] = (),
          float_format: Callable[[float], str] | None = None) -> str:
    """``frame`` as text without its index: each column of ``below`` (long text such as a formula) on
    wrapped lines under its row; the other columns side by side, cut into blocks of columns where they
    would be wider than ``width`` (pandas' ``line_width``)."""
    if not hasattr(frame, "drop"):  # automodel.data.rows.Rows: no pandas
        return plain_table(frame, width)
    import pandas as pd

    below = [c for c in below if c in frame.columns]
    head = frame.drop(columns=below)
    with pd.option_context("display.max_rows", None, "display.max_colwidth", None, "display.width", None):
        text = head.to_string(index=False, float_format=float_format,
                              line_width=None if below else width)
    if not below:
        return text
    lines = text.splitlines()
    out = lines[:1]
    for line, row in zip(lines[1:], frame[below].itertuples(index=False)):
        out.append(line)
        for value in row:
            out += wrap(str(value), width, "      ", "        ")
    return "\n".join(out)


#: a number with a decimal point and no exponent (pandas trims the trailing zeros of these)
DECIMAL = re.compile(r"^\s*[+-]?[0-9]+\.[0-9]*$")
#: digits after the point (pandas' ``display.precision``)
PRECISION = 6


def float_cells(values: np.ndarray) -> list[str]:
    """A float column as pandas' ``to_string`` shows it: six decimals with the trailing zeros every value
    shares trimmed, or six significant decimals in exponent form when a value would show as 0 or a large
    one makes the column too wide; ``NaN`` for a missing value."""
    def formatted(spec: str) -> list[str]:
        cells = ["NaN" if v != v else format(v, spec) for v in values.tolist()]
        decimal = [DECIMAL.match(c) is not None for c in cells]
        while any(decimal) and all(c.endswith("0") for c, d in zip(cells, decimal) if d):
            cells = [c[:-1] if d else c for c, d in zip(cells, decimal)]
        return [c + "0" if d and c.endswith(".") else c for c, d in zip(cells, decimal)]

    import numpy as np

    cells = formatted(f".{PRECISION}f")
    size = np.abs(values)
    with np.errstate(invalid="ignore"):
        small = bool(((size < 10.0 ** -PRECISION) & (size > 0)).any())
        large = bool((size > 1e6).any())
    if small or (large and max(map(len, cells), default=0) > PRECISION + 6):
        cells = formatted(f".{PRECISION}e")
    return cells


def column_cells(values: Any) -> tuple[list[str], bool]:
    """The cells of one column of :class:`automodel.data.rows.Rows` as text, and whether the column is
    numeric (pandas then puts a space before its name)."""
    import numpy as np

    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return float_cells(values), True
    if isinstance(values, np.ndarray):
        return [str(v) for v in values.tolist()], values.dtype.kind in "iub"
    escapes = str.maketrans({"\t": "\\t", "\r": "\\r", "\n": "\\n"})
    return ["NaN" if isinstance(v, float) and v != v else str(v).translate(escapes) for v in values], False


def plain_table(rows: Any, width: int | None) -> str:
    """``rows`` (:class:`automodel.data.rows.Rows`) as :func:`table` shows a DataFrame of the same cells,
    without pandas: right-aligned columns one space apart, cut into blocks of columns (each line but the
    last block's ending in ``\\``) where they would be wider than ``width``."""
    columns = []
    for name in rows.columns:
        cells, numeric = column_cells(rows[name])
        head = (" " if numeric else "") + str(name)
        size = max([len(head), *map(len, cells)])
        columns.append([head.rjust(size), *(c.rjust(size) for c in cells)])
    if width is None:
        return "\n".join(" ".join(line) for line in zip(*columns))
    blocks, start, used = [], 0, 0
    for i, column in enumerate(columns):  # pandas' _binify: where a block of columns ends
        used += len(column[0]) + 1
        if i > 0 and used + (1 if i == len(columns) - 1 else 2) > width:
            blocks.append(i)
            used = len(column[0]) + 1
    blocks.append(len(columns))
    text, start = [], 0
    for k, end in enumerate(blocks):
        block = columns[start:end]
        if len(blocks) > 1:
            block = block + [[" \\"] + ["  "] * len(rows) if k < len(blocks) - 1 else [" "] * (len(rows) + 1)]
        text.append("\n".join(" ".join(line) for line in zip(*block)))
        start = end
    return "\n\n".join(text)


def interactive(stream: Any = None) -> bool:
    """Whether ``stream`` (default: standard error) is a terminal: progress bars and status lines go
    there only then, never into a redirected file or a pipe."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Status:
    """One line on standard error, rewritten in place (``\\r`` and erase-to-end-of-line) while work
    runs, erased when it ends; nothing at all when ``enabled`` is false.

    Examples
    --------
    >>> with status("reading runs.csv", enabled=False) as say:
    ...     say("grouping 6000 kernels")
    """

    def __init__(self, enabled: bool, stream: Any = None) -> None:
        self.enabled = enabled
        self._stream = sys.stderr if stream is None else stream

    def __call__(self, text: str) -> None:
        """Show ``text`` (cut to :data:`WIDTH`) in place of the line shown before."""
        if self.enabled:
            self._stream.write(f"\r{shorten(text, WIDTH - 1)}\x1b[K")
            self._stream.flush()

    def clear(self) -> None:
        """Erase the line (a progress bar or the answer takes its place)."""
        if self.enabled:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


@contextmanager
def status(text: str, enabled: bool | None = None) -> Iterator[Status]:
    """A :class:`Status` showing ``text`` at once, erased when the block ends (also on an error);
    ``enabled`` None: when standard error is a terminal (:func:`interactive`)."""
    line = Status(interactive() if enabled is None else enabled)
    line(text)
    try:
        yield line
    finally:
        line.clear()
