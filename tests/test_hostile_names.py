"""Issue 31, security: nothing from a model file becomes code, names are printed escaped, and exports of
names that are valid but not valid code (``lambda``, ``math``, ``log2``, ``double``, ``ﬁ`` beside ``fi``)
compile and compute what ``predict`` does."""

import json
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from automodel.cli import main
from automodel.errors import DataError, ModelFileError, SpaceError
from automodel.output.export import export
from automodel.model.core import Model, TermModel
from automodel.model_file import load_model, load_models, save_models
from automodel.names import code_names, printable
from automodel.space.terms import ONE, power

#: the code a hostile string would run: it sets this module attribute
SENTINEL = "import sys; sys.modules['__main__'].__dict__['PWNED'] = 1; PWNED = 1"
HOSTILE_TEXTS = [
    f'x"""\n{SENTINEL}\n"""',
    f"x'''\n{SENTINEL}\n'''",
    f"x\r{SENTINEL}",
    f"x\u2028{SENTINEL}",
    f"x */ int pwned = 1; /* {SENTINEL}",
    f"x\\\n{SENTINEL}",
    f"x\x0c{SENTINEL}",
    f"\x1b[2J\nautomodel: error: forged",
]


def _model(params, space="default", roles=None):
    """A term model by hand (no loader, no validation): the constant plus one term per parameter."""
    terms = [ONE] + [power(q) if i % 2 else power(q, 2) * power("n") if "n" in params else power(q, 2)
                     for i, q in enumerate(params)]
    coefs = [0.5] + [1e-3 * (i + 1) for i in range(len(params))]
    return Model(TermModel(tuple(terms), tuple(coefs)), tuple(params), dict(roles or {}),
                 {q: [1.0, 8.0] for q in params}, {}, space)


def _saved(tmp_path, mutate):
    d = _model(["n", "p"]).to_dict()
    mutate(d)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(d))
    return path


def _run_python(source, args):
    namespace = {"__name__": "exported"}
    exec(compile(source, "<export>", "exec"), namespace)  # the test runs the printed code; automodel never does
    value = namespace["predicted_time"](*args)
    assert "PWNED" not in namespace and "PWNED" not in sys.modules["__main__"].__dict__
    return value


# -- 1. a model file's strings never become code -----------------------------------------------
@pytest.mark.parametrize("space", HOSTILE_TEXTS)
def test_hostile_space_in_a_model_file_is_refused_in_one_line(tmp_path, space):
    path = _saved(tmp_path, lambda d: d.update(space=space))
    with pytest.raises(ModelFileError) as err:
        load_model(path)
    message = str(err.value)
    assert message.startswith(f"{path}: 'space': expected a name of letters") and "\n" not in message
    assert message.isprintable()


@pytest.mark.parametrize("space", HOSTILE_TEXTS)
def test_python_and_c_exports_run_nothing_of_the_space(tmp_path, space):
    model = _model(["n", "p"], space=space)  # built by hand: no loader stands between it and the export
    source = export(model, "python")
    assert _run_python(source, (1000.0, 4.0)) == pytest.approx(model.predict({"n": [1000.0], "p": [4.0]})[0],
                                                              rel=1e-12)
    assert source.count("\n") == 7 and all(line.isprintable() and line.isascii() for line in source.splitlines())
    c = export(model, "c")
    assert "pwned" not in c.split("*/")[-1] and c.count("/*") == c.count("*/") == 1


@pytest.mark.parametrize("unit, in_c", [('""";exec(input())#', '""";exec(input())#'), ("a*/b", "a*\\/b"),
                                        ("it's\"", "it\\'s\""), ("x\\", "x\\\\"), ("\\N{x}", "\\\\N{x}")])
def test_a_unit_of_a_model_file_stays_inside_the_docstring(tmp_path, monkeypatch, unit, in_c):
    """The unit was written into the Python export's docstring as it was: ``\"\"\";exec(input())#`` ended
    the docstring and ran ``exec`` at each call of the function; ``a*/b`` was an invalid escape ``*\\/``."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**_model(["n", "p"]).to_dict(), "options": {"unit": unit}}))
    source = export(load_model(path), "python")
    monkeypatch.setattr("sys.stdin", None)  # exec(input()) would fail, not wait
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        namespace: dict = {}
        exec(compile(source, "<export>", "exec"), namespace)  # the test runs the printed code; automodel never does
    expected = _model(["n", "p"]).predict({"n": [2.0], "p": [2.0]})[0]
    assert namespace["predicted_time"](2.0, 2.0) == pytest.approx(expected, rel=1e-12)
    assert namespace["predicted_time"].__doc__ == f"Predicted value in {unit} (automodel)."
    assert f"/* Predicted value in {in_c} (automodel). */" in export(load_model(path), "c")


def test_a_valid_space_name_is_kept_in_a_comment(tmp_path):
    model = _model(["n", "p"], space="my space-2.1")
    source = export(model, "python")
    assert "    # space 'my space-2.1'\n" in source
    model.save(tmp_path / "m.json")
    assert load_model(tmp_path / "m.json").space == "my space-2.1"


def test_a_search_space_with_a_hostile_name_is_refused(tmp_path):
    from automodel.space.config import load_space

    path = tmp_path / "bad.toml"
    path.write_text('name = "x\\"\\"\\"\\nimport os"\n[stages.parameters]\nfunctions = ["log2(x)"]\n')
    with pytest.raises(SpaceError, match=r"bad\.toml: 'name' expected a name of letters"):
        load_space(path)


# -- 2. names from a file are validated on load and escaped when printed ------------------------------
@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d.update(roles={"n": "size\x1b[31m", "p": "p", "time": "time"}), "'roles', 'n': the column name"),
    (lambda d: d.update(roles={"n": "a\nautomodel: error: forged", "p": "p"}), "'roles', 'n': the column name"),
    (lambda d: d.update(roles={"n": "a\u202eb"}), "non-printable character '\\u202e'"),
    (lambda d: d.update(roles={"q\x1b": "n"}), "'roles': 'q\\x1b' is not a parameter"),
    (lambda d: d.update(ranges={"x\n": [1, 2]}), "'ranges': 'x\\n' is not a parameter"),
    (lambda d: d.update(metrics={"\x1b[2J": 1.0}), "'metrics': a metric name must be printable"),
    (lambda d: d.update(params=["n", "p", "\ufb01"]), "'params': '\ufb01' is not in NFKC normal form"),
    (lambda d: d.update(params=["n", "n"]), "'params': a parameter is named twice"),
])
def test_hostile_names_in_a_model_file_are_refused(tmp_path, mutate, fragment):
    path = _saved(tmp_path, mutate)
    with pytest.raises(ModelFileError) as err:
        load_model(path)
    assert str(path) in str(err.value) and fragment in str(err.value) and "\n" not in str(err.value)


def test_hostile_kernel_names_in_a_models_file_are_refused(tmp_path):
    path = tmp_path / "models.json"
    save_models({"k\x1b[31m": _model(["n", "p"])}, path)
    with pytest.raises(ModelFileError, match="'models': a kernel name must be printable text"):
        load_models(path)


def test_the_cli_prints_errors_as_one_escaped_line(tmp_path, capsys):
    path = _saved(tmp_path, lambda d: d.update(roles={"n": "a\x1b[2J\nautomodel: error: forged"}))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("automodel: error: ") and "\x1b" not in err
    assert "automodel: error: forged" not in err.replace("\\nautomodel: error: forged", "")


def test_printable_escapes_controls_and_keeps_text():
    assert printable("größe (s)") == "größe (s)"
    assert printable("a\x1b[31m\nb\u2028c\u202e") == "a\\x1b[31m\\nb\\u2028c\\u202e"


def test_fit_refuses_column_names_that_would_not_load(tmp_path):
    import automodel

    runs = pd.DataFrame({"n": [1e3, 2e3, 4e3] * 4, "p": np.repeat([1, 2, 4, 8], 3), "\ufb01": 1.0})
    runs["time"] = 1e-3 * runs["n"] / runs["p"] + 0.1
    with pytest.raises(DataError, match="'\ufb01' is not in NFKC normal form"):
        automodel.fit(runs, params=["\ufb01"], progress=False)
    with pytest.raises(DataError, match="the column of the 'time' role needs a printable name"):
        automodel.fit(runs.rename(columns={"time": "t\x1b[0m"}), time="t\x1b[0m", progress=False)


# -- 3. valid names that are not valid code are renamed in the exports -------------------------------
NAMES = ["n", "p", "cpu", "lambda", "math", "log2", "double", "int", "max", "iter", "größe", "\ufb01", "fi",
         "predicted_time", "_X", "lambda_", "bw", "pow"]


def test_code_names_are_distinct_valid_and_not_reserved():
    for language in ("python", "c"):
        names = code_names(NAMES, language)
        assert len(set(names.values())) == len(NAMES)
        assert names["n"] == "n" and names["fi"] == "fi" and names["lambda_"] == "lambda_"
    python = code_names(NAMES, "python")
    assert python["lambda"] == "lambda__" and python["math"] == "math_" and python["größe"] == "größe"
    c = code_names(NAMES, "c")
    assert c["log2"] == "log2_" and c["double"] == "double_" and c["größe"].isascii()


def _values(params):
    return {q: 1.0 + 0.37 * i if q not in ("cpu", "bw") else 0.5 + 0.02 * i for i, q in enumerate(params)}


def test_python_export_of_awkward_names_compiles_and_predicts():
    model = _model(NAMES)
    values = _values(NAMES)
    expected = model.predict({q: [v] for q, v in values.items()})[0]
    source = export(model, "python")
    assert "    # parameter 'lambda' is lambda__ here\n" in source
    assert _run_python(source, [values[q] for q in NAMES]) == pytest.approx(expected, rel=1e-12)


def test_python_export_keeps_defaults_only_where_they_are_valid():
    model = _model(["n", "p", "cpu", "k"])
    source = export(model, "python")
    assert "def predicted_time(n, p, cpu, k):" in source  # a default before k would not compile
    values = _values(model.params)
    assert _run_python(source, [values[q] for q in model.params]) == pytest.approx(
        model.predict({q: [v] for q, v in values.items()})[0], rel=1e-12)
    assert "def predicted_time(n, p, cpu=1.0, bw=1.0):" in export(_model(["n", "p", "cpu", "bw"]), "python")


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("params", [NAMES, ["n", "p"], ["double", "int", "log2", "exp", "sqrt", "ceil"]])
def test_c_export_of_awkward_names_compiles_and_predicts(tmp_path, params):
    model = _model(params, space=HOSTILE_TEXTS[4])
    values = _values(params)
    expected = model.predict({q: [v] for q, v in values.items()})[0]
    source = export(model, "c")
    program = tmp_path / "m.c"
    program.write_text(source + "\n#include <stdio.h>\nint main(void)\n{\n    printf(\"%.17g\\n\", predicted_time("
                       + ", ".join(repr(values[q]) for q in params) + "));\n    return 0;\n}\n")
    built = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-pedantic", "-o", str(tmp_path / "m"),
                            str(program), "-lm"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    out = subprocess.run([str(tmp_path / "m")], capture_output=True, text=True, check=True).stdout
    assert float(out) == pytest.approx(expected, rel=1e-12)


def test_fit_with_keyword_parameters_exports_code_that_runs():
    import automodel

    rng = np.random.default_rng(0)
    runs = pd.DataFrame({"n": np.tile([1e3, 2e3, 4e3, 8e3], 8), "p": np.repeat([1, 2, 4, 8], 8),
                         "lambda": rng.integers(1, 4, 32).astype(float), "math": rng.integers(1, 4, 32) * 2.0})
    runs["time"] = 1e-6 * runs["n"] * runs["lambda"] / runs["p"] + 0.01 * runs["p"]
    model = automodel.fit(runs, params=["lambda", "math"], progress=False).best
    row = runs.iloc[[5]]
    args = [float(row[q].iloc[0]) for q in model.params]
    assert _run_python(export(model, "python"), args) == pytest.approx(model.predict(row)[0], rel=1e-12)


# -- 2. store URLs: every password masked, a malformed URL one line ------------------------------------
@pytest.mark.parametrize("url", [
    "postgresql://me:s3cret@db.example.org:abc/runs",
    "postgresql://me@db.example.org:abc/runs?password=s3cret",
    "postgresql://me@db.example.org:99999/runs?sslmode=require&password=s3cret",
    "postgresql://me:s3c@ret@db.example.org:-1/runs?sslpassword=s3cret",
])
def test_malformed_store_urls_are_one_line_without_the_password(capsys, url):
    assert main(["ranking", "--app", "x", "--store", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "s3c" not in err and "Traceback" not in err
    assert "not a database URL (the port after the host must be a number from 0 to 65535)" in err
    assert "db.example.org" in err


def test_store_names_mask_passwords_in_the_query():
    from automodel.store.db import _shown

    assert _shown("postgresql://me@db/runs?password=s3cret&sslmode=require") == \
        "postgresql://me@db/runs?password=***&sslmode=require"
    assert _shown("postgresql://me:s3cret@db/runs") == "postgresql://me:***@db/runs"
    assert _shown("runs.db") == "runs.db"


def test_a_driver_message_quoting_the_password_is_masked():
    from automodel.store.db import Store, _secrets

    url = "postgresql://me:p%40ss@db/runs?password=s3cret"
    assert set(_secrets(url)) >= {"p@ss", "p%40ss", "s3cret"}
    store = Store.__new__(Store)  # no connection: only the masking of a cause is under test
    store._secrets = _secrets(url)
    cause = store._cause(ValueError('invalid dsn: password "s3cret" or "p@ss" rejected\nsecond line'))
    assert cause == 'invalid dsn: password "***" or "***" rejected'


@pytest.mark.parametrize("condition", ["time.to_csv('pwned.csv') == 0", "n > 0 and p.to_csv('pwned.csv') is None",
                                       "abs(n) > 0", "@main == 1",
                                       # backquotes inside strings hid the call from the check: it ran
                                       "'`' == n.to_csv('pwned.csv') or '`' == 'x' or n > 0",
                                       "n > 0 and '\\\\' == '`' or n.to_csv('pwned.csv')",
                                       "`nope` > 0", "n" + "+n" * 20000 + " > 0",
                                       # a big integer computed for ever, a string of ten gigabytes
                                       "n > 0 or 9**9**9 == 1", "n > 0 or 'a' * 10**10 == 'b'",
                                       "n ** 9**9**9 > 0", "n > 2 ** 10**5", "n > (1 - 2j) ** 2"])
def test_where_is_a_condition_and_runs_no_method(tmp_path, monkeypatch, capsys, condition):
    """pandas' python engine would run ``time.to_csv(...)``; ``--where`` takes conditions on columns only."""
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"n": [1.0, 2.0, 4.0] * 2, "p": [1.0] * 3 + [2.0] * 3, "time": [1.0, 2.0, 4.0, 0.5, 1.0, 2.0]}
                 ).to_csv("runs.csv", index=False)
    assert main(["fit", "runs.csv", "--where", condition, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--where" in err and "runs.csv" in err
    assert not (tmp_path / "pwned.csv").exists()
    assert main(["fit", "runs.csv", "--where", "n < 4 or p == 1", "--templates", "none", "--quiet"]) == 0
    assert main(["fit", "runs.csv", "--where", "`n` < 4 or `p` == 1", "--templates", "none", "--quiet"]) == 0
    # bounded arithmetic on constants is computed: a size written as a power of two
    assert main(["fit", "runs.csv", "--where", "n < 2**2 or p == 3 - 2", "--templates", "none", "--quiet"]) == 0


def test_where_refuses_arithmetic_on_a_text_column():
    """``name * n**3`` repeats each name n**3 times (pandas' python engine), memory without end."""
    from automodel.data.tidy import select_rows
    from automodel.errors import DataError

    frame = pd.DataFrame({"n": [1, 2], "name": ["a", "b"]})
    for condition in ("name * n**3 == 'x'", "`name` * n == 'x'"):
        with pytest.raises(DataError, match="arithmetic on text or a list"):
            select_rows(frame, condition)
    assert select_rows(frame, "name == 'b' and n * 2 > 3")["n"].tolist() == [2]


def test_the_report_escapes_a_column_name_in_the_typeset_formula(tmp_path, capsys):
    """sympy's MathML printer writes text raw: a column ``<img src=x onerror=alert(1)>`` became an element
    of the page (the policy allows inline handlers), in each report of a fit of such a column."""
    name = "<img src=x onerror=alert(1)>"
    n, p = np.meshgrid([100.0, 200.0, 400.0, 800.0], [1.0, 2.0, 4.0, 8.0])
    runs = pd.DataFrame({name: n.ravel(), "p": p.ravel(), "time": 1e-3 * n.ravel() / p.ravel() + 0.01})
    runs.to_csv(tmp_path / "runs.csv", index=False)
    page = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "runs.csv"), "--n", name, "--templates", "none", "--quiet",
                 "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "<img" not in html and "<mi>&lt;img src=x onerror=alert(1)&gt;</mi>" in html


@pytest.mark.parametrize("name", ["$\\foo$", "$\\frac{}$", "a$b$c"])
def test_a_column_name_with_dollars_is_drawn_as_text(tmp_path, capsys, name):
    """matplotlib reads text between two ``$`` as mathtext: a column ``$\\foo$`` (or a unit ``$\\x$``) was
    a ParseFatalException traceback of report and plot, exit 1; ``a$b$c`` drew b in italics."""
    n, p = np.meshgrid([100.0, 200.0, 400.0, 800.0], [1.0, 2.0, 4.0, 8.0])
    runs = pd.DataFrame({name: n.ravel(), "p": p.ravel(), "time": 1e-3 * n.ravel() / p.ravel() + 0.01,
                         "unit": "$\\x$"})
    runs.to_csv(tmp_path / "runs.csv", index=False)
    model, page = tmp_path / "m.json", tmp_path / "report.html"
    assert main(["fit", str(tmp_path / "runs.csv"), f"--n={name}", "--templates", "none", "--quiet",
                 "-o", str(model)]) == 0
    assert main(["report", str(model), "-o", str(page)]) == 0
    assert main(["plot", str(model), "-o", str(tmp_path / "m.svg")]) == 0
    svg = (tmp_path / "m.svg").read_text(encoding="utf-8")
    assert f"<!-- {name} -->" in svg and "<!-- $\\x$ -->" in svg  # matplotlib's comment: the text it drew
    capsys.readouterr()
