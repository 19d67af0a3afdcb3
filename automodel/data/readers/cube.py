"""Read a set of Score-P CUBE4 profiles: one folder per measurement point, its parameters in its name.

The layout Extra-P reads (``extrap/fileio/file_reader/cube_file_reader2.py``)::

    experiment/
      mm.x10y1z1.r1/profile.cubex      <prefix>.<param><value>...[.r<repetition>]/<name>.cubex
      mm.x10y1z1.r2/profile.cubex
      mm.x20y1z1.r1/profile.cubex

Names and values alternate in a folder name (``x10y1z1``: x = 10, y = 1, z = 1; a value may have a
decimal point or comma, ``x2.5`` or ``x2,5``); the prefix up to the first ``.`` is optional. Every folder
must name the same parameters in the same order; a parameter that has one value in every folder is
dropped, as Extra-P does (it cannot be modelled), and ``attrs["notes"]`` says so. Each ``.cubex`` file is
one repetition (hidden files and folders without one are skipped).

Each profile is read with ``pycubexr`` (an optional dependency: ``pip install 'automodel-hpc[cube]'``). Every
metric with data at every call path gives one kernel per call path (``main->solve [time]``); values are
*exclusive* (the call path's own share, not its callees'), and each location (process or thread) is one
row, as in Extra-P's default "weak scaling" reading, so a point's median runs over repetitions and
locations. Metrics a profile stores no data for are skipped, with a note. A call path missing from some
profiles keeps the points it has (:func:`automodel.fit_many` models it on those).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.data.cells import shown
from automodel.data.tidy import tidy
from automodel.errors import DataError, install_hint
from automodel.files import check_input

__all__ = ["read_cube", "folder_point", "INSTALL"]

INSTALL = install_hint("cube")
LAYOUT = "<prefix>.<param><value>...[.r<repetition>]/<name>.cubex"
_REPETITION = re.compile(r"\.r(\d+)$")
_PAIRS = re.compile(r"(?:[A-Za-z_]+[0-9][0-9.,]*)+")
_PAIR = re.compile(r"([A-Za-z_]+)([0-9][0-9.,]*)")


def folder_point(name: str) -> tuple[list[str], list[float]] | None:
    """The parameter names and values in a folder name (``mm.x10y1z1.r1`` -> ``[x, y, z], [10, 1, 1]``);
    None when it does not follow :data:`LAYOUT`.

    Examples
    --------
    >>> folder_point("mm.x2,5y10.r3")
    (['x', 'y'], [2.5, 10.0])
    >>> folder_point("x1.5y2"), folder_point("app2.p8.r1")
    ((['x', 'y'], [1.5, 2.0]), (['p'], [8.0]))
    >>> folder_point("mm.x1y1wrong")
    """
    parts = _REPETITION.sub("", name).split(".")
    # the prefix ends at the first '.' (as in Extra-P); a name without one, or whose pairs hold a decimal
    # point ('x1.5y2'), is tried whole, and then after each later '.'
    for start in dict.fromkeys([1, 0, *range(2, len(parts))]):
        rest = ".".join(parts[start:])
        if _PAIRS.fullmatch(rest):
            try:
                pairs = [(q, float(v.replace(",", ".").rstrip("."))) for q, v in _PAIR.findall(rest)]
            except ValueError:
                return None
            return [q for q, _ in pairs], [v for _, v in pairs]
    return None


def _profiles(root: Path) -> list[Path]:
    """The ``.cubex`` files one level below ``root`` (hidden ones left out)."""
    return sorted(f for f in root.glob("*/*.cubex") if not f.name.startswith(".") and f.is_file())


def _callpaths(cube) -> dict[int, str]:  # noqa: ANN001  (a pycubexr CubexParser)
    """Call-tree node id -> call path (``main->solve``)."""
    out: dict[int, str] = {}
    stack = [(node, node.region.name) for node in cube.get_root_cnodes()]
    while stack:
        node, path = stack.pop()
        out[node.id] = path
        stack.extend((c, f"{path}->{c.region.name}") for c in node.get_children())
    return out


def _read_profile(file: Path, at: str, kernels: dict[tuple[str, str], int], skipped: set[str]
                  ) -> tuple[list[int], list[float]]:
    """Kernel index and exclusive value of every (call path, metric, location) of one profile."""
    from pycubexr import CubexParser
    from pycubexr.utils.exceptions import MissingMetricError

    kernel: list[int] = []
    values: list[float] = []
    check_input(file, "a CUBE profile", DataError)  # a regular file within the size limit
    try:
        with CubexParser(str(file)) as cube:
            paths = _callpaths(cube)
            for metric in cube.get_metrics():
                try:
                    found = cube.get_metric_values(metric=metric, cache=False)
                except MissingMetricError:
                    skipped.add(metric.name)
                    continue
                for node_id in found.cnode_indices:
                    got = found.cnode_values(cube.get_cnode(node_id), convert_to_exclusive=True)
                    got = np.asarray(got.astype(float), float).ravel()
                    k = kernels.setdefault((paths[node_id], metric.name), len(kernels))
                    kernel += [k] * len(got)
                    values += got.tolist()
    except Exception as exc:  # noqa: BLE001  (pycubexr raises whatever a damaged archive provokes)
        reason = str(exc).splitlines()[0][:80] if str(exc).strip() else ""
        raise DataError(f"{at}: not a readable CUBE profile ({type(exc).__name__}{': ' + reason if reason else ''})"
                        ) from None
    return kernel, values


def read_cube(path: str | Path) -> pd.DataFrame:
    """Read a folder of CUBE profiles (see the module docstring).

    Returns
    -------
    DataFrame
        The tidy frame of :mod:`automodel.data.tidy`; ``attrs["lines"]`` holds the profile of each row
        (``mm.x10y1z1.r1/profile.cubex``).

    Raises
    ------
    DataError
        Not a folder, no profiles, a folder name that does not follow the layout or names other
        parameters than the first, no parameter that varies, pycubexr missing, or a damaged profile.
    """
    root = Path(path)
    src = str(root)
    if not root.is_dir():
        raise DataError(f"{src}: {'not a folder' if root.exists() else 'no such folder'}; expected a set of "
                        f"CUBE profiles ({LAYOUT})")
    files = _profiles(root)
    if not files:
        raise DataError(f"{src}: is a directory with no CUBE profiles in its folders; expected a file of "
                        f"measurements or a CUBE set ({LAYOUT})")
    names: list[str] | None = None
    first = ""
    coords = []
    for file in files:
        folder = file.parent.name
        found = folder_point(folder)
        if found is None:
            raise DataError(f"{src}: folder {shown(folder)} does not name a point; expected {LAYOUT}, "
                            "e.g. mm.x10y1z1.r1")
        if names is None:
            names, first = found[0], folder
        elif found[0] != names:
            raise DataError(f"{src}: folder {shown(folder)} names the parameters {', '.join(found[0])} but "
                            f"{shown(first)} names {', '.join(names)}; expected the same parameters in the same "
                            "order in every folder name")
        coords.append(found[1])
    points = np.asarray(coords, float)
    varies = (points != points[0]).any(axis=0)
    if not varies.any():
        raise DataError(f"{src}: every folder has {', '.join(f'{q} = {v:g}' for q, v in zip(names, points[0]))}; "
                        "expected a parameter that varies between the folders")
    notes = []
    if not varies.all():
        fixed = ", ".join(f"{q} = {v:g}" for q, v, keep in zip(names, points[0], varies) if not keep)
        notes.append(f"{src}: {fixed} in every folder, dropped (a constant parameter cannot be modelled)")
    try:
        import pycubexr  # noqa: F401
    except ImportError:
        raise DataError(f"{src}: reading CUBE profiles needs pycubexr: {INSTALL}") from None
    kernels: dict[tuple[str, str], int] = {}
    skipped: set[str] = set()
    kernel, rows, values, where = [], [], [], []
    for i, file in enumerate(files):
        rel = file.relative_to(root).as_posix()
        ks, vs = _read_profile(file, f"{src}, {rel}", kernels, skipped)
        kernel += ks
        values += vs
        rows += [i] * len(vs)
        where += [rel] * len(vs)
    if skipped:
        notes.append(f"{src}: metrics with no data skipped: {', '.join(sorted(skipped))}")
    params = [q for q, keep in zip(names, varies) if keep]
    return tidy(src, params, list(kernels), np.asarray(kernel), points[np.asarray(rows, np.intp)][:, varies],
                np.asarray(values, float), np.asarray(where, dtype=object), notes)
