"""Registry of the seeded templates: classic models of the field that enter the same leaderboard.

Each module under ``automodel/templates/`` exposes ``TEMPLATE`` (or ``TEMPLATES``), objects that
satisfy :class:`automodel.model.Template`; this registry only reads them, by name. Model files find a
template's loader here (:mod:`automodel.model_file`).
"""

from __future__ import annotations

from importlib import import_module

from automodel.model import COSTS, Template

__all__ = ["TEMPLATES", "MODULES", "describe", "by_cost"]

#: the template modules, in leaderboard order
MODULES: tuple[str, ...] = ("baselines", "kohashi", "rational", "hockney", "fim_cal", "fim_com")


def _collect() -> dict[str, Template]:
    found: dict[str, Template] = {}
    for module in MODULES:
        mod = import_module(f"automodel.templates.{module}")
        for template in getattr(mod, "TEMPLATES", None) or [mod.TEMPLATE]:
            if not isinstance(template, Template) or template.cost not in COSTS:
                raise TypeError(f"automodel.templates.{module}: {template!r} does not satisfy the Template "
                                f"protocol with a cost in {list(COSTS)}")
            found[template.name] = template
    return found


#: template name -> template
TEMPLATES: dict[str, Template] = _collect()


def by_cost(cost: str) -> tuple[str, ...]:
    """Names of the registered templates of cost class ``cost`` (a key of :data:`automodel.model.COSTS`)."""
    return tuple(name for name, t in TEMPLATES.items() if t.cost == cost)


def describe() -> list[dict[str, str]]:
    """Name, title, required columns, source and cost class of every template."""
    return [{"name": t.name, "title": t.title, "requires": ", ".join(t.requires), "source": t.source,
             "cost": t.cost} for t in TEMPLATES.values()]
