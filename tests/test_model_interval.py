"""Prediction bands (issue 12): calibrated on known noise, narrower with repetitions, identical after a
JSON round trip, present for every model of a fit (templates included) and in the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.model.calibration import forward_growth, run_noise
from automodel.cli import main
from automodel.errors import DataError, ModelFileError
from automodel.model_file import load_model, model_from_dict
from automodel.search.engine import staged_search
from automodel.solve import band

NOISE = 0.05


def strong_scaling(seed: int, reps: int, p=(1, 2, 4, 8, 16, 32), noise: float = NOISE) -> pd.DataFrame:
    """``T = 2 + 30 / p`` measured ``reps`` times per p with log-normal noise of ``noise``."""
    rng = np.random.default_rng(seed)
    P = np.repeat(np.asarray(p, float), reps)
    return pd.DataFrame({"p": P, "time": (2 + 30 / P) * np.exp(noise * rng.standard_normal(len(P)))})


def fitted(seed: int, reps: int) -> automodel.Model:
    return automodel.fit(strong_scaling(seed, reps), progress=False, templates="none").best


def test_band_math():
    lo, hi = band.bounds(np.array([10.0]), np.array([0.1]), 0.9, 1e9)
    assert lo[0] == pytest.approx(10 * np.exp(-1.6449 * 0.1), rel=1e-4)
    assert hi[0] * lo[0] == pytest.approx(100.0)  # symmetric in log space
    assert band.quantile(0.9, 3) > band.quantile(0.9, 30) > band.quantile(0.5, 30)
    d = band.doublings_beyond({"p": np.array([1.0, 8.0, 64.0])}, {"p": (2.0, 16.0)})["p"]
    np.testing.assert_allclose(d, [1.0, 0.0, 2.0])
    # one dominant part estimated from 2 numbers: few degrees of freedom, a wide t
    assert band.satterthwaite([(np.array([1.0]), 2.0), (np.array([0.01]), 100.0)])[0] < 2.1


def test_run_noise_is_robust_to_one_outlier():
    runs = strong_scaling(0, 20)
    clean, count = run_noise(runs, ("p",))
    assert clean == pytest.approx(NOISE, rel=0.25) and count == 6 * 19
    runs.loc[0, "time"] *= 50  # one preempted run
    assert run_noise(runs, ("p",))[0] == pytest.approx(clean, rel=0.1)


def test_coverage_on_known_noise_inside_the_data():
    """New runs at measured and intermediate p (no extrapolation), 8 datasets of known 5 % noise:
    the 90 % band holds 80-98 % of 800 runs, the 50 % band 35-65 % (the tolerance covers the binomial
    error of runs correlated within a dataset and the misfit of a model chosen among candidates)."""
    inside = {0.9: [], 0.5: []}
    for seed in range(8):
        model = fitted(seed, 2)
        test = pd.DataFrame({"p": np.repeat([3.0, 6.0, 12.0, 24.0], 25)})
        y = (2 + 30 / test["p"]) * np.exp(NOISE * np.random.default_rng(100 + seed).standard_normal(len(test)))
        for level in inside:
            lo, hi = model.predict_interval(test, level)
            inside[level].append((lo <= y) & (y <= hi))
    assert 0.80 <= np.mean(inside[0.9]) <= 0.98
    assert 0.35 <= np.mean(inside[0.5]) <= 0.65


def test_band_of_the_expected_time_shrinks_as_repetitions_grow():
    x = pd.DataFrame({"p": [6.0, 24.0, 128.0]})
    widths = {}
    for reps in (2, 32):
        w = []
        for seed in range(4):
            model = fitted(seed, reps)
            lo, hi = model.predict_interval(x, 0.9, kind="mean")
            w.append((hi - lo) / model.predict(x))
        widths[reps] = np.median(w, axis=0)
    assert (widths[32][:2] < 0.5 * widths[2][:2]).all()  # inside the data: the noise of the fit
    assert widths[32][2] < widths[2][2]  # 4x beyond: growth dominates, the fit's part still shrinks
    model = fitted(0, 32)
    run_lo, run_hi = model.predict_interval(x, 0.9)
    mean_lo, mean_hi = model.predict_interval(x, 0.9, kind="mean")
    assert ((run_hi - run_lo)[:2] > 2 * (mean_hi - mean_lo)[:2]).all()  # one run scatters more
    assert ((run_lo <= mean_lo) & (mean_hi <= run_hi)).all()  # and its band holds its expected time's


def test_band_widens_beyond_the_data():
    model = fitted(1, 3)
    x = pd.DataFrame({"p": [16.0, 64.0, 256.0, 1024.0]})
    lo, hi = model.predict_interval(x, 0.9)
    width = np.log(hi / lo)
    assert (np.diff(width) > 0).all()


def test_a_corner_no_run_measured_is_beyond_the_data(tmp_path):
    """Runs at large n on one process and at small n on many do not measure large n on many: the band
    there grows as beyond the data (from the nearest measured configuration above), where the box of
    the ranges called it inside; a full grid's band is the box's, and the model file keeps the corners."""
    rng = np.random.default_rng(7)
    law = lambda n, p: 1e-5 * n / p + 2e-3 * np.log2(p) + 0.01  # noqa: E731
    grid = [(n, p) for n in (1e3, 2e3, 4e3, 8e3) for p in (1.0, 2.0, 4.0, 8.0)]
    cross = [(n, p) for n, p in grid if n == 1e3 or p == 1.0]  # an L: no run at large n and p at once
    corner = pd.DataFrame({"n": [8e3], "p": [8.0]})
    widths = {}
    for name, configs in (("grid", grid), ("cross", cross)):
        rows = pd.DataFrame([(n, p, law(n, p) * np.exp(0.02 * rng.standard_normal())) for n, p in configs for _ in range(3)],
                            columns=["n", "p", "time"])
        model = automodel.fit(rows, progress=False, templates="none").best
        lo, hi = model.predict_interval(corner, 0.9)
        widths[name] = float(np.log(hi / lo)[0])
        iv = model.interval
        assert (iv.frontier == {}) if name == "grid" else (sorted(zip(iv.frontier["n"], iv.frontier["p"])) ==
                                                           [(1e3, 8.0), (8e3, 1.0)])
        said = " ".join(iv.describe())
        assert ("nearest above: (n=" in said) == (name == "cross")
        model.save(tmp_path / f"{name}.json")
        np.testing.assert_array_equal(load_model(tmp_path / f"{name}.json").predict_interval(corner, 0.9), (lo, hi))
        beyond = band.doublings_beyond_frontier({q: corner[q].to_numpy() for q in "np"}, iv.ranges,
                                                {q: np.asarray(v) for q, v in iv.frontier.items()}, iv.growth)
        assert (max(beyond["n"][0], beyond["p"][0]) >= 3.0) if name == "cross" else (beyond["n"][0] == beyond["p"][0] == 0)
    assert widths["cross"] > widths["grid"]


def test_forward_growth_sees_a_regime_change_at_the_top():
    """Forward splits refit without the top p levels: a curve that turns up there gains error per
    doubling; the same curve without the turn does not."""
    clean = strong_scaling(3, 3, p=(1, 2, 4, 8, 16, 32, 64), noise=0.01)
    broken = clean.copy()
    top = broken["p"] >= 32
    broken.loc[top, "time"] *= (broken.loc[top, "p"] / 16) ** 1.5  # network saturation past 16
    growth = {}
    for name, frame in (("clean", clean), ("broken", broken)):
        ds = automodel.data.load(frame, n=None)
        sp = automodel.fitting.with_options("default")
        out = staged_search(ds, sp, progress=False)
        growth[name] = forward_growth(ds, sp.fit, [out.scores.structures[i] for i in out.order[:100]])["p"][0]
    assert growth["broken"] > 2 * growth["clean"]


def test_a_split_whose_band_explains_its_runs_does_not_cancel_the_growth():
    """The demo's runs trained at p <= 8: the forward split that kept p = 1, 2 has a band wide enough to
    explain the runs it dropped, and its negative excess set the growth in p to 0 (a +-3 % band at
    p = 256, half the held-out configurations outside it). Each split's excess is now at least 0."""
    runs = pd.read_csv(Path(automodel.__file__).parent / "demo" / "cg_fast.csv")
    result = automodel.fit(runs[runs["p"] <= 8], progress=False)
    assert result.best.interval.growth["p"] > 0.05
    held = runs[runs["p"] > 8].groupby(["n", "p"], as_index=False)["time"].median()
    lo, hi = result.best.predict_interval(held[["n", "p"]], level=0.9, kind="mean")
    assert np.mean((held["time"] >= lo) & (held["time"] <= hi)) >= 0.85


def test_a_forward_split_is_one_observation_however_many_runs_it_holds_out():
    """A grid of 6 n x 4 p levels: the split that keeps p <= 4 holds out 6 configurations, predicted by one
    refit. Counted per run, they outweighed the prior nine to one; a split is one observation of the
    growth."""
    from automodel.data import load
    from automodel.fitting import with_options
    from automodel.model.calibration import PRIOR_WEIGHT, forward_errors
    from automodel.model.interval import DEFAULT_GROWTH

    rng = np.random.default_rng(11)
    rows = [(n, p, (1e-6 * n / p + 0.01) * np.exp(0.01 * rng.standard_normal()))
            for n in (1e3, 2e3, 4e3, 8e3, 16e3, 32e3) for p in (1.0, 2.0, 4.0, 8.0) for _ in range(2)]
    ds = load(pd.DataFrame(rows, columns=["n", "p", "time"]))
    sp = with_options("default")
    out = staged_search(ds, sp, progress=False)
    structures = [out.scores.structures[i] for i in out.order[:100]]
    excess, squared, splits, runs = forward_errors(ds, sp.fit, structures)["p"]
    assert splits == 2 and runs == 6 + 12  # p = 8 held out, then p = 4 and 8
    growth, dof, source = forward_growth(ds, sp.fit, structures)["p"]
    assert dof == runs + PRIOR_WEIGHT and "18 forward point(s) in 2 split(s)" in source
    # the law is found, the splits see no excess: the growth is the prior's share of 2 splits + the prior
    assert growth >= DEFAULT_GROWTH * np.sqrt(PRIOR_WEIGHT / (squared + PRIOR_WEIGHT)) - 1e-12
    assert growth > 0.2


def test_every_forward_split_the_levels_allow_is_evidence_and_none_counts_twice():
    """Sixteen levels of n: splits at 1 to 8 doublings below the largest n, each a new observation of the
    growth; a law the splits keep predicting earns a band narrower than the prior's. A doubling that drops
    no level repeats the split before it and is not counted again."""
    from automodel.data import load
    from automodel.fitting import with_options
    from automodel.model.calibration import SPLIT_DOUBLINGS, forward_errors
    from automodel.model.interval import DEFAULT_GROWTH

    rng = np.random.default_rng(3)
    law = lambda n, p: 1e-7 * n / p + 1e-3 * np.log2(p) + 0.01  # noqa: E731
    for n_levels, splits in ((2.0 ** np.arange(8, 24), len(SPLIT_DOUBLINGS)), (np.array([1e3, 2e3, 16e3]), 1)):
        rows = [(n, p, law(n, p) * np.exp(0.02 * rng.standard_normal())) for n in n_levels for p in (1.0, 2.0, 4.0, 8.0)
                for _ in range(2)]
        ds = load(pd.DataFrame(rows, columns=["n", "p", "time"]))
        sp = with_options("default")
        out = staged_search(ds, sp, progress=False)
        structures = [out.scores.structures[i] for i in out.order[:100]]
        assert forward_errors(ds, sp.fit, structures)["n"][2] == splits  # 16e3 -> 8e3 -> 4e3 keep the same runs
    assert forward_growth(ds, sp.fit, structures)["p"][0] > 0.15
    growth = automodel.fit(pd.DataFrame([(n, p, law(n, p)) for n in 2.0 ** np.arange(8, 24) for p in (1.0, 2.0, 4.0, 8.0)],
                                        columns=["n", "p", "time"]), progress=False).best.interval.growth["n"]
    assert growth < DEFAULT_GROWTH / 3


def test_json_round_trip_gives_identical_bands_and_best_p(tmp_path):
    rng = np.random.default_rng(5)
    rows = [(n, p, (1e-4 * n / p + 1e-3 * np.log2(p) + 0.01) * np.exp(0.03 * rng.standard_normal()))
            for n in (1000, 2000, 4000, 8000) for p in (1, 2, 4, 8, 16) for _ in range(3)]
    result = automodel.fit(pd.DataFrame(rows, columns=["n", "p", "time"]), progress=False)
    x = pd.DataFrame({"n": [1000.0, 64000.0], "p": [2.0, 256.0]})
    for model in result.models[:3]:
        path = tmp_path / "m.json"
        model.save(path)
        back = load_model(path)
        for kind in ("run", "mean"):
            np.testing.assert_array_equal(back.predict_interval(x, 0.8, kind=kind), model.predict_interval(x, 0.8, kind=kind))
        assert back.best_p(n=64000) == model.best_p(n=64000)


def test_every_model_of_a_fit_has_a_band_templates_included():
    rng = np.random.default_rng(2)
    P = np.repeat([1.0, 2, 4, 8, 16, 32, 64], 3)
    frame = pd.DataFrame({"p": P, "time": (5 / P + 0.2 + 0.05 * np.log2(P)) * np.exp(0.02 * rng.standard_normal(len(P)))})
    result = automodel.fit(frame, progress=False, templates="all")
    kinds = set(result.leaderboard.loc[result.leaderboard["rank"].notna(), "kind"])
    assert "template:kohashi" in kinds
    x = pd.DataFrame({"p": [8.0, 128.0]})
    for model in result.models:
        lo, hi = model.predict_interval(x, 0.9)
        pred = model.predict(x)
        ok = pred > 0
        assert (lo[ok] <= pred[ok]).all() and (pred[ok] <= hi[ok]).all(), model.name


def test_a_template_model_from_fit_predicts_with_a_band_through_the_cli(tmp_path, capsys):
    """Issue 12: ``automodel predict`` failed with 'kohashi: ... no posterior samples' when the model of a
    fit was the Kohashi template; a fitted template's model file predicts with lower and upper."""
    P = np.repeat([1.0, 2, 4, 8, 16, 32, 64], 2)
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"p": P, "time": (5 / P + 0.2 + 0.05 * np.log2(P)) * np.exp(0.02 * rng.standard_normal(len(P)))})
    result = automodel.fit(frame, progress=False, templates="kohashi")
    kohashi = next(m for m in result.models if m.name == "kohashi")
    kohashi.save(tmp_path / "k.json")
    pd.DataFrame({"p": [4, 128]}).to_csv(tmp_path / "q.csv", index=False)
    assert main(["predict", str(tmp_path / "k.json"), str(tmp_path / "q.csv"), "--level", "0.5",
                 "-o", str(tmp_path / "out.csv")]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == ["p", "predicted", "lower", "upper"]
    assert ((out["lower"] < out["predicted"]) & (out["predicted"] < out["upper"])).all()
    capsys.readouterr()
    assert main(["show", str(tmp_path / "k.json")]) == 0
    shown = capsys.readouterr().out
    assert "prediction band: log-normal" in shown and max(map(len, shown.splitlines()[1:])) <= 80


def test_best_p_range_and_warnings():
    model = fitted(0, 3)  # 2 + 30/p: time falls with p for ever
    found = model.best_p(p_max=256)
    assert found.p == 256 and found.p_low < 256 == found.p_high
    assert any("upper end of the searched range" in w for w in found.warnings)
    assert any("the largest measured p" in w for w in found.warnings)
    assert found.lower < found.time < found.upper
    inside = model.best_p(p_max=16)
    assert not any("measured p" in w for w in inside.warnings)
    with pytest.raises(DataError, match="level must be between 0 and 1"):
        model.best_p(level=1.5)


def test_best_p_cli_prints_warnings_on_stderr(tmp_path, capsys):
    fitted(0, 3).save(tmp_path / "m.json")
    assert main(["best-p", str(tmp_path / "m.json"), "--p-max", "100"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("best p = 100 (") and "warning: best p = 100 is the upper end" in captured.err


def test_a_malformed_interval_is_one_line_naming_the_file():
    d = json.loads(fitted(0, 2).to_json())
    for field, value, message in (("covariance", [[1.0]], "covariance' must be a"),
                                  ("run", -1, "'run' must be a non-negative"),
                                  ("growth", {"p": "x"}, "growth of p must be a finite number"),
                                  ("alternatives", [{"kind": "pickle"}], "unknown model kind"),
                                  ("frontier", {"p": [1.0, 1e9]}, "'frontier' 'p': values must be positive and within"),
                                  ("frontier", {"q": [1.0]}, "'frontier' 'q': expected a list of 1 to 64"),
                                  ("frontier", [1.0], "'frontier' must be an object")):
        bad = json.loads(json.dumps(d))
        bad["interval"][field] = value
        with pytest.raises(ModelFileError, match=message) as err:
            model_from_dict(bad, "m.json")
        assert str(err.value).startswith("m.json: ") and "\n" not in str(err.value)


def test_model_averaging_lies_among_the_equivalent_candidates():
    model = fitted(2, 3)
    x = pd.DataFrame({"p": [2.0, 64.0, 512.0]})
    cols = model._columns(x)
    preds = np.column_stack([model.predict(x)] + [a.predict(cols) for a in model.interval.alternatives])
    assert model.interval.alternatives
    averaged = model.predict_averaged(x)
    assert (preds.min(axis=1) <= averaged * (1 + 1e-12)).all() and (averaged <= preds.max(axis=1) * (1 + 1e-12)).all()


def test_every_kernel_model_has_a_band_aligned_with_its_own_values():
    """Many kernels at shared points: each model's band rests on its own values (a noise-free kernel
    has no misfit, a noisy one has), with the prior growth beyond the points."""
    rng = np.random.default_rng(7)
    rows = []
    for p in (1.0, 2, 4, 8, 16, 32):
        for n in (100.0, 200, 400):
            rows.append(("exact", n, p, 1e-3 * n / p + 0.1))
            rows.append(("noisy", n, p, (2e-3 * n / p + 0.3) * np.exp(0.1 * rng.standard_normal())))
    many = automodel.fit_many(pd.DataFrame(rows, columns=["kernel", "n", "p", "time"]), jobs=1)
    exact, noisy = many.models["exact"], many.models["noisy"]
    assert exact.interval.misfit < 1e-6 < 0.03 < noisy.interval.misfit
    x = pd.DataFrame({"n": [200.0, 1600.0], "p": [4.0, 128.0]})
    for model in (exact, noisy):
        lo, hi = model.predict_interval(x, 0.9)
        pred = model.predict(x)
        assert (lo <= pred).all() and (pred <= hi).all() and (hi / lo)[1] > (hi / lo)[0]
