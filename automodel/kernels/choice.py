"""The batched choice of one model per kernel: every candidate fitted to every kernel of a group at once.

:func:`best_per_kernel` scores every (candidate, kernel) pair of a group with the one scorer of the
search (:func:`automodel.search.score.score_pairs`, many target columns) and chooses per kernel with
the one chooser of automodel.fit (:func:`automodel.search.choice.choose_rows`).
"""

from __future__ import annotations

import numpy as np

from automodel.solve.metrics import METRICS
from automodel.search.choice import choose_rows, description_lengths, log_predictions, term_ceiling
from automodel.search.score import Rows, prepare, score_pairs
from automodel.search.targets import CHUNK_PAIRS
from automodel.solve.design import pairs
from automodel.space.config import SearchSpace

__all__ = ["best_per_kernel", "choose", "CHUNK_PAIRS"]


def _needs_holdout(names: tuple[str, ...]) -> bool:
    return any(METRICS[name].holdout for name in names)


def best_per_kernel(values: np.ndarray, Y: np.ndarray, term_idx: list[list[int]], sp: SearchSpace,
                    hold: np.ndarray | None, noise_se: tuple[np.ndarray, np.ndarray],
                    signed: np.ndarray | None = None, probe_values: np.ndarray | None = None,
                    term_lengths: np.ndarray | None = None, forward: bool = False
                    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Per kernel: the candidate automodel.fit chooses among the searched ones, its coefficients and all
    its metrics (index -1 when none can be fitted).

    Parameters
    ----------
    values : (m, T) array
        Values of every term of the candidates at the group's points.
    Y : (m, K) array
        The kernels' values.
    term_idx : list of lists of int
        Each candidate's columns of ``values``.
    sp : SearchSpace
        Its ``fit`` options give the weighting, metric, selection and sign constraint.
    hold : (m,) bool array or None
        Held-out rows of the ``holdout`` metric.
    noise_se : pair of (K,) arrays
        Relative and absolute standard errors of the kernels' aggregated values.
    signed : (N,) bool array, optional
        Candidates fitted with coefficients of any sign (:attr:`Structure.signed`); the others follow
        the space's ``nonnegative``.
    probe_values : (P, T) array, optional
        Values of the terms at the chooser's probes (:func:`automodel.search.choice.probe_points`): with
        them each kernel's choice looks beyond the data as automodel.fit's does (:func:`choose`).
    term_lengths : (T,) int array, optional
        Each term's :attr:`~automodel.space.terms.Term.description_length`: with them the choice
        prefers the shortest of the simplest tied candidates, as automodel.fit's does.
    forward : bool
        Weigh the choice by each candidate's ``holdout`` error on the rows ``hold``, as automodel.fit
        does when its search computed that metric.
    """
    opt = sp.fit
    K, N = Y.shape[1], len(term_idx)
    signed = np.zeros(N, bool) if signed is None else np.asarray(signed, bool)
    forward = forward and hold is not None and opt.selection != "best"
    rows = prepare(values, Y, opt.weighting, hold if forward or _needs_holdout((opt.metric,)) else None)
    widths = np.array([len(t) for t in term_idx])
    score, n_terms, valid, beyond, length = _score_candidates(
        rows, term_idx, widths, signed, K, sp, probe_values, term_lengths)
    P = beyond.shape[2]
    score = np.where(np.isfinite(score) & valid, score, np.inf)
    ceiling = term_ceiling(probe_values) if P else None
    held = None
    if forward:  # the holdout errors weigh tied candidates only (choose_rows): refit those pairs alone
        _, _, tied, _ = choose_rows(score, n_terms, len(Y), opt.metric, opt.selection, *noise_se,
                                 beyond if P else None, ceiling=ceiling)
        held = _tied_holdout(rows, term_idx, widths, signed, tied, sp)
    best = choose(score, n_terms, valid, len(Y), sp, noise_se, beyond if P else None,
                  None if term_lengths is None else length, held,
                  int(np.count_nonzero(hold)) if forward else 0, ceiling)
    coefs, mets = _refit(values, Y, term_idx, widths, signed, best, sp, hold)
    return best, coefs, mets


def _tied_holdout(rows: Rows, term_idx: list[list[int]], widths: np.ndarray, signed: np.ndarray,
                  tied: np.ndarray, sp: SearchSpace) -> np.ndarray:
    """(K, N) the ``holdout`` error of the (kernel, candidate) pairs ``tied`` (K, N), NaN elsewhere: each
    such pair refitted without the held-out rows of ``rows`` (a few pairs of every kernel, not all)."""
    held = np.full(tied.shape, np.nan)
    for k, sign in sorted({(int(k), bool(g)) for k, g in zip(widths, signed)}):
        group = (widths == k) & (signed == sign)
        kern, cand = np.nonzero(tied & group[None, :])
        if not len(kern):
            continue
        members = np.flatnonzero(group)
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        cols = combos[np.searchsorted(members, cand)]
        for lo in range(0, len(kern), CHUNK_PAIRS):
            at = slice(lo, lo + CHUNK_PAIRS)
            _, mets = score_pairs(rows, cols[at], kern[at], sp.fit.nonnegative and not sign, ("holdout",))
            held[kern[at], cand[at]] = mets["holdout"]
    return held


def _score_candidates(rows: Rows, term_idx: list[list[int]], widths: np.ndarray, signed: np.ndarray, K: int,
                      sp: SearchSpace, probe_values: np.ndarray | None, term_lengths: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (candidate, kernel) pair scored, candidates of one width and sign at a time, in chunks of
    :data:`CHUNK_PAIRS` pairs.

    Parameters
    ----------
    rows : Rows
        The prepared rows of the group (:func:`automodel.search.score.prepare`).
    term_idx : list of lists of int
        Each candidate's columns of the term values.
    widths, signed : (N,) arrays
        Each candidate's number of terms, and whether its coefficients may have any sign.
    K : int
        The number of kernels.
    sp : SearchSpace
    probe_values, term_lengths : arrays, optional
        As for :func:`best_per_kernel`.

    Returns
    -------
    score : (K, N) array
        The ranking metric (inf where not computed).
    n_terms : (K, N) int array
        Terms left once NNLS has set some coefficients to zero.
    valid : (N,) bool array
        Candidates whose terms are usable at every row.
    beyond : (K, N, P) array
        Log predictions at the probes (P = 0 without ``probe_values``).
    length : (K, N) int array
        Description lengths (zero without ``term_lengths``).
    """
    opt = sp.fit
    N = len(term_idx)
    score = np.full((K, N), np.inf)
    n_terms = np.zeros((K, N), int)
    valid = np.zeros(N, bool)
    P = 0 if probe_values is None else probe_values.shape[0]
    beyond = np.full((K, N, P), np.nan)
    length = np.zeros((K, N), int)
    for k, sign in sorted({(int(k), bool(g)) for k, g in zip(widths, signed)}):
        members = np.flatnonzero((widths == k) & (signed == sign))
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = rows.usable[combos].all(axis=1)
        members, combos = members[ok], combos[ok]
        valid[members] = True
        step = max(1, CHUNK_PAIRS // K)
        for lo in range(0, len(members), step):
            part = combos[lo:lo + step]
            cand, kern = pairs(len(part), K)
            coef, mets = score_pairs(rows, part[cand], kern, opt.nonnegative and not sign, (opt.metric,))
            score[:, members[lo:lo + step]] = mets[opt.metric].reshape(K, len(part))
            n_terms[:, members[lo:lo + step]] = np.maximum((coef != 0.0).sum(axis=1), 1).reshape(K, len(part))
            if P:
                beyond[:, members[lo:lo + step]] = log_predictions(probe_values, part, coef.reshape(K, len(part), k))
            if term_lengths is not None:
                length[:, members[lo:lo + step]] = description_lengths(term_lengths, part,
                                                                       coef.reshape(K, len(part), k))
    return score, n_terms, valid, beyond, length


def _refit(values: np.ndarray, Y: np.ndarray, term_idx: list[list[int]], widths: np.ndarray,
           signed: np.ndarray, best: np.ndarray, sp: SearchSpace, hold: np.ndarray | None
           ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each kernel's chosen candidate refitted and scored with every metric.

    Parameters
    ----------
    values, Y, term_idx, sp, hold
        As for :func:`best_per_kernel`.
    widths, signed : (N,) arrays
        Each candidate's number of terms, and whether its coefficients may have any sign.
    best : (K,) int array
        Each kernel's chosen candidate, -1 none.

    Returns
    -------
    coefs : (K, width) array
        The chosen candidates' coefficients (NaN padded, NaN for no candidate).
    mets : dict
        Metric name -> (K,) array of the chosen candidates' values (NaN for no candidate).
    """
    opt = sp.fit
    K = Y.shape[1]
    width = int(widths.max(initial=0))
    coefs = np.full((K, width), np.nan)
    mets = {name: np.full(K, np.nan) for name in METRICS}
    picked = best[best >= 0]
    for k, sign in sorted({(int(widths[i]), bool(signed[i])) for i in picked}):
        kern = np.flatnonzero((best >= 0) & (widths[best] == k) & (signed[best] == sign))
        combos = np.array([term_idx[i] for i in best[kern]], dtype=np.intp).reshape(len(kern), k)
        chosen = prepare(values, Y[:, kern], opt.weighting, hold)
        coef, got = score_pairs(chosen, combos, np.arange(len(kern)), opt.nonnegative and not sign,
                                tuple(METRICS))
        coefs[kern, :k] = coef
        for name in mets:
            mets[name][kern] = got[name]
    return coefs, mets


def choose(score: np.ndarray, n_terms: np.ndarray, valid: np.ndarray, n_points: int, sp: SearchSpace,
           noise_se: tuple[np.ndarray, np.ndarray], beyond: np.ndarray | None = None,
           length: np.ndarray | None = None, holdout: np.ndarray | None = None, n_holdout: int = 0,
           ceiling: np.ndarray | None = None) -> np.ndarray:
    """Each kernel's candidate by the one chooser (:func:`automodel.search.choice.choose_rows`, the rule
    automodel.fit applies to its ranked candidates, for all kernels at once); the first valid one when
    no score is finite, as the staged search ranks them.

    Parameters
    ----------
    score : (K, N) array
        Each kernel's score of each candidate (lower is better).
    n_terms : (K, N) int array
    valid : (N,) bool array
        Candidates that could be fitted.
    n_points : int
    sp : SearchSpace
    noise_se : pair of (K,) arrays
    beyond : (K, N, P) array, optional
        Each candidate's log prediction at the chooser's probes (the edge of the data first).
    length : (K, N) int array, optional
        Each candidate's :func:`~automodel.search.choice.description_lengths`.
    holdout : (K, N) array, optional
        Each candidate's ``holdout`` error, measured on ``n_holdout`` held-out configurations.
    ceiling : (P - 1,) array, optional
        The steepest growth of a term beyond the data (:func:`~automodel.search.choice.term_ceiling`).

    Returns
    -------
    (K,) int array
        The chosen candidate of each kernel, -1 when none is valid.
    """
    best, *_ = choose_rows(score, n_terms, n_points, sp.fit.metric, sp.fit.selection, *noise_se, beyond, length,
                             holdout, n_holdout, ceiling)
    finite = np.isfinite(score[np.arange(len(score)), best])
    if valid.any():
        best[~finite] = int(np.argmax(valid))
    best[~valid[best]] = -1
    return best
