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

__all__ = ["TEMPLATES", "MODULES", "MODULE_OF", "PAPERS", "template", "describe", "by_cost", "cited"]

#: the papers the templates' ``source`` names by the file of the project's notes on them, as a reader who
#: has not those files finds them
PAPERS: dict[str, str] = {
    "bayesian-kohashi-2022.txt": "Kohashi et al. 2022, Performance prediction of massively parallel "
                                 "computation by Bayesian inference",
    "rational-polynomial-yagnik-icpp2006.txt": "Yagnik, Sanjay and Vadhiyar, ICPP 2006, Performance "
                                               "Modeling based on Multidimensional Surface Learning",
    "fim-bhimani-2019.txt": "Bhimani et al. 2019, New Performance Modeling Methods for Parallel Data "
                            "Processing Applications",
    "contention-hockney-singh.txt": "Singh (IIT Kanpur), Contention-Aware Performance Prediction of "
                                    "Parallel Programs",
}

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


def cited(source: str) -> str:
    """``source`` with each file of notes on a paper replaced by the paper (:data:`PAPERS`): ``automodel
    templates`` sent a newcomer to ``bayesian-kohashi-2022.txt``, a file no installation has.

    >>> cited("bayesian-kohashi-2022.txt, sec. 2.1")
    'Kohashi et al. 2022, Performance prediction of massively parallel computation by Bayesian inference, sec. 2.1'
    """
    for name, paper in PAPERS.items():
        source = source.replace(name, paper)
    return source


def describe() -> list[dict[str, str]]:
    """Name, title, required columns, source (the papers cited, :func:`cited`) and cost class of every
    template."""
    from automodel.templates import TEMPLATES

    return [{"name": t.name, "title": t.title, "requires": ", ".join(t.requires), "source": cited(t.source),
             "cost": t.cost} for t in TEMPLATES.values()]
