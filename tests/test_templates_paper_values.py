"""Every template option reached the way the command line reaches it, against values worked out by hand
from the papers' equations.

Each case passes its options as the text of ``automodel fit --template-option NAME.OPTION=VALUE``
(:func:`automodel.templates.options.parse_assignments`, then :func:`automodel.fit`), on runs made from
the paper's own formula, and checks the fitted numbers against the closed form written in the test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.templates import _fim_markov as mk
from automodel.templates.options import parse_assignments


def fitted(frame: pd.DataFrame, name: str, *assignments: str, params: tuple[str, ...] = ()):
    """The fitted core of template ``name`` after ``fit --templates NAME --template-option ...``
    (``--param`` for ``params``)."""
    options = parse_assignments([f"{name}.{a}" for a in assignments]) if assignments else None
    result = automodel.fit(frame, templates=[name], template_options=options, progress=False, intervals=False,
                           params=params)
    rows = result.leaderboard
    chosen = rows.index[rows["kind"] == f"template:{name}"]
    assert len(chosen), rows.loc[rows["kind"].str.startswith("template"), "note"].tolist()
    return result.models[int(chosen[0])].core


# -- Prophesy: a x^3 + b x^2 + c x + d (rational-polynomial-yagnik-icpp2006.txt, sec. 4.1) -------------

def test_prophesy_degree_gives_the_polynomial_through_the_points():
    n = np.array([1.0, 2, 3, 4, 5])
    line = fitted(pd.DataFrame({"n": n, "time": 3 + 2 * n}), "prophesy", "degree=1")
    assert line.coefficients == pytest.approx((3.0, 2.0))
    square = fitted(pd.DataFrame({"n": n, "time": 1 + n ** 2}), "prophesy", "degree=2")
    assert square.coefficients == pytest.approx((1.0, 0.0, 1.0), abs=1e-9)


def test_prophesy_relative_weights_rows_by_one_over_t():
    # a constant (degree 0) through T = 1, 2, 4: absolute least squares gives the mean 7/3; the
    # relative cost sum((c - T)/T)^2 gives c = sum(1/T) / sum(1/T^2) = 1.75 / 1.3125 = 4/3
    frame = pd.DataFrame({"n": [1.0, 2, 3], "time": [1.0, 2, 4]})
    assert fitted(frame, "prophesy", "degree=0").coefficients[0] == pytest.approx(7 / 3)
    assert fitted(frame, "prophesy", "degree=0", "relative=true").coefficients[0] == pytest.approx(4 / 3)


# -- RBASP: log2 T = b0 + sum b_i log2 x_i + g(p) (fim-bhimani-2019.txt, sec. 5, eq. 17) ---------------

def _rbasp_runs(g2: float) -> pd.DataFrame:
    n, p, it = (a.ravel() for a in np.meshgrid([100.0, 200, 400], [1.0, 2, 4, 8, 16], [1.0, 3]))
    lp = np.log2(p)
    return pd.DataFrame({"n": n, "p": p, "iters": it,
                         "time": np.exp2(3 + np.log2(n) + 0.5 * np.log2(it) - lp + g2 * lp ** 2)})


def test_rbasp_g_linear_and_quadratic_are_eq_17():
    linear = fitted(_rbasp_runs(0.0), "rbasp", "g=linear", params=("iters",))
    assert (linear.intercept, *linear.slopes, *linear.g) == pytest.approx((3, 1, 0.5, -1), abs=1e-9)
    quadratic = fitted(_rbasp_runs(0.25), "rbasp", "g=quadratic", params=("iters",))
    assert quadratic.g == pytest.approx((-1.0, 0.25), abs=1e-9)


def test_rbasp_variables_choose_the_x_i():
    model = fitted(_rbasp_runs(0.0), "rbasp", "g=linear", "variables=n", params=("iters",))
    assert model.variables == ("n",)
    assert model.slopes == pytest.approx((1.0,))  # iters is left out: its factor goes to the residual


# -- Amdahl: c1/p + c2 (bayesian-kohashi-2022.txt, eqs. 1-2, cost eq. 7) -------------------------------

AMDAHL_RUNS = pd.DataFrame({"p": [1.0, 2, 4, 8], "time": [9.0, 4.0, 1.5, 0.25]})  # 10/p - 1


def test_amdahl_without_the_sign_constraint_recovers_a_negative_serial_part():
    model = fitted(AMDAHL_RUNS, "amdahl", "nonnegative=false", "relative=false")
    assert (model.c1, model.c2) == pytest.approx((10.0, -1.0))


def test_amdahl_nonnegative_puts_c2_on_its_bound_and_fits_c1_alone():
    # with c2 = 0, c1 minimises sum(w (c1 x - T)^2), x = 1/p: c1 = sum(w x T) / sum(w x^2);
    # w = 1: 11.40625 / 1.328125; w = 1/T^2 (eq. 7): 0.902777... / 0.305748...
    absolute = fitted(AMDAHL_RUNS, "amdahl", "relative=false")
    assert (absolute.c1, absolute.c2) == pytest.approx((11.40625 / 1.328125, 0.0), abs=1e-9)
    relative = fitted(AMDAHL_RUNS, "amdahl")
    x, t = 1 / AMDAHL_RUNS["p"], AMDAHL_RUNS["time"]
    assert relative.c1 == pytest.approx(0.9027777777777778 / 0.3057484567901234)
    assert relative.c1 == pytest.approx((x / t).sum() / ((x / t) ** 2).sum())
    assert relative.c2 == 0.0


# -- Kohashi: c1/p + c2 + c3 log2 p + c4 log2 p/sqrt(p) + c5/p^2 + c6 p sigmoid(p - pc) ---------------

P = np.array([1.0, 2, 4, 8, 16, 32, 64, 128])


def _kohashi_time(p, c, pc=None):
    lp = np.log2(p)
    terms = [1 / p, np.ones_like(p), lp, lp / np.sqrt(p), p ** -2.0]
    if pc is not None:
        terms.append(p / (1 + np.exp(-(p - pc))))
    return sum(ci * ti for ci, ti in zip(c, terms))


@pytest.mark.parametrize("n_terms", [4, 5])
def test_kohashi_n_terms_are_eqs_1_to_5(n_terms):
    c = (100.0, 2.0, 0.5, 3.0, 20.0)[:n_terms]
    model = fitted(pd.DataFrame({"p": P, "time": _kohashi_time(P, c)}), "kohashi", f"n_terms={n_terms}")
    assert model.coefficients == pytest.approx(c, rel=1e-6)


def test_kohashi_pc_given_and_from_cores_per_node_are_eq_6():
    c = (100.0, 2.0, 0.5, 3.0, 20.0, 0.05)
    frame = pd.DataFrame({"p": P, "time": _kohashi_time(P, c, pc=40.0)})
    given = fitted(frame, "kohashi", "n_terms=6", "pc=40")
    assert given.pc == 40.0 and given.coefficients == pytest.approx(c, rel=1e-6)
    # pc = n / cores_per_node (sec. 2.1): n = 160 on 4 cores per node is the same pc = 40
    per_node = fitted(frame.assign(n=160.0), "kohashi", "n_terms=6", "cores_per_node=4")
    assert per_node.predict(frame.assign(n=160.0)) == pytest.approx(frame["time"], rel=1e-6)


def test_kohashi_degree_makes_each_coefficient_a_polynomial_in_n():
    # sec. 3.3: c_i(n) = a_i + b_i n with degree 1
    rows = [(p, n, (5 + 0.01 * n) / p + (1 + 0.002 * n) + (0.1 + 0.0005 * n) * np.log2(p))
            for n in (100.0, 200, 400) for p in P]
    frame = pd.DataFrame(rows, columns=["p", "n", "time"])
    model = fitted(frame, "kohashi", "degree=1")
    assert model.coefficients == pytest.approx((5, 0.01, 1, 0.002, 0.1, 0.0005), rel=1e-6)


def test_kohashi_bayesian_options_shape_the_posterior():
    rng = np.random.default_rng(3)
    p = np.repeat(P[:6], 3)
    frame = pd.DataFrame({"p": p, "time": _kohashi_time(p, (10.0, 0.5, 0.2)) * np.exp(0.03 * rng.standard_normal(len(p)))})
    options = ("bayesian=true", "n_steps=3000", "max_samples=200", "seed=7", "c_max=20,2,1")
    model = fitted(frame, "kohashi", *options)
    again = fitted(frame, "kohashi", *options)
    assert model.samples.shape == (200, 3)
    np.testing.assert_array_equal(model.samples, again.samples)  # seeded
    assert (model.samples >= 0).all() and (model.samples <= np.array([20, 2, 1]) + 1e-12).all()
    lo, hi = model.predict_interval(frame)
    assert (lo <= model.predict_median(frame)).all() and (model.predict_median(frame) <= hi).all()
    ladder = fitted(frame, "kohashi", *options, "temperatures=0.1,0.3,1,3,10")
    assert ladder.diagnostics["n_temperatures"] == 5


def test_kohashi_posterior_is_the_coefficient_part_of_the_cli_band(tmp_path):
    rng = np.random.default_rng(3)
    p = np.repeat(P[:6], 3)
    frame = pd.DataFrame({"p": p, "time": _kohashi_time(p, (10.0, 0.5, 0.2)) * np.exp(0.03 * rng.standard_normal(len(p)))})
    result = automodel.fit(frame, templates=["kohashi"], progress=False, template_options=parse_assignments(
        ["kohashi.bayesian=true", "kohashi.n_steps=3000", "kohashi.seed=7"]))
    model = result.models[int(result.leaderboard.index[result.leaderboard["kind"] == "template:kohashi"][0])]
    far = pd.DataFrame({"p": [256.0]})
    spread = model.core.coefficient_spread(far)
    assert spread[0] > 0
    parts = model.interval.parts(far, model.core, model.predict(far))
    assert parts[2][0][0] == pytest.approx(spread[0])  # the coefficient part
    assert "coefficients from the posterior samples" in "\n".join(model.interval.describe(model.core))


# -- Rational polynomial: P_n(n) + P_cpu(n)/cpu + P_bw(n)/bw (yagnik, sec. 3, eqs. 1-5) ---------------

def _rational_runs() -> pd.DataFrame:
    n, cpu, bw = (a.ravel() for a in np.meshgrid([100.0, 200, 300, 400], [0.25, 0.5, 1.0], [0.5, 1.0]))
    return pd.DataFrame({"n": n, "cpu": cpu, "bw": bw,
                         "time": (1 + 0.02 * n) + (0.5 + 0.01 * n) / cpu + 0.3 / bw})


def test_rational_degrees_are_the_three_polynomials():
    model = fitted(_rational_runs(), "rational", "degrees=1,1,0")
    values = pd.DataFrame({"n": [1000.0], "cpu": [0.1], "bw": [0.2]})
    assert model.predict(values)[0] == pytest.approx(21 + 10.5 / 0.1 + 0.3 / 0.2)
    searched = fitted(_rational_runs(), "rational", "degrees=search", "max_degree=1")
    assert searched.predict(values)[0] == pytest.approx(21 + 10.5 / 0.1 + 0.3 / 0.2, rel=1e-6)


# -- Multivariate types 1 and 2: numerator / g(cpu, bw) (yagnik, sec. 4.1, eqs. 6-8) ------------------

@pytest.mark.parametrize("name, g", [("multivariate_type1", lambda c, b: 1 + 0.5 * c + 0.25 * b),
                                     ("multivariate_type2", lambda c, b: 1 + 0.5 * c * b)])
@pytest.mark.parametrize("relative", ["false", "true"])
def test_multivariate_recovers_g(name, g, relative):
    frame = _rational_runs()
    frame["time"] = (2 + 0.01 * frame["n"] + 1e-5 * frame["n"] ** 2) / g(frame["cpu"], frame["bw"])
    model = fitted(frame, name, f"relative={relative}")
    assert model.predict(frame) == pytest.approx(frame["time"], rel=1e-6)


# -- Hockney: t(m) = alpha + beta m, piecewise (contention-hockney-singh.txt, sec. 2.1, 3.3.1) --------

M = np.array([1e2, 1e3, 4e3, 1e4, 3e4, 1e5, 3e5, 1e6])


def test_hockney_breakpoints_and_constant_first_are_sec_3_3_1():
    t = np.where(M < 8192, 5e-6, 1e-5 + 2e-10 * M)  # constant below 8 KB, then a line
    model = fitted(pd.DataFrame({"n": M, "time": t}), "hockney", "breakpoints=8192")
    assert model.alphas == pytest.approx((5e-6, 1e-5)) and model.betas == pytest.approx((0.0, 2e-10))
    t = np.where(M < 8192, 2e-6 + 1e-9 * M, 1e-5 + 2e-10 * M)
    free = fitted(pd.DataFrame({"n": M, "time": t}), "hockney", "breakpoints=8192", "constant_first=false")
    assert free.alphas == pytest.approx((2e-6, 1e-5)) and free.betas == pytest.approx((1e-9, 2e-10))


def test_hockney_nonnegative_and_relative():
    # t = -5e-7 + 1e-9 m: free, the line itself; alpha >= 0: alpha = 0 and beta = sum(w m t)/sum(w m^2)
    m = M[1:]
    t = -5e-7 + 1e-9 * m
    frame = pd.DataFrame({"n": m, "time": t})
    free = fitted(frame, "hockney", "nonnegative=false")
    assert (free.alphas[0], free.betas[0]) == pytest.approx((-5e-7, 1e-9))
    for relative, w in (("false", np.ones_like(m)), ("true", 1 / t ** 2)):
        model = fitted(frame, "hockney", f"relative={relative}")
        assert model.alphas[0] == 0.0
        assert model.betas[0] == pytest.approx((w * m * t).sum() / (w * m * m).sum())


def test_hockney_collective_schedule_is_sec_3_1():
    # a binomial broadcast: ceil(log2 p) steps of one message each
    m, p = (a.ravel() for a in np.meshgrid(M[:5], [2.0, 4, 8, 16]))
    frame = pd.DataFrame({"n": m, "p": p, "time": np.ceil(np.log2(p)) * (3e-6 + 1e-9 * m)})
    model = fitted(frame, "hockney_collective", "schedule=binomial_bcast")
    assert model.schedule == "binomial_bcast"
    assert (model.alphas[0], model.betas[0]) == pytest.approx((3e-6, 1e-9))
    chosen = fitted(frame, "hockney_collective", "schedules=binomial_bcast,linear_bcast")
    assert chosen.schedule == "binomial_bcast"


# -- FiM-Cal: counters regressed on parameters, alpha calibrated (fim-bhimani-2019.txt, eqs. 10-12) ---

def _counter_runs(alpha: float) -> pd.DataFrame:
    rows = []
    for it in (10, 20, 40):
        for size in (1e3, 3e3, 5e3):
            tc = 2e6 + 5e4 * it + 300.0 * size
            for p in (1, 2, 4, 8):
                rows.append({"iterations": it, "n": size, "p": p, "U": 0.5, "TC": tc, "SC": 0.3 * tc,
                             "F": 2e9, "time": float(mk.first_step_time(alpha * tc, 2e9, p))})
    return pd.DataFrame(rows)


def test_fim_cal_default_threshold_is_relative_so_millisecond_times_calibrate():
    frame = _counter_runs(1.25)  # times of about a millisecond
    assert frame["time"].max() < 0.01
    # the paper's absolute RMS < 0.01 s holds at alpha = 1 already: Algorithm 1 stops at once
    assert fitted(frame, "fim_cal", "relative=false", params=("iterations",)).alpha == 1.0
    # relative RMS < 1 %: the walk (steps of 1e-5 upwards, the times being above the prediction)
    # stops at the first alpha whose relative RMS is below 1 %: short of the true 1.25
    model = fitted(frame, "fim_cal", params=("iterations",))
    assert 1.2 < model.alpha < 1.25 and 0.0099 < model.rms_ < 0.01


def test_fim_cal_parameters_option_names_the_regressors():
    assert fitted(_counter_runs(1.0), "fim_cal", params=("iterations",)).parameters == ("n", "iterations")
    model = fitted(_counter_runs(1.0), "fim_cal", "parameters=iterations", params=("iterations",))
    assert model.parameters == ("iterations",)
