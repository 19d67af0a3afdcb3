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
