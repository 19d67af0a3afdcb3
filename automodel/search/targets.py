"""Fit and score many (candidate, target) pairs of a stage in batched, memory-bounded steps.

The staged search of many targets (:mod:`automodel.search.engine`) scores, at each stage, the candidates
every target proposed; this module takes the pairs in chunks whose designs fit in memory and solves the
pairs of one width together (:func:`~automodel.search.score.score_pairs`).
"""

from __future__ import annotations

import numpy as np

from automodel.solve.metrics import METRICS
from automodel.search.registry import Batch, Registry
from automodel.search.score import TermCache, fitted, prepare, score_pairs

__all__ = ["score_targets", "CHUNK_PAIRS", "DESIGN_FLOATS"]

#: (candidate, target) pairs solved per vectorised step
CHUNK_PAIRS = 1 << 13
#: floats of the targets' designs held at once (per target, the weighted columns of the terms its
#: candidates use on the stage's rows and, when the pairs need most of it, their Gram matrix: T m or
#: T (T + m)); targets are scored in chunks that fit
DESIGN_FLOATS = 1 << 21


def _marked(columns: np.ndarray, n_columns: int) -> np.ndarray:
    """(n_columns,) bool: which columns appear in ``columns`` (any shape, -1 for none)."""
    mark = np.zeros(n_columns + 1, bool)
    mark[columns.reshape(-1) + 1] = True
    return mark[1:]


def score_targets(cache: TermCache, Y: np.ndarray, reg: Registry, ks: np.ndarray, rows: np.ndarray,
                  ids: np.ndarray, weighting: str, nonnegative: bool, names: tuple[str, ...], with_loo: bool,
                  hold: np.ndarray | None, apart: bool = False) -> Batch:
    """Fit and score the pairs (``ids[r, c]``, target ``ks[r]``) on the rows ``rows``: as
    :func:`automodel.search.score.score` scores structures for one target, for many. Only the terms
    the pairs use are read from ``cache`` (on large data, copying every cached term at every stage cost
    more than some stages' fits).

    Targets are taken in chunks whose designs fit in :data:`DESIGN_FLOATS` (per target, its weighted
    columns of the terms the chunk's candidates use, and their Gram matrix unless the pairs need fewer
    of its entries: then each pair's entries are formed when it is solved, the same numbers); each
    chunk's pairs of one width are solved :data:`CHUNK_PAIRS` at a time
    (:func:`~automodel.search.score.score_pairs`). A pair whose terms are not finite on the rows (or
    whose weighted column overflows for its target) is not fitted: metrics ``inf``, not valid.
    ``hold`` marks the held-out rows of the ``holdout`` metric (read only when ``names`` ask for it).
    ``apart`` (one candidate per target, ``ids`` (R, 1)): the metrics of each candidate's targets are
    computed together and apart from the others', as a search of that candidate's targets alone
    computes them (:func:`~automodel.search.score.score_pairs`, ``runs``); the solves are shared.
    """
    R, C = ids.shape
    width, signed, columns = reg.array("width"), reg.array("signed"), reg.array("columns")
    present = ids >= 0
    k_of = width[ids[present]]
    w_max = max(int(k_of.max(initial=0)), 1)
    metrics = {name: np.full((R, C), np.inf) for name in names}
    coefs = np.full((R, C, w_max), np.nan)
    valid = np.zeros((R, C), bool)
    n_fits = np.zeros(R, int)
    need_hold = hold is not None and any(METRICS[n].holdout for n in names)
    at = np.asarray(rows, bool)
    every = np.flatnonzero(_marked(columns[ids[present]], len(cache)))  # the terms of the pairs, only
    local = np.full(len(cache), -1, np.intp)
    local[every] = np.arange(len(every))
    A = cache.at(at, every)
    y = Y[at]
    hold_rows = np.asarray(hold, bool)[at] if need_hold else None
    finite = np.isfinite(A).all(axis=0)
    n_terms = max(len(every), 1)
    gram = R * n_terms * (n_terms + 1) <= int((k_of * (k_of + 1)).sum())  # whole Gram matrices cost less
    step = max(1, DESIGN_FLOATS // (n_terms * ((n_terms if gram else 0) + len(A))))  # targets per design,
    #                                                                                    bounded by the union
    similar = np.lexsort(ids[:, :4][:, ::-1].T) if C else np.arange(R)  # the same leading candidates:
    #                                                                     mostly the same terms
    cuts = _cuts(ids[similar, 0] if apart else None, R, step)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        chunk = similar[lo:hi]
        sub = ids[chunk]
        r_i, c_i = np.nonzero(sub >= 0)
        if not len(r_i):
            continue
        pid = sub[r_i, c_i]
        used = np.flatnonzero(_marked(columns[pid], len(cache)))
        position = np.full(len(cache), -1, np.intp)
        position[used] = np.arange(len(used))
        prep = prepare(A[:, local[used]], y[:, ks[chunk]], weighting, hold_rows, gram)
        scale_ok = np.isfinite(prep.design.scale) & (np.isfinite(prep.held.scale) if prep.held is not None else True)
        kinds = width[pid] * 2 + signed[pid]
        for kind in np.unique(kinds):
            k, sign = int(kind) // 2, bool(kind % 2)
            sel = np.flatnonzero(kinds == kind)
            combos = position[columns[pid[sel], :k]]
            kern = r_i[sel]
            if k:
                ok = (finite[local[used]][combos] & scale_ok[kern[:, None], combos]).all(axis=1)
                sel, combos, kern = sel[ok], combos[ok], kern[ok]
            n_fits[chunk] += np.bincount(kern, minlength=len(chunk))
            starts = _pieces(pid[sel], CHUNK_PAIRS) if apart else None  # pairs sorted by candidate
            steps = _cuts(None if starts is None else np.cumsum(starts), len(sel), CHUNK_PAIRS)
            for a, b in zip(steps[:-1], steps[1:]):
                part = slice(a, b)
                runs = None if starts is None else np.r_[np.flatnonzero(starts[part]), b - a]
                coef, mets = score_pairs(prep, combos[part], kern[part], nonnegative and not sign, names,
                                         with_loo=with_loo, runs=runs)
                rr, cc = chunk[r_i[sel[part]]], c_i[sel[part]]
                for name in names:
                    metrics[name][rr, cc] = mets[name]
                coefs[rr, cc, :k] = coef
                valid[rr, cc] = fitted(coef)
    return Batch(ks, ids, metrics, coefs, valid, n_fits)


def _pieces(keys: np.ndarray, size: int) -> np.ndarray:
    """(n,) bool: where a piece of ``keys`` (sorted) starts: each run of equal keys in pieces of ``size``."""
    at = np.arange(len(keys))
    first = np.maximum.accumulate(np.where(np.r_[True, keys[1:] != keys[:-1]], at, 0))  # of each one's run
    return (at - first) % size == 0


def _cuts(keys: np.ndarray | None, n: int, step: int) -> list[int]:
    """Where chunks of at most ``step`` of ``n`` rows start, and ``n``: every ``step`` rows, or with
    ``keys`` (sorted, one per row) at the start of the run of equal keys a cut would fall in (a run
    longer than ``step`` is cut after ``step``)."""
    if keys is None:
        return [*range(0, n, step), n]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    cuts = [0]
    while cuts[-1] < n:
        lo = cuts[-1]
        run = starts[np.searchsorted(starts, lo + step, side="right") - 1]
        cuts.append(n if lo + step >= n else int(run) if run > lo else lo + step)
    return cuts
