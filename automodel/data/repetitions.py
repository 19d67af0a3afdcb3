"""Repetitions combined: each configuration's aggregated time, the spread of its runs, and the noise
(standard errors) they imply.

Rows with identical parameters are repetitions; the fit uses the mean of those that are not outliers,
or their median where the noise is heavy-tailed (:func:`robust_means`; or the median, mean or min on
request), and the spread that goes with that aggregate is kept as the noise estimate
(:func:`aggregate_groups`, :func:`aggregate_se`). The one implementation for
:func:`automodel.data.load` and the kernels' groups (:mod:`automodel.kernels.groups`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automodel.options import MAD_TO_SIGMA

__all__ = ["configuration_se", "aggregate_se", "aggregate_groups", "median_spread", "robust_means", "BURST_FACTOR", "MIN_NOISE_DOF",
           "HEAVY_TAILS", "WIDE_NOISE", "OUTLIER_SCALES"]


def configuration_se(time: np.ndarray, spread: np.ndarray, count: np.ndarray, aggregate: str) -> np.ndarray:
    """Standard error of each configuration's aggregated time, in seconds (0 for a single run).

    The variance of a mean of ``c`` runs is ``sigma^2 / c``, that of a median about
    ``(pi / 2) sigma^2 / c`` (its asymptotic efficiency under normal errors).
    """
    factor = np.pi / 2 if aggregate in ("median", "robust") else 1.0  # robust: the median's, the wider
    return np.where(count > 1, np.sqrt(factor / np.maximum(count, 1)) * spread, 0.0)


def aggregate_se(time: np.ndarray, spread: np.ndarray, count: np.ndarray, aggregate: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Pooled standard error of aggregated times, relative and absolute, over axis 0 (configurations).

    The root mean square of :func:`configuration_se` over the repeated configurations (``count > 1``),
    0 when none is repeated, each variance clipped at :data:`BURST_FACTOR` times their median: one
    burst (a run 5x off among three repetitions, which the median aggregate resists) does not set the
    noise floor of every configuration, while data noisy everywhere keep their mean. 0 too when the
    repetitions give fewer than :data:`MIN_NOISE_DOF` degrees of freedom in all (one configuration run
    twice): there is no median to clip a burst at, and one pair a run 5x off in it set a noise of 84 %
    that tied 353 candidates and chose a constant; the fit's misfit then holds the noise. Columns (axis
    1, if any) are pooled separately: one dataset per column.

    Examples
    --------
    >>> [round(float(v), 4) for v in aggregate_se(np.array([2.0, 4.0]), np.array([0.2, 0.0]),
    ...                                          np.array([4, 1]), "mean")]
    [0.05, 0.1]
    """
    se = configuration_se(time, spread, count, aggregate)
    repeated = count > 1
    n = np.maximum(repeated.sum(axis=0), 1)

    def pooled(variance: np.ndarray) -> np.ndarray:
        # a column with no repeated configuration: zeros, not an all-NaN slice (whose RuntimeWarning a
        # catch_warnings around it let through when another thread changed the filters meanwhile)
        held = np.where(repeated.any(axis=0), np.where(repeated, variance, np.nan), 0.0)
        cap = BURST_FACTOR * np.nan_to_num(np.nanmedian(held, axis=0))
        return np.sqrt(np.where(repeated, np.minimum(variance, cap), 0.0).sum(axis=0) / n)

    measured = np.where(repeated, count - 1, 0).sum(axis=0) >= MIN_NOISE_DOF
    return np.where(measured, pooled((se / time) ** 2), 0.0), np.where(measured, pooled(se ** 2), 0.0)


#: the repetitions' degrees of freedom (runs less one, summed over the repeated configurations) below
#: which they give no noise estimate: a standard deviation from one degree of freedom is uncertain by
#: 70 % (the candidates' rule, :data:`automodel.search.select.MIN_DOF`), and no burst can be told from it
MIN_NOISE_DOF = 2
#: a configuration's variance counts at most this many times the median of the repeated ones in
#: :func:`aggregate_se`: about the 99.9th percentile of a variance estimated from 3 repetitions
#: relative to its median (chi-square on 2 degrees of freedom: 13.8 / 1.39)
BURST_FACTOR = 10.0


def aggregate_groups(y: np.ndarray, key: np.ndarray, how: str, pools: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Repetitions combined: the distinct ``key`` values (sorted), each one's aggregated time (``how``,
    one of :data:`automodel.options.AGGREGATES`), the spread of its repetitions (0 for one) and their
    count. The one implementation for :func:`automodel.data.load` and the kernels' groups.

    The spread is the scale that goes with the aggregate, so that the noise it implies
    (:func:`configuration_se`) is that of the time the fit sees: the standard deviation of the runs
    for the mean and the minimum, the normalised median absolute deviation for the median (a burst
    that the median resists does not widen its noise; Hoefler and Belli, *Scientific Benchmarking of
    Parallel Computing Systems*, SC15, sec. 3.1.2: medians and nonparametric spreads for run times),
    and for ``how="robust"`` (:func:`robust_means`) the standard deviation of the runs it kept or the
    normalised median absolute deviation where it took the median. ``pools`` (one label per run,
    default one pool) says which configurations share a noise scale (the kernels' groups: one pool per
    kernel).

    Examples
    --------
    >>> t, spread, n = aggregate_groups(np.array([1.0, 1.02, 5.0, 2.0, 2.2]), np.array([0, 0, 0, 1, 1]), "median")[1:]
    >>> t.round(3).tolist(), spread.round(3).tolist(), n.tolist()
    ([1.02, 2.1], [0.03, 0.148], [3, 2])
    """
    if how == "robust":
        return robust_means(y, key, np.zeros(len(y), int) if pools is None else pools)
    runs = pd.Series(y).groupby(key, sort=True)
    agg = runs.agg([how, "std", "size"])
    spread = median_spread(y, key) if how == "median" else agg["std"].fillna(0.0).to_numpy(float)
    return agg.index.to_numpy(), agg[how].to_numpy(float), spread, agg["size"].to_numpy(int)


def median_spread(y: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The normalised median absolute deviation of each ``key``'s runs from their median (sorted keys; 0
    for a single run): the scale of normal runs, not moved by a burst.

    >>> median_spread(np.array([1.0, 1.1, 0.9, 9.0, 2.0]), np.array([0, 0, 0, 0, 1])).round(4).tolist()
    [0.1483, 0.0]
    """
    runs = pd.Series(y).groupby(key, sort=True)
    deviation = (pd.Series(y) - runs.transform("median")).abs()
    return MAD_TO_SIGMA * deviation.groupby(key, sort=True).median().to_numpy(float)


#: a pool's noise is heavy-tailed (:func:`robust_means` takes the median) when the median standard
#: deviation of its configurations exceeds this many robust scales (about 1 for normal noise, 0.8 for
#: uniform; 5 for the contention benchmark's runs)
HEAVY_TAILS = 2.0
#: a pool whose robust scale of ``log y`` exceeds this (runs about 25 % apart) takes the median in
#: :func:`robust_means`: the contention benchmark's runs under load span 20x
WIDE_NOISE = 0.25
#: a repetition is an outlier when its log time is this many pooled scales from its configuration's
#: median (:func:`robust_means`): about 3.5 standard deviations of normal noise, never reached by
#: uniform noise (at most 1.7 standard deviations from its centre)
OUTLIER_SCALES = 4.0


def robust_means(y: np.ndarray, key: np.ndarray, pools: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The mean of each configuration's repetitions that are not outliers: the distinct ``key`` values
    (sorted), each one's mean, the spread that goes with it (the standard deviation of the runs kept;
    where the median is taken, :func:`median_spread`) and the count of runs.

    The mean is the efficient aggregate when repetitions scatter evenly (twice as efficient as the
    median under uniform noise, 1.57x under normal noise), the median the safe one when a run is
    disturbed (a burst 5x off among three). This takes the mean after dropping the disturbed runs: a
    run whose ``log y`` lies more than :data:`OUTLIER_SCALES` pooled scales from its configuration's
    median. The scale of a pool (``pools``: configurations that share their noise) is the normalised
    median absolute deviation of the runs of its configurations of three or more from their median
    (each odd configuration's median run left out), so the disturbed runs themselves do not set it.
    Where the noise itself is heavy-tailed (runs under contention: the typical standard deviation of a
    configuration's ``log y`` over :data:`HEAVY_TAILS` times that scale) or so wide that its skew
    matters (a scale over :data:`WIDE_NOISE`: the mean of such runs lies well above their median), the
    pool takes the median: the time of a typical run. Configurations of one or two runs, and pools
    without a configuration of three, keep every run; a configuration always keeps its runs closest to
    its median.

    Examples
    --------
    >>> keys, t, spread, n = robust_means(np.array([1.0, 1.1, 0.9, 5.0, 2.0, 2.2, 1.8, 2.1, 3.0, 3.3, 2.7]),
    ...                                   np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]), np.zeros(11, int))
    >>> t.round(3).tolist(), spread.round(3).tolist()  # the run at 5.0 is dropped, the others are averaged
    ([1.0, 2.025, 3.0], [0.1, 0.171, 0.3])
    """
    logy = pd.Series(np.log(np.maximum(y, np.finfo(float).tiny)))
    by_key = logy.groupby(key, sort=True)
    deviation = (logy - by_key.transform("median")).abs().to_numpy()
    size = by_key.transform("size").to_numpy()
    pooled = (size >= 3) & (deviation > 0)  # an odd configuration's median run says nothing of the scale
    scale = MAD_TO_SIGMA * pd.Series(np.where(pooled, deviation, np.nan)).groupby(pools).transform("median")
    typical_sd = pd.Series(np.where(size >= 3, by_key.transform("std"), np.nan)).groupby(pools).transform("median")
    limit = np.where((size >= 3) & (scale.to_numpy() > 0), OUTLIER_SCALES * scale.to_numpy(), np.inf)
    closest = pd.Series(deviation).groupby(key, sort=True).transform("min").to_numpy()
    kept = (deviation <= limit) | (deviation <= closest)
    runs = pd.Series(np.where(kept, y, np.nan)).groupby(key, sort=True)  # NaN: dropped
    means, deviations = runs.mean(), runs.std().fillna(0.0)
    heavy = pd.Series(((typical_sd > HEAVY_TAILS * scale) | (scale > WIDE_NOISE)).to_numpy()
                      ).groupby(key, sort=True).first().to_numpy()
    time = np.where(heavy, pd.Series(y).groupby(key, sort=True).median().to_numpy(float), means.to_numpy(float))
    spread = np.where(heavy, median_spread(y, key), deviations.to_numpy(float))
    return means.index.to_numpy(), time, spread, by_key.size().to_numpy(int)
