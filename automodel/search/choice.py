"""The one chooser: which ranked candidate becomes the model, for ``fit``, ``kernels`` and the online store.

In-sample scores cannot tell apart candidates that agree on the measured runs and part ways beyond
them; with a few configurations many candidates tie exactly, and the first of them in the ranking is
as often as not the steepest (``n^(5/2)/p`` where ``n log n / p`` was there, ``p^3`` for a gather).
The choice is therefore made in steps, each with a reason that does not depend on a benchmark:

0. **Admissible**: a candidate whose prediction grows from the edge of the data to a point beyond it
   faster than any term of the search space grows there (:func:`too_steep`, :func:`term_ceiling`) is
   set aside before anything is compared, while another candidate is left. The terms are the laws the
   search considers physical, and a sum of them with non-negative coefficients grows no faster than
   its steepest term; what does is a template whose nonlinear part turns on beyond the runs (Kohashi's
   sigmoid with its centre fixed at p = 40 for runs at p <= 8: ``4e9 p / (1 + 2e17 exp(-p))``, rank 1
   in-sample and 1e12 s at p = 256 for a time of 0.006 s) or a signed pair whose difference vanishes
   at the edge. No score inside the data can support such a bet.
1. **Tied**: the candidates the data cannot tell apart from the best-ranked one, by the
   one-standard-error rule (:func:`automodel.search.select.thresholds`: one standard error of the best
   score, or the repetition noise, whichever is larger; Breiman et al. 1984, sec. 3.4.3; Hastie,
   Tibshirani and Friedman 2009, sec. 7.10). Candidates left with fewer than
   :data:`~automodel.search.select.MIN_DOF` residual degrees of freedom do not compete while others do,
   except a constant and one term (:data:`~automodel.search.select.ALWAYS_COMPETES`): on three
   configurations the rule would leave single terms only, and ``3427/p`` drops the constant the runs
   stand on.
2. **Simplest**: among the tied, those with the fewest coefficients the fit left nonzero (Occam: an
   extra term must pay for itself on the data). Of those, a candidate that predicts no positive time
   at a point beyond the data, :data:`PROBE_FACTOR` or :data:`FAR_FACTOR` times the largest measured
   values (:func:`probe_points`), is passed over while another does not: a time is positive at any
   scale, and a near-cancelling pair such as ``0.29 - 0.29/sqrt(p)`` or a strong-scaling curve with a
   negative constant, ``36/sqrt(p) - 1.4``, turns negative.
3. **Central beyond the data**: the data cannot say which of the simplest tied candidates
   extrapolates, so the choice bets on neither the steepest nor the flattest: it is the candidate
   nearest, in log scale at the points :data:`PROBE_FACTOR` times beyond the measured range, to the
   weighted median of their predictions there (:func:`central_rows`). The weight of a candidate is
   ``2^-L``, ``L`` its description length (:attr:`automodel.space.terms.Term.description_length`: a
   fractional exponent counts its denominator less 1, a logarithm its power, so ``n log2 n`` weighs
   more than ``n^(3/4) log2(n)^2``): the prior of minimum description length (Rissanen 1978), since
   the laws of parallel cost are short ones (``n``, ``n log n``, ``n^2``, ``log p``, ``1/p``: the
   classes of Extra-P's normal form, Calotoiu et al., SC13, sec. 3), times the evidence of
   out-of-range validation where the search measured it (:func:`forward_weights`): each candidate
   refitted without the largest configurations predicts them, and weighs the likelihood of its
   errors there, Gaussian with the relative error the tie allows (the predictive weights of
   pseudo-Bayesian model averaging, Geisser and Eddy 1979; Yao et al. 2018, sec. 3.4, with a forward
   split in place of leave-one-out, since the question is extrapolation). ``x^2`` and ``x log2 x``
   may fit seven runs alike, but only one of them predicted the largest from the six below it. The
   median of the predictions
   minimises the expected absolute log error when each tied candidate is the truth with its weight
   (Bayesian model averaging, Hoeting et al. 1999, with its point estimate taken by one of the
   candidates, so that the model stays a formula to export); the band then covers what they
   disagree on (:mod:`automodel.model.interval`). Of candidates alike there, the shortest to write is
   chosen, and remaining ties go to the best score.

Seeded templates and searched candidates of both routes (the staged search and the normal form)
compete on the same footing; no rule looks at where a candidate came from.

Measured on the development part of the selection corpus (``python -m benchmarks.selection``,
``benchmarks/RESULTS.md``), against the route rules it replaces; the locked test part is reported
there too.

All functions are pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError
from automodel.options import RELATIVE_RESOLUTION, SELECTIONS, check_choice
from automodel.solve.metrics import METRICS
from automodel.search.select import comparable, thresholds, tolerance
from automodel.search.selection import Selection
from automodel.space.terms import Term, term_values

__all__ = ["PROBE_FACTOR", "FAR_FACTOR", "LOADS", "GROWTH_TOLERANCE", "probe_points", "probe_values", "log_predictions",
           "term_ceiling", "too_steep", "admissible_scores", "term_lengths", "description_lengths", "core_length",
           "weighted_median", "first_of_equals", "relative_scale", "forward_weights", "central_rows", "choose_rows",
           "choose"]

#: how far beyond the largest measured value of each parameter the chooser looks
PROBE_FACTOR = 4.0
#: how far beyond the largest measured values the chooser asks that a time still be positive
FAR_FACTOR = 1024.0
#: parameters that are fractions of a machine (free CPU, free bandwidth): probed at 1, never grown
LOADS = ("cpu", "bw")
#: how much faster than the steepest term of the space a prediction may grow beyond the data (natural log
#: of a ratio): round-off only (:func:`too_steep`)
GROWTH_TOLERANCE = 1e-6


def probe_points(frame: pd.DataFrame, params: Sequence[str]) -> pd.DataFrame:
    """Where the chooser compares candidates: first the edge of the data (every parameter at its largest
    measured value), then the points :data:`PROBE_FACTOR` times beyond it, all grown parameters at once
    (the diagonal) and, with several, each alone, and last the far point :data:`FAR_FACTOR` times
    beyond on the diagonal (only whether a time is still positive there counts:
    :func:`choose_rows`). Loads are at 1 (a dedicated machine) everywhere.

    Examples
    --------
    >>> probe_points(pd.DataFrame({"n": [1.0, 4.0], "p": [1.0, 8.0]}), ["n", "p"]).to_dict("list")
    {'n': [4.0, 16.0, 16.0, 4.0, 4096.0], 'p': [8.0, 32.0, 8.0, 32.0, 8192.0]}
    """
    top = {q: float(frame[q].max()) for q in params}
    grown = [q for q in params if q not in LOADS]
    rows = [dict(top)]
    if grown:
        rows.append({q: top[q] * (PROBE_FACTOR if q in grown else 1.0) for q in params})
    if len(grown) > 1:
        rows += [{q: top[q] * (PROBE_FACTOR if q == g else 1.0) for q in params} for g in grown]
    if grown:
        rows.append({q: top[q] * (FAR_FACTOR if q in grown else 1.0) for q in params})
    out = pd.DataFrame(rows, columns=list(params))
    for q in LOADS:
        if q in out:
            out[q] = 1.0
    return out


def log_predictions(probe_values: np.ndarray, columns: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(..., P) natural logs of the predictions at P probe points of candidates with term ``columns``
    (..., w) (indices into ``probe_values`` (P, T); -1: no term) and ``coefficients`` (..., w); NaN where
    a prediction is not positive. The input of :func:`choose_rows` for many candidates at once."""
    values = np.hstack([probe_values, np.zeros((len(probe_values), 1))])  # column -1: zeros, the padding
    with np.errstate(all="ignore"):
        at = np.einsum("...w,p...w->...p", np.nan_to_num(coefficients), values[:, columns])
        return np.log(np.where(at > 0, at, np.nan))


def probe_values(terms: Sequence[Term], frame: pd.DataFrame, params: Sequence[str]) -> np.ndarray:
    """(P, len(terms)) values of ``terms`` at the :func:`probe_points` of ``frame``: the input of
    :func:`log_predictions` for every candidate drawn from ``terms``."""
    probes = probe_points(frame, params)
    return term_values(terms, {q: probes[q].to_numpy(float) for q in probes}, len(probes))


def term_ceiling(probe_values: np.ndarray) -> np.ndarray:
    """(P - 1,) the steepest growth of any term from the edge of the data to each point beyond it: the
    largest ``log(|t(probe)| / |t(edge)|)`` over the terms' values ``probe_values`` (P, T) at the
    :func:`probe_points` (row 0 the edge); infinite where a term overflows, -inf where no term is nonzero
    at the edge. A sum of terms with non-negative coefficients grows no faster: what :func:`too_steep`
    compares with.

    >>> term_ceiling(np.array([[2.0, 1.0, 0.0], [8.0, 4.0, 1.0], [2048.0, 1024.0 ** 2, 1.0]])).round(3).tolist()
    [1.386, 13.863]
    """
    values = np.abs(np.asarray(probe_values, float))
    with np.errstate(all="ignore"):
        growth = np.log(values[1:] / values[:1])
    growth = np.where((values[:1] > 0) & ~np.isnan(growth), growth, -np.inf)
    return growth.max(axis=1, initial=-np.inf)


def too_steep(logs: np.ndarray, ceiling: np.ndarray) -> np.ndarray:
    """(..., N) True for the candidates whose prediction grows from the edge of the data to a point beyond
    it faster than any term of the space (``logs`` (..., N, P) at the :func:`probe_points`, ``ceiling``
    (P - 1,) or (..., P - 1) their :func:`term_ceiling`): a template whose sigmoid centre lies beyond the
    runs (Kohashi's ``4e9 p / (1 + 2e17 exp(-p))``, 1e12 s at p = 256 for a time of 0.006 s) or a
    near-cancelling sum whose difference vanishes at the edge. Where a prediction is not positive the
    positivity rule of :func:`choose_rows` decides, not this.

    >>> too_steep(np.log([[[1.0, 4.0, 16.0], [1.0, 64.0, 16.0], [1.0, np.nan, 16.0]]]), np.log([16.0, 1024.0])).tolist()
    [[False, True, False]]
    """
    logs = np.asarray(logs, float)
    with np.errstate(invalid="ignore"):
        growth = logs[..., 1:] - logs[..., :1]
        return (growth > np.asarray(ceiling, float)[..., None, :] + GROWTH_TOLERANCE).any(axis=-1)


def admissible_scores(scores: np.ndarray, logs: np.ndarray | None, ceiling: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``scores`` (K, N) with the candidates that grow :func:`too_steep` beyond the data set to infinity
    (not ranked, not tied), in every row that keeps a finite score without them; and which were set
    aside (K, N). Unchanged without ``logs`` or ``ceiling``.

    A model is a bet on the time beyond the runs; a candidate that grows there faster than every term
    the search considered physical bets on a law the space excludes, and no fit inside the data can
    support that bet, however well it scores there.
    """
    scores = np.asarray(scores, float)
    if logs is None or ceiling is None or np.shape(logs)[-1] < 2:
        return scores, np.zeros(scores.shape, bool)
    steep = too_steep(np.broadcast_to(np.asarray(logs, float), scores.shape + np.shape(logs)[-1:]), ceiling)
    steep &= np.isfinite(scores) & (~steep & np.isfinite(scores)).any(axis=1, keepdims=True)
    return np.where(steep, np.inf, scores), steep


def term_lengths(terms: Sequence[Term]) -> np.ndarray:
    """(T,) each term's :attr:`~automodel.space.terms.Term.description_length`: the input of
    :func:`description_lengths` for every candidate drawn from ``terms``."""
    return np.fromiter((t.description_length for t in terms), int, len(terms))


def description_lengths(term_lengths: np.ndarray, columns: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(...) description length of candidates with term ``columns`` (..., w) (indices into
    ``term_lengths`` (T,), :func:`term_lengths`; -1: no term) and ``coefficients`` (..., w): the sum
    over the terms the fit kept (nonzero coefficients).

    >>> description_lengths(np.array([0, 1, 5]), np.array([[0, 1], [0, 2], [2, -1]]), np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 0.0]])).tolist()
    [1, 0, 5]
    """
    lengths = np.append(np.asarray(term_lengths, int), 0)[np.asarray(columns)]  # column -1: the padding
    return np.where(np.nan_to_num(coefficients) != 0.0, lengths, 0).sum(axis=-1)


def core_length(core) -> int:
    """The description length of a fitted model: that of its terms (a term model,
    :func:`description_lengths`), else its number of coefficients (a template's closed form: each
    coefficient a real number inside a nonlinear form, as long to write as a fractional exponent at
    least)."""
    terms = getattr(core, "terms", None)
    if terms is None:
        return int(core.n_coefficients)
    coefficients = np.asarray(getattr(core, "coefficients", np.ones(len(terms))), float)
    return int(description_lengths(term_lengths(terms), np.arange(len(terms)), coefficients))


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted median over axis -2 of ``values`` (..., N, P) with ``weights`` (..., N) (entries of
    weight 0 do not count; the lower median where the weight splits evenly): (..., P); NaN where no
    weight is positive.

    >>> weighted_median(np.array([[1.0], [2.0], [10.0]]), np.array([1.0, 1.0, 1.0])).tolist()
    [2.0]
    >>> weighted_median(np.array([[1.0], [2.0], [10.0]]), np.array([4.0, 1.0, 1.0])).tolist()
    [1.0]
    """
    values = np.asarray(values, float)
    weights = np.broadcast_to(np.asarray(weights, float)[..., None], values.shape)
    order = np.argsort(np.where(weights > 0, values, np.inf), axis=-2, kind="stable")
    ranked = np.take_along_axis(values, order, axis=-2)
    cumulative = np.cumsum(np.take_along_axis(weights, order, axis=-2), axis=-2)
    total = cumulative[..., -1:, :]
    at = np.argmax(cumulative >= total / 2.0, axis=-2)[..., None, :]
    return np.where(total[..., 0, :] > 0, np.take_along_axis(ranked, at, axis=-2)[..., 0, :], np.nan)


def first_of_equals(values: np.ndarray, rank: np.ndarray | None = None, decimals: int = 9) -> np.ndarray:
    """(..., N) True for one row of every group of rows of ``values`` (..., N, P) equal to ``decimals``
    decimals, in each leading index separately: the one of least ``rank`` (..., N) (default: the
    first).

    >>> v = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 3.0], [1.0, 2.0 + 1e-12]])
    >>> first_of_equals(v).tolist(), first_of_equals(v, rank=np.array([2, 1, 0, 3])).tolist()
    ([True, False, True, False], [False, True, True, False])
    """
    rounded = np.round(np.asarray(values, float), decimals)
    rank = np.zeros(rounded.shape[:-1]) if rank is None else np.broadcast_to(rank, rounded.shape[:-1])
    keys = [rank, *np.moveaxis(rounded, -1, 0)[::-1]]  # np.lexsort: the last key first
    order = np.lexsort(keys, axis=-1)
    ranked = np.take_along_axis(rounded, order[..., None], axis=-2)
    repeat = np.concatenate([np.zeros(ranked.shape[:-2] + (1,), bool),
                             (ranked[..., 1:, :] == ranked[..., :-1, :]).all(axis=-1)], axis=-1)
    first = np.empty_like(repeat)
    np.put_along_axis(first, order, ~repeat, axis=-1)
    return first


def relative_scale(threshold, metric: str, noise_relative=0.0) -> np.ndarray:
    """The tie's width as a relative error: ``threshold`` (:func:`~automodel.search.select.thresholds`)
    where ``metric`` is relative, a hundredth of it where it is in percent, NaN for the other scales
    (seconds, information), and never below ``noise_relative``.

    >>> relative_scale(0.08, "rel_s").tolist(), relative_scale(8.0, "smape").tolist(), relative_scale(2.0, "aic").tolist()
    (0.08, 0.08, nan)
    """
    scale = {"relative": 1.0, "percent": 0.01}.get(METRICS[metric].scale, np.nan)
    floor = np.maximum(noise_relative, RELATIVE_RESOLUTION)
    return np.where(np.isnan(scale), np.nan, np.maximum(np.asarray(threshold, float) * scale, floor))


def forward_weights(holdout: np.ndarray, among: np.ndarray, scale, n_holdout: int) -> np.ndarray:
    """(K, N) the weight the out-of-range validation gives every candidate ``among`` (K, N): the
    likelihood of its errors on the held-out largest configurations (``holdout`` (K, N), the relative
    root mean square error over ``n_holdout`` configurations of a refit without them, the
    ``holdout`` metric) were the candidate the law, ``exp(-n_holdout (holdout / scale)^2 / 2)`` with
    ``scale`` (K,) the standard deviation of such an error (where NaN, the least holdout error among
    them), divided by the largest among them; 1 where a candidate's holdout error is not known (NaN), 0
    where its refit failed (infinite).

    :func:`choose_rows` takes for ``scale`` the relative error the tie allows (:func:`relative_scale`)
    times ``sqrt(1 + k)`` for candidates of ``k`` coefficients: a held-out error is that of a new run
    plus the refit's own error there, whose variance is the leverage of the held-out configuration
    times the noise; a leverage averages ``k / m`` inside ``m`` configurations and grows beyond them
    (a straight line in ``n`` through six doubling sizes gives the seventh a leverage of 4.2, with
    ``k = 2``). ``k`` is a modest stand-in for it, computed without a second solve, so that a candidate
    is not judged by the scatter of one noisy run.

    >>> forward_weights(np.array([[0.01, 0.03, 0.24, np.nan]]), np.ones((1, 4), bool), np.array([0.08]), 1).round(3).tolist()
    [[1.0, 0.939, 0.011, 1.0]]
    """
    holdout = np.asarray(holdout, float)
    known = among & ~np.isnan(holdout)
    least = np.where(known, holdout, np.inf).min(axis=-1)
    scale = np.asarray(scale, float)
    scale = np.where(np.isnan(scale), least, scale)
    with np.errstate(all="ignore"):
        log_like = -0.5 * n_holdout * (holdout / np.maximum(scale, RELATIVE_RESOLUTION)[..., None]) ** 2
        top = np.where(known & np.isfinite(log_like), log_like, -np.inf).max(axis=-1, keepdims=True)
        weight = np.exp(log_like - np.where(np.isfinite(top), top, 0.0))
    return np.where(np.isnan(holdout), 1.0, np.nan_to_num(weight))


def central_rows(logs: np.ndarray, among: np.ndarray, length: np.ndarray | None = None,
                 evidence: np.ndarray | None = None) -> np.ndarray:
    """(K, N) distance of every candidate's log predictions beyond the data (``logs`` (K, N, P) at the
    :func:`probe_points`: column 0 the edge of the data, the last the far point, left out) from the weighted median (:func:`weighted_median`,
    weights ``2^-length`` times ``evidence`` (K, N), :func:`forward_weights`) of the candidates ``among`` (K, N): the largest absolute difference over the
    points beyond; infinite outside ``among`` or where a prediction is not finite. Candidates that
    predict alike (the same model reached twice, as a sum whose extra coefficient the fit set to 0)
    count once in the median, with the weight of the shortest of them. Step 3 of the module docstring.

    >>> logs = np.log(np.array([[[1.0, 2.0, 9.0], [1.0, 4.0, 9.0], [1.0, 16.0, 9.0]]]))
    >>> central_rows(logs, np.ones((1, 3), bool)).round(3).tolist()
    [[0.693, 0.0, 1.386]]
    """
    logs = np.asarray(logs, float)
    beyond = logs[..., 1:-1] if logs.shape[-1] > 2 else logs[..., 1:]  # the far point last: its sign only
    length = np.zeros(beyond.shape[:-1]) if length is None else np.broadcast_to(length, beyond.shape[:-1])
    usable = among & np.isfinite(beyond).all(axis=-1)
    distinct = first_of_equals(np.where(usable[..., None], beyond, np.inf), length)
    weight = np.where(usable & distinct, 0.5 ** length * (1.0 if evidence is None else evidence), 0.0)
    median = weighted_median(np.where(usable[..., None], beyond, 0.0), weight)
    with np.errstate(invalid="ignore"):
        distance = np.abs(beyond - median[..., None, :]).max(axis=-1, initial=0.0)
    return np.where(usable, distance, np.inf)


def choose_rows(values: np.ndarray, n_terms: np.ndarray, n_points: int, metric: str, rule: str = "simplest",
                noise_relative=0.0, noise_absolute=0.0, logs: np.ndarray | None = None,
                length: np.ndarray | None = None, holdout: np.ndarray | None = None,
                n_holdout: int = 0, ceiling: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The choice of the module docstring for every row of ``values`` (K, N) at once (K targets, N
    candidates; lower scores are better).

    Parameters
    ----------
    values : (K, N) array
        Each target's score of each candidate (non-finite: not fitted).
    n_terms : (K, N) or (N,) int array
        Coefficients each fit left nonzero.
    n_points : int
        Configurations the scores were computed on.
    metric : str
        The ranking metric (for the width of a tie, :func:`~automodel.search.select.thresholds`).
    rule : {"simplest", "best"}
        ``"best"``: the best-ranked candidate of those not set aside (step 0), nothing else.
    noise_relative, noise_absolute : float or (K,) array
        The repetitions' pooled standard error, relative and in seconds.
    logs : (K, N, P) or (N, P) array, optional
        Every candidate's :func:`log_predictions` at the :func:`probe_points`; without them the
        best-scored of the simplest tied candidates.
    length : (K, N) or (N,) int array, optional
        :func:`description_lengths` of every candidate; without it every candidate weighs alike.
    holdout : (K, N) or (N,) array, optional
        Every candidate's ``holdout`` error (refitted without the largest configurations, scored on
        them); with ``n_holdout`` > 0 held-out configurations, it weighs the median
        (:func:`forward_weights`).
    n_holdout : int
        How many configurations the ``holdout`` errors were measured on.
    ceiling : (P - 1,) or (K, P - 1) array, optional
        The steepest growth of a term of the space beyond the data (:func:`term_ceiling`): with
        ``logs``, candidates that grow faster are set aside before the tie (:func:`admissible_scores`).

    Returns
    -------
    chosen : (K,) int array
        The chosen column of every row (column 0 where no score is finite).
    threshold : (K,) array
        The highest score tied with the best.
    tied : (K, N) bool array
    set_aside : (K, N) bool array
        The candidates set aside before the tie (:func:`admissible_scores`).

    Examples
    --------
    >>> v = np.array([[0.100, 0.101, 0.300, 0.102], [0.2, 0.1, 0.11, 0.5]])
    >>> logs = np.log([[1.0, 64.0], [1.0, 4.0], [1.0, 1.0], [1.0, 2.0]])  # 4x beyond: x^3, x, constant, sqrt
    >>> choose_rows(v, np.array([2, 2, 1, 2]), 12, "rel_s", logs=logs)[0].tolist()
    [1, 2]
    """
    check_choice("selection rule", rule, SELECTIONS)
    scores = np.asarray(values, float)
    scores = comparable(np.where(np.isfinite(scores), scores, np.inf), n_terms, n_points)
    scores, set_aside = admissible_scores(scores, logs, ceiling)
    n_terms = np.broadcast_to(np.asarray(n_terms), scores.shape)
    rows = np.arange(len(scores))
    best = np.argmin(scores, axis=1)
    if rule == "best":
        return best, scores[rows, best], np.isfinite(scores) & (scores <= scores[rows, best][:, None]), set_aside
    thr = thresholds(scores[rows, best], metric, n_points - n_terms[rows, best], noise_relative, noise_absolute)
    tied = np.isfinite(scores) & (scores <= thr[:, None])
    fewest = np.where(tied, n_terms, np.iinfo(np.int64).max).min(axis=1)
    simplest = tied & (n_terms == fewest[:, None])
    if logs is None or np.shape(logs)[-1] < 2:
        chosen = np.argmin(np.where(simplest, scores, np.inf), axis=1)
    else:
        logs = np.broadcast_to(np.asarray(logs, float), scores.shape + np.shape(logs)[-1:])
        positive = np.isfinite(logs).all(axis=-1)
        simplest &= positive | ~(simplest & positive).any(axis=1, keepdims=True)
        evidence = None
        if holdout is not None and n_holdout > 0:
            spread = relative_scale(thr, metric, noise_relative) * np.sqrt(1.0 + fewest)  # forward_weights
            evidence = forward_weights(np.broadcast_to(np.asarray(holdout, float), scores.shape), simplest, spread,
                                       n_holdout)
        distance = central_rows(logs, simplest, length, evidence)
        nearest = np.where(simplest, distance, np.inf).min(axis=1, keepdims=True)
        central = simplest & ((distance <= nearest) | ~np.isfinite(nearest))
        if length is not None:  # of candidates alike there, the shortest to write
            length = np.broadcast_to(length, scores.shape)
            central &= length <= np.where(central, length, np.iinfo(np.int64).max).min(axis=1, keepdims=True)
        chosen = np.argmin(np.where(central, scores, np.inf), axis=1)
    return np.where(tied.any(axis=1), chosen, best), thr, tied, set_aside


def choose(values: np.ndarray, n_terms: np.ndarray, n_points: int, metric: str, rule: str = "simplest",
           noise_relative: float = 0.0, noise_absolute: float = 0.0, logs: np.ndarray | None = None,
           length: np.ndarray | None = None, holdout: np.ndarray | None = None, n_holdout: int = 0,
           ceiling: np.ndarray | None = None) -> Selection:
    """:func:`choose_rows` of one target, with the reason in words.

    Examples
    --------
    >>> logs = np.log([[1.0, 64.0], [1.0, 4.0], [1.0, 2.0], [1.0, 1.0]])
    >>> s = choose(np.array([0.100, 0.101, 0.102, 0.300]), np.array([2, 2, 2, 1]), 12, "rel_s", logs=logs)
    >>> s.index, s.best, s.equivalent.tolist()
    (1, 0, [True, True, True, False])
    """
    values = np.asarray(values, float)
    n_terms = np.asarray(n_terms)
    if not np.isfinite(values).any():
        raise DataError(f"no candidate has a finite {metric} (every fit failed)")
    (index,), (thr,), (tied,), (steep,) = choose_rows(
        values[None], n_terms, n_points, metric, rule, noise_relative, noise_absolute,
        None if logs is None else np.asarray(logs)[None], None if length is None else np.asarray(length)[None],
        None if holdout is None else np.asarray(holdout, float)[None], n_holdout, ceiling)
    scores = np.where(steep, np.inf, comparable(np.where(np.isfinite(values), values, np.inf), n_terms, n_points))
    best = int(np.argmin(scores))
    index = int(index)
    if rule == "best" or not np.isfinite(scores[best]):
        return Selection(index, best, float(thr), tied, f"the best {metric}")
    _, why = tolerance(float(scores[best]), metric, n_points - int(n_terms[best]), noise_relative, noise_absolute)
    count = int(tied.sum())
    simplest = int(np.count_nonzero(tied & (n_terms == n_terms[index])))
    reason = (f"{count} candidate(s) tied with the best (within {why}); the fewest terms among them "
              f"({int(n_terms[index])}, {simplest} candidate(s))")
    if logs is not None and simplest > 1 and np.shape(logs)[-1] > 1:
        weighed = [*(["2^-description length"] if length is not None else []),
                   *([f"how well a refit without the {n_holdout} largest configuration(s) predicts them"]
                     if holdout is not None and n_holdout > 0 else [])]
        weights = f"weighted by {' and by '.join(weighed)}; " if weighed else ""
        reason += (f"; of those, the one nearest the median of their predictions at {PROBE_FACTOR:g}x the "
                   f"largest measured values ({weights}neither the steepest nor the flattest)")
    if steep.any():
        reason = (f"{int(steep.sum())} candidate(s) set aside (beyond the data they grow faster than any term of "
                  f"the search space); of the rest, {reason}")
    return Selection(index, best, float(thr), tied, reason, steep if steep.any() else None)
