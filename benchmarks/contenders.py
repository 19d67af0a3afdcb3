"""The contenders of the accuracy benchmark: automodel per ranking metric, Extra-P, seeded baselines.

Every contender models the training rows of each task group and predicts at the same query points:
the held-out rows, the training rows (for the best-p comparison) and optional extra points (the
plotted curves), in that order (``query_points``).  A contender that cannot model a group says why
in ``Outcome.status`` (``"n/a: ..."``, ``"failed: ..."``, ``"extrap unavailable: ..."``) instead of
being dropped; its predictions are then NaN.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

import automodel
from automodel.text.printing import to_text
from automodel.solve.metrics import METRICS
from automodel.space.config import load_space
from automodel.templates import TEMPLATES
from benchmarks.extrap_tool import ensure_extrap, run_extrap
from benchmarks.tasks import Task, pooled_columns

OK = "ok"
#: levels of the prediction bands the automodel contenders report (benchmarks.bands scores them)
BAND_LEVELS = (0.5, 0.9)
NOT_INSTALLED = "extrap unavailable: Extra-P not installed; run the full benchmark to install it"

#: Seeded baselines of the issue: (contender name, registry template, fit options, label).
BASELINES: tuple[tuple[str, str, dict, str], ...] = (
    ("prophesy", "prophesy", {}, "Prophesy, a n^3 + b n^2 + c n + d"),
    ("rbasp", "rbasp", {}, "RBASP, log2 T = b0 + sum b_i log2 x_i + g(p)"),
    ("amdahl", "amdahl", {}, "Amdahl, c1/p + c2 (c >= 0, relative error)"),
    ("kohashi-3", "kohashi", {"n_terms": 3},
     "Kohashi, c1/p + c2 + c3 log2 p (c >= 0, relative error; c_i cubic in n when n varies)"),
    ("kohashi-6", "kohashi", {"n_terms": 6},
     "Kohashi, the 6 terms of eqs. 1-6 with a fitted sigmoid centre (c >= 0, relative error)"),
    ("hockney", "hockney", {}, "Hockney, alpha + beta m (piecewise when breakpoints are given)"),
    ("hockney-collective", "hockney_collective", {},
     "Hockney collective: the schedule of steps with the least standard error"),
    ("rational", "rational", {}, "rational polynomial P_n(n) P_cpu(cpu) P_bw(bw) (Yagnik, ICPP 2006)"),
)
# FiM-Com (pattern auto) is left out of the default run: 153 s on the canonical tasks, more than every
# other contender together; its figures are in the analysis of benchmarks/RESULTS.md.

Key = tuple[str, str]
Extra = Mapping[Key, pd.DataFrame]


@dataclass(frozen=True, eq=False)
class Outcome:
    """What one contender did on one task group.

    Attributes
    ----------
    status : str
        ``"ok"`` or a one-line reason.
    formula : str or None
        The chosen model, as the tool prints it.
    predictions : ndarray
        One value per row of ``query_points(task, extra)`` (NaN unless ok).
    seconds : float
        Wall time of modelling the group (fit and predictions).
    note : str
        What else the tool said (e.g. which leaderboard entry won, Extra-P's warnings).
    """

    status: str
    formula: str | None
    predictions: np.ndarray
    seconds: float
    note: str = ""
    bands: Mapping[float, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    averaged: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def split(self, task: Task) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Predictions at ``task.test`` rows, at ``task.train`` rows, and at the extra points."""
        n_test, n_train = len(task.test), len(task.train)
        p = self.predictions
        return p[:n_test], p[n_test:n_test + n_train], p[n_test + n_train:]


@dataclass(frozen=True)
class Contender:
    """A named modelling tool: ``run(tasks, extra)`` returns ``task.key -> Outcome``."""

    name: str
    kind: str
    label: str
    run: Callable[[Sequence[Task], Extra], dict[Key, Outcome]]


def query_points(task: Task, extra: pd.DataFrame | None = None) -> pd.DataFrame:
    """Parameter columns of the test rows, the training rows, then ``extra`` (as floats)."""
    parts = [task.test[task.columns], task.train[task.columns]]
    if extra is not None:
        parts.append(extra[task.columns])
    return pd.concat(parts, ignore_index=True).astype(float)


def _blank(task: Task, extra: Extra, status: str, seconds: float = float("nan")) -> Outcome:
    n_points = len(query_points(task, extra.get(task.key)))
    return Outcome(status, None, np.full(n_points, np.nan), seconds)


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _per_group(model: Callable[[Task, pd.DataFrame], Outcome]
               ) -> Callable[[Sequence[Task], Extra], dict[Key, Outcome]]:
    """Run ``model(task, points)`` on each group, timing it and turning exceptions into statuses."""
    def run(tasks: Sequence[Task], extra: Extra) -> dict[Key, Outcome]:
        out: dict[Key, Outcome] = {}
        for task in tasks:
            start = time.perf_counter()
            try:
                outcome = model(task, query_points(task, extra.get(task.key)))
            except Exception as error:  # a benchmark reports a failing tool and goes on
                outcome = _blank(task, extra, f"failed: {_one_line(error)}")
            out[task.key] = replace(outcome, seconds=time.perf_counter() - start)
        return out
    return run


def fit_automodel(task: Task, space: str = "default", metric: str | None = None) -> automodel.FitResult:
    """``automodel.fit`` on the training rows of ``task`` (roles n, p and extra parameters)."""
    roles = {r: c for r, c in task.params.items() if r in ("n", "p")}
    extras = [c for r, c in task.params.items() if r not in ("n", "p")]
    return automodel.fit(task.train, time=task.target, n=roles.get("n"), p=roles.get("p"), cpu=None,
                         bw=None, params=extras, space=space, metric=metric, progress=False,
                         ignore=pooled_columns(task.train, task.params.values(), task.target))


def chosen_row(result: automodel.FitResult) -> str:
    """Which leaderboard row automodel chose: its kind and rank (the ``chosen`` row, else rank 1)."""
    board = result.leaderboard
    rows = board[board["choice"] == "chosen"] if "choice" in board.columns else board.iloc[:0]
    row = rows.iloc[0] if len(rows) else board.iloc[0]
    return f"chosen: {row['kind']}, rank {row['rank']}"


def automodel_contender(metric: str | None = None, space: str = "default") -> Contender:
    """automodel with search space ``space``, ranked by ``metric`` (None: the space's own metric)."""
    default = load_space(space).fit.metric
    name = "automodel" if metric is None else f"automodel/{metric}"
    label = (f"{space} search space, ranked by its own metric ({default}); the headline" if metric is None
             else f"{space} search space, ranked by {metric}")

    def model(task: Task, points: pd.DataFrame) -> Outcome:
        result = fit_automodel(task, space, metric)
        bands = {level: result.best.predict_interval(points, level) for level in BAND_LEVELS}
        return Outcome(OK, result.best.formula, result.best.predict(points), 0.0, chosen_row(result), bands,
                       result.best.predict_averaged(points))

    return Contender(name, "automodel", label, _per_group(model))


def role_frame(task: Task, rows: pd.DataFrame) -> pd.DataFrame:
    """Rows with parameter columns renamed to their roles (``n``, ``p``, extras), plus the time if any."""
    columns = {c: r for r, c in task.params.items()}
    if task.target in rows.columns:
        columns[task.target] = "time"
    return rows[list(columns)].rename(columns=columns).reset_index(drop=True)


def template_contender(name: str, template: str, options: Mapping | None = None,
                       label: str | None = None) -> Contender:
    """A seeded template of ``automodel.templates.TEMPLATES`` fitted on the training rows."""
    seeded = TEMPLATES[template]
    options = dict(options or {})

    def model(task: Task, points: pd.DataFrame) -> Outcome:
        train = role_frame(task, task.train)
        reason = seeded.applicable(train)
        if reason is not None:
            return Outcome("n/a: " + reason.removeprefix("not applicable: "), None,
                           np.full(len(points), np.nan), 0.0)
        fitted = seeded.fit(train, **options)
        notes = "; ".join(getattr(fitted, "notes", ()) or ())
        return Outcome(OK, to_text(fitted.expr), np.asarray(fitted.predict(role_frame(task, points)), float),
                       0.0, notes)

    return Contender(name, "template", label or seeded.title, _per_group(model))


def extrap_contender(modeler: str, install: bool = True) -> Contender:
    """Extra-P 4 (``benchmarks.extrap_tool``) with its ``"default"`` or ``"refining"`` modeler.

    With ``install=False`` a missing Extra-P venv is not created; every group then says so.
    """
    def run(tasks: Sequence[Task], extra: Extra) -> dict[Key, Outcome]:
        if not install and ensure_extrap(install=False)[0] is None:
            return {t.key: _blank(t, extra, NOT_INSTALLED) for t in tasks}
        # run_extrap models task.train and predicts at task.test: put every query point there.
        stand_ins = [replace(t, test=query_points(t, extra.get(t.key))) for t in tasks]
        try:
            results = run_extrap(stand_ins, modeler, install=install)
        except Exception as error:  # e.g. unreadable driver output: report it and go on
            return {t.key: _blank(t, extra, f"extrap failed: {_one_line(error)}") for t in tasks}
        out = {}
        for task in tasks:
            r = results[task.key]
            out[task.key] = Outcome(r.status, r.formula, r.predictions, r.seconds, "; ".join(r.warnings))
        return out

    return Contender(f"extrap-{modeler}", "extrap", f"Extra-P 4, {modeler} modeler", run)


def default_contenders(metrics: Sequence[str] = METRICS, space: str = "default", extrap: bool = True,
                       install: bool = True, baselines: Sequence[tuple[str, str, dict, str]] = BASELINES
                       ) -> list[Contender]:
    """automodel (headline: the space's own metric), one per other metric, Extra-P, the baselines."""
    default = load_space(space).fit.metric
    out = [automodel_contender(None, space)]
    out += [automodel_contender(m, space) for m in metrics if m != default]
    if extrap:
        out += [extrap_contender(m, install) for m in ("default", "refining")]
    out += [template_contender(*b) for b in baselines]
    return out


def run_contenders(contenders: Sequence[Contender], tasks: Sequence[Task], extra: Extra | None = None,
                   log: Callable[[str], None] = print) -> dict[str, dict[Key, Outcome]]:
    """Every contender on every task group: ``name -> task.key -> Outcome``."""
    extra = extra or {}
    out: dict[str, dict[Key, Outcome]] = {}
    for contender in contenders:
        start = time.perf_counter()
        out[contender.name] = contender.run(tasks, extra)
        n_ok = sum(o.ok for o in out[contender.name].values())
        log(f"{contender.name}: {n_ok}/{len(tasks)} groups modelled in {time.perf_counter() - start:.1f} s")
    return out
