"""automodel predict from a model file: predictions, and a missing column as a one-line error."""

import json

import numpy as np
import pandas as pd

from automodel.cli import main


def test_predict_writes_a_column_of_predictions(runs_csv, model_json, tmp_path):
    out_csv = tmp_path / "pred.csv"
    assert main(["predict", str(model_json), str(runs_csv), "-o", str(out_csv)]) == 0
    pred = pd.read_csv(out_csv)
    assert "predicted" in pred.columns and len(pred) == 56
    assert np.median(np.abs(pred["predicted"] / pred["time"] - 1)) < 0.05


def test_predict_missing_column(tmp_path, model_json, capsys):
    data = tmp_path / "rows.csv"
    data.write_text("n,cpu\n100,1\n")
    assert main(["predict", str(model_json), str(data)]) == 2
    assert "column 'p': missing" in capsys.readouterr().err


def test_predict_parts_columns(tmp_path, capsys):
    import numpy as np
    import pandas as pd
    import pytest

    from automodel.cli import main
    from tests.conftest import make_runs

    runs = tmp_path / "runs.csv"
    make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-4 * n * np.log2(p) + 0.01, np.linspace(200, 1000, 5),
              [1, 2, 4, 8], noise=0.0).to_csv(runs, index=False)
    assert main(["fit", str(runs), "-o", str(tmp_path / "m.json"), "--quiet", "--templates", "none"]) == 0
    pd.DataFrame({"n": [2000.0], "p": [16.0]}).to_csv(tmp_path / "q.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv"), "--parts",
                 "-o", str(tmp_path / "out.csv")]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    parts = [c for c in out.columns if c in ("computation", "communication", "overhead")]
    assert "computation" in parts
    assert out[parts].sum(axis=1).iloc[0] == pytest.approx(out["predicted"].iloc[0])


def test_a_row_of_another_kernel_than_the_chosen_one_is_refused(tmp_path, capsys):
    """With --kernel and a 'kernel' column, every row was predicted with the chosen kernel's model and
    printed under its own kernel's name: halo's rows got solve's times, exit 0."""
    profile, models, rows = tmp_path / "profile.jsonl", tmp_path / "models.json", tmp_path / "rows.csv"
    profile.write_text("".join(f'{{"params": {{"p": {p}}}, "callpath": "{name}", "value": {t * p}}}\n'
                               for name, t in (("solve", 1.0), ("halo", 3.0)) for p in (1, 2, 4, 8)))
    assert main(["kernels", str(profile), "--out", str(models)]) == 0
    rows.write_text("kernel,p\nsolve,16\nhalo,16\n")
    capsys.readouterr()
    assert main(["predict", str(models), str(rows), "--kernel", "solve"]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {rows}, row 3, column 'kernel': a row of kernel 'halo', but "
                                       "--kernel chose 'solve'; drop --kernel to predict each row with its kernel's "
                                       "model\n")
    rows.write_text("kernel,p\nsolve,16\n")
    assert main(["predict", str(models), str(rows), "--kernel", "solve", "--json"]) == 0
    assert abs(json.loads(capsys.readouterr().out)[0]["predicted"] - 16.0) < 1e-6


def test_the_table_says_its_unit_its_band_and_which_rows_are_extrapolated(tmp_path, capsys):
    """A model of ``procs, size, walltime_ms``: ``predict`` printed ``3672.967883 2260.540886 5967.904919``
    with no unit, no level and no word that every row lay beyond the runs; rows given as ``n, p`` were
    printed without those columns ("not shown: n, p")."""
    from tests.conftest import make_runs

    runs = make_runs(lambda n, p, c, b: 1e-3 * n / p + 2.0, [1000.0, 2000, 4000, 8000], [1, 2, 4, 8], noise=0.0)
    runs = runs.rename(columns={"time": "walltime_ms", "p": "procs", "n": "size"})[["size", "procs", "walltime_ms"]]
    runs.to_csv(tmp_path / "runs.csv", index=False)
    assert main(["fit", str(tmp_path / "runs.csv"), "--time", "walltime_ms", "--n", "size", "--p", "procs",
                 "-o", str(tmp_path / "m.json"), "--quiet", "--templates", "none"]) == 0
    (tmp_path / "q.csv").write_text("n,p\n4000,4\n16000,64\n")
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].split() == ["n", "p", "predicted", "lower", "upper"] and "not shown" not in out
    assert " ".join(err.split()) == ("times in ms; lower, upper: the 90% band of one run; 1 of 2 rows beyond "
                                     "the measured range (extrapolated)")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv"), "--json"]) == 0
    assert capsys.readouterr().err == ""  # a script's JSON comes alone


def test_the_table_prints_times_with_significant_digits_as_fit_does(tmp_path, capsys):
    """Times were printed with six decimals: ``0.000000`` for a time of microseconds, ``348269.872415``
    for a large one. The table now reads as fit's 'predicted 0.005884 s (90% band 0.00568 to 0.0061 s)'
    (4 significant digits, 3 for the band's ends); --json and -o keep every digit."""
    from automodel import Model
    from automodel.model.best_p import figure
    from automodel.model.core import TermModel
    from automodel.space.parse import parse_term

    model = Model(TermModel((parse_term("n"),), (1.234567e-12,)), params=("n",), roles={}, ranges={"n": [1.0, 1e6]})
    model.save(tmp_path / "m.json")
    (tmp_path / "q.csv").write_text("n\n1000\n3e17\n")
    exact = model.predict({"n": [1000.0, 3e17]})
    for wide in ([], ["--wide"]):
        assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv"), *wide]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [line.split()[1] for line in lines[1:]] == [figure(t, 4) for t in exact] == ["1.235e-09", "370370"]
        assert "0.000000" not in lines[1] and "370370.1" not in lines[2]
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv"), "--json"]) == 0
    assert [r["predicted"] for r in json.loads(capsys.readouterr().out)] == exact.tolist()
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "q.csv"), "-o", str(tmp_path / "o.csv")]) == 0
    assert pd.read_csv(tmp_path / "o.csv")["predicted"].tolist() == exact.tolist()
