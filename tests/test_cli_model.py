"""automodel show and best-p on a model file."""

import json

import pandas as pd
import pytest

from automodel.cli import main
from automodel.model_file import load_model


def test_show_every_format_and_best_p(model_json, capsys):
    model = load_model(model_json)
    shown = {}
    for fmt in ("text", "latex", "python", "c", "json"):
        assert main(["show", str(model_json), "--format", fmt]) == 0
        shown[fmt] = capsys.readouterr().out
    assert json.loads(shown["json"])["formula"] == model.formula
    assert "def predicted_time(n, p):" in shown["python"] and "double predicted_time(double n, double p)" in shown["c"]
    assert r"\log_{2}" in shown["latex"] and "log2(p)" in shown["text"]
    assert main(["best-p", str(model_json), "--n", "5000", "--p-max", "256"]) == 0
    found = model.best_p(n=5000, p_max=256)
    p, t = found.p, found.time
    assert capsys.readouterr().out.startswith(f"best p = {p}")


def test_cause8_best_p_takes_counts_as_typed_and_refuses_nonsense_in_one_line(model_json, capsys):
    """Issue 17, causes 7 and 8: ``--p-max 1e11`` was an argparse error (and, as an integer, asked for
    745 GiB); ``--p-min -10``, ``--n nan``, ``--cpu 0`` printed ``best p = -10 (predicted time inf s)``."""
    found = load_model(model_json).best_p(n=5000, p_max=10 ** 11)
    assert main(["best-p", str(model_json), "--n", "5000", "--p-max", "1e11"]) == 0
    head, time = found.lines()
    assert capsys.readouterr().out == f"best {head}\n  {time}\n"
    for args, message in ((["--p-min", "-10"], "p_min must be a whole number from 1 to 2^53, got -10"),
                          (["--p-max", "2.5"], "p_max must be a whole number from 1 to 2^53, got 2.5"),
                          (["--n", "nan"], "n must be a finite number, got nan"),
                          (["--cpu", "0"], "cpu must be a free-CPU fraction in (0, 1], got 0"),
                          (["--cpu", "5"], "cpu must be a free-CPU fraction in (0, 1], got 5")):
        assert main(["best-p", str(model_json), "--n", "5000", *args]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"automodel: error: {message}\n"


@pytest.mark.parametrize("param, message", [("n=3", "--param n: give n with --n, not --param"),
                                            ("p=3", "--param p: best-p chooses p; give the other parameters")])
def test_best_p_refuses_a_param_with_its_own_option(model_json, capsys, param, message):
    """``--param n=3`` reached Model.best_p as a second n: a TypeError traceback."""
    assert main(["best-p", str(model_json), "--n", "5000", "--param", param]) == 2
    assert capsys.readouterr().err == f"automodel: error: {message}\n"


def test_best_p_refuses_a_param_given_twice(model_json, capsys):
    """``--param k=2 k=200`` answered for k = 200 alone, without a word about k = 2."""
    assert main(["best-p", str(model_json), "--n", "5000", "--param", "k=2", "k=200"]) == 2
    assert capsys.readouterr().err == ("automodel: error: --param 'k=200': k is given twice (k=2 and k=200), "
                                       "expected each name once\n")


def test_a_level_a_hair_below_1_is_a_band(model_json, tmp_path, capsys):
    """(1 + level) / 2 rounded to 1.0 for --level 0.9999999999999999: a ValueError traceback."""
    rows = tmp_path / "rows.csv"
    rows.write_text("n,p\n5000,4\n")
    assert main(["predict", str(model_json), str(rows), "--level", "0.9999999999999999", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert 0 < row["lower"] < row["predicted"] < row["upper"] < float("inf")


def test_predict_and_best_p_say_when_they_assume_a_dedicated_machine(tmp_path, runs_loaded, capsys):
    """Issue 14: ``predict model.json`` and ``best-p`` assumed cpu = bw = 1 without saying so; with
    ``--load-from STORE`` they forecast the load from its samples (NWS) and say so."""
    from automodel import store as S

    data = tmp_path / "runs.csv"
    runs_loaded.to_csv(data, index=False)
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--quiet", "-o", str(out)]) == 0
    model = load_model(out)
    loads = [q for q in ("cpu", "bw") if q in model.params]
    assert loads
    query = tmp_path / "q.csv"
    pd.DataFrame({"n": [4000.0], "p": [8.0]}).to_csv(query, index=False)
    capsys.readouterr()
    assert main(["predict", str(out), str(query)]) == 0
    err = " ".join(capsys.readouterr().err.split())  # wrapped to 80 columns
    assert all(f"warning: {query}: no column '{q}': {q} = 1 assumed (a dedicated machine" in err for q in loads)
    assert main(["best-p", str(out), "--n", "4000"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert all(f"warning: {q} = 1 assumed (a dedicated machine; --{q} or --load-from STORE" in err for q in loads)
    assert main(["best-p", str(out), "--n", "4000", "--cpu", "0.5", "--bw", "0.5"]) == 0
    assert "assumed" not in capsys.readouterr().err
    store = str(tmp_path / "load.db")
    for i, value in enumerate((0.5, 0.5, 0.5, 0.5)):
        S.record(store, cpu=value, bw=value, host="node1", at=1_000_000.0 + i)
    assert main(["predict", str(out), str(query), "--load-from", store]) == 0
    forecast = capsys.readouterr()
    assert all(f"{q} forecast 0.5 from {store}" in " ".join(forecast.err.split()) for q in loads)
    at_half = model.predict({"n": [4000.0], "p": [8.0], "cpu": [0.5], "bw": [0.5]})[0]
    assert float(forecast.out.splitlines()[1].split()[2]) == pytest.approx(at_half, rel=1e-3)  # 4 digits shown


def test_best_p_says_what_the_model_does_not_use(model_json, capsys):
    """``--cpu`` for a model without a cpu term is said not to be used; an extra parameter the model
    does not have (a misspelt name) is a one-line error naming the model's parameters (issue 32)."""
    assert main(["best-p", str(model_json), "--n", "5000", "--cpu", "0.5"]) == 0
    assert "--cpu 0.5 not used: the model does not depend on cpu" in capsys.readouterr().err
    assert main(["best-p", str(model_json), "--n", "5000", "--param", "iters=3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "the model has no parameter 'iters' (its parameters: n, p)" in err


def test_show_wraps_code_that_still_runs(model_json, capsys):
    """``show --format python`` within 80 columns is code that computes what the model predicts."""
    model = load_model(model_json)
    assert main(["show", str(model_json), "--format", "python"]) == 0
    source = capsys.readouterr().out
    assert max(map(len, source.splitlines())) <= 80
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102  (the code this command exports)
    assert namespace["predicted_time"](5000.0, 16.0) == pytest.approx(float(model.predict({"n": [5000.0], "p": [16.0]})[0]))


def test_best_p_without_n_names_the_column_the_size_was_read_from(tmp_path, capsys):
    """A model of ``size, procs``: "depends on n: give --n N" spoke of an n the newcomer's file never had."""
    from tests.conftest import make_runs

    runs = make_runs(lambda n, p, c, b: 1e-3 * n / p + 2.0, [1000.0, 2000, 4000, 8000], [1, 2, 4, 8], noise=0.0)
    runs.rename(columns={"n": "size"})[["size", "p", "time"]].to_csv(tmp_path / "runs.csv", index=False)
    assert main(["fit", str(tmp_path / "runs.csv"), "--n", "size", "-o", str(tmp_path / "m.json"), "--quiet",
                 "--templates", "none"]) == 0
    capsys.readouterr()
    assert main(["best-p", str(tmp_path / "m.json")]) == 2
    assert capsys.readouterr().err.strip().endswith("depends on n (the column 'size'): give --n N")
    # show: what n and p are, in the file's names, and the unit, under the formula
    assert main(["show", str(tmp_path / "m.json")]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "T in s; n: column size, 1000 to 8000; p: 1 to 8"


def test_fit_where_is_recorded_in_the_model_file_and_shown(runs_csv, model_json, tmp_path, capsys):
    """A model fitted with --where kept no trace of it: show, report and evaluate on the same runs file
    spoke of it as a model of every row. The model file's options now keep the condition (a file without
    it still loads: every row), and show, report, evaluate and fit's own summary say it."""
    out = tmp_path / "m.json"
    assert main(["fit", str(runs_csv), "--where", "n >= 600", "--quiet", "--top", "1", "-o", str(out)]) == 0
    assert "; the rows where n >= 600" in " ".join(capsys.readouterr().out.split())  # fit's data line
    model = load_model(out)
    assert json.loads(out.read_text())["options"]["where"] == "n >= 600" == model.where
    assert model.ranges["n"][0] == 600
    assert main(["show", str(out)]) == 0
    assert "; fitted on the rows where n >= 600" in " ".join(capsys.readouterr().out.split())
    assert main(["evaluate", str(out), str(runs_csv)]) == 0
    assert " ".join(capsys.readouterr().err.split()) == (
        f"note: {out} was fitted on the rows where n >= 600 (fit --where); scored here on every row of {runs_csv}")
    assert main(["report", str(out), str(runs_csv), "-o", str(tmp_path / "r.html")]) == 0
    assert "; fitted on the rows where <code>n &gt;= 600</code>" in (tmp_path / "r.html").read_text()
    # a model of every row (and a file of before): no condition, nothing said
    assert "where" not in json.loads(model_json.read_text())["options"] and load_model(model_json).where == ""
    capsys.readouterr()
    assert main(["show", str(model_json)]) == 0 and "rows where" not in capsys.readouterr().out
    assert main(["evaluate", str(model_json), str(runs_csv)]) == 0 and capsys.readouterr().err == ""
