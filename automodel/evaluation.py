"""How well a model predicts measured runs: relative errors, the rank order of configurations, band coverage.

The measures of the field: the relative error of the prediction against each configuration's median
time (median, mean and worst), the Spearman rank correlation between measured and predicted times of
the configurations (fim-bhimani-2019.txt, sec. 4, ranks configurations this way: a scheduler choosing
between configurations needs their order more than their times), and the share of runs inside the
model's prediction band of one run (and of configurations inside its band of the expected time).
``automodel evaluate MODEL RUNS`` prints them; the benchmarks score held-out runs with the same
functions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from automodel.data.cells import located, numeric, rows_of
from automodel.errors import DataError
from automodel.options import is_time_unit

__all__ = ["Evaluation", "evaluate", "evaluate_kernels", "rank_correlation"]


def rank_correlation(actual: Sequence[float], predicted: Sequence[float]) -> float:
    """Spearman's rank correlation of ``actual`` and ``predicted``; NaN when fewer than two values,
    when either is constant, or when a prediction is not finite.

    Examples
    --------
    >>> rank_correlation([1.0, 2.0, 3.0], [10.0, 30.0, 20.0])
    0.5
    """
    a, b = np.asarray(actual, float), np.asarray(predicted, float)
    if a.size < 2 or not np.all(np.isfinite(b)) or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(spearmanr(a, b).statistic)


@dataclass(frozen=True)
class Evaluation:
    """A model's scores on measured runs.

    Attributes
    ----------
    runs, configurations : int
        Runs read and distinct configurations among them.
    median_error, mean_error, worst_error : float
        Relative error of the prediction against each configuration's median time.
    rank_correlation : float
        Spearman correlation of the configurations' measured and predicted times (NaN: undefined).
    level : float
        Level of the bands.
    coverage : float
        Share of runs inside the band of one run (NaN without a band).
    coverage_mean : float
        Share of configurations whose median time is inside the band of the expected time.
    """

    runs: int
    configurations: int
    median_error: float
    mean_error: float
    worst_error: float
    rank_correlation: float
    level: float
    coverage: float
    coverage_mean: float

    def lines(self) -> list[str]:
        """The scores in a few lines of at most 80 columns."""
        rho = "undefined" if math.isnan(self.rank_correlation) else f"{self.rank_correlation:.3f}"
        out = [f"{self.runs} runs, {self.configurations} configurations",
               f"relative error: median {self.median_error:.1%}, mean {self.mean_error:.1%}, "
               f"worst {self.worst_error:.1%}",
               f"rank correlation of configurations (Spearman): {rho}"]
        if math.isnan(self.coverage):
            out.append("band: none (the model has no prediction band)")
        else:
            out.append(f"inside the {self.level:.0%} bands: {self.coverage:.0%} of runs (one run), "
                       f"{self.coverage_mean:.0%} of configurations (mean)")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The scores as a JSON-ready dictionary (NaN as None)."""
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def evaluate(model: Any, runs: pd.DataFrame, level: float = 0.9, source: str = "<DataFrame>",
             counts: bool | None = None) -> Evaluation:
    """Score ``model`` (:class:`automodel.Model`) on ``runs`` (its own column names, one row per run;
    ``source`` names a file the rows come from, line 2 onwards, for the errors).

    The measured values are read as the fit that made the model read them: times are positive (the
    rule of ``automodel fit``, :data:`automodel.data.cells.RULES`; a relative error against 0 means
    nothing), counts (``counts``: a model of ``automodel kernels``, or one whose unit is no unit of
    time, as ``fit`` reads it) may be 0. ``counts=None``: decided by the model's unit.

    Raises
    ------
    DataError
        A missing column, no runs, or a time that is not a positive number (naming the row).
    """
    if counts is None:
        counts = not is_time_unit(model.unit)
    return _combine([_scores(model, runs, level, source, counts)], level)


def evaluate_kernels(models: dict[str, Any], runs: pd.DataFrame, level: float = 0.9,
                     source: str = "<DataFrame>") -> tuple[dict[str, Evaluation], Evaluation]:
    """Score each kernel's rows (the ``kernel`` column of ``runs``) with that kernel's model, as
    ``automodel predict`` predicts them; returns the scores by kernel and over every row.

    Raises
    ------
    DataError
        No ``kernel`` column, or a kernel of the rows without a model in ``models``.
    """
    if "kernel" not in runs.columns:
        raise DataError(f"{source}: no column 'kernel' to tell which of the {len(models)} models scores "
                        "each row; give one with --kernel NAME")
    _check_kernel_cells(runs, source)
    parts = {}
    for name, rows in runs.groupby("kernel", sort=False):
        if name not in models:
            raise DataError(f"{source}, column 'kernel': no model for kernel {str(name)!r}")
        parts[name] = _scores(models[name], rows, level, source, counts=True)  # kernels reads counters
    return {k: _combine([v], level) for k, v in parts.items()}, _combine(list(parts.values()), level)


def _check_kernel_cells(runs: pd.DataFrame, source: str) -> None:
    """Refuse a row whose ``kernel`` cell is empty: groupby left it out, so a run went unscored without a
    word."""
    empty = runs["kernel"].isna().to_numpy()
    if empty.any():
        i = int(np.argmax(empty))
        lines = _lines(runs)
        raise DataError(f"{located(source, i, 'kernel', lines)}: expected the name of a kernel of the models file, "
                        "got an empty cell")


def _lines(runs: pd.DataFrame) -> int | np.ndarray:
    """Where the rows of ``runs`` are in their file (:func:`~automodel.data.cells.rows_of`), also when
    ``runs`` are one kernel's rows of it (their index: their positions in the file's rows)."""
    rows = rows_of(runs)
    if isinstance(rows, np.ndarray) or not pd.api.types.is_integer_dtype(runs.index):
        return rows
    return runs.index.to_numpy() + rows


def _scores(model: Any, runs: pd.DataFrame, level: float, source: str, counts: bool) -> dict[str, np.ndarray]:
    """The per-configuration and per-run arrays :func:`_combine` scores: ``actual``, ``predicted``,
    ``inside`` (each run in the band of one run), ``inside_mean`` (each configuration in the band of
    the expected time; empty without a band). The values are positive times (the rule of ``fit``), or
    with ``counts`` values of 0 or more."""
    time_col = model.roles.get("time", "time")
    if time_col not in runs.columns:
        raise DataError(f"{source}, column '{time_col}': missing; expected the measured times")
    if not len(runs):
        raise DataError(f"{source}: no runs to evaluate the model on")
    lines = _lines(runs)
    y = numeric(runs, time_col, "value" if counts else "time", source, lines)  # a count may be 0, a time not
    if (y < 0).any():
        i = int(np.argmax(y < 0))
        raise DataError(f"{located(source, i, time_col, lines)}: expected a time or count of 0 or more, got {y[i]:g}")
    pred = np.asarray(model.predict(runs, source=source), float)
    keys = [model.roles.get(q, q) for q in model.params if model.roles.get(q, q) in runs.columns]
    frame = runs[keys].assign(_time=y, _pred=pred)
    configs = frame.groupby(keys, sort=False).agg(_time=("_time", "median"), _pred=("_pred", "first")) \
        if keys else frame[["_time", "_pred"]].median().to_frame().T
    actual, predicted = configs["_time"].to_numpy(float), configs["_pred"].to_numpy(float)
    inside = inside_mean = np.array([], bool)
    band = model.predict_interval(runs, level, source=source)
    if band is not None:
        inside = (band[0] <= y) & (y <= band[1])
        config_rows = configs.reset_index()[keys] if keys else runs.iloc[:1]
        lo, hi = model.predict_interval(config_rows, level, kind="mean", source=source)
        inside_mean = (lo <= actual) & (actual <= hi)
    positive = y[y > 0]  # a zero (a counter's) is compared as the fit reads it: half the smallest value
    floor = np.full(len(actual), positive.min() / 2 if positive.size else 0.0)
    return {"runs": np.array([len(runs)]), "actual": actual, "predicted": predicted, "inside": inside,
            "inside_mean": inside_mean, "floor": floor}


def _combine(parts: list[dict[str, np.ndarray]], level: float) -> Evaluation:
    """One :class:`Evaluation` of the arrays of :func:`_scores` of one or several models."""
    actual, predicted, floor = (np.concatenate([q[k] for q in parts]) for k in ("actual", "predicted", "floor"))
    with np.errstate(all="ignore"):
        errors = np.abs(predicted - actual) / np.where(actual > 0, actual, floor)
    errors = np.where((actual == 0) & (predicted == 0), 0.0, errors)  # T = 0 of a counter of zeros
    errors = np.where(np.isfinite(errors), errors, np.inf)
    banded = all(len(q["inside"]) for q in parts)
    coverage = float(np.mean(np.concatenate([q["inside"] for q in parts]))) if banded else math.nan
    coverage_mean = float(np.mean(np.concatenate([q["inside_mean"] for q in parts]))) if banded else math.nan
    return Evaluation(int(sum(q["runs"][0] for q in parts)), len(actual), float(np.median(errors)),
                      float(np.mean(errors)), float(np.max(errors)), rank_correlation(actual, predicted), level,
                      coverage, coverage_mean)
