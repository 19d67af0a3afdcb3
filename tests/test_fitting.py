"""automodel.fit: the leaderboard (searched and seeded rows, ranked by the metric), the choice, the summary."""

import numpy as np
import pandas as pd
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


def test_cause3_no_fittable_candidate_is_one_data_error(tmp_path):
    """Issue 17, cause 3: an empty or all-non-finite candidate set ended in ``KeyError: 's'`` (fit) or a
    bare ``ValueError`` (select)."""
    space = tmp_path / "log.toml"
    space.write_text('name = "log"\n[stages.pmnf]\nterms = ["log2(x)"]\n')
    runs = pd.DataFrame({"k": [0.0, -1.0, -2.0, -3.0], "time": [4.0, 3.0, 2.0, 1.0]})
    with pytest.raises(automodel.DataError, match=r"^<DataFrame>: no candidate model could be fitted on 4 "
                                                  r"configurations \(k from -3 to 0\)"):
        automodel.fit(runs, params=["k"], space=space, templates="none", progress=False)
    from automodel.search.select import select
    with pytest.raises(automodel.DataError, match="no candidate has a finite rel_s"):
        select(np.array([np.inf, np.nan]), np.array([1, 2]), 5, "rel_s")


def test_summary_lists_templates_without_a_model_and_the_chosen_row_whatever_the_top():
    """Issue 14: with the default ``--top 10`` the reasons a template does not apply were cut off, and
    the chosen row could be below the cut."""
    from importlib.resources import files

    import automodel

    result = automodel.fit(str(files("automodel") / "demo" / "cg_fast.csv"), progress=False)
    text = result.summary(top=1)
    assert "templates without a model:\n  fim_cal: not applicable: needs columns U, TC, SC, F" in text
    chosen_rank = int(result.leaderboard.loc[result.leaderboard["choice"] == "chosen", "rank"].iloc[0])
    board = text.split("leaderboard")[1].split("templates without")[0]
    assert [int(line.split()[0]) for line in board.splitlines()[2:] if line.strip()] == sorted({1, chosen_rank})
