"""The report of one fit: the chosen formula typeset, why it was chosen, the leaderboard, the plots.

:func:`fit_page` renders a :class:`automodel.FitResult` (``FitResult.report`` writes it) and
:func:`model_page` a saved model with, optionally, its runs (``automodel report MODEL.json [RUNS]``).
Both share the sections of a model (:func:`model_sections`): formula, band, best process count and
the fit and extrapolation plot (:func:`automodel.output.plot.plot_model`, inline SVG).
"""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pandas as pd

from automodel.model.best_p import best_p_at, search_p_max
from automodel.output.plot import BAND_LEVEL, plot_candidates, plot_model
from automodel.text.printing import to_latex
from automodel.output.report.figures import inline_svg
from automodel.output.report.mathml import formula_mathml
from automodel.output.report.page import document, number, section, table

__all__ = ["fit_page", "model_page", "model_sections", "best_p_at"]

#: candidates drawn together in the candidates plot (the chosen one first, then its equivalents)
CANDIDATES_DRAWN = 5


def _names(model: Any) -> dict[str, str]:
    """Canonical parameter name -> the user's column name."""
    return {q: model.roles.get(q, q) for q in model.params}


def _card(value: str, label: str) -> str:
    return f'<div class="card"><b>{escape(value)}</b><span>{escape(label)}</span></div>'


def _formula_section(model: Any) -> str:
    """The formula typeset (MathML), as text and as LaTeX, and the model's scores as cards."""
    names = _names(model)
    ranges = ", ".join(f"{names[q]} {lo:g} to {hi:g}" for q, (lo, hi) in model.ranges.items() if q in names)
    metrics = model.metrics
    cards = [_card(str(model.core.n_coefficients), "coefficients"), _card(model.name, "kind")]
    cards += [_card(number(metrics[m]), label) for m, label in (
        ("s", "standard error s"), ("rel_s", "relative standard error"), ("holdout", "held-out error"))
        if m in metrics and np.isfinite(metrics[m])]
    subset = f'; fitted on the rows where <code>{escape(model.where)}</code>' if model.where else ''  # fit --where
    body = (f'<div class="formula">{formula_mathml(model.expr, names)}</div>'
            f'<p>text: <code>T = {escape(model.formula)}</code>; time in {escape(model.unit)}; trained on '
            f'{escape(ranges or "no ranges")}{subset}</p>'
            f'<details><summary>LaTeX</summary><pre class="mono">T = {escape(to_latex(model.expr))}</pre></details>'
            f'<div class="cards">{"".join(cards)}</div>')
    return section("Chosen model", body, "model")


def _best_p_section(model: Any, p_max: int | None = None) -> str:
    """The best process count (searched up to ``p_max``, default the model's) and the range the model
    cannot tell from it, with its warnings."""
    if "p" not in model.params:
        return ""
    at, found = best_p_at(model, p_max)
    names = _names(model)
    where = ", ".join(f"{names.get(q, q)} = {v:g}" for q, v in at.items())
    head = f"at {where}: " if where else ""
    if isinstance(found, str):
        return section("Best process count", f"<p>{escape(head)}none: {escape(found)}</p>", "best-p")
    lines = found.lines(names["p"])
    cards = _card(str(found.p), f"best {names['p']}") + _card(
        f"{found.p_low} to {found.p_high}", f"{found.level:.0%} range") + _card(
        f"{found.time:.4g} {found.unit}", "predicted time")
    warnings = "".join(f'<li class="warn">{escape(w)}</li>' for w in found.warnings)
    body = (f"<p>{escape(head + lines[0])}; {escape(lines[1])}</p><div class=\"cards\">{cards}</div>"
            + (f"<ul>{warnings}</ul>" if warnings else ""))
    return section("Best process count", body, "best-p")


def _plot_section(model: Any, runs: pd.DataFrame | None, held_out: pd.DataFrame | None) -> str:
    """The fit over each parameter with its band, solid on the data and dashed beyond (inline SVG)."""
    svg = inline_svg(lambda path: plot_model(model, path, runs=runs, held_out=held_out))
    legend = (f"dots: the measured runs; {'triangles: runs held out of the fit; ' if held_out is not None else ''}"
              f"shaded: the {BAND_LEVEL:.0%} band of one run; dashed: beyond the measured ranges"
              + ("; stars: the best process count, its bar the counts within the band" if "p" in model.params else ""))
    band = ""
    if model.interval is not None:
        band = ("<details><summary>how the band is made</summary><pre class=\"mono\">"
                + escape("\n".join(model.interval.describe(model.core))) + "</pre></details>")
    return section("Fit and extrapolation", f'<div class="figure">{svg}</div><p class="legend">{escape(legend)}'
                                            f"</p>{band}", "plot")


def model_sections(model: Any, runs: pd.DataFrame | None = None, held_out: pd.DataFrame | None = None) -> str:
    """The sections every report of a model has: formula, best process count, plot."""
    return (_formula_section(model) + _best_p_section(model, search_p_max(model, runs, held_out))
            + _plot_section(model, runs, held_out))


def _why_section(result: Any) -> str:
    """The chooser's reason, the stages of the search and the notes of the fit."""
    parts = []
    if result.selection is not None:
        sel = result.selection
        parts.append(f"<p>Rank {sel.index + 1}: {escape(sel.reason)}</p>")
        parts.append(f'<p class="muted">{int(np.sum(sel.equivalent))} candidate(s) the data cannot tell from '
                     f"rank 1 (marked <span class=\"badge equivalent\">equivalent</span> in the leaderboard).</p>")
    stages = "".join(f"<li><code>{escape(r.line())}</code></li>" for r in result.reports)
    if stages:
        parts.append(f"<h3>Stages of the search</h3><ul>{stages}</ul>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in result.notes)
    if notes:
        parts.append(f"<h3>Notes</h3><ul>{notes}</ul>")
    return section("Why this model", "".join(parts), "why")


def _leaderboard_section(result: Any) -> str:
    """Every ranked candidate, sortable, the chosen and equivalent ones marked; the templates that
    gave no model, with their reasons."""
    board = result.leaderboard
    metric = result.space.fit.metric
    ranked = board[board["rank"].notna()]
    columns = [c for c in board.columns if c not in ("note",)] + ["note"]
    rows = [[(None if pd.isna(v) else v) if not isinstance(v, str) else v for v in row]
            for row in ranked[columns].itertuples(index=False)]
    rows = [[int(r[0]), *r[1:]] for r in rows]
    body = (f"<p>Ranked by <b>{escape(metric)}</b>; click a heading to sort. "
            '<span class="badge chosen">chosen</span> the model; <span class="badge equivalent">equivalent'
            "</span> candidates the data cannot tell apart from rank 1.</p>"
            f'<div class="scroll">{table(columns, rows, list(ranked["choice"]), table_id="leaderboard")}</div>')
    unfitted = board[board["rank"].isna()]
    if len(unfitted):
        reasons = [[k.removeprefix("template:"), n] for k, n in zip(unfitted["kind"], unfitted["note"])]
        body += "<h3>Templates without a model</h3>" + table(["template", "reason"], reasons, sortable=False)
    return section("Leaderboard", body, "leaderboard")


def _frame_table(frame: pd.DataFrame, table_id: str, classes: list[str] | None = None) -> str:
    rows = [[None if (not isinstance(v, str) and pd.isna(v)) else v for v in row]
            for row in frame.itertuples(index=False)]
    return f'<div class="scroll">{table([str(c) for c in frame.columns], rows, classes, table_id=table_id)}</div>'


def _anomalies_section(result: Any) -> str:
    if not len(result.anomalies):
        return section("Anomalies", "<p>None: every run is explained by a leading model.</p>", "anomalies")
    text = ("Runs no leading model explains: residual relative to the chosen model's prediction; severity, "
            "a robust z-score.")
    return section("Anomalies", f"<p>{escape(text)}</p>" + _frame_table(result.anomalies, "anomalies-table"),
                   "anomalies")


def _held_out_section(model: Any, held_out: pd.DataFrame | None) -> str:
    """The held-out runs: measured, predicted, the band of the expected time and the relative error."""
    if held_out is None or not len(held_out):
        return ""
    pred = model.predict(held_out)
    y = held_out["time"].to_numpy(float)
    band = model.predict_interval(held_out, BAND_LEVEL, kind="mean")
    lower, upper = band if band is not None else (np.full(len(y), np.nan),) * 2
    frame = held_out[list(model.params)].rename(columns=_names(model)).assign(
        measured=y, predicted=pred, lower=lower, upper=upper, rel_error=(pred - y) / y)
    err = np.abs(pred - y) / y
    head = (f"median relative error {np.median(err):.1%}, worst {np.max(err):.1%}; "
            f"{np.mean((lower <= y) & (y <= upper)):.0%} inside the {BAND_LEVEL:.0%} band of the expected time")
    return section("Held-out runs", f"<p>{escape(head)}</p>" + _frame_table(frame, "held-out"), "held-out")


def data_section(runs: pd.DataFrame, names: dict[str, str], flagged: Any = ()) -> str:
    """The runs, with the user's column names; the rows in ``flagged`` (positions) marked."""
    shown = runs.rename(columns=names)
    marks = set(int(i) for i in flagged)
    classes = ["anomaly" if i in marks else "" for i in range(len(shown))]
    return section(f"Data ({len(shown)} runs)", _frame_table(shown, "data", classes), "data")


def _header(title: str, subtitle: str) -> str:
    return f'<header class="top"><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>'


def fit_page(result: Any, held_out: pd.DataFrame | None = None, title: str = "") -> str:
    """The HTML page of a :class:`automodel.FitResult` (``held_out``: runs kept out of the fit, in the
    canonical column names, drawn and tabled against the predictions)."""
    ds, best = result.dataset, result.best
    names = {**dict(ds.roles), **_names(best)}
    params = ", ".join(names.get(q, q) for q in ds.params) or "none"
    subtitle = (f"{ds.source}: {len(ds.runs)} runs, {ds.n_points} configurations; parameters {params}; "
                f"time in {best.unit}; chosen T = {best.formula}")
    flagged = result.anomalies.index if len(result.anomalies) else ()
    runs = ds.runs[[c for c in ds.runs.columns if c in (*ds.params, "time", *ds.covariates)]]
    body = (_header(title or f"automodel report: {ds.source}", subtitle) + "<main>"
            + model_sections(best, ds.frame, held_out) + _why_section(result) + _leaderboard_section(result)
            + _candidates_section(result) + _held_out_section(best, held_out) + _anomalies_section(result)
            + data_section(runs, names, flagged) + "</main>")
    return document(title or f"automodel: {ds.source}", body)


def _candidates_section(result: Any) -> str:
    """The chosen model and the candidates equivalent to it, drawn beyond the data, where they part."""
    sel = result.selection
    if sel is None:
        return ""
    others = [i for i in np.flatnonzero(sel.equivalent) if i != sel.index][:CANDIDATES_DRAWN - 1]
    if not others:
        return ""
    models = [result.best, *(result.models[i] for i in others)]
    svg = inline_svg(lambda path: plot_candidates(models, path, runs=result.dataset.frame))
    return section("The chosen model and its equivalent candidates beyond the data",
                   f'<div class="figure">{svg}</div>', "candidates")


def model_page(model: Any, runs: pd.DataFrame | None = None, source: str = "", runs_source: str = "",
               title: str = "") -> str:
    """The HTML page of a saved model (``source``: its file), with its runs (canonical column names) when
    given: formula, best p, plot, band and data; a saved model has no leaderboard (the page says so)."""
    names = _names(model)
    subtitle = f"{source or 'a saved model'}; T = {model.formula}" + (f"; runs from {runs_source}" if runs_source
                                                                         else "")
    note = section("Leaderboard", "<p>A saved model carries no leaderboard: <code>automodel report RUNS</code> "
                                  "searches again and shows every candidate.</p>", "leaderboard")
    data = data_section(runs, {**names, "time": model.roles.get("time", "time")}) if runs is not None else ""
    body = (_header(title or f"automodel report: {source or 'model'}", subtitle) + "<main>"
            + model_sections(model, runs) + note + data + "</main>")
    return document(title or f"automodel: {source or 'model'}", body)
