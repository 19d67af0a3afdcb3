"""Issue 31, cause 4: the layout of a CSV file (header width, blank lines, trailing separators) read
right; a row with more cells than the header is a one-line error, never a shifted table."""

import warnings

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.data import read_csv
from automodel.data.readers import read
from automodel.errors import DataError

RUNS = [(n, p, 1e-4 * n / p + 0.01 * p) for p in (1, 2, 4, 8) for n in (1000, 2000, 4000, 8000)]


def _write(tmp_path, header, rows, end=""):
    path = tmp_path / "runs.csv"
    path.write_text(header + "\n" + "".join(",".join(f"{v:g}" for v in row) + end + "\n" for row in rows))
    return path


def test_a_header_with_one_name_fewer_than_the_rows_is_refused(tmp_path, capsys):
    path = _write(tmp_path, "p,time", RUNS)  # the 'n' name is missing: pandas made n the index
    with pytest.raises(DataError, match=r"runs\.csv, row 2: 3 cells, but the header names 2 columns"):
        read_csv(path)
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "row 2: 3 cells" in err


def test_an_unquoted_thousands_separator_names_its_row(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("n,p,time\n1000,1,0.1\n2,000,2,0.2\n")
    with pytest.raises(DataError, match=r"row 3: 4 cells, but the header names 3 columns; .*1,000"):
        read(path)


def test_trailing_separators_are_not_cells(tmp_path):
    path = _write(tmp_path, "n,p,time", RUNS, end=",")
    frame = read_csv(path)
    assert list(frame.columns) == ["n", "p", "time"]
    assert np.allclose(frame.to_numpy(float), np.array(RUNS))
    model = automodel.fit(path, progress=False).best
    assert model.params == ("n", "p")


def test_blank_lines_do_not_move_the_row_a_message_names(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("n,p,time\n\n1000,1,0.1\n   \n\n2000,1,0.2\n4000,1,-3\n")
    with pytest.raises(DataError, match=r"runs\.csv, line 7, column 'time': expected a positive time"):
        automodel.fit(path, progress=False)


def test_a_large_file_with_a_bad_cell_gives_no_pandas_warning(tmp_path):
    rows = 400_000
    frame = pd.DataFrame({"n": np.tile([1000, 2000, 4000, 8000], rows // 4), "p": 2 ** (np.arange(rows) % 4),
                          "time": 0.5})
    frame["time"] = frame["time"].astype(object)
    frame.loc[rows - 3, "time"] = "oops"
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataError, match=rf"big\.csv, row {rows - 1}, column 'time'.*got 'oops'"):
            automodel.fit(path, progress=False)
