"""Exports of a fitted model: its formula in every format, a Python or C function, its JSON.

The formulas come from the printers of :mod:`automodel.printing` (``text`` is ``Model.formula``, the
string every other view shows); this module adds what needs the model around them (the function
signature, the default load of a dedicated machine, the JSON file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from automodel.printing import to_c, to_latex, to_python

if TYPE_CHECKING:
    from automodel.model import Model

__all__ = ["FORMATS", "export", "python_function", "c_function"]


def _signature(model: "Model") -> str:
    args = []
    for q in model.params:
        args.append(f"{q}=1.0" if q in ("cpu", "bw") else q)
    return ", ".join(args)


def python_function(model: "Model") -> str:
    """Source of a self-contained Python function ``predicted_time(...)`` (standard library only)."""
    body = to_python(model.expr)
    return (f"import math\n\n\ndef predicted_time({_signature(model)}):\n"
            f"    \"\"\"Predicted run time in seconds (automodel, space {model.space!r}).\"\"\"\n"
            f"    return {body}\n")


def c_function(model: "Model") -> str:
    """Source of a C99 function ``double predicted_time(...)`` (``<math.h>`` only)."""
    args = ", ".join(f"double {q}" for q in model.params)
    return (f"#include <math.h>\n\n/* Predicted run time in seconds (automodel). */\n"
            f"double predicted_time({args})\n{{\n    return {to_c(model.expr)};\n}}\n")


FORMATS: dict[str, Callable[["Model"], str]] = {
    "text": lambda m: m.formula,
    "latex": lambda m: to_latex(m.expr),
    "python": python_function,
    "c": c_function,
    "json": lambda m: m.to_json(),
}


def export(model: "Model", fmt: str) -> str:
    """The model in format ``fmt`` (one of :data:`FORMATS`)."""
    try:
        return FORMATS[fmt](model)
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
