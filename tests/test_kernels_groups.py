"""Kernels grouped by their points (automodel.kernels.groups): aggregation, bad kernels, repetition noise."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.kernels.groups import groups, noise


def _kernels(param: str, values: np.ndarray, n_kernels: int, seed: int = 0, reps: int = 1) -> pd.DataFrame:
    """Kernels a + b x^e with 3 % noise, one row per repetition."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_kernels):
        a, b, e = *rng.uniform(0.5, 5.0, 2), rng.choice([0.5, 1.0, 1.5])
        for x in values:
            for _ in range(reps):
                rows.append({"kernel": f"k{k}", param: x, "time": (a + b * x ** e) * (1 + 0.03 * rng.standard_normal())})
    return pd.DataFrame(rows)


def test_groups_share_points_and_name_what_cannot_be_modelled():
    frame = _kernels("p", 2.0 ** np.arange(1, 6), 3, seed=1, reps=2)
    frame = pd.concat([frame, pd.DataFrame({"kernel": ["few"] * 2, "p": [2.0, 4.0], "time": [1.0, 2.0]}),
                       pd.DataFrame({"kernel": ["neg"] * 3, "p": [2.0, 4.0, 8.0], "time": [1.0, -2.0, 3.0]})])
    names, found, bad, _ = groups(frame, "kernel", "time", ["p"], "<t>", 0, "median")
    assert names == ["k0", "k1", "k2", "few", "neg"]
    (group,) = found
    assert group.names == ("k0", "k1", "k2") and group.values.shape == (5, 3) and (group.count == 2).all()
    want = frame[frame["kernel"] == "k1"].groupby("p")["time"].median().to_numpy()
    np.testing.assert_array_equal(group.values[:, 1], want)
    assert bad[3][0] == 2 and "at least 3" in bad[3][1] and "is negative" in bad[4][1]


@pytest.mark.parametrize("name, problem", [("a\x1bb", "holds the non-printable character '\\x1b'"),
                                           ("x" * 201, "expected 1 to 200 characters, got 201")])
def test_a_kernel_name_a_models_file_cannot_hold_names_its_row(name, problem):
    """kernels --out wrote such names into a models file that its own loader then refused."""
    frame = _kernels("p", 2.0 ** np.arange(1, 5), 2)
    frame.loc[5, "kernel"] = name
    with pytest.raises(automodel.DataError) as err:
        groups(frame, "kernel", "time", ["p"], "k.csv", 2, "median")
    assert str(err.value).startswith("k.csv, row 7, column 'kernel': not a kernel name (")
    assert problem in str(err.value) and "\n" not in str(err.value)


def test_repetition_noise_per_kernel_matches_the_dataset():
    frame = _kernels("p", 2.0 ** np.arange(1, 6), 4, seed=9, reps=3)
    for aggregate in ("median", "mean"):
        _, (group,), _, _ = groups(frame, "kernel", "time", ["p"], "<t>", 0, aggregate)
        rel, absolute = noise(group, aggregate)
        for j, name in enumerate(group.names):
            want = automodel.load(frame[frame["kernel"] == name].drop(columns="kernel"),
                                  aggregate=aggregate).aggregate_se()
            np.testing.assert_allclose([rel[j], absolute[j]], want, rtol=1e-12)


def test_robust_aggregate_of_each_kernel_is_its_own_datasets():
    """Each kernel is its own pool of noise: the robust aggregate of a kernel beside a heavy-tailed one
    equals what automodel.data.load gives for that kernel alone."""
    frame = _kernels("p", 2.0 ** np.arange(1, 6), 3, seed=4, reps=5)
    rng = np.random.default_rng(5)
    noisy = frame["kernel"] == "k2"
    frame.loc[noisy, "time"] *= np.where(rng.uniform(size=noisy.sum()) < 0.3, 4.0, 1.0)
    frame.loc[3, "time"] *= 6  # one burst in k0
    _, (group,), _, _ = groups(frame, "kernel", "time", ["p"], "<t>", 0, "robust")
    for j, name in enumerate(group.names):
        alone = automodel.data.load(frame[frame["kernel"] == name].drop(columns="kernel"))
        np.testing.assert_allclose(group.values[:, j], alone.frame["time"], rtol=1e-12)
    assert group.values[0, 0] < 1.5 * frame.loc[[0, 1, 2, 4], "time"].mean()


def test_counters_of_zero_get_a_model_as_in_extrap():
    """A kernel of zeros only is ``T = 0`` (band 0 to 0); a counter with some zeros is fitted with its
    zeros raised to half its smallest value, so the relative metrics and log-scale bands stay finite;
    a negative value is still refused."""
    from automodel.kernels.fit_many import fit_many

    p = np.array([1.0, 2, 4, 8, 16, 32])
    frame = pd.DataFrame({"kernel": np.repeat(["zero", "some", "neg", "time"], 6), "p": np.tile(p, 4),
                          "time": np.r_[np.zeros(6), [0, 1, 1, 2, 2, 3], [1, 2, -1, 4, 5, 6], 10 / p]})
    result = fit_many(frame, jobs=1)
    summary = result.summary.set_index("kernel")
    assert result.models["zero"].formula in ("0", "0.0") and summary.loc["zero", "note"] == "every value is 0"
    lo, hi = result.models["zero"].predict_interval({"p": [64.0]}, 0.9)
    assert result.models["zero"].predict({"p": [64.0]})[0] == 0 and lo[0] == hi[0] == 0
    assert summary.loc["some", "note"] == "1 value(s) of 0 fitted as 0.5, half the smallest measured"
    assert np.isfinite(summary.loc["some", "rel_s"]) and "some" in result.models
    assert "neg" not in result.models and "is negative" in summary.loc["neg", "note"]
    assert summary.loc["time", "note"] == "" and result.models["time"].formula == "10.0/p"
    lines = result.lines()
    assert any(line.startswith("zero") and "T = 0" in line for line in lines)
    assert all(len(line) <= 80 for line in lines)


CUBE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "extrap-formats" / "cubeset" / "single_parameter"


@pytest.mark.skipif(not CUBE.is_dir() or importlib.util.find_spec("pycubexr") is None,
                    reason="no CUBE sample or no pycubexr")
def test_every_kernel_of_extraps_cube_sample_gets_a_model():
    """Before: 4 of its 28 kernels (cache-miss and FP counters of 0) had no model ("times must be > 0")."""
    from automodel.kernels.fit_many import fit_many

    result = fit_many(CUBE, jobs=1)
    assert len(result.summary) == 28 and len(result.models) == 28
    assert result.models["main->zero_mat [PAPI_FP_OPS]"].formula in ("0", "0.0")
