"""Calibrate the prediction band of fitted models: the parts of :class:`~automodel.model.interval.Interval`.

Inside the data, a model's band comes from the fit itself (:func:`fit_parts`): the repetition noise
of one run, the misfit left in the residuals of the aggregated times beyond the noise of an
aggregate, and the coefficient covariance of a term model. The candidates the data cannot tell apart
(the ``equivalent`` rows of :mod:`automodel.search.select`) travel with the model: their disagreement
beyond the data is part of the band.

Beyond the data, errors grow faster than any of those predict: a wrong exponent is invisible inside
the range and costs more with every doubling. :func:`forward_growth` measures that on the training
data itself, the way a user meets it: for each parameter it keeps the runs up to half (a quarter, an
eighth, ...: every split the levels allow, :data:`SPLIT_DOUBLINGS`) of its largest value, when at least
:data:`MIN_SPLIT_LEVELS` levels remain, refits and reselects the
search's final candidates on them (one batched :func:`~automodel.search.score.score` per split),
predicts the dropped runs and compares their squared log errors with what the band inside the data
explains. The excess per squared doubling, shrunk towards :data:`~automodel.model.interval.DEFAULT_GROWTH`
with weight :data:`PRIOR_WEIGHT`, is the growth of that parameter; a parameter without a split gets
the prior alone.

The excess of each split is a moment estimate of a variance, and is taken as zero where it comes out
negative, as DerSimonian and Laird (*Controlled Clinical Trials* 7, 1986, eq. 3) truncate the
between-study variance: a split that kept two levels has a band so wide, its coefficients being
barely measured, that the held-out runs fall well inside it, and its negative excess would cancel the
prior and the other split. It did so on the demo runs (trained at p <= 8): the growth in p came out 0,
and 10 of the 20 held-out configurations at p = 16 to 256 fell outside a band of +-3 %
(benchmarks/RESULTS.md, issue 36, 2026-11-29 05:00 UTC).

Each split is **one observation** of the growth, however many runs it holds out: they are predicted by
one refit, so a wrong exponent moves all of them together, and twelve held-out configurations of a grid
say about as much as one. The growth is therefore the splits' mean excess per squared doubling (each
split's sums divided by its number of held-out configurations), shrunk towards the prior as if the
prior were :data:`PRIOR_WEIGHT` more splits. Counted per run, a grid's few splits outweighed the prior
six to one, and the bands of the development corpus held 75 % (real runs) and 68 % (programs simulated
by others) of the held-out runs, the error beyond the data growing about three times faster than the
bands did. The Student-t of that part keeps the held-out configurations as its degrees of freedom:
counting splits there too (a t of about 4 degrees of freedom) widened every band far out and scored
worse by the interval score (Gneiting and Raftery 2007, eq. 43) on the typical task of every suite
(benchmarks/RESULTS.md, issue 36, 2026-11-29 06:30 UTC).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from automodel.data import Dataset, aggregate_se, configuration_se
from automodel.model.interval import DEFAULT_GROWTH, MAX_ALTERNATIVES, Interval
from automodel.model.core import Core, TermModel, predict_many, term_batches
from automodel.options import MAD_TO_SIGMA, ROLE_NAMES, ROW_BUDGET, FitOptions, weights
from automodel.solve.metrics import METRICS
from automodel.search.score import TermCache, score
from automodel.space.structure import Structure
from automodel.space.terms import caps_measured
from automodel.search.choice import (choose, description_lengths, log_predictions, probe_values, term_ceiling,
                                     term_lengths)
from automodel.data.splits import holdout_rows
from automodel.data.repetitions import MIN_NOISE_DOF
from automodel.solve import band

__all__ = ["FitParts", "fit_parts", "run_noise", "aggregate_noise", "forward_growth", "calibrate", "kernel_intervals",
           "MIN_SPLIT_LEVELS", "SPLIT_DOUBLINGS", "PRIOR_WEIGHT", "measured_frontier"]

#: a parameter needs this many levels left after a split (two: a forward split of a parameter measured
#: at three levels, 32, 64 and 128, is worth more than the prior alone)
MIN_SPLIT_LEVELS = 2
#: the forward splits keep the runs up to the largest value over 2^d, for each d here that leaves
#: :data:`MIN_SPLIT_LEVELS` levels and keeps other runs than the split before: every split the levels
#: allow, up to 256x below the largest value (a bound on the refits of a parameter measured over many
#: orders of magnitude)
SPLIT_DOUBLINGS = tuple(range(1, 9))
#: weight of the prior growth :data:`~automodel.model.interval.DEFAULT_GROWTH`, in squared doublings (as
#: many forward splits whose held-out runs lie one doubling beyond the kept ones)
PRIOR_WEIGHT = 2.0


@dataclass(frozen=True)
class FitParts:
    """The in-data parts of a band (see :class:`~automodel.model.interval.Interval`)."""

    run: tuple[float, int]
    misfit: float
    dof: int
    covariance: np.ndarray | None
    noise_seconds: float


def run_noise(runs: pd.DataFrame, params: tuple[str, ...]) -> tuple[float, int]:
    """Robust standard deviation of one run's ``log(time)`` about its configuration's.

    From the differences of successive repetitions of a configuration (each has standard deviation
    ``sigma * sqrt(2)``): ``MAD_TO_SIGMA * median(|d|) / sqrt(2)``, consistent for normal noise and
    robust, because timings have rare outliers (a preempted run) that would widen every band of a
    standard deviation. Returns it and the number of differences (``(0, 0)`` when nothing is repeated,
    or when fewer than :data:`~automodel.data.repetitions.MIN_NOISE_DOF` differences give no estimate:
    the one pair of a configuration run twice with a run 5x off made a run noise of 169 % on 1 degree
    of freedom and a band of 1.8e-7 to 195 s about 0.006 s; the misfit then holds the noise).
    """
    t = runs["time"].to_numpy(float)
    log_t = pd.Series(np.log(np.where(t > 0, t, np.nan)), index=runs.index)
    if params:
        diffs = log_t.groupby([runs[q] for q in params], sort=False).diff().to_numpy(float)
    else:
        diffs = log_t.diff().to_numpy(float)
    diffs = np.abs(diffs[np.isfinite(diffs)])
    if len(diffs) < MIN_NOISE_DOF:
        return 0.0, 0
    return float(MAD_TO_SIGMA * np.median(diffs) / np.sqrt(2.0)), len(diffs)


def aggregate_noise(frame: pd.DataFrame, aggregate: str) -> np.ndarray:
    """Relative standard error of each configuration's aggregated time (:func:`automodel.data.configuration_se`)."""
    time = frame["time"].to_numpy(float)
    return configuration_se(time, frame["spread"].to_numpy(float), frame["count"].to_numpy(float), aggregate) / time


def fit_parts(cores: list[Core], frame: pd.DataFrame, params: tuple[str, ...], weighting: str, aggregate: str,
              run: tuple[float, int], targets: np.ndarray | None = None) -> list[FitParts]:
    """The band's parts inside the data for each of ``cores`` fitted on the aggregated ``frame``.

    The misfit is the residual root mean square of ``log(y / yhat)`` on ``m - k`` degrees of freedom,
    less (in quadrature) the pooled standard error of the aggregates; a prediction that is not a
    positive time counts with its relative error. Term models are done together: each distinct term
    evaluated once, the coefficient covariances of one width in one batched pseudo-inverse.
    ``targets`` (m, len(cores)) gives each core its own times at the frame's points (many kernels; the
    aggregate noise is then left in the misfit), instead of the frame's ``time``. The cores are taken in
    chunks whose per-row arrays (times, predictions, residuals, weights) fit in :data:`ROW_BUDGET`.
    """
    step = max(1, ROW_BUDGET // max(8 * len(frame), 1))
    if len(cores) > step:
        return [part for lo in range(0, len(cores), step)
                for part in fit_parts(cores[lo:lo + step], frame, params, weighting, aggregate, run,
                                      None if targets is None else np.asarray(targets)[:, lo:lo + step])]
    y = frame["time"].to_numpy(float)[:, None] if targets is None else np.asarray(targets, float)
    y = np.broadcast_to(y, (len(frame), len(cores))).T  # (N, m): one row of times per core
    m = y.shape[1]
    k = np.array([int(c.n_coefficients) for c in cores])
    values, groups = term_batches(cores, {q: frame[q].to_numpy(float) for q in params}, m)
    pred = predict_many(cores, frame[list(params)], (values, groups))
    dof = np.maximum(m - k, 1)
    with np.errstate(all="ignore"):
        r = np.where(pred > 0, band.log_ratio(y, pred), (y - pred) / y)
    r = np.where(np.isfinite(r), r, 1.0)
    se2 = float(np.mean(aggregate_noise(frame, aggregate) ** 2)) if targets is None else 0.0
    misfit = np.sqrt(np.maximum((r ** 2).sum(axis=1) / dof - se2, 0.0))
    resid = np.where(np.isfinite(pred), y - pred, 0.0)
    noise = np.sqrt(np.mean(resid ** 2, axis=1))
    w = weights(y, weighting)
    covariance: list[np.ndarray | None] = [None] * len(cores)
    for members, columns_of, _ in groups.values():
        step = max(1, ROW_BUDGET // max(m * (columns_of.shape[1] + 1), 1))  # models whose rows fit at once
        for lo in range(0, len(members), step):
            part = slice(lo, lo + step)
            stack = np.moveaxis(values[:, columns_of[part]], 0, 1)  # (G, m, width)
            variance = (w[members[part]] * resid[members[part]] ** 2).sum(axis=1) / dof[members[part]]
            for i, cov in zip(members[part], band.coefficient_covariance(stack, w[members[part]], variance)):
                covariance[i] = cov
    return [FitParts(run, float(misfit[i]), int(dof[i]), covariance[i], float(noise[i])) for i in range(len(cores))]


def _interval(parts: FitParts, ranges: dict[str, tuple[float, float]],
              growth: dict[str, tuple[float, float, str]], alternatives: tuple[Core, ...],
              frontier: dict[str, tuple[float, ...]] | None = None) -> Interval:
    return Interval(parts.run[0], parts.misfit, parts.dof, ranges, {q: g[0] for q, g in growth.items()},
                    {q: g[2] for q, g in growth.items()}, parts.covariance, alternatives, parts.noise_seconds,
                    parts.run[1], {q: g[1] for q, g in growth.items()}, frontier or {})


def measured_frontier(frame: pd.DataFrame, params: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    """Each positive parameter's values at the measured configurations of ``frame`` that bound it from
    above (:func:`automodel.solve.band.frontier`); empty where one configuration does (a full grid: the
    box of the ranges says as much)."""
    names = [q for q in params if float(frame[q].min()) > 0]
    if not names:
        return {}
    corners = band.frontier(frame[names].to_numpy(float))
    return {} if len(corners) < 2 else {q: tuple(float(v) for v in corners[:, i]) for i, q in enumerate(names)}


def _ranges(frame: pd.DataFrame, params: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    return {q: (float(frame[q].min()), float(frame[q].max())) for q in params}


def forward_errors(ds: Dataset, opt: FitOptions, structures: list[Structure]) -> dict[str, tuple[float, float, int]]:
    """The forward splits of the module doc: for each parameter that has them, the sum over its splits
    of each split's mean excess squared log error beyond the in-data band and of each split's mean
    squared doublings beyond the kept runs (a split is one observation), the number of splits and the
    number of held-out configurations."""
    frame = ds.frame
    y = frame["time"].to_numpy(float)
    cache = TermCache(ds.columns(), ds.n_points)
    term_columns = np.full((len(structures), max((len(s.terms) for s in structures), default=0)), -1, np.intp)
    for i, s in enumerate(structures):  # each structure's terms in the cache, for the chooser's probes
        term_columns[i, :len(s.terms)] = [cache.index(t) for t in s.terms]
    lengths = term_lengths(cache.terms)
    sums: dict[str, list[float]] = {}
    with_loo = METRICS[opt.metric].leverages
    for q in ds.params:
        if q in ROLE_NAMES[2:] or not structures:
            continue
        x = frame[q].to_numpy(float)
        kept_before = len(x)
        for doublings in SPLIT_DOUBLINGS:
            keep = x <= x.max() / 2 ** doublings
            if x.min() <= 0 or len(np.unique(x[keep])) < MIN_SPLIT_LEVELS:
                break
            if int(keep.sum()) == kept_before:  # no level between: the same split again, not a new observation
                continue
            kept_before = int(keep.sum())
            m = int(keep.sum())
            kept_columns = {c: v[keep] for c, v in ds.columns().items()}
            # a cap placed where only the dropped runs measure the levelling would see the future
            fits = np.array([len(s.terms) < m and all(caps_measured(t, kept_columns) for t in s.terms)
                             for s in structures], bool)
            usable = [s for s, ok in zip(structures, fits) if ok]
            if not usable:
                continue
            hold = holdout_rows(ds, keep)  # the chooser's out-of-range validation, on the kept runs alone
            sc = score(cache, keep, y, usable, opt.weighting, opt.nonnegative, with_loo=with_loo, holdout=hold,
                       names=tuple(dict.fromkeys((opt.metric, *(["holdout"] if hold is not None else [])))))
            values = sc.metric(opt.metric)
            if not np.isfinite(values).any():
                continue
            kept_frame = frame[keep]
            noise_rel, noise_abs = (float(v) for v in aggregate_se(*(kept_frame[c].to_numpy(float) for c in (
                "time", "spread", "count")), ds.aggregate))  # as the search's own choice (fitting._fit_dataset)
            at = probe_values(cache.terms, kept_frame, ds.params)  # the choice fit makes, on the kept runs alone
            columns = term_columns[fits, :sc.coefficients.shape[1]]
            logs = log_predictions(at, columns, sc.coefficients)
            length = description_lengths(lengths, columns, sc.coefficients)
            chosen = choose(values, sc.n_terms, m, opt.metric, opt.selection, noise_rel, noise_abs, logs, length,
                            None if hold is None else sc.metric("holdout"), 0 if hold is None else int(hold.sum()),
                            term_ceiling(at))
            order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")
            cores = {i: TermModel.from_fit(usable[i].terms, sc.coefficients[i, :len(usable[i].terms)])
                     for i in [chosen.index, *[j for j in order if chosen.equivalent[j]][:MAX_ALTERNATIVES + 1]]}
            core = cores[chosen.index]
            alternatives = tuple(c for i, c in cores.items() if i != chosen.index)[:MAX_ALTERNATIVES]
            (parts,) = fit_parts([core], kept_frame, ds.params, opt.weighting, ds.aggregate, (0.0, 0))
            interval = _interval(parts, _ranges(kept_frame, ds.params), {p: (0.0, 1.0, "") for p in ds.params},
                                 alternatives)
            held = frame[~keep]
            columns = held[list(ds.params)].reset_index(drop=True)
            with np.errstate(all="ignore"):
                yhat = np.asarray(core.predict(columns), float)
            inside = interval.scale(columns, core, yhat, kind="mean")
            e = band.log_ratio(held["time"].to_numpy(float), yhat)
            d = band.doublings_beyond(columns, {q: interval.ranges[q]})[q]
            ok = np.isfinite(e) & np.isfinite(inside) & (d > 0)
            if not ok.any():
                continue
            excess = e[ok] ** 2 - inside[ok] ** 2 - aggregate_noise(held, ds.aggregate)[ok] ** 2
            n = int(ok.sum())  # the held-out runs share one refit: the split is one observation (module doc)
            total = sums.setdefault(q, [0.0, 0.0, 0.0, 0.0])
            total[0] += max(float(excess.sum()), 0.0) / n  # a variance component: never negative (module doc)
            total[1] += float((d[ok] ** 2).sum()) / n
            total[2] += 1
            total[3] += n
    return {q: (a, b, int(splits), int(n)) for q, (a, b, splits, n) in sums.items()}


def forward_growth(ds: Dataset, opt: FitOptions, structures: list[Structure]
                   ) -> dict[str, tuple[float, float, str]]:
    """The error gained per doubling beyond the data, per parameter: the forward splits'
    (:func:`forward_errors`) excess per squared doubling, shrunk towards
    :data:`~automodel.model.interval.DEFAULT_GROWTH` with weight :data:`PRIOR_WEIGHT`.

    Returns, for every parameter of ``ds``, the growth, its degrees of freedom (held-out configurations
    plus the prior's weight) and how it was found.
    """
    sums = forward_errors(ds, opt, structures)
    out = {}
    for q in ds.params:
        excess, squared, splits, count = sums.get(q, (0.0, 0.0, 0, 0))
        growth = float(np.sqrt(max(excess + PRIOR_WEIGHT * DEFAULT_GROWTH ** 2, 0.0) / (squared + PRIOR_WEIGHT)))
        source = (f"{int(count)} forward point(s) in {splits} split(s) and the prior {DEFAULT_GROWTH:g}" if count else
                  f"the prior {DEFAULT_GROWTH:g} (fewer than {MIN_SPLIT_LEVELS} levels below half the largest)")
        out[q] = (growth, count + PRIOR_WEIGHT, source)
    return out


def calibrate(ds: Dataset, opt: FitOptions, cores: list[Core], equivalent: np.ndarray,
              structures: list[Structure]) -> list[Interval]:
    """The band of every ranked model (``cores``, best first; ``equivalent`` marks the candidates the
    selection rule found statistically equivalent), with the growth measured on ``structures`` (the
    search's final candidates, best first) under the fit options ``opt``."""
    growth = forward_growth(ds, opt, structures)
    ranges = _ranges(ds.frame, ds.params)
    frontier = measured_frontier(ds.frame, ds.params)
    peers = [i for i in range(len(cores)) if equivalent[i]]
    run = run_noise(ds.runs, ds.params)
    parts = fit_parts(cores, ds.frame, ds.params, opt.weighting, ds.aggregate, run)
    return [_interval(part, ranges, growth, tuple(cores[j] for j in peers if j != i)[:MAX_ALTERNATIVES], frontier)
            for i, part in enumerate(parts)]


def kernel_intervals(cores: list[Core], ds: Dataset, opt: FitOptions, targets: np.ndarray) -> list[Interval]:
    """Bands of many kernels measured at the points of ``ds``: kernel ``i`` has model ``cores[i]`` and
    values ``targets[:, i]``.

    The in-data parts of :func:`fit_parts` for all kernels at once (the aggregate noise stays in the
    misfit; there is no separate run part), and the prior growth per doubling for every parameter: a
    forward split per kernel would cost a search per kernel, which the batched kernels avoid.
    """
    parts = fit_parts(cores, ds.frame, ds.params, opt.weighting, ds.aggregate, (0.0, 0), targets)
    growth = {q: (DEFAULT_GROWTH, PRIOR_WEIGHT, f"the prior {DEFAULT_GROWTH:g}: kernels are not split")
              for q in ds.params}
    ranges = _ranges(ds.frame, ds.params)
    frontier = measured_frontier(ds.frame, ds.params)
    return [_interval(part, ranges, growth, (), frontier) for part in parts]
