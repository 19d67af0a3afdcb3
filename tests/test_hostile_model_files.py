"""Issue 31, cause 8 (and max_terms of cause 7): numbers in model files and search spaces that would
overflow, divide by zero or build without end are one-line errors; what a model file cannot hold (a
NaN fit error) is written as null, so every saved model loads again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from automodel.cli import main
from automodel.model.core import Model
from automodel.model_file import load_model
from automodel.templates import _fim_queue as fq
from automodel.templates.fim_cal import FimCalModel
from automodel.templates.fim_com import FimComModel
from automodel.templates.hockney import HockneyModel

CORPUS = Path(__file__).parent / "bad_inputs"
VALID = json.loads((CORPUS / "model_valid.json").read_text())
HUGE = 10 ** 400


def _file(tmp_path: Path, d: dict, name: str = "m.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


def test_a_400_digit_exponent_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = json.loads(json.dumps(VALID))
    d["model"]["terms"][0][0]["exponent"] = HUGE
    err = _one_line_error(capsys, "best-p", str(_file(tmp_path, d)), "--n", "400")
    assert "factor 0, 'exponent': expected an exponent such as 2 or '3/2' (an exponent is a fraction a/b with " \
           "|a| <= 1000 and b from 1 to 1000), got 1000000" in err


def _fim_com() -> dict:
    q = fq.QueueParams(zeta_max=20.0, meta_mean=0.5, meta_log=0.1, init_mean=4.0, recv_mean=1.0)
    return FimComModel("broadcast", q, job_size=128.0, reps=4, seed=2).to_dict()


def _fim_cal() -> dict:
    return FimCalModel(parameters=("n",), beta_tc=(1e6, 2.0), alpha=1.0, clock=2e9, method="first_step",
                       stages=1, uses_p=False).to_dict()


@pytest.mark.parametrize("body, field, message", [
    (_fim_com, "zeta_max", "'zeta_max' must be a finite number >= 0"),
    (_fim_com, "rms", "model field 'rms': expected a finite number"),
    (_fim_cal, "alpha", "'alpha' must be a finite number"),
    (_fim_cal, "beta_tc", "'beta_tc' must be a list of 2 finite numbers"),
    (lambda: HockneyModel("p2p", (), (1e-6,), (1e-9,), False, 0.1).to_dict(), "alphas",
     "model field 'alphas': numbers must be finite"),
])
def test_400_digit_numbers_in_template_files_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          body, field: str, message: str) -> None:
    d = body()
    d[field] = [HUGE] * len(d[field]) if isinstance(d[field], list) else HUGE
    err = _one_line_error(capsys, "show", str(_file(tmp_path, {**VALID, "model": d})))
    assert message in err


@pytest.mark.parametrize("ranges, message", [
    ({"n": [100, 800], "p": [0, 0]}, "'ranges': 'p': expected a positive process count at both ends, got [0, 0]"),
    ({"n": [100, 800], "p": [4, 1]}, "'ranges': 'p': expected [min, max] with min <= max, got [4, 1]"),
    ({"n": [0, 0], "p": [1, 4]}, "'ranges': 'n': expected a positive problem size at both ends, got [0, 0]"),
    ({"n": [100, HUGE], "p": [1, 4]}, "'ranges': 'n': expected [min, max], two finite numbers"),
    # 4x the largest trained p was infinity and int() of it an OverflowError traceback
    ({"n": [100, 800], "p": [1, 1e308]}, "'ranges': 'p': expected a positive process count between 1e-100 and "
                                         "1e+100 (the range automodel fits) at both ends, got [1, 1e+308]"),
    ({"n": [1e-300, 800], "p": [1, 4]}, "'ranges': 'n': expected a positive problem size between 1e-100 and "
                                        "1e+100 (the range automodel fits) at both ends, got [1e-300, 800]"),
])
def test_ranges_that_would_divide_by_zero_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], ranges,
                                                      message: str) -> None:
    path = _file(tmp_path, {**VALID, "ranges": ranges})
    assert _one_line_error(capsys, "best-p", str(path), "--n", "400") == f"automodel: error: {path}: {message}"


def _kohashi() -> dict:
    from automodel.templates.kohashi import KohashiModel

    return KohashiModel(n_terms=3, degree=0, coefficients=np.array([1.0, 0.5, 0.1])).to_dict()


def _rational() -> dict:
    from automodel.templates.rational import RationalModel

    return RationalModel(parts=("n",), coefficients=((1.0, 2.0),)).to_dict()


@pytest.mark.parametrize("body, field, value, message", [
    # math.isfinite of a 400-digit integer: an OverflowError traceback
    (_kohashi, "n_terms", HUGE, "model fields 'n_terms' (2-6) and 'degree' (0-3): expected small integers"),
    # a list among the part names: set() of them, a TypeError traceback
    (_rational, "parts", [[]], "model field 'parts': expected distinct names among"),
])
def test_template_fields_of_the_wrong_kind_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        body, field: str, value: object, message: str) -> None:
    d = body()
    d[field] = value
    err = _one_line_error(capsys, "show", str(_file(tmp_path, {**VALID, "model": d})))
    assert message in err


@pytest.mark.parametrize("options, message", [
    ({"unit": "s\x1b[2J\nautomodel: fake"}, "'options': 'unit': a unit must be s, ms, us, ns or a short printable "
                                             "label: "),
    ({"unit": 5}, "'options': 'unit': expected a string such as 's' or 'misses', got int"),
    (["unit"], "'options': expected an object, got list"),
    ({"ignore": "host"}, "'options': 'ignore': expected a list of column names"),
    ({"ignore": ["\x1b[2J"]}, "'options': 'ignore': expected a list of column names"),
])
def test_a_unit_the_commands_print_is_printable(tmp_path: Path, capsys: pytest.CaptureFixture[str], options,
                                                message: str) -> None:
    """best-p printed a model file's unit as it was: an escape sequence reached the terminal."""
    err = _one_line_error(capsys, "best-p", str(_file(tmp_path, {**VALID, "options": options})), "--n", "400")
    assert message in err and "\x1b" not in err


@pytest.mark.parametrize("roles, message", [
    ({"n": "x", "p": "x"}, "'roles': the column 'x' is mapped to 'n' and 'p'"),
    ({"n": "p"}, "'roles': the column 'p' is mapped to 'n' and 'p'"),
    ({"time": "n"}, "'roles': the column 'n' is mapped to 'time' and 'n'"),
])
def test_two_names_mapped_to_one_column_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], roles,
                                                     message: str) -> None:
    """A model file whose roles read two parameters (or one and the time) from one column: evaluate was a
    pandas ValueError traceback ('Grouper for 'x' not 1-dimensional') and predict read one column for both."""
    runs = tmp_path / "runs.csv"
    runs.write_text("n,p,x,time\n100,1,1,0.1\n200,2,2,0.1\n")
    err = _one_line_error(capsys, "evaluate", str(_file(tmp_path, {**VALID, "roles": roles})), str(runs))
    assert message in err


def test_a_curve_the_model_cannot_draw_everywhere_is_drawn_where_it_can(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """sqrt(n - 400) has no value below n = 400: plot refused the whole figure with an error at
    '<DataFrame>, row 0', a point of its own curve that no file holds."""
    d = json.loads(json.dumps(VALID))
    d["model"]["terms"][0][0] = {"kind": "power", "param": "n", "exponent": "1/2", "offset": -400}
    out = tmp_path / "fig.png"
    assert main(["plot", str(_file(tmp_path, d)), "-o", str(out)]) == 0
    assert out.stat().st_size > 0 and "<DataFrame>" not in capsys.readouterr().err


def test_a_fim_com_model_without_rms_is_saved_as_valid_json_and_loads_again(tmp_path: Path) -> None:
    body = _fim_com()
    del body["rms"]
    path = _file(tmp_path, {**VALID, "model": body})
    model = load_model(path)
    saved = tmp_path / "again.json"
    model.save(saved)
    assert json.loads(saved.read_text())["model"]["rms"] is None
    again = load_model(saved)
    assert isinstance(again, Model) and again.to_dict() == model.to_dict()


def test_a_search_space_asking_for_a_million_terms_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "space.toml"
    space.write_text('[stages.p_only]\nmax_terms = 1000000\nterms = ["1/p", "log2(p)", "p", "p^2", "sqrt(p)", '
                     '"1", "p*log2(p)", "1/p^2", "p^3", "log2(p)^2", "p^(3/2)", "p^(1/3)", "p^(2/3)", "p^(1/4)", '
                     '"p^(5/2)", "p^4", "p^(1/5)", "p^5", "p^(1/6)", "p^6"]\n')
    runs = tmp_path / "runs.csv"
    runs.write_text("p,time\n" + "".join(f"{p},{10 / p + 1}\n" for p in (1, 2, 4, 8, 16)))
    err = _one_line_error(capsys, "fit", str(runs), "--space", str(space))
    assert err == (f"automodel: error: {space}: [stages.p_only] max_terms = 1,000,000: more than 100,000 subsets of "
                   "its 20 terms to try; expected at most 6")
    space.write_text('[stages.p_only]\ntop = 100000000\nterms = ["1/p"]\n')
    assert "top: expected an integer from 1 to 1,000,000, got 1e+08" in _one_line_error(
        capsys, "fit", str(runs), "--space", str(space))


def _constant_1e308(d: dict) -> dict:
    d = json.loads(json.dumps(d))
    d["model"]["terms"].append([])  # a constant term: 1e308 s everywhere, finite
    d["model"]["coefficients"].append(1e308)
    return d


@pytest.mark.parametrize("command", [["plot", "--candidates", "-o", "fig.png"], ["plot", "-o", "fig.png"],
                                     ["report", "-o", "page.html"]])
@pytest.mark.parametrize("model", [{k: v for k, v in VALID.items() if k != "ranges"}, _constant_1e308(VALID)],
                         ids=["no ranges", "coefficient 1e308"])
def test_a_model_file_without_ranges_or_with_huge_times_is_drawn_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], model: dict) -> None:
    """'ranges' is optional in a model file (a store's leader without runs has none): plot --candidates
    and report indexed it by parameter, a KeyError traceback. A model that predicts 1e308 s: matplotlib's
    ValueError on placing ticks; such times are left out of the drawing."""
    path = _file(tmp_path, model)
    out = tmp_path / command[-1]
    assert main([command[0], str(path), *command[1:-1], str(out)]) == 0
    assert out.stat().st_size > 0
    if command[0] == "report" and "ranges" not in model:
        assert "no trained range of &#x27;n&#x27; to choose the best p at" in out.read_text()


def test_an_infinite_anomaly_severity_is_saved_as_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seven identical runs at p = 1 make the residuals' MAD 0, so the runs no model explains have an
    infinite robust z-score: writing the model was a ValueError traceback of json.dumps."""
    runs = tmp_path / "runs.csv"
    runs.write_text("p,time\n" + "1,1\n" * 7 + "2,4\n4,2\n8,1\n")
    out = tmp_path / "m.json"
    assert main(["fit", str(runs), "--quiet", "--templates", "none", "-o", str(out)]) == 0
    anomalies = json.loads(out.read_text())["options"]["anomalies"]
    assert [run["severity"] for run in anomalies] == [None, None]
    assert isinstance(load_model(out), Model)


#: a fitted model's interval (0.001 n/p + 0.01 p on n = 100..800, p = 1..4), its parts then made absurd
INTERVAL = {"run": 0.0, "misfit": 0.01, "dof": 10, "ranges": {"n": [100.0, 800.0], "p": [1.0, 4.0]},
            "growth": {"n": 0.11, "p": 0.21}, "covariance": [[1e-8, 0.0], [0.0, 1e-6]], "alternatives": [],
            "noise_seconds": 0.001, "run_dof": 0, "growth_dof": {"n": 11.0, "p": 6.0}}


@pytest.mark.parametrize("field, value", [("run", 1e308), ("growth", {"n": 1e308, "p": 1e308}),
                                          ("covariance", [[1e308, 1e308], [1e308, 1e308]])])
def test_a_band_part_of_1e308_is_no_bound_without_a_traceback_or_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object) -> None:
    """``interval.run = 1e308``: suggest's ``sigma ** 2`` raised an OverflowError traceback; the growth and
    covariance of 1e308 printed numpy's overflow warnings (two lines each) on predict, plot and suggest."""
    d = json.loads(json.dumps(VALID))
    d["model"] = {"kind": "terms", "coefficients": [0.001, 0.01],
                  "terms": [[{"kind": "power", "param": "n", "exponent": 1},
                             {"kind": "power", "param": "p", "exponent": -1}],
                            [{"kind": "power", "param": "p", "exponent": 1}]]}
    d["ranges"] = {"n": [100, 800], "p": [1, 4]}
    d["interval"] = {**INTERVAL, field: value}
    model = _file(tmp_path, d)
    with np.errstate(all="raise"):  # an overflow left unhandled raises
        assert main(["suggest", str(model), "--target", "n=3200,p=16", "--count", "2"]) == 0
        assert main(["best-p", str(model), "--n", "3200"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Warning" not in err
    assert "inf" in out  # the band at the target is unbounded above


def test_a_key_given_twice_in_a_model_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json keeps the last of two equal keys: a hand-edited file with a second "coefficients" was read
    with one of them, silently."""
    text = json.dumps(VALID)
    path = tmp_path / "m.json"
    path.write_text(text[:-1] + ', "format": "automodel-model"}')
    err = _one_line_error(capsys, "show", str(path))
    assert err == (f'automodel: error: {path}: not a valid model JSON file (the key "format" is given twice in one '
                   'object)')


@pytest.mark.parametrize("body, params, absent", [
    ({"kind": "template", "template": "amdahl", "version": 1, "c1": 1.0, "c2": 0.5, "notes": []}, ["n"], "p"),
    ({"kind": "template", "template": "prophesy", "version": 1, "coefficients": [1.0, 2.0], "notes": []}, ["p"], "n"),
    (_fim_com(), ["n"], "p"),
])
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_template_reading_a_parameter_the_file_lacks_names_the_model_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: dict, params: list, absent: str, command: str) -> None:
    """Before: 'automodel: error: data: missing column 'p'', blaming the rows (which have p); now the model
    file is refused when read, naming it and the parameter its template reads."""
    d = {**VALID, "model": body, "params": params, "roles": {q: q for q in params},
         "ranges": {q: [1.0, 8.0] for q in params}}
    d.pop("interval", None)
    model, runs = _file(tmp_path, d), tmp_path / "runs.csv"
    runs.write_text("n,p,time\n100,1,0.1\n200,2,0.1\n")
    err = _one_line_error(capsys, command, str(model), str(runs))
    assert err == (f"automodel: error: {model}: 'model': template {body['template']!r} reads parameter {absent!r}, which "
                   f"is not in the file's 'params' ({', '.join(params)}); expected the parameters it was fitted on")
