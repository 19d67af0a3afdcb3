"""The configurations a suggestion may name: the target checked, a grid of levels or a given list, marked measured."""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.data.cells import RULES, floats, magnitude_note, shown, violation
from automodel.errors import DataError
from automodel.model.core import Model

__all__ = ["LOAD_ROLES", "MAX_CANDIDATES", "check_target", "target_values", "candidate_grid", "listed", "mark_measured"]

#: roles that are the machine's state, not a configuration: set to the target's value (default 1)
LOAD_ROLES = ("cpu", "bw")
#: at most this many candidate configurations are weighed (a grid beyond it is a typo)
MAX_CANDIDATES = 100_000


def check_target(model: Model, target: Mapping[str, Any], max_p: float | None = None) -> dict[str, float]:
    """The target as canonical parameter -> value for ``model`` (:func:`target_values` of its parameters
    and column names)."""
    return target_values(model.params, model.roles, target, max_p)


def target_values(params: Sequence[str], roles: Mapping[str, str], target: Mapping[str, Any],
                  max_p: float | None = None) -> dict[str, float]:
    """The target as canonical parameter -> value: every parameter of ``params`` (``cpu`` and ``bw``
    default to 1), given by its canonical or user name (``roles``), a positive finite number, ``p`` a whole
    number no larger than ``max_p``; else a one-line :class:`DataError`. Needs no model, so a campaign
    checks its target before its first run."""
    names = {roles.get(q, q): q for q in params}
    out: dict[str, float] = {}
    for key, value in target.items():
        q = key if key in params else names.get(key)
        if q is None:
            raise DataError(f"target: unknown parameter {shown(key)}; the model has "
                            f"{', '.join(roles.get(q, q) for q in params)}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise DataError(f"target: {key} must be a number, got {shown(value)}") from None
        if not (math.isfinite(number) and number > 0):
            raise DataError(f"target: {key} must be a positive finite number, got {shown(value)}")
        out[q] = _checked(f"target: {key}", q, [number])[0]
    for q in params:
        if q not in out:
            if q not in LOAD_ROLES:
                raise DataError(f"target: no value for {roles.get(q, q)}; give every parameter, "
                                f"e.g. {','.join(f'{roles.get(x, x)}=...' for x in params)}")
            out[q] = 1.0
    if "p" in out:
        if out["p"] != math.floor(out["p"]):
            raise DataError(f"target: p must be a whole number, got {out['p']:g}")
        if max_p is not None and out["p"] > max_p:
            raise DataError(f"target p={out['p']:g} is outside the allowed p (at most {max_p:g}); raise "
                            "--max-p or choose a smaller target")
    return {q: out[q] for q in params}


def _checked(label: str, role: str, values: Sequence[Any]) -> list[float]:
    """``values`` (levels or a target of the parameter of ``role``) as floats when each is a number its
    role allows and of a magnitude the engine fits (:func:`automodel.data.cells.violation`: a level of n
    that is not positive, or of 1e300, would be weighed as if it could be run); else a one-line
    :class:`DataError` starting with ``label``."""
    levels = floats(list(values))
    bad = ~np.isfinite(levels)
    found = (int(np.argmax(bad)), RULES[role][1] if role in RULES else "a finite number", False) if bad.any() \
        else violation(levels, role)
    if found is not None:
        i, what, magnitude = found
        raise DataError(f"{label} must be {what}{magnitude_note(role) if magnitude else ''}, "
                        f"got {shown(values[i])}")
    return [float(v) for v in levels]


def _levels(low: float, high: float, target: float, measured: Sequence[float] = ()) -> list[float]:
    """Default levels of a parameter: the measured ones (or doublings from ``low`` to ``high``), then
    doublings from ``high`` towards the target, and the target's own value."""
    levels = set(float(v) for v in measured)
    if not levels:
        v = low
        while v <= high * (1 + 1e-9) and low > 0:
            levels.add(v)
            v *= 2
        levels |= {low, high}
    v = high * 2
    while low > 0 and v < target * (1 - 1e-9):
        levels.add(v)
        v *= 2
    levels.add(target)
    return sorted(levels)


def candidate_grid(model: Model, target: Mapping[str, float], grid: Mapping[str, Sequence[float]] | None = None,
                   p: Sequence[float] | None = None, max_p: float | None = None,
                   measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """The configurations a suggestion may name: the Cartesian product of each parameter's levels.

    ``grid`` gives the levels of any parameter (canonical or user names); ``p`` the allowed process
    counts; otherwise a parameter takes its measured levels (``measured``, else doublings across its
    training range), doublings beyond them towards the target, and the target's value. Process counts
    are whole, at least 1 and at most ``max_p``. ``cpu`` and ``bw`` take the target's values.
    """
    names = {model.roles.get(q, q): q for q in model.params}
    given: dict[str, list[float]] = {}
    for key, values in (grid or {}).items():
        q = key if key in model.params else names.get(key)
        if q is None:
            raise DataError(f"grid: unknown parameter {shown(key)}; the model has "
                            f"{', '.join(model.roles.get(x, x) for x in model.params)}")
        given[q] = _checked(f"grid: {key}", q, values)
    if p is not None:
        if "p" not in model.params:
            raise DataError("allowed p given, but the model does not depend on p")
        given["p"] = _checked("allowed p", "p", p)
    if "p" in given:
        bad = [v for v in given["p"] if not (v >= 1 and v == math.floor(v))]
        if bad:
            raise DataError(f"allowed p must be whole numbers >= 1, got {bad[0]:g}")
    axes = {}
    for q in model.params:
        if q in LOAD_ROLES:
            axes[q] = [float(target[q])]
            continue
        if q in given:
            values = given[q]
        else:
            low, high = model.ranges.get(q, (target[q], target[q]))
            levels = [] if measured is None or q not in measured else np.unique(measured[q].to_numpy(float))
            values = _levels(float(low), float(high), float(target[q]), levels)
            if q == "p":
                values = sorted({float(math.floor(v)) for v in values if v >= 1})
        if q == "p" and max_p is not None:
            values = [v for v in values if v <= max_p]
        axes[q] = sorted(set(values))
    size = math.prod(len(v) for v in axes.values())
    if size > MAX_CANDIDATES:
        raise DataError(f"the grid has {size:,} configurations, more than the {MAX_CANDIDATES:,} weighed")
    frame = pd.DataFrame(list(itertools.product(*axes.values())), columns=list(axes), dtype=float)
    return mark_measured(frame, measured, model.params)


def mark_measured(frame: pd.DataFrame, measured: pd.DataFrame | None, params: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a column ``measured``: whether each configuration is one of ``measured``'s."""
    if measured is None or not len(frame):
        return frame.assign(measured=False)
    known = measured[list(params)].drop_duplicates().assign(_measured=True)
    hit = frame.merge(known, how="left", on=list(params))["_measured"]
    return frame.assign(measured=hit.notna().to_numpy())


def listed(model: Model, target: Mapping[str, float], configurations: pd.DataFrame, p: Sequence[float] | None,
           max_p: float | None, measured: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of ``configurations`` (canonical columns, ``cpu`` and ``bw`` the target's when absent)
    that the allowed ``p`` and ``max_p`` admit, each once, marked ``measured`` as :func:`candidate_grid`."""
    frame = configurations.rename(columns={model.roles.get(q, q): q for q in model.params})
    out = {}
    for q in model.params:
        if q in frame:
            out[q] = floats(frame[q])
        elif q in LOAD_ROLES:
            out[q] = np.full(len(frame), float(target[q]))
        else:
            raise DataError(f"configurations: no column {model.roles.get(q, q)}")
    table = pd.DataFrame(out).dropna().drop_duplicates().reset_index(drop=True)
    if "p" in table:
        ok = np.ones(len(table), bool)
        if p is not None:
            ok &= table["p"].isin([float(v) for v in p]).to_numpy()
        if max_p is not None:
            ok &= table["p"].to_numpy(float) <= max_p
        table = table[ok].reset_index(drop=True)
    return mark_measured(table, measured, model.params)
