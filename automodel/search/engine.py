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

This module is the driver: it runs the table :data:`automodel.search.stages.STAGES` in order, each route
(the staged search, then the PMNF route) whose stages the space names, each stage of it that applies to
the data (:class:`~automodel.search.stages.base.Shape`), depth first over the branches a stage yields.
Each stage is a module of :mod:`automodel.search.stages` with its settings typed in
:mod:`automodel.space.stages`, and every stage takes its step through :meth:`automodel.search.state.Search.run`.

The search runs for many targets at once (the kernels of a profile measured at the same points,
:func:`search_kernels`; one target is :func:`staged_search`). Each target has its own candidates:
a stage proposes them from that target's survivors and prunes them by that target's scores, so every
target gets the result of its own search. What is shared: the structures (interned once as integers,
:class:`~automodel.search.registry.Registry`, with what each stage makes of a seed built once for all targets), the term values
(one :class:`~automodel.search.score.TermCache`), and the scoring, one batched call per stage for the
(candidate, target) pairs the targets proposed (:func:`~automodel.search.score.score_pairs`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from automodel.data import Dataset
from automodel.errors import DataError
from automodel.solve.metrics import METRICS
from automodel.search.outcome import ManyOutcome, SearchOutcome
from automodel.search.registry import compact, labels, sorted_groups
from automodel.search.stages import STAGES
from automodel.search.stages.base import STAGED, Branch, Shape, Stage
from automodel.search.state import Search
from automodel.space.config import SearchSpace

__all__ = ["staged_search", "search_kernels"]


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
        staged = {name for name, stage in STAGES.items() if stage.route == STAGED} & set(space.stages)
        names = (space.fit.metric, "holdout") if staged and "pmnf" in space.stages else (space.fit.metric,)
    S = Search(ds, space, np.asarray(Y, float), tuple(dict.fromkeys(names)), progress)
    if ds.n_points < 3:
        raise DataError(f"{ds.source}: {ds.n_points} distinct configuration(s); the search needs at least 3")
    shape = _shape(S)
    try:
        for route in dict.fromkeys(stage.route for stage in STAGES.values()):
            chain = [stage for stage in STAGES.values() if stage.route == route]
            if not {stage.name for stage in chain} & set(space.stages):
                continue
            if route == STAGED and not (shape.has_n or shape.has_p or ds.extra_params):
                raise DataError(f"{ds.source}: no parameter column (n, p or an extra parameter) to model time with")
            _descend(S, shape, [stage for stage in chain if stage.applies(S, shape)], Branch(np.arange(S.Y.shape[1])))
    finally:
        S.bar.close()

    return _final(S)


def _shape(S: Search) -> Shape:
    """What the data allow (:class:`~automodel.search.stages.base.Shape`); notes a single ``p`` level."""
    frame = S.ds.frame
    all_rows = np.ones(S.ds.n_points, bool)
    p_levels = np.unique(frame["p"]) if "p" in S.params else np.array([])
    has_n, has_p = "n" in S.params, len(p_levels) >= 2
    if "p" in S.params and not has_p:
        S.notes.append(f"a single p level (p = {p_levels[0]:g}): processor stage skipped")
    if not (has_n and has_p):
        return Shape(all_rows, has_n, has_p, p_levels, False, all_rows, "all runs")
    rows = (frame["p"] == p_levels[0]).to_numpy()
    return Shape(all_rows, has_n, has_p, p_levels, frame.loc[rows, "n"].nunique() < 3, rows, f"p = {p_levels[0]:g}")


def _descend(S: Search, shape: Shape, chain: list[Stage], branch: Branch) -> None:
    """Run ``chain[0]`` on ``branch``, and the rest of the chain on each branch it yields before the next."""
    if chain:
        for out in chain[0].run(S, shape, branch):
            _descend(S, shape, chain[1:], out)


def _final(S: Search) -> ManyOutcome:
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
