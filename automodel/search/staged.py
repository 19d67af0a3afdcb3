"""The staged search of the adaptive model (adaptive-model-sanjay-slides.txt, slides 18-22, 25-26).

1. computation: on the runs with the lowest process count, every combination of up to ``max_terms``
   computation terms f(n), alone and divided by the CPU function(s); rank; prune; keep the top.
   Cheap families are evaluated first and a group of related terms is expanded only when its
   representative made the top list (slides 25-26).
2. communication: on the next process-count level, each surviving computation model fixed plus every
   communication term g(n), alone and divided by the bandwidth function(s); rank; prune; keep the top.
3. processors: on all runs, the computation part times each processor function, then the
   communication part times each processor function, then an optional overhead P-term.
Extra parameters multiply each part by a function of the parameter. Without ``n`` the search fits
the P-term models of bayesian-kohashi-2022.txt (eqs. 1-6). Every stage records which rows it used and
what it skipped and why.

The search runs for many targets at once (the kernels of a profile measured at the same points,
:func:`search_kernels`; one target is :func:`staged_search`). Each target has its own candidates:
a stage proposes them from that target's survivors and prunes them by that target's scores, so every
target gets the result of its own search. What is shared: the structures (interned once as integers,
:class:`Registry`, with what each stage makes of a seed built once for all targets), the term values
(one :class:`~automodel.search.score.TermCache`), and the scoring, one batched call per stage for the
(candidate, target) pairs the targets proposed (:func:`~automodel.search.score.score_pairs`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations, product
from math import comb
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from automodel.data import Dataset
from automodel.errors import DataError
from automodel.options import METRICS, weights
from automodel.printing import terms_text
from automodel.search.score import Scores, Structure, TermCache, fitted, prepare, score, score_pairs
from automodel.search.prune import prune_rows, rank
from automodel.search.registry import Batch, Registry, compact, hstack, labels, put, ragged, sorted_groups
from automodel.solve.lines import effect_pvalue, line_rss
from automodel.space.config import MAX_PMNF_PARAMETERS, SearchSpace
from automodel.space.parse import parse_term
from automodel.space.terms import ONE, Over1, Term

#: (candidate, target) pairs solved per vectorised step
CHUNK_PAIRS = 1 << 13
#: floats of the targets' designs held at once (per target, the weighted columns of the terms its
#: candidates use on the stage's rows and, when the pairs need most of it, their Gram matrix: T m or
#: T (T + m)); targets are scored in chunks that fit
DESIGN_FLOATS = 1 << 21

__all__ = ["StageReport", "TemplateLists", "SearchOutcome", "ManyOutcome", "staged_search", "search_kernels",
           "holdout_rows", "all_metrics", "CHUNK_PAIRS"]


@dataclass
class StageReport:
    """What one stage did: on which rows, how many candidates it fitted, kept and deleted (summed over
    the targets of a search of many)."""

    name: str
    rows: str
    n_rows: int
    n_candidates: int = 0
    n_fits: int = 0
    n_deleted: int = 0
    n_kept: int = 0
    note: str = ""

    def line(self) -> str:
        text = (f"{self.name:<14} rows: {self.rows} ({self.n_rows})  fitted {self.n_candidates}, "
                f"deleted {self.n_deleted}, kept {self.n_kept}")
        return text + (f"\n    [{self.note}]" if self.note else "")  # on its own line: 80 columns


@dataclass
class SearchOutcome:
    """Final candidates scored on all rows, best first, and the stage reports."""

    scores: Scores
    order: np.ndarray
    reports: list[StageReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: whether a stage built its candidates from an earlier stage's survivors (so the candidates depend
    #: on the measured times); False: the same candidates for any times (kernels are solved batched)
    adaptive: bool = True
    #: every term of the search, and each scored candidate's terms as indices into it (-1 padded)
    terms: list[Term] = field(default_factory=list)
    columns: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.intp))


@dataclass
class ManyOutcome:
    """The staged search of many targets: per target (row), its final candidates scored on all rows.

    Attributes
    ----------
    structures : list of Structure
        Every candidate of the search; the arrays below hold indices into it.
    terms : list of Term
        Every term of the candidates.
    columns : (len(structures), width) int array
        Each candidate's terms (:attr:`Structure.terms`, in order) as indices into ``terms``, -1 padded.
    signed : (len(structures),) bool array
        :attr:`Structure.signed` of each candidate.
    ids : (K, C) int array
        Each target's candidates of the stages scored on all rows, in the order they were scored
        (-1: none).
    metrics : dict of (K, C) arrays
        The metrics the search computed (``inf`` where a pair could not be fitted).
    coefficients : (K, C, width) array
        Coefficients in the order of each structure's terms, NaN-padded.
    valid : (K, C) bool array
    n_fits : (K,) int array
        Pairs fitted in the stages scored on all rows.
    order : (K, L) int array
        Positions in each row, best first, one per distinct set of nonzero terms and route (-1 padded).
    failed : dict
        Target -> why its search stopped (no computation model could be fitted).
    reports, notes, adaptive :
        As in :class:`SearchOutcome` (counts summed over the targets).
    rescore : callable
        ``rescore(chosen)`` with one candidate id per target (-1: none): each scored on all rows with
        every metric, as :func:`all_metrics` scores the candidates of one target: ``(coefficients (K,
        width), metrics dict of (K,) arrays)``. The targets that chose the same candidate are scored
        together on its terms alone, so a target's numbers do not depend on the others.
    """

    structures: list[Structure]
    terms: list[Term]
    columns: np.ndarray
    signed: np.ndarray
    ids: np.ndarray
    metrics: dict[str, np.ndarray]
    coefficients: np.ndarray
    valid: np.ndarray
    n_fits: np.ndarray
    order: np.ndarray
    failed: dict[int, str]
    reports: list[StageReport]
    notes: list[str]
    adaptive: bool
    rescore: Callable[[np.ndarray], tuple[np.ndarray, dict[str, np.ndarray]]]

    def outcome(self, j: int) -> SearchOutcome:
        """The :class:`SearchOutcome` of target ``j`` (what :func:`staged_search` returns for it alone)."""
        c = int(np.count_nonzero(self.ids[j] >= 0))
        structures = [self.structures[i] for i in self.ids[j, :c]]
        widths = np.array([len(s.terms) for s in structures], dtype=int)
        scores = Scores(structures, self.coefficients[j, :c, :int(widths.max(initial=0))],
                        {m: v[j, :c] for m, v in self.metrics.items()}, widths, int(self.n_fits[j]),
                        self.valid[j, :c])
        order = self.order[j]
        columns = self.columns[self.ids[j, :c], :scores.coefficients.shape[1]]
        return SearchOutcome(scores, order[order >= 0], self.reports, self.notes, self.adaptive, self.terms, columns)


def _rename(term: Term, old: str, new: str) -> Term:
    """``term`` with parameter ``old`` replaced by ``new`` (the ``x`` placeholder of families)."""
    return _canonical(Term(tuple(replace(f, param=new) if f.param == old else f for f in term.factors)))


def _uses(term: Term, params: set[str]) -> bool:
    return term.params <= params


def _unit(term: Term, lowest: Mapping[str, float]) -> bool:
    """True when a factor ``over1(x)`` of ``term`` is 1 on every run (no run has x below 2): the term is
    then the same as without it, which the stage's list holds."""
    return any(isinstance(f, Over1) and lowest[f.param] >= 2 for f in term.factors)


class _Search:
    """State of one staged search of the targets ``Y`` (m, K): the dataset, its term cache and structures,
    the options, the reports, each target's scored final stages."""

    def __init__(self, ds: Dataset, space: SearchSpace, Y: np.ndarray, names: tuple[str, ...],
                 progress: bool) -> None:
        self.ds = ds
        self.space = space
        self.opt = space.fit
        self.Y = Y
        self.names = names
        self.cache = TermCache(ds.columns(), ds.n_points)
        self.reg = Registry(self.cache)
        self.params = set(ds.params)
        self.lowest = {q: float(ds.frame[q].min()) for q in ds.params}
        self.reports: list[StageReport] = []
        self.notes: list[str] = []
        self.final: list[Batch] = []
        self.failed: dict[int, str] = {}
        self.adaptive = False
        self.bar = tqdm(total=6, desc="staged search", unit="stage", delay=1.0, disable=not progress,
                        leave=False)

    # -- helpers -------------------------------------------------------------------------------
    def terms(self, stage: str, key: str, default: tuple[Term, ...] = ()) -> tuple[Term, ...]:
        """The stage's terms that only use parameters this dataset has (and are not the same as another)."""
        return tuple(_canonical(t) for t in self.space.stages.get(stage, {}).get(key, default)
                     if _uses(t, self.params) and not _unit(t, self.lowest))

    def note(self, text: str) -> None:
        """Record a note once (many targets may give the same)."""
        if text not in self.notes:
            self.notes.append(text)

    def run(self, name: str, ks: np.ndarray, rows: np.ndarray, rows_text: str, cands: np.ndarray,
            top: int | None, note: str = "", final: bool = False, then: _Lists | None = None
            ) -> tuple[np.ndarray, Batch]:
        """Score each target's candidates on rows, prune by percentile, keep the top; record the stage.

        ``ks`` are the targets (rows of ``cands``, (R, C) ids, -1 for none). Each row keeps one
        structure per term set (the last proposed, at the place of the first) and drops those with as
        many terms as the rows have configurations (no residual degree of freedom: the score is
        undefined; the report says how many). ``then`` (the template-list cache, :class:`TemplateLists`
        of each target) is given each row's scored structures and returns more to score before the
        stage prunes them all together. Returns the survivors (R, C') best first and what was scored.
        """
        n_rows = int(np.count_nonzero(rows))
        report = StageReport(name, rows_text, n_rows, note=note)
        self.reports.append(report)
        self.bar.update(1)
        ids, skipped = self._fresh(cands, None, n_rows)
        batch = self._score(ks, rows, ids)
        if then is not None:
            more = self.reg.rows([then.more(r, batch.scores(r, self.reg)) if (ids[r] >= 0).any() else []
                                  for r in range(len(ks))])
            extra, skipped_more = self._fresh(more, ids, n_rows)
            batch = batch.concat(self._score(ks, rows, extra))
            skipped += skipped_more
        if skipped.sum():
            wide = f"{int(skipped.sum())} with {n_rows}+ terms not fitted on {n_rows} rows"
            report.note = f"{report.note}; {wide}" if report.note else wide
        report.n_candidates = int(np.count_nonzero(batch.ids >= 0))
        if then is not None:
            report.note = "; ".join(filter(None, [report.note, then.note()]))
            self.notes.append(f"{name}: {then.note()}")
        report.n_fits = int(batch.n_fits.sum())
        kept, report.n_deleted = prune_rows(batch.metrics[self.opt.metric], batch.ids, self.opt.prune_percentile,
                                             self.opt.min_survivors, top)
        report.n_kept = int(np.count_nonzero(kept >= 0))
        if final:
            self.final.append(batch)
        return kept, batch

    def rescore(self, chosen: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """:attr:`ManyOutcome.rescore`."""
        K = len(chosen)
        width = max(int(self.reg.array("width")[chosen[chosen >= 0]].max(initial=0)), 1)
        coefs = np.full((K, width), np.nan)
        metrics = {m: np.full(K, np.nan) for m in METRICS}
        ks = np.flatnonzero(chosen >= 0)
        if len(ks):
            batch = _score_targets(self.cache, self.Y, self.reg, ks, np.ones(self.ds.n_points, bool),
                                   chosen[ks, None], self.opt.weighting, self.opt.nonnegative, tuple(METRICS),
                                   True, holdout_rows(self.ds), apart=True)
            coefs[ks, :batch.coefs.shape[2]] = batch.coefs[:, 0]
            for m in metrics:
                metrics[m][ks] = batch.metrics[m][:, 0]
        return coefs, metrics

    def _fresh(self, cands: np.ndarray, seen: np.ndarray | None, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``cands``, one structure per term set not in that row of ``seen``: the last one
        proposed, at the place of the first; those with ``n_rows`` or more terms left out. Returns the
        candidates (R, C') and how many were left out per row."""
        n_seen = 0 if seen is None else seen.shape[1]
        both = cands if seen is None else np.concatenate([seen, cands], axis=1)
        keys = np.where(both >= 0, self.reg.array("key")[np.maximum(both, 0)], -1)
        order, start, end = sorted_groups(keys)
        r0, s0 = np.nonzero(start)
        r1, s1 = np.nonzero(end)  # one end per start, in the same order
        first, last = order[r0, s0], order[r1, s1]
        new = (keys[r0, first] >= 0) & (first >= n_seen)
        out = np.full(cands.shape, -1, np.intp)
        out[r0[new], first[new] - n_seen] = both[r1[new], last[new]]
        wide = (out >= 0) & (self.reg.array("width")[np.maximum(out, 0)] >= n_rows)
        out[wide] = -1
        return compact(out)[0], wide.sum(axis=1)

    def _score(self, ks: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> Batch:
        """Every (candidate, target) pair of ``ids`` (R, C) scored on ``rows``."""
        return _score_targets(self.cache, self.Y, self.reg, ks, rows, ids, self.opt.weighting,
                              self.opt.nonnegative, self.names, METRICS[self.opt.metric].leverages,
                              holdout_rows(self.ds, rows))


def _marked(columns: np.ndarray, n_columns: int) -> np.ndarray:
    """(n_columns,) bool: which columns appear in ``columns`` (any shape, -1 for none)."""
    mark = np.zeros(n_columns + 1, bool)
    mark[columns.reshape(-1) + 1] = True
    return mark[1:]


def _score_targets(cache: TermCache, Y: np.ndarray, reg: Registry, ks: np.ndarray, rows: np.ndarray,
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


class TemplateLists:
    """The template-list cache of adaptive-model-sanjay-slides.txt, slide 26.

    The seeds of a stage (models from the previous stage, best first) fall into families (for the
    communication stage: which of the representative polynomial groups their computation part
    belongs to; for the processor stage: that and the communication part). The first seed of a
    family is fitted with every addition of the stage (communication terms, processor functions);
    the ``size`` additions that ranked best for it form the family's template list, and the other
    seeds of the family are fitted with that list only. Seeds of no family get every addition.

    Parameters
    ----------
    seeds : list of Structure
        The stage's seeds, best first.
    additions : list
        What the stage adds to a seed, in any form ``make`` understands.
    make : callable
        ``make(seed, addition) -> Structure``.
    family : callable
        ``family(seed)``: a hashable family key, or None for a seed of no family.
    size : int
        Length of a template list.
    metric : str
        The metric that ranks a representative's candidates.
    """

    def __init__(self, seeds: list[Structure], additions: list, make: Callable[[Structure, Any], Structure],
                 family: Callable[[Structure], Hashable | None], size: int, metric: str) -> None:
        self.seeds, self.additions, self.make = seeds, additions, make
        self.size, self.metric = size, metric
        self.families = [family(s) for s in seeds]
        self.leader: dict[Hashable, int] = {}
        for i, f in enumerate(self.families):
            if f is not None:
                self.leader.setdefault(f, i)
        self.n_first = self.n_rest = 0

    def first(self) -> list[Structure]:
        """Every addition to the seeds that lead a family or have none."""
        out = [self.make(s, a) for i, s in enumerate(self.seeds)
               if self.families[i] is None or self.leader[self.families[i]] == i for a in self.additions]
        self.n_first = len(out)
        return out

    def __call__(self, scored: Scores) -> list[Structure]:
        """The other seeds of each family with its template list, ranked on ``scored``."""
        value = dict(zip((s.key for s in scored.structures), scored.metric(self.metric)))
        lists = {}
        for f, i in self.leader.items():
            ranks = [value.get(self.make(self.seeds[i], a).key, np.inf) for a in self.additions]
            best = rank(np.asarray(ranks, float))[:self.size]
            lists[f] = [self.additions[j] for j in best if np.isfinite(ranks[j])]
        out = [self.make(s, a) for i, s in enumerate(self.seeds)
               if self.families[i] is not None and self.leader[self.families[i]] != i
               for a in lists[self.families[i]]]
        self.n_rest = len(out)
        return out

    def note(self) -> str:
        full = len(self.seeds) * len(self.additions)
        done = self.n_first + self.n_rest
        return (f"template-list cache (slide 26): {len(self.leader)} list(s) of {self.size}, "
                f"{done} candidates instead of {full} (saved {full - done})")


def holdout_rows(ds: Dataset, rows: np.ndarray | None = None) -> np.ndarray | None:
    """The largest configurations among ``rows`` (default all) of ``ds``: the top level of every
    parameter but the loads (each when it has at least 3 levels there), held out for the
    forward-extrapolation metric; None when nothing qualifies or fewer than 3 rows would be left."""
    rows = np.ones(ds.n_points, bool) if rows is None else rows
    hold = np.zeros(len(rows), bool)
    for q in ds.params:
        if q not in ("cpu", "bw"):
            v = ds.frame[q].to_numpy()
            if len(np.unique(v[rows])) >= 3:
                hold |= rows & (v == v[rows].max())
    left = int(np.count_nonzero(rows & ~hold))
    return hold if hold.any() and left >= 3 else None


def all_metrics(sc: Scores, shown: list[int], ds: Dataset, opt: Any) -> dict[str, np.ndarray]:
    """Every metric of the candidates ``shown`` (positions in ``sc``, a search of ``ds`` with the fit
    options ``opt``). The search computes the leverages of ``loo`` (and ``forward``) only when it ranks
    by them, the costliest per-row work on large data, so they are computed here for the candidates
    shown: the same fits on all runs, scored again."""
    metrics = {m: v[shown] for m, v in sc.metrics.items()}
    missing = [m for m, v in metrics.items() if METRICS[m].leverages and np.isnan(v).any()]
    if not missing or not shown:
        return metrics
    again = score(TermCache(ds.columns(), ds.n_points), np.ones(ds.n_points, bool), ds.frame["time"].to_numpy(float),
                  [sc.structures[i] for i in shown], opt.weighting, opt.nonnegative, with_loo=True,
                  holdout=holdout_rows(ds))
    for m in missing:
        metrics[m] = np.where(np.isnan(metrics[m]), again.metric(m), metrics[m])
    return metrics


def _subsets(terms: tuple[Term, ...], max_terms: int, min_terms: int = 1) -> list[tuple[Term, ...]]:
    return [c for k in range(min_terms, max_terms + 1) for c in combinations(terms, k)]


@lru_cache(maxsize=1 << 16)
def _product(a: Term, b: Term) -> Term:
    """``a * b``, built once (stages multiply the same terms by the same functions for every seed)."""
    return _canonical(a * b)


@lru_cache(maxsize=1 << 16)
def _canonical(term: Term) -> Term:
    """The first term seen equal to ``term``: equal terms made in different ways become one object, so
    the structures that hold them compare (and are interned) by identity, not factor by factor."""
    return term


_canonical(ONE)  # first: the constant of the stages (``ONE``) is the canonical constant


def _times(part: tuple[Term, ...], factor: Term) -> tuple[Term, ...]:
    return tuple(_product(t, factor) for t in part)




class _Lists:
    """The template-list cache (:class:`TemplateLists`) of each target: one per row of seeds."""

    def __init__(self, reg: Registry, seeds: np.ndarray, additions: list,
                 make: Callable[[Structure, Any], Structure], family: Callable[[Structure], Hashable | None],
                 size: int, metric: str) -> None:
        self.reg = reg
        self.lists = [TemplateLists([reg.structures[i] for i in row[row >= 0]], additions, make, family, size, metric)
                      for row in seeds]

    def first(self) -> np.ndarray:
        """Each target's first candidates (:meth:`TemplateLists.first`), (R, C) ids."""
        return self.reg.rows([lists.first() for lists in self.lists])

    def more(self, r: int, scored: Scores) -> list[Structure]:
        """Target ``r``'s other seeds with their families' lists (:meth:`TemplateLists.__call__`)."""
        return self.lists[r](scored)

    def note(self) -> str:
        return self.lists[0].note() if self.lists else ""


def _part_stage(S: _Search, ks: np.ndarray, name: str, rows: np.ndarray, rows_text: str, seeds: np.ndarray,
                part: str, multipliers: tuple[Term, ...], final: bool, note: str = "") -> np.ndarray:
    """Stages 1 and 2: add subsets of a term family (times a load function) to every seed structure.

    Evaluates the base family first; a group is expanded only when its representative appears in a
    surviving candidate (slides 25-26). Records how many fits that saved against the full family.
    ``seeds`` (R, S) are the seeds of the targets ``ks``; returns their survivors.
    """
    cfg = S.space.stages.get(name, {})
    base = S.terms(name, "base")
    groups = _groups(S, name)
    max_terms = min(cfg.get("max_terms", 2), max(1, int(np.count_nonzero(rows)) - 3))
    loads = tuple(m for m in cfg.get("load", (ONE,)) if _uses(m, S.params)) or (ONE,)
    min_terms = 0 if part == "comm" else 1

    # the constant is the serial part: never divided by a load nor multiplied by a processor function
    intercepts = ((), (ONE,)) if ONE in base else ((),)
    base = tuple(t for t in base if t != ONE)

    def make(seed: Structure, add: tuple) -> Structure:
        sub, load, mult, icpt = add
        terms = _times(_times(sub, load), mult)
        return (Structure(seed.comp + terms, seed.comm, seed.extra + icpt) if part == "comp" else
                Structure(seed.comp, seed.comm + terms, seed.extra + icpt))

    additions = [(sub, load, mult, icpt) for sub in _subsets(base, max_terms, min_terms)
                 for load in loads for mult in multipliers for icpt in intercepts]
    comp_groups = _groups(S, "computation")
    lists = None
    if part == "comm" and cfg.get("template_list", 0) and comp_groups:
        lists = _Lists(S.reg, seeds, additions, make, lambda s: _family(s.comp, comp_groups),
                       cfg["template_list"], S.opt.metric)
    cands = lists.first() if lists else S.reg.table(seeds, lambda s: [make(s, a) for a in additions])
    survivors, _ = S.run(name, ks, rows, rows_text, cands, cfg.get("top", 16), note, final, then=lists)
    fitted = S.reports[-1].n_candidates
    none = (survivors < 0).all(axis=1)
    if part == "comm" and none.any():  # hand on what the stage got: the computation models
        S.note(f"{name}: no candidate could be fitted on {rows_text}; the computation models "
               "go on without communication terms")
    def part_of(s: Structure) -> tuple[Term, ...]:
        return s.comp if part == "comp" else s.comm

    def with_part(s: Structure, new: tuple[Term, ...]) -> Structure:
        return Structure(new, s.comm, s.extra) if part == "comp" else Structure(s.comp, new, s.extra)

    expanded = []
    hit_groups = []
    for g in groups:
        hits = S.reg.table(survivors, lambda s: [s] if any(_contains(t, g.representative) for t in part_of(s))
                           else [])
        hits = hits[:, :survivors.shape[1]] if hits.shape[1] else np.full(survivors.shape, -1, np.intp)
        if part == "comm":
            hits[none] = -1
        if (hits >= 0).any():
            hit_groups.append(terms_text([g.representative]))
        expanded.append(S.reg.table(hits, lambda s: [with_part(s, tuple(_swap(t, g.representative, member)
                                                                        for t in part_of(s)))
                                                     for member in g.members]))
    expanded = compact(np.concatenate(expanded, axis=1))[0] if expanded else np.full((len(ks), 0), -1, np.intp)
    grow = (expanded >= 0).any(axis=1)
    if grow.any():
        at = np.flatnonzero(grow)
        more, _ = S.run(name + "+groups", ks[at], rows, rows_text, hstack(survivors[at], expanded[at]),
                        cfg.get("top", 16), "groups expanded around: " + ", ".join(hit_groups), final)
        fitted += S.reports[-1].n_candidates
        survivors = put(survivors, at, more)
    if groups and not (part == "comm" and none.all()):  # (a stage without survivors handed its seeds on)
        all_terms = len(base) + sum(len(g.members) for g in groups)
        full = int(np.count_nonzero(seeds >= 0)) * len(loads) * len(multipliers) * len(intercepts) * sum(
            comb(all_terms, k) for k in range(min_terms, max_terms + 1))
        S.notes.append(f"{name}: overhead reduction fitted {fitted} candidates instead of {full} "
                       f"(saved {full - fitted}, {100 * (full - fitted) / max(full, 1):.0f}%)")
    if part == "comm" and none.any():
        survivors = put(survivors, np.flatnonzero(none), seeds[none])
    return survivors


def _groups(S: _Search, stage: str) -> list:
    """The stage's term groups whose representative uses only parameters of the data."""
    return [g for g in S.space.stages.get(stage, {}).get("groups", ()) if _uses(g.representative, S.params)]


def _family(part: tuple[Term, ...], groups: list) -> frozenset[int] | None:
    """Which of ``groups`` (a representative and its members) the terms of ``part`` belong to; None
    when none: the family of a seed in the template-list cache (:class:`TemplateLists`)."""
    hits = frozenset(i for i, g in enumerate(groups) for t in part
                     if any(_contains(t, r) for r in (g.representative, *g.members)))
    return hits or None


def _contains(term: Term, rep: Term) -> bool:
    """Whether ``term`` is ``rep`` times only non-``n`` factors (loads, processor functions)."""
    rest = [f for f in term.factors if f not in rep.factors]
    return all(f in term.factors for f in rep.factors) and all(
        f.param not in rep.params for f in rest)


def _swap(term: Term, rep: Term, member: Term) -> Term:
    if not _contains(term, rep):
        return term
    return _canonical(Term(tuple(f for f in term.factors if f not in rep.factors)) * member)


def _stage_processors(S: _Search, ks: np.ndarray, seeds: np.ndarray, rows: np.ndarray, final: bool) -> np.ndarray:
    """Stage 3 on ``rows``, or, with ``p_min`` in the space's ``[stages.processors]``, on the runs with
    ``p >= p_min`` (the slides train the processor functions on p = 2, 4, 8: adaptive-model-sanjay-
    slides.txt, slides 20-21), its survivors then scored on ``rows`` for the ranking. A target whose
    seeds have too many terms for the runs with ``p >= p_min`` uses all runs."""
    p_min = S.space.stages.get("processors", {}).get("p_min", 1)
    if p_min <= 1:
        return _processors(S, ks, seeds, rows, "all runs", final, rows, final)
    subset = rows & (S.ds.frame["p"].to_numpy(float) >= p_min)
    widest = np.where(seeds >= 0, S.reg.array("width")[np.maximum(seeds, 0)], 0).max(axis=1, initial=0)
    own = np.count_nonzero(subset) > widest + 2
    if not own.all():
        S.note(f"processors: too few runs with p >= {p_min}; all runs used")
    out = np.full((len(ks), 0), -1, np.intp)
    for mask, stage_rows, text, alone in ((own, subset, f"p >= {p_min}", False), (~own, rows, "all runs", final)):
        if mask.any():
            at = np.flatnonzero(mask)
            out = put(out, at, _processors(S, ks[at], seeds[at], stage_rows, text, alone, rows, final))
    return out


def _processors(S: _Search, ks: np.ndarray, seeds: np.ndarray, stage_rows: np.ndarray, text: str, own: bool,
                rows: np.ndarray, final: bool) -> np.ndarray:
    """Stage 3 of the targets ``ks`` on ``stage_rows`` (scored as final when ``own``)."""
    cfg = S.space.stages.get("processors", {})
    top = cfg.get("top", 24)
    comp_f = S.terms("processors", "computation") or (ONE,)
    comm_f = S.terms("processors", "communication") or (ONE,)
    over = S.terms("processors", "overhead")
    size, comp_groups, comm_groups = cfg.get("template_list", 0), _groups(S, "computation"), _groups(S, "communication")

    def family(s: Structure) -> tuple | None:  # the computation and communication models' families
        comp = _family(s.comp, comp_groups)
        comm = _family(s.comm, comm_groups) if comm_groups else frozenset(s.comm)
        return None if comp is None or comm is None else (comp, comm)

    def times(s: Structure, f: Term) -> Structure:
        return Structure(_times(s.comp, f), s.comm, s.extra)

    def comm_times(s: Structure, f: Term) -> Structure:
        return Structure(s.comp, _times(s.comm, f), s.extra)

    def stage(name: str, ks: np.ndarray, base: np.ndarray, functions: tuple[Term, ...], make: Callable
              ) -> tuple[np.ndarray, np.ndarray]:
        lists = (_Lists(S.reg, base, list(functions), make, family, size, S.opt.metric)
                 if size and comp_groups else None)
        first = lists.first() if lists else S.reg.table(base, lambda s: [make(s, f) for f in functions])
        kept, batch = S.run(name, ks, stage_rows, text, first, top, final=own, then=lists)
        return kept, batch.ids

    kept, scored = stage("processors/comp", ks, seeds, comp_f, times)
    with_comm = (np.where(kept >= 0, S.reg.array("comm")[np.maximum(kept, 0)], False)).any(axis=1)
    if with_comm.any():
        at = np.flatnonzero(with_comm)
        more_kept, more = stage("processors/comm", ks[at], kept[at], comm_f, comm_times)
        kept = put(kept, at, more_kept)
        scored = put(scored, at, hstack(scored[at], more))
    if over:
        s3c = hstack(kept, S.reg.table(kept, lambda s: [Structure(s.comp, s.comm, s.extra + (f,)) for f in over]))
        kept, _ = S.run("processors/overhead", ks, stage_rows, text, s3c, top, final=own)
        scored = hstack(scored, s3c)
    if final and not own:  # everything the stage scored, ranked on all runs (as the final stages are)
        S.run("processors/rank", ks, rows, "all runs", scored, None, final=True)
    return kept


def _stage_parameters(S: _Search, ks: np.ndarray, seeds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    cfg = S.space.stages.get("parameters", {})
    funcs = cfg.get("functions", (parse_term("x"),))
    kept = seeds
    for x in S.ds.extra_params:
        hs = [_rename(h, "x", x) for h in funcs]

        def make(s: Structure) -> list[Structure]:
            cands = []
            for h in hs:
                cands.append(Structure(_times(s.comp, h), s.comm, s.extra))
                if s.comm:
                    cands.append(Structure(s.comp, _times(s.comm, h), s.extra))
                    cands.append(Structure(_times(s.comp, h), _times(s.comm, h), s.extra))
            return cands

        kept, _ = S.run(f"parameters/{x}", ks, rows, "all runs", S.reg.table(kept, make), cfg.get("top", 16),
                        final=True)
    return kept


def _lines(ds: Dataset, x: str, xs: list[str], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, str]:
    """The lines of the grid in ``x`` among ``rows``: the runs whose other parameters of ``xs`` (at least
    one) are fixed.

    Returns each run's line (int labels), which runs lie on a line with at least 3 distinct ``x`` (the
    lines a block of ``x`` is judged on), how many such lines, and a text for the report ("25 line(s)").
    When no line has 3 distinct ``x``, all ``rows`` form one line."""
    frame = ds.frame
    line = frame.groupby([q for q in xs if q != x], sort=False).ngroup().to_numpy()
    distinct = frame[x].where(rows).groupby(line).transform("nunique").to_numpy()  # NaN: not counted
    on = rows & (distinct >= 3)
    if not on.any():
        return np.zeros(len(frame), np.int64), rows, 1, "all runs"
    n_lines = len(np.unique(line[on]))
    return line, on, n_lines, f"{n_lines} line(s)"


#: a parameter whose best block explains its lines no better than noise would with this probability
#: (F test against the constant on every line, :func:`automodel.solve.lines.effect_pvalue`) offers the
#: PMNF route its best block only (and, as always, "left out"): three blocks fitted to noise alone make a
#: crowd of steep, tiny terms that fit the noise and outvote the constant in the departing rule
#: (:func:`automodel.search.select.departing_rows`; a constant of two parameters, 5 % noise, became
#: ``42.84 - 3.9e-6 y^(5/2) log2(y)^2``, 45x off at 16x). Measured (python -m benchmarks.accuracy): with
#: no block at all for such a parameter, a RELeARN region chose an exploding RBASP template (46.0 ->
#: 49.6 % median, 53 -> 13155 % mean); with the best block, Extra-P's matrix-multiply profiles in x, y,
#: z went 13.9 / 21.8 -> 7.5 / 10.3 % (median / mean)
NO_EFFECT_P = 1e-3


def _lead_blocks(S: _Search, x: str, xs: list[str], ks: np.ndarray, rows: np.ndarray, blocks: tuple[Term, ...],
                 keep: int) -> list[list[Term | None]]:
    """Each target's ``keep`` best ``blocks`` of ``x``, after ``None`` (x left out), by the residual sum
    of squares of ``c_g + b_g block(x)`` fitted on every line ``g`` of the grid in ``x`` and pooled
    (:func:`automodel.solve.lines.line_rss`); the best alone where even that one has no significant
    effect (:data:`NO_EFFECT_P`). Recorded as the stage ``pmnf/x``."""
    line, on, n_lines, text = _lines(S.ds, x, xs, rows)
    n_on = int(np.count_nonzero(on))
    report = StageReport(f"pmnf/{x}", text, n_on)
    S.reports.append(report)
    S.bar.update(1)
    cols = np.array([S.cache.index(t) for t in blocks], np.intp)
    Y = S.Y[on][:, ks]
    rss, rss_constant = line_rss(S.cache.at(on, cols), Y, weights(Y, S.opt.weighting), line[on])
    best = np.argsort(rss, axis=0, kind="stable")[:keep].T  # (K, keep)
    effect = effect_pvalue(rss.min(axis=0), rss_constant, n_on, n_lines)
    weak = (effect > NO_EFFECT_P)[:, None] & (np.arange(keep) >= 1)[None, :]  # its best block only
    ok = np.take_along_axis(np.isfinite(rss).T, best, axis=1) & ~weak
    report.n_candidates = len(blocks)
    report.n_fits = int(np.isfinite(rss).sum())
    report.n_kept = int(ok.sum())
    report.n_deleted = report.n_fits - report.n_kept
    return [[None, *(blocks[i] for i, good in zip(b, g) if good)] for b, g in zip(best, ok)]


def _collections(names: list[str], max_terms: int) -> list[tuple[frozenset[str], ...]]:
    """Every set of at most ``max_terms`` monomials (non-empty subsets of ``names``) that together
    use every name: the ways to combine one term per parameter by sums and products (for x, y:
    f + g, f g, f + f g, g + f g, f + g + f g)."""
    monomials = [frozenset(c) for k in range(1, len(names) + 1) for c in combinations(names, k)]
    full = frozenset(names)
    return [c for k in range(1, max_terms + 1) for c in combinations(monomials, k)
            if frozenset().union(*c) == full]


def _stage_pmnf(S: _Search, ks: np.ndarray, rows: np.ndarray) -> None:
    """Extra-P's hypothesis space on every parameter, whatever its name (not ``cpu``/``bw``): the
    performance model normal form c0 + sum_k c_k prod_l x_l^(i_kl/j_kl) log2^(h_kl)(x_l) (Calotoiu
    et al., SC'13, eq. 1), with signed coefficients and the constant model.

    Each parameter's building blocks (``terms``, with ``x`` for the parameter) are first ranked alone,
    ``c_g + b_g block(x)`` on every line ``g`` of the grid where only that parameter varies (its own
    intercept and slope per line, the residuals pooled: :func:`_lead_blocks`). Its ``per_parameter``
    best, and always the parameter left out ("no effect": noise on a parameter without effect makes
    some shrinking block rank above the constant), are then combined by sums and products across
    parameters into candidates of at most ``max_terms`` terms besides c0, scored on all rows. Where
    every block of every parameter gives at most ``exhaustive`` combined candidates, all blocks are
    combined (an exhaustive search). Each target combines its own best blocks; targets with the same
    ones share their candidates.
    """
    cfg = S.space.stages["pmnf"]
    blocks = cfg.get("terms", ())
    xs = [x for x in S.ds.params if x not in ("cpu", "bw")]
    if not xs or len(xs) > MAX_PMNF_PARAMETERS:
        S.notes.append(f"pmnf: {len(xs)} parameters (other than cpu and bw); the PMNF route combines 1 to "
                       f"{MAX_PMNF_PARAMETERS}: skipped")
        return
    max_terms = cfg.get("max_terms", 3)
    per = {x: tuple(_rename(b, "x", x) for b in blocks) for x in xs}

    if len(xs) == 1:  # the constant, and the constant plus one block
        alone = [Structure(extra=(ONE,), signed=True)] + [Structure(extra=(ONE, t), signed=True) for t in per[xs[0]]]
        S.run(f"pmnf/{xs[0]}", ks, rows, "all runs", S.reg.same(alone, len(ks)), cfg.get("top", 42), final=True)
        return
    n_collections = len(_collections(xs, max_terms))
    exhaustive = (int(np.prod([len(per[x]) + 1 for x in xs], dtype=float)) * n_collections
                  <= cfg.get("exhaustive", 20_000))
    leads: dict[str, list[list[Term | None]]] = {}
    S.adaptive = S.adaptive or not exhaustive
    for x in xs:
        if exhaustive:
            leads[x] = [[None, *per[x]]] * len(ks)
            continue
        leads[x] = _lead_blocks(S, x, xs, ks, rows, per[x], cfg.get("per_parameter", 3))
    budget = cfg.get("budget", 8000)
    memo: dict[tuple, np.ndarray] = {}
    rows_of = []
    for r in range(len(ks)):
        lead = {x: leads[x][r] for x in xs}
        while int(np.prod([len(v) for v in lead.values()])) * n_collections > budget:  # bounded: drop the
            longest = max(xs, key=lambda q: len(lead[q]))                             # worst lead of the
            if len(lead[longest]) == 1:                                                # longest list
                break
            lead[longest] = lead[longest][:-1]
        key = tuple(tuple(lead[x]) for x in xs)
        if key not in memo:
            memo[key] = S.reg.ids(_pmnf_candidates(xs, lead, max_terms))
        rows_of.append(memo[key])
    cands = ragged(np.concatenate(rows_of), np.fromiter(map(len, rows_of), np.intp, len(rows_of)))
    S.run("pmnf/combined", ks, rows, "all runs" + (" (exhaustive)" if exhaustive else ""), cands,
          cfg.get("top", 42), final=True)


def _pmnf_candidates(xs: list[str], lead: dict[str, list[Term | None]], max_terms: int) -> list[Structure]:
    """The constant, and every combination by sums and products (:func:`_collections`) of one lead block
    per parameter (None: the parameter left out)."""
    cands = [Structure(extra=(ONE,), signed=True)]
    for choice in product(*(lead[x] for x in xs)):
        used = [x for x, t in zip(xs, choice) if t is not None]
        if not used:
            continue
        term_of = dict(zip(xs, choice))
        for collection in _collections(used, max_terms):
            monomials = []
            for mono in collection:
                term = ONE
                for x in sorted(mono, key=xs.index):
                    term = term * term_of[x]
                monomials.append(term)
            cands.append(Structure(extra=(ONE, *monomials), signed=True))
    return cands


@contextmanager
def _no_collection() -> Iterator[None]:
    """Cyclic garbage collection paused (and resumed if it ran before). A search of many targets makes
    ~10^5 small objects that form no cycles (its structures, their tuples and ids), and each full
    collection they set off while it runs walks the whole heap: 0.35 s of 2.1 s for 1000 two-parameter
    kernels. After it, one collection of the young generation takes them in."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def staged_search(ds: Dataset, space: SearchSpace, progress: bool = True) -> SearchOutcome:
    """Run the staged search of ``space`` on ``ds``; see the module docstring."""
    many = search_kernels(ds, ds.frame["time"].to_numpy(float)[:, None], space, tuple(METRICS), progress)
    if 0 in many.failed:
        raise DataError(many.failed[0])
    return many.outcome(0)


@_no_collection()
def search_kernels(ds: Dataset, Y: np.ndarray, space: SearchSpace, names: tuple[str, ...] | None = None,
                   progress: bool = False) -> ManyOutcome:
    """The staged search of ``space`` for every column of ``Y`` (m, K): targets measured at the points of
    ``ds`` (the kernels of a group), each searched as :func:`staged_search` searches ``ds`` alone.

    Parameters
    ----------
    ds : Dataset
        The points (its ``time`` column is not read).
    Y : (m, K) array
        One target per column, in the order of ``ds``'s rows.
    space : SearchSpace
    names : tuple of str, optional
        The metrics to compute (default: the ranking metric, and ``holdout`` when the PMNF route and the
        staged stages can both give candidates, for the choice between the routes).
    progress : bool

    Returns
    -------
    ManyOutcome

    Raises
    ------
    DataError
        Fewer than 3 configurations, or no parameter column. A target whose search stops (no
        computation model can be fitted) is listed in :attr:`ManyOutcome.failed`.
    """
    if names is None:
        staged = {"computation", "communication", "processors", "p_only", "parameters"} & set(space.stages)
        names = (space.fit.metric, "holdout") if staged and "pmnf" in space.stages else (space.fit.metric,)
    S = _Search(ds, space, np.asarray(Y, float), tuple(dict.fromkeys(names)), progress)
    ks = np.arange(S.Y.shape[1])
    all_rows = np.ones(ds.n_points, bool)
    if ds.n_points < 3:
        raise DataError(f"{ds.source}: {ds.n_points} distinct configuration(s); the search needs at least 3")
    has_n = "n" in S.params
    p_levels = np.unique(ds.frame["p"]) if "p" in S.params else np.array([])
    has_p = len(p_levels) >= 2
    if "p" in S.params and not has_p:
        S.notes.append(f"a single p level (p = {p_levels[0]:g}): processor stage skipped")

    try:
        if not {"computation", "communication", "processors", "p_only", "parameters"} & set(space.stages):
            pass  # the PMNF route alone (the pmnf space)
        elif has_n:
            _search_with_n(S, ks, p_levels, has_p, all_rows)
        elif has_p:
            cfg = space.stages.get("p_only", {})
            terms = S.terms("p_only", "terms")
            max_terms = min(cfg.get("max_terms", 4), ds.n_points - 2)
            S.notes.append("no n: p-only models (bayesian-kohashi-2022.txt, eqs. 1-6); "
                           "computation and communication stages skipped")
            kept, _ = S.run("p_only", ks, all_rows, "all runs",
                            S.reg.same([Structure(c) for c in _subsets(terms, max_terms)], len(ks)),
                            cfg.get("top", 24), final=True)
            if ds.extra_params:
                S.adaptive = True
                _stage_parameters(S, ks, kept, all_rows)
        elif ds.extra_params:
            S.adaptive = S.adaptive or len(ds.extra_params) > 1
            S.notes.append("no n and no p: models in the extra parameters only")
            _stage_parameters(S, ks, S.reg.same([Structure((ONE,))], len(ks)), all_rows)
        else:
            raise DataError(f"{ds.source}: no parameter column (n, p or an extra parameter) to model time with")
        pmnf = space.stages.get("pmnf")  # after the staged search: on a tie its non-negative twin ranks first
        if pmnf is not None and not set(pmnf.get("unless", ())) & S.params:
            _stage_pmnf(S, ks, all_rows)
    finally:
        S.bar.close()

    return _final(S)


def _search_with_n(S: _Search, ks: np.ndarray, p_levels: np.ndarray, has_p: bool, all_rows: np.ndarray) -> None:
    S.adaptive = True
    ds = S.ds
    frame = ds.frame
    joint = False
    root = S.reg.same([Structure()], len(ks))
    if has_p:
        rows1 = (frame["p"] == p_levels[0]).to_numpy()
        text1 = f"p = {p_levels[0]:g}"
        if frame.loc[rows1, "n"].nunique() < 3:
            joint = True
            S.notes.append(f"only {frame.loc[rows1, 'n'].nunique()} distinct n at the lowest p "
                           f"(p = {p_levels[0]:g}): computation and communication stages run on all runs "
                           "together with the processor functions")
    else:
        rows1, text1 = all_rows, "all runs"
        S.notes.append(("no p column" if "p" not in S.params else "one p level") +
                       ": computation and communication stages both use all runs")

    if joint:
        comp_f = S.terms("processors", "computation") or (ONE,)
        comm_f = S.terms("processors", "communication") or (ONE,)
        seeds = _part_stage(S, ks, "computation", all_rows, "all runs", root, "comp", comp_f, True)
        seeds = _part_stage(S, ks, "communication", all_rows, "all runs", seeds, "comm", comm_f, True)
        over = S.terms("processors", "overhead")
        if over:
            s3c = hstack(seeds, S.reg.table(seeds, lambda s: [Structure(s.comp, s.comm, s.extra + (f,))
                                                                for f in over]))
            seeds, _ = S.run("processors/overhead", ks, all_rows, "all runs", s3c,
                             S.space.stages.get("processors", {}).get("top", 24), final=True)
        if ds.extra_params:
            _stage_parameters(S, ks, seeds, all_rows)
        return
    single = not has_p
    seeds = _part_stage(S, ks, "computation", rows1, text1, root, "comp", (ONE,), single)
    empty = (seeds < 0).all(axis=1)
    for k in ks[empty]:
        S.failed[int(k)] = (f"{ds.source}: no computation model could be fitted on the "
                            f"{int(rows1.sum())} configurations at {text1}")
    ks, seeds = ks[~empty], seeds[~empty]
    widths = np.where(seeds >= 0, S.reg.array("width")[np.maximum(seeds, 0)], np.iinfo(np.intp).max)
    need = widths.min(axis=1, initial=np.iinfo(np.intp).max) + 2
    parts: dict[bytes, tuple[np.ndarray, str, str, list[np.ndarray]]] = {}  # the targets of each row set
    values, first = np.unique(need, return_index=True)
    for k in values[np.argsort(first)]:  # the rows of the communication stage: by the narrowest model's width
        rows2, text2, note = (_communication_rows(frame, p_levels, int(k)) if has_p else (all_rows, "all runs", ""))
        key = rows2.tobytes() + text2.encode()
        parts.setdefault(key, (rows2, text2, note, []))[3].append(np.flatnonzero(need == k))
    for rows2, text2, note, members in parts.values():
        at = np.sort(np.concatenate(members))
        part = _part_stage(S, ks[at], "communication", rows2, text2, seeds[at], "comm", (ONE,), single, note)
        if has_p:
            part = _stage_processors(S, ks[at], part, all_rows, final=True)
        if ds.extra_params:
            _stage_parameters(S, ks[at], part, all_rows)


def _communication_rows(frame, p_levels: np.ndarray, need: int) -> tuple[np.ndarray, str, str]:
    """Rows of the communication stage: the second-lowest p level when it has at least 3 distinct n
    and ``need`` configurations (the narrowest computation model, one communication term and one
    residual degree of freedom); else the lowest levels together, as few as give that (all runs at most)."""
    p, n = frame["p"].to_numpy(), frame["n"].to_numpy()
    second = p_levels[1]
    options = [(p == second, f"p = {second:g}")] + [(p <= level, f"p <= {level:g}") for level in p_levels[1:]]
    for i, (rows, text) in enumerate(options):
        if np.unique(n[rows]).size >= 3 and rows.sum() >= need:
            why = "" if i == 0 else (f"too few distinct n or configurations at p = {second:g} for the "
                                     f"computation models and a communication term: the {i + 1} lowest "
                                     "p levels together")
            return rows, text, why
    return np.ones(len(p), bool), "all runs", "too few configurations at any p level: all runs"


def _final(S: _Search) -> ManyOutcome:
    """Merge every stage scored on all runs, per target; rank; keep the best score per distinct set of
    nonzero terms and route (a signed fit of the PMNF route is not the non-negative fit of the same
    terms; none when no stage could fit a candidate on all runs: the caller says so, with what
    else it has)."""
    K, reg = S.Y.shape[1], S.reg
    width = max((b.coefs.shape[2] for b in S.final), default=0)
    n_cols = sum(b.ids.shape[1] for b in S.final)
    ids = np.full((K, n_cols), -1, np.intp)
    metrics = {m: np.full((K, n_cols), np.inf) for m in S.names}
    coefs = np.full((K, n_cols, width), np.nan)
    valid = np.zeros((K, n_cols), bool)
    n_fits = np.zeros(K, int)
    at = 0
    for b in S.final:
        c = slice(at, at + b.ids.shape[1])
        ids[b.ks, c] = b.ids
        for m in metrics:
            metrics[m][b.ks, c] = b.metrics[m]
        coefs[b.ks, c, :b.coefs.shape[2]] = b.coefs
        valid[b.ks, c] = b.valid
        n_fits[b.ks] += b.n_fits
        at += b.ids.shape[1]
    order = np.argsort(ids < 0, axis=1, kind="stable")  # each target's candidates in the order scored
    n_kept = int((ids >= 0).sum(axis=1).max(initial=0))
    take = order[:, :n_kept]
    ids, valid = np.take_along_axis(ids, take, axis=1), np.take_along_axis(valid, take, axis=1)
    metrics = {m: np.take_along_axis(v, take, axis=1) for m, v in metrics.items()}
    coefs = np.take_along_axis(coefs, take[:, :, None], axis=1)
    ranked = np.argsort(np.where(np.isfinite(metrics[S.opt.metric]), metrics[S.opt.metric], np.inf), axis=1,
                        kind="stable")  # as rank(), per row
    key = np.full(ids.shape, -1, np.intp)  # the same non-zero terms scored by two stages or zeroed by NNLS
    if valid.any():  # the set of columns with a nonzero coefficient, sorted, and the route, named by an integer
        cols = reg.array("columns")[ids[valid]][:, :width]  # -1 beyond each structure's terms
        cols = np.sort(np.where(coefs[valid] != 0.0, cols, -1), axis=1)
        key[valid] = labels(np.column_stack([cols, reg.array("signed")[ids[valid]]]))
    key = np.take_along_axis(key, ranked, axis=1)
    sorted_at, start, _ = sorted_groups(key)
    first = np.zeros(key.shape, bool)
    r, s = np.nonzero(start)
    first[r, sorted_at[r, s]] = True
    keep = first & (key >= 0)
    return ManyOutcome(reg.structures, S.cache.terms, reg.array("columns"), reg.array("signed"), ids, metrics,
                       coefs, valid, n_fits, compact(np.where(keep, ranked, -1))[0], S.failed, S.reports, S.notes,
                       S.adaptive, S.rescore)
