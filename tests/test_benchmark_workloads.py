"""benchmarks.workloads: the split of the SMPI sweeps, the interior-minimum best-p score, the section (no Extra-P)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import workloads  # noqa: E402
from benchmarks.contenders import OK, Outcome, query_points  # noqa: E402

P_GRID = 2 ** np.arange(9)  # 1 .. 256


def sweep_frame(n_values=(10, 20, 30, 40, 50, 60), time=lambda n, p: n / p + 0.5 * p) -> pd.DataFrame:
    rows = [{"n": n, "p": p, "rep": 0, "time": time(n, p), "status": 0} for n in n_values for p in P_GRID]
    return pd.DataFrame(rows)


def test_split_trains_on_the_4_smallest_n_with_p_up_to_16_and_holds_out_the_2_largest_n():
    frame = sweep_frame(n_values=(60, 10, 40, 20, 50, 30))  # unsorted n: the split sorts
    train, test = workloads.split(frame)
    assert sorted(train["n"].unique()) == [10, 20, 30, 40]
    assert sorted(train["p"].unique()) == [1, 2, 4, 8, 16]
    assert len(train) == 4 * 5
    assert sorted(test["n"].unique()) == [50, 60]
    assert sorted(test["p"].unique()) == list(P_GRID)
    assert len(test) == 2 * 9
    with pytest.raises(ValueError, match="needs 6"):
        workloads.split(sweep_frame(n_values=(1, 2, 3, 4, 5)))


def test_sweep_task_reads_a_csv_and_drops_failed_runs(tmp_path):
    frame = sweep_frame()
    frame.loc[0, "status"] = 1  # n = 10, p = 1 failed
    path = tmp_path / "cg_slow.csv"
    frame.to_csv(path, index=False)
    task = workloads.sweep_task(path)
    assert task.group == "workload=cg,platform=slow" and task.p_sweep
    assert list(task.train.columns) == ["n", "p", "time"]
    assert len(task.train) == 19 and len(task.test) == 18
    assert workloads.sweep_files(tmp_path) == [path]


def test_best_p_scores_only_interior_minima_within_one_grid_step():
    # n = 5: minimum at p = 1 (edge, left out); n = 6: interior minimum at p = 4; n = 7: at p = 256 (edge)
    measured = {5: [1, 2, 3, 4, 5], 6: [5, 3, 1, 2, 4], 7: [5, 4, 3, 2, 1]}
    grid = [1, 2, 4, 8, 256]
    test = pd.DataFrame([{"n": n, "p": p, "time": t} for n, ts in measured.items() for p, t in zip(grid, ts)])

    def scored(argmin_p: float) -> list[dict]:
        predictions = [1.0 if p == argmin_p else 2.0 + p for p in test["p"]]
        return workloads.best_p(test, predictions)

    for predicted, steps, hit in ((4, 0, True), (2, 1, True), (8, 1, True), (1, 2, False), (256, 2, False)):
        (only,) = scored(predicted)
        assert only == {"n": 6.0, "measured": 4.0, "predicted": float(predicted), "steps": steps, "hit": hit}
    (failed,) = workloads.best_p(test, np.full(len(test), np.nan))
    assert failed["hit"] is False and failed["predicted"] is None


def test_best_p_reduces_repetitions_to_their_median():
    test = pd.DataFrame({"n": [1] * 6, "p": [1, 1, 2, 2, 4, 4], "time": [3, 3, 1, 9, 2, 2]})
    # medians over p: 3, 5, 2 -> the minimum is at the edge (p = 4): nothing to score
    assert workloads.best_p(test, np.ones(6)) == []


def test_records_summary_and_section_on_a_synthetic_sweep(tmp_path):
    path = tmp_path / "jacobi_fast.csv"
    sweep_frame().to_csv(path, index=False)
    (task,) = workloads.sweep_tasks(tmp_path)
    points = query_points(task)
    exact = Outcome(OK, "n/p + 0.5*p", (points["n"] / points["p"] + 0.5 * points["p"]).to_numpy(), 0.1)
    off = Outcome(OK, "2*n/p", (2 * points["n"] / points["p"]).to_numpy(), 0.1)
    records = [workloads.group_record(task, "automodel", exact), workloads.group_record(task, "extrap-default", off)]
    head = records[0]
    assert head["median"] == 0 and head["n_points"] == 18
    # n/p + p/2 has its minimum at p = sqrt(2n): p = 8 (n = 50, 60), interior, and the exact model finds it
    assert head["best_p_slices"] == 2 and head["best_p_hits"] == 2
    assert [h["measured"] for h in head["best_p"]] == [8.0, 8.0]
    assert records[1]["best_p_hits"] == 0 and records[1]["median"] > 0.5  # 2n/p: argmin at p = 256
    summaries = [workloads.summary(records, c) for c in ("automodel", "extrap-default")]
    result = {"meta": {"contenders": [{"name": "automodel"}, {"name": "extrap-default"}], "seconds": 0.0},
              "groups": records, "summaries": summaries,
              "goal": {"text": "yes: 0.0 % <= 10.0 %"}}
    lines = "\n".join(workloads.section_lines({"status": "ok", "result": result}))
    assert lines.startswith(f"## {workloads.TITLE}")
    assert "| jacobi | fast | 0.0 % / 0.0 % |" in lines and "| 2/2 | 0/2 |" in lines
