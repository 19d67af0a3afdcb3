"""Score many candidate models on one row set: the column cache, batched solves and all metrics.

A candidate is a :class:`Structure`: its computation part, communication part and extra terms
(adaptive-model-sanjay-slides.txt, slides 20-21 keep the parts apart so later stages can transform
each one). Scoring goes through a :class:`TermCache` that evaluates each distinct term once per
dataset; candidates of the same width are solved in one batched call (:mod:`automodel.solve.batched`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from automodel.solve import batched, metrics
from automodel.space.terms import Term

__all__ = ["Structure", "TermCache", "Scores", "score"]


@dataclass(frozen=True)
class Structure:
    """A candidate model: ``sum(c * t for t in comp + comm + extra)`` (duplicates merged)."""

    comp: tuple[Term, ...] = ()
    comm: tuple[Term, ...] = ()
    extra: tuple[Term, ...] = ()

    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(dict.fromkeys(self.comp + self.comm + self.extra))

    @property
    def key(self) -> frozenset[Term]:
        return frozenset(self.terms)


class TermCache:
    """Every distinct term evaluated once on every row of a dataset; columns addressed by index."""

    def __init__(self, columns: dict[str, np.ndarray], n_rows: int) -> None:
        self._columns = columns
        self._n_rows = n_rows
        self._index: dict[Term, int] = {}
        self._values: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def index(self, term: Term) -> int:
        i = self._index.get(term)
        if i is None:
            with np.errstate(all="ignore"):
                v = term.evaluate(self._columns, self._n_rows)
            v = np.where(np.isfinite(v), v, np.nan)
            i = self._index[term] = len(self._values)
            self._values.append(v)
            self._matrix = None
        return i

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


def score(cache: TermCache, rows: np.ndarray, y: np.ndarray, structures: list[Structure],
          weighting: str = "relative", nonnegative: bool = True, with_loo: bool = True,
          holdout: np.ndarray | None = None) -> Scores:
    """Fit and score every structure on the rows selected by the boolean mask ``rows``.

    ``holdout`` (a mask over all rows, within ``rows``) marks the largest configurations: every
    candidate is fitted a second time without them and the ``holdout`` metric is its RMS relative
    error on them, a forward-extrapolation check. Terms that are not finite on the selected rows make a
    candidate invalid (all metrics ``inf``).
    """
    rows = np.asarray(rows, bool)
    term_idx = [[cache.index(t) for t in s.terms] for s in structures]
    A = cache.matrix[rows]
    yr = np.asarray(y, float)[rows]
    w = 1.0 / yr ** 2 if weighting == "relative" else np.ones_like(yr)
    usable = np.isfinite(A).all(axis=0)
    A = np.where(np.isfinite(A), A, 0.0)
    des = batched.design(A, yr, w)
    sqrt_w = np.sqrt(w)
    hold = None if holdout is None else np.asarray(holdout, bool)[rows]
    if hold is not None:
        des_fit = batched.design(A[~hold], yr[~hold], w[~hold])

    n = len(structures)
    k_arr = np.array([len(t) for t in term_idx], dtype=int)
    out = {name: np.full(n, np.inf) for name in metrics.METRICS}
    coefs = np.full((n, int(k_arr.max(initial=0))), np.nan)
    valid = np.zeros(n, bool)
    n_fits = 0
    for k in np.unique(k_arr):
        members = np.flatnonzero(k_arr == k)
        combos = np.array([term_idx[i] for i in members], dtype=np.intp).reshape(len(members), k)
        ok = usable[combos].all(axis=1) if k else np.ones(len(members), bool)
        members, combos = members[ok], combos[ok]
        if not len(members):
            continue
        fit = batched.solve(des, combos, nonnegative=nonnegative)
        n_fits += len(members)
        pred = yr[:, None] - batched.residuals(des, combos, fit.coef_scaled) / sqrt_w[:, None]
        lev = batched.leverages(des, combos) if with_loo else None
        hold_err = None
        if hold is not None:
            fit_h = batched.solve(des_fit, combos, nonnegative=nonnegative)
            c_h = fit_h.coefficients(des_fit)
            pred_h = np.zeros((int(hold.sum()), len(members)))
            for j in range(k):
                pred_h += A[hold][:, combos[:, j]] * c_h[:, j]
            hold_err = np.where(len(yr) - hold.sum() > k, 1.0, np.inf) * (pred_h / yr[hold][:, None] - 1.0)
        scores = metrics.compute(yr, pred, k, fit.rss, lev, hold_err)
        for name, values in scores.items():
            out[name][members] = values
        coefs[members, :k] = fit.coefficients(des)
        valid[members] = True
    return Scores(list(structures), coefs, out, k_arr, n_fits, valid)
