"""A scikit-learn regressor around :func:`automodel.fitting.fit`: the search in Pipeline, cross_val_score, GridSearchCV.

:class:`AutomodelRegressor` keeps the scikit-learn contract (settings stored unchanged by ``__init__``,
``fit`` returns ``self``, what was learned ends in ``_``) and adds nothing to the mathematics: ``fit``
is :func:`automodel.fitting.fit` on a table built from ``X`` and ``y``, ``predict`` is
:meth:`automodel.model.core.Model.predict` of the chosen model. Its score is the relative error users care
about (:func:`relative_score`), not R^2, because run times span orders of magnitude.

Columns of ``X`` get their parameter role by name: a DataFrame column ``n``, ``p``, ``cpu`` or ``bw`` is
that role, every other column an extra parameter under its own name (``x0``, ``x1``, ... for an array
without names). ``roles`` overrides this per column (``roles={"n": "size", "p": 1}``, or
``{"iterations": 2}`` to name an array's column). :data:`EXPECTED_FAILED_CHECKS` would list the
estimator checks of scikit-learn that cannot apply to run times, with the reason; there are none, since
the target tag ``positive_only`` makes the checks draw positive ``y``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import median_absolute_error
from sklearn.utils.validation import check_is_fitted, validate_data

from automodel.errors import DataError
from automodel.fitting import FitResult, fit
from automodel.model.core import Model
from automodel.options import DEFAULT_AGGREGATE, ROLE_NAMES
from automodel.space.config import SearchSpace

__all__ = ["AutomodelRegressor", "relative_score", "EXPECTED_FAILED_CHECKS"]

#: the target column of the table handed to :func:`automodel.fitting.fit`
TARGET = "time"

#: scikit-learn estimator checks that cannot pass for a model of positive run times: check -> why
#: (``parametrize_with_checks(..., expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)``)
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


def relative_score(y_true: Any, y_pred: Any, sample_weight: Any = None) -> float:
    """``1 - median(|y_pred - y_true| / y_true)``: 1 is perfect, 0.9 means half the runs are predicted
    within 10 %, below 0 the median error is above 100 %.

    The median relative error is the measure of automodel's benchmarks (times span orders of magnitude,
    so an absolute error or R^2 would be decided by the longest runs alone). With ``sample_weight`` the
    median is weighted (:func:`sklearn.metrics.median_absolute_error` of ``y_pred / y_true`` about 1).

    Examples
    --------
    >>> relative_score([1.0, 2.0, 4.0], [1.25, 2.0, 3.0])  # errors 25 %, 0 %, 25 %
    0.75
    """
    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    return 1.0 - float(median_absolute_error(np.ones_like(y_true), y_pred / y_true, sample_weight=sample_weight))


class AutomodelRegressor(RegressorMixin, BaseEstimator):
    """The performance model of run times ``y`` (seconds, positive) over parameters ``X``.

    Parameters
    ----------
    roles : mapping, optional
        Name -> column of ``X`` (a feature name, or a position for an array). A name ``n``, ``p``,
        ``cpu`` or ``bw`` gives the column that parameter role; any other name renames the column, an
        extra parameter (``{"iterations": 2}``). Without it, a column named ``n``, ``p``, ``cpu`` or
        ``bw`` is that role and every other column an extra parameter under its feature name (``x0``,
        ``x1``, ... for an array without names).
    space : name, path or SearchSpace
        The search space (``"default"``, ``"pmnf"`` or a TOML file).
    metric, weighting, nonnegative, selection :
        Override the space's fit options (None: the space's).
    templates : None, "none", "all", "NAME,..." or list of names
        Seeded templates beside the search (None: the space's).
    template_options : mapping, optional
        Template name -> option -> value.
    aggregate : {"robust", "median", "mean", "min"}
        How repeated runs of one configuration are combined.
    max_rows : int
        Searched candidates kept in the leaderboard.
    drop_anomalies : bool
        Set aside the runs no leading model explains and search again.
    intervals : bool
        Calibrate the prediction bands (:meth:`predict_interval`); off makes ``fit`` faster.
    level : float
        Default level of :meth:`predict_interval`.
    verbose : bool
        Show the search's progress bars. The parameters are those of :func:`automodel.fitting.fit`,
        which documents them in full.

    Attributes
    ----------
    result_ : FitResult
        Everything the search found (``result_.summary()`` prints it).
    model_ : Model
        The chosen model (``result_.best``).
    leaderboard_ : DataFrame
        The ranked candidates, best first.
    best_formula_ : str
        The chosen model's formula.
    n_features_in_ : int
        Columns of ``X`` seen in ``fit``.
    feature_names_in_ : ndarray of str
        Their names, when ``X`` was a DataFrame with string column names.

    Examples
    --------
    >>> est = AutomodelRegressor(templates="none").fit(runs[["n", "p"]], runs["time"])  # doctest: +SKIP
    >>> est.best_formula_, est.score(larger[["n", "p"]], larger["time"])                # doctest: +SKIP
    """

    def __init__(self, roles: Mapping[str, str | int] | None = None, *, space: str | Path | SearchSpace = "default",
                 metric: str | None = None, weighting: str | None = None, nonnegative: bool | None = None,
                 selection: str | None = None, templates: str | Iterable[str] | None = None,
                 template_options: Mapping[str, Mapping[str, Any]] | None = None, aggregate: str = DEFAULT_AGGREGATE,
                 max_rows: int = 100, drop_anomalies: bool = False, intervals: bool = True, level: float = 0.9,
                 verbose: bool = False) -> None:
        self.roles = roles
        self.space = space
        self.metric = metric
        self.weighting = weighting
        self.nonnegative = nonnegative
        self.selection = selection
        self.templates = templates
        self.template_options = template_options
        self.aggregate = aggregate
        self.max_rows = max_rows
        self.drop_anomalies = drop_anomalies
        self.intervals = intervals
        self.level = level
        self.verbose = verbose

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True  # run times
        return tags

    # -- learning ------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> "AutomodelRegressor":
        """Search for the model of run times ``y`` (positive seconds) over the columns of ``X``.

        Raises
        ------
        ValueError
            Input scikit-learn rejects (NaN, wrong shapes, fewer than 3 runs), or automodel's one-line
            :class:`~automodel.errors.DataError` or :class:`~automodel.errors.SpaceError` (a time
            that is not positive, a role's column that breaks its rule, an unknown metric, ...).
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=3)
        self._columns, role_columns = self._layout()
        frame = self._frame(X).assign(**{TARGET: y})
        self.result_: FitResult = fit(
            frame, time=TARGET, **{q: role_columns.get(q) for q in ROLE_NAMES},
            params=[c for c in self._columns if c not in role_columns.values()], space=self.space,
            aggregate=self.aggregate, metric=self.metric, weighting=self.weighting, nonnegative=self.nonnegative,
            selection=self.selection, templates=self.templates, template_options=self.template_options,
            progress=self.verbose, max_rows=self.max_rows, intervals=self.intervals,
            drop_anomalies=self.drop_anomalies)
        self.model_: Model = self.result_.best
        self.leaderboard_: pd.DataFrame = self.result_.leaderboard
        self.best_formula_: str = self.model_.formula
        return self

    def _layout(self) -> tuple[list[str], dict[str, str]]:
        """The column names of the table :func:`fit` sees, and the column of each role (n, p, cpu, bw)."""
        names = [str(c) for c in getattr(self, "feature_names_in_", [f"x{i}" for i in range(self.n_features_in_)])]
        columns = list(names)
        role_columns = {q: q for q in ROLE_NAMES if q in names}
        for name, column in (self.roles or {}).items():
            if isinstance(column, (int, np.integer)) and not isinstance(column, bool) and 0 <= column < len(names):
                i = int(column)
            elif column in names:
                i = names.index(column)
            else:
                raise DataError(f"roles: {name!r} -> {column!r}: no such column; X has {len(names)} columns "
                                f"({', '.join(names)}): give a name or a position from 0 to {len(names) - 1}")
            role_columns = {q: c for q, c in role_columns.items() if c != names[i]}  # its default role yields
            if name in ROLE_NAMES:
                role_columns[name] = names[i]
            else:
                columns[i] = str(name)
        for c in columns:  # a column automodel would read as the target or as a role given to another column
            if c == TARGET or c in ROLE_NAMES and c not in role_columns.values():
                why = "y is the time" if c == TARGET else f"roles gives {c} to column {role_columns[c]!r}"
                raise DataError(f"column {c!r}: {why}; rename it, or map it with roles")
        return columns, role_columns

    def _frame(self, X: np.ndarray) -> pd.DataFrame:
        """The validated ``X`` as the table of parameters :func:`fit` and the model read."""
        return pd.DataFrame(X, columns=self._columns)

    # -- predicting ----------------------------------------------------------------------------
    def predict(self, X: Any) -> np.ndarray:
        """Predicted run time (seconds) of every row of ``X``: the chosen model's
        :meth:`~automodel.model.core.Model.predict` (a one-line :class:`~automodel.errors.DataError` where
        it gives no finite time)."""
        frame = self._checked(X)
        return self.model_.predict(frame)

    def predict_interval(self, X: Any, level: float | None = None, kind: str = "run"
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper ends of the ``level`` (default :attr:`level`) prediction band at every row.

        ``kind="run"`` covers one new run, ``"mean"`` the expected time
        (:meth:`automodel.model.core.Model.predict_interval`).

        Raises
        ------
        DataError
            When the model has no band (fitted with ``intervals=False``).
        """
        frame = self._checked(X)
        bounds = self.model_.predict_interval(frame, self.level if level is None else level, kind)
        if bounds is None:
            raise DataError(f"the model {self.best_formula_!r} has no prediction band: fit with intervals=True")
        return bounds

    def _checked(self, X: Any) -> pd.DataFrame:
        """``X`` validated against what ``fit`` saw, as the table the model predicts from."""
        check_is_fitted(self)
        return self._frame(validate_data(self, X, dtype=np.float64, reset=False))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """:func:`relative_score` of the predictions: ``1 - median(|predicted - y| / y)``, higher is
        better (1 is perfect; 0.9: half the runs within 10 %)."""
        return relative_score(y, self.predict(X), sample_weight)
