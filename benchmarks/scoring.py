"""Accuracy scores of predictions on held-out rows: relative errors, best p, rank order.

All functions are pure.  Repetitions of one configuration are reduced first: the
actual value of a configuration is the median of its repetitions, the predicted value
the median of the predictions for its rows (identical for a deterministic model).
The relative error of a configuration is ``|pred - actual| / actual`` (shared datasets
README, "Canonical extrapolation tasks").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from automodel.evaluation import rank_correlation

PRED = "pred"


@dataclass(frozen=True)
class ErrorSummary:
    """Median, mean and worst relative error over ``n_points`` values."""

    median: float
    mean: float
    worst: float
    n_points: int


@dataclass(frozen=True)
class BestP:
    """Best ``p`` of one slice (fixed other parameters), actual and predicted."""

    fixed: tuple
    actual_best_p: float
    predicted_best_p: float
    spearman: float
    n_p_values: int

    @property
    def hit(self) -> bool:
        """True when the predicted best p equals the actual one."""
        return bool(self.actual_best_p == self.predicted_best_p)


def reduce_repetitions(rows: pd.DataFrame, predictions: Sequence[float], columns: Sequence[str],
                       target: str = "time") -> pd.DataFrame:
    """Collapse repetitions to one row per configuration.

    Parameters
    ----------
    rows : DataFrame
        Measured rows with parameter ``columns`` and ``target``.
    predictions : sequence of float
        One prediction per row of ``rows``, in the same order.
    columns : sequence of str
        Parameter columns defining a configuration.
    target : str
        Measured column.

    Returns
    -------
    DataFrame
        ``columns`` + ``target`` (median over repetitions) + ``pred`` (median), sorted
        by ``columns``.

    Examples
    --------
    >>> rows = pd.DataFrame({"p": [1, 1, 2], "time": [1.0, 3.0, 4.0]})
    >>> reduce_repetitions(rows, [2.0, 2.0, 5.0], ["p"])["time"].tolist()
    [2.0, 4.0]
    """
    predictions = np.asarray(predictions, dtype=float)
    if predictions.shape != (len(rows),):
        raise ValueError(f"predictions has shape {predictions.shape}, expected ({len(rows)},): "
                         "one prediction per row")
    frame = rows[list(columns)].copy()
    frame[target] = rows[target].to_numpy(dtype=float)
    frame[PRED] = predictions
    return frame.groupby(list(columns), sort=True, as_index=False)[[target, PRED]].median()


def relative_errors(rows: pd.DataFrame, predictions: Sequence[float], columns: Sequence[str],
                    target: str = "time") -> np.ndarray:
    """Relative error per configuration, ``|pred - actual| / actual``.

    Examples
    --------
    >>> rows = pd.DataFrame({"p": [1, 1, 2], "time": [1.0, 3.0, 4.0]})
    >>> relative_errors(rows, [2.0, 2.0, 5.0], ["p"]).tolist()
    [0.0, 0.25]
    """
    frame = reduce_repetitions(rows, predictions, columns, target)
    actual = frame[target].to_numpy()
    return np.abs(frame[PRED].to_numpy() - actual) / actual


def interval_score(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray, level: float) -> np.ndarray:
    """The interval score of central ``level`` bands, in log space (Gneiting and Raftery, *JASA* 102, 2007,
    eq. 43): the band's width ``log(upper / lower)`` plus ``2 / (1 - level)`` times how far the truth lies
    outside it. A proper scoring rule: lower is better, and no band scores better in expectation than the
    one whose bounds are the true quantiles, so it weighs width against coverage. A band that is not
    positive or not finite scores infinity.

    Examples
    --------
    >>> interval_score(np.array([1.0, 1.0]), np.array([np.e, np.e]), np.array([2.0, np.e ** 2]), 0.9).round(3).tolist()
    [1.0, 21.0]
    """
    lower, upper, truth = (np.asarray(v, float) for v in (lower, upper, truth))
    with np.errstate(all="ignore"):
        lo, hi, y = np.log(lower), np.log(upper), np.log(truth)
        penalty = 2.0 / (1.0 - level) * (np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0))
        score = hi - lo + penalty
    return np.where(np.isfinite(score) & (lower > 0), score, np.inf)


def summarize(errors: Iterable[float]) -> ErrorSummary:
    """Median, mean and worst of a set of errors (NaN marks a failed prediction).

    A NaN or infinite error counts as infinitely bad in ``worst`` and ``mean``.

    Examples
    --------
    >>> summarize([0.1, 0.2, 0.6]).worst
    0.6
    """
    values = np.asarray(list(errors), dtype=float)
    if values.size == 0:
        return ErrorSummary(float("nan"), float("nan"), float("nan"), 0)
    values = np.where(np.isfinite(values), values, np.inf)
    return ErrorSummary(float(np.median(values)), float(np.mean(values)),
                        float(np.max(values)), int(values.size))


def best_p(rows: pd.DataFrame, predictions: Sequence[float], p_column: str,
           other_columns: Sequence[str] = (), target: str = "time") -> list[BestP]:
    """Actual vs predicted best ``p`` and Spearman rank correlation per slice.

    A slice holds the rows with the same values of ``other_columns``; within it the
    best ``p`` is the argmin over its ``p`` values (pass train and test rows together).
    Ties go to the smallest ``p``.  Slices with fewer than two ``p`` values are skipped;
    the Spearman correlation is NaN when either ordering is constant.

    Examples
    --------
    >>> rows = pd.DataFrame({"p": [1, 2, 4], "time": [3.0, 1.0, 2.0]})
    >>> best_p(rows, [3.0, 2.0, 1.0], "p")[0].predicted_best_p
    4.0
    """
    frame = reduce_repetitions(rows, predictions, [*other_columns, p_column], target)
    slices = frame.groupby(list(other_columns), sort=True) if other_columns else [((), frame)]
    result: list[BestP] = []
    for fixed, part in slices:
        if len(part) < 2:
            continue
        p_values = part[p_column].to_numpy(dtype=float)
        actual = part[target].to_numpy(dtype=float)
        predicted = part[PRED].to_numpy(dtype=float)
        predicted_best = (float(p_values[np.nanargmin(predicted)])
                          if np.isfinite(predicted).any() else float("nan"))
        rho = rank_correlation(actual, predicted)
        fixed_key = fixed if isinstance(fixed, tuple) else (fixed,)
        result.append(BestP(fixed_key, float(p_values[np.argmin(actual)]), predicted_best,
                            rho, len(part)))
    return result


@dataclass(frozen=True)
class GroupScore:
    """Scores of one task group."""

    errors: np.ndarray
    summary: ErrorSummary
    best_p: tuple[BestP, ...]

    @property
    def best_p_hits(self) -> int:
        """Number of slices whose best p was predicted exactly."""
        return sum(b.hit for b in self.best_p)

    @property
    def mean_spearman(self) -> float:
        """Mean Spearman correlation over slices (NaN slices ignored)."""
        values = [b.spearman for b in self.best_p if np.isfinite(b.spearman)]
        return float(np.mean(values)) if values else float("nan")


def score_group(task, test_predictions: Sequence[float],
                train_predictions: Sequence[float] | None = None) -> GroupScore:
    """Score one task group (a ``benchmarks.tasks.Task``).

    Parameters
    ----------
    task : Task
        The group; its ``test`` rows are scored.
    test_predictions : sequence of float
        One prediction per ``task.test`` row.
    train_predictions : sequence of float, optional
        One prediction per ``task.train`` row; needed for the best-p comparison of
        p-sweeps (argmin over train and test p values at fixed other parameters).
    """
    errors = relative_errors(task.test, test_predictions, task.columns, task.target)
    slices: list[BestP] = []
    if task.p_sweep and train_predictions is not None:
        slices = group_best_p(task, test_predictions, train_predictions)
    return GroupScore(errors, summarize(errors), tuple(slices))


def group_best_p(task, test_predictions: Sequence[float],
                 train_predictions: Sequence[float]) -> list[BestP]:
    """``best_p`` of a p-sweep group over its training and test rows together.

    The slices and their actual best p depend on the data only (any predictions give the same).
    """
    rows = pd.concat([task.train, task.test], ignore_index=True)
    preds = np.concatenate([np.asarray(train_predictions, float), np.asarray(test_predictions, float)])
    others = [c for c in task.columns if c != task.p_column]
    return best_p(rows, preds, task.p_column, others, task.target)


def aggregate(scores: Iterable[GroupScore]) -> dict[str, ErrorSummary]:
    """Summaries over all rows pooled (``"rows"``) and over group medians (``"groups"``)."""
    scores = list(scores)
    pooled = np.concatenate([s.errors for s in scores]) if scores else np.array([])
    return {"rows": summarize(pooled), "groups": summarize(s.summary.median for s in scores)}
