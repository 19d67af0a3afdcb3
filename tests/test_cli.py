"""End-to-end: every command, and the bad-input cases (one line, exit 2, no output file left)."""

import subprocess
import sys

import numpy as np
import pytest

from automodel.cli import main


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    from tests.conftest import make_runs
    path = tmp_path_factory.mktemp("cli") / "runs.csv"
    make_runs(lambda n, p, c, b: 1e-9 * n ** 3 / p + 2e-7 * n ** 2 * np.log2(p) + 0.1,
              np.linspace(200, 1400, 7), [1, 2, 4, 8], reps=2, noise=0.02).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def model_json(runs_csv):
    out = runs_csv.parent / "model.json"
    assert main(["fit", str(runs_csv), "--quiet", "-o", str(out)]) == 0
    return out


def test_fit_prints_leaderboard_and_formula(runs_csv, model_json, capsys):
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "leaderboard" in out and "chosen model: T =" in out and "best process count" in out
    assert model_json.exists()


def test_fit_selection_option(runs_csv, capsys):
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3", "--selection", "best"]) == 0
    assert "why: rank 1, the best rel_s" in capsys.readouterr().out
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3", "--selection", "simplest"]) == 0
    assert "why: rank" in capsys.readouterr().out


def test_predict_show_best_p(runs_csv, model_json, tmp_path, capsys):
    out_csv = tmp_path / "pred.csv"
    assert main(["predict", str(model_json), str(runs_csv), "-o", str(out_csv)]) == 0
    import pandas as pd
    pred = pd.read_csv(out_csv)
    assert "predicted" in pred.columns and len(pred) == 56
    assert np.median(np.abs(pred["predicted"] / pred["time"] - 1)) < 0.05
    for fmt in ("text", "latex", "python", "c", "json"):
        assert main(["show", str(model_json), "--format", fmt]) == 0
    capsys.readouterr()
    assert main(["best-p", str(model_json), "--n", "5000", "--p-max", "256"]) == 0
    assert capsys.readouterr().out.startswith("best p = ")


@pytest.mark.parametrize("content, args, fragment", [
    ("time,n,p\n1,10,1\n-1,20,1\n", [], "row 3, column 'time'"),
    ("time,n,p\n1,10,1\nx,20,1\n", [], "got 'x'"),
    ("time,n,p\n1,10,1\nnan,20,1\n", [], "row 3, column 'time'"),
    ("", [], "the file is empty"),
    ("time,n,p\n1,10,1\n2,20,1\n", ["--p", "procs"], "column 'procs': no such column"),
    ("time,n,p\n1,10,1\n2,20,1\n", [], "distinct configuration"),
    ("time,n,p\n1,10,1\n2,20,1\n3,30,1\n", ["--space", "nosuch"], "no search space named 'nosuch'"),
])
def test_bad_input_exit_2_one_line_no_output(tmp_path, capsys, content, args, fragment):
    data = tmp_path / "bad.csv"
    data.write_text(content)
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--quiet", "-o", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".automodel-*"))


def test_malformed_space_and_model(tmp_path, runs_csv, capsys):
    space = tmp_path / "bad.toml"
    space.write_text("name = 'x'\n[stages.computation]\nbase = ['exp(n)']\n")
    assert main(["fit", str(runs_csv), "--quiet", "--space", str(space)]) == 2
    assert "cannot read term" in capsys.readouterr().err
    bad = tmp_path / "m.json"
    bad.write_text('{"format": "automodel-model", "version": 1, "params": ["n"], "model": {"kind": "pickle"}}')
    assert main(["show", str(bad)]) == 2
    assert "unknown model kind" in capsys.readouterr().err
    out = tmp_path / "pred.csv"
    assert main(["predict", str(bad), str(runs_csv), "-o", str(out)]) == 2 and not out.exists()


def test_predict_missing_column(tmp_path, model_json, capsys):
    data = tmp_path / "rows.csv"
    data.write_text("n,cpu\n100,1\n")
    assert main(["predict", str(model_json), str(data)]) == 2
    assert "column 'p': missing" in capsys.readouterr().err


def test_console_script_help():
    done = subprocess.run([sys.executable, "-m", "automodel", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "fit" in done.stdout and "demo" in done.stdout
