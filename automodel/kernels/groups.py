"""Kernels in groups that share their points: one aggregated value per (kernel, point), and its noise.

:func:`groups` turns a table of runs (kernel, parameters, value) into groups of kernels measured at the
same points; :mod:`automodel.kernels.choice` then fits every candidate to every kernel of a group at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.data.cells import located
from automodel.errors import DataError
from automodel.names import label_problem
from automodel.options import AGGREGATES, DEFAULT_AGGREGATE

__all__ = ["Group", "groups", "noise", "zero_model"]


@dataclass(frozen=True)
class Group:
    """Kernels measured at the same points: points (m, d) in sorted order, values (m, K)."""

    params: tuple[str, ...]
    points: np.ndarray
    names: tuple[str, ...]
    index: np.ndarray  # position of each kernel in the input order
    values: np.ndarray
    spread: np.ndarray  # (m, K) standard deviation of the repetitions (0 for one run)
    count: np.ndarray  # (m, K) repetitions
    aggregate: str = DEFAULT_AGGREGATE


def groups(frame: pd.DataFrame, kernel: str, time: str, params: list[str], source: str,
           offset: int | np.ndarray, aggregate: str
           ) -> tuple[list[str], list[Group], dict[int, tuple[int, str]], dict[int, tuple[int, float]]]:
    """Aggregate repetitions per (kernel, point); group kernels by their point set.

    Returns every kernel name (input order), the groups, kernel index -> (points, note) for the
    kernels that cannot be modelled, and kernel index -> (zeros, value) for the kernels whose zeros
    were raised (:func:`automodel.data.dataset.floor_zeros`).
    """
    if aggregate not in AGGREGATES:
        raise DataError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    frame = pd.DataFrame(frame, copy=False)  # without its attrs: pandas deep-copies them at every column read
    P = np.column_stack([data_mod.numeric(frame, q, q, source, offset) for q in params])
    y = data_mod.numeric(frame, time, "value", source, offset)
    codes, names = pd.factorize(frame[kernel], use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise DataError(f"{located(source, i, kernel, offset)}: expected a kernel name, got an empty cell")
    for j, name in enumerate(names):  # a name a models file could not hold (kernels --out) or a terminal show
        problem = label_problem(str(name))
        if problem is not None:
            i = int(np.argmax(codes == j))
            raise DataError(f"{located(source, i, kernel, offset)}: not a kernel name ({problem})")
    points, pcode = np.unique(P, axis=0, return_inverse=True)
    bad: dict[int, tuple[int, str]] = {}
    negative = np.flatnonzero(y < 0)  # a metric of a profile is a time or a count: 0 or more
    for j, i in zip(*np.unique(codes[negative], return_index=True)):
        at = ", ".join(f"{q} = {v:g}" for q, v in zip(params, P[negative[i]]))
        bad[int(j)] = (0, f"value {y[negative[i]]:g} at {at} is negative (expected 0 or more)")
    y, floors = data_mod.floor_zeros(y, codes, len(names))
    key = codes.astype(np.int64) * len(points) + pcode.reshape(-1)
    order = np.argsort(key, kind="stable")
    key, y = key[order], y[order]
    spread, count = np.zeros(len(y)), np.ones(len(y), int)
    if len(key) > 1 and (key[1:] == key[:-1]).any():  # repetitions: one value per (kernel, point)
        key, y, spread, count = data_mod.aggregate_groups(y, key, aggregate, pools=key // len(points))
    kern, pt = key // len(points), key % len(points)
    counts = np.bincount(kern, minlength=len(names))
    starts = np.concatenate([[0], np.cumsum(counts)])
    bad = {j: (int(counts[j]), note) for j, (_, note) in bad.items()}
    for j in np.flatnonzero(counts < 3):
        bad.setdefault(int(j), (int(counts[j]), f"{counts[j]} distinct point(s); at least 3 are needed"))
    ok = np.setdiff1d(np.arange(len(names)), np.fromiter(bad, int, len(bad)))
    by_points: dict[bytes, list[int]] = {}
    if len(ok) and (counts[ok] == counts[ok[0]]).all():
        m = int(counts[ok[0]])
        rows = (starts[ok][:, None] + np.arange(m)).reshape(-1)
        pts = pt[rows].reshape(len(ok), m)
        if (pts == pts[0]).all():  # the common case: every kernel at the same points
            by_points[pts[0].tobytes()] = list(ok)
    if not by_points:
        for j in ok:
            by_points.setdefault(pt[starts[j]:starts[j + 1]].tobytes(), []).append(int(j))
    out = []
    for members in by_points.values():
        idx = np.asarray(members)
        m = int(counts[idx[0]])
        rows = starts[idx][:, None] + np.arange(m)  # (K, m)
        out.append(Group(tuple(params), points[pt[rows[0]]], tuple(str(names[j]) for j in idx), idx,
                         y[rows].T.copy(), spread[rows].T.copy(), count[rows].T.copy(), aggregate))
    return [str(n) for n in names], out, bad, floors


def noise(g: Group, aggregate: str) -> tuple[np.ndarray, np.ndarray]:
    """Pooled standard error of each kernel's aggregated values, relative and absolute (K,) each
    (:func:`automodel.data.aggregate_se`, as :meth:`automodel.data.Dataset.aggregate_se` for one dataset)."""
    return data_mod.aggregate_se(g.values, g.spread, g.count, aggregate)


def zero_model(model: Any) -> Any:
    """``model`` (fitted to the ones :func:`automodel.data.dataset.floor_zeros` put in place of a
    kernel of zeros) scaled to 0: the same terms with coefficient 0, so ``T = 0`` and a band of width 0 about it."""
    core = model.core
    return replace(model, core=replace(core, coefficients=(0.0,) * len(core.coefficients)))
