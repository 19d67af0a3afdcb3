"""Registry of the seeded templates: classic models of the field that enter the same leaderboard.

Each module under ``automodel/templates/`` exposes ``TEMPLATE`` (or ``TEMPLATES``), objects that
satisfy :class:`automodel.templates.base.Template`; this registry only reads them, by name. Model files find a
template's loader here (:func:`template`), which imports that template's module alone: reading a model
file imports no other template (nor the scipy they fit with). :data:`TEMPLATES`, every template, is
collected on first use (PEP 562).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from automodel.templates.base import Template

__all__ = ["TEMPLATES", "MODULES", "MODULE_OF", "template", "describe", "by_cost"]

#: the template modules, in leaderboard order
MODULES: tuple[str, ...] = ("baselines", "kohashi", "rational", "hockney", "fim_cal", "fim_com")
#: template name -> its module under ``automodel/templates/``, in leaderboard order (the collected
#: registry must agree: tests/test_conformance.py)
MODULE_OF: dict[str, str] = {
    "prophesy": "baselines", "rbasp": "baselines", "amdahl": "baselines", "kohashi": "kohashi",
    "rational": "rational", "multivariate_type1": "rational", "multivariate_type2": "rational",
    "hockney": "hockney", "hockney_collective": "hockney", "fim_cal": "fim_cal", "fim_com": "fim_com"}


def _module_templates(module: str) -> list[Template]:
    """The templates of ``automodel.templates.<module>``, each checked against the protocol."""
    from automodel.templates.base import COSTS, Template

    mod = import_module(f"automodel.templates.{module}")
    found = getattr(mod, "TEMPLATES", None) or [mod.TEMPLATE]
    for t in found:
        if not isinstance(t, Template) or t.cost not in COSTS:
            raise TypeError(f"automodel.templates.{module}: {t!r} does not satisfy the Template "
                            f"protocol with a cost in {list(COSTS)}")
    return found


def _collect() -> dict[str, Template]:
    return {t.name: t for module in MODULES for t in _module_templates(module)}


def template(name: str) -> Template | None:
    """The template called ``name`` (its module imported, no other), or None when there is none."""
    module = MODULE_OF.get(name)
    return None if module is None else next((t for t in _module_templates(module) if t.name == name), None)


def __getattr__(name: str) -> Any:
    if name == "TEMPLATES":  # template name -> template, every module imported once
        value = globals()["TEMPLATES"] = _collect()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def by_cost(cost: str) -> tuple[str, ...]:
    """Names of the registered templates of cost class ``cost`` (a key of :data:`automodel.templates.base.COSTS`)."""
    from automodel.templates import TEMPLATES

    return tuple(name for name, t in TEMPLATES.items() if t.cost == cost)


def describe() -> list[dict[str, str]]:
    """Name, title, required columns, source and cost class of every template."""
    from automodel.templates import TEMPLATES

    return [{"name": t.name, "title": t.title, "requires": ", ".join(t.requires), "source": t.source,
             "cost": t.cost} for t in TEMPLATES.values()]
