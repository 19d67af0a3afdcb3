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
    ds = load(df, aggregate="median")
    assert list(ds.frame["time"]) == [2.0, 4.0]
    assert list(ds.frame["count"]) == [3, 1]
    # the median's spread is the normalised median absolute deviation: the burst at 9 does not set it
    assert ds.frame["spread"].iloc[0] == pytest.approx(1.4826 * np.median(np.abs(np.array([1, 2, 9]) - 2)))
    assert list(load(df, aggregate="min").frame["time"]) == [1.0, 4.0]
    assert load(df, aggregate="mean").frame["spread"].iloc[0] == pytest.approx(np.std([1, 2, 9], ddof=1))


def _repeated(noise, reps=5, configs=12, seed=0):
    """``configs`` configurations of ``reps`` runs each, time ``n * (1 + noise(rng, size))``."""
    rng = np.random.default_rng(seed)
    n = np.repeat(np.arange(1.0, configs + 1), reps)
    return pd.DataFrame({"n": n, "time": n * (1 + noise(rng, n.size))})


def test_robust_aggregate_is_the_mean_under_even_noise():
    """Uniform 10 % noise: no run is an outlier, every configuration gets the mean of its runs (the
    efficient estimate the median is not)."""
    df = _repeated(lambda rng, k: rng.uniform(-0.1, 0.1, k))
    robust, mean = load(df).frame["time"], load(df, aggregate="mean").frame["time"]
    assert load(df).aggregate == "robust"
    np.testing.assert_allclose(robust, mean, rtol=1e-12)
    assert not np.allclose(robust, load(df, aggregate="median").frame["time"])


def test_robust_aggregate_drops_a_burst_and_keeps_the_rest():
    """One run 5x off: dropped from its configuration's mean; every other configuration unchanged."""
    df = _repeated(lambda rng, k: rng.normal(0, 0.02, k))
    burst = df.copy()
    burst.loc[7, "time"] *= 5  # configuration n = 2
    clean_mean = df.drop(index=7).groupby("n")["time"].mean().to_numpy()
    np.testing.assert_allclose(load(burst).frame["time"], clean_mean, rtol=1e-12)
    assert load(burst, aggregate="mean").frame["time"].iloc[1] > 1.5 * clean_mean[1]


def test_robust_aggregate_takes_the_median_of_heavy_tailed_or_wide_noise():
    """Runs under contention (most within 5 %, one in five 3-4x slower) and runs 2x apart: the mean
    of either is not a typical run, so the median is taken."""
    heavy = _repeated(lambda rng, k: np.where(rng.uniform(size=k) < 0.2, rng.uniform(2, 3, k),
                                               rng.normal(0, 0.03, k)), reps=15)
    wide = _repeated(lambda rng, k: np.exp(rng.normal(0, 0.5, k)) - 1)
    for df in (heavy, wide):
        np.testing.assert_allclose(load(df).frame["time"], load(df, aggregate="median").frame["time"])


@pytest.mark.parametrize("text, fragment", [
    ("time,n\n1.0,10\n-2,20\n", "row 3, column 'time': expected a positive time, got -2"),
    ("time,n\n1.0,10\n0,20\n", "row 3, column 'time'"),
    ("time,n\n1.0,10\nabc,20\n", "row 3, column 'time': expected a positive time, got 'abc'"),
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
