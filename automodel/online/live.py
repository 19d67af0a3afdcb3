"""Online re-ranking: pool statistics, incremental refits of every live candidate, pruning, anomalies.

adaptive-model-sanjay-slides.txt, slide 22: "after execution of that task, data will be added to the
training set ... we evaluate the model list with training data and change the model rankings - for
every function evaluation we are deleting least ranked functions using percentile technique -
automatically removing the training data which contains anomalies".

All live candidates draw their columns from one pool of ``T`` distinct terms. The pool keeps the
sufficient statistics of the weighted regression, ``G = A'WA`` (T x T), ``b = A'Wy`` and ``y'Wy``, so a
new run is a rank-one update (O(T^2)) and each candidate's normal equations are the gather
``G[c, c] x = b[c]``. They are solved by the solver of the search (:func:`automodel.solve.lstsq.solve`
on a design built from the statistics, :func:`automodel.solve.design.from_stats`), all candidates of
one width at once. Non-negative fits (bayesian-kohashi-2022.txt, sec. 2.1) are warm-started from the
previous support; the vectorised active set settles the rest (KKT-checked), and the few it cannot
settle go through the exact fallback of the search, on virtual rows rebuilt from the statistics.

Ranking metric: the standard error of the weighted regression, ``s_w = sqrt(RSS_w / (m - k))``
(:func:`automodel.solve.metrics.standard_error`) over
the ``m`` admitted runs (not aggregated), which is ``rel_s`` for the relative weighting ``w = 1/y^2``
(bayesian-kohashi-2022.txt, eq. 7) and ``s`` for no weighting.

Anomaly rule: :mod:`automodel.online.anomaly`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Callable, Mapping

import numpy as np

from automodel.online.anomaly import ANOMALY_WINDOW, relative_residuals, unexplained
from automodel.text import printing
from automodel.options import WEIGHTINGS, FitOptions, weights
from automodel.search.prune import prune, rank
from automodel.search.choice import choose, description_lengths, term_lengths
from automodel.search.select import thresholds
from automodel.solve import lstsq, metrics
from automodel.solve.design import from_stats
from automodel.space.terms import Term, TermPlan

__all__ = ["OnlineOptions", "PoolStats", "Refit", "Update", "LivePool", "LazyValues", "refit"]

#: the fit options of the online stage: the search's, keeping more candidates alive
ONLINE_FIT = FitOptions(prune_percentile=90.0, min_survivors=32)
_SHARED = ("weighting", "nonnegative", "prune_percentile", "min_survivors", "selection")


@dataclass(frozen=True)
class OnlineOptions:
    """How the live pool is fitted, pruned and screened for anomalies (stored with the application).

    ``fit`` is the one options record of the search (:class:`automodel.options.FitOptions`) with the
    online defaults (:data:`ONLINE_FIT`); the online stage reads its weighting, sign constraint,
    pruning and selection rule. The anomaly rule adds three fields (module docstring).
    """

    fit: FitOptions = ONLINE_FIT
    anomaly_mad: float = 5.0
    anomaly_floor: float = 0.05
    n_leaders: int = 5

    weighting = property(lambda self: self.fit.weighting)
    nonnegative = property(lambda self: self.fit.nonnegative)
    prune_percentile = property(lambda self: self.fit.prune_percentile)
    min_survivors = property(lambda self: self.fit.min_survivors)
    selection = property(lambda self: self.fit.selection)  # which live candidate leads: search/select.py

    @property
    def metric(self) -> str:
        """The metric the online score ``s_w`` is: the standard error of the weighting's fit."""
        return WEIGHTINGS[self.fit.weighting].standard_error

    def to_dict(self) -> dict:
        """Flat keys, as stores have always held them."""
        return {**{k: getattr(self, k) for k in _SHARED},
                **{f.name: getattr(self, f.name) for f in fields(self) if f.name != "fit"}}

    def check(self, where: str) -> "OnlineOptions":
        """These options, once each is a value the online stage takes (the fit's as a space file's
        ``[fit]``: :func:`automodel.space.config.check_fit`; the anomaly rule's thresholds positive
        finite numbers, the leaders a count); else a one-line :class:`SpaceError` starting with ``where``."""
        from automodel.data.cells import finite_number, shown
        from automodel.errors import SpaceError
        from automodel.space.config import check_fit

        fit = check_fit(self.fit, where)
        for name in ("anomaly_mad", "anomaly_floor"):
            value = getattr(self, name)
            if not finite_number(value) or not value > 0:
                raise SpaceError(f"{where} {name} must be a finite number above 0, got {shown(value)}")
        if isinstance(self.n_leaders, bool) or not isinstance(self.n_leaders, int) or not 1 <= self.n_leaders <= 1000:
            raise SpaceError(f"{where} n_leaders must be a whole number from 1 to 1000, got {shown(self.n_leaders)}")
        return replace(self, fit=fit)

    @classmethod
    def from_dict(cls, d: dict) -> "OnlineOptions":
        """Options from flat keys (:meth:`to_dict`, or a dict stored by an older version); unknown keys
        are ignored, missing ones keep the online defaults."""
        own = {f.name for f in fields(cls)} - {"fit"}
        return cls(replace(ONLINE_FIT, **{k: v for k, v in d.items() if k in _SHARED}),
                   **{k: v for k, v in d.items() if k in own})


class LazyValues:
    """(m, T) pool values of runs whose columns are computed when first read (``values[:, cols]``).

    ``compute(cols)`` returns the (m, len(cols)) values of the columns ``cols`` (sorted, distinct). The
    anomaly rule reads only the leading candidates' columns of its reference runs, so a store's update
    evaluates those (a few dozen) instead of the whole pool (hundreds).
    """

    def __init__(self, compute: Callable[[np.ndarray], np.ndarray], n_rows: int, n_terms: int) -> None:
        self._compute = compute
        self._data = np.empty((n_rows, n_terms), order="F")  # a column fills (touches) only its own pages
        self._known = np.zeros(n_terms, bool)
        self.shape = (n_rows, n_terms)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        wanted = np.arange(self.shape[1])[cols]
        missing = np.unique(wanted[~self._known[wanted]])
        if len(missing):
            self._data[:, missing] = self._compute(missing)
            self._known[missing] = True
        return self._data[rows, cols]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:, :]
        return out if dtype is None else out.astype(dtype)

    def appended(self, rows: np.ndarray, keep: int) -> "LazyValues":
        """These runs followed by ``rows`` (dense values), the ``keep`` last of them (still lazy)."""
        start = max(len(self) + len(rows) - keep, 0)
        return LazyValues(lambda cols: np.concatenate([self[:, cols], rows[:, cols]])[start:],
                          len(self) + len(rows) - start, self.shape[1])


@dataclass
class PoolStats:
    """Sufficient statistics of the weighted regression on the pool's terms.

    ``usable[j]`` is false once term ``j`` was non-finite on an admitted run, or its weighted sums
    overflowed; its row and column are zero in the statistics and every candidate using it scores
    ``inf``.
    """

    gram: np.ndarray  # (T, T)
    moment: np.ndarray  # (T,)
    target_ss: float
    n_runs: int
    usable: np.ndarray  # (T,) bool

    @classmethod
    def empty(cls, n_terms: int) -> "PoolStats":
        return cls(np.zeros((n_terms, n_terms)), np.zeros(n_terms), 0.0, 0, np.ones(n_terms, bool))

    def add(self, values: np.ndarray, y: np.ndarray, weights: np.ndarray, sign: float = 1.0) -> None:
        """Add (``sign=+1``) or remove (``-1``) runs: a rank-r update, O(r T^2)."""
        values = np.atleast_2d(values)
        if sign > 0:
            self.usable &= np.isfinite(values).all(axis=0)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow makes its term unusable (below)
            a = np.where(np.isfinite(values), values, 0.0) * np.sqrt(weights)[:, None]
            t = np.asarray(y, float) * np.sqrt(weights)
            self.gram += sign * (a.T @ a)
            self.moment += sign * (a.T @ t)
        self.usable &= np.isfinite(np.diag(self.gram)) & np.isfinite(self.moment)
        self.gram[~self.usable] = 0.0
        self.gram[:, ~self.usable] = 0.0
        self.moment[~self.usable] = 0.0
        self.target_ss += sign * float(t @ t)
        self.n_runs += int(sign) * len(t)

    def copy(self) -> "PoolStats":
        """An independent copy (``add`` changes the statistics in place)."""
        return PoolStats(self.gram.copy(), self.moment.copy(), self.target_ss, self.n_runs, self.usable.copy())

    @classmethod
    def from_runs(cls, values: np.ndarray, y: np.ndarray, weights: np.ndarray) -> "PoolStats":
        stats = cls.empty(values.shape[1])
        if len(y):
            stats.add(values, y, weights)
        return stats


@dataclass
class Refit:
    """Coefficients (N, K, original scale, NaN-padded), weighted RSS and score of every candidate."""

    coef: np.ndarray
    rss: np.ndarray
    score: np.ndarray
    n_exact: int = 0  # candidates the warm start could not settle (solved by the exact fallback)


def refit(stats: PoolStats, index: np.ndarray, width: np.ndarray, nonnegative: bool = True,
          warm: np.ndarray | None = None) -> Refit:
    """Solve every candidate from the pool statistics; one batched solve per width.

    The statistics make a design without columns (:func:`automodel.solve.design.from_stats`) solved by
    :func:`automodel.solve.lstsq.solve`, the solver of the search; the score is the standard error of
    the weighted regression (:func:`automodel.solve.metrics.standard_error`).

    Parameters
    ----------
    stats : PoolStats
    index : (N, K) int array
        Pool term indices of each candidate, padded with -1 beyond its width.
    width : (N,) int array
    nonnegative : bool
        Coefficients >= 0 (bayesian-kohashi-2022.txt, sec. 2.1).
    warm : (N, K) bool array, optional
        Previous support (coefficient > 0) of each candidate, the start of the active-set pass.
    """
    n, K = index.shape
    des = from_stats(stats.gram, stats.moment, stats.target_ss)
    coef = np.full((n, K), np.nan)
    rss = np.full(n, np.inf)
    n_exact = 0
    for k in np.flatnonzero(np.bincount(width)):
        members = np.flatnonzero(width == k)
        if k == 0:
            rss[members] = stats.target_ss
            continue
        sol = lstsq.solve(des, index[members, :k], nonnegative=nonnegative, rss="fast",
                          start=None if warm is None else warm[members, :k])
        n_exact += sol.n_exact
        c = sol.coefficients(des)
        coef[members, :k] = np.where(np.isfinite(c), c, 0.0)
        rss[members] = sol.rss
    valid = True  # every term usable (the rule); else the candidates with an unusable term score inf
    if not stats.usable.all():
        valid = np.append(stats.usable, True)[np.where(index >= 0, index, -1)].all(axis=1)
    score = np.where(valid, metrics.standard_error(np.maximum(rss, 0.0), stats.n_runs, width), np.inf)
    return Refit(coef, rss, np.where(np.isfinite(score), score, np.inf), n_exact)


@dataclass
class Update:
    """What one update changed."""

    flagged: np.ndarray  # indices (into the new runs) set aside as anomalous
    pruned: np.ndarray  # candidate indices deleted by the percentile rule
    cutoff: float  # the score above which candidates were deleted
    leader_before: int
    leader_after: int
    n_exact: int = 0


@dataclass
class LivePool:
    """Every candidate of one application, its fit on the admitted runs, and the recent runs' pool values.

    Attributes
    ----------
    terms : list of Term
        The pool of distinct terms (T).
    index, width : (N, K) int, (N,) int
        Each candidate's term indices (padded with -1) and width.
    alive : (N,) bool
    stats : PoolStats
        Over the admitted runs.
    values, y : (m, T), (m,)
        Pool term values and times of the admitted runs added last, at most :data:`ANOMALY_WINDOW`
        (the anomaly rule's reference; module docstring); ``values`` may be a :class:`LazyValues`.
    coef, score : (N, K), (N,)
        Current fit; ``inf`` score for dead candidates.
    plan : TermPlan, optional
        The terms prepared for evaluation (:meth:`term_values`); made on first use when not given.
    """

    terms: list[Term]
    index: np.ndarray
    width: np.ndarray
    alive: np.ndarray
    stats: PoolStats
    values: np.ndarray
    y: np.ndarray
    options: OnlineOptions = field(default_factory=OnlineOptions)
    coef: np.ndarray | None = None
    score: np.ndarray | None = None
    plan: TermPlan | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.coef is None:
            self.coef = np.full(self.index.shape, np.nan)
        if self.score is None:
            self.score = np.full(len(self.index), np.inf)

    def term_values(self, columns: Mapping[str, np.ndarray], n_rows: int) -> np.ndarray:
        """(n_rows, T) pool values of runs with parameter ``columns``
        (:func:`automodel.space.terms.term_values` of :attr:`terms`, through :attr:`plan`)."""
        if self.plan is None:
            self.plan = TermPlan(self.terms)
        return self.plan.values(columns, n_rows)

    @property
    def leader(self) -> int:
        """Index of the leading live candidate (-1 when none is alive).

        The chooser of ``automodel fit`` (:func:`automodel.search.choice.choose`) on the live candidates'
        scores: with ``selection = "simplest"`` (the default) the fewest-terms candidate within one
        standard error of the best score; with ``"best"`` the best-scored one. The pool keeps the
        statistics of its runs, not their parameter values, so it has no edge of the data to look
        beyond: among the simplest and shortest tied candidates the best-scored leads.
        """
        s = np.where(self.alive, self.score, np.inf)
        best = int(np.argmin(s))
        if not np.isfinite(s[best]) or self.options.selection == "best":
            return best if self.alive.any() else -1
        metric = self.options.metric

        def n_terms(rows):
            return np.count_nonzero(np.nan_to_num(self.coef[rows]) != 0, axis=-1)

        # only the candidates within the threshold can be chosen: count their terms, not everyone's
        near = np.flatnonzero(s <= thresholds(s[best], metric, self.stats.n_runs - n_terms(best)))
        used = np.unique(self.index[near])
        used = used[used >= 0]
        lengths = np.zeros(len(self.terms), int)  # only the terms of the near candidates are read
        lengths[used] = term_lengths([self.terms[j] for j in used])
        length = description_lengths(lengths, self.index[near], np.where(self.index[near] >= 0, self.coef[near], 0.0))
        return int(near[choose(s[near], n_terms(near), self.stats.n_runs, metric, length=length).index])

    def terms_of(self, i: int) -> tuple[Term, ...]:
        """The terms of candidate ``i``."""
        return tuple(self.terms[j] for j in self.index[i, :int(self.width[i])])

    def coefficients_of(self, i: int) -> tuple[float, ...]:
        """The fitted coefficients of candidate ``i`` (0 where it has no finite fit)."""
        return tuple(float(c) if np.isfinite(c) else 0.0 for c in self.coef[i, :int(self.width[i])])

    def formula(self, i: int) -> str:
        """The fitted formula of candidate ``i`` as text (:func:`automodel.text.printing.formula`)."""
        return printing.formula(self.terms_of(i), self.coefficients_of(i))

    def formulas(self, rows: np.ndarray) -> list[str]:
        """The fitted formulas of candidates ``rows``, each :meth:`formula` of its row, with the order of
        every set of terms found in one sympy call (:func:`automodel.text.printing.formulas`) instead of one
        per set."""
        rows = np.asarray(rows, dtype=int)
        coef = np.where(np.isfinite(self.coef[rows]), self.coef[rows], 0.0)
        return printing.formulas([self.terms_of(i) for i in rows], np.arange(len(rows)), coef)

    def structure(self, i: int) -> str:
        """Candidate ``i`` without its coefficients (:func:`automodel.text.printing.terms_text`)."""
        return printing.terms_text(self.terms_of(i))

    def ranking(self) -> np.ndarray:
        """Indices of the live candidates, best first."""
        live = np.flatnonzero(self.alive)
        return live[rank(self.score[live])]

    def leaders(self, count: int) -> np.ndarray:
        """The ``count`` best live candidates, best first (a partial sort)."""
        s = np.where(self.alive & np.isfinite(self.score), self.score, np.inf)
        if count < len(s):
            part = np.argpartition(s, count)[:count]
        else:
            part = np.arange(len(s))
        part = np.sort(part[np.isfinite(s[part])])  # in input order, as rank() keeps ties
        return part[rank(s[part])]

    def refit(self) -> int:
        """Refit every live candidate from the statistics (warm-started); returns the exact-solve count."""
        every = bool(self.alive.all())
        live = slice(None) if every else np.flatnonzero(self.alive)
        warm = self.coef[live] > 0  # NaN (never fitted) is not
        warm |= ~warm.any(axis=1)[:, None]  # never fitted, or all zero: start from the full support
        fit = refit(self.stats, self.index[live], self.width[live], self.options.nonnegative, warm)
        self.coef[live] = fit.coef
        self.score[live] = fit.score
        return fit.n_exact

    def _weights(self, y: np.ndarray) -> np.ndarray:
        return weights(y, self.options.weighting)

    def admit(self, values: np.ndarray, y: np.ndarray) -> None:
        """Add runs to the fit (no refit); they become the most recent runs."""
        self.stats.add(values, y, self._weights(y))
        self._remember(values, y)

    def exclude(self, values: np.ndarray, y: np.ndarray) -> None:
        """Take admitted runs (their pool values and times) out of the fit (no refit): a downdate of the
        statistics. The recent runs are left as they are (a store reads them again for each update)."""
        self.stats.add(values, y, self._weights(y), sign=-1.0)

    def _remember(self, values: np.ndarray, y: np.ndarray) -> None:
        """Append runs to the recent runs, keeping the :data:`ANOMALY_WINDOW` added last."""
        if isinstance(self.values, LazyValues):
            self.values = self.values.appended(values, ANOMALY_WINDOW)
        else:
            self.values = np.concatenate([self.values, values])[-ANOMALY_WINDOW:]
        self.y = np.concatenate([self.y, y])[-ANOMALY_WINDOW:]

    def update(self, values: np.ndarray, y: np.ndarray, screen: bool = True, do_prune: bool = True,
               before: int | None = None) -> Update:
        """Add runs, refit, set aside anomalous new runs (each time: the statistics from before plus the
        new runs kept, refit), re-rank and prune by percentile. The reference of the anomaly rule is the
        recent runs (:attr:`values`, :attr:`y`) plus the new ones; the new runs kept join the recent runs.
        ``before``: the current :attr:`leader`, when the caller has it already."""
        o = self.options
        before = self.leader if before is None else before
        saved = self.stats.copy()
        w = self._weights(y)
        self.stats.add(values, y, w)
        n_exact = self.refit()
        kept = np.ones(len(y), bool)
        while screen and kept.any() and self.alive.any():  # set aside the worst run, refit, look again
            lead = self.leaders(o.n_leaders)
            if not len(lead):  # no live candidate with a finite score (a run whose terms all overflow):
                break  # no leader to judge a run by (the rule's minimum over none was a ValueError)
            rows = np.flatnonzero(kept)
            fits = self.index[lead], self.width[lead], self.coef[lead]
            rel = np.concatenate([relative_residuals(self.values, self.y, *fits),
                                  relative_residuals(values[rows], y[rows], *fits)])
            mask, severity = unexplained(rel, np.arange(len(rel)) >= len(self.y), o.anomaly_mad, o.anomaly_floor)
            if not mask.any():
                break
            kept[rows[int(np.argmax(np.where(mask, severity, -1.0))) - len(self.y)]] = False
            self.stats = saved.copy()
            self.stats.add(values[kept], y[kept], w[kept])
            n_exact += self.refit()
        self._remember(values[kept], y[kept])
        pruned = np.zeros(0, int)
        cutoff = float("inf")
        if do_prune:
            pruned, cutoff = self.prune()
        return Update(np.flatnonzero(~kept), pruned, cutoff, before, self.leader, n_exact)

    def prune(self) -> tuple[np.ndarray, float]:
        """Delete live candidates above the ``prune_percentile`` of the scores (keeping ``min_survivors``)."""
        live = np.flatnonzero(self.alive)
        if not len(live):
            return live, float("inf")
        scores = self.score[live]
        kept, _ = prune(scores, self.options.prune_percentile, self.options.min_survivors)
        dead = np.ones(len(live), bool)
        dead[kept] = False
        dead = np.flatnonzero(dead)
        self.alive[live[dead]] = False
        finite = scores[np.isfinite(scores)]
        cutoff = float(np.percentile(finite, self.options.prune_percentile)) if len(finite) else float("inf")
        return live[dead], cutoff

