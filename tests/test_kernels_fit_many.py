"""fit_many: the same models as automodel.fit, groups, notes, errors, formulas, parallel runs, model files
and the ``automodel kernels`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.errors import DataError, ModelFileError, SpaceError
from automodel.solve import metrics
from automodel.kernels.fit_many import fit_many
from automodel.model_file import load_models, save_models


def _kernels(param: str, values: np.ndarray, n_kernels: int, seed: int = 0, reps: int = 1) -> pd.DataFrame:
    """Kernels a + b x^e log2(x)^l with 3 % noise, one row per repetition."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_kernels):
        a, b = rng.uniform(0.5, 5.0, 2)
        e, l = rng.choice([0.5, 1.0, 1.5]), rng.integers(0, 2)
        for x in values:
            for _ in range(reps):
                t = (a + b * x ** e * np.log2(x) ** l) * (1 + 0.03 * rng.standard_normal())
                rows.append({"kernel": f"k{k}", param: x, "time": t})
    return pd.DataFrame(rows)


def _same_as_fit(result, frame: pd.DataFrame, param: str, **options):
    for name, sub in frame.groupby("kernel"):
        model = result.models[name]
        sub = sub.drop(columns="kernel")
        chosen = automodel.fit(sub, templates=(), progress=False, intervals=False,  # bands come after the choice
                               params=[param] if param not in ("n", "p") else (), **options).best
        assert model.formula == chosen.formula, name
        assert result.summary.set_index("kernel").loc[name, "formula"] == model.formula
        for metric in metrics.METRICS:
            np.testing.assert_allclose(model.metrics[metric], chosen.metrics[metric], rtol=1e-6, err_msg=metric)
        at = {param: [4 * frame[param].max()]}
        np.testing.assert_allclose(model.predict(at), chosen.predict(at), rtol=1e-8)
        assert model.params == chosen.params and model.ranges == chosen.ranges
        assert model.core.terms == chosen.core.terms


@pytest.mark.parametrize("param, metric, selection", [("p", None, None), ("p", "loo", "best"), ("p", "s", None),
                                                      ("x", "forward", None), ("p", "rel_s", "simplest")])
def test_single_stage_kernels_get_the_model_automodel_fit_chooses(param, metric, selection):
    frame = _kernels(param, 2.0 ** np.arange(1, 7), 8, seed=3, reps=2)
    options = {k: v for k, v in (("metric", metric), ("selection", selection)) if v}
    result = fit_many(frame, params=None if param in ("n", "p") else [param], **options)
    assert "1 group(s) solved batched" in result.notes[0]
    assert list(result.models) == [f"k{k}" for k in range(8)]
    _same_as_fit(result, frame, param, **options)


def test_multi_stage_kernels_are_searched_one_by_one():
    frame = _kernels("n", np.array([100.0, 200, 400, 800, 1600, 3200]), 3, seed=4)
    result = fit_many(frame, jobs=1)
    assert "1 group(s) of kernels searched one by one" in result.notes[0]
    _same_as_fit(result, frame, "n")


def _grid_kernels(params: dict[str, np.ndarray], n_kernels: int, seed: int) -> pd.DataFrame:
    """Kernels on the full grid of ``params``: a constant plus sums and products of a power or log of each
    parameter, 1-5 % noise (drawn per kernel), some parameters without effect."""
    rng = np.random.default_rng(seed)
    names = list(params)
    grid = np.array(np.meshgrid(*params.values(), indexing="ij")).reshape(len(names), -1).T
    shapes = [lambda x: x ** 0.5, lambda x: x, lambda x: x * np.log2(x), lambda x: x ** 1.5, np.log2,
              lambda x: 1.0 / x, lambda x: np.ones_like(x)]
    rows = []
    for k in range(n_kernels):
        f = [shapes[i] for i in rng.integers(len(shapes), size=len(names))]
        parts = [fi(grid[:, j]) / fi(params[q].max()) for j, (q, fi) in enumerate(zip(names, f))]
        clean = rng.uniform(0.1, 2) + (np.prod(parts, axis=0) if k % 2 else sum(parts)) * rng.uniform(1, 10)
        t = clean * (1 + rng.uniform(0.01, 0.05) * rng.standard_normal(len(grid)))
        rows.append(pd.DataFrame(grid, columns=names).assign(kernel=f"k{k:02d}", time=t))
    return pd.concat(rows, ignore_index=True)


def _one_by_one(frame: pd.DataFrame, params: list[str]) -> dict:
    """Each kernel searched alone (the staged search of automodel.fit) and its model chosen by the rule of
    the kernels (:func:`automodel.kernels.choice.choose`): kernel name -> (formula, coefficients, metrics)."""
    from automodel import data
    from automodel.fitting import model_context
    from automodel.kernels.choice import choose
    from automodel.kernels.modelling import _beyond, _lengths, _model
    from automodel.search.choice import probe_values, term_ceiling
    from automodel.search.engine import staged_search
    from automodel.search.score import all_metrics
    from automodel.data.splits import holdout_rows
    from automodel.space.config import load_space

    sp = load_space("default")
    out = {}
    for name, sub in frame.groupby("kernel"):
        ds = data.load(sub.drop(columns="kernel"), params=[q for q in params if q not in ("n", "p")])
        res = staged_search(ds, sp, progress=False)
        sc, order = res.scores, res.order
        n_terms = np.maximum((np.nan_to_num(sc.coefficients[order]) != 0.0).sum(axis=1), 1)
        se = ds.aggregate_se()
        terms = list(dict.fromkeys(t for s in sc.structures for t in s.terms))
        index = {t: i for i, t in enumerate(terms)}  # terms.index compared terms one by one: 12 s
        columns = np.full((len(sc.structures), sc.coefficients.shape[1]), -1)
        for i, s in enumerate(sc.structures):
            columns[i, :len(s.terms)] = [index[t] for t in s.terms]
        probes = probe_values(terms, ds.frame, ds.params)
        beyond = _beyond(probes, columns, order[None], sc.coefficients[order][None])
        length = _lengths(terms, columns, order[None], sc.coefficients[order][None])
        held = holdout_rows(ds)
        pick = choose(sc.metric(sp.fit.metric)[order][None], n_terms[None], np.ones(len(order), bool), ds.n_points,
                      sp, (np.array([se[0]]), np.array([se[1]])), beyond=beyond, length=length,
                      holdout=sc.metric("holdout")[order][None], n_holdout=0 if held is None else int(held.sum()),
                      ceiling=term_ceiling(probes))[0]
        top = int(order[pick])
        mets = {k: float(v[0]) for k, v in all_metrics(sc, [top], ds, sp.fit).items()}
        out[name] = _model(sc.structures[top].terms, sc.coefficients[top], mets, model_context(ds, sp))
    return out


def _same_models(result, alone: dict) -> None:
    """Formula text equal, coefficients within 1e-9 relative, every metric alike."""
    for name, model in alone.items():
        got = result.models[name]
        assert got.formula == model.formula, name
        assert got.core.terms == model.core.terms, name
        np.testing.assert_allclose(got.core.coefficients, model.core.coefficients, rtol=1e-9, atol=0, err_msg=name)
        for metric in metrics.METRICS:
            np.testing.assert_allclose(got.metrics[metric], model.metrics[metric], rtol=1e-6, err_msg=metric)


def test_two_parameter_kernels_are_searched_together_with_the_models_of_their_own_searches():
    """30 kernels of p and n (shapes, noise and which parameter matters vary): each stage scored for all
    kernels at once, each kernel pruned by its own scores, so each gets the model of its search alone."""
    frame = _grid_kernels({"p": np.array([3.0, 6, 12, 24, 48]), "n": np.array([1000.0, 2000, 4000, 8000, 16000])},
                          30, seed=8)
    result = fit_many(frame, jobs=1)
    assert "0 group(s) solved batched, 1 group(s) of kernels searched one by one" in result.notes[0]
    assert len(result.models) == 30
    alone = _one_by_one(frame, ["p", "n"])
    _same_models(result, alone)
    assert len({m.formula for m in alone.values()}) > 20  # different shapes, different models
    fit = [automodel.fit(sub.drop(columns="kernel"), templates=(), progress=False, intervals=False).best.formula
           == result.models[name].formula for name, sub in frame.groupby("kernel")]
    assert np.mean(fit) > 0.9  # 29 of 30: fit compares beyond the data the rows it shows, the kernels every one
    part = fit_many(frame[frame["kernel"].isin(["k03", "k17", "k29"])], jobs=1)  # a kernel's model does not
    assert {k: m.formula for k, m in part.models.items()} == {k: result.models[k].formula for k in part.models}


def test_three_parameter_kernels_are_searched_together():
    """n, p and an extra parameter: the computation, communication, processor and parameter stages."""
    frame = _grid_kernels({"n": np.array([100.0, 300, 900, 2700]), "p": np.array([3.0, 6, 12, 24]),
                           "iters": np.array([5.0, 10, 20])}, 8, seed=9)
    result = fit_many(frame, params=["n", "p", "iters"], jobs=1)
    assert "1 group(s) of kernels searched one by one" in result.notes[0]
    _same_models(result, _one_by_one(frame, ["n", "p", "iters"]))


def test_groups_repetitions_and_kernels_without_a_model():
    a = _kernels("p", np.array([2.0, 4, 8, 16, 32]), 2, seed=5, reps=3)
    b = _kernels("p", np.array([1.0, 2, 4, 8]), 2, seed=6).assign(kernel=lambda f: f["kernel"] + "b")
    zero = pd.DataFrame({"kernel": "zero", "p": [1.0, 2, 4, 8], "time": [1.0, 0.0, 2.0, 3.0]})
    short = pd.DataFrame({"kernel": "short", "p": [1.0, 2.0, 2.0], "time": [1.0, 2.0, 2.1]})
    rep0 = pd.DataFrame({"kernel": "rep0", "p": [1.0, 2, 2, 2, 4], "time": [1.0, 2.0, -1.0, 2.0, 3.0]})
    frame = pd.concat([zero, a, short, b, rep0], ignore_index=True)
    result = fit_many(frame, jobs=1)
    assert result.summary["kernel"].tolist() == ["zero", "k0", "k1", "short", "k0b", "k1b", "rep0"]
    assert "2 group(s) solved batched" in result.notes[0] and "2 not modelled" in result.notes[0]
    notes = result.summary.set_index("kernel")["note"]
    assert notes["zero"] == "1 value(s) of 0 fitted as 0.5, half the smallest measured"  # a counter's 0
    assert "value -1 at p = 2 is negative" in notes["rep0"]  # one bad repetition, positive median
    assert "2 distinct point(s)" in notes["short"]
    assert set(result.models) == {"zero", "k0", "k1", "k0b", "k1b"}
    assert result.summary.set_index("kernel").loc["k0", "n_points"] == 5
    _same_as_fit(result, a, "p")  # repetitions: the median, as automodel.fit aggregates them
    lines = result.lines()
    assert len(lines) == 8 and "T = " in lines[0] and "(1 value(s) of 0" in lines[1] and "no model" in lines[4]


def test_bad_input_raises_one_line_errors():
    frame = _kernels("p", 2.0 ** np.arange(1, 5), 1)
    with pytest.raises(DataError, match="column 'kern': missing"):
        fit_many(frame, kernel="kern")
    bad = frame.astype({"p": object})
    bad.loc[2, "p"] = "eight"
    with pytest.raises(DataError, match=r"row 2, column 'p': expected a positive process count, got 'eight'"):
        fit_many(bad)
    with pytest.raises(DataError, match="column 'q': no such parameter"):
        fit_many(frame, params=["q"])
    with pytest.raises(SpaceError, match="unknown metric"):
        fit_many(frame, metric="r2")
    for jobs in (0, 1.5):  # joblib's ValueError "n_jobs == 0 in Parallel has no meaning": a traceback of --jobs 0
        with pytest.raises(DataError, match=rf"jobs: expected a whole number of workers from 1 to .*got {jobs}"):
            fit_many(frame, jobs=jobs)
        with pytest.raises(DataError, match="jobs: expected a whole number"):
            automodel.fit(frame[frame["kernel"] == "k0"].drop(columns="kernel"), jobs=jobs, templates="none")


def test_parallel_groups_give_the_serial_result():
    frames = [_kernels("p", 2.0 ** np.arange(s, s + 5), 3, seed=s).assign(kernel=lambda f, s=s: f["kernel"] + f"_{s}")
              for s in range(3)]
    frame = pd.concat(frames, ignore_index=True)
    serial = fit_many(frame, jobs=1)
    parallel = fit_many(frame, jobs=2, parallel_after=0.0)
    assert "in parallel" in parallel.notes[0] and "in parallel" not in serial.notes[0]
    pd.testing.assert_frame_equal(serial.summary, parallel.summary)


def test_models_file_round_trip(tmp_path):
    result = fit_many(_kernels("p", 2.0 ** np.arange(1, 6), 3))
    path = tmp_path / "models.json"
    save_models(result.models, path)
    back = load_models(path)
    assert {k: m.formula for k, m in back.items()} == {k: m.formula for k, m in result.models.items()}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "automodel-models", "version": 2, "models": {}}))
    with pytest.raises(ModelFileError, match="not an automodel models file"):
        load_models(bad)
    one = tmp_path / "one.json"
    result.models["k0"].save(one)  # a model file is a set of one model, named by the file
    assert {k: m.formula for k, m in load_models(one).items()} == {"one": result.models["k0"].formula}
    bad.write_text(json.dumps({"format": "automodel-model"}))
    with pytest.raises(ModelFileError, match="model file version None is not supported"):
        load_models(bad)


DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "extrap-text"


@pytest.mark.skipif(not DATASETS.is_dir(), reason="shared Extra-P text files not available")
@pytest.mark.parametrize("name", sorted(p.name for p in DATASETS.glob("*.txt")) if DATASETS.is_dir() else [])
def test_real_profiles_every_kernel_has_a_model_or_a_reason(name):
    from automodel.data.readers.extrap_text import read_extrap_text

    frame = read_extrap_text(DATASETS / name)
    result = fit_many(DATASETS / name, jobs=1)
    assert result.summary["kernel"].tolist() == list(dict.fromkeys(frame["kernel"]))
    for row in result.summary.itertuples():
        assert (row.kernel in result.models) == bool(row.formula), row  # else the note says why
    for kernel, model in result.models.items():
        points = frame.loc[frame["kernel"] == kernel, frame.attrs["params"]].drop_duplicates()
        assert np.isfinite(model.predict(points)).all(), kernel
    if name == "mpi_OpenMPI_mean.txt":  # one batched group of real measurements: automodel.fit's choice
        _same_as_fit(result, frame.drop(columns=["callpath", "metric"]), "p")


def test_many_result_repr_is_short_and_has_html():
    result = fit_many(_kernels("p", 2.0 ** np.arange(1, 6), 40))
    assert repr(result) == "<ManyResult: 40 of 40 kernels modelled; .summary, .models, .lines()>"
    html = result._repr_html_()
    assert html.startswith("<p>40 of 40 kernels modelled</p>") and "<table" in html and "k39" in html


def test_few_kernels_never_connect_to_the_scheduler():
    """The kernels of one group of at most PROBE_KERNELS run here whole: a scheduler that cannot be
    reached is not even tried (issue 32: --scheduler connects only when work is sent)."""
    result = fit_many(_kernels("p", 2.0 ** np.arange(1, 6), 3), scheduler="tcp://127.0.0.1:1")
    assert len(result.models) == 3 and "in parallel" not in result.notes[0]


def test_idle_workers_leave_the_busy_cores(monkeypatch):
    import os

    from automodel.search.workers import idle_workers

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (4.5, 4.0, 3.0))
    assert idle_workers(2) == 1  # a loaded two-core machine: this process alone
    monkeypatch.setattr(os, "getloadavg", lambda: (0.9, 0.5, 0.5))
    assert idle_workers(2) == 2 and idle_workers(8) == 2
