"""``automodel evaluate`` and :func:`automodel.evaluation.evaluate`: errors, rank order, coverage."""

import json
import math

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.evaluation import evaluate, rank_correlation
from tests.conftest import make_runs


def test_rank_correlation_is_spearman_and_nan_when_undefined():
    assert rank_correlation([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8)  # 1 - 6*2/(4*15)
    assert math.isnan(rank_correlation([1, 1, 1], [1, 2, 3]))
    assert math.isnan(rank_correlation([1, 2], [1, np.inf]))
    assert math.isnan(rank_correlation([1], [1]))


@pytest.fixture(scope="module")
def model():
    runs = make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * p, np.linspace(100, 800, 6), [1, 2, 4], noise=0.02)
    return automodel.fit(runs, progress=False).best


def test_errors_are_against_each_configurations_median(model):
    config = pd.DataFrame({"n": [400.0, 800.0], "p": [2.0, 4.0]})
    pred = model.predict(config)
    # medians 1.1 and 1.15 times the prediction: errors 0.1/1.1 and 0.15/1.15 of the measured time
    runs = pd.concat([config.assign(time=pred * f) for f in (1.0, 1.1, 1.5)] +
                     [config.iloc[[1]].assign(time=pred[1] * 1.2)], ignore_index=True)
    result = evaluate(model, runs)
    assert (result.runs, result.configurations) == (7, 2)
    assert result.median_error == pytest.approx((0.1 / 1.1 + 0.15 / 1.15) / 2)
    assert result.worst_error == pytest.approx(0.15 / 1.15)
    assert result.rank_correlation == pytest.approx(1.0)
    lo, hi = model.predict_interval(runs, 0.9)
    assert result.coverage == pytest.approx(np.mean((lo <= runs["time"]) & (runs["time"] <= hi)))


def test_cli_evaluate(model, tmp_path, capsys):
    path, runs = tmp_path / "model.json", tmp_path / "runs.csv"
    model.save(path)
    make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * p, [1600.0], [8, 16], noise=0.0).to_csv(runs, index=False)
    assert main(["evaluate", str(path), str(runs), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["configurations"] == 2 and 0 <= scores["median_error"] < 0.2
    assert main(["evaluate", str(path), str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("2 configurations") and all(len(line) <= 80 for line in lines)
    pd.DataFrame({"n": [1.0], "p": [1.0], "time": ["slow"]}).to_csv(runs, index=False)
    assert main(["evaluate", str(path), str(runs)]) == 2
    assert capsys.readouterr().err.startswith(f"automodel: error: {runs}, row 2, column 'time'")
