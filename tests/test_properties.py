"""Property-based tests of every public entry point that reads what a user gives it (issues 15 and 17).

Random tables (NaN, inf, signs, huge and tiny values, 400-digit integers, duplicate and constant
columns, one to a dozen rows, random names), random and hostile JSON, TOML, term strings and Extra-P
text go through the readers, :func:`automodel.fit`, :meth:`Model.predict`, the model-file loader and
the search-space loader. Every failure must be one of automodel's own errors with a one-line message;
nothing else may escape (no numpy, pandas, scipy, KeyError or IndexError from inside), no numpy warning
may be printed, and a prediction returned without an error is finite.

The number of examples per target is ``AUTOMODEL_PROPERTY_EXAMPLES`` (default 600, as CI runs them:
the examples are derandomized, so every run repeats the same ones and a larger count is a deeper
search, not a repeated one;
the closing note of issue 17 gives a run of 10000). Files are written to one path per test, rewritten
for every example.
"""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import automodel
from automodel.data.readers.extrap_text import read_extrap_text
from automodel.errors import AutomodelError
from automodel.model_file import model_from_dict
from automodel.space.config import load_space
from automodel.space.parse import parse_term

EXAMPLES = int(os.environ.get("AUTOMODEL_PROPERTY_EXAMPLES", "600"))
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])


def one_line_or_nothing(call, *args, **kwargs):
    """Run ``call``; an AutomodelError must be one line; any other exception or warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return call(*args, **kwargs)
        except AutomodelError as exc:
            message = str(exc)
            assert message and "\n" not in message and len(message) < 2000, message[:300]
            return None


# -- strategies --------------------------------------------------------------------------------------
NAMES = st.sampled_from(["time", "n", "p", "cpu", "bw", "k", "iters", "time", "x y", "", "Time", "n"])
CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-3, max_value=1e6),
    st.floats(min_value=0.05, max_value=1.0),
    st.sampled_from([0.0, -1.0, 1.0, 2.0, 1e-300, 1e300, 1e-100, 1e100, 5e-324, 10 ** 400, -(10 ** 400)]),
    st.integers(min_value=-10, max_value=10 ** 6),
    st.text(max_size=8),
    st.none(),
)


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 12) -> pd.DataFrame:
    """A table of runs: random column names (duplicates allowed) and cells of every kind."""
    names = draw(st.lists(NAMES, min_size=1, max_size=5))
    n_rows = draw(st.integers(min_rows, max_rows))
    columns = [draw(st.lists(CELLS, min_size=n_rows, max_size=n_rows)) for _ in names]
    frame = pd.DataFrame(dict(enumerate(columns)))
    frame.columns = names
    return frame


HOSTILE = st.sampled_from([0.0, -1.0, 1e-120, 1e120, np.nan, np.inf, 10 ** 400, "x", None])


@st.composite
def plausible_runs(draw) -> pd.DataFrame:
    """Runs that look like measurements (so the search really runs); sometimes one hostile cell."""
    n_rows = draw(st.integers(1, 12))
    frame = {"time": draw(st.lists(st.floats(1e-6, 1e4), min_size=n_rows, max_size=n_rows))}
    for name, low, high in (("n", 1.0, 1e7), ("p", 1.0, 1024.0), ("cpu", 0.01, 1.0), ("k", -5.0, 5.0)):
        if draw(st.booleans()):
            frame[name] = draw(st.lists(st.floats(low, high), min_size=n_rows, max_size=n_rows))
    if "p" in frame and draw(st.booleans()):
        frame["p"] = [float(round(v)) for v in frame["p"]]  # integer process counts, as measured
    frame = pd.DataFrame(frame).astype(object)
    if draw(st.integers(0, 3)) == 3:  # hypothesis draws small integers most: 0 means no hostile cell
        frame.iat[draw(st.integers(0, n_rows - 1)), draw(st.integers(0, frame.shape[1] - 1))] = draw(HOSTILE)
    return frame


JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10 ** 300),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
JSON = st.recursive(JSON_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(st.text(max_size=10), inner,
                                                                          max_size=4)), max_leaves=20)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One folder per module; each test rewrites its one file for every example (mktemp per example
    would cost more than the example)."""
    return tmp_path_factory.mktemp("examples")


@pytest.fixture(scope="module")
def model_dict(fitted) -> dict:
    """The chosen model's JSON body, its band's alternatives cut to two (each example copies the whole
    document; two are enough to reach the alternatives' reader)."""
    d = fitted[0].best.to_dict()
    d["interval"]["alternatives"] = d["interval"]["alternatives"][:2]
    return d


def _mutate(d, path: list, value):
    """``d`` with the entry at ``path`` (keys and indices, as far as they exist) replaced by ``value``."""
    d = json.loads(json.dumps(d))
    node = d
    for key in path[:-1]:
        nxt = node[key % len(node) if isinstance(key, int) else 0] if isinstance(node, list) and node else (
            node.get(key) if isinstance(node, dict) else None)
        if not isinstance(nxt, (dict, list)):
            break
        node = nxt
    if isinstance(node, dict):
        node[path[-1] if isinstance(path[-1], str) else "model"] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node) if isinstance(path[-1], int) else 0] = value
    return d


# -- targets -----------------------------------------------------------------------------------------
@settings(max_examples=EXAMPLES, **SETTINGS)
@given(tables())
def test_load_accepts_or_names_the_problem(frame):
    ds = one_line_or_nothing(automodel.data.load, frame)
    if ds is not None:
        assert np.isfinite(ds.frame.select_dtypes("number").to_numpy(float)).all()
        assert (ds.frame["time"] > 0).all()


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda s: s.encode("utf-8")))
def test_csv_reader_accepts_or_names_the_problem(scratch, content):
    path = scratch / "runs.csv"
    path.write_bytes(content)
    one_line_or_nothing(automodel.data.load, path)


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.one_of(plausible_runs(), tables(min_rows=3)))
def test_fit_and_predict_never_fail_unexpectedly(frame):
    params = ["k"] if "k" in frame.columns else []
    result = one_line_or_nothing(automodel.fit, frame, params=params, progress=False, templates="none")
    if result is None:
        return
    assert result.best.formula and math.isfinite(result.leaderboard[result.space.fit.metric].iloc[0])
    pred = one_line_or_nothing(result.best.predict, frame)
    if pred is not None:
        assert np.isfinite(pred).all()
    far = {q: [float(v) * 1e3 if q in ("n", "p") else float(v) for v in frame[q].head(3)]
           for q in result.best.params if q in frame.columns}
    pred = one_line_or_nothing(result.best.predict, far)
    if pred is not None:
        assert np.isfinite(pred).all()


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.lists(st.one_of(st.text(max_size=8), st.integers(0, 5)), min_size=1, max_size=4), JSON)
def test_model_loader_refuses_hostile_fields_in_one_line(model_dict, path, value):
    d = _mutate(model_dict, path, value)
    model = one_line_or_nothing(model_from_dict, d, "m.json")
    if model is not None:
        pred = one_line_or_nothing(model.predict, {q: [10.0] for q in model.params})
        if pred is not None:
            assert np.isfinite(pred).all()
        if "p" in model.params:  # its default p_max comes from the file's ranges (1e308: an OverflowError)
            found = one_line_or_nothing(model.best_p, **{q: 10.0 for q in model.params if q != "p"})
            assert found is None or 1 <= found.p <= 2 ** 53


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(JSON)
def test_model_loader_refuses_random_json(scratch, value):
    path = scratch / "m.json"
    path.write_text(json.dumps(value))
    one_line_or_nothing(automodel.load_model, path)


TOML_KEYS = st.sampled_from(["name", "fit", "stages", "metric", "weighting", "top", "max_terms", "terms",
                             "base", "groups", "computation", "p_only", "pmnf", "templates", "selection",
                             "prune_percentile", "nonnegative", "load", "functions", "x"])
TOML_VALUES = st.one_of(st.integers(-5, 10 ** 20), st.floats(allow_nan=True), st.booleans(),
                        st.sampled_from(['"n^2"', '"p^(1/0)"', '["n", "log2(p)"]', '["sigmoid(p, 1e999)"]',
                                         '"rel_s"', '"nope"', '[1, 2]', '{}', '"x"', '[["n"]]']))


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.lists(st.tuples(st.sampled_from(["", "[fit]", "[stages.p_only]", "[stages.computation]",
                                           "[stages.pmnf]", "[stages]", "[[stages.x]]"]),
                          TOML_KEYS, TOML_VALUES), max_size=6) | st.text(max_size=200).map(lambda s: [("", s, None)]))
def test_space_loader_refuses_hostile_toml(scratch, lines):
    text = "\n".join(f"{section}\n{key} = {value}" if value is not None else key
                     for section, key, value in lines)
    path = scratch / "space.toml"
    path.write_text(text)
    one_line_or_nothing(load_space, path)


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.text(alphabet="np()^/*-+ 0123456789.elogsqrtcimd_2,", max_size=40) | st.text(max_size=40))
def test_term_parser_refuses_in_one_line(text):
    term = one_line_or_nothing(parse_term, text)
    if term is not None:
        assert str(term)


EXTRAP_LINES = st.one_of(
    st.sampled_from(["PARAMETER p", "PARAMETER n", "PARAMETER p n", "POINTS 1 2 4 8", "POINTS ( 1 2 ) ( 4 8 )",
                     "POINTS 0 -1 2", "REGION main", "REGION", "METRIC time", "DATA 1 2 3", "DATA -1",
                     "DATA 1e-300", "DATA nan", "DATA 1e400", "# comment", "", "PARAMETER time"]),
    st.text(max_size=30))


NUMBERS = st.one_of(st.floats(1e-3, 1e4).map(lambda v: f"{v:.6g}"), st.sampled_from(["1", "2", "4", "8", "16"]),
                    st.sampled_from(["0", "-1", "1e-300", "1e300", "nan", "inf", "1" * 400, "x"]))


@st.composite
def extrap_files(draw) -> list[str]:
    """Extra-P text: mostly well-formed (so the kernels are fitted), with hostile numbers and lines."""
    params = draw(st.sampled_from([["p"], ["n"], ["p", "n"], ["x"]]))
    n_points = draw(st.integers(1, 6))
    points = [" ".join(str(draw(st.integers(1, 64)) * 10 ** j) if draw(st.integers(0, 5)) < 5 else draw(NUMBERS)
                       for j, _ in enumerate(params)) for _ in range(n_points)]
    lines = [f"PARAMETER {' '.join(params)}",
             "POINTS " + (" ".join(f"( {pt} )" for pt in points) if len(params) > 1 else " ".join(points))]
    for region in range(draw(st.integers(1, 3))):
        lines.append(f"REGION r{region}")
        lines += [f"DATA {' '.join(draw(NUMBERS) for _ in range(draw(st.integers(1, 3))))}"
                  for _ in range(n_points)]
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(EXTRAP_LINES))
    return lines


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.lists(EXTRAP_LINES, max_size=12) | extrap_files())
def test_extrap_text_reader_and_kernels_refuse_in_one_line(scratch, lines):
    path = scratch / "profile.txt"
    path.write_text("\n".join(lines))
    if one_line_or_nothing(read_extrap_text, path) is not None:
        result = one_line_or_nothing(automodel.fit_many, path, jobs=1)
        if result is not None:
            for model in result.models.values():
                assert np.isfinite(model.predict({q: [2.0] for q in model.params})).all()


ARGUMENTS = st.one_of(st.none(), st.integers(-10, 10 ** 20), st.floats(allow_nan=True, allow_infinity=True),
                      st.sampled_from([0, 1, 2, 0.5, 1.5, 2 ** 53, 2 ** 53 + 1, 10 ** 400, "8", "x"]))


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.fixed_dictionaries({}, optional={"n": ARGUMENTS, "p_min": ARGUMENTS, "p_max": ARGUMENTS,
                                           "cpu": ARGUMENTS, "bw": ARGUMENTS}))
def test_best_p_answers_within_bounds_or_names_the_argument(fitted, kwargs):
    model = fitted[0].best
    answer = one_line_or_nothing(model.best_p, **{"n": 1000.0, **kwargs})
    if answer is not None:
        p, t = answer.p, answer.time
        assert 1 <= answer.p_low <= p <= answer.p_high <= 2 ** 53 and math.isfinite(t) and t > 0
        assert answer.lower <= t <= answer.upper  # every fitted model has a band


# -- issue 31: hostile model files through every export ---------------------------------------------
CODE_NAMES = st.one_of(
    st.sampled_from(["lambda", "math", "log2", "double", "int", "max", "pow", "predicted_time", "_X", "__y",
                     "größe", "\ufb01", "fi", "None", "True", "exp", "sqrt", "ceil", "INFINITY", "n", "p", "cpu",
                     "bw", "lambda_", "math_", "a" * 64]),
    st.from_regex(r"[^\W\d]\w{0,6}", fullmatch=True))
#: the code a hostile string would run if it became code
PWN = "import sys; sys.modules['__main__'].__dict__['PWNED'] = 1"


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(st.lists(CODE_NAMES, min_size=1, max_size=6, unique=True),
       st.text(max_size=30).map(lambda s: f'{s}"""\n{PWN}\n') | st.text(max_size=30) | st.sampled_from(["default"]),
       st.text(max_size=20))
def test_every_export_of_a_loaded_model_is_code_that_runs_nothing_of_the_file(names, space, role):
    """A model of random (valid, keyword, builtin, C, non-ASCII) parameter names, a hostile space and
    role column, written as JSON and loaded: refused in one line, or every export format works, the
    Python compiles and runs to the model's prediction and runs nothing of the file."""
    from automodel.output.export import FORMATS, export
    from automodel.model.core import Model, TermModel
    from automodel.space.terms import ONE, power

    terms = (ONE,) + tuple(power(q, 1 + i % 2) for i, q in enumerate(names))
    core = TermModel(terms, (0.25,) + tuple(1e-3 * (i + 1) for i in range(len(names))))
    d = Model(core, tuple(names), {names[0]: role}, {q: [1.0, 4.0] for q in names}, {}, space).to_dict()
    model = one_line_or_nothing(model_from_dict, json.loads(json.dumps(d)), "m.json")
    if model is None:
        return
    for fmt in FORMATS:
        assert export(model, fmt)
    namespace: dict = {}
    exec(compile(export(model, "python"), "<export>", "exec"), namespace)  # noqa: S102 (the test runs it)
    values = [1.0 + 0.5 * i if q not in ("cpu", "bw") else 0.5 for i, q in enumerate(names)]
    got = namespace["predicted_time"](*values)
    assert "PWNED" not in namespace and "PWNED" not in __import__("sys").modules["__main__"].__dict__
    assert got == pytest.approx(model.predict({q: [v] for q, v in zip(names, values)})[0], rel=1e-12)
