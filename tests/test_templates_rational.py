"""Tests of automodel.templates.rational: eqs. 1-5 (rational polynomial) and eqs. 6-8 (multivariate types)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from automodel.errors import DataError, ModelFileError
from automodel.space.symbols import symbol
from automodel.templates.rational import (MULTIVARIATE_TYPE1, MULTIVARIATE_TYPE2, RATIONAL, MultivariateModel,
                                          RationalModel)

RNG = np.random.default_rng(3)


def _frame(size: int = 60) -> pd.DataFrame:
    return pd.DataFrame({"n": RNG.uniform(1000, 7000, size), "cpu": RNG.uniform(0.3, 1.0, size),
                         "bw": RNG.uniform(0.2, 1.0, size)})


def _noisy(t: np.ndarray, level: float = 0.01) -> np.ndarray:
    return t * (1 + level * RNG.standard_normal(t.size))


def test_equations_by_hand() -> None:
    model = RationalModel(("n", "cpu", "bw"), ((1.0, 2.0), (0.0, 0.0, 1.0), (3.0,)))
    f = pd.DataFrame({"n": [2.0], "cpu": [0.5], "bw": [0.25]})
    assert model.predict(f)[0] == pytest.approx((1 + 4) + 4 / 0.5 + 3 / 0.25)
    t1 = MultivariateModel("type1", ("cpu", "bw"), (1.0, 0.0, 0.0, 1.0), (2.0, 4.0))
    assert t1.predict(f)[0] == pytest.approx(9 / (1 + 1 + 1))
    t2 = MultivariateModel("type2", ("cpu", "bw"), (1.0, 0.0, 0.0, 1.0), (8.0,))
    assert t2.predict(f)[0] == pytest.approx(9 / (1 + 8 * 0.125))
    assert float(t2.expr.subs({symbol("n"): 2, symbol("cpu"): 0.5, symbol("bw"): 0.25})) == pytest.approx(4.5)


def test_rational_recovers_cubic_quadratic() -> None:
    f = _frame()
    truth = RationalModel(("n", "cpu", "bw"), ((0.5, 1e-4), (0.0, 0.0, 1e-8, 2e-11), (0.0, 1e-5, 1e-8)))
    f["time"] = _noisy(truth.predict(f))
    model = RATIONAL.fit(f)
    assert model.parts == ("n", "cpu", "bw") and model.n_coefficients == 4 + 4 + 3
    inside = _frame(20)
    np.testing.assert_allclose(model.predict(inside), truth.predict(inside), rtol=0.05)
    big = _frame(20)
    big["n"] *= 2  # extrapolation to twice the largest problem: 11 coefficients, 1 % noise
    np.testing.assert_allclose(model.predict(big), truth.predict(big), rtol=0.15)
    assert float(model.expr.subs({symbol(k): big[k].iloc[0] for k in ("n", "cpu", "bw")})) == pytest.approx(
        model.predict(big)[0])


def test_rational_degree_search_and_dropped_parts() -> None:
    f = _frame().drop(columns="bw")
    f["time"] = _noisy(2.0 + 1e-3 * f["n"] + 1e-6 * f["n"] ** 2 / f["cpu"], 0.005)
    model = RATIONAL.fit(f, degrees="search")
    assert model.parts == ("n", "cpu")
    assert any("no column bw" in s for s in model.notes) and any("chosen by standard error" in s for s in model.notes)
    assert len(model.coefficients[1]) >= 3  # needs the n^2 / cpu term
    f["cpu"] = 1.0
    assert RATIONAL.fit(f, degrees=(2, 2, 2)).parts == ("n",)


@pytest.mark.parametrize("template,g", [(MULTIVARIATE_TYPE1, (1.5, 0.8)), (MULTIVARIATE_TYPE2, (2.5,))])
def test_multivariate_recovery(template: object, g: tuple) -> None:
    f = _frame(80)
    truth = MultivariateModel(template.kind, ("cpu", "bw"), (5.0, 1e-3, 1e-7, 2e-11), g)
    f["time"] = _noisy(truth.predict(f), 0.01)
    model = template.fit(f)
    np.testing.assert_allclose(model.g, g, rtol=0.15)
    np.testing.assert_allclose(model.predict(f), truth.predict(f), rtol=0.03)


@pytest.mark.parametrize("model", [RationalModel(("n", "bw"), ((1.0, 2e-3), (0.5,))),
                                   MultivariateModel("type1", ("cpu",), (1.0, 2.0, 0.0, 1e-9), (0.7,)),
                                   MultivariateModel("type2", ("cpu", "bw"), (1.0, 2.0, 0.0, 1e-9), (0.7,))])
def test_json_round_trip(model: object) -> None:
    f = _frame(5)
    back = type(model).from_dict(json.loads(json.dumps(model.to_dict())))
    np.testing.assert_array_equal(back.predict(f), model.predict(f))
    assert back == model


@pytest.mark.parametrize("d", [{"template": "rational", "parts": ["os.system"], "coefficients": [[1.0]]},
                               {"template": "rational", "parts": ["n"], "coefficients": [["1"]]},
                               {"template": "multivariate_type1", "type": "type1", "loads": ["cpu"],
                                "numerator": [1.0, 2.0], "g": [1.0]},
                               {"template": "multivariate_type2", "type": "type3"}])
def test_from_dict_rejects(d: dict) -> None:
    cls = RationalModel if d["template"] == "rational" else MultivariateModel
    with pytest.raises(ModelFileError):
        cls.from_dict({"kind": "template", "version": 1, **d})


def test_applicable_and_errors() -> None:
    assert RATIONAL.applicable(pd.DataFrame({"p": [1.0], "time": [1.0]})) == "not applicable: no column n"
    assert MULTIVARIATE_TYPE2.applicable(pd.DataFrame({"n": [1.0], "time": [1.0]})) is None
    model = MULTIVARIATE_TYPE1.fit(pd.DataFrame({"n": [1.0, 2, 3, 4, 5], "time": [2.0, 9, 28, 65, 126]}))
    assert model.g == () and "g = 1" in model.notes[-1]
    with pytest.raises(DataError, match="too few rows"):
        RATIONAL.fit(pd.DataFrame({"n": [1.0, 2.0], "time": [1.0, 2.0]}))
