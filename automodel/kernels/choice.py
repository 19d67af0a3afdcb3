"""The batched choice of one model per kernel: every candidate fitted to every kernel of a group at once.

:func:`best_per_kernel` scores every (candidate, kernel) pair of a group with the one scorer of the
search (:func:`automodel.search.score.score_pairs`, many target columns) and chooses per kernel with
the rule automodel.fit uses (:func:`choose`, :mod:`automodel.search.select`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from automodel.options import METRICS, WEIGHTINGS
from automodel.search.score import prepare, score_pairs
from automodel.search.select import (PMNF_RULES, comparable, constant_position, constant_question, departing_rows,
                                     log_predictions, noise_floor, route_rule, select_rows)
from automodel.search.staged import CHUNK_PAIRS
from automodel.solve.design import pairs
from automodel.solve.significance import coefficient_pvalues
from automodel.space.config import SearchSpace

__all__ = ["best_per_kernel", "choose", "CHUNK_PAIRS"]


def _needs_holdout(names: tuple[str, ...]) -> bool:
    return any(METRICS[name].holdout for name in names)


def best_per_kernel(values: np.ndarray, Y: np.ndarray, term_idx: list[list[int]], sp: SearchSpace,
                    hold: np.ndarray | None, noise_se: tuple[np.ndarray, np.ndarray],
                    signed: np.ndarray | None = None, probe_values: np.ndarray | None = None,
                    constant: int = -1) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
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
        Values of the terms at the points beyond the data where automodel.fit compares the equivalent
        candidates (:func:`automodel.fitting.beyond_probes`): with them each kernel's choice passes over
        the candidates whose prediction there departs from the others' (:func:`choose`).
    constant : int
        The column of ``values`` that is the constant term (-1: none), for the rules on a constant
        (:func:`~automodel.search.select.select`, :func:`~automodel.search.select.route_rule`); a
        candidate has it where its coefficient in the kernel's fit is not zero.
    """
    opt = sp.fit
    K, N = Y.shape[1], len(term_idx)
    signed = np.zeros(N, bool) if signed is None else np.asarray(signed, bool)
    routes = signed.any() and (~signed).any() and hold is not None
    need = tuple(dict.fromkeys((opt.metric, "holdout") if routes else (opt.metric,)))
    rows = prepare(values, Y, opt.weighting, hold if _needs_holdout(need) else None)
    widths = np.array([len(t) for t in term_idx])
    score = np.full((K, N), np.inf)
    held = np.full((K, N), np.nan)
    n_terms = np.zeros((K, N), int)  # terms left once NNLS has set some coefficients to zero
    valid = np.zeros(N, bool)
    position = np.full((K, N), -1)  # of the constant among the candidate's terms, where nonzero in its fit
    columns = np.full((N, int(widths.max(initial=0))), -1, np.intp)  # each candidate's terms, -1 padded
    P = 0 if probe_values is None else probe_values.shape[0]
    beyond = np.full((K, N, P), np.nan)  # log predictions at the probes
    for k, sign in sorted({(int(k), bool(g)) for k, g in zip(widths, signed)}):
        members = np.flatnonzero((widths == k) & (signed == sign))
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = rows.usable[combos].all(axis=1)
        members, combos = members[ok], combos[ok]
        valid[members] = True
        columns[members, :k] = combos
        step = max(1, CHUNK_PAIRS // K)
        for lo in range(0, len(members), step):
            part = combos[lo:lo + step]
            cand, kern = pairs(len(part), K)
            coef, mets = score_pairs(rows, part[cand], kern, opt.nonnegative and not sign, need)
            score[:, members[lo:lo + step]] = mets[opt.metric].reshape(K, len(part))
            if routes:
                held[:, members[lo:lo + step]] = mets["holdout"].reshape(K, len(part))
            n_terms[:, members[lo:lo + step]] = np.maximum((coef != 0.0).sum(axis=1), 1).reshape(K, len(part))
            position[:, members[lo:lo + step]] = constant_position(part[cand], coef, constant).reshape(K, len(part))
            if P:
                beyond[:, members[lo:lo + step]] = log_predictions(probe_values, part,
                                                                   coef.reshape(K, len(part), k))
    score = np.where(np.isfinite(score) & valid, score, np.inf)

    def constant_pvalue(picks: np.ndarray) -> np.ndarray:  # of each kernel's pick (called when a rule asks)
        return coefficient_pvalues(rows.design, np.arange(K), columns[picks], position[np.arange(K), picks], len(Y),
                                   noise_floor(WEIGHTINGS[opt.weighting].standard_error, *noise_se))

    best = choose(score, n_terms, valid, len(Y), sp, noise_se, signed if routes else None, held if routes else None,
                  beyond if P else None, position >= 0, constant_pvalue)
    width = int(widths.max(initial=0))
    coefs = np.full((K, width), np.nan)
    mets = {name: np.full(K, np.nan) for name in METRICS}
    picked = best[best >= 0]
    for k, sign in sorted({(int(widths[i]), bool(signed[i])) for i in picked}):  # refit with every metric
        kern = np.flatnonzero((best >= 0) & (widths[best] == k) & (signed[best] == sign))
        combos = np.array([term_idx[i] for i in best[kern]], dtype=np.intp).reshape(len(kern), k)
        chosen = prepare(values, Y[:, kern], opt.weighting, hold)
        coef, got = score_pairs(chosen, combos, np.arange(len(kern)), opt.nonnegative and not sign,
                                tuple(METRICS))
        coefs[kern, :k] = coef
        for name in mets:
            mets[name][kern] = got[name]
    return best, coefs, mets


def choose(score: np.ndarray, n_terms: np.ndarray, valid: np.ndarray, n_points: int, sp: SearchSpace,
           noise_se: tuple[np.ndarray, np.ndarray], signed: np.ndarray | None = None,
           holdout: np.ndarray | None = None, beyond: np.ndarray | None = None, constant: np.ndarray | None = None,
           constant_pvalue: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """Each kernel's candidate by the space's selection rule (:func:`automodel.search.select.select_rows`,
    the rule automodel.fit applies to its ranked candidates, for all kernels at once); the first valid
    one when no score is finite, as the staged search ranks them.

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
    signed, holdout : (N,) or (K, N) bool and (K, N) arrays, optional
        Which candidates come from the PMNF route (the same for every kernel, or each kernel's own), and
        every candidate's ``holdout`` error: with both routes present each makes its own choice and
        :func:`~automodel.search.select.route_rule` decides, as :func:`automodel.fit` does.
    beyond : (K, N, P) array, optional
        Each candidate's log prediction at the probes beyond the data: the equivalent candidates that
        depart from the others there are passed over (:func:`~automodel.search.select.select_rows`).
    constant : (N,) or (K, N) bool array, optional
        Which candidates have a constant term: ties among the simplest equivalent candidates go to one
        (:func:`~automodel.search.select.select`); with ``constant_pvalue`` (each kernel's chosen
        candidate (K,) -> the p-value of its constant, (K,)) for the rule on a constant the data measure.

    Returns
    -------
    (K,) int array
        The chosen candidate of each kernel, -1 when none is valid.
    """
    constant = None if constant is None else np.broadcast_to(constant, score.shape)
    best, thr = select_rows(score, n_terms, n_points, sp.fit.metric, sp.fit.selection, *noise_se, beyond, constant)
    routes = None if signed is None else np.broadcast_to(signed, score.shape)
    if routes is not None and holdout is not None and sp.fit.selection == "simplest" and routes.any() \
            and (~routes).any():  # two routes: each one's choice, then the holdout decides (as fit does)
        rows = np.arange(len(score))
        compared = comparable(score, n_terms, n_points)
        equivalent = np.isfinite(compared) & (compared <= thr[:, None])
        away = np.zeros(score.shape, bool)  # departing from every route's equivalents: passed over (as fit)
        if beyond is not None:
            away = departing_rows(beyond, equivalent)
        picks = []
        for route in (~routes, routes):
            own = np.where(route & ~away, score, np.inf)  # the route's candidates alone, in their order
            pick, _ = select_rows(own, n_terms, n_points, sp.fit.metric, sp.fit.selection, *noise_se, beyond,
                                  constant)
            picks.append((pick, np.isfinite(own[rows, pick])))
        (staged, staged_ok), (pmnf, pmnf_ok) = picks
        top = np.argmin(np.where(np.isfinite(score), score, np.inf), axis=1)  # the best-ranked, as fit's
        has = (False, False) if constant is None else (constant[rows, staged], constant[rows, pmnf])
        pvalue = np.full(len(score), np.nan)
        asks = constant_question((n_terms[rows, staged], n_terms[rows, pmnf]), has)
        if constant_pvalue is not None and np.any(asks):
            pvalue = np.where(asks, constant_pvalue(pmnf), np.nan)
        rule = route_rule((holdout[rows, staged], holdout[rows, pmnf]), (n_terms[rows, staged], n_terms[rows, pmnf]),
                          (equivalent[rows, staged], equivalent[rows, pmnf]), n_points - n_terms[rows, top],
                          noise_relative=noise_se[0], constant=has, constant_pvalue=pvalue)
        routed = np.where(np.isin(rule, PMNF_RULES), pmnf, staged)
        best = np.where(staged_ok & pmnf_ok, routed, best)
    finite = np.isfinite(score[np.arange(len(score)), best])
    if valid.any():
        best[~finite] = int(np.argmax(valid))
    best[~valid[best]] = -1
    return best
