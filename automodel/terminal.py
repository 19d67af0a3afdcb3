"""Text for a terminal: lines of at most :data:`WIDTH` columns (``--wide``: no limit), wrapped formulas,
tables that fit, and status lines on standard error only when it is a terminal."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WIDTH", "wrap", "fit_lines", "shorten", "table", "interactive", "Status", "status"]

#: the width every command's text keeps to unless ``--wide`` (None: no limit)
WIDTH = 80


def wrap(text: str, width: int | None, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``indent + text`` on lines of at most ``width`` columns, broken at spaces only (a formula's terms
    stay whole); ``subsequent`` indents the continuation lines (default: ``indent`` and two spaces).

    Examples
    --------
    >>> wrap("T = 1.5*n + 2.0*p + 3.0", 12)
    ['T = 1.5*n +', '  2.0*p +', '  3.0']
    >>> wrap("T = 1.5*n", None)
    ['T = 1.5*n']
    """
    if width is None or len(indent) + len(text) <= width:
        return [indent + text]
    rest = indent + "  " if subsequent is None else subsequent
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [indent]


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
