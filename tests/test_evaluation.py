"""``automodel evaluate`` and :func:`automodel.evaluation.evaluate`: errors, rank order, coverage."""

import copy
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
    assert capsys.readouterr().err.startswith(f"automodel: error: {runs}, line 2, column 'time'")


PROFILE = "\n".join(
    f'{{"params": {{"p": {p}}}, "callpath": "{name}", "value": {t}}}'
    for name, law in (("solve", lambda p: 0.01 * p + 8.0 / p), ("halo", lambda p: 0.1 * math.log2(p) + 0.2))
    for p in (1, 2, 4, 8) for t in (law(p),))


def test_evaluate_scores_each_kernel_with_its_own_model(tmp_path, capsys):
    """Before: ``--kernel halo`` scored all 8 rows (both kernels) against halo's model (median error
    77 %); now only halo's 4 rows (0 %), and without ``--kernel`` each row gets its kernel's model."""
    profile, models = tmp_path / "profile.jsonl", tmp_path / "models.json"
    profile.write_text(PROFILE + "\n")
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    rows = tmp_path / "rows.csv"
    automodel.read(profile).to_csv(rows, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(models), str(rows), "--kernel", "halo", "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["runs"] == 4 and scores["median_error"] < 1e-9
    assert main(["evaluate", str(models), str(rows), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert {k: v["runs"] for k, v in scores["kernels"].items()} == {"solve": 4, "halo": 4}
    assert scores["all"]["runs"] == 8 and scores["all"]["worst_error"] < 1e-9
    assert main(["evaluate", str(models), str(rows)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["solve", "4"] and all(len(line) <= 80 for line in lines)
    assert main(["evaluate", str(models), str(rows), "--kernel", "nope"]) == 2
    rows.write_text(rows.read_text().replace("halo,halo", "other,other"))
    assert main(["evaluate", str(models), str(rows)]) == 2
    assert capsys.readouterr().err.strip().endswith("column 'kernel': no model for kernel 'other'")
    automodel.read(profile).drop(columns="kernel").to_csv(rows, index=False)
    assert main(["evaluate", str(models), str(rows)]) == 2
    assert "--kernel NAME" in capsys.readouterr().err


def test_a_kernels_bad_time_names_its_line_in_the_file(tmp_path, capsys):
    profile, models, rows = tmp_path / "profile.jsonl", tmp_path / "models.json", tmp_path / "rows.csv"
    profile.write_text(PROFILE + "\n")
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    frame = automodel.read(profile)
    frame.loc[6, "time"] = -1.0  # line 8 of the CSV, a row of halo
    frame.to_csv(rows, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(models), str(rows)]) == 2
    assert capsys.readouterr().err.startswith(f"automodel: error: {rows}, line 8, column 'time'")


def test_counters_of_zero_are_scored_as_the_fit_reads_them():
    from automodel.evaluation import evaluate_kernels
    from automodel.kernels.fit_many import fit_many

    p = np.array([1.0, 2, 4, 8, 16])
    rows = pd.DataFrame({"kernel": np.repeat(["zero", "some"], 5), "p": np.tile(p, 2),
                         "time": np.r_[np.zeros(5), [0, 2, 2, 4, 4]]})
    by_kernel, overall = evaluate_kernels(fit_many(rows, jobs=1).models, rows)
    assert by_kernel["zero"].worst_error == 0 and by_kernel["zero"].coverage == 1
    assert np.isfinite(by_kernel["some"].worst_error) and overall.runs == 10
    with pytest.raises(automodel.DataError, match="expected a time or count of 0 or more, got -1"):
        evaluate_kernels(fit_many(rows, jobs=1).models, rows.assign(time=rows["time"].replace(4.0, -1.0)))


def test_a_row_without_a_kernel_is_refused_not_left_out(tmp_path, capsys):
    """groupby leaves out a row whose kernel cell is empty: it went unscored, and the scores said
    nothing of it."""
    profile, models, rows = tmp_path / "profile.jsonl", tmp_path / "models.json", tmp_path / "rows.csv"
    profile.write_text(PROFILE + "\n")
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    frame = automodel.read(profile)
    frame.loc[6, "kernel"] = None  # line 8 of the CSV
    frame.to_csv(rows, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(models), str(rows)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {rows}, line 8, column 'kernel': expected the name of a "
                                       "kernel of the models file, got an empty cell\n")


def test_kernel_chooses_the_rows_of_the_kernel_it_means(tmp_path, capsys):
    """``--kernel main`` means ``main [time]`` when main has one metric: the models file took it, but the
    rows were cut to those whose kernel cell read 'main' exactly, none: 'no row of kernel' and exit 2."""
    profile, models, rows = tmp_path / "profile.txt", tmp_path / "models.json", tmp_path / "rows.csv"
    profile.write_text("PARAMETER p\nPOINTS 1 2 4 8\nMETRIC time\nREGION main\nDATA 1\nDATA 2\nDATA 4\nDATA 8\n"
                       "REGION halo\nDATA 3\nDATA 3\nDATA 3\nDATA 3\n")
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    automodel.read(profile).to_csv(rows, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(models), str(rows), "--kernel", "main", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 4


@pytest.mark.parametrize("time", [0.0, -3.0])
def test_a_time_that_is_not_positive_is_refused_as_fit_refuses_it(model, tmp_path, capsys, time):
    """Before: a measured time of 0 was scored (a relative error against 0: 'worst 400.2%', exit 0);
    now the rule of ``fit`` (:data:`automodel.data.cells.RULES`, 'a positive time') refuses it."""
    path, runs = tmp_path / "model.json", tmp_path / "runs.csv"
    model.save(path)
    pd.DataFrame({"n": [400.0, 800.0], "p": [2.0, 4.0], "time": [0.2, time]}).to_csv(runs, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(path), str(runs)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {runs}, line 3, column 'time': expected a positive time, "
                                       f"got {time:g}\n")


def test_counts_and_a_kernels_values_of_zero_are_still_scored(model, tmp_path, capsys):
    """A model of counters (a unit that is no time) and a one-kernel models file of ``kernels`` read a
    value of 0 as their fits did: scored, not refused."""
    rows = pd.DataFrame({"n": [400.0, 800.0], "p": [2.0, 4.0], "time": [0.0, 2.0]})
    counter = copy.copy(model)
    counter.options = {**model.options, "unit": "misses"}
    assert evaluate(counter, rows).runs == evaluate(model, rows, counts=True).runs == 2
    with pytest.raises(automodel.DataError, match="expected a positive time, got 0"):
        evaluate(model, rows)
    profile, models, csv = tmp_path / "one.jsonl", tmp_path / "models.json", tmp_path / "rows.csv"
    profile.write_text("\n".join(line for line in PROFILE.splitlines() if '"solve"' in line) + "\n")
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    frame = automodel.read(profile)
    frame.loc[1, "time"] = 0.0
    frame.to_csv(csv, index=False)
    capsys.readouterr()
    assert main(["evaluate", str(models), str(csv)]) == 0
    assert capsys.readouterr().out.startswith("4 runs, 4 configurations")
