"""Exports of a fitted model: the printed Python and C functions compute its predictions; the text is the
formula every other view shows."""

import json
import math

import pytest

from automodel.output.export import FORMATS, export


def test_exports_evaluate_to_predictions(fitted):
    result, runs = fitted
    model = result.best
    namespace = {}
    exec(export(model, "python"), namespace)  # the test runs the printed code; the library never does
    row = runs.iloc[5]
    args = {q: float(row[q]) for q in model.params}
    assert namespace["predicted_time"](**args) == pytest.approx(model.predict(runs.iloc[[5]])[0], rel=1e-12)
    c = export(model, "c")
    assert "double predicted_time(double n, double p, double cpu, double bw)" in c and "log2(p)" in c
    body = c.split("return ", 1)[1].split(";", 1)[0]  # a C99 expression of math.h calls reads as Python
    c_names = {"pow": math.pow, "log2": math.log2, "sqrt": math.sqrt, "exp": math.exp, "ceil": math.ceil}
    assert eval(body, {**c_names, **args}) == pytest.approx(model.predict(runs.iloc[[5]])[0], rel=1e-12)  # noqa: S307
    assert r"\log_{2}" in export(model, "latex")
    assert export(model, "text") == model.formula == json.loads(export(model, "json"))["formula"]
    assert "^" in model.formula and "**" not in model.formula
    assert set(FORMATS) == {"text", "latex", "python", "c", "json"}
    with pytest.raises(ValueError, match="unknown export format 'svg'"):
        export(model, "svg")
