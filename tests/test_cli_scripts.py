"""The command line in scripts (issue 13): ``--json``, ``-`` for standard input and output, the runner's
own output with failed runs, and the models file of ``automodel kernels --out`` in show, predict and
best-p."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from automodel.cli import main
from tests.conftest import make_runs


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("scripts") / "runs.csv"
    frame = make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * p, np.linspace(100, 800, 6), [1, 2, 4, 8],
                      noise=0.01)
    frame.assign(status=0, error="").to_csv(path, index=False)
    return path


def test_fit_reads_standard_input_and_writes_the_model_on_standard_output(runs_csv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(runs_csv.read_bytes())))
    assert main(["fit", "-", "-o", "-", "--quiet", "--templates", "none"]) == 0
    captured = capsys.readouterr()
    model = json.loads(captured.out)  # only the model on stdout
    assert model["format"] == "automodel-model"
    assert "data: <stdin>" in captured.err and "chosen model: T = " in captured.err


def test_fit_json(runs_csv, capsys):
    assert main(["fit", str(runs_csv), "--json", "--quiet", "--top", "3", "--templates", "none"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chosen"]["formula"] and out["chosen"]["model"]["format"] == "automodel-model"
    assert 3 <= len(out["leaderboard"]) <= 4 and out["best_p"]["p"] >= 1
    stages = {s["name"]: s for s in out["stages"]}  # the stage log, as numbers
    assert "computation" in stages and all(s["n_kept"] <= s["n_candidates"] for s in stages.values())
    assert any("overhead reduction" in s["note"] for s in out["stages"])
    assert main(["fit", str(runs_csv), "--json", "-o", "-"]) == 2
    assert "choose one" in capsys.readouterr().err


def test_fit_skips_the_failed_runs_of_automodel_run(runs_csv, tmp_path, capsys):
    frame = pd.read_csv(runs_csv)
    frame["error"] = frame["error"].astype(object)
    frame.loc[[2, 5], ["status", "time", "error"]] = [124, np.nan, "timeout"]
    frame["status"] = frame["status"].astype(object)
    frame.loc[5, "status"] = "9" * 400  # a status beyond the range of floats: failed, not a traceback
    frame.to_csv(tmp_path / "partly.csv", index=False)
    assert main(["fit", str(tmp_path / "partly.csv"), "--quiet", "--templates", "none"]) == 0
    assert "note: 2 failed run(s) skipped (column 'status' not 0; line(s) 4, 7)" in capsys.readouterr().out
    frame["status"] = 1
    frame.to_csv(tmp_path / "failed.csv", index=False)
    assert main(["fit", str(tmp_path / "failed.csv"), "--quiet"]) == 2
    assert "every one of the 24 runs failed" in capsys.readouterr().err


def test_models_file_in_show_predict_best_p_and_kernels_json(tmp_path, capsys):
    from benchmarks.extrap_text import format_text

    p = np.array([2.0, 4, 8, 16, 32])
    src = tmp_path / "profile.txt"
    src.write_text(format_text(["p"], p[:, None], {"a": [[v] for v in 3 + p], "b": [[v] for v in 10 / p + 1]}))
    models = tmp_path / "m.json"
    assert main(["kernels", str(src), "--out", str(models)]) == 0
    assert main(["kernels", str(src), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [row["kernel"] for row in summary] == ["a [time]", "b [time]"]
    assert main(["show", str(models)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("a [time]: ") and lines[1].startswith("b [time]: ")
    pd.DataFrame({"kernel": ["b [time]", "a [time]"], "p": [64.0, 64.0]}).to_csv(tmp_path / "q.csv", index=False)
    assert main(["predict", str(models), str(tmp_path / "q.csv"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["kernel"] for r in rows] == ["b [time]", "a [time]"]
    assert rows[1]["predicted"] == pytest.approx(67.0, rel=0.05) and rows[0]["predicted"] < 2
    assert main(["best-p", str(models), "--kernel", "b [time]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["p"] >= 32
    assert main(["best-p", str(models)]) == 2
    assert "holds 2 models; choose one with --kernel NAME" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly(runs_csv):
    """``automodel fit ... | head -1``: no traceback when the reader goes away."""
    proc = subprocess.Popen([sys.executable, "-m", "automodel", "fit", str(runs_csv), "--quiet", "--top", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err
