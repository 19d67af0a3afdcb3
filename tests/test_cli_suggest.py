"""``automodel suggest``: the plan at 80 columns, JSON, and bad input as one line with exit 2."""

from __future__ import annotations

import json

import pytest

from automodel.cli import main
from tests.test_suggestion import hand_model


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.json"
    hand_model().save(path)
    return str(path)


def test_plan_from_a_model_file_at_80_columns(model_file, capsys):
    assert main(["suggest", model_file, "--target", "procs=64", "--count", "3", "--max-p", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("target procs=64: predicted 1.125 s")
    assert "next 3 run(s)" in out and "extends procs to" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_json_and_allowed_p(model_file, capsys):
    assert main(["suggest", model_file, "--target", "p=64", "--p", "1:16:*2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {row["procs"] for row in doc["suggestions"]} <= {1, 2, 4, 8, 16}
    assert doc["core_hours"] == pytest.approx(sum(row["core_hours"] for row in doc["suggestions"]))


@pytest.mark.parametrize("args, message", [
    (["--target", "p=512", "--max-p", "256"], "outside the allowed p"),
    (["--target", "p=64", "--budget", "0"], "budget must be a positive"),
    (["--target", "p=64", "--p", "100,200", "--max-p", "64"], "no configuration meets the constraints"),
    (["--target", "p"], "expected NAME=NUMBER"),
    (["--target", "p=64", "--grid", "n"], "expected NAME=SPEC"),
    (["--target", "p=64", "--grid", "procs=-4,8"], "grid: procs must be a positive process count, got -4"),
    # a name given twice: the later value silently replaced the earlier one
    (["--target", "p=64,p=8"], "--target 'p=64,p=8': p is given twice (p=64 and p=8), expected each name once"),
    (["--target", "p=64", "--grid", "procs=1,2", "--grid", "procs=4"], "--grid 'procs=4': procs is given twice"),
])
def test_bad_input_exits_2_in_one_line(model_file, capsys, args, message):
    assert main(["suggest", model_file, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_plan_for_the_leader_of_a_store(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    from automodel.store import observe

    runs = pd.DataFrame([(n, p, 1e-8 * n * np.log2(n) / p + 1e-4 * np.log2(p) + 1e-3)
                         for n in (1e4, 2e4, 4e4) for p in (1, 2, 4, 8)], columns=["n", "p", "time"])
    observe(str(tmp_path / "s.db"), "toy", runs)
    assert main(["suggest", "--store", str(tmp_path / "s.db"), "--app", "toy", "--target", "n=3.2e5,p=64",
                 "--max-p", "64", "--count", "2"]) == 0
    assert "next 2 run(s)" in capsys.readouterr().out
    assert main(["suggest", "--store", str(tmp_path / "s.db"), "--target", "n=3.2e5,p=64"]) == 2
    assert "--app NAME" in capsys.readouterr().err


def test_times_and_costs_in_the_models_unit(tmp_path, capsys):
    from dataclasses import replace

    path = tmp_path / "ms.json"
    replace(hand_model(), options={"unit": "ms"}).save(path)
    assert main(["suggest", str(path), "--target", "p=64", "--count", "2", "--max-p", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("target procs=64: predicted 1.125 ms") and "ms (+-" in out
    assert main(["suggest", str(path), "--target", "p=64", "--count", "1", "--max-p", "64", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["suggestions"][0]
    assert row["core_hours"] == pytest.approx(row["procs"] * (1 + 8 / row["procs"]) * 1e-3 / 3600)


def test_runs_of_other_column_names_are_sent_to_fit_first(tmp_path, capsys):
    """suggest reads runs by the names time, p and n; a file of procs, size, walltime_ms was told
    '--time walltime_ms', an option suggest does not have. It now names the fit that reads it."""
    path = tmp_path / "runs.csv"
    path.write_text("size,procs,walltime_ms\n" + "".join(f"{n},{p},{1 + n / p:g}\n" for n in (1000, 2000, 4000)
                                                         for p in (1, 2, 4, 8)))
    assert main(["suggest", str(path), "--target", "size=8000,procs=32"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fit it first" in err
    assert "(--time walltime_ms, read in ms; and perhaps --n size --p procs)" in err
    assert err.rstrip().endswith("then give suggest model.json")
