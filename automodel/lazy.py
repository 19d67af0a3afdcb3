"""Names of a package imported on first use (PEP 562), so that importing it stays cheap."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(namespace: MutableMapping[str, Any], modules: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names ``modules`` (name -> the
    module that defines it) are imported on first use and then kept in its ``namespace``
    (``globals()``)."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(import_module(module), name)
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(modules))

    return __getattr__, __dir__
