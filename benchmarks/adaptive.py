"""Designed experiments: adaptive campaigns against the grid and random designs, replayed on measured sweeps.

Run ``python -m benchmarks.adaptive [--scenario all|quarter ...] [--file SUBSTRING] [--jobs N] [--out DIR]``.

Every workload is a table of measured configurations (``n``, ``p``, time; repetitions reduced to their
mean): the project's SMPI sweeps (``examples/data/sweeps``), the SMPI runs of programs written by others
(``benchmarks/data/smpi_others``) and the real HECBioSim runs on ARCHER2 (``benchmarks/data/real_public``,
atoms x ranks). A campaign may only "run" a configuration that was measured: its time is the measured one.

The target is the largest ``n`` at its largest ``p``, whose measured time is the truth. Scenarios:

``all``
    every other measured configuration may be run (``max_p`` = the target's p);
``quarter``
    only configurations with ``p`` at most a quarter of the target's (two doublings of extrapolation).

Designs, all starting from the same seed (:func:`automodel.runner.adaptive.seed_design`: the 3 smallest
n x the 4 smallest p that may be run):

adaptive
    :func:`automodel.runner.adaptive.adaptive`: 3 suggested runs per step until the 90 % band at the
    target (widened to the last batch's forward-validation error) is within +-15 % (:data:`UNTIL`) on
    two successive fits, or the core-hours of the whole allowed grid are spent;
grid
    the ladder of growing grids ``automodel run`` would be given: the k+2 smallest n x the k+3 smallest p
    (k = 1, 2, ...; k = 1 is the seed) up to every allowed configuration. "grid to +-15 %" is the first
    rung whose band reaches it; "grid at the same budget" the largest rung within the adaptive's spend;
random
    the seed plus allowed configurations in a random order, each taken while the total stays within the
    adaptive's spend (:data:`RANDOM_DESIGNS` orders; their median reported).

Each design is fitted with :func:`automodel.fit` (defaults) and scored at the target: relative error
of the prediction, the band's relative half-width (upper end / prediction - 1), whether the truth is
inside the band, core-hours (sum of p x time / 3600). The adaptive campaign's band is its last step's:
the model's widened to the forward-validation error of the last batch
(:func:`automodel.runner.adaptive.widened`); the model's own is kept as ``model_width``/``model_covered``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

import automodel
from automodel.runner.adaptive import adaptive, core_hours, seed_design

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "out" / "adaptive"
#: the band width a campaign aims at (relative half-width at the target)
UNTIL = 0.15
#: runs per adaptive step
PER_STEP = 3
#: random designs per case
RANDOM_DESIGNS = 5
LEVEL = 0.9
SCENARIOS = ("all", "quarter")


def workloads() -> list[tuple[str, str, pd.DataFrame]]:
    """``(suite, name, table)`` of every workload: columns n, p, time (one row per configuration)."""
    out = []
    for suite, folder, pattern, roles in (
            ("smpi-ours", ROOT / "examples/data/sweeps", "*.csv", {}),
            ("smpi-others", ROOT / "benchmarks/data/smpi_others", "*.csv", {}),
            ("real", ROOT / "benchmarks/data/real_public", "hecbiosim_*_archer2.csv", {"atoms": "n", "ranks": "p"})):
        for path in sorted(folder.glob(pattern)):
            raw = pd.read_csv(path).rename(columns=roles)
            if "status" in raw:
                raw = raw[raw["status"] == 0]
            table = raw.groupby(["n", "p"], as_index=False)["time"].mean()
            out.append((suite, path.stem, table))
    return out


def _score(result: Any, target: dict[str, float], truth: float, runs: pd.DataFrame) -> dict[str, Any]:
    frame = pd.DataFrame({q: [v] for q, v in target.items()})
    y = float(result.best.predict(frame)[0])
    lo, hi = (float(v[0]) for v in result.best.predict_interval(frame, level=LEVEL))
    return {"runs": len(runs), "core_hours": core_hours(runs), "predicted": y, "error": abs(y / truth - 1),
            "width": hi / y - 1, "covered": bool(lo <= truth <= hi), "formula": result.best.formula}


def _fit(runs: pd.DataFrame) -> Any:
    return automodel.fit(runs, progress=False)


def campaign_score(out: Any, target: dict[str, float], truth: float) -> dict[str, Any]:
    """The adaptive campaign (an :class:`~automodel.runner.adaptive.Outcome`) scored at the target with its
    own band, the last step's (the model's widened to the last batch's forward error); the model's band's
    width and coverage kept as ``model_width`` and ``model_covered``."""
    score = _score(out.result, target, truth, out.runs)
    last = out.steps[-1]
    return {**score, "stop": out.stop, "steps": [s.record() for s in out.steps], "model_width": score["width"],
            "model_covered": score["covered"], "width": last.width, "covered": bool(last.lower <= truth <= last.upper)}


def grid_designs(allowed: pd.DataFrame, target: dict[str, float], truth: float, spent: float,
                 runs_of: Callable[[pd.DataFrame], pd.DataFrame] = lambda rung: rung) -> dict[str, Any]:
    """The ladder's rungs scored (``runs_of``: the runs of a rung's configurations) up to the first that
    reaches the width beyond the adaptive's ``spend``: ``grid_ladder``, ``grid_same_budget`` (the largest
    rung within it) and ``grid_to_until`` (the first rung within +-15 %, None)."""
    grids: list[dict[str, Any]] = []
    for rung in ladder(allowed):
        runs = runs_of(rung)
        grids.append(_score(_fit(runs), target, truth, runs))
        if grids[-1]["width"] <= UNTIL and grids[-1]["core_hours"] > spent:
            break
    within = [g for g in grids if g["core_hours"] <= spent * (1 + 1e-9)]
    reached = [g for g in grids if g["width"] <= UNTIL]
    return {"grid_ladder": grids, "grid_same_budget": within[-1] if within else grids[0],
            "grid_to_until": reached[0] if reached else None}


def ladder(allowed: pd.DataFrame) -> list[pd.DataFrame]:
    """The growing grids of the module doc, each the allowed configurations among its levels."""
    ns, ps = sorted(allowed["n"].unique()), sorted(allowed["p"].unique())
    rungs, k = [], 1
    while True:
        rung = allowed[allowed["n"].isin(ns[:k + 2]) & allowed["p"].isin(ps[:k + 3])]
        if not rungs or len(rung) > len(rungs[-1]):
            rungs.append(rung.reset_index(drop=True))
        if k + 2 >= len(ns) and k + 3 >= len(ps):
            return rungs
        k += 1


def case(suite: str, name: str, table: pd.DataFrame, scenario: str) -> dict[str, Any]:
    """One workload in one scenario: every design, scored at the target."""
    t0 = time.perf_counter()
    n_max = table["n"].max()
    p_max = table.loc[table["n"] == n_max, "p"].max()
    target = {"n": float(n_max), "p": float(p_max)}
    truth = float(table.loc[(table["n"] == n_max) & (table["p"] == p_max), "time"].iloc[0])
    allowed = table[~((table["n"] == n_max) & (table["p"] == p_max))]
    if scenario == "quarter":
        allowed = allowed[allowed["p"] <= p_max / 4]
    allowed = allowed.reset_index(drop=True)
    record: dict[str, Any] = {"suite": suite, "name": name, "scenario": scenario, "target": target, "truth": truth,
                              "full_core_hours": core_hours(allowed), "allowed": len(allowed)}
    seed = seed_design({"n": allowed["n"].unique(), "p": allowed["p"].unique()}).merge(allowed, on=["n", "p"])
    if len(seed) < 6:
        return {**record, "skipped": f"a seed of {len(seed)} configurations"}

    def measure(configs: pd.DataFrame) -> pd.DataFrame:
        return configs.merge(allowed, on=["n", "p"])

    try:
        out = adaptive(seed, measure, target, until=UNTIL, budget=record["full_core_hours"], count=PER_STEP,
                       max_p=p_max, configurations=allowed[["n", "p"]], level=LEVEL, max_steps=15)
    except automodel.AutomodelError as exc:
        return {**record, "skipped": f"adaptive: {exc}"}
    record["adaptive"] = campaign_score(out, target, truth)
    spent = record["adaptive"]["core_hours"]
    record.update(grid_designs(allowed, target, truth, spent))
    record["random"] = random_designs(seed, allowed, spent, target, truth)
    record["seconds"] = time.perf_counter() - t0
    return record


def random_designs(seed: pd.DataFrame, allowed: pd.DataFrame, spent: float, target: dict[str, float], truth: float,
                   measure: Callable[[pd.DataFrame], pd.DataFrame] | None = None, designs: int = RANDOM_DESIGNS,
                   enough: float = math.inf) -> list[dict[str, Any]]:
    """``designs`` random designs within ``spent`` core-hours, each scored at the target: the seed, then the
    other ``allowed`` configurations in a random order (seed 34), each kept while the spend allows it.

    ``measure`` gives a drawn configuration its time (default: ``allowed`` holds the times already; an empty
    frame: it could not be run); a design stops drawing once ``enough`` of ``spent`` is spent (default: it
    tries every configuration)."""
    rng = np.random.default_rng(34)
    rest = allowed.merge(seed[["n", "p"]], on=["n", "p"], how="left", indicator=True)
    rest = rest[rest["_merge"] == "left_only"].drop(columns="_merge").reset_index(drop=True)
    out = []
    for _ in range(designs):
        runs, total = seed, core_hours(seed)
        for i in rng.permutation(len(rest)):
            row = rest.iloc[[i]] if measure is None else measure(rest.iloc[[i]])
            if len(row) and total + core_hours(row) <= spent * (1 + 1e-9):
                runs, total = pd.concat([runs, row], ignore_index=True), total + core_hours(row)
            if total >= spent * enough:
                break
        out.append(_score(_fit(runs), target, truth, runs))
    return out


def _median(values: list[float]) -> float:
    values = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.median(values)) if values else math.nan


def summary_lines(records: list[dict[str, Any]]) -> list[str]:
    """The Markdown summary: per scenario and suite, the issue's criteria and the same-budget comparison."""
    lines = []
    for scenario in SCENARIOS:
        done = [r for r in records if r["scenario"] == scenario and "adaptive" in r]
        if not done:
            continue
        skipped = [r for r in records if r["scenario"] == scenario and "skipped" in r]
        lines += [f"Scenario `{scenario}` ({len(done)} cases"
                  + (f", {len(skipped)} skipped: {'; '.join(r['name'] + ': ' + r['skipped'] for r in skipped)}" if skipped else "")
                  + "):", "",
                  "| suite | cases | adaptive reached +-15 % | grid reached | adaptive <= half the grid's core-h "
                  "| adaptive coverage (model's own band) | error: adaptive / grid / random | width: adaptive / grid / random "
                  "| core-h (share of the full grid): adaptive / grid / random |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for suite in ("smpi-ours", "smpi-others", "real", "smpi-live", "all"):
            rows = [r for r in done if suite in ("all", r["suite"])]
            if not rows:
                continue
            a_reached = [r for r in rows if r["adaptive"]["width"] <= UNTIL]
            g_reached = [r for r in rows if r["grid_to_until"] is not None]
            half = [r for r in rows if r["adaptive"]["width"] <= UNTIL and r["grid_to_until"] is not None
                    and r["adaptive"]["core_hours"] <= r["grid_to_until"]["core_hours"] / 2]
            cover = np.mean([r["adaptive"]["covered"] for r in rows])
            own = np.mean([r["adaptive"].get("model_covered", r["adaptive"]["covered"]) for r in rows])

            def med(key: str, design: str) -> float:
                if design == "random":
                    return _median([_median([x[key] for x in r["random"]]) for r in rows])
                return _median([r[design][key] for r in rows])

            def share(design: str) -> float:
                if design == "random":
                    return _median([_median([x["core_hours"] for x in r["random"]]) / r["full_core_hours"] for r in rows])
                return _median([r[design]["core_hours"] / r["full_core_hours"] for r in rows])

            lines.append(f"| {suite} | {len(rows)} | {len(a_reached)} | {len(g_reached)} | {len(half)} "
                         f"| {cover:.0%} ({own:.0%}) | {med('error', 'adaptive'):.1%} / {med('error', 'grid_same_budget'):.1%} / "
                         f"{med('error', 'random'):.1%} | {med('width', 'adaptive'):.0%} / "
                         f"{med('width', 'grid_same_budget'):.0%} / {med('width', 'random'):.0%} "
                         f"| {share('adaptive'):.0%} / {share('grid_same_budget'):.0%} / {share('random'):.0%} |")
        lines.append("")
    return lines


def case_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per case: the adaptive's steps, stop and figures, and the grid to +-15 %."""
    lines = ["| scenario | workload | adaptive: runs, core-h (share), error, width, stop | grid to +-15 %: runs, "
             "core-h (share) | grid same budget: error, width | random: error, width |", "|---|---|---|---|---|---|"]
    for r in records:
        if "adaptive" not in r:
            lines.append(f"| {r['scenario']} | {r['name']} | skipped: {r['skipped']} | | | |")
            continue
        a, g, s = r["adaptive"], r["grid_to_until"], r["grid_same_budget"]
        full = r["full_core_hours"]
        grid = f"{g['runs']}, {g['core_hours']:.3g} ({g['core_hours'] / full:.0%})" if g else "not reached"
        rand = (f"{_median([x['error'] for x in r['random']]):.1%}, "
                f"{_median([x['width'] for x in r['random']]):.0%}")
        lines.append(f"| {r['scenario']} | {r['name']} | {a['runs']}, {a['core_hours']:.3g} ({a['core_hours'] / full:.0%}), "
                     f"{a['error']:.1%}, {a['width']:.0%}, {a['stop']} | {grid} | {s['error']:.1%}, {s['width']:.0%} "
                     f"| {rand} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.adaptive", description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    ap.add_argument("--file", default=None, help="only workloads whose name contains this")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    args = ap.parse_args(argv)
    todo = [(suite, name, table, scenario) for scenario in args.scenario for suite, name, table in workloads()
            if args.file is None or args.file in name]
    t0 = time.perf_counter()
    records = Parallel(n_jobs=args.jobs)(delayed(case)(*item) for item in todo)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(records, indent=1, default=float))
    print("\n".join(summary_lines(records) + case_lines(records)))
    print(f"\n{len(records)} cases in {time.perf_counter() - t0:.0f} s; records in {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
