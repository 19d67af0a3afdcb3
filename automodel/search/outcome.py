"""What a staged search returns: each stage's report, one target's outcome, the outcome of many targets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from automodel.search.score import Scores
from automodel.space.structure import Structure
from automodel.space.terms import Term

__all__ = ["StageReport", "SearchOutcome", "ManyOutcome"]


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

    def line(self, name_width: int = 14) -> str:
        """One line of the stage log, the name padded to ``name_width`` (the longest of a log, so that its
        columns align), and the note on a line of its own."""
        text = (f"{self.name:<{name_width}} rows: {self.rows} ({self.n_rows})  fitted {self.n_candidates}, "
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
