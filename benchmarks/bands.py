"""Calibration of automodel's prediction bands: the share of held-out runs inside the 50 % and 90 % bands.

Three task groups, each scored on individual held-out runs (repetitions kept, as a user meets them):

- ``canonical``: the canonical extrapolation tasks of the shared datasets (the fits of the accuracy
  benchmark, whose outcomes carry the bands);
- ``known-noise``: known formulas (:data:`FORMULAS`) measured with log-normal noise of 1, 5 and 20 %,
  five repetitions per configuration, several seeds; train ``n <= 16000, p <= 16``, held out
  ``n = 64000`` and ``p`` in 32..64 (4x beyond in both);
- ``smpi``: the bundled SMPI runs (``examples/data``), train ``p <= 8``, predict ``p > 8``.

For each: coverage of the 50 % and 90 % bands (target 40-60 % and 85-95 %), the median relative
width ``(upper - lower) / predicted`` of each, and the median relative error of the prediction, so a
band is judged with the error it has to cover; beside it the error of model averaging
(:meth:`automodel.Model.predict_averaged`, the geometric mean over the chosen model and the
candidates the data cannot tell apart from it) as a point prediction.

Run: ``python -m benchmarks.bands [--quick]`` (``python -m benchmarks`` runs it too).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchmarks.contenders import BAND_LEVELS, Key, Outcome, fit_automodel
from benchmarks.tasks import Task, bundled_tasks, by_name

LEVELS = BAND_LEVELS
#: known formulas of the known-noise group: name -> T(n, p)
FORMULAS = {
    "0.5 + 2e-4 n log2(n)/p": lambda n, p: 0.5 + 2e-4 * n * np.log2(n) / p,
    "1e-3 + 1e-6 n/p + 1e-3 log2(p)": lambda n, p: 1e-3 + 1e-6 * n / p + 1e-3 * np.log2(p),
    "2 + 1e-7 n^2/p + 0.01 p": lambda n, p: 2 + 1e-7 * n ** 2 / p + 0.01 * p,
}
NOISES = (0.01, 0.05, 0.2)
REPETITIONS = 5


def known_noise_tasks(seeds: int = 3) -> list[Task]:
    """The known-noise group as tasks (one per formula, noise and seed)."""
    train_n, train_p = [1000, 2000, 4000, 8000, 16000], [1, 2, 4, 8, 16]
    tasks = []
    for (name, formula) in FORMULAS.items():
        for noise in NOISES:
            for seed in range(seeds):
                rng = np.random.default_rng([seed, int(noise * 1000), len(name)])

                def runs(ns: Sequence[float], ps: Sequence[float]) -> pd.DataFrame:
                    grid = pd.MultiIndex.from_product([ns, ps, range(REPETITIONS)], names=["n", "p", "rep"])
                    frame = grid.to_frame(index=False)[["n", "p"]].astype(float)
                    t = formula(frame["n"].to_numpy(), frame["p"].to_numpy())
                    return frame.assign(time=t * np.exp(noise * rng.standard_normal(len(frame))))

                tasks.append(Task("known-noise", f"{name}, noise {noise:.0%}, seed {seed}", {"n": "n", "p": "p"},
                                  runs(train_n, train_p), runs([64000], [32, 48, 64]), True, "synthetic",
                                  split="train n <= 16000, p <= 16; test n = 64000, p in 32..64"))
    return tasks


def band_outcome(task: Task, points: pd.DataFrame) -> Outcome:
    """automodel's chosen model on ``task``: predictions and the bands of :data:`LEVELS` at ``points``."""
    start = time.perf_counter()
    best = fit_automodel(task).best
    bands = {level: best.predict_interval(points, level) for level in LEVELS}
    return Outcome("ok", best.formula, best.predict(points), time.perf_counter() - start, bands=bands,
                   averaged=best.predict_averaged(points))


def stats(tasks: Sequence[Task], outcomes: Mapping[Key, Outcome]) -> dict:
    """Pooled coverage and median widths of the bands, and the median error, over the held-out runs."""
    inside: dict[float, list] = {level: [] for level in LEVELS}
    width: dict[float, list] = {level: [] for level in LEVELS}
    errors, averaged = [], []
    n_groups = 0
    for task in tasks:
        outcome = outcomes.get(task.key)
        if outcome is None or not outcome.ok or not outcome.bands:
            continue
        n_groups += 1
        y = task.test[task.target].to_numpy(float)
        n_test = len(y)
        pred = outcome.predictions[:n_test]
        errors.append(np.abs(pred - y) / y)
        if outcome.averaged is not None:
            averaged.append(np.abs(np.asarray(outcome.averaged, float)[:n_test] - y) / y)
        for level in LEVELS:
            lo, hi = (np.asarray(v, float)[:n_test] for v in outcome.bands[level])
            inside[level].append((lo <= y) & (y <= hi))
            width[level].append((hi - lo) / pred)
    if not n_groups:
        return {"groups": 0, "runs": 0}
    out = {"groups": n_groups, "runs": int(sum(len(e) for e in errors)),
           "median_error": float(np.median(np.concatenate(errors))),
           "median_error_averaged": float(np.median(np.concatenate(averaged))) if averaged else None}
    for level in LEVELS:
        key = f"{level:.0%}".replace("%", "")
        out[f"coverage_{key}"] = float(np.mean(np.concatenate(inside[level])))
        out[f"width_{key}"] = float(np.nanmedian(np.concatenate(width[level])))
    return out


def band_seconds(rows: int = 10_000, repeats: int = 5) -> dict:
    """CPU seconds of one ``predict_interval`` of ``rows`` rows (median of ``repeats``), for the
    chosen model of the first known-noise task (a term model with its equivalent candidates)."""
    task = known_noise_tasks(1)[0]
    model = fit_automodel(task).best
    rng = np.random.default_rng(0)
    points = pd.DataFrame({"n": rng.uniform(1e3, 1e6, rows), "p": rng.integers(1, 4096, rows).astype(float)})
    times = []
    for _ in range(repeats):
        start = time.process_time()
        model.predict_interval(points, 0.9)
        times.append(time.process_time() - start)
    return {"rows": rows, "cpu_seconds": float(np.median(times)), "alternatives": len(model.interval.alternatives)}


def _fit_all(tasks: Sequence[Task]) -> dict[Key, Outcome]:
    out = {}
    for task in tasks:
        points = task.test[task.columns].astype(float).reset_index(drop=True)
        try:
            out[task.key] = band_outcome(task, points)
        except Exception as error:  # a benchmark reports a failing fit and goes on
            out[task.key] = Outcome(f"failed: {error}", None, np.full(len(points), np.nan), 0.0)
    return out


def collect(canonical: Sequence[Task] = (), canonical_outcomes: Mapping[Key, Outcome] | None = None,
            quick: bool = False) -> list[dict]:
    """One record per task (canonical, each by name) and per group (known-noise, smpi)."""
    rows = []
    for name, groups in by_name(canonical).items():
        rows.append({"group": "canonical", "task": name, **stats(groups, canonical_outcomes or {})})
    for group, tasks in (("known-noise", known_noise_tasks(1 if quick else 3)), ("smpi", bundled_tasks())):
        start = time.perf_counter()
        outcomes = _fit_all(tasks)
        rows.append({"group": group, "task": group, **stats(tasks, outcomes),
                     "seconds": time.perf_counter() - start})
    speed = band_seconds()
    rows.append({"group": "speed", "task": f"one band of {speed['rows']} rows ({speed['alternatives']} "
                 f"equivalent candidates)", "cpu_seconds": speed["cpu_seconds"]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed per known formula and noise")
    ap.add_argument("--canonical", action="store_true", help="the canonical tasks too (shared datasets)")
    args = ap.parse_args(argv)
    canonical, outcomes = [], {}
    if args.canonical:
        from benchmarks.tasks import load_tasks
        canonical = load_tasks(quick=args.quick)
        outcomes = _fit_all(canonical)
    table = pd.DataFrame(collect(canonical, outcomes, args.quick))
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
