"""The state of one staged search of many targets, and the step every stage takes: score, prune, keep the top."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from automodel.data import Dataset
from automodel.data.splits import holdout_rows
from automodel.solve.metrics import METRICS
from automodel.search.canonical import canonical, unit_factor, uses_only
from automodel.search.family_lists import TargetFamilyLists
from automodel.search.outcome import StageReport
from automodel.search.prune import prune_rows
from automodel.search.registry import Batch, Registry, compact, sorted_groups
from automodel.search.score import TermCache
from automodel.search.targets import score_targets
from automodel.space.config import SearchSpace
from automodel.space.terms import Term, saturating

__all__ = ["Search"]


class Search:
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
    def terms(self, stage: str, key: str) -> tuple[Term, ...]:
        """The terms of setting ``key`` of ``stage`` that only use parameters this dataset has (and are not
        the same as another), a cap without a centre put at the measured levels
        (:func:`~automodel.space.terms.saturating`)."""
        placed = saturating(getattr(self.space.stage(stage), key), self.ds.columns())  # caps at measured levels
        return tuple(canonical(t) for t in placed if uses_only(t, self.params) and not unit_factor(t, self.lowest))

    def note(self, text: str) -> None:
        """Record a note once (many targets may give the same)."""
        if text not in self.notes:
            self.notes.append(text)

    def run(self, name: str, ks: np.ndarray, rows: np.ndarray, rows_text: str, cands: np.ndarray,
            top: int | None, note: str = "", final: bool = False, then: TargetFamilyLists | None = None
            ) -> tuple[np.ndarray, Batch]:
        """Score each target's candidates on rows, prune by percentile, keep the top; record the stage.

        ``ks`` are the targets (rows of ``cands``, (R, C) ids, -1 for none). Each row keeps one
        structure per term set (the last proposed, at the place of the first) and drops those with as
        many terms as the rows have configurations (no residual degree of freedom: the score is
        undefined; the report says how many). ``then`` (the template-list cache, :class:`FamilyLists`
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
            batch = score_targets(self.cache, self.Y, self.reg, ks, np.ones(self.ds.n_points, bool),
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
        return score_targets(self.cache, self.Y, self.reg, ks, rows, ids, self.opt.weighting,
                             self.opt.nonnegative, self.names, METRICS[self.opt.metric].leverages,
                             holdout_rows(self.ds, rows))
