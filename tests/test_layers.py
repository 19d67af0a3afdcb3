"""The package's import graph: data flows one way, no import cycle, every module imports on its own.

Every module of ``automodel`` is found with :mod:`pkgutil` and parsed with :mod:`ast`; every
``import automodel...`` and ``from automodel... import ...`` counts, at module level or inside a
function. The unit of ``automodel.x.y`` is ``x``; a unit may import only from its own layer or an
earlier one (:data:`LAYERS`). ``automodel/__init__.py`` is exempt: it only maps public names to the
modules that define them, lazily.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import automodel

#: The layers, earliest first; a unit may import from its own layer and the ones before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "names", "options", "files", "lazy", "terminal"),
    ("data",),
    ("solve",),  # the numbers only (least squares, metrics): below space, whose loader checks a metric name
    ("space",),
    ("text",),  # formula text: the search names its candidates with it, so it sits below the search
    ("search",),
    ("online",),  # the live pool re-ranks with the search's scoring and choice
    ("model",),
    ("templates",),  # a template is a Model (model.core)
    ("model_file", "fitting", "evaluation", "output"),  # model_file reads both kinds back
    ("kernels", "sklearn", "suggestion"),
    ("store", "runner"),
    ("cli", "__main__"),
)
LAYER_OF = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
#: Importing this module runs the command line (``python -m automodel``).
RUNS_ON_IMPORT = {"automodel.__main__"}


def walk(path: list[str], prefix: str) -> Iterator[tuple[str, Path]]:
    """``(module name, file)`` of every module under ``path``, packages as their ``__init__.py``.

    :func:`pkgutil.walk_packages` without its imports, so a module that fails to import still has its
    imports checked here (and fails :func:`test_every_module_imports`).
    """
    for info in pkgutil.iter_modules(path, prefix):
        where = Path(info.module_finder.path) / info.name.rpartition(".")[2]
        if info.ispkg:
            yield info.name, where / "__init__.py"
            yield from walk([str(where)], info.name + ".")
        else:
            yield info.name, where.with_suffix(".py")


MODULES: dict[str, Path] = {"automodel": Path(automodel.__file__), **dict(walk(automodel.__path__, "automodel."))}


def unit(module: str) -> str | None:
    """The top-level unit of ``automodel.x.y`` (``x``); None for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def public_names() -> dict[str, str]:
    """Name -> defining module for ``from automodel import NAME`` where NAME is not a module."""
    tree = ast.parse(MODULES["automodel"].read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            names.update(ast.literal_eval(node.value))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("automodel."):
            names.update({alias.asname or alias.name: node.module for alias in node.names})
    return names


def imports(module: str, path: Path, lazy: dict[str, str]) -> set[str]:
    """The ``automodel`` modules that ``module`` imports (``from M import sub`` counts as ``M.sub``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name == "automodel" or a.name.startswith("automodel."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x, from ..y import z
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            if base != "automodel" and not base.startswith("automodel."):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:
                    found.add(sub)
                elif base == "automodel":
                    found.add(lazy.get(alias.name, "automodel"))
                else:
                    found.add(base)
    found.discard(module)
    return found


GRAPH: dict[str, set[str]] = {m: imports(m, p, public_names()) for m, p in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_walk_finds_the_package() -> None:
    assert {"automodel.errors", "automodel.options", "automodel.cli", "automodel.runner.grid"} <= set(MODULES)
    assert all(path.is_file() for path in MODULES.values())
    assert "automodel.errors" in GRAPH["automodel.runner.grid"]  # from automodel.errors import DataError
    assert "automodel.cli.common" in GRAPH["automodel.cli.predict"]


def test_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(
        "among " + ", ".join(c) + ":\n    " + "\n    ".join(f"{m} -> {d}" for m in c for d in sorted(GRAPH[m] & set(c)))
        for c in found)
    graphlib.TopologicalSorter(GRAPH).prepare()  # raises CycleError on a cycle


def test_every_unit_has_a_layer() -> None:
    units = {unit(m) for m in MODULES} - {None}
    assert not units - set(LAYER_OF), f"units missing from LAYERS: {sorted(units - set(LAYER_OF))}"


def test_no_import_from_a_later_layer() -> None:
    violations = []
    for module, targets in sorted(GRAPH.items()):
        src = unit(module)
        if src is None:
            continue  # automodel/__init__.py: the lazy name map
        for target in sorted(targets):
            dst = unit(target)
            if target not in MODULES:
                violations.append(f"{module} -> {target} (no such module)")
            elif dst is not None and dst != src and LAYER_OF.get(dst, -1) > LAYER_OF.get(src, len(LAYERS)):
                violations.append(f"{module} -> {target} (layer {LAYER_OF[src]} {src} < layer {LAYER_OF[dst]} {dst})")
    assert not violations, f"{len(violations)} imports against the flow:\n" + "\n".join(violations)


def test_every_module_imports() -> None:
    failed = []
    for module in sorted(set(MODULES) - RUNS_ON_IMPORT):
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001  (report them all)
            failed.append(f"{module}: {type(exc).__name__}: {exc}")
    assert not failed, "modules that do not import:\n" + "\n".join(failed)
