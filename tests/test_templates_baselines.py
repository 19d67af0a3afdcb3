"""Tests of automodel.templates.baselines: Prophesy, RBASP, Amdahl and the shared helpers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import sympy

from automodel.errors import DataError, ModelFileError
from automodel.space.symbols import symbol
from automodel.templates.base import standard_error
from automodel.templates.baselines import AMDAHL, PROPHESY, RBASP, AmdahlModel, PolynomialModel, RbaspModel

RNG = np.random.default_rng(7)


def _noise(t: np.ndarray, level: float = 0.02) -> np.ndarray:
    return t * (1 + level * RNG.standard_normal(t.size))


def test_standard_error_by_hand() -> None:
    assert standard_error(np.array([1.0, -1.0, 2.0, 0.0]), 2) == pytest.approx(np.sqrt(6 / 2))
    assert standard_error(np.array([1.0]), 1) == np.inf


def test_prophesy_hand_values_and_recovery() -> None:
    model = PolynomialModel((1.0, 2.0, 0.0, 0.5))
    assert model.predict(pd.DataFrame({"n": [2.0, 10.0]})).tolist() == [1 + 4 + 4, 1 + 20 + 500]
    n = np.linspace(100, 1000, 12)
    truth = 2e-9 * n**3 + 1e-6 * n**2 + 1e-3 * n + 0.5
    fit = PROPHESY.fit(pd.DataFrame({"n": n, "time": _noise(truth, 0.01)}))
    assert fit.coefficients[3] == pytest.approx(2e-9, rel=0.1)
    assert sympy.Poly(fit.expr, symbol("n")).degree() == 3


def test_prophesy_lowers_degree_and_says_so() -> None:
    fit = PROPHESY.fit(pd.DataFrame({"n": [1.0, 2.0, 3.0], "time": [1.0, 2.0, 3.0]}))
    assert fit.n_coefficients == 3 and "degree lowered" in fit.notes[0]


def test_rbasp_equation_and_recovery() -> None:
    # log2 T = 1 + 0.5 log2 n - 0.8 log2 p + 0.05 log2^2 p
    model = RbaspModel(1.0, ("n",), (0.5,), (-0.8, 0.05))
    assert model.predict(pd.DataFrame({"n": [16.0], "p": [4.0]}))[0] == pytest.approx(2 ** (1 + 2 - 1.6 + 0.2))
    n, p = np.meshgrid([64.0, 128, 256, 512], [1.0, 2, 4, 8, 16])
    frame = pd.DataFrame({"n": n.ravel(), "p": p.ravel()})
    frame["time"] = _noise(model.predict(frame), 0.01)
    fit = RBASP.fit(frame, g="quadratic")
    assert fit.slopes[0] == pytest.approx(0.5, abs=0.03) and fit.g[0] == pytest.approx(-0.8, abs=0.05)
    assert RBASP.fit(frame, g="linear").n_coefficients == 3
    assert float(fit.expr.subs({symbol("n"): 16, symbol("p"): 4})) == pytest.approx(
        fit.predict(pd.DataFrame({"n": [16.0], "p": [4.0]}))[0])


def test_amdahl_recovery_and_nonnegative() -> None:
    assert AmdahlModel(8.0, 1.0).predict(pd.DataFrame({"p": [4.0]}))[0] == 3.0
    p = np.array([1.0, 2, 4, 8, 16, 32])
    fit = AMDAHL.fit(pd.DataFrame({"p": p, "time": _noise(100 / p + 2)}))
    assert fit.c1 == pytest.approx(100, rel=0.05) and fit.c2 == pytest.approx(2, rel=0.3)
    flat = AMDAHL.fit(pd.DataFrame({"p": p, "time": 1 + 0.1 * p}))  # increasing: c1 clipped at 0
    assert flat.c1 >= 0 and flat.c2 >= 0


@pytest.mark.parametrize("model", [PolynomialModel((1.0, 2.5, 0.0, 1e-9)), RbaspModel(0.3, ("n", "cpu"), (1.1, -1.0), (0.2,)),
                                   AmdahlModel(3.0, 0.25)])
def test_json_round_trip(model: object) -> None:
    frame = pd.DataFrame({"n": [10.0, 300.0], "p": [2.0, 64.0], "cpu": [0.5, 1.0]})
    back = type(model).from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_array_equal(back.predict(frame), model.predict(frame))


@pytest.mark.parametrize("cls,d", [(AmdahlModel, {"c1": "__import__('os')", "c2": 1.0}),
                                   (RbaspModel, {"intercept": 1.0, "variables": ["a b"], "slopes": [1.0], "g": [1.0]}),
                                   (PolynomialModel, {"coefficients": [True]}),
                                   (AmdahlModel, {"c1": 1.0, "c2": float("nan")})])
def test_from_dict_rejects(cls: type, d: dict) -> None:
    name = {AmdahlModel: "amdahl", RbaspModel: "rbasp", PolynomialModel: "prophesy"}[cls]
    with pytest.raises(ModelFileError):
        cls.from_dict({"kind": "template", "template": name, "version": 1, **d})
    with pytest.raises(ModelFileError):
        cls.from_dict([1, 2])


def test_applicable_and_errors() -> None:
    assert PROPHESY.applicable(pd.DataFrame({"p": [1.0]})) == "not applicable: no column n"
    assert AMDAHL.applicable(pd.DataFrame({"n": [1.0]})) == "not applicable: no column p"
    assert RBASP.applicable(pd.DataFrame({"p": [1.0]})) is None
    with pytest.raises(DataError, match="column 'p'"):
        AMDAHL.fit(pd.DataFrame({"p": [2.0, 2.0], "time": [1.0, 1.1]}))
    with pytest.raises(DataError, match="row 2, column 'n'"):
        PROPHESY.fit(pd.DataFrame({"n": [np.nan, 1.0], "time": [1.0, 1.0]}))
