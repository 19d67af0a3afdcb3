"""The bad-input corpus (``tests/bad_inputs/``): every reader and command, one file per fault.

Each case runs the command line in-process and asserts what a user must get: exit status 2, one line on
standard error that names the file (and the row or line and column where there is one) and says what
was expected, no traceback, no output file and no temporary file left behind, and an unchanged store.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import pytest

from automodel.cli import main

CORPUS = Path(__file__).parent / "bad_inputs"

#: (file in the corpus, arguments after ``automodel``, a fragment of the one-line message). ``{f}`` is
#: the corpus file, ``{out}`` an output path in a fresh folder, ``{model}`` a valid model file,
#: ``{runs}`` valid runs, ``{tmp}`` the fresh folder itself.
CASES = [
    ("fit_missing_time_column.csv", "fit {f} -o {out}", "column 'time': no such column for the 'time' role"),
    ("fit_semicolon_separated.csv", "fit {f} -o {out}", "row 1: one column 'time;n;p'; automodel reads comma"),
    ("fit_latin1_bytes.csv", "fit {f} -o {out}", "not a readable CSV file"),
    ("fit_empty.csv", "fit {f} -o {out}", "the file is empty"),
    ("fit_header_only.csv", "fit {f} -o {out}", "the file has a header but no rows"),
    ("fit_text_in_time.csv", "fit {f} -o {out}", "row 4, column 'time': expected a positive time, got 'fast'"),
    ("fit_negative_time.csv", "fit {f} -o {out}", "row 3, column 'time': expected a positive time, got -0.5"),
    ("fit_zero_time.csv", "fit {f} -o {out}", "row 6, column 'time': expected a positive time, got 0"),
    ("fit_nan_time.csv", "fit {f} -o {out}", "row 5, column 'time': expected a positive time, got 'nan'"),
    ("fit_empty_cell.csv", "fit {f} -o {out}", "row 7, column 'n': expected a positive problem size, got an empty cell"),
    ("fit_inf_time.csv", "fit {f} -o {out}", "row 2, column 'time': expected a positive time, got inf"),
    ("fit_huge_time.csv", "fit {f} -o {out}", "row 8, column 'time': expected a positive time between 1e-100"),
    ("fit_tiny_time.csv", "fit {f} -o {out}", "row 9, column 'time': expected a positive time between 1e-100"),
    ("fit_400_digit_n.csv", "fit {f} -o {out}", "row 4, column 'n': expected a positive problem size between 1e-100"),
    ("fit_long_cell.csv", "fit {f} -o {out}", "row 4, column 'n': expected a positive problem size, got 'xxxxxxxxxx"),
    ("fit_p_zero.csv", "fit {f} -o {out}", "row 5, column 'p': expected a positive process count, got 0"),
    ("fit_p_negative.csv", "fit {f} -o {out}", "row 5, column 'p': expected a positive process count, got -4"),
    ("fit_p_fractional.csv", "fit {f} -o {out}", "row 5, column 'p': expected a process count (an integer >= 1), got 1.5"),
    ("fit_n_zero.csv", "fit {f} -o {out}", "row 2, column 'n': expected a positive problem size, got 0"),
    ("fit_cpu_above_one.csv", "fit {f} -o {out}", "row 6, column 'cpu': expected a free-CPU fraction in (0, 1], got 1.5"),
    ("fit_cpu_zero.csv", "fit {f} -o {out}", "row 4, column 'cpu': expected a free-CPU fraction in (0, 1], got 0"),
    ("fit_bw_negative.csv", "fit {f} -o {out}", "row 10, column 'bw': expected a free-bandwidth fraction in (0, 1]"),
    ("fit_duplicate_column.csv", "fit {f} -o {out}", "row 1, column 'time': the header names this column twice"),
    ("fit_one_configuration.csv", "fit {f} -o {out}", "1 distinct configuration(s); the search needs at least 3"),
    ("fit_two_configurations.csv", "fit {f} -o {out}", "2 distinct configuration(s); the search needs at least 3"),
    ("fit_quoted_text.csv", "fit {f} -o {out}", "row 3, column 'time': expected a positive time, got 'one'"),
    ("valid_runs.csv", "fit {f} --param 'my col' -o {out}", "column 'my col': no such column for an extra parameter"),
    ("valid_runs.csv", "fit {f} -o {tmp}/absent/m.json", "the folder"),
    ("valid_runs.csv", "fit {f} -o {tmp}", "is a directory, expected a file name to write"),
    ("valid_runs.csv", "fit {tmp}", "is a directory with no CUBE profiles in its folders; expected a file of"),
    ("model_not_json.json", "show {f}", "not a valid model JSON file"),
    ("model_nan.json", "show {f}", "not a valid model JSON file (NaN is not allowed)"),
    ("model_wrong_format.json", "show {f}", "not an automodel model file"),
    ("model_template_list.json", "show {f}", "unknown template ['os.system']"),
    ("model_huge_coefficient.json", "show {f}", "coefficient 0 must be a finite number"),
    ("model_terms_mismatch.json", "show {f}", "'terms' and 'coefficients' must be lists of equal length"),
    ("model_future_version.json", "show {f}", "model file version 99 is not supported"),
    ("model_growth_source_not_object.json", "predict {f} {runs}", "'growth_source' must be objects"),
    ("model_valid.json", "show {tmp}", "is a directory, expected a model JSON file"),
    ("model_valid.json", "best-p {f} --n 400 --p-max 0", "p_max"),
    ("predict_missing_p.csv", "predict {model} {f} -o {out}", "column 'p': missing"),
    # runs without a column of the model's: a KeyError traceback of the plot
    ("report_missing_n.csv", "report {model} {f} -o {out}", "column 'n': missing; the model needs n, p"),
    # a cell that is no number: numpy's TypeError or ValueError in the plot
    ("plot_text_in_n.csv", "plot {model} {f} -o {out}.png", "row 3, column 'n': expected a positive problem size, got 'big'"),
    ("predict_text_in_n.csv", "predict {model} {f} -o {out}", "row 3, column 'n': expected a positive problem size, got 'big'"),
    ("space_not_toml.toml", "fit {runs} --space {f} -o {out}", "not valid TOML"),
    ("space_unknown_stage.toml", "fit {runs} --space {f} -o {out}", "[stages.magic]: unknown stage"),
    ("space_bad_term.toml", "fit {runs} --space {f} -o {out}", "an exponent is a fraction a/b"),
    ("space_bad_metric.toml", "fit {runs} --space {f} -o {out}", "unknown metric 'vibes'"),
    ("space_fit_not_table.toml", "fit {runs} --space {f} -o {out}", "'fit' must be a [fit] table, got 0"),
    ("extrap_no_parameter.txt", "kernels {f} --out {out}", "line 1: POINTS before PARAMETER"),
    ("extrap_points_after_data.txt", "kernels {f} --out {out}", "line 7: POINTS after DATA"),
    ("extrap_missing_data.txt", "kernels {f} --out {out}", "line 4: region 'main' has 2 DATA line(s) for 3 POINTS"),
    ("extrap_nan_data.txt", "kernels {f} --out {out}", "line 5: expected a finite number, got 'nan'"),
    ("extrap_duplicate_point.txt", "kernels {f} --out {out}", "line 2: point (2.0,) is given twice"),
    ("extrap_unknown_keyword.txt", "kernels {f} --out {out}", "line 3: unknown keyword 'EXPERIMENT'"),
    ("extrap_zero_point.txt", "kernels {f} --out {out}", "line 4, column 'p': expected a positive process count, got 0"),
    ("extrap_tiny_value.txt", "kernels {f} --out {out}", "line 6, column 'time': expected a finite number 0 or of"),
    ("kernels_missing_kernel_column.csv", "kernels {f} --out {out}", "column 'kernel': missing (the kernel column)"),
]


@pytest.mark.parametrize("name, args, fragment", CASES, ids=[f"{c[0]}:{c[1].split()[0]}" for c in CASES])
def test_bad_input_is_one_line_exit_2_nothing_left(tmp_path, capsys, name, args, fragment):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    path = CORPUS / name
    argv = args.format(f=path, out=out_dir / "result.json", model=CORPUS / "model_valid.json",
                       runs=CORPUS / "valid_runs.csv", tmp=out_dir)
    assert main(shlex.split(argv) + (["--quiet"] if argv.startswith("fit") else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith("automodel: error: ") and err.count("\n") == 1 and "Traceback" not in err, err[:500]
    assert fragment in err, err
    if "{tmp}" in args:  # the output path or folder at fault is named
        assert str(out_dir) in err, err
    elif "--p-max" not in args:  # the input file at fault is named (an option names itself)
        assert str(path) in err, err
    assert len(err) < 400
    assert list(out_dir.iterdir()) == []  # no output file, no temporary file


def _dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as con:
        return list(con.iterdump())


@pytest.mark.parametrize("name, fragment", [
    ("observe_negative_time.csv", "row 3, column 'time': expected a positive time, got -1"),
    ("observe_empty.csv", "the file is empty"),
    ("fit_duplicate_column.csv", "the header names this column twice"),
])
def test_bad_observe_leaves_the_store_unchanged(tmp_path, capsys, name, fragment):
    db = tmp_path / "runs.db"
    assert main(["observe", "--store", str(db), "--app", "a", str(CORPUS / "valid_runs.csv")]) == 0
    before = _dump(db)
    capsys.readouterr()
    assert main(["observe", "--store", str(db), "--app", "a", str(CORPUS / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and str(CORPUS / name) in err, err
    assert _dump(db) == before
