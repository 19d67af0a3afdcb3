"""Tests of automodel.templates.hockney: t(m) fits, piecewise breakpoints, collective selection, JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from automodel.errors import DataError, ModelFileError
from automodel.templates.collectives import design_matrix
from automodel.templates.hockney import HOCKNEY, HOCKNEY_COLLECTIVE, PAPER_BREAKPOINTS, HockneyModel

SIZES = 2.0 ** np.arange(1, 21)


def _noisy(t: np.ndarray, level: float = 0.02, seed: int = 0) -> np.ndarray:
    return t * (1 + level * np.random.default_rng(seed).standard_normal(t.size))


def test_recovers_alpha_beta_with_noise() -> None:
    frame = pd.DataFrame({"n": SIZES, "time": _noisy(3e-6 + 1e-9 * SIZES)})
    model = HOCKNEY.fit(frame)
    assert model.alphas[0] == pytest.approx(3e-6, rel=0.05)
    assert model.betas[0] == pytest.approx(1e-9, rel=0.05)
    assert model.n_coefficients == 2


def test_piecewise_search_finds_paper_breakpoints() -> None:
    truth = HockneyModel("p2p", PAPER_BREAKPOINTS, (5e-6, 2e-6, 1e-5), (0.0, 1e-9, 6e-10), True, 0.0)
    frame = pd.DataFrame({"n": SIZES})
    frame["time"] = _noisy(truth.predict(frame), 0.01, seed=1)
    model = HOCKNEY.fit(frame, breakpoints="search")
    assert model.breakpoints == PAPER_BREAKPOINTS
    assert model.betas[0] == 0.0 and model.n_coefficients == 5
    np.testing.assert_allclose(model.betas[1:], truth.betas[1:], rtol=0.1)
    plain = HOCKNEY.fit(frame)
    assert model.standard_error < plain.standard_error


@pytest.mark.parametrize("schedule", ["binomial_bcast", "ring_allgather", "scatter_rd_allgather_bcast"])
def test_collective_schedule_selected_and_extrapolates(schedule: str) -> None:
    p = np.repeat([2.0, 4.0, 8.0, 16.0, 32.0], SIZES.size)
    m = np.tile(SIZES, 5)
    t = design_matrix(schedule, p, m) @ np.array([2e-6, 1e-9])
    frame = pd.DataFrame({"n": m, "p": p, "time": _noisy(t, 0.02, seed=2)})
    model = HOCKNEY_COLLECTIVE.fit(frame, schedules=["binomial_bcast", "ring_allgather",
                                                      "scatter_rd_allgather_bcast", "rd_allgather"])
    assert model.schedule == schedule
    big = pd.DataFrame({"n": SIZES, "p": 256.0})
    want = design_matrix(schedule, big["p"].to_numpy(), SIZES) @ np.array([2e-6, 1e-9])
    np.testing.assert_allclose(model.predict(big), want, rtol=0.1)


def test_json_round_trip_identical_predictions() -> None:
    p = np.repeat([2.0, 8.0, 32.0], SIZES.size)
    m = np.tile(SIZES, 3)
    frame = pd.DataFrame({"n": m, "p": p, "time": _noisy(np.ceil(np.log2(p)) * (1e-6 + 1e-9 * m), seed=3)})
    model = HOCKNEY_COLLECTIVE.fit(frame, schedule="binomial_bcast", breakpoints="paper")
    back = HockneyModel.from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_array_equal(back.predict(frame), model.predict(frame))
    assert back.expr == model.expr and back.name == model.name


@pytest.mark.parametrize("patch", [{"schedule": "rm -rf"}, {"alphas": ["1e-6"]}, {"version": 2},
                                   {"breakpoints": [5.0, 1.0]}, {"constant_first": "yes"}, {"betas": [1.0, 2.0]}])
def test_from_dict_rejects_bad_input(patch: dict) -> None:
    good = HockneyModel("p2p", (), (1e-6,), (1e-9,), False, 0.1).to_dict()
    with pytest.raises(ModelFileError):
        HockneyModel.from_dict({**good, **patch})


def test_applicable_and_bad_data() -> None:
    assert HOCKNEY.applicable(pd.DataFrame({"time": [1.0]})) == "not applicable: no column n"
    assert HOCKNEY_COLLECTIVE.applicable(pd.DataFrame({"n": [1.0], "time": [1.0]})) == "not applicable: no column p"
    assert HOCKNEY_COLLECTIVE.applicable(pd.DataFrame({"n": [1.0], "p": [2.0], "time": [1.0]})) is None
    with pytest.raises(DataError, match="row 3, column 'time'"):
        HOCKNEY.fit(pd.DataFrame({"n": [1.0, 2.0, 3.0], "time": [1.0, -1.0, 2.0]}))
    with pytest.raises(DataError, match="too few distinct"):
        HOCKNEY.fit(pd.DataFrame({"n": [1.0, 2.0, 3.0], "time": [1.0, 1.5, 2.0]}), breakpoints="paper")
