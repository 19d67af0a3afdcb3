"""automodel.sklearn: the scikit-learn contract (estimator checks), column roles, the relative-error score,
Pipeline, cross_val_score, GridSearchCV and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import automodel
from automodel.sklearn import EXPECTED_FAILED_CHECKS, AutomodelRegressor, relative_score
from tests.conftest import make_runs

#: a cheap search for the model-selection tests: no templates, no bands
FAST = {"templates": "none", "intervals": False}


@parametrize_with_checks([AutomodelRegressor()], expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    """The estimator as users make it (templates and bands on): the checks' data are small, so the whole
    suite takes about 3 s."""
    check(estimator)


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    """2e-6 n/p + 1e-3 log2 p + 1e-4 seconds on n in 1000..8000, p in 1..8, two runs each, 2 % noise."""
    return make_runs(lambda n, p, cpu, bw: 2e-6 * n / p + 1e-3 * np.log2(p) + 1e-4,
                     np.geomspace(1000, 8000, 4), [1, 2, 4, 8], reps=2, noise=0.02, seed=3)


@pytest.fixture(scope="module")
def fitted(runs) -> AutomodelRegressor:
    return AutomodelRegressor().fit(runs[["n", "p"]], runs["time"])


def test_fit_learns_the_model_of_automodel_fit(runs, fitted):
    result = automodel.fit(runs, progress=False)
    assert fitted.best_formula_ == result.best.formula == fitted.model_.formula
    assert fitted.best_formula_.replace(" ", "").count("n/p") == 1 and "log2(p)" in fitted.best_formula_
    assert fitted.leaderboard_.equals(result.leaderboard) and fitted.result_.best is fitted.model_
    assert fitted.n_features_in_ == 2 and list(fitted.feature_names_in_) == ["n", "p"]
    assert fitted.model_.roles == {"n": "n", "p": "p", "time": "time"}
    np.testing.assert_array_equal(fitted.predict(runs[["n", "p"]]), result.best.predict(runs))
    assert fitted.score(runs[["n", "p"]], runs["time"]) > 0.97


def test_settings_are_stored_unchanged_and_cloned():
    est = AutomodelRegressor({"n": 0}, space="pmnf", metric="loo", selection="best", templates=["amdahl"],
                             template_options={"kohashi": {"n_terms": 4}}, intervals=False, level=0.5)
    params = est.get_params()
    assert params["roles"] == {"n": 0} and params["templates"] == ["amdahl"] and params["level"] == 0.5
    assert clone(est).get_params() == params
    assert est.set_params(metric="aic") is est and est.metric == "aic"


def test_roles_from_names_positions_and_arguments(runs):
    X, y = runs[["n", "p"]], runs["time"]
    formula = AutomodelRegressor(**FAST).fit(X, y).best_formula_
    by_position = AutomodelRegressor({"n": 0, "p": 1}, **FAST).fit(X.to_numpy(), y.to_numpy())
    assert by_position.best_formula_ == formula and by_position.model_.roles["n"] == "x0"
    renamed = X.rename(columns={"n": "size", "p": "ranks"})
    by_name = AutomodelRegressor({"n": "size", "p": "ranks"}, **FAST).fit(renamed, y)
    assert by_name.best_formula_ == formula and by_name.model_.roles == {"n": "size", "p": "ranks", "time": "time"}
    np.testing.assert_array_equal(by_name.predict(renamed), by_position.predict(X.to_numpy()))
    extras = AutomodelRegressor(**FAST).fit(X.to_numpy(), y)  # an array without roles: extra parameters
    assert extras.model_.params == ("x0", "x1")
    named = AutomodelRegressor({"size": 0, "p": 1}, **FAST).fit(X.to_numpy(), y)
    assert named.model_.params == ("p", "size")


@pytest.mark.parametrize("X, y, roles, match", [
    (None, -1.0, None, r"^<DataFrame>, row 0, column 'time': expected a positive time, got -1$"),
    (None, 0.0, None, r"^<DataFrame>, row 0, column 'time': expected a positive time, got 0$"),
    (None, np.nan, None, r"^Input y contains NaN\.$"),
    ({"n": -1.0}, None, None, r"^<DataFrame>, row 0, column 'n': expected a positive problem size, got -1$"),
    ({"n": np.inf}, None, None, r"^Input X contains infinity"),
    ({"time": 1.0}, None, None, r"^column 'time': y is the time; rename it, or map it with roles$"),
    (None, None, {"n": "size"}, r"^roles: 'n' -> 'size': no such column; X has 2 columns \(n, p\): give a name "
                                r"or a position from 0 to 1$"),
    (None, None, {"p": "n"}, r"^column 'p': roles gives p to column 'n'; rename it, or map it with roles$"),
])
def test_invalid_input_is_one_value_error(runs, X, y, roles, match):
    X_bad, y_bad = runs[["n", "p"]].copy(), runs["time"].copy()
    for column, value in (X or {}).items():
        X_bad.loc[:, column] = X_bad.get(column, 1.0)
        X_bad.loc[0, column] = value
    if y is not None:
        y_bad.iloc[0] = y
    with pytest.raises(ValueError, match=match):
        AutomodelRegressor(roles, **FAST).fit(X_bad, y_bad)


def test_an_unknown_setting_is_automodels_one_line_error(runs):
    with pytest.raises(automodel.SpaceError, match=r"^unknown metric 'r2'; expected one of s, rel_s"):
        AutomodelRegressor(metric="r2", **FAST).fit(runs[["n", "p"]], runs["time"])


def test_predict_interval_and_score(runs, fitted):
    X, y = runs[["n", "p"]], runs["time"].to_numpy()
    t = fitted.predict(X)
    lower, upper = fitted.predict_interval(X)
    assert ((lower < t) & (t < upper)).all()
    np.testing.assert_array_equal(lower, fitted.model_.predict_interval(X, level=0.9)[0])
    mean_lower, mean_upper = fitted.predict_interval(X, level=0.5, kind="mean")
    assert ((lower < mean_lower) & (mean_upper < upper)).all()
    assert fitted.score(X, y) == relative_score(y, t) == pytest.approx(1 - np.median(np.abs(t - y) / y), rel=1e-12)
    assert relative_score([1.0, 2.0, 4.0], [1.25, 2.0, 3.0]) == 0.75
    assert relative_score([1.0, 2.0, 4.0], [1.25, 2.0, 3.0], sample_weight=[1, 5, 1]) == 1.0
    with pytest.raises(automodel.DataError, match=r"^the model '.*' has no prediction band: fit with intervals=True$"):
        AutomodelRegressor(**FAST).fit(X, y).predict_interval(X)


def test_pipeline_keeps_the_feature_names(runs):
    keep = ColumnTransformer([("keep", "passthrough", ["n", "p"])], verbose_feature_names_out=False)
    pipe = make_pipeline(keep.set_output(transform="pandas"), AutomodelRegressor(**FAST))
    X, y = runs.assign(host=1.0)[["host", "n", "p"]], runs["time"]  # a column the model should not see
    pipe.fit(X, y)
    est = pipe[-1]
    assert est.model_.params == ("n", "p")
    assert pipe.score(X, y) == est.score(runs[["n", "p"]], y) > 0.97


def test_cross_val_score_gives_the_relative_score(runs):
    folds = KFold(4, shuffle=True, random_state=0)
    scores = cross_val_score(AutomodelRegressor(**FAST), runs[["n", "p"]], runs["time"], cv=folds)
    assert scores.shape == (4,) and (scores > 0.9).all()


def test_grid_search_over_space_metric_and_selection(runs):
    grid = [{"space": ["default", "pmnf"]}, {"metric": ["rel_s", "loo"], "selection": ["simplest", "best"]}]
    search = GridSearchCV(AutomodelRegressor(**FAST), grid, cv=KFold(3, shuffle=True, random_state=0))
    search.fit(runs[["n", "p"]], runs["time"])
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 6 and np.isfinite(scores).all()
    assert search.best_params_ != {"space": "pmnf"}  # Extra-P's single-parameter space misses n/p
    assert search.best_estimator_.best_formula_ and search.best_score_ == scores.max()


def test_pickle_round_trip_predicts_the_same(runs, fitted):
    X = runs[["n", "p"]].assign(n=lambda f: f["n"] * 4, p=lambda f: f["p"] * 8)  # beyond the training runs
    back = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(back.predict(X), fitted.predict(X))
    for got, want in zip(back.predict_interval(X), fitted.predict_interval(X)):
        np.testing.assert_array_equal(got, want)
    assert back.best_formula_ == fitted.best_formula_ and back.get_params() == fitted.get_params()
