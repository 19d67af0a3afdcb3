"""Score candidate models on one row set for one or many targets: the column cache, batched solves, metrics.

A candidate is a :class:`~automodel.space.structure.Structure`: its computation part, communication part and extra terms
(adaptive-model-sanjay-slides.txt, slides 20-21 keep the parts apart so later stages can transform
each one). Scoring goes through a :class:`TermCache` that evaluates each distinct term once per
dataset. :func:`prepare` makes the designs of a row set once (``K`` target columns: the one time
column of a search, or every kernel of a group); :func:`score_pairs` fits (candidate, target) pairs of
one width in one batched call (:func:`automodel.solve.lstsq.solve`) and computes their metrics
(:func:`automodel.solve.metrics.compute`). :func:`score` does that for the staged search, one target;
:mod:`automodel.kernels.choice` for many kernels. Inside a fit with workers
(:func:`automodel.search.workers.use`), the per-row work of a large :func:`score_pairs` call goes to
them, in pieces of its pairs, with the same numbers as here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from automodel.data import Dataset
from automodel.data.splits import holdout_rows
from automodel.options import RELATIVE_RESOLUTION, ROW_BUDGET, FitOptions, weights
from automodel.solve.metrics import METRICS
from automodel.search import workers
from automodel.solve import design as design_mod
from automodel.solve import lstsq, metrics
from automodel.space.structure import Structure
from automodel.space.terms import Term, term_values

__all__ = ["TermCache", "Scores", "Rows", "prepare", "score_pairs", "fitted", "predict", "score",
           "all_metrics", "PARALLEL_PAIR_ROWS", "PARALLEL_ROWS"]

#: rows x pairs of one :func:`score_pairs` call from which its per-row work (residuals, metrics) goes to
#: the active workers (:func:`automodel.search.workers.active`), cut into one piece per worker. Measured
#: on the 2-core test machine: the per-row work costs 10 to 70 ns per row and pair (one metric to every
#: metric with leverages), a call sent to 2 loky workers about 25 ms more (the design written once,
#: the tasks' round trip), and 207 pairs on 10^5 rows (every metric) took 0.29 s there against
#: 0.41 s here; at 2^21 the search's 2 x 10^4-row stages went to the workers before they had started
#: and the fit of 10^5 runs was slower
PARALLEL_PAIR_ROWS = 1 << 22
#: configurations from which :func:`automodel.fit` uses the workers it is given (and starts them at
#: once). Measured on the 2-core test machine with 2 loky workers, fits of ``benchmarks.scaling.runs``
#: (medians of 3 or 4): 5 x 10^4 configurations 2.3 s serially, 2.6 s with the workers (their start
#: costs 0.5 s of CPU each); 10^5 0.92x to 1.24x in three sets of runs (``python -m benchmarks.scale``);
#: 2 x 10^5 11.6 to 12.2 s against 8.9 to 9.9 s
PARALLEL_ROWS = 100_000


class TermCache:
    """Every distinct term evaluated once on every row of a dataset; columns addressed by index."""

    def __init__(self, columns: dict[str, np.ndarray], n_rows: int) -> None:
        self._columns = columns
        self._n_rows = n_rows
        self._index: dict[Term, int] = {}
        self._values: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._values)

    @property
    def terms(self) -> list[Term]:
        """The cached terms in the order of their indices."""
        return list(self._index)

    def index(self, term: Term) -> int:
        """The column of ``term`` (:meth:`indices`)."""
        return self.indices((term,))[0]

    def indices(self, terms: Sequence[Term]) -> list[int]:
        """The column of each of ``terms``. The terms not yet cached are evaluated together
        (:func:`~automodel.space.terms.term_values`, each term's values as alone) and numbered in the
        order of their first sight."""
        found = list(map(self._index.get, terms))
        if None not in found:
            return found
        missing = list(dict.fromkeys(t for t, i in zip(terms, found) if i is None))
        self._index.update(zip(missing, range(len(self._values), len(self._values) + len(missing))))
        self._values += list(term_values(missing, self._columns, self._n_rows).T.copy())
        self._matrix = None
        return list(map(self._index.__getitem__, terms))

    def at(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """(selected rows, len(columns)) values of the cached terms ``columns`` at the rows of the boolean
        mask ``rows``; only those columns are copied (no matrix of every cached term)."""
        every = bool(rows.all())
        out = np.empty((int(rows.sum()), len(columns)), order="F")  # each column contiguous
        for j, c in enumerate(columns):
            out[:, j] = self._values[c] if every else self._values[c][rows]
        return out

    @property
    def matrix(self) -> np.ndarray:
        """(n_rows, n_terms) values of every cached term."""
        if self._matrix is None or self._matrix.shape[1] != len(self._values):
            self._matrix = np.column_stack(self._values) if self._values else np.empty((self._n_rows, 0))
        return self._matrix


@dataclass
class Scores:
    """Results for a list of structures on one row set, aligned with the list."""

    structures: list[Structure]
    coefficients: np.ndarray  # (N, max width), in the order of each structure's terms, NaN-padded
    metrics: dict[str, np.ndarray]
    n_terms: np.ndarray
    n_fits: int = 0
    valid: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def metric(self, name: str) -> np.ndarray:
        return self.metrics[name]

    @classmethod
    def concat(cls, parts: list[Scores]) -> Scores:
        """One :class:`Scores` of ``parts`` in order (coefficients NaN-padded to the widest); the
        metrics of the first part name the metrics kept."""
        width = max(sc.coefficients.shape[1] for sc in parts)
        coefs = np.vstack([np.pad(sc.coefficients, ((0, 0), (0, width - sc.coefficients.shape[1])),
                                  constant_values=np.nan) for sc in parts])
        return cls([s for sc in parts for s in sc.structures], coefs,
                   {m: np.concatenate([sc.metrics[m] for sc in parts]) for m in parts[0].metrics},
                   np.concatenate([sc.n_terms for sc in parts]), sum(sc.n_fits for sc in parts),
                   np.concatenate([sc.valid for sc in parts]))


@dataclass(frozen=True)
class Rows:
    """One row set prepared for scoring many widths: term values, ``K`` targets and their designs.

    Attributes
    ----------
    values : (m, T) array
        Term values, non-finite ones set to zero (``usable`` says which terms are finite everywhere and
        have weighted columns within the range of floats, :func:`automodel.solve.design.usable`).
    usable : (T,) bool array
    y : (m, K) array
        The targets.
    sqrt_w : (m, K) array
        Square roots of the row weights of each target.
    design : Design
        All rows (:func:`automodel.solve.design.design`).
    hold : (m,) bool array or None
        The held-out rows of the ``holdout`` metric.
    held : Design or None
        The rows outside ``hold`` (when the hold-out error is asked for).
    value_max : (T,) array
        Largest absolute value of each term, and ``y_min`` (K,) the smallest target, for
        :func:`_drop_negligible`.
    held_values : (h, T) array or None
        The term values of the held-out rows, in Fortran order (each term's values contiguous, as
        :func:`predict` reads them).
    """

    values: np.ndarray
    usable: np.ndarray
    y: np.ndarray
    sqrt_w: np.ndarray
    design: design_mod.Design
    hold: np.ndarray | None = None
    held: design_mod.Design | None = None
    value_max: np.ndarray | None = None
    y_min: np.ndarray | None = None
    held_values: np.ndarray | None = None


def prepare(values: np.ndarray, y: np.ndarray, weighting: str, hold: np.ndarray | None = None,
            gram: bool = True) -> Rows:
    """The :class:`Rows` of term values ``values`` (m, T) and targets ``y`` ((m,) or (m, K)) weighted by
    ``weighting`` (:func:`automodel.options.weights`); ``hold`` (m,) marks rows to hold out. ``gram``:
    form the designs' Gram matrices (False: each pair's entries when it is solved,
    :func:`automodel.solve.design.design`; the same numbers)."""
    Y = np.asarray(y, float)
    Y = Y if Y.ndim == 2 else Y[:, None]
    W = weights(Y, weighting)
    A = np.where(np.isfinite(values), values, 0.0)
    des = design_mod.design(A, Y, W, gram)
    held = None if hold is None else design_mod.design(A[~hold], Y[~hold], W[~hold], gram)
    usable = np.isfinite(values).all(axis=0) & design_mod.usable(des)
    if held is not None:
        usable &= design_mod.usable(held)
    return Rows(A, usable, Y, np.sqrt(W), des, hold, held, np.abs(A).max(axis=0, initial=0.0),
                np.abs(Y).min(axis=0), None if hold is None else np.asfortranarray(A[hold]))


def predict(values: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Predictions (m, B) of every pair: term values ``values`` (m, T), columns (B, k), coefficients (B, k).

    Each pair's columns are gathered term by term: fastest when ``values`` is in Fortran order."""
    pred = np.zeros((len(cols), values.shape[0]))
    rows = values.T
    for j in range(cols.shape[1]):
        pred += rows.take(cols[:, j], axis=0) * coef[:, j, None]
    return pred.T


def score_pairs(rows: Rows, cols: np.ndarray, kern: np.ndarray | None = None, nonnegative: bool = True,
                names: tuple[str, ...] = tuple(METRICS), with_loo: bool = True, runs: np.ndarray | None = None
                ) -> tuple[np.ndarray, dict]:
    """Fit and score (candidate, target) pairs of one width: target ``kern[b]`` with columns ``cols[b]``.

    Parameters
    ----------
    rows : Rows
    cols : (B, k) int array
    kern : (B,) int array, optional
        Target of each pair (default: the first and only one).
    nonnegative : bool
    names : tuple of str
        The metrics to compute (:func:`automodel.solve.metrics.compute`).
    with_loo : bool
        Compute the leverages of ``loo`` (when ``names`` asks for it); the Gram matrices are factorised
        once for the solve and the leverages.
    runs : int array, optional
        Boundaries (0, ..., B) of runs of pairs whose metrics are computed apart, each as a call with
        its pairs alone computes them: the sums along the rows depend on how many pairs are summed at
        once (a pair alone sums its rows as one array). Default: one run.

    With workers active (:func:`automodel.search.workers.active`) and at least
    :data:`PARALLEL_PAIR_ROWS` rows x pairs, the solves run here and the per-row work (residuals,
    leverages, metrics) on the workers: every part of pairs computed at once here is cut into one
    piece per worker (:func:`_pieces`, the same numbers), and the design is sent once for all of
    them (:meth:`~automodel.search.workers.Workers.share`).

    Returns
    -------
    coef : (B, k) array
        Term coefficients.
    metrics : dict of (B,) arrays
        ``inf`` for a pair that is not :func:`fitted` (a coefficient not finite, or all zero).
    """
    kern = np.zeros(len(cols), np.intp) if kern is None else kern
    k = cols.shape[1]
    with_loo = with_loo and any(METRICS[name].leverages for name in names)
    des = rows.design
    single = rows.y.shape[1] == 1
    chunk = 4096 if single else max(len(cols), 1)  # many targets: the caller chunks the pairs
    sol = lstsq.solve(des, cols, kern, nonnegative, rss=None, keep_factor=with_loo, chunk=chunk)
    held = None
    if rows.held is not None and any(METRICS[name].holdout for name in names):
        held = lstsq.solve(rows.held, cols, kern, nonnegative, rss=None, chunk=chunk).coefficients(rows.held)
    m = rows.y.shape[0]
    step = max(1, ROW_BUDGET // max(m * (k + 3), 1))  # pairs whose rows fit in the budget at once
    bounds = (0, max(len(cols), 1)) if runs is None else runs
    cuts = [(lo, min(lo + step, hi)) for start, hi in zip(bounds[:-1], bounds[1:]) for lo in range(start, hi, step)]
    pool = workers.active() if m * len(cols) >= PARALLEL_PAIR_ROWS else None
    if pool is not None:
        cuts = [piece for lo, hi in cuts for piece in _pieces(lo, hi, pool.n)]
    items = [(sol.part(slice(lo, hi)), with_loo, None if held is None else held[lo:hi], names) for lo, hi in cuts]
    parts = (pool.map(_row_metrics, pool.share(rows, _shipped), items) if pool is not None and len(items) > 1
             else [_row_metrics(rows, *item) for item in items])
    scores = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    coef = _drop_negligible(rows, cols, kern, sol.coefficients(des))
    unfitted = ~fitted(coef)
    if unfitted.any():
        for values in scores.values():
            values[unfitted] = np.inf
    return coef, scores


def _pieces(lo: int, hi: int, n: int) -> list[tuple[int, int]]:
    """Pairs ``lo:hi`` (a part :func:`score_pairs` computes at once) in ``n`` pieces of about equal size,
    fewer when a piece would hold a single pair: the metrics of a pair computed beside one other pair or
    beside many have the same bits (the sums along the rows run the same way), alone not always.

    Examples
    --------
    >>> _pieces(0, 5, 2), _pieces(5, 8, 2)
    ([(0, 2), (2, 5)], [(5, 8)])
    """
    count = max(1, min(n, (hi - lo) // 2))
    edges = [lo + (hi - lo) * i // count for i in range(count + 1)]
    return list(zip(edges[:-1], edges[1:]))


def _shipped(rows: Rows) -> Rows:
    """What :func:`_row_metrics` reads of ``rows``, sent to the workers: without the term values and the
    design of the rows outside ``hold`` (the solves ran here)."""
    return replace(rows, values=rows.values[:0], held=None)


def _row_metrics(rows: Rows, sol: lstsq.Solution, with_loo: bool, held: np.ndarray | None,
                 names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The metrics ``names`` of the pairs of ``sol`` from their residuals on every row (and the
    leverages when ``with_loo``); ``held``: their coefficients refitted without the held-out rows."""
    des, kern, cols = rows.design, sol.kern, sol.cols
    single = rows.y.shape[1] == 1
    y = rows.y[:, 0] if single else rows.y[:, kern]
    r = design_mod.residuals(des, kern, cols, sol.coef_scaled)  # (B, m), weighted
    pred = y[:, None] - r.T / rows.sqrt_w[:, :1] if single else y - r.T / rows.sqrt_w[:, kern]
    wrss = np.einsum("bm,bm->b", r, r) if "aic" in names else None
    del r
    lev = lstsq.leverages(des, sol) if with_loo else None
    hold_err = None
    if held is not None:
        pred_h = predict(rows.held_values, cols, held)
        y_h = rows.y[rows.hold][:, 0:1] if single else rows.y[rows.hold][:, kern]
        hold_err = metrics.holdout_errors(pred_h, y_h, len(rows.y) - int(rows.hold.sum()), cols.shape[1])
    return metrics.compute(y, pred, cols.shape[1], wrss, lev, hold_err, names=names)


def fitted(coef: np.ndarray) -> np.ndarray:
    """(B,) whether each pair's coefficients (B, k) are a model: all finite and not all zero (T = 0 is no
    model of a time)."""
    return np.isfinite(coef).all(axis=1) & (coef != 0).any(axis=1)


def _drop_negligible(rows: Rows, cols: np.ndarray, kern: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``coef`` with zero for every term that contributes less than :data:`RELATIVE_RESOLUTION` of the
    smallest target on every row (rounding, not model: on noise-free runs the solver leaves terms of
    coefficient 1e-18 beside the exact ones, and they must not count as terms of the model)."""
    with np.errstate(invalid="ignore"):
        negligible = np.abs(coef) * rows.value_max[cols] < RELATIVE_RESOLUTION * rows.y_min[kern][:, None]
    return np.where(negligible, 0.0, coef)


def score(cache: TermCache, rows: np.ndarray, y: np.ndarray, structures: list[Structure],
          weighting: str = "relative", nonnegative: bool = True, with_loo: bool = True,
          holdout: np.ndarray | None = None, names: tuple[str, ...] = tuple(METRICS)) -> Scores:
    """Fit and score every structure on the rows selected by the boolean mask ``rows`` (with
    non-negative coefficients when ``nonnegative``, except the structures marked ``signed``).

    ``names``: the metrics computed (the others are NaN); each costs work on every row of every
    candidate, so a search asks for the ones it ranks by.

    ``holdout`` (a mask over all rows, within ``rows``) marks the largest configurations: every
    candidate is fitted a second time without them and the ``holdout`` metric is its RMS relative
    error on them, a forward-extrapolation check. Terms that are not finite on the selected rows, and
    coefficients that are all zero or not finite, make a candidate invalid (all metrics ``inf``).
    """
    rows = np.asarray(rows, bool)
    cached = [[cache.index(t) for t in s.terms] for s in structures]
    used = np.unique(np.fromiter((i for idx in cached for i in idx), np.intp))  # the design's columns
    position = np.zeros(len(cache), np.intp)
    position[used] = np.arange(len(used))
    term_idx = [position[idx].tolist() for idx in cached]
    prep = prepare(cache.at(rows, used), np.asarray(y, float)[rows], weighting,
                   None if holdout is None else np.asarray(holdout, bool)[rows])
    n = len(structures)
    k_arr = np.array([len(t) for t in term_idx], dtype=int)
    out = {name: np.full(n, np.inf) for name in METRICS}
    coefs = np.full((n, int(k_arr.max(initial=0))), np.nan)
    valid = np.zeros(n, bool)
    signed = np.array([s.signed for s in structures], bool)
    n_fits = 0
    for k, sign in {(int(k), bool(g)) for k, g in zip(k_arr, signed)}:
        members = np.flatnonzero((k_arr == k) & (signed == sign))
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = prep.usable[combos].all(axis=1) if k else np.ones(len(members), bool)
        members, combos = members[ok], combos[ok]
        if not len(members):
            continue
        coef, scores = score_pairs(prep, combos, nonnegative=nonnegative and not sign, names=names,
                                   with_loo=with_loo)
        n_fits += len(members)
        for name, values in scores.items():
            out[name][members] = values
        coefs[members, :k] = coef
        valid[members] = fitted(coef)
    asked = set(names) | ({"loo", "holdout"} if "forward" in names else set())
    for name in set(out) - asked:
        out[name][:] = np.nan
    return Scores(list(structures), coefs, out, k_arr, n_fits, valid)


def all_metrics(sc: Scores, shown: list[int], ds: Dataset, opt: FitOptions) -> dict[str, np.ndarray]:
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
