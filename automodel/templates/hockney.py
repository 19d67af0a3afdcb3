"""Hockney point-to-point model t(m) = alpha + beta m, its piecewise form, and collectives built from it.

Source: contention-hockney-singh.txt, sec. 2.1 (``t(n) = alpha + n beta``), sec. 3.3.1 (piecewise
form: constant below 8 KB, lines on 8-128 KB and above 128 KB) and sec. 3.1/3.3 (a collective's
time is the sum over its steps of the maximum over concurrent messages). The schedules and their
closed forms live in :mod:`automodel.templates.collectives`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError, ModelFileError
from automodel.templates.base import (MODEL_VERSION, ColumnTemplate, check_option, column, json_float,
                                           read_float, read_floats, read_header, read_notes, read_str,
                                           solve_weighted, standard_error, times)
from automodel.templates.collectives import SCHEDULES, design_matrix, schedule_expr

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["HockneyModel", "HOCKNEY", "HOCKNEY_COLLECTIVE", "TEMPLATES", "PAPER_BREAKPOINTS",
           "fit_schedule", "check_breakpoints"]

#: The eager / rendezvous thresholds of contention-hockney-singh sec. 3.3.1 (8 KB and 128 KB).
PAPER_BREAKPOINTS: tuple[float, float] = (8192.0, 131072.0)
#: the named choices of breakpoints (besides None and explicit sizes)
BREAKPOINT_CHOICES = ("paper", "search")


def increasing_sizes(sizes: Sequence[float]) -> bool:
    """``sizes`` are finite, positive and strictly increasing (breakpoints of a piecewise model)."""
    return list(sizes) == sorted(set(sizes)) and all(math.isfinite(b) and b > 0 for b in sizes)

_COLLECTIVE_SCHEDULES = tuple(s for s in SCHEDULES if s != "p2p")


@dataclass(frozen=True)
class HockneyModel:
    """A fitted (piecewise) Hockney model of a point-to-point message or of a collective schedule.

    ``alphas[j]`` and ``betas[j]`` are the latency (s) and inverse bandwidth (s/byte) of piece ``j``,
    which covers ``breakpoints[j-1] <= m < breakpoints[j]``; ``betas[0]`` is 0 when the first piece
    is constant (sec. 3.3.1).
    """

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    schedule: str
    breakpoints: tuple[float, ...]
    alphas: tuple[float, ...]
    betas: tuple[float, ...]
    constant_first: bool
    standard_error: float
    notes: tuple[str, ...] = ()
    template: str = "hockney"

    @property
    def name(self) -> str:
        return self.template if self.schedule == "p2p" else f"{self.template}[{self.schedule}]"

    @property
    def n_coefficients(self) -> int:
        return 2 * len(self.alphas) - (1 if self.constant_first and len(self.alphas) > 1 else 0)

    @property
    def expr(self) -> sympy.Expr:
        """Closed form, e.g. ``ceiling(log2(p))*(alpha + beta*n)`` for a binomial broadcast."""
        return schedule_expr(self.schedule, self.alphas, self.betas, self.breakpoints)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        m = column(frame, "n")
        p = column(frame, "p") if self.schedule != "p2p" else np.ones_like(m)
        return design_matrix(self.schedule, p, m, self.breakpoints) @ np.array(self.alphas + self.betas)

    def to_dict(self) -> dict:
        return {"kind": "template", "template": self.template, "version": MODEL_VERSION,
                "schedule": self.schedule, "breakpoints": list(self.breakpoints), "alphas": list(self.alphas),
                "betas": list(self.betas), "constant_first": self.constant_first,
                "standard_error": json_float(self.standard_error),
                "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> "HockneyModel":
        template = d.get("template") if isinstance(d, dict) else None
        if template not in ("hockney", "hockney_collective"):
            raise ModelFileError(f"expected template 'hockney' or 'hockney_collective', got {template!r:.60}")
        read_header(d, template)
        schedule = read_str(d, "schedule", allowed=tuple(SCHEDULES))
        breakpoints = read_floats(d, "breakpoints")
        alphas = read_floats(d, "alphas", length=len(breakpoints) + 1)
        betas = read_floats(d, "betas", length=len(breakpoints) + 1)
        if not increasing_sizes(breakpoints):
            raise ModelFileError("model field 'breakpoints': expected increasing positive numbers")
        constant_first = d.get("constant_first")
        if not isinstance(constant_first, bool):
            raise ModelFileError("model field 'constant_first': expected true or false")
        se = read_float(d, "standard_error", allow_none=True)
        return cls(schedule=schedule, breakpoints=breakpoints, alphas=alphas, betas=betas,
                   constant_first=constant_first, standard_error=math.inf if se is None else se,
                   notes=read_notes(d), template=template)


def _solve(x: np.ndarray, t: np.ndarray, constant_first: bool, relative: bool,
           nonnegative: bool) -> tuple[np.ndarray, float] | None:
    """Fit the columns of ``x`` in use; ``None`` when they are rank deficient (a piece without data)."""
    k = x.shape[1] // 2
    keep = np.ones(2 * k, dtype=bool)
    if constant_first and k > 1:
        keep[k] = False
    xs = x[:, keep]
    used = np.any(xs != 0, axis=0)
    if not used.all() or xs.shape[0] <= xs.shape[1] or np.linalg.matrix_rank(xs / np.linalg.norm(xs, axis=0)) < xs.shape[1]:
        return None
    coef, res = solve_weighted(xs, t, relative=relative, nonnegative=nonnegative)
    full = np.zeros(2 * k)
    full[keep] = coef
    return full, standard_error(res, xs.shape[1])


def _candidate_breakpoints(m: np.ndarray) -> np.ndarray:
    """Distinct observed message sizes except the smallest (a piece starts at its breakpoint)."""
    return np.unique(m)[1:]


def check_breakpoints(breakpoints: Sequence[float] | str | None, template: str = "hockney"
                      ) -> tuple[float, ...] | str | None:
    """``breakpoints`` (:func:`fit_schedule`'s option) with explicit sizes as a tuple of floats; a one-line
    OptionError unless it is None, a choice of :data:`BREAKPOINT_CHOICES` or increasing sizes > 0."""
    if breakpoints is not None and not isinstance(breakpoints, str):
        breakpoints = tuple(float(b) for b in breakpoints)
    check_option(breakpoints in (None, *BREAKPOINT_CHOICES) if not isinstance(breakpoints, tuple) else
                 increasing_sizes(breakpoints), template, "breakpoints", "none, 'paper', 'search' or increasing "
                 "sizes > 0", breakpoints)
    return breakpoints


def fit_schedule(frame: pd.DataFrame, schedule: str, breakpoints: Sequence[float] | str | None = None,
                 constant_first: bool = True, relative: bool = True, nonnegative: bool = True,
                 n_pieces: int = 3, template: str = "hockney") -> HockneyModel:
    """Fit alpha, beta (per piece) of ``schedule`` to the ``time`` column.

    Parameters
    ----------
    schedule : a key of :data:`~automodel.templates.collectives.SCHEDULES` ("p2p" for t(m) itself).
    breakpoints : ``None`` (one line), ``"paper"`` (8 KB and 128 KB, sec. 3.3.1), ``"search"``
        (every choice of ``n_pieces - 1`` observed message sizes, lowest standard error) or explicit sizes.
    constant_first : the first piece is a constant (sec. 3.3.1: "assumed to be constant").
    relative : weight rows by ``1/T`` (relative-error cost; times span decades of message size).
    nonnegative : ``alpha, beta >= 0`` (NNLS).
    """
    check_option(schedule in SCHEDULES, template, "schedule", f"one of {', '.join(sorted(SCHEDULES))}", schedule)
    breakpoints = check_breakpoints(breakpoints, template)
    t = times(frame, min_rows=2)
    m = column(frame, "n")
    p = column(frame, "p") if schedule != "p2p" else np.ones_like(m)
    if breakpoints is None:
        candidates: list[tuple[float, ...]] = [()]
    elif isinstance(breakpoints, str):
        if breakpoints == "paper":
            candidates = [PAPER_BREAKPOINTS]
        elif breakpoints == "search":
            grid = _candidate_breakpoints(m)
            candidates = list(itertools.combinations(grid.tolist(), n_pieces - 1))
    else:
        candidates = [breakpoints]
    best: tuple[float, tuple[float, ...], np.ndarray] | None = None
    for bps in candidates:
        solved = _solve(design_matrix(schedule, p, m, bps), t, constant_first, relative, nonnegative)
        if solved is not None and (best is None or solved[1] < best[0]):
            best = (solved[1], bps, solved[0])
    if best is None:
        raise DataError(f"{frame.attrs.get('source', 'data')}, column 'n': too few distinct message sizes "
                        f"for {len(candidates[0]) + 1} piece(s) of schedule '{schedule}'")
    se, bps, coef = best
    k = len(bps) + 1
    notes = [f"breakpoints searched over {len(candidates)} choices"] if breakpoints == "search" else []
    return HockneyModel(schedule=schedule, breakpoints=bps, alphas=tuple(map(float, coef[:k])),
                        betas=tuple(map(float, coef[k:])), constant_first=constant_first and k > 1,
                        standard_error=se, notes=tuple(notes), template=template)


@dataclass(frozen=True)
class HockneyTemplate(ColumnTemplate):
    """Point-to-point Hockney model ``t(m) = alpha + beta m`` (plain or piecewise) on column ``n``."""

    model_class: ClassVar[type] = HockneyModel

    name: str = "hockney"
    title: str = "Hockney point-to-point model alpha + beta*m (optionally piecewise)"
    source: str = "contention-hockney-singh.txt, sec. 2.1 (t(n) = alpha + n beta) and sec. 3.3.1 (piecewise)"
    requires: tuple[str, ...] = ("n",)
    #: where the options are documented (``automodel templates``)
    option_docs: ClassVar[tuple[Callable, ...]] = (fit_schedule,)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The check of :meth:`fit` (in :func:`fit_schedule`) on its option values alone
        (:meth:`Template.check_options`)."""
        check_breakpoints(options["breakpoints"], self.name)

    def fit(self, frame: pd.DataFrame, breakpoints: Sequence[float] | str | None = None,
            constant_first: bool = True, relative: bool = True, nonnegative: bool = True,
            **options: Any) -> HockneyModel:
        """Fit t(m); see :func:`fit_schedule` for the options.

        Examples
        --------
        >>> f = pd.DataFrame({"n": [1e3, 1e4, 1e5], "time": [2e-6 + 1e-9 * m for m in (1e3, 1e4, 1e5)]})
        >>> model = HOCKNEY.fit(f)
        >>> round(model.alphas[0] * 1e6, 6), round(model.betas[0] * 1e9, 6)
        (2.0, 1.0)
        """
        return fit_schedule(frame, "p2p", breakpoints, constant_first, relative, nonnegative, template=self.name)


@dataclass(frozen=True)
class HockneyCollectiveTemplate(ColumnTemplate):
    """A collective as a schedule of Hockney steps; the schedule is given or selected by standard error."""

    model_class: ClassVar[type] = HockneyModel

    name: str = "hockney_collective"
    title: str = "Collective schedule over the (piecewise) Hockney model"
    source: str = ("contention-hockney-singh.txt, sec. 3.1 and 3.3 (sum over steps of the max over concurrent "
                   "messages), sec. 2.1 and 3.3.1 (t(m))")
    requires: tuple[str, ...] = ("n", "p")
    option_docs: ClassVar[tuple[Callable, ...]] = (fit_schedule,)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The checks of :meth:`fit` (and of :func:`fit_schedule`) on its option values alone
        (:meth:`Template.check_options`)."""
        schedule, schedules = options["schedule"], options["schedules"]
        check_option(schedule == "auto" or schedule in _COLLECTIVE_SCHEDULES, self.name, "schedule",
                     f"'auto' or one of {', '.join(_COLLECTIVE_SCHEDULES)}", schedule)
        check_option(schedules is None or (not isinstance(schedules, str) and len(schedules) > 0 and all(
            s in SCHEDULES for s in schedules)), self.name, "schedules", f"none or some of {', '.join(SCHEDULES)}",
            schedules)
        check_breakpoints(options["breakpoints"], self.name)

    def fit(self, frame: pd.DataFrame, schedule: str = "auto", breakpoints: Sequence[float] | str | None = None,
            constant_first: bool = True, relative: bool = True, nonnegative: bool = True,
            schedules: Sequence[str] | None = None, **options: Any) -> HockneyModel:
        """Fit the schedule ``schedule``, or with ``"auto"`` every one of ``schedules`` (default: all
        collectives), keeping the lowest standard error (of the weighted residuals).

        Parameters
        ----------
        schedule : a collective of :data:`~automodel.templates.collectives.SCHEDULES` (``binomial_bcast``,
            ...) or ``"auto"``.
        schedules : the schedules ``"auto"`` compares (default: every collective).
        """
        self.check_options({"schedule": schedule, "schedules": schedules, "breakpoints": breakpoints})
        if schedule != "auto":
            return fit_schedule(frame, schedule, breakpoints, constant_first, relative, nonnegative,
                                template=self.name)
        fits = []
        for name in schedules or _COLLECTIVE_SCHEDULES:
            try:
                fits.append(fit_schedule(frame, name, breakpoints, constant_first, relative, nonnegative,
                                         template=self.name))
            except DataError:
                continue
        if not fits:
            raise DataError(f"{frame.attrs.get('source', 'data')}: no collective schedule could be fitted")
        best = min(fits, key=lambda f: f.standard_error)
        ranking = ", ".join(f"{f.schedule} {f.standard_error:.3g}" for f in sorted(fits, key=lambda f: f.standard_error)[:3])
        return HockneyModel(**{**best.__dict__, "notes": best.notes + (f"schedule selected by standard error: {ranking}",)})


HOCKNEY = HockneyTemplate()
HOCKNEY_COLLECTIVE = HockneyCollectiveTemplate()
TEMPLATES = [HOCKNEY, HOCKNEY_COLLECTIVE]
