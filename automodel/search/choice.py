"""The one chooser: which ranked candidate becomes the model, for ``fit``, ``kernels`` and the online store.

In-sample scores cannot tell apart candidates that agree on the measured runs and part ways beyond
them; with a few configurations many candidates tie exactly, and the first of them in the ranking is
as often as not the steepest (``n^(5/2)/p`` where ``n log n / p`` was there, ``p^3`` for a gather).
The choice is therefore made in three steps, each with a reason that does not depend on a benchmark:

1. **Tied**: the candidates the data cannot tell apart from the best-ranked one, by the
   one-standard-error rule (:func:`automodel.search.select.thresholds`: one standard error of the best
   score, or the repetition noise, whichever is larger; Breiman et al. 1984, sec. 3.4.3; Hastie,
   Tibshirani and Friedman 2009, sec. 7.10). Candidates left with fewer than
   :data:`~automodel.search.select.MIN_DOF` residual degrees of freedom do not compete while others do.
2. **Simplest**: among the tied, those with the fewest coefficients the fit left nonzero (Occam: an
   extra term must pay for itself on the data).
3. **Least change beyond the data**: among those, the one whose prediction changes least from the
   edge of the measured range (every parameter at its largest measured value) to the points
   :data:`PROBE_FACTOR` times beyond it (:func:`probe_points`), in log scale. The data cannot say which
   of the tied candidates extrapolates; this bets on none of the steep ones and on no cancellation
   (a near-cancelling pair such as ``0.29 - 0.29/sqrt(p)`` changes by orders of magnitude). A candidate
   that predicts no positive time at a probe changes infinitely. Remaining ties go to the best score.

Seeded templates and searched candidates of both routes (the staged search and the normal form)
compete on the same footing; no rule looks at where a candidate came from.

Measured on the development part of the selection corpus (``python -m benchmarks.selection``,
``benchmarks/RESULTS.md``), against the route rules it replaces; the locked test part is reported
there too.

All functions are pure.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError
from automodel.options import SELECTIONS, check_choice
from automodel.search.select import comparable, thresholds, tolerance
from automodel.search.selection import Selection
from automodel.space.terms import Term, term_values

__all__ = ["PROBE_FACTOR", "LOADS", "probe_points", "probe_values", "log_predictions", "edge_change", "choose_rows", "choose"]

#: how far beyond the largest measured value of each parameter the chooser looks
PROBE_FACTOR = 4.0
#: parameters that are fractions of a machine (free CPU, free bandwidth): probed at 1, never grown
LOADS = ("cpu", "bw")


def probe_points(frame: pd.DataFrame, params: Sequence[str]) -> pd.DataFrame:
    """Where the chooser compares candidates: first the edge of the data (every parameter at its largest
    measured value), then the points :data:`PROBE_FACTOR` times beyond it, all grown parameters at once
    (the diagonal) and, with several, each alone. Loads are at 1 (a dedicated machine) everywhere.

    Examples
    --------
    >>> probe_points(pd.DataFrame({"n": [1.0, 4.0], "p": [1.0, 8.0]}), ["n", "p"]).to_dict("list")
    {'n': [4.0, 16.0, 16.0, 4.0], 'p': [8.0, 32.0, 8.0, 32.0]}
    """
    top = {q: float(frame[q].max()) for q in params}
    grown = [q for q in params if q not in LOADS]
    rows = [dict(top)]
    if grown:
        rows.append({q: top[q] * (PROBE_FACTOR if q in grown else 1.0) for q in params})
    if len(grown) > 1:
        rows += [{q: top[q] * (PROBE_FACTOR if q == g else 1.0) for q in params} for g in grown]
    out = pd.DataFrame(rows, columns=list(params))
    for q in LOADS:
        if q in out:
            out[q] = 1.0
    return out


def log_predictions(probe_values: np.ndarray, columns: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(..., P) natural logs of the predictions at P probe points of candidates with term ``columns``
    (..., w) (indices into ``probe_values`` (P, T); -1: no term) and ``coefficients`` (..., w); NaN where
    a prediction is not positive. The input of :func:`edge_change` for many candidates at once."""
    values = np.hstack([probe_values, np.zeros((len(probe_values), 1))])  # column -1: zeros, the padding
    with np.errstate(all="ignore"):
        at = np.einsum("...w,p...w->...p", np.nan_to_num(coefficients), values[:, columns])
        return np.log(np.where(at > 0, at, np.nan))


def probe_values(terms: Sequence[Term], frame: pd.DataFrame, params: Sequence[str]) -> np.ndarray:
    """(P, len(terms)) values of ``terms`` at the :func:`probe_points` of ``frame``: the input of
    :func:`log_predictions` for every candidate drawn from ``terms``."""
    probes = probe_points(frame, params)
    return term_values(terms, {q: probes[q].to_numpy(float) for q in probes}, len(probes))


def edge_change(log_predictions: np.ndarray) -> np.ndarray:
    """The largest |log change| of each candidate's prediction from the edge of the data (column 0 of
    ``log_predictions`` (..., P), natural logs at :func:`probe_points`) to the points beyond it; infinite
    where a prediction is not a positive number (NaN). Only the edge (P = 1): 0.

    Examples
    --------
    >>> edge_change(np.log(np.array([[10.0, 20.0, 5.0], [10.0, 11.0, 10.0], [10.0, np.nan, 10.0]]))).round(3).tolist()
    [0.693, 0.095, inf]
    """
    x = np.asarray(log_predictions, float)
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        change = np.abs(x[..., 1:] - x[..., :1]).max(axis=-1, initial=0.0)
    return np.where(np.isfinite(x).all(axis=-1), change, np.inf)


def choose_rows(values: np.ndarray, n_terms: np.ndarray, n_points: int, metric: str, rule: str = "simplest",
                noise_relative=0.0, noise_absolute=0.0, change: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        ``"best"``: the best-ranked candidate, nothing else.
    noise_relative, noise_absolute : float or (K,) array
        The repetitions' pooled standard error, relative and in seconds.
    change : (K, N) or (N,) array, optional
        :func:`edge_change` of every candidate; without it the best-scored of the simplest tied ones.

    Returns
    -------
    chosen : (K,) int array
        The chosen column of every row (column 0 where no score is finite).
    threshold : (K,) array
        The highest score tied with the best.
    tied : (K, N) bool array

    Examples
    --------
    >>> v = np.array([[0.100, 0.101, 0.300, 0.102], [0.2, 0.1, 0.11, 0.5]])
    >>> choose_rows(v, np.array([2, 2, 1, 2]), 12, "rel_s", change=np.array([2.0, 0.5, 0.1, 0.3]))[0].tolist()
    [3, 2]
    """
    check_choice("selection rule", rule, SELECTIONS)
    scores = np.asarray(values, float)
    scores = comparable(np.where(np.isfinite(scores), scores, np.inf), n_terms, n_points)
    n_terms = np.broadcast_to(np.asarray(n_terms), scores.shape)
    rows = np.arange(len(scores))
    best = np.argmin(scores, axis=1)
    if rule == "best":
        return best, scores[rows, best], np.isfinite(scores) & (scores <= scores[rows, best][:, None])
    thr = thresholds(scores[rows, best], metric, n_points - n_terms[rows, best], noise_relative, noise_absolute)
    tied = np.isfinite(scores) & (scores <= thr[:, None])
    fewest = np.where(tied, n_terms, np.iinfo(np.int64).max).min(axis=1)
    simplest = tied & (n_terms == fewest[:, None])
    if change is None:
        chosen = np.argmin(np.where(simplest, scores, np.inf), axis=1)
    else:
        change = np.broadcast_to(np.asarray(change, float), scores.shape)
        least = np.where(simplest, change, np.inf).min(axis=1)
        flat = simplest & ((change <= least[:, None]) | ~np.isfinite(least)[:, None])
        chosen = np.argmin(np.where(flat, scores, np.inf), axis=1)
    return np.where(tied.any(axis=1), chosen, best), thr, tied


def choose(values: np.ndarray, n_terms: np.ndarray, n_points: int, metric: str, rule: str = "simplest",
           noise_relative: float = 0.0, noise_absolute: float = 0.0, change: np.ndarray | None = None
           ) -> Selection:
    """:func:`choose_rows` of one target, with the reason in words.

    Examples
    --------
    >>> s = choose(np.array([0.100, 0.101, 0.300]), np.array([2, 2, 1]), 12, "rel_s", change=np.array([2.0, 0.5, 0.1]))
    >>> s.index, s.best, s.equivalent.tolist()
    (1, 0, [True, True, False])
    """
    values = np.asarray(values, float)
    n_terms = np.asarray(n_terms)
    if not np.isfinite(values).any():
        raise DataError(f"no candidate has a finite {metric} (every fit failed)")
    (index,), (thr,), (tied,) = choose_rows(values[None], n_terms, n_points, metric, rule, noise_relative,
                                            noise_absolute, None if change is None else np.asarray(change)[None])
    scores = comparable(np.where(np.isfinite(values), values, np.inf), n_terms, n_points)
    best = int(np.argmin(scores))
    index = int(index)
    if rule == "best" or not np.isfinite(scores[best]):
        return Selection(index, best, float(thr), tied, f"the best {metric}")
    _, why = tolerance(float(scores[best]), metric, n_points - int(n_terms[best]), noise_relative, noise_absolute)
    count = int(tied.sum())
    simplest = int(np.count_nonzero(tied & (n_terms == n_terms[index])))
    reason = (f"{count} candidate(s) tied with the best (within {why}); the fewest terms among them "
              f"({int(n_terms[index])}, {simplest} candidate(s))")
    if change is not None and simplest > 1:
        factor = float(np.exp(np.asarray(change, float)[index]))
        reason += (f"; of those, the one whose prediction changes least beyond the data (a factor "
                   f"{factor:.3g} at {PROBE_FACTOR:g}x the largest measured values)")
    return Selection(index, best, float(thr), tied, reason)
