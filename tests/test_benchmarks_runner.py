"""The one-command benchmark runner (``python -m benchmarks``) end to end on the bundled task, and its parts."""

from __future__ import annotations

import functools
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import __main__ as runner  # noqa: E402
from benchmarks import bands, contenders, known_formulas, records, report, selection, speed, workloads  # noqa: E402
from benchmarks.bands import known_noise_tasks  # noqa: E402
from benchmarks.contenders import OK, Outcome, template_contender  # noqa: E402
from benchmarks.tasks import Task, bundled_tasks, tasks_or_bundled  # noqa: E402

HAND_WRITTEN = "Hand-written: automodel wins here because of the sigmoid term."
EXPECTED = {"automodel", "automodel/holdout", "extrap-default", "extrap-refining", "prophesy", "rbasp",
            "amdahl", "kohashi-3", "kohashi-6", "hockney", "hockney-collective", "rational"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """Run the quick pipeline once (Extra-P made absent, no speed part) into a temporary folder.

    Every section runs, on less than ``--quick`` gives it (CI runs the whole quick benchmark): two
    known formulas (one of one parameter, one of two), the SMPI workload sweeps of one workload, one
    model-selection task, two known-noise band tasks and a band of 1,000 rows timed once.
    """
    out = tmp_path_factory.mktemp("bench")
    (out / "RESULTS.md").write_text(f"old\n{report.ANALYSIS_START}\n{HAND_WRITTEN}\n{report.ANALYSIS_END}\n")
    sweeps = tmp_path_factory.mktemp("sweeps")
    for path in workloads.sweep_files()[:2]:
        shutil.copy(path, sweeps / path.name)
    absent = lambda *a, **k: (None, "extrap unavailable: no virtual environment")  # noqa: E731
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "ensure_extrap", absent)
        mp.setattr(contenders, "ensure_extrap", absent)
        mp.setattr(runner, "extrap_version", lambda: None)
        mp.setattr(known_formulas, "QUICK_FUNCTIONS", ("1-x3", "2-prod"))
        mp.setattr(workloads, "collect", functools.partial(workloads.collect, folder=sweeps))
        mp.setattr(selection, "QUICK_TASKS", 1)
        mp.setattr(bands, "known_noise_tasks", lambda seeds: known_noise_tasks(seeds)[:2])
        mp.setattr(bands, "band_seconds", functools.partial(bands.band_seconds, rows=1000, repeats=1))
        code = runner.main(["--quick", "--bundled", "--no-speed", "--metrics", "holdout", "--out", str(out)])
    assert code == 0
    return out, json.loads((out / "results.json").read_text()), (out / "RESULTS.md").read_text()


def test_json_has_every_contender_and_traceable_errors(quick_run):
    out, results, _ = quick_run
    lines = (out / "results.json").read_text().splitlines()
    assert sum('"predictions":' in line for line in lines) == len(results["groups"])  # one line each
    assert {c["name"] for c in results["contenders"]} == EXPECTED
    assert [t["name"] for t in results["tasks"]] == ["bundled-smpi-p"]
    meta = {(g["task"], g["group"]): g for g in results["tasks"][0]["groups"]}
    assert len(meta) == 2 and len(results["groups"]) == 2 * len(EXPECTED)
    for record in results["groups"]:
        if record["contender"].startswith("extrap"):
            assert record["status"].startswith("extrap unavailable: Extra-P not installed")
            assert record["median"] is None
            continue
        assert record["status"] == OK, record
        group = meta[(record["task"], record["group"])]
        actual = np.array(group["test_actual"])
        errors = np.abs(np.array(record["predictions"]) - actual) / actual
        assert record["median"] == pytest.approx(np.median(errors), rel=1e-4, abs=1e-5)
        assert record["worst"] == pytest.approx(np.max(errors), rel=1e-4, abs=1e-5)
        assert record["formula"]
        if record["contender"].startswith("automodel"):
            assert record["note"].startswith(("chosen: searched, rank ", "chosen: template:"))
    headline = next(s for s in results["summaries"] if s["contender"] == "automodel")
    assert headline["n_ok"] == 2 and headline["n_points"] == 40 and headline["best_p_slices"] == 8
    (goal,) = results["goal"]
    assert goal["met"] is not True and "median not compared" in goal["text"]
    assert results["workloads"]["status"] == "ok" and results["selection"]["status"] == "ok"
    assert [g["group"] for g in results["bands"]] == ["canonical", "known-noise", "smpi", "speed"]


def test_report_tables_plots_and_analysis(quick_run):
    out, results, text = quick_run
    assert text.startswith(f"old\n{report.marker('header', 'start')}\n# Benchmark results")  # "old" is kept
    assert "**Quick run**" in text
    assert "`python -m benchmarks --quick --bundled --no-speed --metrics holdout --out" in text
    assert "Extra-P not installed; run the full benchmark to install it" in text
    headline = next(s for s in results["summaries"] if s["contender"] == "automodel")
    row = f"| automodel | {report.pct(headline['median'])} | {report.pct(headline['mean'])} |"
    assert row in text
    for name in EXPECTED:
        assert f"| {name} |" in text
    assert "### bundled-smpi-p" in text and "Not run (`--no-speed`)." in text
    assert "## Known-formula suite" in text and "| 1 | 0 % | `x` |" in text  # the quick suite, automodel only
    assert results["known_formulas_meta"]["contenders"] == ["automodel", "extrap-default", "extrap-refining",
                                                            "suite-oracle"]
    assert "known_formulas_cases" not in results  # a file of its own beside results.json
    cases = json.loads((out / "known_formulas_cases.json").read_text())["known_formulas_cases"]
    assert cases and all(c["status"] == OK for c in cases if c["contender"] == "automodel")
    assert f"{report.ANALYSIS_START}\n{HAND_WRITTEN}\n{report.ANALYSIS_END}" in text
    assert "](plots/bundled-smpi-p.png)" in text
    png = out / "plots" / "bundled-smpi-p.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def _results(date: str, speed: dict | None, workloads_status: str | None) -> dict:
    """A results dictionary with no tasks: enough for every block of ``RESULTS.md``."""
    machine = {"cores": 2, "cpu": "cpu", "system": "Linux", "python": "3.11"}
    return {"meta": {"machine": machine, "versions": {"automodel": "0.1"}, "command": "python -m benchmarks",
                     "date": date, "seconds": 1.0},
            "tasks": [], "contenders": [], "summaries": [], "goal": [], "groups": [], "skipped": [],
            "speed": speed, "workloads": None if workloads_status is None else {"status": workloads_status}}


def _speed(seconds: float) -> dict:
    return {"startup": {"status": "ok", "result": {"automodel_seconds": seconds}}}


def _outside(text: str) -> str:
    """``text`` with the content of every generated block left out: what regenerating must keep."""
    spans = sorted(report.spans(text).values())
    return "".join(text[a:b] for a, b in zip([0] + [end for _, end in spans], [start for start, _ in spans] + [None]))


def _content(text: str, name: str) -> str:
    start, end = report.spans(text)[name]
    return text[start:end]


def _hand_edited(text: str) -> str:
    """A rendered report with hand-written records before, between and after the generated blocks."""
    text = "Hand-written first line.\n" + text
    for name in ("accuracy", "speed"):
        at = text.index(report.marker(name, "start"))
        text = text[:at] + f"### Update before {name}\n\n| hand | table |\n|---|---|\n| 1 | 2 |\n\n" + text[at:]
    return text.replace(report.NO_ANALYSIS, "Hand-written analysis.") + "Trailing hand-written note.\n"


def test_regenerating_keeps_every_hand_written_byte_and_replaces_measured_blocks(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(_hand_edited(report.render(_results("day one", _speed(1.5), "workloads: first"))))
    before = path.read_text()
    report.write(_results("day two", None, "workloads: second"), path)
    after = path.read_text()
    assert _outside(after) == _outside(before)
    assert "day two" in _content(after, "header") and "day one" not in after
    assert "workloads: second" in _content(after, "workloads") and "workloads: first" not in after
    assert _content(after, "speed") == _content(before, "speed")  # not measured (--no-speed): kept
    assert "| automodel_seconds | 1.5 |" in _content(after, "speed")
    assert _content(after, "known-formulas") == _content(before, "known-formulas")  # not run: kept
    assert [p.name for p in tmp_path.iterdir()] == ["RESULTS.md"]  # the temporary file replaced it


def test_a_new_file_is_rendered_and_regenerating_it_changes_nothing(tmp_path):
    path = tmp_path / "RESULTS.md"
    results = _results("day one", _speed(2.0), None)
    report.write(results, path)
    text = path.read_text()
    assert text == report.render(results) and text.startswith(report.marker("header", "start") + "\n# Benchmark")
    assert text.endswith(f"## Analysis\n\n{report.ANALYSIS_START}\n{report.NO_ANALYSIS}\n{report.ANALYSIS_END}\n")
    assert "selection" not in report.spans(text)  # not run and never rendered: no block
    report.write(results, path)
    assert path.read_text() == text


def test_blocks_the_file_lacks_go_before_the_analysis_in_render_order(tmp_path):
    path = tmp_path / "RESULTS.md"
    full = report.render(_results("day one", _speed(1.0), "workloads: first"))
    spans = report.spans(full)
    start = full.index(report.marker("bands", "start"))
    end = spans["speed"][1] + len(report.marker("speed", "end")) + 1
    path.write_text(full[:start] + "Hand-written where bands and speed were.\n" + full[end:])
    report.write(_results("day two", _speed(3.0), "workloads: second"), path)
    text = path.read_text()
    assert "Hand-written where bands and speed were.\n" + report.marker("workloads", "start") in text
    assert (text.index(report.marker("workloads", "end")) < text.index(report.marker("bands", "start"))
            < text.index(report.marker("speed", "start")) < text.index("## Analysis\n"))
    assert text.endswith(f"{report.marker('speed', 'end')}\n## Analysis\n\n{report.ANALYSIS_START}\n"
                         f"{report.NO_ANALYSIS}\n{report.ANALYSIS_END}\n")


@pytest.mark.parametrize("damage, message", [
    (lambda t: t.replace(report.marker("speed", "end") + "\n", ""), "block 'speed' has a start marker without"),
    (lambda t: t.replace(report.marker("bands", "start") + "\n", ""), "block 'bands' has an end marker without"),
    (lambda t: t + report.marker("header", "start") + "\n", "block 'header' has a second start marker")])
def test_damaged_markers_are_refused_and_nothing_is_written(tmp_path, damage, message):
    path = tmp_path / "RESULTS.md"
    path.write_text(damage(report.render(_results("day one", _speed(1.0), None))))
    before = path.read_bytes()
    with pytest.raises(report.DamagedMarkers, match=message) as err:
        report.write(_results("day two", _speed(2.0), None), path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["RESULTS.md"]


def test_the_runner_refuses_a_damaged_report_before_running(tmp_path):
    text = report.render(_results("day one", None, None))
    (tmp_path / "RESULTS.md").write_text(text.replace(report.marker("accuracy", "end") + "\n", ""))
    with pytest.raises(SystemExit, match="block 'accuracy' has a start marker without its end marker"):
        runner.main(["--out", str(tmp_path), "--no-extrap"])
    assert [p.name for p in tmp_path.iterdir()] == ["RESULTS.md"]


def test_quick_refuses_to_overwrite_published_results():
    with pytest.raises(SystemExit):
        runner.parse(["--quick", "--out", str(runner.PUBLISHED)])
    assert runner.parse(["--quick"]).out == runner.QUICK_OUT


def test_bundled_task_never_replaces_the_published_results(tmp_path):
    with pytest.raises(SystemExit, match="canonical tasks"):
        runner.main(["--datasets", str(tmp_path / "missing"), "--no-extrap", "--no-speed"])


def test_fallback_to_bundled_task_when_datasets_are_absent(tmp_path):
    tasks, skipped, note = tasks_or_bundled(tmp_path / "missing")
    assert note and "falling back" in note and str(tmp_path / "missing") in note
    assert {t.key for t in tasks} == {t.key for t in bundled_tasks()} and skipped == []
    assert all(t.train["p"].max() <= 8 < t.test["p"].min() for t in tasks)


def _p_only_task() -> Task:
    rows = pd.DataFrame({"P": [1, 2, 4, 8, 16, 32], "time": [8.0, 4.5, 2.6, 1.7, 1.3, 1.2]})
    return Task("toy-p", "g=1", {"p": "P"}, rows[rows.P <= 8].reset_index(drop=True),
                rows[rows.P > 8].reset_index(drop=True), True, "toy")


def test_template_that_does_not_apply_says_why():
    task = _p_only_task()
    prophesy = template_contender("prophesy", "prophesy").run([task], {})[task.key]
    assert prophesy.status == "n/a: no column n" and np.isnan(prophesy.predictions).all()
    amdahl = template_contender("amdahl", "amdahl").run([task], {})[task.key]
    assert amdahl.ok and amdahl.predictions.shape == (len(task.test) + len(task.train),)
    summary = records.task_summary([task], "prophesy", {task.key: prophesy})
    assert summary["status"] == "n/a: no column n" and "median" not in summary


def test_failed_group_counts_as_infinitely_wrong_rows():
    task = _p_only_task()
    other = Task("toy-p", "g=2", task.params, task.train, task.test, True, "toy")
    good = Outcome(OK, "c", np.r_[task.test.time.to_numpy(), task.train.time.to_numpy()], 0.1)
    bad = Outcome("failed: boom", None, np.full(len(task.test) + len(task.train), np.nan), 0.1)
    s = records.task_summary([task, other], "x", {task.key: good, other.key: bad})
    assert s["n_ok"] == 1 and s["status"] == "failed: boom"
    assert s["median"] is None  # half the pooled rows are infinitely wrong
    assert s["mean"] is None and s["worst"] is None and s["n_points"] == 4


def test_goal_check():
    good = {"median": 0.10, "mean": 0.20}
    assert records.goal(good, {"median": 0.30})["met"] is True
    assert records.goal(good, {"median": 0.15})["met"] is False
    assert records.goal({"median": 0.01, "mean": 0.30}, {"median": 0.9})["met"] is False
    assert records.goal(good, None)["met"] is None
    assert records.goal(None, {"median": 0.3})["met"] is False


def test_speed_parts_that_are_missing_or_fail_are_reported():
    missing = speed.optional("benchmarks.no_such_module", "race", n_kernels=1)
    assert missing["status"].startswith("not available: ModuleNotFoundError")
    failing = speed.guarded(lambda: 1 / 0)
    assert failing["status"].startswith("not available:") and "ZeroDivisionError" in failing["status"]
    assert speed.optional("math", "sqrt", 4.0) == {"status": "ok", "result": 2.0}


def test_speed_section_renders_measurements_and_gaps(quick_run):
    _, results, _ = quick_run
    rows = [{"k": k, "automodel fits/s": 2e6 / k, "automodel nonneg fits/s": 1.5e6 / k, "lstsq loop fits/s": 1e5,
             "gram+np.linalg.solve fits/s": 1e6, "x vs loop": 20.0 / k, "x vs gram solve": 2.0} for k in (1, 2, 3)]
    fake = {"fits_per_second": {"status": "ok", "result": {"m": 64, "n_candidates": 10, "rows": rows}},
            "staged_search": {"status": "not available: _staged failed: RuntimeError: x"},
            "kernels": {"status": "ok", "result": {"automodel": {"seconds": 0.5}, "ratio": 40.0}},
            "startup": {"status": "not available: ModuleNotFoundError: No module named 'benchmarks.startup'"}}
    text = report.render({**results, "speed": fake})
    assert "unconstrained missed at k = [3]; non-negative missed at k = [2, 3]" in text
    assert "not available: _staged failed: RuntimeError: x" in text
    assert "| automodel.seconds | 0.5 |" in text and "| ratio | 40 |" in text
    assert "No module named 'benchmarks.startup'" in text
    assert report.NO_ANALYSIS in text


def test_scaling_and_scale_out_sections_render(quick_run):
    """The scaling of fit (growth exponent, memory) and the scale-out table render their measurements,
    a missing way of running, and the goals."""
    _, results, _ = quick_run
    scaling = {"rows": [{"runs": 1000, "cpu_seconds": 0.2, "wall_seconds": 0.3, "peak_bytes": 2 ** 28},
                        {"runs": 10_000, "cpu_seconds": 2.0, "wall_seconds": 2.1, "peak_bytes": 2 ** 29}],
               "exponent": 1.0, "bytes_per_run": 29826.0, "goal_met": False}
    scale = {"rows": [{"params": 1, "kernels": 1000, "mode": "serial", "status": "ok", "seconds": 6.0,
                       "main_bytes": 2 ** 28, "worker_bytes": 0, "speedup": 1.0, "same_as_serial": True},
                      {"params": 1, "kernels": 1000, "mode": "loky", "status": "ok", "seconds": 3.0,
                       "main_bytes": 2 ** 27, "worker_bytes": 2 ** 28, "speedup": 2.0, "same_as_serial": True},
                      {"params": 1, "kernels": 1000, "mode": "dask", "status": "not available: no dask"}],
             "extrap": {"kernels": 10_000, "extrap_status": "ok", "extrap_seconds": 70.0, "automodel_seconds": 2.0,
                        "ratio": 35.0, "extrap_error_median": 0.02, "automodel_error_median": 0.025},
             "goal_met": True, "all_same_as_serial": True}
    text = report.render({**results, "speed": {"scaling": {"status": "ok", "result": scaling},
                                               "scale": {"status": "ok", "result": scale}}})
    assert "| 10,000 | 2.00 | 2.10 | 512 |" in text and "Growth exponent of the CPU time between the two largest sizes: 1.00" in text
    assert "| 1 | 1,000 | loky | 3.00 | 2.00 | 128 | 256 | yes |" in text
    assert "| 1 | 1,000 | dask | not available: no dask |" in text
    assert "2 workers where the serial work takes over 5 s, no loss below: met" in text
    assert "70.0 s against automodel's 2.0 s (35.0x); median held-out error 2.0 % against 2.5 %" in text


def test_scale_out_runs_one_way_in_process(tmp_path):
    """benchmarks.scale writes a case and runs it serially: models, time, memory and a digest that the
    parallel ways are compared by."""
    from benchmarks import scale

    path = scale.write_case(1, 20, tmp_path)
    assert len(json.loads(Path(f"{path}.truths.json").read_text())) == 20
    first, again = scale.run_mode(str(path), "serial"), scale.run_mode(str(path), "serial")
    assert first["models"] == 20 and first["seconds"] > 0 and first["main_bytes"] > 0
    assert first["digest"] == again["digest"]


def test_scaling_measures_one_size_in_process():
    from benchmarks import scaling

    r = scaling.measure(300)
    assert r["runs"] == 300 and r["cpu_seconds"] > 0 and r["peak_bytes"] > 0 and "n^3" in r["formula"]
