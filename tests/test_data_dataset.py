import numpy as np
import pandas as pd
import pytest

from automodel.data import load
from automodel.errors import DataError


def write(tmp_path, text, name="runs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_roles_default_and_absent(tmp_path):
    ds = load(write(tmp_path, "time,n,p\n1.0,10,1\n2.0,20,1\n"))
    assert ds.params == ("n", "p")
    assert ds.roles["time"] == "time"


def test_role_mapping_and_extra_params():
    df = pd.DataFrame({"secs": [1.0, 2.0, 3.0], "size": [1, 2, 3], "ranks": [1, 1, 2], "iters": [5, 5, 6]})
    ds = load(df, time="secs", n="size", p="ranks", params=["iters"], explicit=["time", "n", "p"])
    assert ds.params == ("n", "p", "iters")
    assert ds.roles == {"n": "size", "p": "ranks", "iters": "iters", "time": "secs"}


def test_repetitions_median_and_spread():
    df = pd.DataFrame({"time": [1.0, 2.0, 9.0, 4.0], "n": [1, 1, 1, 2]})
    ds = load(df)
    assert list(ds.frame["time"]) == [2.0, 4.0]
    assert list(ds.frame["count"]) == [3, 1]
    assert ds.frame["spread"].iloc[0] == pytest.approx(np.std([1, 2, 9], ddof=1))
    assert list(load(df, aggregate="min").frame["time"]) == [1.0, 4.0]


@pytest.mark.parametrize("text, fragment", [
    ("time,n\n1.0,10\n-2,20\n", "row 3, column 'time': expected a positive time in seconds, got -2"),
    ("time,n\n1.0,10\n0,20\n", "row 3, column 'time'"),
    ("time,n\n1.0,10\nabc,20\n", "row 3, column 'time': expected a positive time in seconds, got 'abc'"),
    ("time,n\n1.0,10\n2.0,\n", "row 3, column 'n': expected a positive problem size, got an empty cell"),
    ("time,n\n1.0,inf\n", "row 2, column 'n'"),
    ("time,n,cpu\n1.0,10,1.5\n", "row 2, column 'cpu': expected a free-CPU fraction in (0, 1], got 1.5"),
    ("", "the file is empty"),
    ("time,n\n", "no rows"),
    ("n,p\n1,2\n", "column 'time': no such column"),
])
def test_bad_input_names_file_row_column(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(DataError) as err:
        load(path)
    assert fragment in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_explicit_role_must_exist(tmp_path):
    path = write(tmp_path, "time,n\n1,2\n")
    with pytest.raises(DataError, match="column 'procs': no such column for the 'p' role"):
        load(path, p="procs", explicit=["p"])
    assert load(path, p="procs").params == ("n",)  # default names may be absent


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load(tmp_path / "nope.csv")
