"""Write measurements as an Extra-P text input file.

Grammar (Extra-P 4, ``extrap/fileio/file_reader/text_file_reader.py``)::

    PARAMETER x [y ...]         one or more parameter names (at most 4)
    POINTS a b c                single parameter: coordinates separated by blanks
    POINTS ( a b ) ( c d )      several parameters: one parenthesised tuple per point
    METRIC time
    REGION r                    a new call path; its DATA lines follow
    DATA v1 v2 ...              one line per point, in POINTS order, repetitions on the line

Every region must have one DATA line for every point.  Lines starting with ``#``
are comments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:\-]*$")


def _check_name(kind: str, name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"Extra-P {kind} name {name!r} must be one word of letters, digits, "
                         "'_', '.', ':' or '-'")


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def format_text(parameters: Sequence[str], points: np.ndarray,
                regions: Mapping[str, Sequence[Sequence[float]]], metric: str = "time",
                comment: str | None = None) -> str:
    """Format points and per-region repetitions as Extra-P text.

    Parameters
    ----------
    parameters : sequence of str
        Parameter names (1 to 4).
    points : array of shape (n_points, n_params)
        Coordinates, one row per point.
    regions : mapping of str to sequence
        Region name -> one sequence of repetition values per point.
    metric : str
        Metric name.
    comment : str, optional
        First-line comment.

    Returns
    -------
    str

    Examples
    --------
    >>> print(format_text(["p"], np.array([[1], [2]]), {"k": [[1.0, 1.5], [2.0]]}))
    PARAMETER p
    POINTS 1 2
    METRIC time
    REGION k
    DATA 1 1.5
    DATA 2
    <BLANKLINE>
    """
    points = np.asarray(points, dtype=float)
    if points.ndim == 1:
        points = points[:, None]
    if not 1 <= len(parameters) <= 4 or points.shape[1] != len(parameters):
        raise ValueError(f"need 1 to 4 parameters matching the point width; got {len(parameters)} "
                         f"parameters and points of shape {points.shape}")
    for name in parameters:
        _check_name("parameter", name)
    _check_name("metric", metric)
    lines = [f"# {comment}"] if comment else []
    lines.append("PARAMETER " + " ".join(parameters))
    if len(parameters) == 1:
        lines.append("POINTS " + " ".join(_number(v) for v in points[:, 0]))
    else:
        lines.append("POINTS " + " ".join("( " + " ".join(_number(v) for v in row) + " )"
                                          for row in points))
    lines.append(f"METRIC {metric}")
    for region, data in regions.items():
        _check_name("region", region)
        if len(data) != len(points):
            raise ValueError(f"region {region!r} has {len(data)} DATA lines for {len(points)} points")
        lines.append(f"REGION {region}")
        for values in data:
            values = np.asarray(values, dtype=float)
            if values.size == 0 or not np.all(np.isfinite(values)):
                raise ValueError(f"region {region!r}: every point needs finite values, got {values}")
            lines.append("DATA " + " ".join(_number(v) for v in values))
    return "\n".join(lines) + "\n"


def frame_points(rows: pd.DataFrame, columns: Sequence[str],
                 target: str = "time") -> tuple[np.ndarray, list[list[float]]]:
    """Group rows by configuration: distinct points and their repetition values.

    Returns
    -------
    points : array of shape (n_points, n_params), sorted lexicographically
    values : list of lists, the ``target`` values of each point's repetitions
    """
    grouped = rows.groupby(list(columns), sort=True)[target]
    points, values = [], []
    for key, series in grouped:
        key = key if isinstance(key, tuple) else (key,)
        points.append([float(k) for k in key])
        values.append(series.to_numpy(dtype=float).tolist())
    return np.array(points, dtype=float).reshape(len(points), len(columns)), values


def task_text(task, region: str = "main") -> str:
    """The training rows of a ``benchmarks.tasks.Task`` as Extra-P text.

    Parameters are named after the task's columns, in modelling order.
    """
    points, values = frame_points(task.train, task.columns, task.target)
    return format_text(task.columns, points, {region: values}, metric=task.target,
                       comment=f"{task.name} {task.group} (training rows)")


def synthetic_kernels(n_kernels: int = 1000, n_points: int = 5, n_reps: int = 1,
                      seed: int = 0) -> tuple[str, list[dict]]:
    """Many one-parameter kernels in one file, and the true function of each.

    Kernel ``k`` follows ``a + b * p^e * log2(p)^l`` (random a, b in [0.1, 10), e in {0.5, 1, 1.5, 2},
    l in {0, 1}) at ``p = 2, 4, 8, ...`` with 2 % multiplicative noise.

    Returns
    -------
    text : str
        The Extra-P text file (regions ``kernel_0000``, ..., metric ``time``).
    truths : list of dict
        Per kernel, in file order: ``region``, ``a``, ``b``, ``e``, ``l``.
    """
    rng = np.random.default_rng(seed)
    p = 2.0 ** np.arange(1, n_points + 1)
    regions: dict[str, list[list[float]]] = {}
    truths: list[dict] = []
    for k in range(n_kernels):
        a, b = rng.uniform(0.1, 10.0, size=2)
        e = rng.choice([0.5, 1.0, 1.5, 2.0])
        l = rng.integers(0, 2)
        clean = a + b * p ** e * np.log2(p) ** l
        noisy = clean[:, None] * (1.0 + 0.02 * rng.standard_normal((n_points, n_reps)))
        regions[f"kernel_{k:04d}"] = noisy.tolist()
        truths.append({"region": f"kernel_{k:04d}", "a": float(a), "b": float(b), "e": float(e), "l": int(l)})
    return format_text(["p"], p[:, None], regions, comment=f"{n_kernels} synthetic kernels"), truths


def synthetic_kernels_text(n_kernels: int = 1000, n_points: int = 5, n_reps: int = 1,
                           seed: int = 0) -> str:
    """The text of :func:`synthetic_kernels` (the speed benchmark's file)."""
    return synthetic_kernels(n_kernels, n_points, n_reps, seed)[0]
