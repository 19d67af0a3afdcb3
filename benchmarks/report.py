"""Render the benchmark results (the dictionary stored as ``results.json``) as ``RESULTS.md``.

``render`` is pure: every number in the Markdown comes from the results dictionary. The hand-written
analysis between ``ANALYSIS_START`` and ``ANALYSIS_END`` is carried over from the previous file by
``read_analysis``. ``machine`` and ``versions`` describe where the numbers were measured.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.records import pct

ANALYSIS_START = "<!-- analysis:start -->"
ANALYSIS_END = "<!-- analysis:end -->"
NO_ANALYSIS = "_No hand-written analysis yet: write it here; regenerating keeps it._"
PACKAGES = ("automodel", "numpy", "scipy", "sympy", "pandas")
OUTPUTS = ("RESULTS.md", "results.json", "known_formulas_cases.json", "plots")
FITS_TARGET = 1e6
STAGED_TARGET = 1.0


def machine() -> dict:
    """Cores, CPU model (``/proc/cpuinfo``), memory, OS and load of this machine."""
    info = {"cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
            "system": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version()}
    for path, key, field in (("/proc/cpuinfo", "cpu", "model name"), ("/proc/meminfo", "memory", "MemTotal")):
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        value = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith(field)), None)
        if value and key == "memory":
            value = f"{int(value.split()[0]) / 2 ** 20:.0f} GiB"
        if value:
            info[key] = value
    if hasattr(os, "getloadavg"):
        info["load_average"] = round(os.getloadavg()[0], 2)
    return info


def versions(extrap: str | None) -> dict:
    """Installed versions of automodel and its numerical stack, and Extra-P's (None: not installed)."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["extrap"] = extrap
    out["git"] = revision()
    return out


def revision(root: Path = Path(__file__).resolve().parents[1]) -> str | None:
    """``git`` commit of the code that ran, and the files that differed from it (outputs excepted)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30,
                              check=True).stdout
    try:
        commit = git("rev-parse", "--short", "HEAD").strip()
        dirty = git("status", "--porcelain", "--", "automodel", "benchmarks",
                    *(f":!benchmarks/{out}" for out in OUTPUTS)).splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    if not dirty:
        return commit
    names = sorted(line[3:] for line in dirty)
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return f"{commit} with uncommitted changes to {shown}"


def read_analysis(path: Path) -> str | None:
    """The text between the analysis markers of an existing report, or None."""
    try:
        text = path.read_text()
    except OSError:
        return None
    start, end = text.find(ANALYSIS_START), text.find(ANALYSIS_END)
    if start < 0 or end < start:
        return None
    return text[start + len(ANALYSIS_START):end].strip("\n")


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (``|`` in cells escaped)."""
    def cell(v: Any) -> str:
        return _num(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _summary(results: Mapping, task: str, contender: str) -> Mapping | None:
    return next((s for s in results["summaries"] if s["task"] == task and s["contender"] == contender), None)


def _med_mean(s: Mapping | None) -> str:
    if s is None:
        return "not run"
    if "median" not in s:
        return s["status"]
    return f"{pct(s['median'])} / {pct(s['mean'])}"


def _best_p(results: Mapping, s: Mapping) -> str:
    if not s.get("best_p_slices"):
        return "-"
    text = f"{s['best_p_hits']}/{s['best_p_slices']}"
    if s["best_p_slices"] == 1:
        task = next(t for t in results["tasks"] if t["name"] == s["task"])
        (actual,) = [a for g in task["groups"] for a in g["best_p_actual"]]
        (predicted,) = [p for r in results["groups"] if r["task"] == s["task"] and r["contender"] == s["contender"]
                        for p in r["best_p_predicted"]]
        text += f" (pred {_num(predicted)}, actual {_num(actual)})"
    return text


def _header(results: Mapping) -> list[str]:
    meta = results["meta"]
    m, v = meta["machine"], meta["versions"]
    lines = ["# Benchmark results", ""]
    if meta.get("quick"):
        lines += ["**Quick run** (representative groups, short speed measurements): a smoke test, not the "
                  "published numbers.", ""]
    lines += [f"Generated by `{meta['command']}` on {meta['date']} in {meta['seconds']:.0f} s.", "",
              f"Machine: {m['cores']} cores, {m['cpu']}, {m.get('memory', '? GiB')} RAM, {m['system']}, "
              f"Python {m['python']}; load average {m.get('load_average', '?')} at the start (the cores "
              "are shared, so wall times are noisy; ratios are measured within one run).", "",
              "Versions: " + ", ".join(f"{k} {val or 'not installed'}" for k, val in v.items() if k != "git")
              + f"; code at git {v.get('git') or 'unknown'}.", ""]
    lines += [f"Note: {note}" for note in meta.get("notes", [])]
    return lines + ([""] if meta.get("notes") else [])


def _accuracy_intro(results: Mapping) -> list[str]:
    names = "; ".join(f"`{c['name']}`: {c['label']}" for c in results["contenders"])
    return ["## Accuracy: extrapolation to held-out larger runs", "",
            "Every contender is trained on the small runs of each task group and predicts the held-out "
            "large ones (canonical tasks of `../shared/datasets/README.md`). Relative error "
            "|pred - actual| / actual per held-out configuration (repetitions reduced to their median), "
            "pooled over the task's groups: median, mean, worst. A group a contender could not model "
            "counts as infinitely wrong rows (so everyone is judged on the same rows); a contender that "
            "does not apply to a task says why (n/a). For p-sweeps: best-p hits (slices at fixed other "
            "parameters whose predicted argmin p over the measured p values is the measured one) and "
            "the mean Spearman correlation of the p ordering. Seconds: modelling time summed over groups.",
            "", f"Contenders: {names}.", ""]


def _goal_section(results: Mapping) -> list[str]:
    rows = []
    for g in results["goal"]:
        task = g["task"]
        ran = [s for s in results["summaries"] if s["task"] == task and "median" in s]
        best = min(ran, key=lambda s: s["median"] if s["median"] is not None else float("inf"), default=None)
        rows.append([task, _med_mean(_summary(results, task, "automodel")),
                     _med_mean(_summary(results, task, "extrap-default")),
                     _med_mean(_summary(results, task, "extrap-refining")),
                     f"{best['contender']} ({pct(best['median'])})" if best else "-", g["text"]])
    met = sum(g["met"] is True for g in results["goal"])
    return ["### Summary and the goal", "",
            "Goal of the issue: automodel's median error at most half of Extra-P's (default modeler) on "
            "every task, and its mean error under 25 %. Cells: median / mean.", "",
            table(["task", "automodel", "Extra-P default", "Extra-P refining", "lowest median", "goal met?"],
                  rows), "", f"Goal met on {met} of {len(results['goal'])} tasks.", ""]


def _matrix(results: Mapping) -> list[str]:
    tasks = [t["name"] for t in results["tasks"]]
    rows = [[c["name"], *(_med_mean(_summary(results, t, c["name"])) for t in tasks)]
            for c in results["contenders"]]
    return ["### Every contender on every task (median / mean)", "", table(["contender", *tasks], rows), ""]


def _task_section(results: Mapping, task: Mapping) -> list[str]:
    name = task["name"]
    groups = task["groups"]
    roles = ", ".join(f"{r} = {c}" for r, c in task["params"].items())
    rows = []
    for c in results["contenders"]:
        s = _summary(results, name, c["name"])
        if s is None:
            continue
        if "median" not in s:
            rows.append([c["name"], s["status"], "-", "-", f"0/{s['n_groups']}", "-", "-", "-"])
            continue
        rho = "-" if s.get("spearman") is None else f"{s['spearman'] + 0.0:.2f}".replace("-0.00", "0.00")
        groups_ok = f"{s['n_ok']}/{s['n_groups']}" + ("" if s["status"] == "ok" else f" ({s['status']})")
        rows.append([c["name"], pct(s["median"]), pct(s["mean"]), pct(s["worst"]), groups_ok,
                     _best_p(results, s), rho, f"{s['seconds']:.2f}"])
    lines = [f"### {name}", "",
             f"`{task['source']}`, {len(groups)} group(s), roles {roles}, time in {task['unit']}; "
             f"{task['split']}; {sum(g['n_train_rows'] for g in groups)} training and "
             f"{sum(g['n_test_rows'] for g in groups)} held-out rows "
             f"({sum(len(g['test_configurations']) for g in groups)} held-out configurations).", "",
             table(["contender", "median", "mean", "worst", "groups ok", "best p hits", "Spearman", "seconds"],
                   rows), ""]
    plot = results.get("plots", {}).get(name)
    if plot:
        lines += [f"![{name}: data and predictions]({plot})", ""]
    shown = ("automodel", "extrap-default", "extrap-refining")
    formulas = [[r["group"], r["contender"], r["formula"] or r["status"]]
                for r in results["groups"] if r["task"] == name and r["contender"] in shown]
    lines += ["<details><summary>Formulas chosen per group (automodel in roles "
              f"{roles}; Extra-P in column names; every contender in results.json)</summary>", "",
              table(["group", "contender", "formula"], formulas), "", "</details>", ""]
    return lines


#: the known-formula suite's reference (benchmarks.known_formulas.oracle_outcome), not a tool
KNOWN_ORACLE = "suite-oracle"
#: issue 11's targets for automodel on the known-formula suite
KNOWN_TARGETS = {"structure_noise_free": 0.95, "structure_10": 0.80, "e16": 0.02}
#: a median error counts as higher than Extra-P's beyond this (0.1 percentage point, the printed precision)
KNOWN_ERROR_TOL = 0.001


def _known_cells(rows: Mapping[str, Mapping], field: str, contenders: Sequence[str]) -> str:
    """``automodel / Extra-P default / Extra-P refining``: one field of the suite's summaries per contender."""
    def cell(name: str) -> str:
        g = rows.get(name)
        if g is None or g["status"] != "ok" or (field == "seconds" and g[field] is None):
            return "-"
        if field == "structure":
            return f"{100 * g[field]:.0f}"
        return f"{g[field]:.2f}" if field == "seconds" else pct(g[field]).removesuffix(" %")
    return " / ".join(cell(n) for n in contenders) + (" s" if field == "seconds" else " %")


def _known_table(groups: Sequence[Mapping], level: str, keys: Sequence[str], factors: Sequence[int],
                 contenders: Sequence[str]) -> str:
    """One row per key of ``level``: cases, structure right, median errors and seconds of every contender."""
    rows: dict[tuple, dict[str, Mapping]] = {}
    for g in groups:
        if g["level"] == level:
            rows.setdefault(tuple(g[k] for k in keys), {})[g["contender"]] = g
    shown = {"n_params": lambda v: str(v), "noise": lambda v: f"{100 * v:.0f} %", "naming": lambda v: f"`{v}`"}
    headers = {"n_params": "parameters", "noise": "noise", "naming": "naming"}
    big = factors[-1]
    fields = ("structure", *(f"e{f}" for f in factors), f"e{big}_each", "seconds")
    titles = ("structure right", *(f"error {f}x" for f in factors), f"error {big}x, each alone", "seconds")
    body = [[*(shown[k](v) for k, v in zip(keys, key)), next(iter(tools.values()))["cases"],
             *(_known_cells(tools, f, contenders) for f in fields)] for key, tools in sorted(rows.items())]
    return table([*(headers[k] for k in keys), "cases", *titles], body)


def _known_targets(groups: Sequence[Mapping], big: int) -> str:
    """Issue 11's targets for automodel on the suite, measured; "worse than Extra-P" on a group means a lower
    share of structure right or a median error at ``big`` x higher by more than :data:`KNOWN_ERROR_TOL` than
    Extra-P's default modeler."""
    def find(level: str, contender: str = "automodel", **where: Any) -> Mapping | None:
        return next((g for g in groups if g["level"] == level and g["contender"] == contender
                     and all(g.get(k) == v for k, v in where.items())), None)

    def error(g: Mapping) -> float:
        return float("inf") if g[f"e{big}"] is None else g[f"e{big}"]

    parts = []
    for noise, target in ((0.0, KNOWN_TARGETS["structure_noise_free"]), (0.1, KNOWN_TARGETS["structure_10"])):
        g, oracle = find("noise", noise=noise), find("noise", KNOWN_ORACLE, noise=noise)
        if g:
            parts.append(f"structure right in {100 * g['structure']:.0f} % of the cases at {100 * noise:.0f} % noise "
                         f"(target >= {100 * target:.0f} %" + (f"; the suite's oracle, which knows the true "
                         f"structures, {100 * oracle['structure']:.0f} %" if oracle else "") + ")")
    everything = find("all")
    if everything:
        parts.append(f"median error at {big}x {pct(everything[f'e{big}'])} (target <= {pct(KNOWN_TARGETS['e16'])})")
    pairs = [(g, find("group", "extrap-default", n_params=g["n_params"], noise=g["noise"], naming=g["naming"]))
             for g in groups if g["level"] == "group" and g["contender"] == "automodel"]
    pairs = [(g, ref) for g, ref in pairs if ref is not None and ref["status"] == "ok"]
    if pairs:
        worse = sum(g["structure"] < ref["structure"] or error(g) > error(ref) + KNOWN_ERROR_TOL for g, ref in pairs)
        parts.append(f"worse than Extra-P's default modeler (a lower share of structure right, or a median error "
                     f"at {big}x higher by more than {100 * KNOWN_ERROR_TOL:g} point) on {worse} of {len(pairs)} "
                     "groups (target: none)")
    return "Issue 11's targets for automodel: " + "; ".join(parts) + "."


def _known_section(results: Mapping) -> list[str]:
    """The known-formula suite (``benchmarks.known_formulas``): summaries by noise, by parameters, per group."""
    lines = ["## Known-formula suite", ""]
    meta, groups = results.get("known_formulas_meta"), results.get("known_formulas_groups")
    if not meta or not groups:
        return lines + ["Not run.", ""]
    big, contenders = meta["factors"][-1], meta["contenders"]
    grids = "; ".join(", ".join(map(str, g)) for g in meta["grids"])
    noises = ", ".join(f"{100 * v:.0f}" for v in meta["noises"])
    lines += [("**Quick run** (a selection of functions and noise levels): a smoke test, not the published "
               "numbers. " if meta["quick"] else "")
              + f"{meta['functions']} functions of known formula in Extra-P's hypothesis space (PMNF, one to four "
              "parameters, the constant model included; `benchmarks/known_formulas.py`), each under Score-P's names "
              "(`x`, `y`, `z`, `w`) and under the roles `n`, `p` (one parameter: `n` and `p` apart; three or four: "
              "`n`, `p`, `iters`, `clusters`), on the same rows for every tool and every naming. Five values per "
              f"parameter ({grids}): the full grid up to three parameters; for four, the cross (one parameter "
              "varies, the others at their smallest value) plus four diagonal points. "
              f"{meta['repetitions']} repetitions f (1 + u) per point, u uniform in [-noise, noise]; noise {noises} %; "
              f"{meta['seeds']} seed(s) per noisy level. Extra-P does not read names: it models each data set once "
              "and its model serves every naming.", "",
              "Scores per case: **structure right** when, for every parameter, the asymptotically dominant pair "
              "(i/j, k) of x^(i/j) log2(x)^k in the chosen formula equals the true one (within "
              f"{meta['exponent_tol']:g}; the formula is parsed with sympy; a sum grows as its fastest term whatever "
              "its sign, a product adds its factors' pairs, 2^(a log2 x) is x^a, exp(-x) vanishes so that a sigmoid "
              "x / (1 + exp(-(x - c))) grows as x, anything else has no pair and counts as wrong); the **relative "
              "error** against the noise-free function at "
              f"{' and '.join(f'{f}x' for f in meta['factors'])} the largest measured value of every parameter at "
              f"once (the diagonal point), and at {big}x of each parameter alone (the others at their largest "
              "measured value); the **seconds** of each fit. Medians over the cases; a failed fit counts as wrong "
              f"and infinitely far off. Cells: {' / '.join(contenders)}."
              + (f" `{KNOWN_ORACLE}` is a reference, not a tool: it knows the true structures of the suite's functions "
                 "with as many parameters (constant and terms, coefficients free), fits each by least squares of the "
                 "relative residuals and keeps the one of least BIC; its share of structure right says how often the "
                 "rows, read by a likelihood, point to the truth among a few dozen candidates."
                 if KNOWN_ORACLE in contenders else ""), "",
              f"Generated by `{meta['command']}` on {meta['date']} in {meta['seconds']:.0f} s on `{meta['machine']}` "
              f"({meta['cores']} cores, shared: load average {meta.get('load_average', '?')} at the start; automodel "
              f"in {meta.get('workers', 1)} process(es) beside Extra-P, so the seconds are wall times under load), "
              f"code at git {meta.get('git') or 'unknown'}.", "",
              _known_targets(groups, big), ""]
    for title, level, keys in (("By noise level", "noise", ("noise",)),
                               ("By number of parameters", "params", ("n_params",)),
                               ("Per group", "group", ("n_params", "noise", "naming"))):
        lines += [f"### {title}", "", _known_table(groups, level, keys, meta["factors"], contenders), ""]
    return lines


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return [kv for k, v in value.items() for kv in _flat(v, f"{prefix}{k}.")]
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Mapping):
        return [kv for i, v in enumerate(value) for kv in _flat(v, f"{prefix}{i}.")]
    return [(prefix.rstrip("."), value)]


def _fits_lines(r: Mapping) -> list[str]:
    rows = [[int(x["k"]), f"{x['automodel fits/s']:.3g}", f"{x['automodel nonneg fits/s']:.3g}",
             f"{x['lstsq loop fits/s']:.3g}", f"{x['gram+np.linalg.solve fits/s']:.3g}",
             f"{x['x vs loop']:.3g}", f"{x['x vs gram solve']:.3g}",
             f"{x['automodel fits/s (wall)']:.3g}" if "automodel fits/s (wall)" in x else "-"] for x in r["rows"]]
    slow = [int(x["k"]) for x in r["rows"] if x["automodel fits/s"] < FITS_TARGET]
    slow_nn = [int(x["k"]) for x in r["rows"] if x["automodel nonneg fits/s"] < FITS_TARGET]
    return [f"m = {r['m']} runs, {r['n_candidates']} candidates per k, single-threaded BLAS; fits per CPU "
            "second (`time.process_time`), and automodel's per wall-clock second in the last column.", "",
            table(["k", "automodel", "automodel non-negative", "Python loop of lstsq",
                   "Gram + np.linalg.solve stack", "x vs loop", "x vs Gram solve", "automodel (wall)"], rows), "",
            f"Target >= {FITS_TARGET:.0e} fits/s/core for k <= 6: unconstrained "
            + ("met at every k" if not slow else f"missed at k = {slow}") + "; non-negative "
            + ("met at every k" if not slow_nn else f"missed at k = {slow_nn}") + ".", ""]


def _staged_lines(r: Mapping) -> list[str]:
    """A full ``automodel.fit`` in CPU seconds on one core: search only, default templates, every template."""
    rows = []
    for name, x in (("4 parameters (n, p, cpu, bw)", r), ("hommexx (n = nelem, p = nnode)", r.get("hommexx"))):
        if not isinstance(x, Mapping) or "seconds" not in x:  # hommexx absent: {"status": ...}
            continue
        every = x.get("all_seconds", x["seconds"])
        rows.append([name, str(x["n_runs"]), str(x["n_fits"]), f"{x['search_seconds']:.3f}", f"{x['seconds']:.3f}",
                     f"{every:.3f}", "met" if max(x["seconds"], every) < STAGED_TARGET else "not met"])
    return [table(["data", "runs", "candidate fits", "search only (s)", "default templates (s)",
                   "every template (s)", f"target < {STAGED_TARGET:g} s"], rows),
            "", "CPU seconds of one `automodel.fit`, best of the repeats (`benchmarks/speed.py`).", ""]


def _scaling_lines(r: Mapping) -> list[str]:
    """``automodel.fit`` from 10^2 to 10^6 runs (``benchmarks.scaling``)."""
    rows = [[f"{x['runs']:,}", f"{x['cpu_seconds']:.2f}", f"{x['wall_seconds']:.2f}",
             f"{x['peak_bytes'] / 2 ** 20:,.0f}"] for x in r["rows"]]
    lines = ["4 parameters (n, p, cpu, bw), every run at its own configuration, default space, templates "
             "off; each size in a fresh process (`python -m benchmarks.scaling`).", "",
             table(["runs", "CPU s", "wall s", "peak MiB"], rows), ""]
    if "exponent" in r:
        lines += [f"Growth exponent of the CPU time between the two largest sizes: {r['exponent']:.2f}; "
                  f"{r['bytes_per_run'] / 1024:.1f} KiB per run at the largest. Target (10^6 runs in under a "
                  f"minute and 24 GiB, exponent <= 1.1): {'met' if r['goal_met'] else 'not met'}.", ""]
    return lines


def _scale_lines(r: Mapping) -> list[str]:
    """Many kernels serial, on 2 loky workers and on a 2-worker LocalCluster (``benchmarks.scale``)."""
    rows = [[str(x["params"]), f"{x['kernels']:,}", x["mode"],
             *( [f"{x['seconds']:.2f}", f"{x.get('speedup', float('nan')):.2f}",
                 f"{x['main_bytes'] / 2 ** 20:,.0f}", f"{x['worker_bytes'] / 2 ** 20:,.0f}" if x["mode"] != "serial"
                 else "-", "yes" if x.get("same_as_serial", x["mode"] == "serial") else "NO"]
               if x["status"] == "ok" else [x["status"], "", "", "", ""])] for x in r["rows"]]
    lines = ["Each way in a fresh process (`python -m benchmarks.scale`): wall seconds of `fit_many` (loky's "
             "worker start included, the cluster's start and stop not), the speed-up against serial, the peak "
             "memory of the main process and of the largest worker.", "",
             table(["parameters", "kernels", "how", "wall s", "speed-up", "main MiB", "largest worker MiB",
                    "same models as serial"], rows), "",
             f"Target: >= 1.7x with 2 workers where the serial work takes over 5 s, no loss below: "
             f"{'met' if r['goal_met'] else 'not met'}.", ""]
    x = r.get("extrap")
    if x and x.get("extrap_status") == "ok":
        lines += [f"Extra-P's CLI on the same {x['kernels']:,}-kernel file: {x['extrap_seconds']:.1f} s against "
                  f"automodel's {x['automodel_seconds']:.1f} s ({x['ratio']:.1f}x); median held-out error "
                  f"{100 * x['extrap_error_median']:.1f} % against {100 * x['automodel_error_median']:.1f} %.", ""]
    elif x:
        lines += [f"Extra-P on the {x['kernels']:,}-kernel file: {x.get('extrap_status')}.", ""]
    return lines


def _generic_lines(r: Any) -> list[str]:
    return [table(["measurement", "value"], _flat(r)), ""]


#: The parts of ``benchmarks.speed.collect``: key, heading, renderer of a successful result.
SPEED_PARTS = (
    ("fits_per_second", "Candidate fits per second, one core", _fits_lines),
    ("staged_search", "Full staged search", _staged_lines),
    ("scaling", "`automodel.fit` from 10^2 to 10^6 runs", _scaling_lines),
    ("kernels", "Many kernels: automodel against Extra-P's CLI", _generic_lines),
    ("kernels_two", "Many two-parameter kernels (p and n): automodel against Extra-P's CLI", _generic_lines),
    ("online", "Online observe and re-ranking", _generic_lines),
    ("scale", "Scale-out: many kernels on 2 workers", _scale_lines),
    ("startup", "Start-up time: `automodel --help` against `extrap --version`", _generic_lines),
    ("report_page", "The profile report of many kernels in headless chromium", _generic_lines),
)


def _speed_section(speed: Mapping | None) -> list[str]:
    lines = ["## Speed", ""]
    if speed is None:
        return lines + ["Not run (`--no-speed`).", ""]
    for key, title, render_ok in SPEED_PARTS:
        entry = speed.get(key, {"status": "not run"})
        lines += [f"### {title}", ""]
        lines += render_ok(entry["result"]) if entry.get("status") == "ok" else [entry.get("status"), ""]
    return lines


def _bands_section(rows: Sequence[Mapping] | None) -> list[str]:
    """Coverage and width of automodel's prediction bands per task (``benchmarks.bands``)."""
    lines = ["## Prediction bands", "",
             "Share of held-out runs inside the chosen model's 50 % and 90 % bands (targets 40-60 % and "
             "85-95 %), the median relative width `(upper - lower) / predicted` of each band, and the "
             "median relative error of the prediction it surrounds; last, the median error of model averaging (the "
             "geometric mean of the chosen model and the candidates equivalent to it) as a point prediction "
             "(`python -m benchmarks.bands`).", ""]
    if not rows:
        return lines + ["Not run.", ""]

    def pct(v: Any) -> str:
        return "-" if v is None else f"{100 * v:.0f} %"

    def verdict(v: Any, low: float, high: float) -> str:
        return "" if v is None else (" (ok)" if low <= v <= high else " (low)" if v < low else " (high)")

    speed = [r for r in rows if r["group"] == "speed"]
    rows = [r for r in rows if r["group"] != "speed"]
    body = [[r["group"], r["task"], r.get("groups", 0), r.get("runs", 0),
             pct(r.get("coverage_50")) + verdict(r.get("coverage_50"), 0.4, 0.6),
             pct(r.get("coverage_90")) + verdict(r.get("coverage_90"), 0.85, 0.95),
             pct(r.get("width_50")), pct(r.get("width_90")), pct(r.get("median_error")),
             pct(r.get("median_error_averaged"))] for r in rows]
    return lines + [table(["group", "task", "groups", "held-out runs", "in 50 % band", "in 90 % band",
                           "width 50 %", "width 90 %", "median error", "averaged: median error"], body), ""] + [
        f"Speed: {r['task']}: {1000 * r['cpu_seconds']:.1f} ms CPU (median of 5)." for r in speed] + [""]


def _selection_section(entry: Mapping | None) -> list[str]:
    """The model-selection section (``benchmarks.selection``) of ``{"status", "result"}``; nothing when not run."""
    from benchmarks import selection

    if entry is None:
        return []
    if entry.get("status") != "ok":
        return [f"## {selection.TITLE}", "", entry.get("status", "Not run."), ""]
    return selection.section_lines(entry["result"])


def render(results: Mapping, analysis: str | None = None) -> str:
    """The whole ``RESULTS.md``: header, accuracy summary, per-task tables and plots, speed, analysis."""
    lines = _header(results) + _accuracy_intro(results) + _goal_section(results) + _matrix(results)
    for task in results["tasks"]:
        lines += _task_section(results, task)
    if results.get("skipped"):
        lines += ["### Groups left out", "",
                  table(["task", "group", "reason"], [[s["name"], s["group"], s["reason"]]
                                                      for s in results["skipped"]]), ""]
    lines += _known_section(results)
    lines += _bands_section(results.get("bands"))
    lines += _selection_section(results.get("selection"))
    lines += _speed_section(results.get("speed"))
    lines += ["## Analysis", "", ANALYSIS_START, analysis if analysis is not None else NO_ANALYSIS,
              ANALYSIS_END, ""]
    return "\n".join(lines)
