"""SMPI workloads: predict n and p beyond the training runs (issue 11).

Run ``python -m benchmarks.workloads [--no-extrap] [--no-baselines]``. Data: the sweeps of
``examples/regenerate_data.sh sweeps`` (``examples/data/sweeps/<workload>_<platform>.csv``: cg, jacobi,
matmul, bucketsort, kmeans simulated with SimGrid SMPI on the fast and slow platforms, 6 n x p = 1, 2,
..., 256, one run per point; ``examples/data/README.md``).

Each file is one task group: train on the 4 smallest n with p <= 16 (20 runs), predict the 2 largest
n at every p (18 runs, up to p = 256: 2-3x the largest trained n and 16x the largest trained p).
The contenders of the accuracy benchmark (``benchmarks.contenders``) model the same rows:
automodel (``automodel.fit`` with its default options on ``n``, ``p``, ``time``), Extra-P 4 (default
and refining modelers, from ``benchmarks/.extrap-venv``) and the seeded baselines. Scores per group:
median and mean relative error over the held-out runs, and the best p: for each held-out n whose
measured times over p have an interior minimum (the measured argmin is neither the smallest nor the
largest p of the grid), whether the predicted argmin over the same p grid is within one grid step
(a factor of 2) of the measured one. Extra-P warns on every sweep that it wants at least 5 values per
parameter: the split gives it 4 values of n (and 5 of p); its notes are printed and kept.

Target (issue 11): automodel's median error, taken over the workload x platform groups (the median of
the group medians), at most 10 %. ``collect()`` returns the records for ``python -m benchmarks``,
``section_lines()`` renders its ``RESULTS.md`` section.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.tasks import Task

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ROOT / "examples" / "data" / "sweeps"
TASK = "smpi-workloads"
WORKLOADS = ("cg", "jacobi", "matmul", "bucketsort", "kmeans")
PLATFORMS = ("fast", "slow")
#: the split: the TRAIN_N smallest n with p <= TRAIN_P_MAX for training, the TEST_N largest n (every p) held out
TRAIN_N, TRAIN_P_MAX, TEST_N = 4, 16, 2
#: issue 11: median over the workload x platform groups of automodel's median error
TARGET_MEDIAN = 0.10
HEADLINE, EXTRAP = "automodel", "extrap-default"
TITLE = "SMPI workloads: n and p beyond the training runs"


# -- data --------------------------------------------------------------------------------------------
def split(frame: pd.DataFrame, n: str = "n", p: str = "p", train_n: int = TRAIN_N,
          train_p_max: float = TRAIN_P_MAX, test_n: int = TEST_N) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test): the ``train_n`` smallest values of ``n`` with ``p <= train_p_max``; the ``test_n``
    largest values of ``n`` with every ``p``. Rows keep their order; the index is reset.

    >>> f = pd.DataFrame({"n": np.repeat([1, 2, 3, 4, 5, 6], 2), "p": [1, 32] * 6, "time": 1.0})
    >>> [sorted(set(zip(s["n"], s["p"]))) for s in split(f)]
    [[(1, 1), (2, 1), (3, 1), (4, 1)], [(5, 1), (5, 32), (6, 1), (6, 32)]]
    """
    values = np.sort(frame[n].unique())
    if len(values) < train_n + test_n:
        raise ValueError(f"{len(values)} values of {n}; the split needs {train_n + test_n}")
    train = frame[frame[n].isin(values[:train_n]) & (frame[p] <= train_p_max)]
    test = frame[frame[n].isin(values[-test_n:])]
    return train.reset_index(drop=True), test.reset_index(drop=True)


def sweep_files(folder: Path | str = SWEEPS) -> list[Path]:
    """The sweep CSVs present, in the order of WORKLOADS x PLATFORMS (then any others, by name)."""
    folder = Path(folder)
    known = [folder / f"{w}_{p}.csv" for w in WORKLOADS for p in PLATFORMS]
    others = sorted(set(folder.glob("*.csv")) - set(known))
    return [f for f in known if f.exists()] + others


def sweep_task(path: Path | str) -> Task:
    """One task group of a sweep CSV (``<workload>_<platform>.csv``): successful runs, columns n, p, time."""
    path = Path(path)
    workload, _, platform = path.stem.rpartition("_")
    frame = pd.read_csv(path)
    if "status" in frame.columns:
        frame = frame[frame["status"] == 0]
    frame = frame[frame["time"] > 0][["n", "p", "time"]]
    train, test = split(frame)
    source = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    return Task(name=TASK, group=f"workload={workload},platform={platform}", params={"n": "n", "p": "p"},
                train=train, test=test, p_sweep=True, source=source,
                split=f"train the {TRAIN_N} smallest n with p <= {TRAIN_P_MAX}; test the {TEST_N} largest n, every p")


def sweep_tasks(folder: Path | str = SWEEPS) -> list[Task]:
    """Every sweep of ``folder`` as a task group (:func:`sweep_task`)."""
    return [sweep_task(f) for f in sweep_files(folder)]


def _label(task: Task) -> tuple[str, str]:
    parts = dict(item.split("=", 1) for item in task.group.split(","))
    return parts.get("workload", task.group), parts.get("platform", "")


# -- scores ------------------------------------------------------------------------------------------
def best_p(test: pd.DataFrame, predictions: Sequence[float], n: str = "n", p: str = "p",
           target: str = "time") -> list[dict]:
    """Per held-out ``n`` with an interior measured minimum over ``p``: measured and predicted argmin and
    whether they are within one step of the sorted p grid (a factor of 2 on a doubling grid).

    Repetitions are reduced to their median first. Held-out n whose measured argmin is the smallest or
    the largest p are left out (no interior minimum to find).

    >>> t = pd.DataFrame({"n": [9] * 4, "p": [1, 2, 4, 8], "time": [4.0, 2.0, 1.0, 3.0]})
    >>> best_p(t, [4.0, 3.0, 2.0, 1.0])
    [{'n': 9.0, 'measured': 4.0, 'predicted': 8.0, 'steps': 1, 'hit': True}]
    """
    frame = test[[n, p]].astype(float).assign(time=test[target].to_numpy(float),
                                             pred=np.asarray(predictions, float))
    frame = frame.groupby([n, p], as_index=False)[["time", "pred"]].median()
    out = []
    for value, part in frame.groupby(n, sort=True):
        part = part.sort_values(p)
        grid = part[p].to_numpy()
        measured = int(np.argmin(part["time"].to_numpy()))
        if measured in (0, len(grid) - 1):
            continue
        pred = part["pred"].to_numpy()
        if np.isfinite(pred).any():
            predicted = int(np.nanargmin(np.where(np.isfinite(pred), pred, np.nan)))
            steps = abs(predicted - measured)
            out.append({"n": float(value), "measured": float(grid[measured]), "predicted": float(grid[predicted]),
                        "steps": steps, "hit": steps <= 1})
        else:
            out.append({"n": float(value), "measured": float(grid[measured]), "predicted": None,
                        "steps": None, "hit": False})
    return out


def _number(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def group_record(task: Task, contender: str, outcome) -> dict:
    """Errors and best p of one contender on one sweep (``outcome``: a ``benchmarks.contenders.Outcome``)."""
    from benchmarks.scoring import relative_errors, summarize

    test_pred = outcome.split(task)[0]
    errors = relative_errors(task.test, test_pred, task.columns, task.target)
    s = summarize(errors)
    hits = best_p(task.test, test_pred)
    workload, platform = _label(task)
    return {"workload": workload, "platform": platform, "contender": contender, "status": outcome.status,
            "formula": outcome.formula, "note": outcome.note, "seconds": _number(outcome.seconds),
            "median": _number(s.median), "mean": _number(s.mean), "worst": _number(s.worst),
            "n_points": s.n_points, "best_p": hits, "best_p_hits": sum(h["hit"] for h in hits),
            "best_p_slices": len(hits)}


def summary(records: Sequence[Mapping], contender: str) -> dict:
    """One contender over every group: median and mean of the group medians, pooled best-p hits."""
    rows = [r for r in records if r["contender"] == contender]
    medians = [r["median"] if r["median"] is not None else math.inf for r in rows]
    means = [r["mean"] if r["mean"] is not None else math.inf for r in rows]
    return {"contender": contender, "groups": len(rows), "ok": sum(r["status"] == "ok" for r in rows),
            "median_of_medians": _number(np.median(medians)) if rows else None,
            "mean_of_medians": _number(np.mean(medians)) if rows else None,
            "mean_of_means": _number(np.mean(means)) if rows else None,
            "best_p_hits": sum(r["best_p_hits"] for r in rows),
            "best_p_slices": sum(r["best_p_slices"] for r in rows)}


# -- the run -----------------------------------------------------------------------------------------
def collect(quick: bool = False, extrap: bool = True, install: bool = True, baselines: bool = True,
            folder: Path | str = SWEEPS, log: Callable[[str], None] = print) -> dict:
    """Every contender on every sweep; the records for ``results.json``.

    ``quick`` is accepted for symmetry with the other sections (the run is a few seconds either way).
    Returns ``{"meta", "groups" (one record per sweep and contender), "summaries", "goal"}``.
    """
    from benchmarks.contenders import BASELINES, default_contenders, run_contenders
    from benchmarks.extrap_tool import extrap_version

    start = time.perf_counter()
    tasks = sweep_tasks(folder)
    if not tasks:
        raise FileNotFoundError(f"no sweep CSVs in {folder}: run examples/regenerate_data.sh sweeps")
    contenders = default_contenders((), extrap=extrap, install=install, baselines=BASELINES if baselines else ())
    outcomes = run_contenders(contenders, tasks, log=log)
    records = [group_record(t, c.name, outcomes[c.name][t.key]) for t in tasks for c in contenders]
    summaries = [summary(records, c.name) for c in contenders]
    head = next(s for s in summaries if s["contender"] == HEADLINE)
    value = head["median_of_medians"]
    met = value is not None and value <= TARGET_MEDIAN
    meta = {"files": [t.source for t in tasks], "split": tasks[0].split, "seconds": time.perf_counter() - start,
            "extrap_version": extrap_version() if any(r["status"] == "ok" for r in records
                                                      if r["contender"].startswith("extrap")) else None,
            "contenders": [{"name": c.name, "kind": c.kind, "label": c.label} for c in contenders]}
    goal = {"target": TARGET_MEDIAN, "value": value, "met": met,
            "text": f"{'yes' if met else 'no'}: median over {head['groups']} workload x platform groups of "
                    f"automodel's median error {_pct(value)} {'<=' if met else '>'} {_pct(TARGET_MEDIAN)}"}
    return {"meta": meta, "groups": records, "summaries": summaries, "goal": goal}


# -- text --------------------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    if value is None:
        return "inf"
    v = 100 * value
    return f"{v:.0f} %" if abs(v) >= 100 else f"{v:.1f} %"


def _find(records: Sequence[Mapping], contender: str, workload: str, platform: str) -> Mapping | None:
    return next((r for r in records if r["contender"] == contender and r["workload"] == workload
                 and r["platform"] == platform), None)


def _errors(r: Mapping | None) -> str:
    if r is None:
        return "-"
    if r["status"] != "ok":
        return r["status"][:40]
    return f"{_pct(r['median'])} / {_pct(r['mean'])}"


def _hits(r: Mapping | None) -> str:
    if r is None or not r["best_p_slices"]:
        return "-"
    return f"{r['best_p_hits']}/{r['best_p_slices']}"


def _shorten(formula: str | None, width: int = 110) -> str:
    text = re.sub(r"\s+", " ", formula or "-")
    return text if len(text) <= width else text[:width - 3] + "..."


def table_rows(result: Mapping) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the per-sweep table: automodel and Extra-P, median / mean error, best p."""
    records = result["groups"]
    names = [c["name"] for c in result["meta"]["contenders"]]
    extraps = [n for n in names if n.startswith("extrap-")]
    pairs = sorted({(r["workload"], r["platform"]) for r in records},
                   key=lambda wp: (WORKLOADS.index(wp[0]) if wp[0] in WORKLOADS else 99, wp))
    headers = ["workload", "platform", "automodel median / mean", *[f"{n} median / mean" for n in extraps],
               "best p within 2x: automodel", *[f"{n}" for n in extraps]]
    rows = []
    for w, p in pairs:
        rows.append([w, p, _errors(_find(records, HEADLINE, w, p)),
                     *[_errors(_find(records, n, w, p)) for n in extraps],
                     _hits(_find(records, HEADLINE, w, p)), *[_hits(_find(records, n, w, p)) for n in extraps]])
    return headers, rows


def summary_rows(result: Mapping) -> tuple[list[str], list[list[str]]]:
    headers = ["contender", "groups modelled", "median of group medians", "mean of group medians",
               "mean of group means", "best p within 2x"]
    rows = [[s["contender"], f"{s['ok']}/{s['groups']}", _pct(s["median_of_medians"]), _pct(s["mean_of_medians"]),
             _pct(s["mean_of_means"]), f"{s['best_p_hits']}/{s['best_p_slices']}"] for s in result["summaries"]]
    return headers, rows


def formula_rows(result: Mapping, contenders: Sequence[str] = (HEADLINE, EXTRAP)) -> list[list[str]]:
    return [[r["workload"], r["platform"], r["contender"], _shorten(r["formula"])]
            for r in result["groups"] if r["contender"] in contenders]


def section_lines(entry: Mapping | None) -> list[str]:
    """The ``RESULTS.md`` section (``entry``: ``{"status": "ok", "result": collect()}`` or a status)."""
    from benchmarks.markdown import table

    lines = [f"## {TITLE}", "",
             "The MPI workloads of `examples/workloads` simulated with SimGrid SMPI on the fast and slow platforms "
             "(`examples/data/sweeps/`, made by `examples/regenerate_data.sh sweeps`; grids in "
             "`examples/data/README.md`): each sweep trains on the 4 smallest n with p <= 16 and predicts the "
             "2 largest n at every p up to 256 (`python -m benchmarks.workloads`). Errors are relative, over the "
             "18 held-out runs of a sweep; best p counts the held-out n whose measured time has an interior "
             "minimum over p, and how many of them the model puts within one grid step (a factor of 2) of it.", ""]
    if not entry or entry.get("status") != "ok":
        return lines + [(entry or {}).get("status", "Not run."), ""]
    result = entry["result"]
    lines += [table(*table_rows(result)), "", table(*summary_rows(result)), "",
              f"Target: median over workloads (of each sweep's median error) <= {_pct(TARGET_MEDIAN)}: "
              f"{result['goal']['text']}.", "",
              table(["workload", "platform", "contender", "formula"], formula_rows(result)), ""]
    return lines + [f"{name} said: {note}" for name, note in notes(result)] + [""]


def notes(result: Mapping) -> list[tuple[str, str]]:
    """The distinct warnings of Extra-P (e.g. that 4 values of n are fewer than the 5 it wants per parameter)."""
    seen: dict[tuple[str, str], None] = {}
    for r in result["groups"]:
        if r["contender"].startswith("extrap-") and r.get("note"):
            seen.setdefault((r["contender"], r["note"]), None)
    return list(seen)


def print_result(result: Mapping) -> None:
    def show(headers: list[str], rows: list[list[str]]) -> None:
        widths = [max(len(h), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
        print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
        for row in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
        print()

    show(*table_rows(result))
    show(*summary_rows(result))
    print(f"target <= {_pct(TARGET_MEDIAN)} median over workloads: {result['goal']['text']}\n")
    for w, p, c, f in formula_rows(result):
        print(f"{w:10} {p:4} {c:15} {f}")
    for name, note in notes(result):
        print(f"{name} said: {note}")
    print(f"\n{len(result['groups'])} records in {result['meta']['seconds']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__.splitlines()[0])
    ap.add_argument("--no-extrap", action="store_true", help="leave Extra-P out")
    ap.add_argument("--no-baselines", action="store_true", help="leave the seeded baselines out")
    ap.add_argument("--folder", type=Path, default=SWEEPS, help="folder of the sweep CSVs")
    args = ap.parse_args(argv)
    result = collect(extrap=not args.no_extrap, baselines=not args.no_baselines, folder=args.folder)
    print_result(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
