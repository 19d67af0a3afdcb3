"""The vocabulary every layer shares: parameter roles, strategy names, the weighting, one options record.

This module sits at the bottom of the package (it imports nothing from automodel but the errors), so
the data reader, the search-space loader, the solver and the search all agree on the same names. Each
strategy chosen by name has one registry: the names are here, the implementations live in the module
that owns them and are keyed by the same names (metrics in :mod:`automodel.solve.metrics`, selection
rules in :mod:`automodel.search.select`, weightings here).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np

from automodel.errors import SpaceError

__all__ = ["ROLE_NAMES", "AGGREGATES", "METRICS", "SELECTIONS", "WEIGHTINGS", "weights", "FitOptions",
           "check_choice"]

#: canonical names of the parameter roles the engine knows; extra parameters keep their column name
ROLE_NAMES: tuple[str, ...] = ("n", "p", "cpu", "bw")

#: how repetitions of one configuration are combined
AGGREGATES: tuple[str, ...] = ("median", "mean", "min")

#: ranking metrics, all "lower is better" (:mod:`automodel.solve.metrics` computes each one)
METRICS: tuple[str, ...] = ("s", "rel_s", "loo", "aic", "smape", "holdout", "forward")

#: selection rules (:mod:`automodel.search.select`): ``"simplest"`` = the fewest terms among the
#: candidates the data cannot tell apart from rank 1; ``"best"`` = rank 1
SELECTIONS: tuple[str, ...] = ("simplest", "best")


def _relative(y: np.ndarray) -> np.ndarray:
    return 1.0 / y ** 2


def _none(y: np.ndarray) -> np.ndarray:
    return np.ones_like(y)


#: weighting name -> row weights of the least-squares fit. ``relative`` minimises
#: ``sum(((T - T_obs) / T_obs)^2)`` (bayesian-kohashi-2022.txt, eq. 7), so runs of 0.1 s and 1000 s count
#: alike; ``none`` is ordinary least squares.
WEIGHTINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"none": _none, "relative": _relative}


def weights(y: np.ndarray, weighting: str) -> np.ndarray:
    """Row weights of the fit for observed times ``y`` (any shape) under ``weighting``.

    Examples
    --------
    >>> weights(np.array([0.5, 2.0]), "relative").tolist()
    [4.0, 0.25]
    """
    check_choice("weighting", weighting, tuple(WEIGHTINGS))
    return WEIGHTINGS[weighting](np.asarray(y, float))


def check_choice(what: str, value: Any, known: tuple[str, ...], where: str = "") -> None:
    """Raise a one-line :class:`SpaceError` when ``value`` is not one of ``known``."""
    if value not in known:
        prefix = f"{where}: " if where else ""
        raise SpaceError(f"{prefix}unknown {what} {value!r}; expected one of {', '.join(known)}")


@dataclass(frozen=True)
class FitOptions:
    """How candidates are fitted, ranked, pruned and chosen: the one options record.

    The search (``[fit]`` of a search-space file) and the online store read the same fields; the
    online stage keeps more candidates alive (:meth:`online`).
    """

    nonnegative: bool = True
    weighting: str = "relative"
    metric: str = "rel_s"
    prune_percentile: float = 50.0
    min_survivors: int = 8
    templates: tuple[str, ...] = ()
    selection: str = "simplest"

    def check(self, where: str = "") -> None:
        """Validate every named strategy (one-line :class:`SpaceError`)."""
        check_choice("weighting", self.weighting, tuple(WEIGHTINGS), where)
        check_choice("metric", self.metric, METRICS, where)
        check_choice("selection", self.selection, SELECTIONS, where)

    @classmethod
    def keys(cls) -> set[str]:
        return {f.name for f in fields(cls)}
