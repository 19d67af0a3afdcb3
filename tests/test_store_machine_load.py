"""Machine-load samples: recorded and imported per host, filled into runs, forecast."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from automodel import store as S
from automodel.errors import DataError
from test_store_observe import _grid


def test_load_samples_fill_runs_and_forecast(store_url, tmp_path):
    path = store_url
    for i in range(40):  # two hosts; host b is the busier one
        S.record(path, cpu=0.9, bw=0.8, host="a", at=float(i))
        S.record(path, cpu=0.5 + 0.01 * (i % 2), bw=0.9, host="b", at=float(i))
    csv = tmp_path / "samples.csv"
    pd.DataFrame({"time": [40.0, 41.0], "host": ["a", "a"], "cpu": [0.9, 0.9], "bw": [0.8, 0.8]}).to_csv(csv, index=False)
    assert S.import_samples(path, csv) == 2
    runs = _grid().drop(columns=["cpu", "bw"])
    runs["start"], runs["end"] = 0.0, 39.0
    rep = S.observe(path, "app", runs)
    got = S.runs(path, "app")
    np.testing.assert_allclose(got["cpu"], 0.505)  # min over hosts of each host's average
    np.testing.assert_allclose(got["bw"], 0.8)
    f, src = S.forecast_load(path, "cpu")
    assert "host b" in src and 0.49 < f.value < 0.52
    with pytest.raises(DataError, match="in \\(0, 1\\]"):
        S.record(path, cpu=1.5)
    assert rep.created


@pytest.mark.parametrize("kwargs, message", [
    ({"host": "a\x1b[2Jb"}, "--host: not a host name ('a\\x1b[2Jb' holds the non-printable character '\\x1b')"),
    ({"host": "h" * 201}, "--host: not a host name (expected 1 to 200 characters, got 201)"),
    ({"host": ""}, "--host: not a host name (expected 1 to 200 characters, got 0)"),
    ({"at": 1e300}, "--at: expected a time in seconds since the epoch (a finite number >= 0, 0 or of magnitude"),
    # stored, it stayed the newest sample: every forecast after it gave its value
    ({"at": 1e20}, "--at: expected a time no later than now (seconds since the epoch, up to 300 s of clock skew)"),
])
def test_a_sample_that_cannot_be_stored_or_shown_is_refused(tmp_path, kwargs, message):
    """A host with terminal escapes was stored and printed raw by load forecast; 201 characters broke
    a server's VARCHAR(200); a time of 1e300 was stored although a CSV of samples refuses it."""
    db = tmp_path / "s.db"
    with pytest.raises(DataError) as err:
        S.record(db, cpu=0.5, **kwargs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert not db.exists()


def test_an_empty_host_cell_names_its_row(tmp_path):
    """It was the database's NOT NULL constraint, naming no file, row or column."""
    path = tmp_path / "samples.csv"
    path.write_text("time,host,cpu\n1,a,0.5\n2,,0.5\n")
    with pytest.raises(DataError, match=r"samples.csv, row 3, column 'host': not a host name \(expected 1 to 200"):
        S.import_samples(tmp_path / "s.db", path)


def test_a_sample_from_the_future_names_its_row(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text(f"time,host,cpu\n1,a,0.5\n{time.time() + 86400:.0f},a,0.5\n")
    with pytest.raises(DataError, match=r"samples.csv, row 3, column 'time': expected a time no later than now"):
        S.import_samples(tmp_path / "s.db", path)
    assert not (tmp_path / "s.db").exists()
    path.write_text(f"time,host,cpu\n1,a,0.5\n{time.time() + 60:.0f},a,0.5\n")  # within the clock skew
    assert S.import_samples(tmp_path / "s.db", path) == 2


def test_importing_a_file_of_samples_again_adds_nothing(store_url, tmp_path):
    """Each import stored every row again (and a row twice in the file twice): the forecasts then
    counted those samples two or more times."""
    path = tmp_path / "samples.csv"
    path.write_text("time,host,cpu,bw\n1,a,0.5,0.5\n1,a,0.6,0.5\n1,a,0.6,0.5\n2,b,0.5,1\n")
    assert S.import_samples(store_url, path) == 3
    assert S.import_samples(store_url, path) == 0
    stored = S.samples(store_url)
    assert len(stored) == 3 and sorted(stored["host"]) == ["a", "a", "b"]
