"""Kernels grouped by their points (automodel.kernels.groups): aggregation, bad kernels, repetition noise."""

import numpy as np
import pandas as pd

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
    names, found, bad = groups(frame, "kernel", "time", ["p"], "<t>", 0, "median")
    assert names == ["k0", "k1", "k2", "few", "neg"]
    (group,) = found
    assert group.names == ("k0", "k1", "k2") and group.values.shape == (5, 3) and (group.count == 2).all()
    want = frame[frame["kernel"] == "k1"].groupby("p")["time"].median().to_numpy()
    np.testing.assert_array_equal(group.values[:, 1], want)
    assert bad[3][0] == 2 and "at least 3" in bad[3][1] and "not positive" in bad[4][1]


def test_repetition_noise_per_kernel_matches_the_dataset():
    frame = _kernels("p", 2.0 ** np.arange(1, 6), 4, seed=9, reps=3)
    for aggregate in ("median", "mean"):
        _, (group,), _ = groups(frame, "kernel", "time", ["p"], "<t>", 0, aggregate)
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
    _, (group,), _ = groups(frame, "kernel", "time", ["p"], "<t>", 0, "robust")
    for j, name in enumerate(group.names):
        alone = automodel.data.load(frame[frame["kernel"] == name].drop(columns="kernel"))
        np.testing.assert_allclose(group.values[:, j], alone.frame["time"], rtol=1e-12)
    assert group.values[0, 0] < 1.5 * frame.loc[[0, 1, 2, 4], "time"].mean()
