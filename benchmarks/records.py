"""Scores of contender outcomes as plain records (per group, per task) and the issue's goal check.

Everything here is pure: it turns tasks and ``benchmarks.contenders.Outcome`` objects into
dictionaries of numbers and strings (JSON-ready, non-finite numbers as ``None``), which
``benchmarks.report`` renders and ``benchmarks/results.json`` stores.

A group a contender could not model counts with NaN predictions, i.e. as infinitely bad rows in
the task's mean and worst error, so every contender is judged on exactly the same rows; a contender
that modelled no group of a task gets its status instead of numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.contenders import Key, Outcome
from benchmarks.scoring import GroupScore, aggregate, group_best_p, reduce_repetitions, score_group
from benchmarks.tasks import Task, by_name

#: The issue's goal: automodel's median error at most this fraction of Extra-P's ...
GOAL_MEDIAN_RATIO = 0.5
#: ... and its mean error under this value, on every task.
GOAL_MEAN = 0.25
HEADLINE = "automodel"
REFERENCE = "extrap-default"


def number(value: Any) -> float | None:
    """A float for JSON: None for NaN and infinities."""
    value = float(value)
    return value if math.isfinite(value) else None


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars made plain and non-finite floats made None (strict JSON)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return number(value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


def short(values: Sequence[float]) -> list[float | None]:
    """Six significant digits (the stored per-configuration lists), None for non-finite values."""
    return [None if v is None else float(f"{v:.6g}") for v in map(number, values)]


#: keys of the results kept in a file of their own beside ``results.json``: a record of every known-formula fit
#: (thousands of lines, read case by case when two runs are compared, never rendered)
SEPARATE = {"known_formulas_cases": "known_formulas_cases.json"}


def write_results(results: Mapping[str, Any], out: Path) -> None:
    """``out/results.json`` (:func:`dumps`) and, beside it, each key of :data:`SEPARATE` in its own file."""
    (out / "results.json").write_text(dumps({k: v for k, v in results.items() if k not in SEPARATE}))
    for key, name in SEPARATE.items():
        if key in results:
            (out / name).write_text(dumps({key: results[key]}))


def dumps(results: Mapping[str, Any]) -> str:
    """Strict JSON with one line per list item (records), so regenerated files diff line by line."""
    parts = []
    for key, value in results.items():
        if isinstance(value, list) and value:
            body = ",\n".join("  " + json.dumps(v, separators=(",", ":"), allow_nan=False) for v in value)
            parts.append(f" {json.dumps(key)}: [\n{body}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, allow_nan=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def score(task: Task, outcome: Outcome) -> GroupScore:
    """Score one outcome on the held-out rows (and the best p of p-sweeps)."""
    test, train, _ = outcome.split(task)
    return score_group(task, test, train)


def group_record(task: Task, contender: str, outcome: Outcome) -> dict:
    """Status, formula, predictions per held-out configuration and the summary of their errors.

    ``predictions`` (medians over repetitions) align with ``group_meta``'s ``test_configurations``
    and ``test_actual``; the errors are ``|predictions - test_actual| / test_actual``.
    ``best_p_predicted`` and ``best_p_spearman`` align with ``group_meta``'s ``best_p_fixed``.
    """
    s = score(task, outcome)
    return {"task": task.name, "group": task.group, "contender": contender, "status": outcome.status,
            "formula": outcome.formula, "note": outcome.note, "seconds": number(outcome.seconds),
            "median": number(s.summary.median), "mean": number(s.summary.mean),
            "worst": number(s.summary.worst), "n_points": s.summary.n_points,
            "best_p_hits": s.best_p_hits, "best_p_slices": len(s.best_p),
            "spearman": number(s.mean_spearman),
            "best_p_predicted": [number(b.predicted_best_p) for b in s.best_p],
            "best_p_spearman": [number(b.spearman) for b in s.best_p],
            "predictions": short(reduce_repetitions(task.test, outcome.split(task)[0], task.columns,
                                                    task.target)["pred"])}


def group_meta(task: Task) -> dict:
    """The held-out configurations of a group and their measured medians (to trace the errors), and the
    slices of the best-p comparison (fixed other parameters) with their measured best p."""
    frame = reduce_repetitions(task.test, np.zeros(len(task.test)), task.columns, task.target)
    slices = group_best_p(task, np.zeros(len(task.test)), np.zeros(len(task.train))) if task.p_sweep else []
    return {"best_p_fixed": [[number(v) for v in b.fixed] for b in slices],
            "best_p_actual": [number(b.actual_best_p) for b in slices],"task": task.name, "group": task.group, "n_train_rows": len(task.train),
            "n_test_rows": len(task.test), "columns": task.columns,
            "test_configurations": frame[task.columns].to_numpy(float).tolist(),
            "test_actual": short(frame[task.target])}


def task_summary(groups: Sequence[Task], contender: str, outcomes: Mapping[Key, Outcome]) -> dict:
    """Pooled errors (over every held-out configuration of every group) of one contender on one task."""
    scores = [score(t, outcomes[t.key]) for t in groups]
    statuses = [outcomes[t.key].status for t in groups]
    n_ok = sum(s == "ok" for s in statuses)
    failed = [s for s in statuses if s != "ok"]
    agg = aggregate(scores)
    rows, medians = agg["rows"], agg["groups"]
    rhos = [b.spearman for s in scores for b in s.best_p if math.isfinite(b.spearman)]
    out = {"task": groups[0].name, "contender": contender, "n_groups": len(groups), "n_ok": n_ok,
           "status": "ok" if not failed else failed[0],
           "seconds": number(sum(o.seconds for o in (outcomes[t.key] for t in groups)
                                 if math.isfinite(o.seconds)))}
    if n_ok == 0:
        return out
    return {**out, "median": number(rows.median), "mean": number(rows.mean),
            "worst": number(rows.worst), "n_points": rows.n_points,
            "group_median_of_medians": number(medians.median),
            "best_p_hits": sum(s.best_p_hits for s in scores),
            "best_p_slices": sum(len(s.best_p) for s in scores),
            "spearman": number(np.mean(rhos)) if rhos else None}


def goal(headline: Mapping | None, reference: Mapping | None) -> dict:
    """Is the issue's goal met on one task? ``met`` is True, False or None (not measurable)."""
    if headline is None or headline.get("median") is None:
        return {"met": False, "text": "no: automodel did not model this task"}
    mean_ok = headline["mean"] is not None and headline["mean"] < GOAL_MEAN
    mean_text = f"mean {pct(headline['mean'])} {'<' if mean_ok else '>='} {pct(GOAL_MEAN)}"
    if reference is None or reference.get("median") is None:
        status = reference["status"] if reference else "Extra-P not run"
        verdict = "no" if not mean_ok else "unknown"
        return {"met": False if not mean_ok else None,
                "text": f"{verdict}: {mean_text}; median not compared ({status})"}
    bound = GOAL_MEDIAN_RATIO * reference["median"]
    median_ok = headline["median"] <= bound
    median_text = (f"median {pct(headline['median'])} {'<=' if median_ok else '>'} "
                   f"{pct(bound)} (half of Extra-P's {pct(reference['median'])})")
    met = median_ok and mean_ok
    return {"met": met, "text": f"{'yes' if met else 'no'}: {median_text}; {mean_text}"}


def pct(value: float | None) -> str:
    """A relative error in percent (three digits at most after rounding); None (non-finite) is ``inf``."""
    if value is None:
        return "inf"
    v = 100 * value
    return f"{v:.0f} %" if abs(v) >= 100 else f"{v:.1f} %"


def build(tasks: Sequence[Task], contenders: Sequence, outcomes: Mapping[str, Mapping[Key, Outcome]]
          ) -> dict:
    """Group records, task summaries and goal checks of every contender on every task.

    Returns
    -------
    dict
        ``{"tasks": [...], "contenders": [...], "groups": [...], "summaries": [...], "goal": [...]}``.
    """
    by_task = by_name(tasks)
    summaries, goals = [], []
    for name, groups in by_task.items():
        rows = {c.name: task_summary(groups, c.name, outcomes[c.name]) for c in contenders}
        summaries += rows.values()
        goals.append({"task": name, **goal(rows.get(HEADLINE), rows.get(REFERENCE))})
    first = {name: groups[0] for name, groups in by_task.items()}
    return {
        "tasks": [{"name": name, "source": t.source, "unit": t.unit, "params": dict(t.params), "split": t.split,
                   "p_sweep": t.p_sweep, "groups": [group_meta(g) for g in by_task[name]]}
                  for name, t in first.items()],
        "contenders": [{"name": c.name, "kind": c.kind, "label": c.label} for c in contenders],
        "groups": [group_record(t, c.name, outcomes[c.name][t.key]) for t in tasks for c in contenders],
        "summaries": summaries,
        "goal": goals,
    }

