"""The template-list cache of adaptive-model-sanjay-slides.txt, slide 26: one list of additions per family of seeds.

The slides call it the template-list cache; here it is named for what it shares (a list of additions
per family of seeds), not to be confused with the seeded templates of :mod:`automodel.templates`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from automodel.search.prune import rank
from automodel.search.registry import Registry
from automodel.search.score import Scores
from automodel.space.structure import Structure

__all__ = ["FamilyLists", "TargetFamilyLists"]


class FamilyLists:
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


class TargetFamilyLists:
    """The template-list cache (:class:`FamilyLists`) of each target: one per row of seeds."""

    def __init__(self, reg: Registry, seeds: np.ndarray, additions: list,
                 make: Callable[[Structure, Any], Structure], family: Callable[[Structure], Hashable | None],
                 size: int, metric: str) -> None:
        self.reg = reg
        self.lists = [FamilyLists([reg.structures[i] for i in row[row >= 0]], additions, make, family, size, metric)
                      for row in seeds]

    def first(self) -> np.ndarray:
        """Each target's first candidates (:meth:`FamilyLists.first`), (R, C) ids."""
        return self.reg.rows([lists.first() for lists in self.lists])

    def more(self, r: int, scored: Scores) -> list[Structure]:
        """Target ``r``'s other seeds with their families' lists (:meth:`FamilyLists.__call__`)."""
        return self.lists[r](scored)

    def note(self) -> str:
        return self.lists[0].note() if self.lists else ""
