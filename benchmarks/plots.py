"""Plots of the accuracy benchmark: measured runs and each contender's curve over the extrapolation range.

One PNG per task (matplotlib, Agg backend), small multiples: for a one-parameter task one panel per
group; for a task with more parameters one panel per value of the other parameters in a
representative group, the sweep parameter (``p`` when there is one) on the x axis.  Training runs
are filled dots, held-out runs open squares; repetitions are drawn as measured.  ``panels`` decides
what is drawn, ``curve_points`` the points the contenders must predict for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.contenders import Contender, Key, Outcome  # noqa: E402
from benchmarks.tasks import QUICK_GROUPS, Task  # noqa: E402

MAX_PANELS = 9
CURVE_POINTS = 48
#: Line style and width per contender kind.
LINES = {"automodel": ("-", 2.0), "extrap": ("--", 1.4), "template": (":", 1.4)}


@dataclass(frozen=True, eq=False)
class Panel:
    """One subplot: a task group, the x column, the fixed values of the other columns, the curve."""

    task: Task
    x: str
    fixed: dict[str, float]
    curve: pd.DataFrame

    @property
    def title(self) -> str:
        fixed = ", ".join(f"{c}={v:g}" for c, v in self.fixed.items())
        return f"{self.task.group}" + (f"\n{fixed}" if fixed else "")

    def rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``frame`` on this panel's slice."""
        return _slice(frame, self.fixed)


def _slice(frame: pd.DataFrame, fixed: Mapping[str, float]) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in fixed.items():
        mask &= frame[column].to_numpy(float) == value
    return frame[mask]


def sweep_column(task: Task) -> str:
    """The x axis: the ``p`` column, else the column extrapolated furthest (test max / train max)."""
    if task.p_column is not None:
        return task.p_column
    ratio = {c: task.test[c].max() / task.train[c].max() for c in task.columns}
    return max(task.columns, key=lambda c: ratio[c])


def _evenly(items: list, k: int) -> list:
    if len(items) <= k:
        return items
    return [items[i] for i in np.linspace(0, len(items) - 1, k).round().astype(int)]


def _curve(task: Task, x: str, fixed: Mapping[str, float], rows: pd.DataFrame) -> pd.DataFrame:
    lo, hi = float(rows[x].min()), float(rows[x].max())
    grid = np.geomspace(lo, hi, CURVE_POINTS) if lo > 0 else np.linspace(lo, hi, CURVE_POINTS)
    return pd.DataFrame({c: (grid if c == x else np.full(grid.size, fixed[c])) for c in task.columns})


def representative_first(groups: Sequence[Task]) -> list[Task]:
    """The groups of one task, those of ``QUICK_GROUPS`` first (stable otherwise)."""
    return sorted(groups, key=lambda t: t.group not in QUICK_GROUPS.get(t.name, ()))


def panels(groups: Sequence[Task], max_panels: int = MAX_PANELS) -> list[Panel]:
    """The panels of one task's plot: groups, or slices of the representative group."""
    groups = representative_first(groups)
    first = groups[0]
    x = sweep_column(first)
    others = [c for c in first.columns if c != x]
    if not others:
        chosen = _evenly(list(groups), max_panels)
        return [Panel(t, x, {}, _curve(t, x, {}, pd.concat([t.train, t.test]))) for t in chosen]
    rows = pd.concat([first.train, first.test], ignore_index=True)
    slices = sorted({tuple(float(v) for v in r) for r in rows[others].to_numpy()})
    out = []
    for values in _evenly(slices, max_panels):
        fixed = dict(zip(others, values))
        out.append(Panel(first, x, fixed, _curve(first, x, fixed, _slice(rows, fixed))))
    return out


def curve_points(all_panels: Sequence[Panel]) -> dict[Key, pd.DataFrame]:
    """Points each task group must be predicted at: the curves of its panels, in panel order."""
    out: dict[Key, list[pd.DataFrame]] = {}
    for panel in all_panels:
        out.setdefault(panel.task.key, []).append(panel.curve)
    return {key: pd.concat(frames, ignore_index=True) for key, frames in out.items()}


def _curves(all_panels: Sequence[Panel], outcome_of: Mapping[Key, Outcome]) -> list[np.ndarray]:
    """The slice of each panel's curve in the extra predictions of its group."""
    offsets: dict[Key, int] = {}
    out = []
    for panel in all_panels:
        start = offsets.get(panel.task.key, 0)
        extra = outcome_of[panel.task.key].split(panel.task)[2]
        out.append(extra[start:start + len(panel.curve)])
        offsets[panel.task.key] = start + len(panel.curve)
    return out


def _log_if_wide(values: np.ndarray) -> bool:
    values = values[np.isfinite(values)]
    return values.size > 0 and values.min() > 0 and values.max() / values.min() > 8


def plot_task(all_panels: Sequence[Panel], outcomes: Mapping[str, Mapping[Key, Outcome]],
              drawn: Sequence[Contender], path: Path) -> Path:
    """Draw the panels of one task with the curve of every ``drawn`` contender that ran; save a PNG.

    Parameters
    ----------
    all_panels : panels of one task (``panels``)
    outcomes : contender name -> task key -> Outcome, predicted at ``curve_points``
    drawn : the contenders to draw, in legend order (line style by kind)
    path : the PNG to write
    """
    n = len(all_panels)
    ncols = 2 if n == 4 else min(3, n)
    nrows = -(-n // ncols)
    legend_rows = -(-(len(drawn) + 2) // 4)
    legend_height = 0.25 * legend_rows + 0.2
    height = 3.2 * nrows + legend_height + 0.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(4.2 * ncols, 8.4), height), squeeze=False)
    colours = plt.get_cmap("tab10").colors
    curves = {c.name: _curves(all_panels, outcomes[c.name]) for c in drawn}
    for i, (panel, ax) in enumerate(zip(all_panels, axes.flat)):
        task = panel.task
        train, test = panel.rows(task.train), panel.rows(task.test)
        measured = np.concatenate([train[task.target].to_numpy(float), test[task.target].to_numpy(float)])
        ax.plot(train[panel.x], train[task.target], "o", color="black", ms=4, label="training runs")
        ax.plot(test[panel.x], test[task.target], "s", mfc="none", color="crimson", ms=5,
                label="held-out runs")
        for j, contender in enumerate(drawn):
            y = curves[contender.name][i]
            if outcomes[contender.name][task.key].ok and np.isfinite(y).any():
                style, width = LINES.get(contender.kind, ("-", 1.2))
                ax.plot(panel.curve[panel.x], y, style, color=colours[j % len(colours)], lw=width,
                        label=contender.name)
        if _log_if_wide(panel.curve[panel.x].to_numpy(float)):
            ax.set_xscale("log", base=2)
        if _log_if_wide(measured):
            ax.set_yscale("log")
            ax.set_ylim(measured.min() / 4, measured.max() * 4)
        else:
            span = measured.max() - measured.min() or abs(measured.max()) or 1.0
            ax.set_ylim(measured.min() - span, measured.max() + span)
        ax.set_title(panel.title, fontsize=8)
        ax.set_xlabel(panel.x, fontsize=8)
        ax.set_ylabel(f"{task.target} [{task.unit}]", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    handles, names = axes.flat[0].get_legend_handles_labels()
    for ax in list(axes.flat)[1:n]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in names:
                handles.append(h)
                names.append(label)
    fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), fontsize=8, frameon=False)
    fig.suptitle(all_panels[0].task.name, fontsize=10)
    fig.tight_layout(rect=(0, legend_height / height, 1, 1 - 0.3 / height))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
