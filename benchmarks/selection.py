"""Model selection: does automodel choose the candidate that extrapolates best?

Run ``python -m benchmarks.selection [--part dev|test|all] [--suite NAME ...] [--task SUBSTRING]
[--no-extrap] [--jobs N] [--out DIR]`` on the corpus of :mod:`benchmarks.corpus`. The default is the
development part; the locked test part is run only on purpose, to report (``DESIGN.md``, section 6a).

For every task, :func:`automodel.fit` models the training rows (every ranked candidate kept,
``max_rows=100000``) and each ranked candidate predicts the test configurations. Truth for a
configuration is the median time of its repetitions; the error of a model is the median over the test
configurations of ``|prediction - truth| / truth`` (a model that predicts no finite time is infinitely
wrong). Per task:

- the chosen model's error and formula;
- the oracle: the least error among all ranked leaderboard rows (searched and templates), its rank and
  formula; the regret is chosen minus oracle, in percentage points;
- the chosen model's 90 % band (``predict_interval``, one new run): the share of test configurations
  whose truth it holds and its median relative width ``(hi - lo) / prediction``;
- the fit's seconds; Extra-P 4 on the same rows (:mod:`benchmarks.extrap_tool`): default, negative
  exponents allowed, refining;
- with ``--space-gap``, what the space can express at all: a second fit on the training *and* the test
  rows, its chosen model's error on the test configurations and the least error of its ranked
  candidates there (:func:`space_gap`). A task whose held-out runs no candidate fits well even when
  they are part of the fit cannot be predicted well by any choice: its error is the space's, not the
  chooser's.

A task whose fit raises is recorded as failed with its one-line error and counts as infinitely wrong.
Records go to ``<out>/<part>.json``; the Markdown report (:func:`section_lines`) is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

import automodel
from automodel.model.core import predict_many
from automodel.solve.metrics import METRICS
from benchmarks.corpus import PARTS, SUITES, TARGET, SelectionTask, load_corpus, select
from benchmarks.scoring import interval_score

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "out" / "selection"
#: the prediction band judged
LEVEL = 0.9
#: a task above this error counts as badly wrong in the summary
BAD_ERROR = 0.5
#: Extra-P settings run beside automodel (:data:`benchmarks.extrap_tool.VARIANTS`), in report order
EXTRAP = ("default", "negative", "refining", "adaptive")
#: the settings run unless asked for more: the adaptive modeler retrains a network per task (and needs
#: TensorFlow), so it runs with ``--extrap-adaptive``
EXTRAP_ALWAYS = EXTRAP[:3]
TITLE = "Model selection: chosen against the best candidate, on a development and a locked test part"
#: development tasks of ``python -m benchmarks --quick`` (the first ones of the corpus, without Extra-P)
QUICK_TASKS = 2


# -- scores ------------------------------------------------------------------------------------------
def configurations(task: SelectionTask) -> pd.DataFrame:
    """The distinct test configurations (parameter columns, sorted) and their truth, the median ``time``."""
    return task.test.groupby(task.columns, sort=True, as_index=False)[TARGET].median()


def relative_error(predictions: Sequence[float] | np.ndarray, truth: Sequence[float]) -> float | np.ndarray:
    """Median over configurations (the last axis) of ``|prediction - truth| / truth``; a non-finite
    prediction is infinitely wrong. ``predictions`` (..., m): one error per row of many models at once.

    >>> relative_error([1.1, 2.0, np.nan], [1.0, 1.0, 1.0]), relative_error([[1.1, 2.0], [1.0, 1.0]], [1.0, 1.0]).tolist()
    (1.0, [0.55, 0.0])
    """
    pred, true = np.asarray(predictions, float), np.asarray(truth, float)
    with np.errstate(all="ignore"):
        errors = np.where(np.isfinite(pred), np.abs(pred - true) / true, math.inf)
    median = np.median(errors, axis=-1)
    return float(median) if median.ndim == 0 else median


def model_error(model: automodel.Model, configs: pd.DataFrame) -> float:
    """:func:`relative_error` of ``model`` at ``configs``; infinite when it predicts no finite time there."""
    try:
        predictions = model.predict(configs)
    except automodel.DataError:
        return math.inf
    return relative_error(predictions, configs[TARGET])


def ranked_errors(task: SelectionTask, result: automodel.FitResult, configs: pd.DataFrame) -> np.ndarray:
    """:func:`relative_error` of every ranked model of ``result`` (``result.models``, leaderboard order) at
    ``configs``, in one batched product per width (:func:`automodel.model.core.predict_many`), not a
    prediction per candidate (about 1,000 a task)."""
    held_out = configs[task.columns].astype(float).rename(columns={c: r for r, c in task.roles.items()})
    with np.errstate(all="ignore"):
        predictions = predict_many([m.core for m in result.models], held_out[list(result.dataset.params)])
    return np.atleast_1d(relative_error(predictions, configs[TARGET]))


def band_scores(model: automodel.Model, configs: pd.DataFrame, level: float = LEVEL) -> dict[str, Any]:
    """How many truths the ``level`` band of ``model`` holds, out of how many, and its median relative width.

    A configuration where the band or the prediction is not finite counts as not held.
    """
    band = model.predict_interval(configs, level=level)
    if band is None:
        return {"covered": None, "configs": len(configs), "coverage": None, "width": None, "interval_score": None}
    lo, hi = (np.asarray(b, float) for b in band)
    truth = configs[TARGET].to_numpy(float)
    try:
        prediction = model.predict(configs)
    except automodel.DataError:
        prediction = np.full(len(configs), np.nan)
    with np.errstate(all="ignore"):
        width = (hi - lo) / prediction
    covered = int(np.sum((lo <= truth) & (truth <= hi)))
    finite = width[np.isfinite(width)]
    return {"covered": covered, "configs": len(configs), "coverage": covered / len(configs),
            "width": float(np.median(finite)) if len(finite) else None,
            "interval_score": _finite(float(np.mean(interval_score(lo, hi, truth, level))))}


def _finite(value: float | None) -> float | None:
    """``value``, or None when it is missing or not finite (JSON has no infinity)."""
    return float(value) if value is not None and math.isfinite(value) else None


def _one_line(error: BaseException, width: int = 200) -> str:
    text = re.sub(r"\s+", " ", f"{type(error).__name__}: {error}").strip()
    return text if len(text) <= width else text[:width - 3] + "..."


# -- one task ----------------------------------------------------------------------------------------
def _base_record(task: SelectionTask) -> dict[str, Any]:
    return {"name": task.name, "suite": task.suite, "part": task.part, "roles": task.roles,
            "params": list(task.params), "provenance": task.provenance, "train_rows": len(task.train),
            "test_configs": int(len(task.test.drop_duplicates(task.columns))), "status": "ok"}


def evaluate(task: SelectionTask) -> dict[str, Any]:
    """Fit ``task``'s training rows and score the chosen model, the oracle and the chosen model's band."""
    record = _base_record(task)
    configs = configurations(task)
    start = time.perf_counter()
    result = automodel.fit(task.train, time=TARGET, **task.fit_kwargs(), progress=False, max_rows=100000)
    record["seconds"] = time.perf_counter() - start
    ranked = result.leaderboard[result.leaderboard["rank"].notna()].reset_index(drop=True)
    errors = ranked_errors(task, result, configs)
    oracle = ranked.iloc[int(np.argmin(errors))]
    chosen = ranked[ranked["choice"] == "chosen"]
    chosen_error, oracle_error = model_error(result.best, configs), float(errors.min())
    tied = ranked["choice"].isin(["chosen", "equivalent"]).to_numpy()
    tied_error = float(errors[tied].min()) if tied.any() else chosen_error
    metric = result.space.fit.metric
    scores = ranked[metric].to_numpy(float)
    with np.errstate(all="ignore"):  # how much worse the oracle fits the training runs (a ratio of errors)
        fit_ratio = (float(scores[int(np.argmin(errors))] / np.nanmin(scores))
                     if METRICS[metric].scale in ("relative", "percent", "seconds") else math.nan)
    record |= {
        "candidates": len(ranked),
        "chosen_error": _finite(chosen_error), "chosen_formula": result.best.formula,
        "chosen_rank": int(chosen["rank"].iloc[0]) if len(chosen) else None,
        "chosen_kind": str(chosen["kind"].iloc[0]) if len(chosen) else None,
        "oracle_error": _finite(oracle_error), "oracle_rank": int(oracle["rank"]),
        "oracle_formula": str(oracle["formula"]), "oracle_kind": str(oracle["kind"]),
        "regret_pp": _finite(100 * (chosen_error - oracle_error)) if math.isfinite(chosen_error) else None,
        "tied": int(tied.sum()), "tied_oracle_error": _finite(tied_error),
        "oracle_tied": bool(tied[int(np.argmin(errors))]), "oracle_fit_ratio": _finite(fit_ratio),
        "tie_regret_pp": _finite(100 * (chosen_error - tied_error)) if math.isfinite(chosen_error) else None,
        **band_scores(result.best, configs)}
    return record


def space_gap(task: SelectionTask) -> dict[str, Any]:
    """The errors on ``task``'s test configurations of a fit that saw them: its chosen model's
    (``space_chosen_error``) and the least of its ranked candidates' (``space_best_error``).

    The test rows join the training rows, so these are in-sample errors: the part of a task's error
    that no choice and no search within the space can remove (how far the space's formulas are from
    the truth), beside the regret (how far the choice is from the best ranked candidate).
    """
    configs = configurations(task)
    both = pd.concat([task.train, task.test], ignore_index=True)
    result = automodel.fit(both, time=TARGET, **task.fit_kwargs(), progress=False, max_rows=100000,
                           intervals=False)
    errors = ranked_errors(task, result, configs)
    return {"space_chosen_error": _finite(model_error(result.best, configs)),
            "space_best_error": _finite(float(errors.min()))}


def run_task(task: SelectionTask, gap: bool = False) -> dict[str, Any]:
    """:func:`evaluate` (and with ``gap`` :func:`space_gap`), or a failed record with the one-line error
    when it raises."""
    try:
        return evaluate(task) | (space_gap(task) if gap else {})
    except Exception as error:  # any failure of the fit is a result: infinitely wrong, not a crash
        return {**_base_record(task), "status": f"failed: {_one_line(error)}"}


# -- Extra-P -----------------------------------------------------------------------------------------
def extrap_records(tasks: Sequence[SelectionTask], variants: Iterable[str] = EXTRAP_ALWAYS,
                   install: bool = True) -> dict[str, dict[str, dict[str, Any]]]:
    """Extra-P's error, formula and status per task name and variant, on the same rows as automodel."""
    from benchmarks.extrap_tool import run_extrap

    stand_ins = [t.as_task() for t in tasks]
    out: dict[str, dict[str, dict[str, Any]]] = {t.name: {} for t in tasks}
    for variant in variants:
        results = run_extrap(stand_ins, variant, install=install)
        for task, stand_in in zip(tasks, stand_ins):
            r = results[stand_in.key]
            error = _extrap_error(task, r.predictions) if r.ok else None
            out[task.name][variant] = {"status": r.status, "error": error, "formula": r.formula}
    return out


def _extrap_error(task: SelectionTask, predictions: np.ndarray) -> float | None:
    """Error of per-test-row predictions (one value per configuration: their median)."""
    frame = task.test[task.columns].assign(time=task.test[TARGET].to_numpy(float), pred=predictions)
    frame = frame.groupby(task.columns, sort=True, as_index=False)[[TARGET, "pred"]].median()
    return _finite(relative_error(frame["pred"], frame[TARGET]))


# -- the run -----------------------------------------------------------------------------------------
def collect(tasks: Sequence[SelectionTask], extrap: bool = True, jobs: int = 2,
            variants: Iterable[str] = EXTRAP_ALWAYS, gap: bool = False) -> list[dict[str, Any]]:
    """One record per task (:func:`run_task`, ``jobs`` tasks at once, with ``gap`` the space's own
    error too), with Extra-P's (``variants``) under ``"extrap"``."""
    records = Parallel(n_jobs=jobs)(delayed(run_task)(t, gap) for t in tasks)
    contenders = extrap_records(tasks, variants) if extrap and tasks else {}
    return [{**r, "extrap": contenders.get(r["name"], {})} for r in records]


def development(quick: bool = False, extrap: bool = True) -> list[dict[str, Any]]:
    """The development part for ``python -m benchmarks``: every dev task, or with ``quick`` the first
    :data:`QUICK_TASKS` of them without Extra-P. The locked test part is never run here."""
    tasks = select(load_corpus(quick=quick)[0], ("dev",))
    return collect(tasks[:QUICK_TASKS], extrap=False) if quick else collect(tasks, extrap=extrap)


# -- the report --------------------------------------------------------------------------------------
def _error(record: Mapping, key: str = "chosen_error") -> float:
    """An error of a record; a failed task or a missing value is infinitely wrong."""
    value = record.get(key) if record["status"] == "ok" else None
    return math.inf if value is None else value


def _extrap_error_of(record: Mapping, variant: str) -> float | None:
    """Extra-P's error on the task (inf when it failed), or None when it was not run."""
    entry = record.get("extrap", {}).get(variant)
    if entry is None:
        return None
    return math.inf if entry["error"] is None else entry["error"]


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def summary(records: Sequence[Mapping]) -> dict[str, Any]:
    """The scores of a set of tasks (one suite and part): medians over tasks, pooled band coverage."""
    errors = [_error(r) for r in records]
    ok = [r for r in records if r["status"] == "ok"]
    banded = [r for r in ok if r.get("covered") is not None]
    out = {"tasks": len(records), "failed": len(records) - len(ok),
           "median_error": _median(errors), "worst": max(errors, default=None),
           "above_bad": sum(e > BAD_ERROR for e in errors),
           "median_regret_pp": _median([math.inf if r.get("regret_pp") is None else r["regret_pp"] for r in ok]),
           "median_tie_regret_pp": _median([math.inf if r.get("tie_regret_pp") is None else r["tie_regret_pp"]
                                            for r in ok if "tie_regret_pp" in r]),
           "oracle_tied": sum(bool(r.get("oracle_tied")) for r in ok),
           "median_oracle_fit_ratio": _median([r["oracle_fit_ratio"] for r in ok if not r.get("oracle_tied", True)
                                               and r.get("oracle_fit_ratio") is not None]),
           "coverage": (sum(r["covered"] for r in banded) / sum(r["configs"] for r in banded)) if banded else None,
           "median_width": _median([r["width"] for r in banded if r.get("width") is not None]),
           "interval_score": _median([math.inf if r.get("interval_score") is None else r["interval_score"]
                                      for r in banded]),
           "extrap": {}, "worse_than_extrap": None}
    for key in ("oracle_error", "space_chosen_error", "space_best_error"):
        if ok and all(key in r for r in ok):
            out[f"median_{key}"] = _median([_error(r, key) for r in records])
    for variant in EXTRAP:
        values = [_extrap_error_of(r, variant) for r in records]
        if all(v is not None for v in values) and values:
            out["extrap"][variant] = _median(values)
    if {"default", "negative"} <= set(out["extrap"]):
        out["worse_than_extrap"] = sum(
            _error(r) > min(_extrap_error_of(r, "default"), _extrap_error_of(r, "negative")) for r in records)
    return out


def paired_difference(records: Sequence[Mapping], variant: str = "negative", draws: int = 2000,
                      seed: int = 0) -> tuple[float, float, float] | None:
    """automodel's median error minus Extra-P ``variant``'s over the same tasks, in points, with its 95 %
    bootstrap interval (tasks drawn with replacement, both errors of a task together: Efron and
    Tibshirani 1993, ch. 6); None when Extra-P did not run on every task. A median over a few dozen tasks
    moves by points from one draw of tasks to the next: the interval says whether a difference is more
    than that.

    >>> r = [{"status": "ok", "chosen_error": e, "extrap": {"negative": {"error": e + 0.1}}} for e in (0.1, 0.2, 0.3)]
    >>> [round(v, 1) for v in paired_difference(r)]
    [-10.0, -10.0, -10.0]
    """
    theirs = [_extrap_error_of(r, variant) for r in records]
    if not records or any(v is None for v in theirs):
        return None
    pairs = np.array([[_error(r), v] for r, v in zip(records, theirs)], float)
    rng = np.random.default_rng(seed)
    drawn = pairs[rng.integers(0, len(pairs), (draws, len(pairs)))]
    with np.errstate(invalid="ignore"):
        differences = 100.0 * (np.median(drawn[..., 0], axis=1) - np.median(drawn[..., 1], axis=1))
        point = 100.0 * (np.median(pairs[:, 0]) - np.median(pairs[:, 1]))
    finite = differences[np.isfinite(differences)]  # a draw of failed fits only has no median difference
    lo, hi = np.percentile(finite, [2.5, 97.5]) if len(finite) else (np.nan, np.nan)
    return float(point), float(lo), float(hi)


def groups(records: Sequence[Mapping]) -> dict[tuple[str, str], list[Mapping]]:
    """The records by (suite, part), in the order of :data:`SUITES` and :data:`PARTS`."""
    out: dict[tuple[str, str], list[Mapping]] = {}
    for key in sorted({(r["suite"], r["part"]) for r in records},
                      key=lambda k: (SUITES.index(k[0]) if k[0] in SUITES else len(SUITES), k)):
        out[key] = [r for r in records if (r["suite"], r["part"]) == key]
    return out


def pct(value: float | None) -> str:
    """A share as a percentage for the tables (``inf`` for infinitely wrong, ``-`` for not measured)."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return "inf"
    return f"{100 * value:.0f} %" if abs(value) >= 1 else f"{100 * value:.1f} %"


def _pp(value: float | None) -> str:
    if value is None:
        return "-"
    return "inf" if not math.isfinite(value) else f"{value:.1f}"


def task_row(record: Mapping) -> list[str]:
    """One task's row: task, chosen, oracle, regret, oracle rank, coverage, width, Extra-P's errors."""
    extrap = [pct(_extrap_error_of(record, v)) for v in EXTRAP]
    if record["status"] != "ok":
        return [record["name"], record["status"][:60], "-", "-", "-", "-", "-", "-", *extrap]
    coverage = "-" if record["covered"] is None else f"{record['covered']}/{record['configs']}"
    tie_regret = ("-" if "tie_regret_pp" not in record else
                  _pp(math.inf if record["tie_regret_pp"] is None else record["tie_regret_pp"]))
    return [record["name"], pct(_error(record)), pct(record["oracle_error"]),
            _pp(math.inf if record["regret_pp"] is None else record["regret_pp"]),
            str(record["oracle_rank"]), tie_regret, coverage, pct(record["width"]), *extrap]


def summary_row(suite: str, part: str, s: Mapping) -> list[str]:
    """One (suite, part) summary row."""
    worse = "-" if s["worse_than_extrap"] is None else f"{s['worse_than_extrap']}/{s['tasks']}"
    return [suite, part, f"{s['tasks']} ({s['failed']} failed)", pct(s["median_error"]), pct(s["worst"]),
            str(s["above_bad"]), _pp(s["median_regret_pp"]), _pp(s["median_tie_regret_pp"]), pct(s["coverage"]),
            pct(s["median_width"]), "-" if s["interval_score"] is None else f"{s['interval_score']:.2f}",
            *(pct(s["extrap"].get(v)) for v in EXTRAP), worse]


TASK_HEADERS = ["task", "chosen", "oracle", "regret (pp)", "oracle rank", "regret in the tie (pp)", "90 % band holds", "band width",
                *(f"Extra-P {v}" for v in EXTRAP)]
SUMMARY_HEADERS = ["suite", "part", "tasks", "median error", "worst", f"tasks > {100 * BAD_ERROR:.0f} %",
                   "median regret (pp)", "median regret in the tie (pp)", "band coverage", "median width", "median interval score", *(f"Extra-P {v}" for v in EXTRAP),
                   "worse than Extra-P default/negative"]


def section_lines(records: Sequence[Mapping]) -> list[str]:
    """The Markdown section for ``benchmarks/RESULTS.md``: a table per (suite, part) and one summary table."""
    from benchmarks.markdown import table

    lines = [f"## {TITLE}", "",
             "`python -m benchmarks.selection` (corpus: `benchmarks/corpus.py`). Error: median over the test "
             "configurations of |prediction - truth| / truth, truth the median of the repetitions. Oracle: the "
             "least error among all ranked candidates (searched and templates); regret = chosen - oracle. "
             "Regret in the tie: chosen minus the least error among the candidates the chooser found tied with "
             "the best (`automodel.search.select`): what a better choice among the same candidates could gain; "
             "the rest of the regret belongs to candidates the runs themselves rank lower. "
             f"Band: the chosen model's {100 * LEVEL:.0f} % band for one run, the test configurations it holds and its "
             "median width (hi - lo) / prediction; its interval score (`benchmarks.scoring.interval_score`, in log "
             "space: width plus 20 times the distance of a truth outside; lower is better), the mean over a task's "
             "configurations, then the median over tasks (a band that is not positive scores infinity). A failed fit counts as infinitely wrong.", ""]
    if not records:
        return lines + ["No tasks.", ""]
    grouped = groups(records)
    for (suite, part), members in grouped.items():
        lines += [f"### {suite}, {part}", "", table(TASK_HEADERS, [task_row(r) for r in members]), ""]
    rows = [summary_row(suite, part, summary(members)) for (suite, part), members in grouped.items()]
    lines += ["### Summary", "", table(SUMMARY_HEADERS, rows), ""]
    sources = [[suite, part, str(s["tasks"]), f"{s['oracle_tied']}", _pp(s["median_regret_pp"]),
                _pp(s["median_tie_regret_pp"]),
                "-" if s["median_oracle_fit_ratio"] is None else f"{s['median_oracle_fit_ratio']:.2g}x"]
               for (suite, part), members in grouped.items() for s in [summary(members)]]
    lines += ["Where the regret comes from: the tasks whose oracle is among the candidates tied with the best "
              "(a better choice among them could have found it), the median regret against every ranked "
              "candidate and against the tied ones, and, where the oracle is not tied, the median of its "
              "score on the training runs over the best score (how much worse it fits the runs it was "
              "chosen on):", "",
              table(["suite", "part", "tasks", "oracle tied", "median regret (pp)", "in the tie (pp)",
                     "untied oracle's fit / best fit"], sources), ""]
    gaps = [[suite, part, str(s["tasks"]), pct(s["median_error"]), pct(s["median_oracle_error"]),
             pct(s["median_space_chosen_error"]), pct(s["median_space_best_error"])]
            for (suite, part), members in grouped.items() for s in [summary(members)]
            if "median_space_best_error" in s]
    if gaps:
        lines += ["What the space can express (`--space-gap`): the median error on the test configurations of "
                  "the chosen model, of the best ranked candidate (the oracle), and of a second fit that had the "
                  "test runs among its rows: its chosen model and the best of its ranked candidates. The last is "
                  "the error no choice or search within the space removes:", "",
                  table(["suite", "part", "tasks", "chosen", "oracle", "fitted with the test runs: chosen",
                         "fitted with the test runs: best"], gaps), ""]
    paired = []
    for (suite, part), members in grouped.items():
        for variant in EXTRAP:
            found = paired_difference(members, variant)
            if found is not None:
                paired.append([f"{suite}, {part}", f"Extra-P {variant}", f"{found[0]:+.1f}",
                               f"{found[1]:+.1f} to {found[2]:+.1f}"])
    if paired:
        lines += ["Median error of automodel minus that of each Extra-P setting, same tasks, in points, with "
                  "the 95 % bootstrap interval of the difference (`paired_difference`):", "",
                  table(["suite, part", "against", "difference (pp)", "95 % interval"], paired), ""]
    return lines


# -- the command -------------------------------------------------------------------------------------
def write(records: Sequence[Mapping], path: Path) -> str | None:
    """The records as JSON (non-finite numbers as null) with the code they measured: ``{"revision", "date",
    "records"}``. Returns the revision (the commit, and the files that differed from it)."""
    from datetime import datetime, timezone

    from benchmarks.markdown import revision

    code = revision()
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"revision": code, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "records": list(records)}
    path.write_text(json.dumps(document, indent=1, allow_nan=False))
    return code


def task_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that pick the corpus's tasks (``--part``, ``--suite``, ``--task``) and how many are
    fitted at once (``--jobs``); :func:`selected_tasks` reads them."""
    ap.add_argument("--part", choices=[*PARTS, "all"], default="dev",
                    help="dev (default) or the locked test part, run only to report")
    ap.add_argument("--suite", nargs="+", choices=SUITES, default=(), help="only these suites")
    ap.add_argument("--task", default="", help="only tasks whose name contains this")
    ap.add_argument("--jobs", type=int, default=2, help="tasks fitted at once (joblib)")


def selected_tasks(args: argparse.Namespace) -> tuple[list[SelectionTask], list[str]]:
    """The tasks :func:`task_arguments`'s options pick, and the corpus's notes (what could not be loaded)."""
    corpus, notes = load_corpus()
    return select(corpus, PARTS if args.part == "all" else (args.part,), args.suite, args.task), notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.selection", description=__doc__.splitlines()[0])
    task_arguments(ap)
    ap.add_argument("--no-extrap", action="store_true", help="leave Extra-P out")
    ap.add_argument("--extrap-adaptive", action="store_true",
                    help="run Extra-P's adaptive modeler too (needs its extension in Extra-P's venv)")
    ap.add_argument("--space-gap", action="store_true",
                    help="fit each task once more with its test runs, to measure what the space can express")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="folder of <part>.json")
    args = ap.parse_args(argv)
    tasks, notes = selected_tasks(args)
    for note in notes:
        print(f"note: {note}")
    start = time.perf_counter()
    records = collect(tasks, extrap=not args.no_extrap, jobs=args.jobs,
                      variants=EXTRAP if args.extrap_adaptive else EXTRAP_ALWAYS, gap=args.space_gap)
    code = write(records, args.out / f"{args.part}.json")
    print("\n".join(section_lines(records)))
    print(f"{len(records)} tasks in {time.perf_counter() - start:.0f} s on {code}; "
          f"records in {args.out / f'{args.part}.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
