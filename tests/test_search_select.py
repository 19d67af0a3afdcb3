"""The one chooser (automodel/search/choice.py) and its tie rule (automodel/search/select.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.errors import SpaceError
from automodel.search.choice import choose as select
from automodel.search.choice import choose_rows, probe_points
from automodel.search.select import tolerance
from automodel.space.config import space_path


def _linear_runs(seed: int, noise: float = 0.15) -> pd.DataFrame:
    """t = 1e-3 + 2e-7 n on 7 message sizes 4 KiB..256 KiB, 5 log-normal repetitions each."""
    rng = np.random.default_rng(seed)
    n = np.repeat(4096 * 2.0 ** np.arange(7), 5)
    return pd.DataFrame({"n": n, "time": (1e-3 + 2e-7 * n) * np.exp(noise * rng.standard_normal(n.size))})


def test_simplest_rule_stops_high_powers_from_exploding_beyond_the_data():
    big = pd.DataFrame({"n": [2.0 ** 21]})  # 8x beyond the largest training size
    truth = 1e-3 + 2e-7 * 2.0 ** 21
    ratios = {"best": [], "simplest": []}
    for seed in range(8):
        runs = _linear_runs(seed)
        for rule in ratios:
            result = automodel.fit(runs, selection=rule, templates=[], progress=False)
            ratios[rule].append(result.best.predict(big)[0] / truth)
    # the chosen model extrapolates the linear law within 15 % on every seed (the tied candidate nearest
    # their weighted median: 0.92-1.04 of the truth at 15 % noise; the least change it replaced erred
    # low, 0.57-0.98) ...
    assert np.all(np.abs(np.array(ratios["simplest"]) - 1) < 0.15), ratios["simplest"]
    # ... while the best-ranked one picks an n^3 or n^4 term on some seeds and is off by 10x or more
    assert max(ratios["best"]) > 10, ratios["best"]


def test_leaderboard_marks_the_chosen_and_the_equivalent_rows():
    result = automodel.fit(_linear_runs(1), templates=[], progress=False)
    board = result.leaderboard
    chosen = board[board["choice"] == "chosen"]
    assert len(chosen) == 1
    assert chosen["formula"].iloc[0] == result.best.formula
    assert result.selection.threshold >= board["rel_s"].min()
    equivalent = board[board["choice"] != ""]
    assert (equivalent["rel_s"] <= result.selection.threshold).all()
    assert chosen["n_terms"].iloc[0] == equivalent["n_terms"].min()
    assert "why: rank" in result.summary()


def test_best_rule_keeps_rank_one():
    result = automodel.fit(_linear_runs(1), selection="best", templates=[], progress=False)
    assert result.best.formula == result.leaderboard["formula"].iloc[0]


def test_select_prefers_fewer_terms_only_within_the_tolerance():
    values = np.array([0.100, 0.104, 0.300, np.nan])
    chosen = select(values, np.array([4, 2, 1, 1]), n_points=12, metric="rel_s")
    assert (chosen.best, chosen.index) == (0, 1)
    assert chosen.equivalent.tolist() == [True, True, False, False]
    # a noise floor above the 1-term candidate's score makes it equivalent, and the simplest
    noisy = select(values, np.array([4, 2, 1, 1]), n_points=12, metric="rel_s", noise_relative=0.35)
    assert noisy.index == 2
    # among equally simple candidates the better-scored wins
    assert select(np.array([0.1, 0.11, 0.105]), np.array([3, 2, 2]), 20, "rel_s").index == 2


def test_tolerance_per_metric():
    assert tolerance(-30.0, "aic", dof=5)[0] == -28.0
    assert tolerance(0.2, "rel_s", dof=2)[0] == pytest.approx(0.3)
    assert tolerance(0.2, "s", dof=2, noise_relative=5.0)[0] == pytest.approx(0.3)  # s floor is absolute
    assert tolerance(0.2, "s", dof=2, noise_absolute=0.5)[0] == 0.5
    assert tolerance(1.0, "smape", dof=50, noise_relative=0.05)[0] == pytest.approx(5.0)


def test_select_rejects_bad_input():
    with pytest.raises(ValueError, match="no candidate"):
        select(np.array([np.inf, np.nan]), np.array([1, 2]), 5, "rel_s")
    with pytest.raises(ValueError, match="unknown selection rule"):
        select(np.array([1.0]), np.array([1]), 5, "rel_s", rule="first")


def test_selection_option_is_validated(tmp_path):
    with pytest.raises(SpaceError, match="unknown selection"):
        automodel.fit(_linear_runs(0), selection="first", progress=False)
    text = (space_path("default").read_text()
            .replace('selection = "simplest"', 'selection = "first"'))
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(SpaceError, match=r"\[fit\]: unknown selection"):
        automodel.load_space(bad)


def test_aggregate_se_is_zero_without_repetitions_and_grows_with_scatter():
    quiet = automodel.load(_linear_runs(0, noise=0.01))
    loud = automodel.load(_linear_runs(0, noise=0.3))
    assert 0 < quiet.aggregate_se()[0] < loud.aggregate_se()[0]
    single = automodel.load(_linear_runs(0).drop_duplicates("n"))
    assert single.aggregate_se() == (0.0, 0.0)


def test_the_simplest_tied_candidate_nearest_their_median_beyond_the_data_is_chosen():
    """Issue 36, failure 1: among candidates the data cannot tell apart, the first in the ranking was
    the steepest (``n^(5/2)/p`` 1261 % off at 8x n where ``n log n / p`` was tied and 8 % off). The one
    nearest the median of their predictions 4x beyond the data is chosen, neither the steepest nor
    the flattest; a candidate with no positive prediction there (a cancelling pair gone negative)
    never is."""
    values = np.array([0.100, 0.101, 0.102, 0.103, 0.104, 0.5])
    n_terms = np.array([2, 2, 2, 2, 2, 1])
    logs = np.log(np.array([[10.0, 900.0], [10.0, 45.0], [10.0, np.nan], [10.0, 30.0], [10.0, 12.0],
                            [10.0, 10.0]]))
    plain = select(values, n_terms, 30, "rel_s")
    assert plain.index == 0  # without looking beyond the data: the best-scored, the steepest
    chosen = select(values, n_terms, 30, "rel_s", logs=logs)
    assert chosen.index == 3 and "nearest the median of their predictions at 4x" in chosen.reason
    assert chosen.equivalent.tolist() == plain.equivalent.tolist() == [True] * 5 + [False]
    # weights 2^-description length: a short candidate pulls the median to itself
    assert select(values, n_terms, 30, "rel_s", logs=logs, length=np.array([3, 0, 0, 3, 3, 0])).index == 1
    # the same rule for many targets at once, row by row
    rows, _, tied, _ = choose_rows(np.vstack([values, values[::-1]]), n_terms, 30, "rel_s", logs=logs)
    assert rows.tolist() == [3, select(values[::-1], n_terms, 30, "rel_s", logs=logs).index]
    # no positive prediction anywhere beyond: the best-scored of the simplest, never a crash
    nowhere = np.where(np.arange(2) == 1, np.nan, logs)
    assert select(values, n_terms, 30, "rel_s", logs=nowhere).index == 0


def test_a_time_that_turns_negative_far_beyond_the_data_is_passed_over():
    """Strong scaling fitted as ``36/sqrt(p) - 1.4`` is positive 4x beyond the data and negative 1024x
    beyond: while a tied candidate stays positive, it is not chosen (it was, 62 % off, on the
    Mandelbrot strong-scaling task)."""
    p = np.array([1.0, 2, 4, 8, 16, 32])
    y = 36 / np.sqrt(p) + 0.3
    frame = pd.DataFrame({"p": p, "time": y})
    probes = probe_points(frame, ["p"])
    assert probes["p"].tolist() == [32.0, 128.0, 32768.0]
    cancelling = 36.31 / np.sqrt(probes["p"].to_numpy()) - 1.427
    positive = 36.0 / np.sqrt(probes["p"].to_numpy()) + 0.3
    logs = np.log(np.where(np.vstack([cancelling, positive]) > 0, np.vstack([cancelling, positive]), np.nan))
    assert np.isfinite(logs[0, :2]).all() and np.isnan(logs[0, 2])
    assert select(np.array([0.010, 0.0101]), np.array([2, 2]), 6, "rel_s", logs=logs).index == 1


def test_probe_points_start_at_the_edge_and_leave_loads_at_one():
    frame = pd.DataFrame({"n": [1.0, 8.0], "p": [2.0, 16.0], "cpu": [0.5, 0.9]})
    probes = probe_points(frame, ["n", "p", "cpu"])
    assert probes.iloc[0].tolist() == [8.0, 16.0, 1.0]
    assert probes.iloc[1:].to_numpy().tolist() == [[32.0, 64.0, 1.0], [32.0, 16.0, 1.0], [8.0, 64.0, 1.0],
                                                   [8192.0, 16384.0, 1.0]]


def test_fit_and_kernels_choose_alike_through_the_one_chooser():
    """Issue 36: the choice was written three times (fit, the kernels, the online store). The same
    runs give the same formula through automodel.fit (searched candidates only) and fit_many."""
    from automodel.kernels.fit_many import fit_many

    rng = np.random.default_rng(3)
    p = np.repeat([4.0, 8, 16, 32, 64], 5)
    runs = pd.DataFrame({"p": p, "time": (200 + 10 * np.log2(p) ** 2) * (1 + 0.01 * rng.uniform(-1, 1, p.size))})
    result = automodel.fit(runs, templates=(), progress=False, intervals=False)
    assert fit_many(runs.assign(kernel="k")).models["k"].formula == result.best.formula


@pytest.mark.parametrize("seed", range(3))
def test_three_configurations_keep_the_constant_the_runs_stand_on(seed):
    """Issue 36, failure 2: on three node counts a single term was all that could compete (two residual
    degrees of freedom asked of every candidate), and ``3965/p`` was chosen for ``30 + 3000/p``: 63 % off
    at p = 256. A constant and one term always compete now."""
    frame = pd.DataFrame({"p": [16.0, 32.0, 64.0]})
    frame["time"] = (30 + 3000 / frame["p"]) * (1 + 0.01 * np.random.default_rng(seed).standard_normal(3))
    best = automodel.fit(frame, progress=False, templates=()).best
    predicted = float(best.predict(pd.DataFrame({"p": [256.0]}))[0])
    assert abs(predicted / (30 + 3000 / 256) - 1) < 0.1, best.formula


@pytest.mark.parametrize("seed", range(3))
def test_a_time_that_stops_falling_is_not_extrapolated_as_a_turnover(seed):
    """Issue 36, failure 6: past 8 processes the runs stop getting faster (they share what saturates); no
    candidate could say so, and a growing p-term bent the curve through the level runs (0.08 p + 11/p:
    140-260 % off at p = 32-128). ``1/cap(p)`` places the level at a measured p with two levels above."""
    rng = np.random.default_rng(seed)
    p = np.repeat([1.0, 2, 4, 8, 12, 16], 3)
    frame = pd.DataFrame({"p": p, "time": (1 + 10 / np.minimum(p, 8)) * (1 + 0.02 * rng.standard_normal(p.size))})
    best = automodel.fit(frame, progress=False, templates=(), intervals=False).best
    far = np.array([32.0, 128.0])
    predicted = np.asarray(best.predict(pd.DataFrame({"p": far})), float)
    assert np.all(np.abs(predicted / (1 + 10 / 8) - 1) < 0.1), best.formula


def test_a_latency_that_levels_off_is_not_extrapolated_as_growing():
    """Issue 36, failure 6: a cost that grows with p until every link is busy, then stays: runs of
    ``5 + 2 min(p, 16)`` at p = 2 to 64 gave ``7.2 log2(p)``, 55 % off at p = 128-512."""
    rng = np.random.default_rng(0)
    p = np.repeat([2.0, 4, 8, 16, 32, 64], 3)
    frame = pd.DataFrame({"p": p, "time": (5 + 2 * np.minimum(p, 16)) * (1 + 0.02 * rng.standard_normal(p.size))})
    best = automodel.fit(frame, progress=False, templates=(), intervals=False).best
    predicted = np.asarray(best.predict(pd.DataFrame({"p": [128.0, 512.0]})), float)
    assert np.all(np.abs(predicted / 37 - 1) < 0.05), best.formula


def test_a_template_that_explodes_beyond_the_data_is_set_aside_and_its_band_says_so():
    """Issue 36, failure 5: on the bundled demo runs at p <= 8, Kohashi's six terms with the sigmoid
    centre the user fixed at p = 40 fit best (rank 1) and predicted 1e12 s at p = 256, where the runs
    take 0.006 s, inside a +-1 % band. Beyond the data it grows faster than any term of the search space
    (``4e9 p / (1 + 2e17 exp(-p))``), so the chooser sets it aside; its own band spans its disagreement
    with the candidates that remain."""
    from importlib.resources import files

    runs = pd.read_csv(files("automodel") / "demo" / "cg_fast.csv")
    result = automodel.fit(runs[runs["p"] <= 8][["n", "p", "time"]], templates=["kohashi"],
                           template_options={"kohashi": {"n_terms": 6, "pc": 40}}, progress=False)
    far = pd.DataFrame({"n": [400000.0] * 2, "p": [128.0, 256.0]})
    truth = runs[runs["n"].eq(400000) & runs["p"].isin([128, 256])].groupby("p")["time"].median().to_numpy()
    kohashi = result.models[0]
    assert kohashi.formula != result.best.formula and "exp" in kohashi.formula
    assert np.all(np.asarray(kohashi.predict(far), float) > 1e3 * truth)  # the failure, still ranked first
    assert "faster than any term of the search space" in result.selection.reason
    assert result.leaderboard["choice"].iloc[0] == "set aside"
    assert np.all(np.abs(np.asarray(result.best.predict(far), float) / truth - 1) < 0.25), result.best.formula
    low, high = kohashi.predict_interval(far, level=0.9)
    assert np.all(high / low > 1e6)  # not +-1 %: the band holds what the remaining candidates predict


@pytest.mark.parametrize("law", ["n^2/p + log2 p", "n log2 n / p + c"])
@pytest.mark.parametrize("seed", range(2))
def test_a_kernel_whose_time_falls_with_p_keeps_its_computation_divided_by_p(law, seed):
    """Issue 36, failure 4: a computation term without ``/p`` (``n^(9/4) + ...``) was chosen for a kernel
    whose every run gets faster with p. Strong scaling of n = 1000-8000 on p = 1-16, 3 runs of 3 % noise
    each; the chosen model predicts n = 16000-32000 on p = 64-256 within 10 % (0.3-2.3 % when written)."""
    truth = {"n^2/p + log2 p": lambda n, p: 2e-8 * n ** 2 / p + 1e-3 * np.log2(p) + 1e-3,
             "n log2 n / p + c": lambda n, p: 5e-7 * n * np.log2(n) / p + 2e-3}[law]
    rng = np.random.default_rng(seed)
    n, p = (a.ravel() for a in np.meshgrid([1000.0, 2000, 4000, 8000], [1.0, 2, 4, 8, 16]))
    n, p = np.repeat(n, 3), np.repeat(p, 3)
    runs = pd.DataFrame({"n": n, "p": p, "time": truth(n, p) * (1 + 0.03 * rng.standard_normal(n.size))})
    best = automodel.fit(runs, progress=False, templates=(), intervals=False).best
    far_n, far_p = (a.ravel() for a in np.meshgrid([16000.0, 32000], [64.0, 128, 256]))
    predicted = np.asarray(best.predict(pd.DataFrame({"n": far_n, "p": far_p})), float)
    assert np.all(np.abs(predicted / truth(far_n, far_p) - 1) < 0.1), best.formula
