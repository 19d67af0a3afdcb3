"""The entry point of :mod:`automodel.suggestion`: :func:`suggest` checks a request, gathers its candidates, plans."""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.data.cells import shown
from automodel.errors import DataError
from automodel.model.core import Model
from automodel.suggestion.candidates import candidate_grid, check_target, listed, mark_measured
from automodel.suggestion.greedy import plan_runs, seconds
from automodel.suggestion.results import NothingToRun, Plan

__all__ = ["suggest", "check_runs", "check_options"]


def suggest(source: Any, target: Mapping[str, Any], *, count: int = 5, allowed_p: Sequence[float] | None = None,
            max_p: float | None = None, grid: Mapping[str, Sequence[float]] | None = None,
            budget: float | None = None, reps: int = 1, level: float = 0.9, new_only: bool = False,
            configurations: pd.DataFrame | None = None, exclude: pd.DataFrame | None = None,
            **fit_options: Any) -> Plan:
    """The next ``count`` configurations to run for the narrowest band at ``target`` per core-hour.

    Parameters
    ----------
    source : path, DataFrame, FitResult or Model
        Runs (fitted with :func:`automodel.fit` and ``fit_options``), a fit's result, or a model with a
        band (a model file's).
    target : mapping
        Parameter -> value where the prediction matters, e.g. ``{"n": 1e6, "p": 1024}``.
    count : int
        Suggestions at most.
    allowed_p, max_p : optional
        The process counts that may be run, and the largest (the target's p may not exceed it).
    grid : mapping, optional
        Levels of any parameter (default: measured levels, doublings towards the target, the target).
    budget : float, optional
        Core-hours the suggested runs may cost in total.
    reps : int
        Repetitions each run will have (its cost is multiplied by it).
    new_only : bool
        Leave out configurations already measured (a campaign that never repeats a run).
    configurations : DataFrame, optional
        The configurations that can be run, one per row (columns: the parameters, canonical or user
        names), instead of a grid: e.g. the measured ones of a replayed campaign. ``allowed_p`` and
        ``max_p`` still apply.
    exclude : DataFrame, optional
        Configurations never to suggest (e.g. runs of a campaign that failed).

    Returns
    -------
    Plan
        The band at the target now and the suggestions, best value first (``Plan.lines()``,
        ``Plan.frame()``).

    Raises
    ------
    DataError
        A target outside the allowed p or missing a parameter, a budget or count that is not positive, a
        model without a band, or constraints that no configuration meets (one line each).

    Examples
    --------
    >>> plan = automodel.suggest("runs.csv", {"n": 1e6, "p": 1024}, max_p=1024, budget=2)  # doctest: +SKIP
    >>> print("\\n".join(plan.lines()))                                                   # doctest: +SKIP
    """
    check_options(count, budget, max_p, reps)
    model, measured = _model_of(source, fit_options)
    if model.interval is None:
        raise DataError("the model has no prediction band (fit it with intervals, or give the runs)")
    goal = check_target(model, target, max_p)
    candidates = _candidates(model, goal, configurations, grid, allowed_p, max_p, measured, new_only, exclude)
    notes: list[str] = []
    tested = None if measured is None else measured[list(model.params)].drop_duplicates()
    suggestions, now = plan_runs(model, goal, candidates, count, budget, reps, level, tested)
    if budget is not None and not suggestions:
        _check_budget(model, candidates, budget, reps)
    if "p" in model.params and max_p is None and allowed_p is None:
        notes.append("process counts up to the target's; --max-p or --p limit them")
    return Plan(goal, now["predicted"], now["lower"], now["upper"], now["width"], level, tuple(suggestions),
                len(candidates), {q: model.roles.get(q, q) for q in model.params}, tuple(notes), model.unit)


def check_runs(source: Any, target: Mapping[str, Any], *, count: int = 3, allowed_p: Sequence[float] | None = None,
               max_p: float | None = None, grid: Mapping[str, Sequence[float]] | None = None,
               budget: float | None = None, configurations: pd.DataFrame | None = None,
               exclude: pd.DataFrame | None = None) -> tuple[dict[str, float], ...]:
    """Runs that test a band :func:`suggest` sees no way to narrow: the ``count`` configurations not yet
    measured nearest the target (the sum of ``|log2(x_q / t_q)|`` over the parameters), cheapest first
    among equals, within ``budget`` core-hours in total. Their measured times, against what the model
    predicted, are out-of-sample evidence for the band (:func:`automodel.runner.adaptive.forward_error`).

    Parameters
    ----------
    source, target, count, allowed_p, max_p, grid, budget, configurations, exclude :
        As :func:`suggest` (``new_only`` always).

    Returns
    -------
    tuple of dict
        Canonical parameter -> value, nearest first; empty when none is left or fits the budget.
    """
    model, measured = _model_of(source, {})
    goal = check_target(model, target, max_p)
    try:
        candidates = _candidates(model, goal, configurations, grid, allowed_p, max_p, measured, True, exclude)
    except NothingToRun:
        return ()
    X = candidates[list(model.params)].reset_index(drop=True)
    with np.errstate(all="ignore"):
        y = np.asarray(model.core.predict(X), float)
        far = sum(np.abs(np.log2(X[q].to_numpy(float) / goal[q])) for q in model.params)
    cost = (X["p"].to_numpy(float) if "p" in X else 1.0) * y * seconds(model.unit) / 3600
    order = np.lexsort((cost, far))
    chosen, spent = [], 0.0
    for i in order[np.isfinite(cost[order]) & (cost[order] > 0)]:
        if len(chosen) == count:
            break
        if budget is None or spent + cost[i] <= budget:
            chosen.append({q: float(X[q].iloc[i]) for q in model.params})
            spent += float(cost[i])
    return tuple(chosen)


def check_options(count: Any, budget: Any, max_p: Any, reps: Any) -> None:
    """Check the options of :func:`suggest` that need no model.

    Raises
    ------
    DataError
        ``count`` or ``reps`` not a whole number >= 1, ``budget`` not a positive number, ``max_p`` below 1.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise DataError(f"count must be a whole number >= 1, got {shown(count)}")
    if budget is not None and not (_real(budget) and math.isfinite(budget) and budget > 0):
        raise DataError(f"budget must be a positive number of core-hours, got {shown(budget)}")
    if max_p is not None and not (_real(max_p) and max_p >= 1):
        raise DataError(f"max_p must be a number >= 1, got {shown(max_p)}")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise DataError(f"reps must be a whole number >= 1, got {shown(reps)}")


def _candidates(model: Model, goal: Mapping[str, float], configurations: pd.DataFrame | None,
                grid: Mapping[str, Sequence[float]] | None, allowed_p: Sequence[float] | None, max_p: float | None,
                measured: pd.DataFrame | None, new_only: bool, exclude: pd.DataFrame | None) -> pd.DataFrame:
    """The configurations :func:`suggest` weighs: the listed ones or the grid, less the measured ones
    (``new_only``) and the excluded ones.

    Raises
    ------
    NothingToRun
        No configuration is left (``why == "constraints"``).
    """
    if configurations is not None:
        candidates = listed(model, goal, configurations, allowed_p, max_p, measured)
    else:
        candidates = candidate_grid(model, goal, grid, allowed_p, max_p, measured)
    if new_only:
        candidates = candidates[~candidates["measured"]]
    if exclude is not None and len(exclude):
        gone = mark_measured(candidates[list(model.params)], exclude.rename(
            columns={model.roles.get(q, q): q for q in model.params}).astype(float), model.params)["measured"]
        candidates = candidates[~gone.to_numpy()]
    if not len(candidates):
        raise NothingToRun("no configuration meets the constraints (allowed p, max p, grid"
                           f"{', not yet measured' if new_only else ''})", "constraints")
    return candidates


def _check_budget(model: Model, candidates: pd.DataFrame, budget: float, reps: int) -> None:
    """Refuse a budget that no candidate fits (when no run was suggested).

    Raises
    ------
    NothingToRun
        Every candidate costs more than ``budget`` core-hours (``why == "budget"``), naming the cheapest.
    """
    with np.errstate(all="ignore"):
        y = np.asarray(model.core.predict(candidates[list(model.params)]), float)
    cost = reps * (candidates["p"].to_numpy(float) if "p" in candidates else 1.0) * y * seconds(model.unit) / 3600
    if not (np.isfinite(cost) & (cost <= budget)).any():
        cheapest = float(np.nanmin(np.where(np.isfinite(cost) & (cost > 0), cost, np.nan)))
        raise NothingToRun(f"no configuration fits the budget of {budget:g} core-hours: the cheapest of "
                           f"{len(candidates)} costs {cheapest:.3g}", "budget")


def _real(value: Any) -> bool:
    """A real number (numpy's too), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _model_of(source: Any, fit_options: Mapping[str, Any]) -> tuple[Model, pd.DataFrame | None]:
    """The model a plan is made for, and the measured configurations (canonical columns) when known."""
    from automodel.fitting import FitResult, fit

    if isinstance(source, Model):
        return source, None
    if not isinstance(source, FitResult):
        source = fit(source, **{"progress": False, **fit_options})
    return source.best, source.dataset.frame
