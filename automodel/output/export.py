"""Exports of a fitted model, one registry of formats: its formula, a Python or C function, its JSON.

:data:`FORMATS` is the one list of export formats: ``automodel show --format`` reads its choices and
help from it, :func:`export` renders through it. Each :class:`ExportFormat` carries its name, a
one-line description and how it renders a model; a new format is one :class:`ExportFormat` and one
:func:`register` call.

The formulas come from the printers of :mod:`automodel.text.printing` (``text`` is ``Model.formula``, the
string every other view shows), imported when a format renders: the command line builds its parser
from this module without sympy, numpy or pandas. This module adds what needs the model around them
(the function signature, the default load of a dedicated machine, the JSON file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from automodel.names import code_names
from automodel.options import TIME_UNITS
from automodel.terminal import wrap

if TYPE_CHECKING:
    from automodel.model.core import Model

__all__ = ["ExportFormat", "FORMATS", "register", "export", "python_function", "c_function"]


def _comment(text: str) -> str:
    """``text`` as the inside of a code comment: :func:`ascii` (one line of printable ASCII, quoted),
    with no ``*/`` to end a C comment; whatever a model file holds stays text."""
    return ascii(text).replace("*/", "*\\/")


def _docstring(text: str) -> str:
    """``text`` as the inside of a Python docstring (``\"\"\"...\"\"\"``): :func:`ascii` text without its
    quotes, each ``"`` escaped, so no text of a model file ends the string (a unit ``\"\"\";exec(input())#``
    was code of the function)."""
    return ascii(text)[1:-1].replace('"', '\\"')


def _renamed(model: "Model", names: dict[str, str], start: str, end: str = "") -> str:
    """One comment line per parameter whose name in the code is not its own."""
    return "".join(f"{start}parameter {_comment(q)} is {names[q]} here{end}\n" for q in model.params
                   if names[q] != q)


def _signature(model: "Model", names: dict[str, str]) -> str:
    """The Python arguments: ``cpu`` and ``bw`` default to 1.0 (a dedicated machine) where every later
    argument has a default too."""
    args = []
    defaults = True
    for q in reversed(model.params):
        defaults = defaults and q in ("cpu", "bw")
        args.append(f"{names[q]}=1.0" if defaults else names[q])
    return ", ".join(reversed(args))


def _what(model: "Model", quoted: Callable[[str], str]) -> str:
    """What the function returns: ``run time in us`` for a time, ``value in misses`` for a counter, the unit
    ``quoted`` for where it is written (:func:`_docstring`, or the inside of :func:`_comment`)."""
    unit = {"s": "seconds"}.get(model.unit, model.unit)
    return f"{'run time' if model.unit in TIME_UNITS else 'value'} in {quoted(unit)}"


def _body(text: str, width: int | None, open_: str = "", close: str = "") -> str:
    """``return text`` at an indent of four, wrapped between terms at an indent of eight when wider
    than ``width`` (inside ``open_`` and ``close``: Python's parentheses)."""
    if width is None or len(text) + 11 <= width:
        return f"    return {text}"
    return "\n".join([f"    return {open_}".rstrip(), *wrap(text, width, "        ", "        "),
                      *([f"    {close}"] if close else [])])


def python_function(model: "Model", width: int | None = None) -> str:
    """Source of a self-contained Python function ``predicted_time(...)`` (standard library only).

    Parameters whose names Python cannot hold as themselves (keywords, builtins, ``math``, names that
    NFKC changes) are renamed (:func:`automodel.names.code_names`), with a comment saying so; the space
    name is a comment of :func:`ascii` text. Nothing of the model file is written as code. ``width``:
    the expression wrapped between its terms, in parentheses, where it would be wider.
    """
    from automodel.text.printing import to_python

    names = code_names(model.params, "python")
    body = to_python(model.expr, names)
    return (f"import math\n\n\ndef predicted_time({_signature(model, names)}):\n"
            f"    \"\"\"Predicted {_what(model, _docstring)} (automodel).\"\"\"\n"
            f"    # space {_comment(model.space)}\n"
            f"{_renamed(model, names, '    # ')}"
            f"{_body(body, width, '(', ')')}\n")


def c_function(model: "Model", width: int | None = None) -> str:
    """Source of a C99 function ``double predicted_time(...)`` (``<math.h>`` only); parameters whose
    names C cannot hold (keywords, ``<math.h>`` names, names beyond ASCII) are renamed, with a comment;
    ``width``: the expression wrapped between its terms where it would be wider."""
    from automodel.text.printing import to_c

    names = code_names(model.params, "c")
    args = ", ".join(f"double {names[q]}" for q in model.params) or "void"
    return (f"#include <math.h>\n\n/* Predicted {_what(model, lambda unit: _comment(unit)[1:-1])} (automodel). */\n"
            f"{_renamed(model, names, '/* ', ' */')}"
            f"double predicted_time({args})\n{{\n{_body(to_c(model.expr, names), width)};\n}}\n")


def latex_formula(model: "Model", width: int | None = None) -> str:
    """The model's formula in LaTeX (:func:`automodel.text.printing.to_latex`), wrapped to ``width``."""
    from automodel.text.printing import to_latex

    return "\n".join(wrap(to_latex(model.expr), width))


@dataclass(frozen=True)
class ExportFormat:
    """An export format: its name (``show --format NAME``), one line for the help, and how it renders a
    model on lines of at most a width (None: no limit; JSON is data: one line)."""

    name: str
    description: str
    render: Callable[["Model", int | None], str]


#: export formats by name, in the order the help lists them
FORMATS: dict[str, ExportFormat] = {}


def register(fmt: ExportFormat) -> ExportFormat:
    """Add ``fmt`` to :data:`FORMATS` and return it; a name already taken is a :class:`ValueError`."""
    if fmt.name in FORMATS:
        raise ValueError(f"export format {fmt.name!r} is registered already")
    FORMATS[fmt.name] = fmt
    return fmt


for _fmt in (ExportFormat("text", "the formula as every view prints it", lambda m, width: "\n".join(wrap(m.formula, width))),
             ExportFormat("latex", "the formula in LaTeX", latex_formula),
             ExportFormat("python", "a self-contained Python function (standard library only)", python_function),
             ExportFormat("c", "a C99 function (math.h only)", c_function),
             ExportFormat("json", "the model file", lambda m, width: m.to_json())):
    register(_fmt)


def export(model: "Model", fmt: str, width: int | None = None) -> str:
    """The model in format ``fmt`` (one of :data:`FORMATS`), wrapped to ``width`` columns (None: no
    limit; the code of ``python`` and ``c`` wrapped between terms, inside the expression)."""
    try:
        render = FORMATS[fmt].render
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return render(model, width)
