"""What to run next: the configurations that narrow the prediction band at a target most per core-hour.

The band of a fitted model at a target configuration ``t`` (:class:`~automodel.interval.Interval`,
:mod:`automodel.solve.band`) is the sum in quadrature of parts. One more run at a configuration ``x``
shrinks three of them; the run noise and the misfit stay:

growth
    ``g_q d_q(t)``, ``d_q`` the doublings by which ``t`` lies beyond the measured range of ``q``: a run
    at ``x`` extends the range to ``x_q`` (:func:`automodel.solve.band.doublings_beyond` with the range
    each candidate would leave).
choice
    the disagreement at ``t`` of the candidates the data cannot tell apart (``Interval.alternatives``).
    A run at ``x`` whose noise is ``sigma_x`` (one run and the misfit in quadrature, at least
    :data:`MIN_NOISE`) weighs alternative ``a`` by ``exp(-D_a(x)^2 / (2 sigma_x^2))``,
    ``D_a(x) = log(a(x) / yhat(x))``: the expected likelihood ratio of ``a`` against the chosen model
    after that run. Where the tied candidates agree (inside the data) a run tells them nothing; where
    they part ways (between the data and the target) it tells them apart. The part at ``t`` is the
    weighted root mean square of the alternatives' log ratios there.
coefficients
    ``sqrt(a_t' C a_t) / yhat(t)`` for a term model: one more row ``a_x`` in the least squares gives
    ``C' = C - C a_x a_x' C / (v_x + a_x' C a_x)`` (Sherman-Morrison), ``v_x = (sigma_x yhat(x))^2``.

A run costs ``reps * p * yhat(x)`` core-seconds (``p = 1`` for a model without ``p``). The batch is
chosen greedily (:func:`plan_runs`): the candidate with the largest narrowing of the band per core-hour
is taken, the parts are updated as if it had been measured, and the next is chosen given it, so a
batch does not buy the same information twice. The degrees of freedom of the parts stay those of the
fit (a new run adds one to the misfit's; not counted).

The adaptive-model seed automates the training experiments of each stage (adaptive-model-sanjay-
slides.txt, slides 18-22: single-processor runs, then 2, 4 and 8 processes); FiM calibrates from a
few measured configurations (fim-bhimani-2019.txt, sec. 2.4, Algorithm 1). Here the experiments are
chosen by what they are expected to teach the model about the target.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.data.cells import shown
from automodel.errors import DataError
from automodel.interval import DEFAULT_GROWTH, Interval
from automodel.model import Model
from automodel.solve import band
from automodel.space.terms import term_values
from automodel.terminal import WIDTH, wrap

__all__ = ["Suggestion", "Plan", "NothingToRun", "suggest", "plan_runs", "candidate_grid", "check_target", "MIN_NOISE",
           "LOAD_ROLES"]

#: the least relative noise a run is assumed to have (1 %): a simulator's deterministic times would
#: otherwise tell any two candidates apart at any distance
MIN_NOISE = 0.01
#: roles that are the machine's state, not a configuration: set to the target's value (default 1)
LOAD_ROLES = ("cpu", "bw")
#: at most this many candidate configurations are weighed (a grid beyond it is a typo)
MAX_CANDIDATES = 100_000


class NothingToRun(DataError):
    """No configuration meets the constraints (``why == "constraints"``) or fits the budget
    (``why == "budget"``): a one-line :class:`DataError` on the command line, a stop for a campaign."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Suggestion:
    """One configuration to run and what it is expected to buy.

    Attributes
    ----------
    config : dict
        Canonical parameter -> value.
    cost : float
        Expected core-hours: repetitions x p x the predicted time.
    width_after : float
        Expected relative half-width of the band at the target after this run (and the ones before it
        in the plan), e.g. 0.25 for +-25 %.
    narrowing : float
        The drop of the half-width this run is expected to bring (in the same units).
    reason : str
        Why, in words.
    """

    config: dict[str, float]
    cost: float
    width_after: float
    narrowing: float
    reason: str

    @property
    def per_core_hour(self) -> float:
        return self.narrowing / self.cost if self.cost > 0 else math.inf


@dataclass(frozen=True)
class Plan:
    """What :func:`suggest` returns: the band at the target now and the runs that narrow it."""

    target: dict[str, float]
    predicted: float
    lower: float
    upper: float
    width: float
    level: float
    suggestions: tuple[Suggestion, ...]
    n_candidates: int
    roles: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def cost(self) -> float:
        """Core-hours of every suggested run."""
        return float(sum(s.cost for s in self.suggestions))

    def frame(self) -> pd.DataFrame:
        """One row per suggestion: its parameters (the user's names), cost, band after, narrowing, reason."""
        rows = [{**{self.roles.get(q, q): v for q, v in s.config.items()}, "core_hours": s.cost,
                 "width_after": s.width_after, "narrowing": s.narrowing, "per_core_hour": s.per_core_hour,
                 "reason": s.reason} for s in self.suggestions]
        return pd.DataFrame(rows)

    def lines(self, width: int | None = WIDTH) -> list[str]:
        """The plan as text of at most ``width`` columns (None: no limit)."""
        where = ", ".join(f"{self.roles.get(q, q)}={v:g}" for q, v in self.target.items())
        out = [f"target {where}: predicted {self.predicted:.4g} s",
               f"  {self.level:.0%} band {self.lower:.4g} to {self.upper:.4g} s (+-{self.width:.0%})"]
        if not self.suggestions:
            out.append(f"no run of the {self.n_candidates} candidate configurations is expected to narrow it")
        else:
            out += ["", f"next {len(self.suggestions)} run(s) of {self.n_candidates} candidates, best value "
                        f"first ({self.cost:.3g} core-hours):"]
        for i, s in enumerate(self.suggestions, 1):
            config = " ".join(f"{self.roles.get(q, q)}={v:g}" for q, v in s.config.items())
            out.append(f"{i:>2}. {config}: {s.cost:.3g} core-h, band -> +-{s.width_after:.0%}")
            out += wrap(s.reason, width, "    ", "    ")
        out += [line for note in self.notes for line in wrap(f"note: {note}", width, "", "  ")]
        return out


def check_target(model: Model, target: Mapping[str, Any], max_p: float | None = None) -> dict[str, float]:
    """The target as canonical parameter -> value: every parameter of ``model`` (``cpu`` and ``bw``
    default to 1), given by its canonical or user name, a positive finite number, ``p`` a whole number
    no larger than ``max_p``; else a one-line :class:`DataError`."""
    names = {model.roles.get(q, q): q for q in model.params}
    out: dict[str, float] = {}
    for key, value in target.items():
        q = key if key in model.params else names.get(key)
        if q is None:
            raise DataError(f"target: unknown parameter {shown(key)}; the model has "
                            f"{', '.join(model.roles.get(q, q) for q in model.params)}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise DataError(f"target: {key} must be a number, got {shown(value)}") from None
        if not (math.isfinite(number) and number > 0):
            raise DataError(f"target: {key} must be a positive finite number, got {shown(value)}")
        out[q] = number
    for q in model.params:
        if q not in out:
            if q not in LOAD_ROLES:
                raise DataError(f"target: no value for {model.roles.get(q, q)}; give every parameter, "
                                f"e.g. {','.join(f'{model.roles.get(x, x)}=...' for x in model.params)}")
            out[q] = 1.0
    if "p" in out:
        if out["p"] != math.floor(out["p"]):
            raise DataError(f"target: p must be a whole number, got {out['p']:g}")
        if max_p is not None and out["p"] > max_p:
            raise DataError(f"target p={out['p']:g} is outside the allowed p (at most {max_p:g}); raise "
                            "--max-p or choose a smaller target")
    return {q: out[q] for q in model.params}


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
        given[q] = [float(v) for v in values]
    if p is not None:
        if "p" not in model.params:
            raise DataError("allowed p given, but the model does not depend on p")
        given["p"] = [float(v) for v in p]
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
    return _mark(frame, measured, model.params)


def _mark(frame: pd.DataFrame, measured: pd.DataFrame | None, params: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a column ``measured``: whether each configuration is one of ``measured``'s."""
    if measured is None or not len(frame):
        return frame.assign(measured=False)
    known = measured[list(params)].drop_duplicates().assign(_measured=True)
    hit = frame.merge(known, how="left", on=list(params))["_measured"]
    return frame.assign(measured=hit.notna().to_numpy())


def _listed(model: Model, target: Mapping[str, float], configurations: pd.DataFrame, p: Sequence[float] | None,
           max_p: float | None, measured: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of ``configurations`` (canonical columns, ``cpu`` and ``bw`` the target's when absent)
    that the allowed ``p`` and ``max_p`` admit, each once, marked ``measured`` as :func:`candidate_grid`."""
    frame = configurations.rename(columns={model.roles.get(q, q): q for q in model.params})
    out = {}
    for q in model.params:
        if q in frame:
            out[q] = pd.to_numeric(frame[q], errors="coerce").to_numpy(float)
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
    return _mark(table, measured, model.params)


@dataclass
class _State:
    """The parts of the band at the target that runs change, as if the chosen runs had been measured."""

    ranges: dict[str, tuple[float, float]]
    covariance: np.ndarray | None
    weights: np.ndarray  # of the alternatives


def _noise(interval: Interval) -> float:
    return max(math.hypot(interval.run, interval.misfit), MIN_NOISE)


def plan_runs(model: Model, target: Mapping[str, float], candidates: pd.DataFrame, count: int = 5,
              budget: float | None = None, reps: int = 1, level: float = 0.9, tested: pd.DataFrame | None = None
              ) -> tuple[list[Suggestion], dict]:
    """The greedy batch of the module doc: up to ``count`` distinct rows of ``candidates`` (canonical
    columns; a ``measured`` column marks the ones already run), each with the largest expected
    narrowing per core-hour given the ones before it, within ``budget`` core-hours in total.
    ``tested`` are the configurations the data already test (the measured ones; default: the
    candidates inside every training range): the alternatives' disagreement there is what they already
    survived (:func:`_untested`). Returns the suggestions and the band now (``predicted``, ``lower``,
    ``upper``, ``width``)."""
    iv = model.interval
    params = list(model.params)
    t_cols = pd.DataFrame({q: [float(target[q])] for q in params})
    X = candidates[params].reset_index(drop=True)
    with np.errstate(all="ignore"):
        y_t = float(np.asarray(model.core.predict(t_cols), float)[0])
        y_x = np.asarray(model.core.predict(X), float)
    if not (math.isfinite(y_t) and y_t > 0):
        raise DataError(f"the model predicts no positive time at the target ({y_t:g})")
    parts = iv.parts(t_cols, model.core, np.array([y_t]))
    fixed = [(float(np.asarray(s).ravel()[0]), nu) for s, nu in parts[:2]]  # run, misfit
    coef_dof, choice_dof = parts[2][1], parts[3][1]
    growth_q = [q for q in params if q in iv.ranges]
    growth_dof = {q: iv.growth_dof.get(q, 1.0) for q in growth_q}
    sigma = _noise(iv)
    p_x = X["p"].to_numpy(float) if "p" in X else np.ones(len(X))
    cost = reps * p_x * y_x / 3600.0
    usable = np.isfinite(y_x) & (y_x > 0)
    # the alternatives' log ratios at the candidates and at the target
    alts = list(iv.alternatives)
    D = _log_ratios(alts, X, model.core, y_x)
    r_t = _log_ratios(alts, t_cols, model.core, np.array([y_t]))[0]
    counted = np.isfinite(r_t)
    r_t = np.where(counted, r_t, 0.0)
    D = np.where(np.isfinite(D), D, 10.0)  # an alternative with no time there is told apart at once
    if tested is None:
        tested = X[_inside(X, iv.ranges)]
    survived = _log_ratios(alts, tested[params].reset_index(drop=True), model.core)
    measured = candidates["measured"].to_numpy(bool) if "measured" in candidates else np.zeros(len(X), bool)
    D = _untested(D, survived, measured)
    keep = np.exp(-D ** 2 / (2 * sigma ** 2))  # (X, A): expected weight each run leaves each alternative
    # term values for the coefficient part
    terms = getattr(model.core, "terms", None)
    cov = iv.covariance if (iv.covariance is not None and terms is not None
                            and np.isfinite(iv.covariance).all()) else None
    if cov is not None:
        a_t = term_values(list(terms), {q: t_cols[q].to_numpy(float) for q in params}, 1)[0]
        A_x = term_values(list(terms), {q: X[q].to_numpy(float) for q in params}, len(X))
        A_x = np.where(np.isfinite(A_x), A_x, 0.0)
    state = _State(dict(iv.ranges), cov, np.ones(len(alts)))

    def width_of(coef: np.ndarray, choice: np.ndarray, growth: dict[str, np.ndarray]) -> np.ndarray:
        sds = [*fixed, (coef, coef_dof), (choice, choice_dof), *[(g, growth_dof[q]) for q, g in growth.items()]]
        s = band.combine(*[sd for sd, _ in sds])
        dof = band.satterthwaite(sds)
        return np.expm1(band.quantile(level, dof) * s)

    def parts_after(state: _State, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Coefficient, choice and growth parts at the target if each of ``rows`` were measured next
        (all of ``rows`` at once; ``rows`` empty: the parts now)."""
        n = len(rows) if len(rows) else 1
        if state.covariance is not None:
            C = state.covariance
            now = float(a_t @ C @ a_t)
            if len(rows):
                Ca = A_x[rows] @ C  # (R, k)
                v = (sigma * y_x[rows]) ** 2
                gain = (Ca @ a_t) ** 2 / (v + np.einsum("ij,ij->i", Ca, A_x[rows]))
                coef = np.sqrt(np.maximum(now - np.nan_to_num(gain), 0.0)) / y_t
            else:
                coef = np.full(n, math.sqrt(max(now, 0.0)) / y_t)
        else:
            coef = np.full(n, float(np.asarray(parts[2][0]).ravel()[0]))
        if len(alts):
            w = state.weights[None, :] * (keep[rows] if len(rows) else 1.0)
            w = np.broadcast_to(w, (n, len(alts)))
            choice = np.sqrt((w * r_t ** 2).sum(axis=1) / max(int(counted.sum()), 1))
        else:
            choice = np.zeros(n)
        growth = {}
        for q in growth_q:
            low, high = state.ranges[q]
            if len(rows):
                x = X[q].to_numpy(float)[rows]
                low, high = np.minimum(low, x), np.maximum(high, x)
            d = band.doublings_beyond({q: np.full(n, float(target[q]))}, {q: (low, high)})[q]
            growth[q] = iv.growth.get(q, DEFAULT_GROWTH) * d
        return coef, choice, growth

    now_parts = parts_after(state, np.array([], dtype=int))
    width_now = float(width_of(*now_parts)[0])
    lo, hi = band.bounds(np.array([y_t]), band.combine(*[float(np.asarray(s).ravel()[0]) for s, _ in parts]),
                         level, band.satterthwaite(parts))
    summary = {"predicted": y_t, "lower": float(lo[0]), "upper": float(hi[0]), "width": width_now}
    chosen: list[Suggestion] = []
    open_ = usable.copy()
    spent = 0.0
    current, current_parts = width_now, now_parts
    while len(chosen) < count:
        rows = np.flatnonzero(open_ & (cost <= (math.inf if budget is None else budget - spent)))
        if not len(rows):
            break
        coef, choice, growth = parts_after(state, rows)
        after = width_of(coef, choice, growth)
        gain = current - after
        value = np.where(gain > 1e-9 * max(current, 1e-12), gain / np.maximum(cost[rows], 1e-300), -np.inf)
        best = int(np.argmax(value))
        if not np.isfinite(value[best]):
            break
        i = int(rows[best])
        before = current_parts
        current_parts = (coef[best:best + 1], choice[best:best + 1], {q: g[best:best + 1] for q, g in growth.items()})
        reason = _reason(model, X.iloc[i], before, current_parts, state, keep[i] if len(alts) else None, D[i]
                         if len(alts) else None, sigma)
        chosen.append(Suggestion({q: float(X[q].iloc[i]) for q in params}, float(cost[i]), float(after[best]),
                                 float(gain[best]), reason))
        spent += float(cost[i])
        open_[i] = False
        # measure it (as the model predicts it): the state the next choice starts from
        for q in growth_q:
            low, high = state.ranges[q]
            state.ranges[q] = (min(low, float(X[q].iloc[i])), max(high, float(X[q].iloc[i])))
        if state.covariance is not None:
            Ca = A_x[i] @ state.covariance
            state.covariance = state.covariance - np.outer(Ca, Ca) / ((sigma * y_x[i]) ** 2 + Ca @ A_x[i])
        if len(alts):
            state.weights = state.weights * keep[i]
        current = float(after[best])
    return chosen, summary


def _inside(X: pd.DataFrame, ranges: Mapping[str, tuple[float, float]]) -> np.ndarray:
    """Rows of ``X`` inside every training range."""
    ok = np.ones(len(X), bool)
    for q, (low, high) in ranges.items():
        if q in X:
            x = X[q].to_numpy(float)
            ok &= (x >= low * (1 - 1e-9)) & (x <= high * (1 + 1e-9))
    return ok


def _log_ratios(alternatives: Sequence[Any], X: pd.DataFrame, core: Any, yhat: np.ndarray | None = None
                ) -> np.ndarray:
    """(rows, alternatives) ``log(a(x) / yhat(x))``; ``yhat`` defaults to ``core``'s prediction. NaN where
    either is not a positive time."""
    if not alternatives or not len(X):
        return np.zeros((len(X), len(alternatives)))
    with np.errstate(all="ignore"):
        y = np.asarray(core.predict(X), float) if yhat is None else yhat
        return np.column_stack([band.log_ratio(np.asarray(a.predict(X), float), y) for a in alternatives])


def _untested(D: np.ndarray, survived: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """The alternatives' log ratios ``D`` (rows x alternatives) less what the data already tested: the
    largest ``|log ratio|`` of each alternative at the tested configurations (``survived``, rows x
    alternatives) is the disagreement it survived (the misfit absorbs it), so only the excess tells it
    apart; 0 at the ``measured`` rows themselves (a repeat tests nothing new).

    Examples
    --------
    >>> _untested(np.array([[0.02], [0.30], [-0.05]]), np.array([[0.02]]), np.array([True, False, False])
    ...           ).round(2).tolist()
    [[0.0], [0.28], [-0.03]]
    """
    finite = np.where(np.isfinite(survived), np.abs(survived), 0.0)
    tested = finite.max(axis=0) if len(finite) else np.zeros(D.shape[1])
    out = np.sign(D) * np.maximum(np.abs(D) - tested[None, :], 0.0)
    return np.where(measured[:, None], 0.0, out)


def _reason(model: Model, x: pd.Series, before: tuple, after: tuple, state: _State, keep: np.ndarray | None,
            D: np.ndarray | None, sigma: float) -> str:
    """Why a run was chosen: the parts of the band it shrinks most, in words."""
    drops = []
    g0 = band.combine(*[np.asarray(g) for g in before[2].values()]) if before[2] else np.zeros(1)
    g1 = band.combine(*[np.asarray(g) for g in after[2].values()]) if after[2] else np.zeros(1)
    extended = [q for q, (low, high) in state.ranges.items() if x[q] > high or x[q] < low]
    if extended:
        text = ", ".join(f"{model.roles.get(q, q)} to {x[q]:g} (measured up to {state.ranges[q][1]:g})"
                         if x[q] > state.ranges[q][1] else
                         f"{model.roles.get(q, q)} down to {x[q]:g} (measured from {state.ranges[q][0]:g})"
                         for q in extended)
        drops.append((float(g0[0] - g1[0]), f"extends {text}: the error growth beyond the data falls from "
                                            f"{float(g0[0]):.2g} to {float(g1[0]):.2g}"))
    if keep is not None and len(keep):
        c0, c1 = float(before[1][0]), float(after[1][0])
        spread = float(np.nanmax(np.abs(D)))
        drops.append((c0 - c1, f"the {len(keep)} equivalent candidates differ here by up to "
                               f"{math.expm1(spread):.0%} more than on the data (noise {sigma:.1%}): a run "
                               f"tells them apart "
                               f"(their spread at the target {c0:.2g} -> {c1:.2g})"))
    k0, k1 = float(before[0][0]), float(after[0][0])
    if k0 - k1 > 0:
        drops.append((k0 - k1, f"pins the coefficients (their part at the target {k0:.2g} -> {k1:.2g})"))
    drops.sort(key=lambda d: -d[0])
    said = [text for gain, text in drops if gain > 0.2 * max(drops[0][0], 1e-12)] if drops else []
    return "; ".join(said[:2]) if said else "a small narrowing of the coefficients' part"


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
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise DataError(f"count must be a whole number >= 1, got {shown(count)}")
    if budget is not None and not (_real(budget) and math.isfinite(budget) and budget > 0):
        raise DataError(f"budget must be a positive number of core-hours, got {shown(budget)}")
    if max_p is not None and not (_real(max_p) and max_p >= 1):
        raise DataError(f"max_p must be a number >= 1, got {shown(max_p)}")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise DataError(f"reps must be a whole number >= 1, got {shown(reps)}")
    model, measured = _model_of(source, fit_options)
    if model.interval is None:
        raise DataError("the model has no prediction band (fit it with intervals, or give the runs)")
    goal = check_target(model, target, max_p)
    if configurations is not None:
        candidates = _listed(model, goal, configurations, allowed_p, max_p, measured)
    else:
        candidates = candidate_grid(model, goal, grid, allowed_p, max_p, measured)
    if new_only:
        candidates = candidates[~candidates["measured"]]
    if exclude is not None and len(exclude):
        gone = _mark(candidates[list(model.params)], exclude.rename(
            columns={model.roles.get(q, q): q for q in model.params}).astype(float), model.params)["measured"]
        candidates = candidates[~gone.to_numpy()]
    if not len(candidates):
        raise NothingToRun("no configuration meets the constraints (allowed p, max p, grid"
                           f"{', not yet measured' if new_only else ''})", "constraints")
    notes: list[str] = []
    tested = None if measured is None else measured[list(model.params)].drop_duplicates()
    suggestions, now = plan_runs(model, goal, candidates, count, budget, reps, level, tested)
    if budget is not None and not suggestions:
        with np.errstate(all="ignore"):
            y = np.asarray(model.core.predict(candidates[list(model.params)]), float)
        cost = reps * (candidates["p"].to_numpy(float) if "p" in candidates else 1.0) * y / 3600
        if not (np.isfinite(cost) & (cost <= budget)).any():
            cheapest = float(np.nanmin(np.where(np.isfinite(cost) & (cost > 0), cost, np.nan)))
            raise NothingToRun(f"no configuration fits the budget of {budget:g} core-hours: the cheapest of "
                               f"{len(candidates)} costs {cheapest:.3g}", "budget")
    if "p" in model.params and max_p is None and allowed_p is None:
        notes.append("process counts up to the target's; --max-p or --p limit them")
    return Plan(goal, now["predicted"], now["lower"], now["upper"], now["width"], level, tuple(suggestions),
                len(candidates), {q: model.roles.get(q, q) for q in model.params}, tuple(notes))


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
