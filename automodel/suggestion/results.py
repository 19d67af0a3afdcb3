"""What a plan for the next runs holds: the band at the target now, and each suggested run with its cost and reason."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from automodel.errors import DataError
from automodel.terminal import WIDTH, wrap

__all__ = ["NothingToRun", "NoTimeAtTarget", "Suggestion", "Plan"]


class NothingToRun(DataError):
    """No configuration meets the constraints (``why == "constraints"``) or fits the budget
    (``why == "budget"``): a one-line :class:`DataError` on the command line, a stop for a campaign."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


class NoTimeAtTarget(DataError):
    """The model predicts no positive time at the target, so no band there to narrow: a one-line
    :class:`DataError` on the command line; a campaign runs the configurations nearest the target
    instead (:func:`automodel.suggestion.facade.check_runs`)."""


@dataclass(frozen=True)
class Suggestion:
    """One configuration to run and what it is expected to buy.

    Attributes
    ----------
    config : dict
        Canonical parameter -> value.
    cost : float
        Expected core-hours: repetitions x p x the predicted time.
    width_after : float
        Expected relative half-width of the band at the target after this run (and the ones before it
        in the plan), e.g. 0.25 for +-25 %.
    narrowing : float
        The drop of the half-width this run is expected to bring (in the same units).
    reason : str
        Why, in words.
    """

    config: dict[str, float]
    cost: float
    width_after: float
    narrowing: float
    reason: str

    @property
    def per_core_hour(self) -> float:
        return self.narrowing / self.cost if self.cost > 0 else math.inf


@dataclass(frozen=True)
class Plan:
    """What :func:`suggest` returns: the band at the target now and the runs that narrow it."""

    target: dict[str, float]
    predicted: float
    lower: float
    upper: float
    width: float
    level: float
    suggestions: tuple[Suggestion, ...]
    n_candidates: int
    roles: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    unit: str = "s"

    @property
    def cost(self) -> float:
        """Core-hours of every suggested run."""
        return float(sum(s.cost for s in self.suggestions))

    def frame(self) -> pd.DataFrame:
        """One row per suggestion: its parameters (the user's names), cost, band after, narrowing, reason."""
        rows = [{**{self.roles.get(q, q): v for q, v in s.config.items()}, "core_hours": s.cost,
                 "width_after": s.width_after, "narrowing": s.narrowing, "per_core_hour": s.per_core_hour,
                 "reason": s.reason} for s in self.suggestions]
        return pd.DataFrame(rows)

    def lines(self, width: int | None = WIDTH) -> list[str]:
        """The plan as text of at most ``width`` columns (None: no limit)."""
        where = ", ".join(f"{self.roles.get(q, q)}={v:g}" for q, v in self.target.items())
        out = [f"target {where}: predicted {self.predicted:.4g} {self.unit}",
               f"  {self.level:.0%} band {self.lower:.4g} to {self.upper:.4g} {self.unit} (+-{self.width:.0%})"]
        if not self.suggestions:
            out.append(f"no run of the {self.n_candidates} candidate configurations is expected to narrow it")
        else:
            out += ["", f"next {len(self.suggestions)} run(s) of {self.n_candidates} candidates, best value "
                        f"first ({self.cost:.3g} core-hours):"]
        for i, s in enumerate(self.suggestions, 1):
            config = " ".join(f"{self.roles.get(q, q)}={v:g}" for q, v in s.config.items())
            out.append(f"{i:>2}. {config}: {s.cost:.3g} core-h, band -> +-{s.width_after:.0%}")
            out += wrap(s.reason, width, "    ", "    ")
        out += [line for note in self.notes for line in wrap(f"note: {note}", width, "", "  ")]
        return out
