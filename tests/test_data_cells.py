"""Cells: the one reader of CSV files and of numeric columns, and its one-line errors."""

import numpy as np
import pandas as pd
import pytest

from automodel.data.cells import numeric, read_csv
from automodel.errors import DataError


def test_numeric_checks_each_role_and_names_the_row():
    frame = pd.DataFrame({"cpu": [0.5, 1.0, 1.5], "size": ["1", "x", "3"]})
    with pytest.raises(DataError, match=r"runs.csv, row 4, column 'cpu': expected a free-CPU fraction in \(0, 1\], got 1.5"):
        numeric(frame, "cpu", "cpu", "runs.csv", 2)
    with pytest.raises(DataError, match=r"row 1, column 'size': expected a finite number, got 'x'"):
        numeric(frame, "size", "iterations", "runs.csv", 0)
    assert numeric(frame.iloc[:2], "cpu", "cpu", "runs.csv", 2).tolist() == [0.5, 1.0]


def test_read_csv_errors(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_csv(tmp_path / "absent.csv")
    with pytest.raises(DataError, match="is a directory"):
        read_csv(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="the file is empty"):
        read_csv(empty)
    header = tmp_path / "header.csv"
    header.write_text("time,n\n")
    with pytest.raises(DataError, match="header but no rows"):
        read_csv(header)
    ok = tmp_path / "ok.csv"
    ok.write_text("time, n\n1.5, 10\n")
    assert np.allclose(read_csv(ok)["n"], [10])  # spaces after commas are skipped


# -- issue 17: the one place that validates the numeric range of the data --------------------------
def test_cause1_times_and_parameters_outside_the_supported_range_are_named():
    """Times near 1e-300 gave ``T = 0`` and a model predicting 0; a parameter of 1e300 hung the SVD."""
    frame = pd.DataFrame({"time": [1.0, 1e-300], "n": [1.0, 1e300], "k": [0.0, 1e-200]})
    with pytest.raises(DataError, match=r"runs.csv, row 3, column 'time': expected a positive time "
                                        r"between 1e-100 and 1e\+100 \(the range automodel fits\), got 1e-300"):
        numeric(frame, "time", "time", "runs.csv", 2)
    with pytest.raises(DataError, match=r"column 'n': .* between 1e-100 and 1e\+100 .*got 1e\+300"):
        numeric(frame, "n", "n", "runs.csv", 2)
    with pytest.raises(DataError, match=r"column 'k': expected a finite number 0 or of magnitude 1e-100 to "
                                        r"1e\+100 \(the range automodel fits\), got 1e-200"):
        numeric(frame, "k", "k", "runs.csv", 2)
    assert numeric(frame.iloc[:1], "k", "k", "runs.csv", 2).tolist() == [0.0]


def test_cause5_an_integer_too_large_for_a_float_is_a_data_error(tmp_path):
    """A 400-digit cell raised OverflowError inside pandas."""
    path = tmp_path / "runs.csv"
    path.write_text("n,time\n" + "1" * 400 + ",1\n2,2\n")
    frame = read_csv(path)
    with pytest.raises(DataError, match=r"row 2, column 'n': expected a positive problem size between 1e-100 "
                                        r"and 1e\+100 \(the range automodel fits\), got 1{28}\.\.\. \(400 chars\)"):
        numeric(frame, "n", "n", str(path), 2)
    with pytest.raises(DataError, match="row 0, column 'n'"):
        numeric(pd.DataFrame({"n": [10 ** 400, 2]}), "n", "n", "<DataFrame>", 0)


def test_cause12_a_huge_cell_is_cut_in_the_message_and_numbers_print_plainly():
    """A 2 MB cell was echoed whole; ``inf`` printed as ``np.float64(inf)``."""
    frame = pd.DataFrame({"n": ["x" * 2_000_000, "2"], "time": [np.float64(np.inf), 1.0]})
    with pytest.raises(DataError) as err:
        numeric(frame, "n", "n", "runs.csv", 2)
    assert len(str(err.value)) < 200 and "(2000002 chars)" in str(err.value)
    with pytest.raises(DataError, match=r"got inf$"):
        numeric(frame, "time", "time", "runs.csv", 2)


def test_cause14_a_column_named_twice_is_an_error(tmp_path):
    """A second ``time`` column was silently renamed ``time.1`` and ignored; a DataFrame with two
    columns of one name crashed inside pandas."""
    path = tmp_path / "runs.csv"
    path.write_text("n,time,time\n1,1,9\n2,2,9\n")
    with pytest.raises(DataError, match=rf"^{path}, row 1, column 'time': the header names this column twice"):
        read_csv(path)
    frame = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["time", "n", "time"])
    with pytest.raises(DataError, match=r"column 'time': 2 columns have this name, expected one"):
        numeric(frame, "time", "time", "<DataFrame>", 0)


def test_two_columns_without_a_name_are_named_by_their_places(tmp_path):
    """Two empty names in a header were reported as "column 'nan': the header names this column twice";
    both readers (pandas' and the csv module's of predict) now say which columns have no name."""
    from automodel.data.rows import read_rows

    path = tmp_path / "runs.csv"
    path.write_text("n,p,,,time\n1,1,,,2\n2,2,,,3\n")
    for read in (read_csv, read_rows):
        with pytest.raises(DataError, match=rf"^{path}, row 1: columns 3, 4 have no name in the header, expected "
                                            "distinct column names$"):
            read(path)


def test_measured_process_counts_are_whole_numbers_points_to_predict_need_not_be():
    frame = pd.DataFrame({"p": [1.0, 2.5]})
    with pytest.raises(DataError, match=r"row 3, column 'p': expected a process count \(an integer >= 1\), got 2.5"):
        numeric(frame, "p", "p", "runs.csv", 2, measured=True)
    assert numeric(frame, "p", "p", "runs.csv", 2).tolist() == [1.0, 2.5]  # a curve over p may pass 2.5


def test_a_file_with_another_separator_says_so(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("time;n;p\n1;2;3\n")
    with pytest.raises(DataError, match=r"row 1: one column 'time;n;p'; automodel reads comma-separated "
                                        r"values and this file seems to use ';': save it comma-separated, "
                                        r"decimals with a point \(1.5\), or tab-separated as a .tsv file$"):
        read_csv(path)
    path.write_text("time,n\nnan,1\n,2\n")
    with pytest.raises(DataError, match=r"row 2, column 'time': expected a positive time, got 'nan'"):
        numeric(read_csv(path), "time", "time", str(path), 2)
    with pytest.raises(DataError, match=r"row 3, column 'time': .*got an empty cell"):
        numeric(read_csv(path).iloc[1:].reset_index(drop=True), "time", "time", str(path), 3)


def test_a_column_of_booleans_is_no_number(tmp_path, capsys) -> None:
    """pandas reads a CSV column of True/False as booleans, which numpy turned into 1 and 0: p = True
    predicted (and fitted) as one process, exit 0."""
    from automodel.cli import main

    runs = tmp_path / "fit.csv"
    runs.write_text("time,n,p\n" + "".join(f"{n / p},{n},{p}\n" for n in (100, 200, 400) for p in (1, 2, 4)))
    model = tmp_path / "m.json"
    assert main(["fit", str(runs), "-o", str(model), "--quiet"]) == 0
    rows = tmp_path / "rows.csv"
    rows.write_text("n,p\n100,True\n")
    capsys.readouterr()
    assert main(["predict", str(model), str(rows)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {rows}, row 2, column 'p': expected a positive process "
                                       "count, got True\n")
    runs.write_text("time,n,p\n1,100,True\n2,200,True\n3,400,True\n")
    assert main(["fit", str(runs), "-o", str(model), "--quiet"]) == 2
    assert "row 2, column 'p': expected a positive process count, got True" in capsys.readouterr().err
