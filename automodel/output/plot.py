"""Pictures of models: a model over its parameters, and the top candidates where they disagree.

:func:`plot_model` draws time against ``n`` (one curve per process count) and against ``p`` (one curve
per problem size): the measured runs, the fit solid over the training range and dashed beyond it,
its prediction band shaded, and on the ``p`` panel each curve's best process count with the range of
counts the model cannot tell from it. :func:`plot_candidates` draws the predictions of several
candidates (the chosen model first) from the data out to four times the largest trained value,
which is where candidates that fit the data equally well part ways. Both write PNG, SVG or PDF by the
file's suffix, through :func:`automodel.files.write_atomic`.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from automodel.data.cells import MAGNITUDE
from automodel.errors import AutomodelError, OutputError
from automodel.files import write_atomic
from automodel.options import TIME_UNITS
from automodel.model.best_p import search_p_max

__all__ = ["plot_model", "plot_candidates", "plot_campaign", "figure_format", "BAND_LEVEL", "MAX_CURVES", "FORMATS"]

#: level of the prediction band drawn around each curve
BAND_LEVEL = 0.9
#: most curves (levels of the other parameter, or candidates) drawn in one panel
MAX_CURVES = 6
#: how far beyond the largest trained value the curves go, per parameter
REACH = {"n": 4.0, "p": 4.0}
#: output formats, by file suffix
FORMATS = ("png", "svg", "pdf")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_format(path: str | Path) -> str:
    """The format of a figure file by its suffix (png without one); else an OutputError in one line."""
    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    if suffix not in FORMATS:
        raise OutputError(f"{path}: expected a file name ending in .{', .'.join(FORMATS)}, got .{suffix}")
    return suffix


def _literal(text: str) -> str:
    """``text`` from the data (a column name, a unit) drawn as it is: each ``$`` escaped, so matplotlib does
    not read it as mathtext (a column ``$\\foo$`` was a ParseFatalException traceback, ``a$b$`` drawn in
    italics).

    Examples
    --------
    >>> _literal("cost $ per $n$")
    'cost \\\\$ per \\\\$n\\\\$'
    """
    return text.replace("$", "\\$")


def _name(model: Any, q: str) -> str:
    """How parameter ``q`` of ``model`` is labelled: the user's column name, drawn literally."""
    return _literal(model.roles.get(q, q))


def _panels(model: Any) -> list[str]:
    return [x for x in ("n", "p") if x in model.params] or [model.params[0]]


def _levels(model: Any, other: str | None, runs: pd.DataFrame | None) -> tuple[list[float | None], str]:
    """The levels of ``other`` to draw a curve for (at most :data:`MAX_CURVES`, spread over the
    range), and a note when some were left out."""
    if other is None or other not in model.params:
        return [None], ""
    if runs is not None and other in runs:
        levels = sorted(float(v) for v in runs[other].unique())
    else:
        lo, hi = model.ranges.get(other, [1.0, 1.0])
        levels = sorted(set(np.geomspace(lo, hi, 4).round(6).tolist())) if hi > lo else [float(lo)]
    if len(levels) <= MAX_CURVES:
        return levels, ""
    keep = np.unique(np.linspace(0, len(levels) - 1, MAX_CURVES).round().astype(int))
    return [levels[i] for i in keep], f"{len(keep)} of {len(levels)} {other} levels"


def _fixed(model: Any, runs: pd.DataFrame | None) -> dict[str, float]:
    """Values of the parameters that no panel varies: cpu and bw at 1 (a dedicated machine) unless the
    runs say otherwise (their median), other parameters at the largest trained value."""
    out = {}
    for q in model.params:
        if q in ("n", "p"):
            continue
        if q in ("cpu", "bw"):
            out[q] = float(runs[q].median()) if runs is not None and q in runs else 1.0
        else:
            out[q] = float(model.ranges.get(q, [1.0, 1.0])[1])
    return out


def _grid(model: Any, x: str, runs: pd.DataFrame | None) -> tuple[np.ndarray, float, bool]:
    """Values of ``x`` to draw from the smallest measured to beyond the largest; the largest trained
    value; whether the axis is logarithmic. Process counts measured in whole numbers are drawn at whole
    numbers only: a model holds between them only where a process count exists (``over1(p)`` and
    ``ceiling(log2(p))`` take values at p = 1.5 or 5.7 that no run can have)."""
    lo, hi_train = model.ranges.get(x, [1.0, 1.0])
    hi = hi_train * REACH.get(x, 2.0)
    if runs is not None and x in runs:
        lo, hi = min(lo, float(runs[x].min())), max(hi, float(runs[x].max()))
    log = x == "p" or hi / max(lo, 1e-300) > 20
    grid = np.geomspace(max(lo, 1e-300), hi, 240) if log else np.linspace(lo, hi, 240)
    if x == "p" and lo >= 1 and float(lo).is_integer():
        grid = np.unique(np.round(grid))
    return grid, float(hi_train), log


def _frame(model: Any, fixed: dict[str, float], x: str, grid: np.ndarray, other: str | None,
           level: float | None) -> pd.DataFrame:
    cols = {q: np.full(len(grid), fixed.get(q, 1.0)) for q in model.params}
    cols[x] = grid
    if other is not None and level is not None:
        cols[other] = np.full(len(grid), level)
    return pd.DataFrame(cols)


def _finish(fig: Any, path: str | Path, fmt: str, close: bool = True) -> Path:
    """Write ``fig`` to ``path`` in ``fmt``; ``close``: then let pyplot forget it (the figure stays usable)."""
    plt = _pyplot()
    path = Path(path)
    try:
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, format=fmt))
    finally:
        if close:
            plt.close(fig)
    return path


def _drawable(values: Any) -> np.ndarray:
    """Predicted times as floats, NaN (not drawn) where one is not finite or beyond the magnitudes the
    engine fits (:data:`automodel.data.cells.MAGNITUDE`): matplotlib cannot place ticks on an axis up to
    1e308 (a model file's coefficient of 1e308 was a ValueError traceback)."""
    with np.errstate(all="ignore"):
        out = np.asarray(values, float).copy()
        out[~(np.isfinite(out) & (np.abs(out) <= MAGNITUDE[1]))] = np.nan
    return out


def _curve(ax: Any, grid: np.ndarray, pred: np.ndarray, hi_train: float, color: str, label: str | None,
           lw: float = 1.5) -> None:
    inside = grid <= hi_train * (1 + 1e-12)
    ax.plot(grid[inside], pred[inside], color=color, lw=lw, label=label)
    ax.plot(grid[~inside], pred[~inside], color=color, lw=lw, ls="--")


def _axes(ax: Any, model: Any, x: str, log_x: bool, times: list[np.ndarray], grid: np.ndarray) -> None:
    ax.set_xlabel(_name(model, x))
    if not any(np.isfinite(t).any() for t in times):  # nothing drawable: the axis spans the grid all the same
        ax.set_xlim(grid[0], grid[-1])
    unit = getattr(model, "unit", "s")
    ax.set_ylabel(f"time [{unit}]" if unit in TIME_UNITS else _literal(unit))
    if log_x:
        ax.set_xscale("log")
    values = np.concatenate([t[np.isfinite(t) & (t > 0)] for t in times] or [np.ones(1)])
    if len(values) and values.max() / values.min() > 10:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)


def plot_model(model: Any, path: str | Path | None = None, runs: pd.DataFrame | None = None,
               held_out: pd.DataFrame | None = None, title: str = "", level: float = BAND_LEVEL,
               best_p: bool = True, ax: Any = None) -> Any:
    """A picture of ``model``: time vs ``n`` per process count and time vs ``p`` per problem size.

    Parameters
    ----------
    model : Model
        A fitted model (:class:`automodel.Model`).
    path : path, optional
        Where to write; ``.png``, ``.svg`` or ``.pdf``. None: nothing written (a notebook shows the
        figure returned).
    runs, held_out : DataFrame, optional
        Measured runs in the canonical column names (``time``, ``n``, ``p``, ...): the training runs
        (dots) and runs held out of the fit (open triangles). Without runs the curves span the
        model's training ranges.
    level : float
        Level of the shaded prediction band (one run).
    best_p : bool
        Mark each curve's best process count on the ``p`` panel, with the counts it cannot tell apart.
    ax : matplotlib Axes or sequence of Axes, optional
        Draw into these (one per panel: ``n``, then ``p``; a single Axes gets the ``p`` panel, or the
        only one) instead of a new figure; the title is then the caller's to set.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn (of ``ax`` when given).

    Examples
    --------
    >>> fig = plot_model(result.best, runs=train)          # doctest: +SKIP
    >>> fig, ax = plt.subplots(); plot_model(model, ax=ax)  # doctest: +SKIP
    """
    fmt = figure_format(path) if path is not None else None
    plt = _pyplot()
    own = ax is None  # a figure of its own, titled here
    fig, axes, panels = _model_axes(plt, model, ax)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    everything = pd.concat([f for f in (runs, held_out) if f is not None]) if runs is not None or held_out is not None else None
    fixed = _fixed(model, everything)
    notes = []
    for ax, x in zip(axes, panels):
        other = ("p" if x == "n" else "n") if x in ("n", "p") else None
        levels, left_out = _levels(model, other, everything)
        grid, hi_train, log_x = _grid(model, x, everything)
        drawn = []
        for color, value in zip(colors * 3, levels):
            drawn.append(_model_curve(ax, model, x, other, value, grid, hi_train, fixed, color, level))
            _runs_at(ax, x, other, value, runs, held_out, color)
            if best_p and x == "p":
                _best_p_mark(ax, model, other, value, fixed, search_p_max(model, everything), level, color)
        _axes(ax, model, x, log_x, drawn, grid)
        _model_legend(plt, ax, model, x, runs, held_out, best_p, level, left_out)
        if left_out:
            notes.append(left_out + " shown")
    if fixed:
        notes.append("at " + ", ".join(f"{_name(model, q)} = {v:g}" for q, v in fixed.items()))
    if own:
        _model_title(fig, model, title, level, notes)
    if path is not None:
        _finish(fig, path, fmt, close=own)
    return fig


def _model_axes(plt: Any, model: Any, ax: Any) -> tuple[Any, list[Any], list[str]]:
    """The figure, axes and panels (the parameters on their x axes) of :func:`plot_model`.

    Parameters
    ----------
    plt : module
        ``matplotlib.pyplot``.
    model : Model
    ax : matplotlib Axes or sequence of Axes or None
        The caller's axes (as for :func:`plot_model`); None: a new figure, one Axes per panel.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : list of Axes
    panels : list of str

    Raises
    ------
    ValueError
        ``ax`` has neither one Axes nor one per panel.
    """
    panels = _panels(model)
    if ax is None:
        fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), squeeze=False)
        return fig, list(axes[0]), panels
    axes = list(np.atleast_1d(ax))
    panels = panels[-1:] if len(axes) == 1 else panels
    if len(axes) != len(panels):
        raise ValueError(f"ax: {len(axes)} axes for the {len(panels)} panels {', '.join(panels)}")
    return axes[0].figure, axes, panels


def _model_curve(ax: Any, model: Any, x: str, other: str | None, value: float | None, grid: np.ndarray,
                 hi_train: float, fixed: dict[str, float], color: str, level: float) -> np.ndarray:
    """Draw the prediction of ``model`` along ``grid`` of ``x`` at ``other = value`` (dashed beyond the
    training ranges) with its band, when it has one.

    Parameters
    ----------
    ax : matplotlib Axes
    model : Model
    x : str
        The parameter along the x axis.
    other, value : str or None, float or None
        The parameter whose level the curve is drawn at, and that level (None: no such parameter).
    grid : array
        The values of ``x``.
    hi_train : float
        The largest trained value of ``x`` (dashed beyond).
    fixed : dict
        The values of the other parameters.
    color : str
    level : float
        Level of the band.

    Returns
    -------
    array
        The predictions drawn.
    """
    label = f"{_name(model, other)} = {value:g}" if value is not None else None
    frame = _frame(model, fixed, x, grid, other, value)
    pred = _drawable(model.predict(frame, checked=False))
    band = [_drawable(b) for b in model.predict_interval(frame, level)] if model.interval is not None else None
    if band is not None:
        ax.fill_between(grid, band[0], band[1], color=color, alpha=0.12, lw=0)
    beyond = value is not None and value > model.ranges.get(other, [value, value])[1] * (1 + 1e-9)
    _curve(ax, grid, pred, -np.inf if beyond else hi_train, color, label)  # all dashed beyond
    return pred


def _runs_at(ax: Any, x: str, other: str | None, value: float | None, runs: pd.DataFrame | None,
             held_out: pd.DataFrame | None, color: str) -> None:
    """Draw the runs at ``other = value`` (all runs when ``value`` is None): training runs as dots, held
    out ones as open triangles, against ``x``."""
    for data, marker in ((runs, "o"), (held_out, "^")):
        if data is None:
            continue
        sel = data if value is None else data[np.isclose(data[other], value)]
        ax.scatter(sel[x], sel["time"], color=color, marker=marker, s=22 if marker == "o" else 30,
                   facecolors=color if marker == "o" else "none", zorder=3)


def _best_p_mark(ax: Any, model: Any, other: str | None, value: float | None, fixed: dict[str, float],
                 p_max: int | None, level: float, color: str) -> None:
    """Mark the best process count of the curve at ``other = value`` (a star) and the counts it cannot
    tell apart (a bar), searched up to ``p_max`` as the text of the fit and its report search it
    (:func:`automodel.model.best_p.search_p_max`); nothing when :meth:`~automodel.Model.best_p` finds none."""
    try:
        found = model.best_p(**({other: value} if value is not None else {}), **{
            q: v for q, v in fixed.items()}, p_max=p_max, level=level)
    except AutomodelError:
        return
    if np.isnan(_drawable([found.time])[0]):
        return
    ax.plot([found.p], [found.time], marker="*", ms=12, color=color, mec="black", mew=0.6, zorder=4)
    ax.plot([found.p_low, found.p_high], [found.time] * 2, color=color, lw=3, alpha=0.5,
            solid_capstyle="butt", zorder=4)


def _model_legend(plt: Any, ax: Any, model: Any, x: str, runs: pd.DataFrame | None, held_out: pd.DataFrame | None,
                  best_p: bool, level: float, left_out: str) -> None:
    """The legend of a panel of :func:`plot_model`: its curves, the kinds of runs drawn and the best-p
    mark, titled with the levels left out (if any)."""
    handles, labels = ax.get_legend_handles_labels()
    for marker, text, data in (("o", "measured", runs), ("^", "held out", held_out)):
        if data is not None:
            handles.append(plt.Line2D([], [], ls="", marker=marker, color="0.3",
                                      mfc="0.3" if marker == "o" else "none"))
            labels.append(text)
    if best_p and x == "p" and "p" in model.params:
        handles.append(plt.Line2D([], [], ls="", marker="*", ms=10, color="0.5", mec="black"))
        labels.append(f"best p (bar: within the {level:.0%} band)")
    ax.legend(handles, labels, fontsize=7, ncol=2, title=left_out or None, title_fontsize=7)


def _model_title(fig: Any, model: Any, title: str, level: float, notes: list[str]) -> None:
    """Title the figure of :func:`plot_model` (``title``, else the formula) with what the picture shows,
    and lay it out."""
    shaded = f"shaded: {level:.0%} band of one run; " if model.interval is not None else ""
    head = title or "\n".join(textwrap.wrap(f"T = {model.formula}", 110))
    fig.suptitle(f"{head}\n(dashed: beyond the training ranges; {shaded}"
                 f"{'; '.join(notes) or 'all levels shown'})", fontsize=9)
    fig.tight_layout()


def plot_candidates(models: Sequence[Any], path: str | Path, labels: Sequence[str] | None = None,
                    runs: pd.DataFrame | None = None, level: float = BAND_LEVEL, title: str = "") -> Path:
    """Save the predictions of ``models`` (the chosen one first, drawn with its band) against each of
    ``n`` and ``p`` at the largest trained value of the other, out to :data:`REACH` times the largest
    trained value; the region beyond the data is shaded, since that is where candidates disagree.

    ``labels`` default to each model's formula; at most :data:`MAX_CURVES` models are drawn.
    """
    if not models:
        raise OutputError(f"{path}: no model to plot")
    fmt = figure_format(path)
    plt = _pyplot()
    models = list(models)[:MAX_CURVES]
    labels = list(labels or [m.formula for m in models])[:len(models)]
    first = models[0]
    panels = _panels(first)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 5.2), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fixed = _fixed(first, runs)
    for ax, x in zip(axes[0], panels):
        other = ("p" if x == "n" else "n") if x in ("n", "p") and ("p" if x == "n" else "n") in first.params else None
        at = float(first.ranges.get(other, [1.0, 1.0])[1]) if other is not None else None  # as _grid
        grid, hi_train, log_x = _grid(first, x, None)
        frame = _frame(first, fixed, x, grid, other, at)
        drawn = []
        for i, (model, label, color) in enumerate(zip(models, labels, colors * 2)):
            pred = _drawable(model.predict(frame, checked=False))
            if i == 0 and model.interval is not None:
                lo, hi = (_drawable(b) for b in model.predict_interval(frame, level))
                ax.fill_between(grid, lo, hi, color=color, alpha=0.15, lw=0, label=f"{level:.0%} band")
            short = textwrap.shorten(label, 60, placeholder="...")
            _curve(ax, grid, pred, hi_train, color, f"{'chosen: ' if i == 0 else ''}{short}", 2.2 if i == 0 else 1.2)
            drawn.append(pred)
        if runs is not None and x in runs:
            sel = runs if other is None or other not in runs else runs[np.isclose(runs[other], at)]
            ax.scatter(sel[x], sel["time"], color="black", s=16, zorder=3, label="measured")
        ax.axvspan(hi_train, grid[-1], color="0.85", alpha=0.5, lw=0)
        _axes(ax, first, x, log_x, drawn, grid)
        where = f" at {_name(first, other)} = {at:g}" if other is not None else ""
        ax.set_title(f"against {_name(first, x)}{where} (grey: beyond the data)", fontsize=8)
        ax.legend(fontsize=6.5, loc="best")
    fig.suptitle(title or f"top {len(models)} candidates (solid: inside the data, dashed: beyond)", fontsize=9)
    fig.tight_layout()
    return _finish(fig, path, fmt)


def plot_campaign(history: pd.DataFrame, path: str | Path, truth: float | None = None, until: float | None = None,
                  title: str = "") -> Path:
    """Save the band at the target against the core-hours an adaptive campaign had spent at each step
    (``history``: the columns of :meth:`automodel.runner.adaptive.Step.record`): the prediction, its band
    shaded, the width aimed at (``until``, dotted about the last prediction) and the measured ``truth``
    when known."""
    fmt = figure_format(path)
    missing = [c for c in ("core_hours", "predicted", "lower", "upper") if c not in history]
    if missing or not len(history):
        raise OutputError(f"{path}: a campaign history with columns core_hours, predicted, lower, upper is needed"
                          f" (missing {', '.join(missing) or 'rows'})")
    plt = _pyplot()
    x = history["core_hours"].to_numpy(float)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    y = history["predicted"].to_numpy(float)
    spread = np.vstack([y - history["lower"].to_numpy(float), history["upper"].to_numpy(float) - y])
    ax.errorbar(x, y, yerr=spread, fmt="o-", capsize=4, label="predicted at the target, 90% band")
    for i, step in enumerate(history.get("step", range(len(x)))):
        ax.annotate(f"{step}", (x[i], y[i]), textcoords="offset points", xytext=(5, 5), fontsize=7)
    if until is not None:
        for j, edge in enumerate((y[-1] / (1 + until), y[-1] * (1 + until))):
            ax.axhline(edge, color="0.4", ls=":", lw=1, label=f"+-{until:.0%} of the last prediction" if j else None)
    if truth is not None:
        ax.axhline(truth, color="black", lw=1, label="measured at the target")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("core-hours spent")
    ax.set_ylabel("time at the target (s)")
    ax.set_title(title or "adaptive campaign: the band at the target", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return _finish(fig, path, fmt)
