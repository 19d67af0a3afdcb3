"""Registry of the seeded templates: classic models of the field that enter the same leaderboard.

Each module under ``automodel/templates/`` exposes ``TEMPLATE`` (or ``TEMPLATES``); this registry
collects them by name and registers their ``from_dict`` loaders for model files.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from automodel.model import TEMPLATE_LOADERS

__all__ = ["TEMPLATES", "describe"]

_MODULES: tuple[str, ...] = ("baselines", "kohashi", "rational", "hockney", "fim_cal", "fim_com")

TEMPLATES: dict[str, Any] = {}
for _name in _MODULES:
    _mod = import_module(f"automodel.templates.{_name}")
    for _t in getattr(_mod, "TEMPLATES", None) or [_mod.TEMPLATE]:
        TEMPLATES[_t.name] = _t


TEMPLATE_LOADERS.update({name: t.from_dict for name, t in TEMPLATES.items()})


def describe() -> list[dict[str, str]]:
    """Name, title, required columns and source of every template."""
    return [{"name": t.name, "title": t.title, "requires": ", ".join(t.requires), "source": t.source}
            for t in TEMPLATES.values()]
