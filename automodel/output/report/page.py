"""The page around a report: inline styles and scripts, safe JSON, escaped tables.

Everything a report shows goes through :func:`document` (the page, with a Content-Security-Policy that
allows nothing but what is inline), :func:`json_script` (data for the page's scripts, safe inside
``<script>``) and :func:`table` (an HTML table whose cells are escaped and carry their sort key).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from html import escape
from importlib.resources import files
from typing import Any

__all__ = ["document", "json_script", "table", "cell", "number", "section", "asset", "POLICY"]

#: the page may load nothing: styles, scripts and images are inline (``data:`` for images)
POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
          "font-src data:")
#: what ``json_script`` writes as ``\\u`` escapes, so that no text of the data closes the script element
_UNSAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def asset(name: str) -> str:
    """The text of ``automodel/output/report/static/<name>`` (a style sheet or a script shipped with the package)."""
    return (files("automodel.output.report") / "static" / name).read_text(encoding="utf-8")


def number(value: Any, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits (``general`` format); empty for None or NaN.

    Examples
    --------
    >>> number(0.000123456), number(float("nan")), number(12)
    ('0.0001235', '', '12')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (int, float)):
        return f"{value:.{digits}g}"
    return str(value)


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it: NaN and infinities as None, numpy scalars as Python numbers."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_script(element_id: str, data: Any) -> str:
    """``data`` as compact JSON in a ``<script type="application/json">`` element.

    ``<``, ``>``, ``&`` and the two JavaScript line separators are written as ``\\u`` escapes, so no
    string of the data (a kernel named ``</script><script>alert(1)</script>``) can end the element;
    the page reads it back with ``JSON.parse(element.textContent)``.

    Examples
    --------
    >>> json_script("d", {"k": "</script>"})
    '<script type="application/json" id="d">{"k":"\\\\u003c/script\\\\u003e"}</script>'
    """
    text = json.dumps(_plain(data), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return f'<script type="application/json" id="{escape(element_id)}">{text.translate(_UNSAFE)}</script>'


def cell(value: Any, digits: int = 4, tag: str = "td", classes: str = "") -> str:
    """One table cell: the value's text, escaped, with its sort key (``data-v``) when it is a number."""
    key = ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        key = f' data-v="{value!r}"' if math.isfinite(value) else ' data-v="Infinity"'
    css = f' class="{classes}"' if classes else ""
    return f"<{tag}{css}{key}>{escape(number(value, digits))}</{tag}>"


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], row_classes: Sequence[str] | None = None,
          sortable: bool = True, table_id: str = "") -> str:
    """An HTML table of ``rows`` under ``columns`` (escaped); ``sortable``: a click on a heading sorts
    the rows by that column (the page's ``sort.js``), numbers by value."""
    head = "".join(f'<th title="sort by {escape(c)}">{escape(c)}</th>' if sortable else f"<th>{escape(c)}</th>"
                   for c in columns)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        body.append(f"<tr{css}>" + "".join(cell(v) for v in row) + "</tr>")
    attrs = (f' id="{escape(table_id)}"' if table_id else "") + (' class="sortable"' if sortable else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def section(title: str, body: str, section_id: str = "") -> str:
    """A titled section of the page (``title`` escaped, ``body`` already HTML)."""
    anchor = f' id="{escape(section_id)}"' if section_id else ""
    return f"<section{anchor}><h2>{escape(title)}</h2>{body}</section>"


def document(title: str, body: str, scripts: Sequence[str] = ("sort.js",), data: str = "") -> str:
    """The whole page: ``title`` (escaped), ``body`` (HTML), the data elements (``data``, from
    :func:`json_script`) and the shipped ``scripts`` inline, under :data:`POLICY`."""
    code = "\n".join(asset(name) for name in scripts)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{asset('report.css')}</style></head>"
            f"<body>{body}{data}<script>{code}</script></body></html>\n")
