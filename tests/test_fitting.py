"""automodel.fit: the leaderboard (searched and seeded rows, ranked by the metric), the choice, the summary."""

import numpy as np
import pytest

import automodel


def test_leaderboard_columns_and_metric_choice(runs_loaded):
    result = automodel.fit(runs_loaded, metric="aic", progress=False)
    board = result.leaderboard
    assert list(board.columns[:4]) == ["rank", "formula", "n_terms", "s"]
    ranked = board.dropna(subset=["rank"])
    assert (np.diff(ranked["aic"].to_numpy()) >= 0).all()
    assert result.best.formula == ranked["formula"].iloc[0]


def test_summary_and_options(runs_loaded):
    result = automodel.fit(runs_loaded, progress=False, templates="none")
    assert set(result.leaderboard["kind"]) == {"searched"}
    text = result.summary(top=3)
    assert text.startswith("data: <DataFrame>: 64 runs, 64 distinct configurations; parameters n, p, cpu, bw")
    assert f"chosen model: T = {result.best.formula}" in text and "why: rank" in text
    assert (result.leaderboard["choice"] == "chosen").sum() == 1
    with pytest.raises(automodel.SpaceError, match="unknown metric 'r2'"):
        automodel.fit(runs_loaded, metric="r2", progress=False)
