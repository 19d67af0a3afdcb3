"""An adaptive campaign: fit the runs, ask :func:`automodel.suggest` what to run next, run it, repeat.

It stops when the band at the target is no wider than ``until`` (a relative half-width, 0.15 for
+-15 %) on two successive fits, when the core-hours spent (the seed runs included) reach ``budget``, or
when no allowed run is expected to narrow the band within what is left.

The band at the target is the model's, widened to the forward-validation error of the runs just made:
each batch was predicted by the previous fit before it was run, so how far off that fit was on them is
out-of-sample evidence the model's own band (fitted on the runs it explains) does not have. A campaign
therefore never stops on the first fit that happens to be confident: the narrow band must survive a
batch of runs it did not see (they fall within ``until`` of its predictions) and the refit with them.

Running is a callback (``measure``), so the same loop drives ``automodel run --adaptive``
(:mod:`automodel.cli.run`: each run appended to the CSV and resumed as a grid campaign is), the replays
of measured sweeps in ``benchmarks/adaptive.py`` and the SMPI simulations of ``benchmarks/adaptive_smpi.py``.
Suggestions never repeat a measured configuration (``new_only``), so a resumed campaign that refits
the same runs asks for the same next ones and never runs one twice.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from automodel.errors import DataError
from automodel.fitting import fit
from automodel.suggestion import NothingToRun, NoTimeAtTarget, check_target, suggest
from automodel.suggestion.candidates import target_values
from automodel.suggestion.facade import check_options, check_runs
from automodel.suggestion.greedy import seconds

__all__ = ["Step", "Outcome", "adaptive", "check_campaign", "core_hours", "seed_design", "forward_error", "widened", "STOPS"]

#: why a campaign stopped
STOPS = {"until": "the band at the target was narrow enough on two successive fits", "budget": "the budget is spent",
         "nothing": "no allowed run is expected to narrow the band within the budget",
         "steps": "the most steps allowed were made"}


def core_hours(runs: pd.DataFrame, unit: str = "s") -> float:
    """Core-hours the runs took: the sum of ``p x time`` (``p = 1`` without a p column, ``time`` in
    ``unit``: ``s``, ``ms``, ``us``, ``ns``) / 3600.

    Examples
    --------
    >>> core_hours(pd.DataFrame({"p": [2, 4], "time": [900.0, 450.0]})), core_hours(pd.DataFrame({"time": [3.6e6]}), "ms")
    (1.0, 1.0)
    """
    t = runs["time"].to_numpy(float)
    p = runs["p"].to_numpy(float) if "p" in runs else np.ones(len(t))
    return float(np.nansum(p * t) * seconds(unit) / 3600.0)


def seed_design(levels: Mapping[str, Sequence[float]], first: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The cheap first runs of a campaign: the smallest levels of each parameter, crossed (``first``:
    how many of each; default the 3 smallest of every parameter and the 4 smallest p, the seed's
    single-processor, 2, 4 and 8 process runs, adaptive-model-sanjay-slides.txt, slide 19).

    Examples
    --------
    >>> seed_design({"n": [4, 1, 2, 3], "p": [1, 2, 4, 8, 16]}).shape
    (12, 2)
    """
    first = {**{q: (4 if q == "p" else 3) for q in levels}, **(first or {})}
    axes = {q: sorted(float(v) for v in set(values))[:first[q]] for q, values in levels.items()}
    index = pd.MultiIndex.from_product(list(axes.values()), names=list(axes))
    return index.to_frame(index=False)


@dataclass(frozen=True)
class Step:
    """The campaign after one fit: its runs, cost, the band at the target and what it runs next."""

    index: int
    n_runs: int
    core_hours: float
    predicted: float
    lower: float
    upper: float
    width: float
    formula: str
    next: tuple[dict[str, float], ...] = ()
    unit: str = "s"
    forward: float = math.nan
    model_width: float = math.nan

    def line(self, roles: Mapping[str, str] | None = None, width: int = 80) -> str:
        """``step 2: 16 runs, 0.0021 core-h; target 0.0121 s (+-35%)`` and, on lines of at most ``width``
        columns below it, ``  next: n=4e+05 p=16, ...``."""
        roles = roles or {}
        at = (f"{self.predicted:.4g} {self.unit} (+-{self.width:.0%})" if math.isfinite(self.predicted) else
              "no positive time predicted (the runs nearest it test the model)")
        head = f"step {self.index}: {self.n_runs} runs, {self.core_hours:.3g} core-h; target {at}"
        if math.isfinite(self.forward):
            head += f"; last runs {self.forward:.0%} off"
        head = "\n".join(textwrap.wrap(head, width, subsequent_indent="    ", break_on_hyphens=False))
        if not self.next:
            return head
        runs = ", ".join(" ".join(f"{roles.get(q, q)}={v:g}" for q, v in c.items()) for c in self.next)
        return "\n".join([head, *textwrap.wrap(f"next: {runs}", width, initial_indent="  ",
                                                subsequent_indent="    ", break_on_hyphens=False)])

    def record(self) -> dict[str, Any]:
        return {"step": self.index, "runs": self.n_runs, "core_hours": self.core_hours,
                "predicted": self.predicted, "lower": self.lower, "upper": self.upper, "width": self.width,
                "formula": self.formula,
                "next": "; ".join(" ".join(f"{q}={v:g}" for q, v in c.items()) for c in self.next),
                "forward": self.forward, "model_width": self.model_width}


@dataclass
class Outcome:
    """What :func:`adaptive` did: every step, why it stopped, the runs and the last fit."""

    steps: list[Step]
    stop: str
    runs: pd.DataFrame
    result: Any = None

    def history(self) -> pd.DataFrame:
        return pd.DataFrame([s.record() for s in self.steps])


def adaptive(runs: pd.DataFrame, measure: Callable[[pd.DataFrame], pd.DataFrame], target: Mapping[str, float], *,
             until: float | None = None, budget: float | None = None, count: int = 3,
             allowed_p: Sequence[float] | None = None, max_p: float | None = None,
             grid: Mapping[str, Sequence[float]] | None = None, configurations: pd.DataFrame | None = None,
             level: float = 0.9, max_steps: int = 50, on_step: Callable[[Step], None] | None = None,
             last_width: float = math.nan, **fit_options: Any) -> Outcome:
    """Fit ``runs``, run the suggested configurations through ``measure``, refit, until a stop (module doc).

    Parameters
    ----------
    runs : DataFrame
        The runs so far (canonical columns ``n``, ``p``, ... and ``time``): the seed, or a resumed
        campaign's.
    measure : callable
        Takes the configurations to run (a DataFrame of parameter columns) and returns their runs
        (the same columns and ``time``; a failed run may be left out).
    until : float, optional
        Stop when the band's relative half-width at the target (widened to the forward-validation
        error of the last batch, :func:`widened`) is at most this (0.15: +-15 %) on two successive fits.
    budget : float, optional
        Core-hours the whole campaign may spend, the runs given included.
    count : int
        Runs per step.
    allowed_p, max_p, grid, configurations, level :
        As :func:`automodel.suggest`.
    last_width : float, optional
        The width at the target of the last step of the campaign being resumed (its history): when
        within ``until``, a first fit that still is stops the campaign (the two successive fits).

    Raises
    ------
    DataError
        Neither ``until`` nor ``budget``, or one that is not a positive number; and what
        :func:`automodel.suggest` refuses.
    """
    _check_stops(until, budget)
    steps: list[Step] = []
    result, stop = None, "steps"
    failed = pd.DataFrame()  # configurations run that gave no time: never asked for again
    previous, new = None, None  # the fit before the runs just made, and those runs
    was_narrow = until is not None and last_width <= until
    for index in range(max_steps):
        result = fit(runs, **{"progress": False, **fit_options})
        spent = core_hours(runs, result.best.unit)
        left = None if budget is None else budget - spent
        where = dict(allowed_p=allowed_p, max_p=max_p, grid=grid, budget=left, configurations=configurations,
                     exclude=failed)
        try:
            plan = _plan(result, target, count, level, index == 0, **where)
            # the band without a plan: the fitted model's own
            band = _band(result.best, target, level) if plan is None else (
                plan.predicted, plan.lower, plan.upper, plan.width)
        except NoTimeAtTarget:  # no band at the target yet: the runs nearest it test the model (below)
            plan, band = None, (math.nan, math.nan, math.nan, math.inf)
        forward = math.nan if previous is None else forward_error(previous, new)
        narrow = until is not None and widened(band, forward)[3] <= until
        reached, was_narrow = narrow and was_narrow, narrow
        chosen = () if reached or plan is None else tuple(s.config for s in plan.suggestions)
        # a band narrow by the fit's account (the last runs may widen it: `narrow` implies this) that no
        # run is expected to narrow further, or no band at all: test the model with the runs nearest the target
        if (((until is not None and band[3] <= until) or not math.isfinite(band[0])) and not reached and not chosen
                and (left is None or left > 0)):
            chosen = check_runs(result, target, count=count, **where)
        step = Step(index, len(runs), spent, *widened(band, forward), result.best.formula, chosen,
                    result.best.unit, forward, band[3])
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if reached:
            stop = "until"
            break
        if left is not None and left <= 0:
            stop = "budget"
            break
        if not chosen:
            stop = "nothing"
            break
        asked = pd.DataFrame(list(chosen))
        new = measure(asked)
        got = asked.merge(new[list(asked.columns)].drop_duplicates(), how="left", indicator=True)
        failed = pd.concat([failed, asked[(got["_merge"] == "left_only").to_numpy()]], ignore_index=True)
        runs = pd.concat([runs, new[[c for c in runs.columns if c in new]]], ignore_index=True)
        previous = result.best
    return Outcome(steps, stop, runs, result)


def forward_error(model: Any, new: pd.DataFrame | None) -> float:
    """The largest relative error of ``model``'s predictions of runs it was not fitted on (``new``, the
    batch just made): ``max |time / predicted - 1|``; NaN without such runs or a positive prediction.

    Examples
    --------
    >>> from automodel.model.core import Model, TermModel
    >>> from automodel.space.terms import ONE, power
    >>> m = Model(TermModel((ONE, power("p", -1)), (1.0, 8.0)), ("p",), {"p": "p", "time": "time"}, {"p": [1.0, 8.0]})
    >>> round(forward_error(m, pd.DataFrame({"p": [16.0, 32.0], "time": [1.5, 1.5]})), 3)
    0.2
    """
    if new is None or not len(new):
        return math.nan
    try:
        y = np.asarray(model.predict(new), float)
    except DataError:
        return math.nan
    err = np.abs(new["time"].to_numpy(float) / y - 1.0)
    ok = np.isfinite(err) & (y > 0)
    return float(err[ok].max()) if ok.any() else math.nan


def widened(band: tuple[float, float, float, float], forward: float) -> tuple[float, float, float, float]:
    """The band ``(predicted, lower, upper, width)`` widened to a relative half-width of at least the
    forward-validation error ``forward`` (NaN: unchanged).

    Examples
    --------
    >>> widened((1.0, 0.9, 1.1, 0.1), 0.25)
    (1.0, 0.8, 1.25, 0.25)
    >>> widened((1.0, 0.9, 1.1, 0.1), float("nan"))
    (1.0, 0.9, 1.1, 0.1)
    """
    y, lo, hi, width = band
    if not math.isfinite(forward) or forward <= width:
        return band
    return y, min(lo, y / (1.0 + forward)), max(hi, y * (1.0 + forward)), forward


def check_campaign(params: Sequence[str], target: Mapping[str, float], *, until: float | None = None,
                   budget: float | None = None, count: int = 3, max_p: float | None = None) -> dict[str, float]:
    """What :func:`adaptive` would refuse of its options, checked before any run: the stops, the runs per
    step and the target, on the parameters the fits will have (``params``, canonical names; a target that
    misses one or names another, or a ``p`` of 0.5, was refused only after the seed had run). Returns the
    target as :func:`automodel.suggestion.candidates.target_values` does.

    Raises
    ------
    DataError
        In one line; nothing has run.
    """
    _check_stops(until, budget)
    check_options(count, None, max_p, 1)
    return target_values(params, {}, target, max_p)


def _check_stops(until: float | None, budget: float | None) -> None:
    """Refuse a campaign without a stop, or with a width or budget that is not a positive number.

    Raises
    ------
    DataError
        In one line.
    """
    if until is None and budget is None:
        raise DataError("an adaptive campaign needs --until WIDTH% or --budget CORE_HOURS (or both)")
    if until is not None and not (math.isfinite(until) and until > 0):
        raise DataError(f"until must be a positive width, e.g. 15%, got {until:g}")
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise DataError(f"budget must be a positive number of core-hours, got {budget:g}")


def _plan(result: Any, target: Mapping[str, float], count: int, level: float, first: bool,
          **where: Any) -> Any:
    """:func:`automodel.suggest`'s plan (new runs only), or None when all was run or nothing left fits the
    budget (``where["budget"]``, what is left; none at or below 0): a stop, not an error.

    Raises
    ------
    NothingToRun
        No configuration meets the constraints at the first step (bad input, not a stop).
    """
    if where["budget"] is not None and where["budget"] <= 0:
        return None
    try:
        return suggest(result, target, count=count, level=level, new_only=True, **where)
    except NothingToRun as exc:
        if exc.why == "constraints" and first:
            raise
        return None


def _band(model: Any, target: Mapping[str, float], level: float) -> tuple[float, float, float, float]:
    """Prediction, band ends and relative half-width at the target, from the model itself."""
    frame = pd.DataFrame({q: [v] for q, v in check_target(model, target).items()})
    y = float(model.predict(frame)[0])
    if not y > 0:
        raise NoTimeAtTarget(f"the model predicts no positive time at the target ({y:g})")
    lo, hi = model.predict_interval(frame, level=level)
    return y, float(lo[0]), float(hi[0]), float(hi[0] / y - 1.0)
