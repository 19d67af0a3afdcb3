"""automodel kernels: one line per kernel of an Extra-P text file or a CSV, models or a summary written."""

import json

import numpy as np
import pandas as pd
import pytest

from automodel.cli import main
from automodel.errors import ModelFileError
from automodel.model_file import load_models


def test_the_summary_csv_holds_no_spreadsheet_formula(tmp_path, capsys):
    """A kernel of the profile named '=1+1' or '@SUM(A1)', or a formula with a negative first coefficient,
    was a formula in a spreadsheet that opened the summary: each text cell that starts as one is quoted."""
    p = np.array([1.0, 2, 4, 8, 16])
    csv = tmp_path / "runs.csv"
    pd.DataFrame({"kernel": ["=1+1"] * 5 + ["@SUM(A1)"] * 5 + ["solve"] * 5, "p": np.tile(p, 3),
                  "time": np.tile(8 / p + 0.1, 3)}).to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--out", str(tmp_path / "s.csv")]) == 0
    summary = pd.read_csv(tmp_path / "s.csv")
    assert summary["kernel"].tolist() == ["'=1+1", "'@SUM(A1)", "solve"]
    assert not summary["formula"].str.match("[-=+@]").any()


def test_kernels_command(tmp_path, capsys):
    from benchmarks.extrap_text import format_text

    p = np.array([2.0, 4, 8, 16, 32])
    text = format_text(["p"], p[:, None], {"a": [[v] for v in 3 + p], "b": [[v] for v in 2 * p * np.log2(p)]})
    src = tmp_path / "profile.txt"
    src.write_text(text)
    assert main(["kernels", str(src), "--out", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    out = out[next(i for i, line in enumerate(out) if not line.startswith(("data:", " "))):]  # after the unit's line
    assert out[0].startswith("a [time]") and "T = " in out[0] and out[1].startswith("b [time]")
    assert set(load_models(tmp_path / "m.json")) == {"a [time]", "b [time]"}
    body = json.loads((tmp_path / "m.json").read_text())
    (tmp_path / "true.json").write_text(json.dumps({**body, "version": True}))  # read as version 1
    with pytest.raises(ModelFileError, match="not an automodel models file"):
        load_models(tmp_path / "true.json")

    csv = tmp_path / "runs.csv"
    pd.DataFrame({"name": ["x"] * 5, "p": p, "secs": 3 + p, "note": "run"}).to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--kernel", "name", "--time", "secs", "--param", "p",
                 "--out", str(tmp_path / "s.csv")]) == 0
    summary = pd.read_csv(tmp_path / "s.csv")
    assert summary["kernel"].tolist() == ["x"] and summary["formula"].notna().all()

    assert main(["kernels", str(csv), "--out", str(tmp_path / "s.txt")]) == 2
    assert "expected a file name ending in .json" in capsys.readouterr().err
    assert not (tmp_path / "s.txt").exists()
    assert main(["kernels", str(csv), "--kernel", "name", "--time", "secs"]) == 0  # p by its name; 'note' constant
    capsys.readouterr()
    pd.DataFrame({"name": ["x"] * 10, "p": np.tile(p, 2), "secs": np.r_[3 + p, 30 + p],
                  "note": ["fast"] * 5 + ["slow"] * 5}).to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--kernel", "name", "--time", "secs"]) == 2  # as fit: never pooled
    err = capsys.readouterr().err
    assert "\n" not in err.strip() and "'note' (2 values)" in err and "--ignore note" in err
    assert main(["kernels", str(csv), "--kernel", "name", "--time", "secs", "--where", "note == 'slow'"]) == 0
    assert "T = " in capsys.readouterr().out


def test_kernels_of_two_parameters_import_no_scipy(tmp_path):
    """The PMNF route judges each parameter's blocks on the lines of the grid (line sums and an F test)
    in numpy: importing scipy.sparse and scipy.special for them cost 0.3 s of CPU, a fifth of the
    command on 100 kernels (issue 35)."""
    import subprocess
    import sys

    from benchmarks.extrap_text import format_text

    p, n = (a.ravel() for a in np.meshgrid([2.0, 4, 8, 16, 32], [1024.0, 2048, 4096, 8192, 16384], indexing="ij"))
    rng = np.random.default_rng(0)
    time = [[v] for v in (2 + 1e-4 * n ** 1.5 * p ** (1 / 3)) * (1 + 0.01 * rng.standard_normal(25))]
    src = tmp_path / "two.txt"
    src.write_text(format_text(["p", "n"], np.c_[p, n], {"k": time}))
    code = ("import sys; from automodel.cli import main; from automodel.solve import lines; calls = []; "
            "f = lines.effect_pvalue; lines.effect_pvalue = lambda *a: calls.append(1) or f(*a); "
            "import automodel.search.stages.pmnf as pmnf; pmnf.effect_pvalue = lines.effect_pvalue; "
            f"assert main(['kernels', {str(src)!r}]) == 0; assert calls, 'no block judged on lines'; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines()[-1] == "[]"


def test_a_table_of_regions_is_told_the_options_that_name_its_columns(tmp_path, capsys):
    """``region, procs, time_us``: "column 'kernel': missing" and then "column 'time': missing", with no
    word of --kernel region or --time time_us."""
    csv = tmp_path / "prof.csv"
    csv.write_text("region,procs,time_us\n" + "".join(f"{r},{p},{p * 10 + len(r)}\n"
                                                       for r in ("solve", "halo") for p in (1, 2, 4, 8)))
    assert main(["kernels", str(csv)]) == 2
    assert capsys.readouterr().err.strip().endswith("the table has region, procs, time_us (--kernel region)")
    assert main(["kernels", str(csv), "--kernel", "region"]) == 2
    assert capsys.readouterr().err.strip().endswith("(--time time_us, read in us)")
    assert main(["kernels", str(csv), "--kernel", "region", "--time", "time_us", "--param", "procs"]) == 0


def test_kernels_whose_reader_goes_away_still_write_their_models(tmp_path):
    """``automodel kernels many.csv --out models.json | head``: the lines of 1500 kernels overflowed the
    pipe after head went away, the command ended (141) and models.json, minutes of fitting, was lost."""
    import subprocess
    import sys

    rows = [f"kernel_number_{k:04d}_with_a_long_name,{p},{(k + 1) * (1 / p + 0.01 * np.log2(2 * p)):.6g}\n"
            for k in range(1500) for p in (1, 2, 4, 8)]
    (tmp_path / "many.csv").write_text("kernel,p,time\n" + "".join(rows))
    out = tmp_path / "models.json"
    proc = subprocess.Popen([sys.executable, "-m", "automodel", "kernels", str(tmp_path / "many.csv"), "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after the first line
    proc.stderr.read()
    assert proc.wait(timeout=300) in (0, 141) and len(json.loads(out.read_text())["models"]) == 1500


def test_the_kernels_lines_say_the_unit_of_their_times_as_fit_does(tmp_path, capsys):
    """The lines gave each kernel's formula, a time, with no unit anywhere ('solve  rel_s 0.012  T = ...');
    fit's first line says 'values in s (else --unit ms, us or ns)'. kernels now says it in the same
    words above the kernels (and on standard error with --json), in the unit --unit gives."""
    csv = tmp_path / "runs.csv"
    p = np.array([1.0, 2, 4, 8, 16])
    pd.DataFrame({"kernel": ["solve"] * 5 + ["halo"] * 5, "p": np.r_[p, p],
                  "time": np.r_[8 / p + 0.1, 0.1 * np.log2(p) + 0.2]}).to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--wide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"data: {csv}: 2 kernels; values in s (else --unit ms, us or ns)"
    assert out[1].startswith("solve ") and out[2].startswith("halo ")
    assert main(["kernels", str(csv), "--unit", "ms", "--json"]) == 0
    run = capsys.readouterr()  # within 80 columns: the path on a line of its own where it is long
    assert " ".join(run.err.split()).startswith(f"data: {csv}: 2 kernels; values in ms note: ") and json.loads(run.out)
    assert main(["fit", str(csv), "--kernel", "solve", "--quiet", "--templates", "none"]) == 0
    assert "values in s (else --unit ms, us or ns)" in " ".join(capsys.readouterr().out.split())


def test_kernels_where_is_recorded_in_each_model_as_fit_records_it(tmp_path):
    csv = tmp_path / "runs.csv"
    p = np.array([1.0, 2, 4, 8, 16])
    pd.DataFrame({"kernel": ["solve"] * 5 + ["halo"] * 5, "p": np.r_[p, p],
                  "time": np.r_[8 / p + 0.1, 0.1 * np.log2(p) + 0.2]}).to_csv(csv, index=False)
    assert main(["kernels", str(csv), "--where", "p >= 2", "--unit", "ms", "--out", str(tmp_path / "m.json")]) == 0
    models = load_models(tmp_path / "m.json")
    assert {(m.where, m.unit) for m in models.values()} == {("p >= 2", "ms")}
