import json
import math

import numpy as np
import pytest

import automodel
from automodel.errors import ModelFileError
from automodel.export import FORMATS, export
from automodel.model import load_model


@pytest.fixture(scope="module")
def fitted():
    from tests.conftest import make_runs
    runs = make_runs(lambda n, p, c, b: 2e-10 * n ** 3 / (p * c) + 3e-8 * n ** 2 * np.log2(p) / b + 0.5,
                     np.linspace(1000, 8000, 6), [1, 2, 4, 8], noise=0.02, seed=2, load=True)
    return automodel.fit(runs.rename(columns={"n": "size", "time": "secs"}), time="secs", n="size",
                         progress=False), runs


def test_json_round_trip_predicts_exactly(fitted, tmp_path):
    result, runs = fitted
    path = tmp_path / "m.json"
    result.best.save(path)
    back = load_model(path)
    frame = runs.rename(columns={"n": "size"})
    assert np.array_equal(back.predict(frame), result.best.predict(frame))
    assert back.roles["n"] == "size" and back.ranges["n"] == [1000.0, 8000.0]
    d = json.loads(path.read_text())
    assert d["format"] == "automodel-model" and d["version"] == 1 and d["space"] == "default"


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
    assert r"\log_{2}" in export(model, "latex")
    assert set(FORMATS) == {"text", "latex", "python", "c", "json"}


def test_best_p_is_argmin_over_integers(fitted):
    model = fitted[0].best
    p, t = model.best_p(n=8000, p_max=512)
    ps = np.arange(1, 513)
    times = model.predict({"n": np.full(512, 8000.0), "p": ps.astype(float)})
    assert p == ps[np.argmin(times)] and t == pytest.approx(times.min())


@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d.update(format="pickle"), "not an automodel model file"),
    (lambda d: d.update(version=99), "version 99 is not supported"),
    (lambda d: d["model"]["terms"][0].append({"kind": "lambda", "param": "n"}), "unknown factor kind"),
    (lambda d: d["model"]["coefficients"].__setitem__(0, "__import__('os').system('x')"), "finite number"),
    (lambda d: d["model"].update(kind="code"), "unknown model kind"),
    (lambda d: d.update(params=["n; rm -rf"]), "'params' must be"),
])
def test_hostile_model_files_are_refused(fitted, tmp_path, mutate, fragment):
    d = fitted[0].best.to_dict()
    mutate(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ModelFileError) as err:
        load_model(path)
    assert fragment in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", '{"format": NaN}', "\x00\x01"])
def test_corrupt_model_files(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ModelFileError):
        load_model(path)
