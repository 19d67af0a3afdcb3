"""The report of a whole profile: every kernel's model in a call tree, each plot drawn on demand.

:func:`profile_page` renders the result of :func:`automodel.fit_many` (``automodel kernels PROFILE
--report profiles.html``) as Extra-P's GUI lays a profile out: a call tree of kernels (call paths split
at ``->``; one tree per metric), each with its formula, its growth order in each parameter, its error,
the width of its band and its predicted value at a target configuration, sortable by that prediction
("which kernel will dominate at p = 4096?") and by growth. A click on a kernel draws its plot.

The page holds the data, not pictures (:func:`profile_data`, one JSON element): each distinct term once,
each kernel's coefficients, its measured points (the median of the repetitions) and its band as ratios
to the prediction at :data:`BAND_SAMPLES` points per parameter, computed here by the model's own
:meth:`~automodel.model.interval.Interval.bounds`; ``static/profile.js`` evaluates the model between them
and draws the SVG when asked. So 10^4 kernels make a page of a few megabytes that opens at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from automodel.output.plot import BAND_LEVEL
from automodel.output.report.page import document, json_script
from automodel.output.report.terms import TermTable, growth

__all__ = ["profile_page", "profile_data", "default_target", "split_kernel", "BAND_SAMPLES", "REACH"]

#: points per parameter where the band is computed (the page interpolates between them in log x)
BAND_SAMPLES = 9
#: a kernel's plot goes from its smallest measured value to this many times its largest (or the target)
REACH = 4.0
#: parameters whose default target is their largest measured value, not REACH times it (load fractions)
FRACTIONS = ("cpu", "bw")
_METRIC = re.compile(r"^(.*) \[([^\[\]]*)\]$", re.S)


def split_kernel(name: str) -> tuple[str, str]:
    """A kernel's call path and metric from its label (``"main->solve [time]"``); no metric: ``""``.

    Examples
    --------
    >>> split_kernel("main->solve [time]"), split_kernel("loop 3")
    (('main->solve', 'time'), ('loop 3', ''))
    """
    found = _METRIC.match(name)
    return (found.group(1), found.group(2)) if found else (name, "")


def default_target(models: Sequence[Any]) -> dict[str, float]:
    """The configuration the kernels are compared at by default: each parameter at :data:`REACH` times
    its largest measured value over all kernels (cpu and bw at their largest, a load fraction)."""
    out: dict[str, float] = {}
    for model in models:
        for q, (_, hi) in model.ranges.items():
            out[q] = max(out.get(q, hi), hi)
    return {q: v if q in FRACTIONS else REACH * v for q, v in out.items()}


def _round(values: Any, digits: int = 4) -> list:
    """Numbers with ``digits`` significant digits (None where not finite): small JSON."""
    return [float(f"{v:.{digits}g}") if np.isfinite(v) else None for v in np.asarray(values, float).ravel()]


def _sample_frame(params: Sequence[str], ranges: Mapping[str, Sequence[float]], at: Mapping[str, float]
                  ) -> pd.DataFrame:
    """Where a kernel's band is computed: per parameter ``q``, :data:`BAND_SAMPLES` values from its
    smallest measured to ``max(REACH * largest, target)`` (geometric), the others at their largest
    measured; then the target itself, last."""
    blocks = []
    for q in params:
        lo, hi = ranges[q]
        grid = np.geomspace(lo, max(REACH * hi, at.get(q, hi)), BAND_SAMPLES) if lo > 0 else np.linspace(
            lo, max(REACH * hi, at.get(q, hi)), BAND_SAMPLES)
        blocks.append(pd.DataFrame({r: grid if r == q else np.full(BAND_SAMPLES, ranges[r][1]) for r in params}))
    blocks.append(pd.DataFrame({q: [at.get(q, ranges[q][1])] for q in params}))
    return pd.concat(blocks, ignore_index=True)


def _bands(predicted: list[tuple[dict, Any, pd.DataFrame, np.ndarray]]) -> None:
    """Put each kernel's :data:`BAND_LEVEL` band into its record: the band's ratios to the prediction at
    the sample rows (``lo``, ``hi``) and its width at the target (the last row) as the factor ``k`` of
    "times or divided by k", ``sqrt(upper / lower)`` (``band``; 1.05 is about +-5 %).

    ``predicted`` holds ``(record, model, rows, prediction)``. The models' own bands
    (:meth:`~automodel.model.interval.Interval.spreads`) are evaluated together
    (:func:`~automodel.model.interval.union_bounds`), so the Student-t quantiles of all kernels are solved at once.
    """
    from automodel.model.interval import union_bounds

    banded = [(i, m.interval.spreads(rows, m.core, yhat)) for i, (_, m, rows, yhat) in enumerate(predicted)
              if m.interval is not None]
    ends: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if banded:
        sizes = [len(predicted[i][3]) for i, _ in banded]
        sets = [(np.concatenate([sp[k][0] for _, sp in banded]), np.concatenate([sp[k][1] for _, sp in banded]))
                for k in range(min(len(sp) for _, sp in banded))]
        lo, hi = union_bounds(np.concatenate([predicted[i][3] for i, _ in banded]), sets, BAND_LEVEL)
        for (i, _), part_lo, part_hi in zip(banded, np.split(lo, np.cumsum(sizes)[:-1]),
                                            np.split(hi, np.cumsum(sizes)[:-1])):
            ends[i] = (part_lo, part_hi)
    for i, (record, model, rows, yhat) in enumerate(predicted):
        band = ends.get(i) or model.predict_interval(rows, BAND_LEVEL) or (np.full(len(yhat), np.nan),) * 2
        lo, hi = (np.asarray(b, float) for b in band)
        with np.errstate(all="ignore"):
            record.update(band=np.sqrt(hi[-1] / lo[-1]), lo=_round(lo[:-1] / yhat[:-1], 3),
                          hi=_round(hi[:-1] / yhat[:-1], 3))


def _measured(data: pd.DataFrame | None, kernel: str, time: str, columns: Sequence[str]
              ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Kernel name -> (points (m, P), median value at each) of the measurements in ``data``."""
    if data is None or not all(c in data for c in (kernel, time, *columns)):
        return {}
    medians = data.groupby([kernel, *columns], sort=True)[time].median().reset_index()
    codes, names = pd.factorize(medians[kernel])
    order = np.argsort(codes, kind="stable")
    cuts = np.flatnonzero(np.diff(codes[order])) + 1
    points, values = medians[list(columns)].to_numpy(float)[order], medians[time].to_numpy(float)[order]
    return {str(names[codes[rows[0]]]): (points[rows], values[rows]) for rows in np.split(order, cuts)}


def _paths(data: pd.DataFrame | None, kernel: str) -> dict[str, tuple[str, str]]:
    """Kernel name -> (call path, metric) from the tidy table's columns, when it has them."""
    if data is None or not {"callpath", "metric", kernel} <= set(data.columns):
        return {}
    first = data.drop_duplicates(kernel)
    return {str(k): (str(c), str(m)) for k, c, m in zip(first[kernel], first["callpath"], first["metric"])}


def _kernel_record(name: str, row: Any, model: Any, table: TermTable, params: Sequence[str],
                   at: Mapping[str, float], frames: dict, points: dict, metric: str
                   ) -> tuple[dict, pd.DataFrame | None, np.ndarray | None]:
    """One kernel's data for the page (see :func:`profile_data`) but its band, the rows where the band is
    wanted and the prediction there (None without a model)."""
    record: dict[str, Any] = {"formula": row.formula, "note": row.note, "error": getattr(row, metric)}
    if model is None:
        return record, None, None
    core, ranges = model.core, {q: model.ranges.get(q, [1.0, 1.0]) for q in params}
    key = tuple((q, *ranges[q]) for q in params)
    if key not in frames:
        frames[key] = _sample_frame(params, ranges, at)
    with np.errstate(all="ignore"):
        yhat = np.asarray(core.predict(frames[key]), float)
    record.update(at=yhat[-1], ranges=[list(ranges[q]) for q in params])
    if hasattr(core, "terms"):
        record["model"] = table.encode(core.terms, core.coefficients)
        record["growth"] = [list(growth(core.terms, core.coefficients, q)) for q in params]
    else:  # a template's core: the page draws its samples
        record["pred"] = _round(yhat[:-1])
    if name in points:
        record["x"], record["y"] = _round(points[name][0].T), _round(points[name][1])
    return record, frames[key], yhat


def profile_data(result: Any, data: pd.DataFrame | None = None, at: Mapping[str, float] | None = None,
                 kernel: str = "kernel", time: str = "time") -> dict:
    """What the page of a profile holds: the parameters (the user's names), the target, the term table
    (:class:`~automodel.output.report.terms.TermTable`) and one record per kernel in the summary's order: call
    path, metric, formula, note, error (the ranking metric), the prediction and the band's width at the
    target (a factor, :func:`_bands`), growth per parameter, the model's terms and coefficients, the
    band's ratios to the prediction at the sample points and the measured points.

    ``result`` is a :class:`automodel.kernels.fit_many.ManyResult`; ``data`` the profile's table (for the
    measured points and call paths), ``kernel`` and ``time`` its columns; ``at``: canonical parameter
    name -> value (default :func:`default_target`).
    """
    models = result.models
    first = next(iter(models.values()), None)
    params = list(first.params) if first is not None else []
    names = {q: first.roles.get(q, q) for q in params} if first is not None else {}
    target = {**default_target(list(models.values())), **(at or {})}
    table, frames = TermTable(params), {}
    metric = result.space.fit.metric
    points = _measured(data, kernel, time, [names[q] for q in params])
    paths = _paths(data, kernel)
    records, predicted = [], []
    for row in result.summary.itertuples(index=False):
        name = str(row.kernel)
        record, rows, yhat = _kernel_record(name, row, models.get(name), table, params, target, frames, points,
                                            metric)
        record["path"], record["metric"] = paths.get(name) or split_kernel(name)
        if record["path"] + (f" [{record['metric']}]" if record["metric"] else "") != name:
            record["name"] = name  # a label the page cannot rebuild from the path and metric
        records.append(record)
        if rows is not None:
            predicted.append((record, models[name], rows, yhat))
    _bands(predicted)
    records = [{k: (_round([v])[0] if isinstance(v, float) else v) for k, v in r.items()} for r in records]
    return {"params": [names[q] for q in params], "at": [target.get(q) for q in params],
            "unit": first.unit if first is not None else "s", "metric": metric, "level": BAND_LEVEL,
            "reach": REACH, "samples": BAND_SAMPLES, "terms": table.terms, "kernels": records}


def profile_page(result: Any, data: pd.DataFrame | None = None, at: Mapping[str, float] | None = None,
                 kernel: str = "kernel", time: str = "time", source: str = "", title: str = "") -> str:
    """The HTML page of a profile's models (see the module docstring and :func:`profile_data`)."""
    payload = profile_data(result, data, at, kernel, time)
    where = ", ".join(f"{q} = {v:g}" for q, v in zip(payload["params"], payload["at"]))
    n_fitted = sum("at" in r for r in payload["kernels"])
    subtitle = (f"{source or 'profile'}: {len(payload['kernels'])} kernels, {n_fitted} modelled; parameters "
                f"{', '.join(payload['params']) or 'none'}; compared at {where}")
    notes = "".join(f"<li>{escape(n)}</li>" for n in result.notes)
    body = (f'<header class="top"><h1>{escape(title or "automodel profile report")}</h1>'
            f"<p>{escape(subtitle)}</p></header><main>"
            '<div class="controls" id="controls"></div>'
            '<div class="layout"><div><div class="scroll"><table id="kernels"><thead></thead><tbody></tbody>'
            '</table></div><button class="more" id="more" hidden></button></div>'
            '<div id="kplot"><p class="muted">Click a kernel to draw its model, its band and its measurements.'
            "</p></div></div>"
            + (f"<section><h2>Notes</h2><ul>{notes}</ul></section>" if notes else "") + "</main>")
    return document(title or f"automodel: {source or 'profile'}", body, scripts=("profile.js",),
                    data=json_script("profile-data", payload))
