"""Figures inline: the plots of :mod:`automodel.output.plot` drawn as SVG text to put in a page."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["inline_svg"]

_PREAMBLE = re.compile(r"^.*?(?=<svg\b)", re.S)


def inline_svg(draw: Callable[[Path], object]) -> str:
    """The ``<svg>`` element that ``draw(path)`` writes to ``path`` (a temporary ``.svg`` file), without
    its XML declaration and DOCTYPE, ready to sit in an HTML page. matplotlib writes text as paths,
    so the figure needs no font, and escapes what it writes."""
    with tempfile.TemporaryDirectory(prefix="automodel-report-") as folder:
        path = Path(folder) / "figure.svg"
        draw(path)
        return _PREAMBLE.sub("", path.read_text(encoding="utf-8"), count=1)
