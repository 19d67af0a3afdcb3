"""The greedy batch of :mod:`automodel.suggestion`: the parts of the band at the target after each candidate run.

Each step weighs every open candidate by the narrowing of the band it is expected to bring per core-hour,
takes the best and updates the parts as if it had been measured (its range, the coefficients'
covariance, the alternatives' weights), so the next choice is made given it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from automodel.model.interval import DEFAULT_GROWTH, Interval
from automodel.model.core import Model
from automodel.options import TIME_UNITS
from automodel.solve import band
from automodel.space.terms import term_values
from automodel.suggestion.alternatives import inside_ranges, log_ratios, untested
from automodel.suggestion.results import NoTimeAtTarget, Suggestion

__all__ = ["MIN_NOISE", "plan_runs", "seconds"]

#: the least relative noise a run is assumed to have (1 %): a simulator's deterministic times would
#: otherwise tell any two candidates apart at any distance
MIN_NOISE = 0.01

#: the coefficient, choice and growth parts of the band at the target (one value per candidate)
Parts = tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]


@dataclass
class _State:
    """The parts of the band at the target that runs change, as if the chosen runs had been measured."""

    ranges: dict[str, tuple[float, float]]
    covariance: np.ndarray | None
    weights: np.ndarray  # of the alternatives
    corners: dict[str, np.ndarray]  # the configurations that bound the runs from above (band.frontier)


@dataclass(frozen=True)
class _Problem:
    """What the greedy choice weighs, fixed for a batch: the target, the candidates and the band's parts.

    Attributes
    ----------
    X : DataFrame
        The candidates (canonical columns, index from 0).
    target : dict
        Canonical parameter -> value of the target.
    y_t, y_x : float, ndarray
        The model's time at the target and at each candidate.
    cost, usable : ndarray
        Core-hours of each candidate run; whether the model predicts a positive time there.
    parts : tuple
        The band's parts at the target now (``(sd, dof)`` pairs, :meth:`Interval.parts`).
    growth : dict
        The error growth per doubling of each parameter with a training range.
    growth_dof : dict
        The degrees of freedom of each growth.
    sigma : float
        The relative noise of one run (:func:`_noise`).
    level : float
        The band's level.
    a_t, A_x : ndarray or None
        The term values at the target and at the candidates (None without a covariance).
    r_t : ndarray
        The alternatives' log ratios at the target (0 where not counted).
    n_counted : int
        How many alternatives have a log ratio at the target.
    D, keep : ndarray
        (candidates, alternatives): the untested log ratios, and the expected weight each run leaves
        each alternative.
    """

    X: pd.DataFrame
    target: dict[str, float]
    y_t: float
    y_x: np.ndarray
    cost: np.ndarray
    usable: np.ndarray
    parts: tuple
    growth: dict[str, float]
    growth_dof: dict[str, float]
    sigma: float
    level: float
    a_t: np.ndarray | None
    A_x: np.ndarray | None
    r_t: np.ndarray
    n_counted: int
    D: np.ndarray
    keep: np.ndarray

    @property
    def has_alternatives(self) -> bool:
        """Whether the model has alternatives the data cannot tell apart."""
        return self.D.shape[1] > 0


def seconds(unit: str) -> float:
    """Seconds in one ``unit`` of the model's times (``ms`` -> 0.001); 1 for a value that is not a time
    (its cost is then counted as if it were seconds).

    Examples
    --------
    >>> seconds("us"), seconds("misses")
    (1e-06, 1.0)
    """
    return TIME_UNITS.get(unit, 1.0)


def _noise(interval: Interval) -> float:
    """The relative noise of one run: one run's and the misfit in quadrature, at least :data:`MIN_NOISE`."""
    return max(math.hypot(interval.run, interval.misfit), MIN_NOISE)


def _coefficient_inputs(model: Model, t_cols: pd.DataFrame, X: pd.DataFrame
                 ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """The covariance of a term model's coefficients (None without terms or with a non-finite one) and
    the term values at the target and at the candidates (non-finite ones 0; None without a covariance)."""
    iv = model.interval
    params = list(model.params)
    terms = getattr(model.core, "terms", None)
    cov = iv.covariance if (iv.covariance is not None and terms is not None
                            and np.isfinite(iv.covariance).all()) else None
    if cov is None:
        return None, None, None
    a_t = term_values(list(terms), {q: t_cols[q].to_numpy(float) for q in params}, 1)[0]
    A_x = term_values(list(terms), {q: X[q].to_numpy(float) for q in params}, len(X))
    return cov, a_t, np.where(np.isfinite(A_x), A_x, 0.0)


def _problem(model: Model, target: Mapping[str, float], candidates: pd.DataFrame, reps: int, level: float,
             tested: pd.DataFrame | None) -> tuple[_Problem, _State]:
    """What the choice weighs (:class:`_Problem`) and the state it starts from (nothing run yet).

    Raises
    ------
    NoTimeAtTarget
        The model predicts no positive time at the target.
    """
    iv = model.interval
    params = list(model.params)
    t_cols = pd.DataFrame({q: [float(target[q])] for q in params})
    X = candidates[params].reset_index(drop=True)
    with np.errstate(all="ignore"):
        y_t = float(np.asarray(model.core.predict(t_cols), float)[0])
        y_x = np.asarray(model.core.predict(X), float)
    if not (math.isfinite(y_t) and y_t > 0):
        raise NoTimeAtTarget(f"the model predicts no positive time at the target ({y_t:g})")
    parts = iv.parts(t_cols, model.core, np.array([y_t]))
    growth_q = [q for q in params if q in iv.ranges]
    sigma = _noise(iv)
    p_x = X["p"].to_numpy(float) if "p" in X else np.ones(len(X))
    # the alternatives' log ratios at the candidates and at the target
    alts = list(iv.alternatives)
    D = log_ratios(alts, X, model.core, y_x)
    r_t = log_ratios(alts, t_cols, model.core, np.array([y_t]))[0]
    counted = np.isfinite(r_t)
    D = np.where(np.isfinite(D), D, 10.0)  # an alternative with no time there is told apart at once
    if tested is None:
        tested = X[inside_ranges(X, iv.ranges)]
    survived = log_ratios(alts, tested[params].reset_index(drop=True), model.core)
    measured = candidates["measured"].to_numpy(bool) if "measured" in candidates else np.zeros(len(X), bool)
    D = untested(D, survived, measured)
    cov, a_t, A_x = _coefficient_inputs(model, t_cols, X)
    problem = _Problem(
        X=X, target=dict(target), y_t=y_t, y_x=y_x, cost=reps * p_x * y_x * seconds(model.unit) / 3600.0,
        usable=np.isfinite(y_x) & (y_x > 0), parts=parts,
        growth={q: iv.growth.get(q, DEFAULT_GROWTH) for q in growth_q},
        growth_dof={q: iv.growth_dof.get(q, 1.0) for q in growth_q}, sigma=sigma, level=level, a_t=a_t, A_x=A_x,
        r_t=np.where(counted, r_t, 0.0), n_counted=int(counted.sum()), D=D,
        keep=np.exp(-D ** 2 / (2 * np.square(sigma))))  # expected weight each run leaves each alternative
    corners = ({q: np.asarray(v, float) for q, v in iv.frontier.items()} if iv.frontier else
               {q: np.array([high]) for q, (low, high) in iv.ranges.items() if low > 0})  # a full grid's corner
    return problem, _State(dict(iv.ranges), cov, np.ones(len(alts)), corners)


def _width(problem: _Problem, coef: np.ndarray, choice: np.ndarray, growth: dict[str, np.ndarray]) -> np.ndarray:
    """The relative half-width of the band at the target with these coefficient, choice and growth parts
    (the run and misfit parts fixed)."""
    fixed = [(float(np.asarray(s).ravel()[0]), nu) for s, nu in problem.parts[:2]]  # run, misfit
    sds = [*fixed, (coef, problem.parts[2][1]), (choice, problem.parts[3][1]),
           *[(g, problem.growth_dof[q]) for q, g in growth.items()]]
    s = band.combine(*[sd for sd, _ in sds])
    dof = band.satterthwaite(sds)
    return np.expm1(band.quantile(problem.level, dof) * s)


def _parts_after(problem: _Problem, state: _State, rows: np.ndarray) -> Parts:
    """Coefficient, choice and growth parts at the target if each of ``rows`` were measured next
    (all of ``rows`` at once; ``rows`` empty: the parts now).

    Parameters
    ----------
    problem : _Problem
    state : _State
        The runs chosen so far, as if measured.
    rows : ndarray of int
        Rows of ``problem.X``.

    Returns
    -------
    tuple
        ``(coef, choice, growth)``: one value per row (one value for empty ``rows``), growth by parameter.
    """
    n = len(rows) if len(rows) else 1
    y_t = problem.y_t
    if state.covariance is not None:
        C = state.covariance
        now = float(problem.a_t @ C @ problem.a_t)
        if len(rows):
            Ca = problem.A_x[rows] @ C  # (R, k)
            v = (problem.sigma * problem.y_x[rows]) ** 2
            gain = (Ca @ problem.a_t) ** 2 / (v + np.einsum("ij,ij->i", Ca, problem.A_x[rows]))
            coef = np.sqrt(np.maximum(now - np.nan_to_num(gain), 0.0)) / y_t
        else:
            coef = np.full(n, math.sqrt(max(now, 0.0)) / y_t)
    else:
        coef = np.full(n, float(np.asarray(problem.parts[2][0]).ravel()[0]))
    if problem.has_alternatives:
        w = state.weights[None, :] * (problem.keep[rows] if len(rows) else 1.0)
        w = np.broadcast_to(w, (n, len(state.weights)))
        choice = np.sqrt((w * problem.r_t ** 2).sum(axis=1) / max(problem.n_counted, 1))
    else:
        choice = np.zeros(n)
    growth = {}
    above = _above_after(problem, state, rows)
    for q, per_doubling in problem.growth.items():
        low, high = state.ranges[q]
        if len(rows):
            x = problem.X[q].to_numpy(float)[rows]
            low, high = np.minimum(low, x), np.maximum(high, x)
        d = band.doublings_beyond({q: np.full(n, float(problem.target[q]))}, {q: (low, high)})[q]
        growth[q] = per_doubling * (np.maximum(d, above[q]) if q in above else d)
    return coef, choice, growth


def _above_after(problem: _Problem, state: _State, rows: np.ndarray) -> dict[str, np.ndarray]:
    """How far the target lies above the runs (:func:`automodel.solve.band.doublings_beyond_frontier`) if
    each of ``rows`` were measured next: from the nearest of the corners so far and the row itself."""
    names = [q for q in state.corners if q in problem.growth]
    if not names:
        return {}
    target = {q: np.array([float(problem.target[q])]) for q in names}
    growth = [problem.growth[q] for q in names]
    now = band.doublings_above(target, state.corners, names)[:, 0, :]  # (q, corners)
    best = now[:, int(np.argmin(band.growth_cost(now, growth)))]
    if not len(rows):
        return {q: best[i:i + 1] for i, q in enumerate(names)}
    run = band.doublings_above(target, {q: problem.X[q].to_numpy(float)[rows] for q in names}, names)[:, 0, :]
    closer = band.growth_cost(run, growth) < band.growth_cost(best[:, None], growth)
    return {q: np.where(closer, run[i], best[i]) for i, q in enumerate(names)}


def _measured(problem: _Problem, state: _State, i: int) -> _State:
    """The state after candidate ``i`` is run and measured as the model predicts it: its range extended,
    the coefficients' covariance updated (Sherman-Morrison), the alternatives reweighted."""
    ranges = dict(state.ranges)
    for q in problem.growth:
        low, high = ranges[q]
        ranges[q] = (min(low, float(problem.X[q].iloc[i])), max(high, float(problem.X[q].iloc[i])))
    covariance = state.covariance
    if covariance is not None:
        Ca = problem.A_x[i] @ covariance
        covariance = covariance - np.outer(Ca, Ca) / ((problem.sigma * problem.y_x[i]) ** 2 + Ca @ problem.A_x[i])
    weights = state.weights * problem.keep[i] if problem.has_alternatives else state.weights
    corners = {q: np.append(v, float(problem.X[q].iloc[i])) for q, v in state.corners.items()}
    return _State(ranges, covariance, weights, corners)


def _band_now(problem: _Problem, width: float) -> dict[str, float]:
    """The band at the target before any run: ``predicted``, ``lower``, ``upper`` and ``width``."""
    parts = problem.parts
    lo, hi = band.bounds(np.array([problem.y_t]), band.combine(*[float(np.asarray(s).ravel()[0]) for s, _ in parts]),
                         problem.level, band.satterthwaite(parts))
    return {"predicted": problem.y_t, "lower": float(lo[0]), "upper": float(hi[0]), "width": width}


def plan_runs(model: Model, target: Mapping[str, float], candidates: pd.DataFrame, count: int = 5,
              budget: float | None = None, reps: int = 1, level: float = 0.9, tested: pd.DataFrame | None = None
              ) -> tuple[list[Suggestion], dict]:
    """The greedy batch of the module doc: up to ``count`` distinct rows of ``candidates`` (canonical
    columns; a ``measured`` column marks the ones already run), each with the largest expected
    narrowing per core-hour given the ones before it, within ``budget`` core-hours in total.
    ``tested`` are the configurations the data already test (the measured ones; default: the
    candidates inside every training range): the alternatives' disagreement there is what they already
    survived (:func:`~automodel.suggestion.alternatives.untested`). Returns the suggestions and the band
    now (``predicted``, ``lower``, ``upper``, ``width``)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # a model file's 1e308s: inf, no warning
        return _plan(model, target, candidates, count, budget, reps, level, tested)


def _plan(model: Model, target: Mapping[str, float], candidates: pd.DataFrame, count: int, budget: float | None,
          reps: int, level: float, tested: pd.DataFrame | None) -> tuple[list[Suggestion], dict]:
    """:func:`plan_runs`, its arguments as given."""
    problem, state = _problem(model, target, candidates, reps, level, tested)
    current_parts = _parts_after(problem, state, np.array([], dtype=int))
    current = float(_width(problem, *current_parts)[0])
    summary = _band_now(problem, current)
    chosen: list[Suggestion] = []
    open_ = problem.usable.copy()
    spent = 0.0
    while len(chosen) < count:
        rows = np.flatnonzero(open_ & (problem.cost <= (math.inf if budget is None else budget - spent)))
        if not len(rows):
            break
        coef, choice, growth = _parts_after(problem, state, rows)
        after = _width(problem, coef, choice, growth)
        gain = current - after
        value = np.where(gain > 1e-9 * max(current, 1e-12), gain / np.maximum(problem.cost[rows], 1e-300), -np.inf)
        best = int(np.argmax(value))
        if not np.isfinite(value[best]):
            break
        i = int(rows[best])
        before = current_parts
        current_parts = (coef[best:best + 1], choice[best:best + 1], {q: g[best:best + 1] for q, g in growth.items()})
        alternatives = problem.has_alternatives
        reason = _reason(model, problem.X.iloc[i], before, current_parts, state.ranges,
                         problem.keep[i] if alternatives else None, problem.D[i] if alternatives else None,
                         problem.sigma)
        chosen.append(Suggestion({q: float(problem.X[q].iloc[i]) for q in model.params}, float(problem.cost[i]),
                                 float(after[best]), float(gain[best]), reason))
        spent += float(problem.cost[i])
        open_[i] = False
        state = _measured(problem, state, i)  # the state the next choice starts from
        current = float(after[best])
    return chosen, summary


def _reason(model: Model, x: pd.Series, before: Parts, after: Parts, ranges: Mapping[str, tuple[float, float]],
            keep: np.ndarray | None, D: np.ndarray | None, sigma: float) -> str:
    """Why a run was chosen: the parts of the band it shrinks most, in words."""
    drops = []
    g0 = band.combine(*[np.asarray(g) for g in before[2].values()]) if before[2] else np.zeros(1)
    g1 = band.combine(*[np.asarray(g) for g in after[2].values()]) if after[2] else np.zeros(1)
    extended = [q for q, (low, high) in ranges.items() if x[q] > high or x[q] < low]
    if extended:
        text = ", ".join(f"{model.roles.get(q, q)} to {x[q]:g} (measured up to {ranges[q][1]:g})"
                         if x[q] > ranges[q][1] else
                         f"{model.roles.get(q, q)} down to {x[q]:g} (measured from {ranges[q][0]:g})"
                         for q in extended)
        drops.append((float(g0[0] - g1[0]), f"extends {text}: the error growth beyond the data falls from "
                                            f"{float(g0[0]):.2g} to {float(g1[0]):.2g}"))
    if keep is not None and len(keep):
        c0, c1 = float(before[1][0]), float(after[1][0])
        spread = float(np.nanmax(np.abs(D)))
        drops.append((c0 - c1, f"the {len(keep)} equivalent candidates differ here by up to "
                               f"{np.expm1(spread):.0%} more than on the data (noise {sigma:.1%}): a run "
                               f"tells them apart "
                               f"(their spread at the target {c0:.2g} -> {c1:.2g})"))
    k0, k1 = float(before[0][0]), float(after[0][0])
    if k0 - k1 > 0:
        drops.append((k0 - k1, f"pins the coefficients (their part at the target {k0:.2g} -> {k1:.2g})"))
    drops.sort(key=lambda d: -d[0])
    said = [text for gain, text in drops if gain > 0.2 * max(drops[0][0], 1e-12)] if drops else []
    return "; ".join(said[:2]) if said else "a small narrowing of the coefficients' part"
