"""Reading model files: the round trip, and malformed or hostile files refused in one line."""

import json

import numpy as np
import pytest

import automodel
from automodel.errors import ModelFileError
from automodel.model_file import MAX_FILE_BYTES, load_model, model_from_dict


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
    assert automodel.load_model is load_model


def test_template_models_load_through_the_registry(fitted, tmp_path):
    result, runs = fitted
    kohashi = next(m for m in result.models if m.name == "kohashi")
    path = tmp_path / "k.json"
    kohashi.save(path)
    back = load_model(path)
    assert back.name == "kohashi"
    frame = runs.rename(columns={"n": "size"})
    assert np.array_equal(back.predict(frame), kohashi.predict(frame))


@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d.update(format="pickle"), "not an automodel model file"),
    (lambda d: d.update(version=99), "version 99 is not supported"),
    (lambda d: d.update(version=True), "version True is not supported"),  # true == 1 in Python
    (lambda d: d["model"]["terms"][0].append({"kind": "lambda", "param": "n"}), "unknown factor kind"),
    (lambda d: d["model"]["coefficients"].__setitem__(0, "__import__('os').system('x')"), "finite number"),
    (lambda d: d["model"].update(kind="code"), "unknown model kind"),
    (lambda d: d.update(params=["n; rm -rf"]), "'params' must be"),
    (lambda d: d.update(model=[1, 2]), "'model' must be an object"),
    (lambda d: d.update(model={"kind": "template", "template": "os.system"}), "unknown template 'os.system'"),
    (lambda d: d.update(model={"kind": "template", "template": "prophesy", "version": 1,
                               "coefficients": ["1e3"]}), "expected a list of numbers"),
    (lambda d: d.update(roles={"n": 3}), "'roles' must map"),
    (lambda d: d.update(ranges={"n": [1]}), "'ranges': 'n': expected [min, max], two finite numbers"),
    (lambda d: d.update(metrics={"s": "low"}), "'metrics' must map"),
    (lambda d: d.update(options={**d["options"], "where": ["n > 1"]}),
     "'options': 'where': expected the condition of fit --where"),
    # issue 17, cause 10: a template name that is an object or a list was a TypeError (unhashable)
    (lambda d: d.update(model={"kind": "template", "template": {"a": 1}}), "unknown template {'a': 1}"),
    (lambda d: d.update(model={"kind": "template", "template": ["x"]}), "unknown template ['x']"),
    # issue 17, cause 5: integers too large for a float were an OverflowError
    (lambda d: d["model"]["coefficients"].__setitem__(0, 10 ** 400), "finite number, got 1000000"),
    (lambda d: d.update(ranges={"n": [1, 10 ** 400]}), "'ranges': 'n': expected [min, max], two finite numbers"),
    (lambda d: d.update(metrics={"s": 10 ** 400}), "'metrics' must map"),
    # a term of too many factors said "expected a list of factors, got list"
    (lambda d: d["model"]["terms"].__setitem__(0, d["model"]["terms"][0] * 40),
     "term 0: expected a list of at most 16 factors, got"),
])
def test_hostile_model_files_are_refused(fitted, tmp_path, mutate, fragment):
    d = fitted[0].best.to_dict()
    mutate(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ModelFileError) as err:
        load_model(path)
    assert fragment in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", '{"format": NaN}', "\x00\x01"])
def test_corrupt_model_files(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ModelFileError):
        load_model(path)


def test_missing_and_oversized_files(tmp_path):
    with pytest.raises(ModelFileError, match="no such file"):
        load_model(tmp_path / "absent.json")
    big = tmp_path / "big.json"
    big.write_text(" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(ModelFileError, match="larger than a model file can be"):
        load_model(big)


def test_model_from_dict_names_its_source():
    with pytest.raises(ModelFileError, match="^kernel 'k': not an automodel model file"):
        model_from_dict({"format": "x"}, "kernel 'k'")


def test_a_models_file_builds_the_kernel_asked_for_alone(fitted, tmp_path):
    """``predict models.json --kernel K`` built and checked every model of a file of 20,000 kernels (10-18 s)
    before keeping one; a kernel is named by its label or, with one metric, by its call path."""
    from automodel.errors import DataError
    from automodel.model_file import load_models, save_models

    best = fitted[0].best
    path = tmp_path / "models.json"
    save_models({"solve [time]": best, "io [time]": best}, path)
    body = json.loads(path.read_text())
    body["models"]["io [time]"]["model"] = {"kind": "no such kind"}  # a model that does not load
    path.write_text(json.dumps(body))
    with pytest.raises(ModelFileError, match="kernel 'io \\[time\\]'"):
        load_models(path)
    for name in ("solve [time]", "solve"):
        (only,) = load_models(path, kernel=name).values()
        assert only.formula == best.formula
    with pytest.raises(DataError, match="no kernel 'mpi'; expected one of 'solve \\[time\\]', 'io \\[time\\]'$"):
        load_models(path, kernel="mpi")
