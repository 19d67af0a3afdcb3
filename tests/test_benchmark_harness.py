"""Tests of the engine-independent benchmark harness (tasks, scoring, Extra-P text, tool)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# benchmarks/ is not an installed package; make the repository root importable under plain `pytest`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import extrap_tool  # noqa: E402
from benchmarks.extrap_text import (format_text, frame_points,  # noqa: E402
                                    synthetic_kernels_text, task_text)
from benchmarks.scoring import (aggregate, best_p, reduce_repetitions,  # noqa: E402
                                relative_errors, score_group, summarize)
from benchmarks.tasks import Task, build_tasks  # noqa: E402

DATASETS = Path(os.environ.get("AUTOMODEL_DATASETS")
                or Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
needs_data = pytest.mark.skipif(not DATASETS.is_dir(), reason=f"no shared datasets at {DATASETS}")


def _task(p_sweep: bool = True) -> Task:
    """A hand-made two-parameter task: time = n / p + p, 2 repetitions per point."""
    rows = [(n, p, n / p + p + d) for n in (10, 20) for p in (1, 2, 4, 8) for d in (-0.5, 0.5)]
    frame = pd.DataFrame(rows, columns=["n", "p", "time"])
    return Task(name="toy", group="g=1", params={"n": "n", "p": "p"},
                train=frame[frame.p <= 2].reset_index(drop=True),
                test=frame[frame.p > 2].reset_index(drop=True), p_sweep=p_sweep, source="toy")


def _parse(text: str) -> tuple[list[str], list[tuple[float, ...]], dict[str, list[list[float]]]]:
    """Minimal reader of the Extra-P text grammar (mirrors extrap's TextFileReader)."""
    parameters: list[str] = []
    points: list[tuple[float, ...]] = []
    regions: dict[str, list[list[float]]] = {}
    region = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        field, _, value = line.partition(" ")
        if field == "PARAMETER":
            parameters += value.split()
        elif field == "POINTS":
            if "(" in value:
                points += [tuple(map(float, m.split())) for m in re.findall(r"\(([^)]*)\)", value)]
            else:
                points += [(float(v),) for v in value.split()]
        elif field == "REGION":
            region = value.strip()
            regions[region] = []
        elif field == "DATA":
            regions[region].append([float(v) for v in value.split()])
        else:
            assert field == "METRIC", field
    return parameters, points, regions


# --- scoring ---------------------------------------------------------------------------

def test_reduce_repetitions_takes_medians():
    rows = pd.DataFrame({"p": [2, 1, 1, 1], "time": [4.0, 1.0, 2.0, 9.0]})
    out = reduce_repetitions(rows, [5.0, 2.0, 2.0, 2.0], ["p"])
    assert out["p"].tolist() == [1, 2]
    assert out["time"].tolist() == [2.0, 4.0]
    assert out["pred"].tolist() == [2.0, 5.0]


def test_relative_errors_against_naive_loop():
    rng = np.random.default_rng(1)
    rows = pd.DataFrame({"a": rng.integers(0, 3, 40), "b": rng.integers(0, 2, 40),
                         "time": rng.uniform(1, 2, 40)})
    pred = rng.uniform(1, 2, 40)
    got = relative_errors(rows, pred, ["a", "b"])
    expected = []
    for key in sorted(set(zip(rows.a, rows.b))):
        mask = (rows.a == key[0]) & (rows.b == key[1])
        actual = np.median(rows.time[mask])
        expected.append(abs(np.median(pred[mask]) - actual) / actual)
    np.testing.assert_allclose(got, expected)


def test_relative_errors_rejects_misaligned_predictions():
    with pytest.raises(ValueError, match="one prediction per row"):
        relative_errors(pd.DataFrame({"p": [1, 2], "time": [1.0, 2.0]}), [1.0], ["p"])


def test_summarize_median_mean_worst_and_nan():
    s = summarize([0.1, 0.2, 0.6])
    assert (s.median, s.worst, s.n_points) == (0.2, 0.6, 3)
    assert s.mean == pytest.approx(0.3)
    bad = summarize([0.1, float("nan")])
    assert bad.worst == float("inf") and bad.mean == float("inf")
    assert summarize([]).n_points == 0


def test_best_p_per_slice_and_spearman():
    rows = pd.DataFrame({"n": [1, 1, 1, 2, 2, 2], "p": [1, 2, 4, 1, 2, 4],
                         "time": [3.0, 1.0, 2.0, 3.0, 2.0, 1.0]})
    pred = [3.0, 1.5, 2.5, 1.0, 2.0, 3.0]
    first, second = best_p(rows, pred, "p", ["n"])
    assert first.fixed == (1,) and first.actual_best_p == 2.0 and first.predicted_best_p == 2.0
    assert first.hit and first.spearman == pytest.approx(1.0)
    assert second.actual_best_p == 4.0 and second.predicted_best_p == 1.0
    assert not second.hit and second.spearman == pytest.approx(-1.0)


def test_best_p_ties_go_to_smallest_p_and_constant_gives_nan():
    rows = pd.DataFrame({"p": [1, 2, 4], "time": [1.0, 1.0, 2.0]})
    (only,) = best_p(rows, [5.0, 5.0, 5.0], "p")
    assert only.actual_best_p == 1.0 and only.predicted_best_p == 1.0
    assert np.isnan(only.spearman)


def test_score_group_and_aggregate():
    task = _task()
    exact = lambda f: (f.n / f.p + f.p).to_numpy()
    score = score_group(task, exact(task.test), exact(task.train))
    assert score.summary.worst == pytest.approx(0.0, abs=1e-12)
    assert score.summary.n_points == 4            # 2 n x 2 p configurations
    assert len(score.best_p) == 2 and score.best_p_hits == 2
    assert score.mean_spearman == pytest.approx(1.0)
    doubled = score_group(task, 2 * exact(task.test))
    assert doubled.best_p == ()                     # no train predictions: no best-p check
    np.testing.assert_allclose(doubled.errors, 1.0)
    agg = aggregate([score, doubled])
    assert agg["rows"].n_points == 8 and agg["rows"].worst == pytest.approx(1.0)
    assert agg["groups"].n_points == 2 and agg["groups"].mean == pytest.approx(0.5)


# --- Extra-P text ----------------------------------------------------------------------

def test_format_text_multi_parameter_round_trip():
    points = np.array([[1, 10], [2, 10.5]])
    text = format_text(["p", "n"], points, {"a": [[1.0, 2.0], [3.0]], "b": [[4.0], [5.0]]})
    parameters, parsed_points, regions = _parse(text)
    assert parameters == ["p", "n"]
    assert parsed_points == [(1.0, 10.0), (2.0, 10.5)]
    assert regions == {"a": [[1.0, 2.0], [3.0]], "b": [[4.0], [5.0]]}
    assert "POINTS ( 1 10 ) ( 2 10.5 )" in text


def test_format_text_rejects_bad_input():
    with pytest.raises(ValueError, match="DATA lines"):
        format_text(["p"], np.array([[1], [2]]), {"a": [[1.0]]})
    with pytest.raises(ValueError, match="one word"):
        format_text(["p x"], np.array([[1]]), {"a": [[1.0]]})
    with pytest.raises(ValueError, match="finite"):
        format_text(["p"], np.array([[1]]), {"a": [[float("nan")]]})
    with pytest.raises(ValueError, match="1 to 4"):
        format_text(list("abcde"), np.ones((1, 5)), {"a": [[1.0]]})


def test_task_text_keeps_repetitions():
    task = _task()
    parameters, points, regions = _parse(task_text(task))
    assert parameters == ["n", "p"]
    assert len(points) == 4 and all(len(v) == 2 for v in regions["main"])
    pts, values = frame_points(task.train, task.columns)
    assert pts.shape == (4, 2) and sum(map(len, values)) == len(task.train)


def test_synthetic_kernels_text_shape():
    parameters, points, regions = _parse(synthetic_kernels_text(n_kernels=1000, n_points=5))
    assert parameters == ["p"] and len(points) == 5 and len(regions) == 1000
    assert all(len(d) == 5 for d in regions.values())


# --- tasks -----------------------------------------------------------------------------

@needs_data
def test_tasks_follow_readme_splits():
    tasks, skipped = build_tasks(DATASETS)
    counts = pd.Series([t.name for t in tasks]).value_counts().to_dict()
    assert counts == {"hommexx-n-p": 4, "relearn-p": 5, "mandelbrot-strong": 1, "osu-p": 10,
                      "extrap-mpi": 14, "contention-m": 6, **EXTRAP_TEXT_GROUPS}
    for t in tasks:
        assert len(t.train) and len(t.test) and "time" in t.train
        assert t.p_sweep == ("p" in t.params)
        if t.name not in EXTRAP_TEXT_GROUPS:
            assert set(t.params) <= {"n", "p"}
    by = {t.key: t for t in tasks}
    relearn = by[("relearn-p", "theta=0.1")]
    assert relearn.train.p.max() <= 128 and set(relearn.test.p) == {256, 512}
    osu = by[("osu-p", "collective=bcast,algorithm=default")]
    assert osu.train.P.max() <= 32 and osu.test.P.min() >= 64 and osu.params == {"p": "P", "n": "msg_bytes"}
    hom = by[("hommexx-n-p", "alg=SL,qsize=10")]
    assert hom.params == {"n": "nelem", "p": "nnode"}
    assert hom.train["ne"].max() <= 128 and hom.test["ne"].min() >= 256
    assert hom.train.duplicated(["nelem", "nnode"]).any()      # repetitions kept
    mandel = by[("mandelbrot-strong", "source=tanjaderin,study=mpi_strong")]
    assert mandel.train.P.max() == 64 and mandel.test.P.min() == 65
    assert set(by[("extrap-mpi", "mpi=IntelMPI,collective=MPI_Bcast")].test.P) == {512}
    assert by[("contention-m", "collective=bcast,contention=1")].train.msg_bytes.max() == 262144
    assert any("mzampar" in s.group for s in skipped)


@needs_data
def test_quick_subset_is_small_and_covers_every_task():
    tasks, _ = build_tasks(DATASETS, quick=True)
    names = [t.name for t in tasks]
    assert set(names) == {"hommexx-n-p", "relearn-p", "mandelbrot-strong", "osu-p",
                          "extrap-mpi", "contention-m", *EXTRAP_TEXT_GROUPS}
    assert all(names.count(n) <= 2 for n in names)


#: groups of the tasks built from Extra-P text files (issue 11)
EXTRAP_TEXT_GROUPS = {"extrap-mm-x": 12, "extrap-mm-xyz": 10, "relearn-regions": 13}


@needs_data
def test_extrap_text_tasks_groups_and_splits():
    tasks, skipped = build_tasks(DATASETS)
    by = {t.key: t for t in tasks if t.name in EXTRAP_TEXT_GROUPS}
    assert pd.Series([name for name, _ in by]).value_counts().to_dict() == EXTRAP_TEXT_GROUPS
    left_out = {(s.name, s.group): s.reason for s in skipped}

    mm_x = [t for (name, _), t in by.items() if name == "extrap-mm-x"]
    for t in mm_x:
        assert t.params == {"x": "x"} and not t.p_sweep and t.columns == ["x"]
        assert set(t.train.x) == {1, 10, 25, 50, 100, 250, 500} and set(t.test.x) == {1000, 2000}
        assert t.train.metric.nunique() == 1 and (t.train.time > 0).all()
    assert {t.train.metric.iloc[0] for t in mm_x} == {"time", "PAPI_FP_OPS", "PAPI_L2_TCM", "PAPI_L3_TCM"}
    assert [t.unit for t in mm_x[:4]] == ["s"] * 4 and {t.unit for t in mm_x[4:]} == {"count"}
    mat_mul = by[("extrap-mm-x", "callpath=main->mat_mul,metric=PAPI_FP_OPS")]
    assert mat_mul.test.time.tolist() == [2055, 4028]               # about 2 x
    for metric in ("visits", "min_time", "max_time"):               # left out whole, with a reason
        assert ("extrap-mm-x", f"metric={metric}") in left_out
    assert "every value" in left_out[("extrap-mm-x", "callpath=main->zero_mat,metric=PAPI_FP_OPS")]
    assert "2 of 9" in left_out[("extrap-mm-x", "callpath=main->mat_mul,metric=PAPI_L2_TCM")]

    xyz = by[("extrap-mm-xyz", "callpath=main->mat_mul,metric=time")]
    assert xyz.params == {"x": "x", "y": "y", "z": "z"} and len(xyz.train) == 20 and len(xyz.test) == 7
    at_25 = lambda f: (f[["x", "y", "z"]] == 25).sum(axis=1)        # noqa: E731
    assert at_25(xyz.train).max() == 1 and at_25(xyz.test).min() == 2
    assert all(xyz.train[c].nunique() == 3 for c in "xyz")

    relearn = by[("relearn-regions", "callpath=main()")]
    assert relearn.params == {"p": "p", "n": "n"} and relearn.p_sweep
    assert set(relearn.train.p) == {32, 64, 128} and set(relearn.test.p) == {256, 512}
    assert len(relearn.train) == 30 and len(relearn.test) == 20     # 2 repetitions kept
    assert "every value" in left_out[("relearn-regions", "callpath=Update #synaptic elements + del synapses")]


def test_missing_datasets_dir_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="AUTOMODEL_DATASETS"):
        build_tasks(tmp_path / "nowhere")


# --- Extra-P tool ----------------------------------------------------------------------

def test_run_extrap_without_venv_reports_status(tmp_path):
    task = _task()
    results = extrap_tool.run_extrap([task], venv_dir=tmp_path / "none", install=False)
    result = results[task.key]
    assert result.status.startswith("extrap unavailable:") and not result.ok
    assert result.predictions.shape == (len(task.test),) and np.isnan(result.predictions).all()
    timing = extrap_tool.time_cli(["--version"], venv_dir=tmp_path / "none")
    assert timing.status.startswith("extrap unavailable:") and np.isnan(timing.seconds)


def test_run_extrap_rejects_unknown_modeler():
    with pytest.raises(ValueError, match="modeler"):
        extrap_tool.run_extrap([], modeler="magic", install=False)


@pytest.mark.skipif(not extrap_tool.venv_python().exists(), reason="no Extra-P venv (see extrap_tool)")
def test_run_extrap_with_installed_venv():
    rows = pd.DataFrame({"p": [2, 4, 8, 16, 32, 64, 128], "time": [3.0, 5, 9, 17, 33, 65, 129]})
    task = Task("lin", "g", {"p": "p"}, rows[rows.p <= 32].reset_index(drop=True),
                rows[rows.p > 32].reset_index(drop=True), True, "toy")
    result = extrap_tool.run_extrap([task], "refining", install=False)[task.key]
    assert result.ok, result.status
    np.testing.assert_allclose(result.predictions, [65, 129], rtol=1e-6)
    assert "p" in result.formula and result.seconds >= 0
