"""Tests of the FiM-Cal template and its Markov chain (seed fim-bhimani-2019, sec. 2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import sympy

from automodel.errors import DataError, ModelFileError
from automodel.space.symbols import symbol
from automodel.templates import _fim_markov as mk
from automodel.templates.fim_cal import TEMPLATE, FimCalModel, calibrate_alpha, fit_regression

U, TC, SC = 0.5, 10.0, 4.0  # P_act 0.5, P_a2p 0.4, P_pass 0.4, P_p2a 0.6, 1/TC 0.1


def test_base_case_probabilities_eqs_1_to_5():
    b = mk.base_probabilities(U, TC, SC)
    assert float(b.p_act) == pytest.approx(0.5)
    assert float(b.p_a2p) == pytest.approx(0.4)
    assert float(b.p_pass) == pytest.approx(0.4)
    assert float(b.p_p2a) == pytest.approx(0.6)
    assert float(b.p_s1) == pytest.approx(1 / TC)


def test_two_process_probabilities_from_the_paper():
    b = mk.base_probabilities(U, TC, SC)
    m = mk.transition_matrix(b, 2)
    p_act, p_a2p, p_pass, p_p2a = 0.5, 0.4, 0.4, 0.6
    assert m[2, 2] == pytest.approx(p_act**2)  # P22
    assert m[0, 0] == pytest.approx(p_pass**2)  # P00
    assert m[1, 1] == pytest.approx(p_act * p_pass + p_a2p * p_p2a)  # P11
    assert m[0, 2] == pytest.approx(p_p2a**2)  # P02: both passive turn active
    assert m[2, 0] == pytest.approx(p_a2p**2)  # P20
    assert m[2, 1] == pytest.approx(2 * p_act * p_a2p)  # P21
    assert m[1, 0] == pytest.approx(p_a2p * p_pass)  # P10


def test_eqs_6_to_8_against_the_literal_sums():
    b = mk.base_probabilities(0.55, 40.0, 12.0)
    pa, pap, pp, ppa = (float(x) for x in (b.p_act, b.p_a2p, b.p_pass, b.p_p2a))
    t = 5
    m = mk.transition_matrix(b, t)
    c = math.comb
    for i in range(t + 1):
        for j in range(t + 1):
            if i == j:
                want = sum(c(i, k) * c(t - i, t - i - k) * pa ** (i - k) * pap**k * pp ** (t - i - k) * ppa**k
                           for k in range(min(i, t - i) + 1))
            elif i < j:
                want = sum(c(i, k) * c(t - i, t - j - k) * pa ** (i - k) * pap**k * pp ** (t - j - k)
                           * ppa ** (j - i + k) for k in range(min(i, t - j) + 1))
            else:
                want = sum(c(i, i - j + k) * c(t - i, t - i - k) * pa ** (j - k) * pap ** (i - j + k)
                           * pp ** (t - i - k) * ppa**k for k in range(min(j, t - i) + 1))
            assert m[i, j] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_rows_of_the_stage_chain_sum_to_one_and_raw_rows_leak_only_completion():
    b = mk.base_probabilities(np.array([0.3, 0.6]), np.array([20.0, 1e6]), np.array([5.0, 3e5]))
    for t in (1, 2, 7):
        full = mk.stochastic_matrix(b, t)
        assert full.shape == (2, t + 2, t + 2)
        np.testing.assert_allclose(full.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
        assert np.all(full >= 0)
        raw = mk.transition_matrix(b, t)
        keep = 1 - 1 / np.array([20.0, 1e6])
        np.testing.assert_allclose(raw.sum(axis=-1), keep[:, None] ** np.arange(t + 1), rtol=1e-12)


def test_first_step_of_the_chain_equals_the_closed_form():
    tc = np.array([10.0, 250.0, 3e9])
    b = mk.base_probabilities(np.array([0.5, 0.7, 0.4]), tc, 0.3 * tc)
    f = 2.4e9
    for t in (1, 3, 8):
        row = mk.transition_matrix(b, t)[..., t, :]
        p_s_chain = 1.0 - row.sum(axis=-1)  # eq. 9 read off the chain
        closed = mk.first_step_time(tc, f, t)
        np.testing.assert_allclose(1.0 / (p_s_chain * f), closed, rtol=1e-6)
        np.testing.assert_allclose(mk.stochastic_matrix(b, t)[..., t, t + 1], 1 / (closed * f), rtol=1e-12)


def test_closed_form_hand_values():
    assert mk.first_step_time(1e9, 2e9, 1) == pytest.approx(0.5)  # t = 1: TC / F
    assert mk.first_step_time(10.0, 1.0, 2) == pytest.approx(1 / (1 - 0.81))
    assert mk.first_step_time(3e9, 3e9, 4) == pytest.approx(0.25, rel=1e-8)  # about TC / (t F)


def test_chain_expected_cycles_hand_value_and_direct_solve():
    b = mk.base_probabilities(U, TC, SC)
    # t = 1: m1 = 1 + P_act m1 + P_a2p m0, m0 = 1 + P_pass m0 + P_p2a m1  =>  m1 = TC (1 + P_a2p / P_p2a)
    assert float(mk.chain_expected_cycles(b, 1)) == pytest.approx(10 * (1 + 0.4 / 0.6), rel=1e-12)
    for t in (2, 4):
        full = mk.stochastic_matrix(b, t)
        q = full[: t + 1, : t + 1]
        direct = np.linalg.solve(np.eye(t + 1) - q, np.ones(t + 1))[t]
        assert float(mk.chain_expected_cycles(b, t)) == pytest.approx(direct, rel=1e-10)
    # with no stalls at all (U = 1 - 1/TC), the chain is the first step
    busy = mk.base_probabilities(1 - 1 / 50.0, 50.0, 0.0)
    assert float(mk.chain_expected_cycles(busy, 3)) == pytest.approx(1 / (1 - (1 - 1 / 50) ** 3))


def test_chain_time_stages_and_bad_counters():
    one = mk.chain_time(0.5, 1000.0, 300.0, 10.0, 2, stages=1)
    four = mk.chain_time(0.5, 1000.0, 300.0, 10.0, 2, stages=4)
    assert float(four) != pytest.approx(float(one))
    assert float(four) == pytest.approx(4 * float(mk.chain_time(0.5, 250.0, 75.0, 10.0, 2)))
    with pytest.raises(DataError, match="SC"):
        mk.base_probabilities(0.5, 10.0, 11.0)
    with pytest.raises(DataError, match="'U'"):
        mk.base_probabilities(0.95, 10.0, 1.0)


def test_regression_and_alpha_walk():
    x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [4.0, 2.0]])
    y = 3.0 + 2.0 * x[:, 0] - 1.0 * x[:, 1]
    np.testing.assert_allclose(fit_regression(x, y), [3.0, 2.0, -1.0], atol=1e-12)
    with pytest.raises(DataError, match="eq. 11"):
        fit_regression(np.ones((3, 1)), np.ones(3))
    actual = np.array([1.3, 2.6, 3.9])
    alpha, rms, steps = calibrate_alpha(lambda a: a[:, None] * np.array([1.0, 2.0, 3.0]), actual,
                                        epsilon=1e-3, tau=1e-9)
    assert alpha == pytest.approx(1.3, abs=1e-3) and steps == pytest.approx(300, abs=1)
    alpha, _, _ = calibrate_alpha(lambda a: a[:, None] * np.array([1.0, 2.0]), np.array([0.5, 1.0]),
                                  epsilon=1e-2, tau=1e-3)
    assert alpha == pytest.approx(0.5, abs=1e-2)  # walks down when actual < predicted


def _counter_frame(true_alpha: float, p_values=(1, 2, 4, 8)) -> pd.DataFrame:
    rows = []
    for it in (10, 20, 40):
        for size in (1e3, 3e3, 5e3):
            tc = 2e6 + 5e4 * it + 300.0 * size
            for p in p_values:
                rows.append({"iterations": it, "n": size, "p": p, "U": 0.5 + 1e-3 * it,
                             "TC": tc, "SC": 0.3 * tc, "F": 2e9,
                             "time": float(mk.first_step_time(true_alpha * tc, 2e9, p))})
    return pd.DataFrame(rows)


def test_template_fits_calibrates_alpha_and_extrapolates():
    frame = _counter_frame(1.25)
    model = TEMPLATE.fit(frame, epsilon=1e-4, tau=1e-3, relative=True)
    assert model.parameters == ("iterations", "n")
    assert model.alpha == pytest.approx(1.25, abs=2e-3)
    big = pd.DataFrame({"iterations": [500], "n": [1e5], "p": [64]})
    want = mk.first_step_time(1.25 * (2e6 + 5e4 * 500 + 300.0 * 1e5), 2e9, 64)
    assert model.predict(big)[0] == pytest.approx(want, rel=2e-3)
    # expr is the closed form with numeric coefficients in the shared symbols
    value = float(model.expr.subs({symbol("iterations"): 500, symbol("n"): 1e5, symbol("p"): 64}))
    assert value == pytest.approx(model.predict(big)[0], rel=1e-6)
    assert model.expr.free_symbols == {symbol("iterations"), symbol("n"), symbol("p")}
    assert model.n_coefficients == 4


def test_round_trip_and_hostile_files():
    model = TEMPLATE.fit(_counter_frame(0.9), epsilon=1e-3, tau=1e-3, relative=True)
    d = json.loads(json.dumps(model.to_dict()))
    assert d["kind"] == "template" and d["template"] == "fim_cal" and d["version"] == 1
    again = FimCalModel.from_dict(d)
    frame = _counter_frame(1.0)
    np.testing.assert_array_equal(again.predict(frame), model.predict(frame))
    for bad in ({**d, "version": 2}, {**d, "alpha": "__import__('os')"}, {**d, "beta_tc": [1.0]},
                {**d, "parameters": ["a b"]}, {**d, "method": "eval"}, [1, 2]):
        with pytest.raises(ModelFileError):
            FimCalModel.from_dict(bad)


def test_chain_method_and_applicability():
    frame = _counter_frame(1.0, p_values=(1, 2, 3))
    model = TEMPLATE.fit(frame, method="chain", epsilon=1e-2, tau=1e-9, max_steps=50, relative=True)
    pred = model.predict(frame)
    assert np.all(np.isfinite(pred)) and np.all(pred >= mk.first_step_time(
        np.maximum(model.counters(frame)[1], 1), model.clock, frame["p"].to_numpy()) * (1 - 1e-9))
    again = FimCalModel.from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_array_equal(again.predict(frame), pred)
    assert TEMPLATE.applicable(frame) is None
    no_counters = frame.drop(columns=["TC"])
    assert TEMPLATE.applicable(no_counters) == "not applicable: needs columns U, TC, SC, F (hardware counters)"
    with pytest.raises(DataError, match="hardware counters"):
        TEMPLATE.fit(no_counters)
    assert isinstance(model.expr, sympy.Expr)


def test_template_exposes_the_loader():
    model = TEMPLATE.fit(_counter_frame(1.0), epsilon=1e-3, tau=1e-3, relative=True)
    frame = _counter_frame(1.0)
    np.testing.assert_array_equal(TEMPLATE.from_dict(model.to_dict()).predict(frame), model.predict(frame))


def test_fit_gives_fim_cal_its_counters_without_making_them_parameters(tmp_path):
    """Issue 14: a CSV with columns U, TC, SC, F got 'not applicable: needs columns U, TC, SC, F' unless
    ``--param U TC SC F``, which fed the counters to every other model as parameters."""
    import automodel

    path = tmp_path / "counters.csv"
    _counter_frame(1.25).to_csv(path, index=False)
    result = automodel.fit(path, params=["iterations"], templates="fim_cal,amdahl", progress=False,
                           template_options={"fim_cal": {"epsilon": 1e-4, "tau": 1e-3, "relative": True}})
    assert result.dataset.params == ("n", "p", "iterations") and result.dataset.covariates == ("U", "TC", "SC", "F")
    board = result.leaderboard.set_index("kind")
    assert board.loc["template:fim_cal", "note"] == "" and board.loc["template:fim_cal", "rel_s"] < 0.01
    fim = next(m for m in result.models if m.name == "fim_cal")
    assert fim.params == ("n", "p", "iterations") and fim.core.alpha == pytest.approx(1.25, abs=5e-3)
    big = pd.DataFrame({"iterations": [500], "n": [1e5], "p": [64]})
    want = mk.first_step_time(1.25 * (2e6 + 5e4 * 500 + 300.0 * 1e5), 2e9, 64)
    assert fim.predict(big)[0] == pytest.approx(want, rel=5e-3)
    assert all("U" not in str(m.expr.free_symbols) for m in result.models)
