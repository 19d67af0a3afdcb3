"""The model-selection benchmark: its corpus loaders, its part rule, its scores and its report."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from benchmarks import corpus, selection
from benchmarks.corpus import SelectionTask, directory_tasks, part_of, real_dev_tasks


def _runs(p_values, n_values=(None,), reps: int = 2, seed: int = 0) -> pd.DataFrame:
    """Runs of T = 2 + 0.001 n + 100 / p (n absent when None), with 1 % noise."""
    rng = np.random.default_rng(seed)
    rows = [{"p": p, **({"n": n} if n is not None else {}),
             "time": (2 + (0.001 * n if n is not None else 0) + 100 / p) * (1 + 0.01 * rng.standard_normal())}
            for n in n_values for p in p_values for _ in range(reps)]
    return pd.DataFrame(rows)


def _task(name: str = "synthetic/strong", train=None) -> SelectionTask:
    train = _runs([1, 2, 3, 4, 6, 8]) if train is None else train
    return SelectionTask(name, "real", "dev", train, _runs([16, 32, 64], seed=1), roles={"p": "p"})


# -- the part rule -----------------------------------------------------------------------------------
def test_part_of_is_the_written_rule_and_splits_about_a_third_to_dev():
    names = [f"smpi-others/task{i}" for i in range(600)]
    parts = [part_of(n) for n in names]
    expected = ["dev" if int(hashlib.sha256(n.encode()).hexdigest(), 16) % 3 == 0 else "test" for n in names]
    assert parts == expected
    assert 0.28 < parts.count("dev") / len(parts) < 0.39


# -- loaders -----------------------------------------------------------------------------------------
def _corpus_dir(tmp_path):
    frame = pd.concat([_runs([1, 2, 4, 8, 16]).assign(size=s) for s in (10, 20)], ignore_index=True)
    frame["split"] = np.where(frame["p"] <= 4, "train", "test")
    frame.loc[0, "time"] = -1.0  # a failed run: dropped
    frame.to_csv(tmp_path / "app.csv", index=False)
    manifest = {"app": {"file": "app.csv", "roles": {"p": "p"}, "params": [], "groups": ["size"],
                        "provenance": "made up"},
                "gone": {"file": "missing.csv", "roles": {"p": "p"}},
                "nogroup": {"file": "app.csv", "roles": {"p": "p"}, "groups": ["machine"]}}
    (tmp_path / "tasks.json").write_text(json.dumps(manifest))
    return tmp_path


def test_directory_tasks_split_groups_name_them_and_take_the_part_from_the_name(tmp_path):
    tasks, notes = directory_tasks(_corpus_dir(tmp_path), "smpi-others", "smpi-others")
    assert [t.name for t in tasks] == ["smpi-others/app/10", "smpi-others/app/20"]
    assert all(t.part == part_of(t.name) and t.suite == "smpi-others" for t in tasks)
    first = tasks[0]
    assert first.roles == {"p": "p"} and first.provenance == "made up"
    assert list(first.train.columns) == ["p", "time"]
    assert first.train["p"].max() == 4 and first.test["p"].min() == 8
    assert len(first.train) == 5 and (first.train["time"] > 0).all()  # 6 rows, the negative one dropped
    assert len(notes) == 2 and any("missing.csv" in n for n in notes) and any("machine" in n for n in notes)


def test_directory_tasks_without_a_manifest_give_a_note_not_an_error(tmp_path):
    tasks, notes = directory_tasks(tmp_path / "absent", "real-public", "real")
    assert tasks == [] and len(notes) == 1 and "tasks.json" in notes[0]


def test_real_dev_roles_follow_the_column_names(tmp_path):
    folder = tmp_path / "real-dev"
    folder.mkdir()
    strong = _runs([2, 4, 8, 16], n_values=(1000, 2000)).rename(columns={"n": "cells", "p": "nodes"})
    strong.assign(split=np.where(strong["nodes"] <= 8, "train", "test"), source="x.dat").to_csv(
        folder / "vlasiator_x_strong.csv", index=False)
    threads = _runs([1, 2, 4, 8]).rename(columns={"p": "threads"})
    threads.assign(split=np.where(threads["threads"] <= 2, "train", "test")).to_csv(folder / "m.csv", index=False)
    tasks, notes = real_dev_tasks(tmp_path)
    by_name = {t.name: t for t in tasks}
    assert notes == [] and set(by_name) == {"real-dev/m", "real-dev/vlasiator_x_strong"}
    assert by_name["real-dev/vlasiator_x_strong"].roles == {"n": "cells", "p": "nodes"}
    assert by_name["real-dev/m"].roles == {"p": "threads"} and by_name["real-dev/m"].params == ()
    assert all(t.part == "dev" and t.suite == "real" for t in tasks)
    assert real_dev_tasks(tmp_path / "nowhere")[0] == []


def test_select_filters_by_part_suite_and_name():
    tasks = [_task("a/one"), SelectionTask("b/two", "smpi-others", "test", pd.DataFrame(), pd.DataFrame(), {})]
    assert [t.name for t in corpus.select(tasks)] == ["a/one"]
    assert [t.name for t in corpus.select(tasks, ("dev", "test"), ("smpi-others",))] == ["b/two"]
    assert corpus.select(tasks, ("dev", "test"), (), "two")[0].name == "b/two"


# -- scores ------------------------------------------------------------------------------------------
def test_relative_error_is_the_median_and_a_missing_prediction_is_infinitely_wrong():
    assert selection.relative_error([1.1, 0.5, 1.0], [1.0, 1.0, 1.0]) == pytest.approx(0.1)
    assert selection.relative_error([np.nan, np.inf, 1.0], [1.0, 1.0, 1.0]) == math.inf


def test_a_task_is_scored_against_every_ranked_candidate():
    record = selection.run_task(_task())
    assert record["status"] == "ok", record["status"]
    assert record["test_configs"] == 3 and record["candidates"] > 1
    assert record["chosen_error"] < 0.1  # 2 + 100/p is in the search space
    assert 0 <= record["oracle_error"] <= record["chosen_error"]
    assert record["regret_pp"] == pytest.approx(100 * (record["chosen_error"] - record["oracle_error"]))
    assert record["oracle_rank"] >= 1 and record["oracle_formula"]
    assert 0 <= record["covered"] <= record["configs"] == 3 and record["width"] > 0


def test_a_task_that_fails_is_recorded_and_counts_as_infinitely_wrong():
    broken = _task("synthetic/broken", train=pd.DataFrame({"p": [1.0], "time": [1.0]}))
    records = [{**r, "extrap": {}} for r in map(selection.run_task, [broken])]
    assert records[0]["status"].startswith("failed: ") and "\n" not in records[0]["status"]
    s = selection.summary(records)
    assert s["failed"] == 1 and s["worst"] == math.inf and s["above_bad"] == 1
    assert "failed" in "\n".join(selection.section_lines(records))


def _record(name, error, default, negative, covered=1, configs=2):
    return {"name": name, "suite": "real", "part": "dev", "status": "ok", "chosen_error": error,
            "oracle_error": 0.0, "regret_pp": 100 * error, "oracle_rank": 3, "tie_regret_pp": 50 * error,
            "oracle_tied": error < 0.2, "oracle_fit_ratio": 10 * error + 1,
            "covered": covered,
            "configs": configs, "width": 0.2, "interval_score": 1.0 + 10 * error,
            "extrap": {"default": {"error": default}, "negative": {"error": negative},
                       "refining": {"error": None}}}


def test_summary_pools_coverage_and_counts_tasks_where_extrap_is_better():
    records = [_record("a", 0.1, 0.5, 0.05, covered=2), _record("b", 0.7, None, 0.9, covered=0),
               _record("c", 0.2, 0.3, None, covered=1)]
    s = selection.summary(records)
    assert s["median_error"] == pytest.approx(0.2) and s["above_bad"] == 1
    assert s["median_tie_regret_pp"] == pytest.approx(10.0)  # half of each regret: 5, 35, 10
    assert s["oracle_tied"] == 1 and s["median_oracle_fit_ratio"] == pytest.approx(5.5)  # b: 8, c: 3 untied
    assert s["coverage"] == pytest.approx(3 / 6)
    assert s["interval_score"] == pytest.approx(1.0 + 10 * 0.2)  # the median over tasks
    assert selection.summary([{**records[0], "interval_score": None}])["interval_score"] == math.inf  # not finite
    assert s["worse_than_extrap"] == 1  # only a: Extra-P negative 5 % beats 10 %
    assert s["extrap"]["refining"] == math.inf and s["extrap"]["default"] == pytest.approx(0.5)


def test_section_lines_render_a_row_per_task_and_a_summary_per_suite_and_part():
    records = [_record("a", 0.1, 0.5, 0.05), {**_record("z", 0.3, 0.2, 0.2), "suite": "smpi-others", "part": "test"}]
    text = "\n".join(selection.section_lines(records))
    assert "### real, dev" in text and "### smpi-others, test" in text
    assert "| a | 10.0 % | 0.0 % | 10.0 | 3 | 5.0 | 1/2 | 20.0 % | 50.0 % | 5.0 % | inf |" in text
    assert text.count("| real | dev |") == 2 and text.count("| smpi-others | test |") == 2  # summary, sources
    assert "| real | dev | 1 | 1 | 10.0 | 5.0 | - |" in text  # its oracle tied: no untied fit ratio
    assert "| smpi-others | test | 1 | 0 | 30.0 | 15.0 | 4x |" in text


def test_collect_keeps_the_task_order_and_writes_json(tmp_path):
    tasks = [_task("synthetic/x"), _task("synthetic/y", train=pd.DataFrame({"p": [1.0], "time": [1.0]}))]
    records = selection.collect(tasks, extrap=False, jobs=1)
    assert [r["name"] for r in records] == ["synthetic/x", "synthetic/y"]
    assert [r["status"] == "ok" for r in records] == [True, False]
    selection.write(records, tmp_path / "dev.json")
    document = json.loads((tmp_path / "dev.json").read_text())
    assert [r["name"] for r in document["records"]] == ["synthetic/x", "synthetic/y"] and "revision" in document


def test_the_space_gap_fits_the_test_runs_too_and_tells_a_law_the_space_has_from_one_it_lacks():
    inside = selection.run_task(_task(), gap=True)  # 2 + 100/p: in the space, in sample the error vanishes
    assert inside["status"] == "ok", inside["status"]
    assert inside["space_best_error"] <= inside["space_chosen_error"] < 0.03
    step = _runs([1, 2, 3, 4, 6, 8, 16, 32, 64])  # a time that doubles past p = 8: no formula of the space
    step["time"] = np.where(step["p"] > 8, 2.0, 1.0) * step["time"]
    task = SelectionTask("synthetic/step", "real", "dev", step[step["p"] <= 8], step[step["p"] > 8], roles={"p": "p"})
    outside = selection.run_task(task, gap=True)
    assert outside["space_best_error"] > 5 * inside["space_best_error"]
    assert selection.run_task(_task())["status"] == "ok" and "space_best_error" not in selection.run_task(_task())
    text = "\n".join(selection.section_lines([{**inside, "extrap": {}}]))
    assert "What the space can express" in text and "| real | dev | 1 |" in text
