"""The result of :func:`automodel.kernels.fit_many.fit_many`: one model per kernel, and its summary table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from automodel.model.core import Model
from automodel.names import printable
from automodel.options import DEFAULT_UNIT, values_in
from automodel.solve import metrics as metrics_mod
from automodel.space.config import SearchSpace
from automodel.terminal import WIDTH, shorten, wrap

__all__ = ["ManyResult", "SUMMARY_COLUMNS", "summary_row"]

SUMMARY_COLUMNS = ["kernel", "formula", "n_terms", "n_points", *metrics_mod.METRICS, "note"]


@dataclass
class ManyResult:
    """One model per kernel.

    Attributes
    ----------
    models : dict
        Kernel name -> :class:`automodel.Model` (predict, formula, export, save), for every kernel that
        could be modelled, in input order.
    summary : DataFrame
        One row per kernel in input order: ``kernel, formula, n_terms, n_points``, every metric of
        :mod:`automodel.solve.metrics` and a ``note`` (why a kernel was not modelled, else empty).
    space : SearchSpace
        The search space (with the overrides applied).
    notes : list of str
        How the kernels were grouped and fitted (batched, one by one, in parallel or not).
    interrupted : bool
        The work was stopped (Ctrl-C): the kernels whose tasks had finished have their models, the
        others the note :data:`automodel.kernels.fit_many.INTERRUPTED`.
    unit : str
        The unit of the values (of every formula, and of the metric ``s``).
    """

    models: dict[str, Model]
    summary: pd.DataFrame
    space: SearchSpace
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    unit: str = DEFAULT_UNIT

    def described(self, source: str) -> str:
        """``data: profile.jsonl: 2 kernels; values in s (else --unit ms, us or ns)``: the line above the
        kernels' lines, in the words of the first line of ``fit`` (the formulas' times had no unit)."""
        count = len(self.summary)
        return f"data: {printable(source)}: {count} kernel{'' if count == 1 else 's'}; {values_in(self.unit)}"

    def lines(self, width: int | None = WIDTH) -> list[str]:
        """One line per kernel: its formula and fit error (the ranking metric), or why it has no model;
        within ``width`` columns (None: no limit) a kernel whose line would be wider has its name on a
        line of its own (cut in the middle when longer than ``width``) and its formula wrapped below."""
        metric = self.space.fit.metric
        names = [printable(k) for k in self.summary["kernel"]]
        column = min(max(map(len, names), default=0), 48)
        out = []
        for name, row in zip(names, self.summary.itertuples(index=False)):
            said = (f"no model: {row.note}" if not row.formula else
                    f"{metric} {getattr(row, metric):<9.3g} T = {row.formula}")
            if width is None or len(name) <= column and column + 2 + len(said) <= width:
                out.append(f"{name:<{column}}  {said}")
            else:
                out += [shorten(name, width), *wrap(said, width, "    ", "        ")]
            if row.formula and row.note:  # a modelled kernel's note (zeros raised) on its own line
                out += wrap(f"({row.note})", width, "    ", "     ")
        return out

    def __repr__(self) -> str:
        n_models = len(self.models)
        return (f"<ManyResult: {n_models} of {len(self.summary)} kernels modelled"
                f"{', interrupted' if self.interrupted else ''}; .summary, .models, .lines()>")

    def _repr_html_(self) -> str:
        """The summary table (kernel, formula, the ranking metric, note) for a notebook."""
        metric = self.space.fit.metric
        columns = [c for c in ("kernel", "formula", "n_terms", "n_points", metric, "note") if c in self.summary]
        return (f"<p>{len(self.models)} of {len(self.summary)} kernels modelled</p>"
                + self.summary[columns].to_html(index=False, max_rows=60, float_format=lambda v: f"{v:.4g}"))


def summary_row(name: str, model: Model | None, n_points: int, note: str = "", text: str | None = None
                ) -> dict[str, Any]:
    """The row of kernel ``name`` in :attr:`ManyResult.summary` (its columns :data:`SUMMARY_COLUMNS`).

    Parameters
    ----------
    name : str
        The kernel.
    model : Model or None
        Its model; None: not modelled (empty formula, NaN metrics).
    n_points : int
        The points it was measured at.
    note : str
        Why it was not modelled, or a remark on its model.
    text : str, optional
        The formula's text when already made (else ``model.formula``).

    Returns
    -------
    dict
        Column name -> value.
    """
    if model is None:
        return {"kernel": name, "formula": "", "n_terms": 0, "n_points": n_points,
                **{m: np.nan for m in metrics_mod.METRICS}, "note": note}
    core = model.core
    return {"kernel": name, "formula": model.formula if text is None else text,
            "n_terms": len(core.terms), "n_points": n_points, **model.metrics,
            "note": note}
