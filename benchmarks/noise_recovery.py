"""Noise recovery on Extra-P's own test functions (issue 36): automodel against Extra-P default and refining.

Issue 36 ("Choose what extrapolates") asks, under noise, for at least Extra-P refining's recovery of the
structures of Extra-P's own test functions. The functions are embedded below (:data:`FAMILIES`,
:data:`ADAPTIVE_TERMS`, :data:`REFINING_TERMS`) from Extra-P's repository ``extra-p/extrap`` at
:data:`EXTRAP_COMMIT` (version 4.2.5), not read from it at run time:

- ``adaptive-test``: ``tests/test_modeler_adaptive.py``, ``TestAdaptiveModeling.test_modeling``:
  ``200 + 10 * x^(a/b) * log2(x)^c`` for the arguments ``(a, b, c)`` of ``CompoundTerm.create`` (three
  arguments: exponent ``a/b``, log power ``c``), measured at x = 2, 4, 8, 16, 32;
- ``refining-test``: ``tests/test_refining_modeler.py``, ``TestRefiningModeler.test_compare``: 43
  functions ``c0 + c1 * x^e * log2(x)^k`` (the first one the constant ``c0 + c1``), measured at
  x = 4, 8, ..., 128, coefficients as the test generates its values.

Every function is measured at its family's points, :data:`benchmarks.known_formulas.REPETITIONS` runs
each, ``f * (1 + u)`` with ``u`` uniform in ``[-noise, noise]``, at the levels :data:`NOISES` and the
family's seeds (:func:`benchmarks.known_formulas.make_case`: the same rows and prediction points as the
known-formula suite, on this family's grid). Each case is fitted by automodel (default search space,
``x`` a generic parameter) in worker processes and by Extra-P 4.2.5's default and refining modelers in a
thread beside them (:func:`benchmarks.known_formulas.run`).

Scores (:func:`benchmarks.known_formulas.score_case`): structure recovered (the lead pair exponent /
log power in ``x`` equals the truth, :func:`benchmarks.known_formulas.same_structure`), the relative
error at 4x and 16x the largest measured x, the fit seconds. The issue's criterion is the
``adaptive-test`` family at 5, 10 and 20 % noise: 4 functions x 10 seeds x 3 levels = 120 cases.

Run: ``python -m benchmarks.noise_recovery [--quick] [--no-extrap] [--workers N] [--seeds N]
[--out FILE]``; prints the Markdown tables (per family and noise level, the criterion, the totals) and
the cases automodel gets wrong where Extra-P refining gets them right.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import known_formulas as kf
from benchmarks import report
from benchmarks.markdown import table
from benchmarks.contenders import OK
from benchmarks.records import jsonable, pct
from benchmarks.scoring import summarize

SUITE = "noise-recovery"
#: Extra-P's repository and the commit the functions below are copied from (version 4.2.5)
EXTRAP_REPOSITORY = "extra-p/extrap"
EXTRAP_COMMIT = "291ac8153ad38c582f36aa8653cd587634393310"
#: the noise levels (uniform multiplicative, as the known-formula suite)
NOISES = (0.01, 0.05, 0.10, 0.20)
#: the issue's criterion: this family at these noise levels
CRITERION_FAMILY = "adaptive-test"
CRITERION_NOISES = (0.05, 0.10, 0.20)
CONTENDERS = ("automodel", "extrap-default", "extrap-refining")
SHORT = {"automodel": "automodel", "extrap-default": "Extra-P default", "extrap-refining": "refining"}


@dataclass(frozen=True)
class Family:
    """A set of Extra-P's test functions: where they come from and how they are measured.

    Attributes
    ----------
    key : str
        ``adaptive-test`` or ``refining-test``.
    path, test : str
        The test file in :data:`EXTRAP_REPOSITORY` at :data:`EXTRAP_COMMIT` and the test in it.
    grid : tuple of int
        The measured values of ``x``, as in the test.
    seeds : int
        Data sets per function and noise level.
    """

    key: str
    path: str
    test: str
    grid: tuple[int, ...]
    seeds: int


FAMILIES: tuple[Family, ...] = (
    Family("adaptive-test", "tests/test_modeler_adaptive.py", "TestAdaptiveModeling.test_modeling",
           (2, 4, 8, 16, 32), 10),
    Family("refining-test", "tests/test_refining_modeler.py", "TestRefiningModeler.test_compare",
           (4, 8, 16, 32, 64, 128), 10),
)

#: ``test_modeling``: the arguments ``(a, b, c)`` of ``CompoundTerm.create``, i.e. ``x^(a/b) log2(x)^c``;
#: constant 200, coefficient 10
ADAPTIVE_TERMS: tuple[tuple[int, int, int], ...] = ((3, 4, 0), (1, 1, 1), (3, 2, 2), (2, 1, 0))

#: ``test_compare``: ``(exponent, log power, c0, c1)`` of ``c0 + c1 * x^exponent * log2(x)^k`` (exponent
#: None: the constant ``c0 + c1``), in the test's order
REFINING_TERMS: tuple[tuple[str | None, int, float, float], ...] = (
    (None, 0, 12.279235119728051, 112.3997486813747),
    ("0", 1, 392.837968713381, 683.8645895889935),
    ("0", 2, 138.69179452369758, 112.44445041582443),
    ("1/4", 0, 231.8031252715932, 757.5927278025262),
    ("1/3", 0, 147.40207355905747, 740.6554582848072),
    ("1/4", 1, 662.1669933486077, 136.57938776640577),
    ("1/3", 1, 535.6622118860412, 447.75148218635366),
    ("1/4", 2, 412.5706706079675, 996.343695251814),
    ("1/3", 2, 93.11229615417925, 20.367438006670188),
    ("1/2", 0, 939.8019758412179, 402.94640866510485),
    ("1/2", 1, 198.49843369241415, 330.31007853365884),
    ("1/2", 2, 364.8953574839538, 955.112891429775),
    ("2/3", 0, 210.3330694987003, 216.92681699057178),
    ("3/4", 0, 584.9013580111865, 547.3819137326248),
    ("2/3", 1, 953.7431095545323, 838.6830078923111),
    ("3/4", 1, 355.50475595529707, 203.8586065472728),
    ("4/5", 0, 836.4136945625079, 988.9778707606993),
    ("2/3", 2, 30.370684174349353, 735.0460670350777),
    ("3/4", 2, 868.3557741916711, 651.1510359543278),
    ("1", 0, 218.35982887307853, 796.5944762009765),
    ("1", 1, 729.8185276288646, 193.81268721358396),
    ("1", 2, 640.8857481060144, 219.18401331861853),
    ("5/4", 0, 41.41439439883205, 336.0107050284518),
    ("5/4", 1, 334.34344019665406, 396.1666489172391),
    ("4/3", 0, 646.7639733950962, 836.1733802023176),
    ("4/3", 1, 961.3235324936308, 976.4308028867101),
    ("3/2", 0, 993.5060588040174, 789.8477910359313),
    ("3/2", 1, 306.3138276450713, 176.2989470011036),
    ("3/2", 2, 623.7521800036756, 545.819243769916),
    ("5/3", 0, 674.515344060474, 93.52470814254),
    ("7/4", 0, 192.79185213528302, 921.0172026961501),
    ("2", 0, 601.3899361738712, 695.3677746959734),
    ("2", 1, 95.64610607936808, 399.1728717576563),
    ("2", 2, 910.0933475245264, 649.3303470713025),
    ("9/4", 0, 991.6538373014305, 196.89404893784854),
    ("7/3", 0, 454.80058623925424, 800.545149328823),
    ("5/2", 0, 444.6771885244102, 788.914623707213),
    ("5/2", 1, 561.6799261002398, 118.03818227888634),
    ("5/2", 2, 98.86684880610103, 982.9958000733947),
    ("8/3", 0, 119.32012560773262, 194.108049319692),
    ("11/4", 0, 335.21389505653997, 713.4600389668701),
    ("3", 0, 854.0891091206599, 475.68703018220896),
    ("3", 1, 498.14812816021515, 788.4374477528575),
)

#: ``--quick``: these functions, at :data:`QUICK_NOISES`, one seed
QUICK_FUNCTIONS = ("a-x1l1", "a-x2", "r-x3/4l1", "r-x5/4")
QUICK_NOISES = (0.10,)


def term_text(exponent: str | None, log_power: int) -> str:
    """``x^(e) * log2(x)^k`` as a formula (``"1"`` for the constant).

    Examples
    --------
    >>> term_text("3/4", 2)
    'x^(3/4)*log2(x)^2'
    >>> term_text("1", 1)
    'x*log2(x)'
    """
    parts = [] if exponent in (None, "0") else ["x" if exponent == "1" else f"x^({exponent})"]
    parts += [] if not log_power else ["log2(x)" if log_power == 1 else f"log2(x)^{log_power}"]
    return "*".join(parts) or "1"


def term_key(prefix: str, exponent: str | None, log_power: int) -> str:
    """A function's key, as the known-formula suite names them: ``a-x3/4``, ``r-x1/2l1``, ``r-const``."""
    if exponent is None:
        return f"{prefix}-const"
    power = "" if exponent == "0" else f"x{exponent}"
    return f"{prefix}-{power}{f'l{log_power}' if log_power else ''}"


def adaptive_functions() -> tuple[kf.Known, ...]:
    """The functions of ``test_modeling`` (:data:`ADAPTIVE_TERMS`)."""
    out = []
    for a, b, c in ADAPTIVE_TERMS:
        exponent = f"{a}/{b}" if b != 1 else str(a)
        out.append(kf.Known(term_key("a", exponent, c), 1, f"200 + 10*{term_text(exponent, c)}"))
    return tuple(out)


def refining_functions() -> tuple[kf.Known, ...]:
    """The functions of ``test_compare`` (:data:`REFINING_TERMS`)."""
    return tuple(kf.Known(term_key("r", e, k), 1,
                          f"{c0!r} + {c1!r}" if e is None else f"{c0!r} + {c1!r}*{term_text(e, k)}")
                 for e, k, c0, c1 in REFINING_TERMS)


#: the functions of each family, by family key
FUNCTIONS: dict[str, tuple[kf.Known, ...]] = {"adaptive-test": adaptive_functions(),
                                             "refining-test": refining_functions()}


def family_of(key: str) -> Family:
    """The family that holds the function ``key``."""
    return next(f for f in FAMILIES if any(fn.key == key for fn in FUNCTIONS[f.key]))


# --- cases ---------------------------------------------------------------------------------


def build_cases(quick: bool = False, seeds: Mapping[str, int] | None = None,
                noises: Sequence[float] | None = None) -> list[kf.Case]:
    """Every function of every family at every noise level and seed (``quick``: :data:`QUICK_FUNCTIONS`
    at :data:`QUICK_NOISES`, one seed); ``seeds`` overrides a family's number of seeds."""
    noises = noises if noises is not None else (QUICK_NOISES if quick else NOISES)
    cases = []
    for family in FAMILIES:
        count = 1 if quick else (seeds or {}).get(family.key, family.seeds)
        for function in FUNCTIONS[family.key]:
            if quick and function.key not in QUICK_FUNCTIONS:
                continue
            cases += [kf.make_case(function, ("x",), noise, seed, (family.grid,), SUITE)
                      for noise in noises for seed in range(count)]
    return cases


def score(cases: Sequence[kf.Case], outcomes: Mapping[str, Mapping]) -> list[dict]:
    """One record per case and contender (:func:`benchmarks.known_formulas.score_case`) with its family."""
    return [{"family": family_of(case.function.key).key, **kf.score_case(case, name, outcomes[name][case.task.key])}
            for name in outcomes for case in cases]


# --- summaries -----------------------------------------------------------------------------


def _group(records: Iterable[Mapping], keys: Sequence[str]) -> dict[tuple, list[Mapping]]:
    groups: dict[tuple, list[Mapping]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    return groups


def summary(rows: Sequence[Mapping]) -> dict:
    """Cases, structures recovered, failed fits, median errors at 4x and 16x, median and total seconds."""
    return {"cases": len(rows), "recovered": sum(bool(r["structure"]) for r in rows),
            "failed": sum(r["status"] != OK for r in rows),
            **{f"e{f}": summarize(float("nan") if r[f"e{f}"] is None else r[f"e{f}"] for r in rows).median
               for f in kf.FACTORS},
            "seconds": summarize(r["seconds"] for r in rows).median,
            "total_seconds": float(sum(r["seconds"] for r in rows if r["seconds"] == r["seconds"]))}


def aggregate(records: Sequence[Mapping]) -> list[dict]:
    """Per contender: per family and noise level, per family, the criterion (:data:`CRITERION_FAMILY` at
    :data:`CRITERION_NOISES`), each function of the criterion, and everything (``family`` / ``noise``
    ``"*"`` where summed over; ``function`` only at level ``"criterion by function"``)."""
    criterion = [r for r in records if r["family"] == CRITERION_FAMILY and r["noise"] in CRITERION_NOISES]
    levels = (("by noise", records, ("family", "noise")), ("family", records, ("family",)),
              ("criterion", criterion, ()), ("criterion by function", criterion, ("function",)),
              ("all", records, ()))
    out = []
    for level, rows, keys in levels:
        for key, group in _group(rows, (*keys, "contender")).items():
            where = dict(zip(keys, key))
            family = where.get("family", CRITERION_FAMILY if level.startswith("criterion") else "*")
            out.append({"level": level, "family": family, "noise": where.get("noise", "*"),
                        **({"function": where["function"]} if "function" in where else {}),
                        "contender": key[-1], **summary(group)})
    return out


def misses(records: Sequence[Mapping], against: str = "extrap-refining") -> list[dict]:
    """The cases automodel gets wrong and ``against`` gets right: function, noise, seed, what each chose."""
    other = {(r["function"], r["noise"], r["seed"]): r for r in records if r["contender"] == against}
    out = []
    for r in records:
        twin = other.get((r["function"], r["noise"], r["seed"]))
        if r["contender"] == "automodel" and not r["structure"] and twin is not None and twin["structure"]:
            out.append({"family": r["family"], "function": r["function"], "noise": r["noise"], "seed": r["seed"],
                        "truth": kf.pair_text("x", kf.true_pairs(next(
                            f for f in FUNCTIONS[r["family"]] if f.key == r["function"]))[0]),
                        "automodel": r["lead"], "automodel_formula": r["formula"], "e4": r["e4"],
                        against: twin["lead"], f"{against}_formula": twin["formula"], f"{against}_e4": twin["e4"]})
    return out


def collect(quick: bool = False, extrap: bool = True, install: bool = True, workers: int = kf.WORKERS,
            seeds: Mapping[str, int] | None = None, command: str = "",
            log: Callable[[str], None] = print) -> dict:
    """Run the benchmark: ``meta`` (date, machine, git, command, seconds, provenance), ``groups``
    (:func:`aggregate`), ``records`` (one per case and contender) and ``misses`` (:func:`misses`)."""
    start, load = time.perf_counter(), round(os.getloadavg()[0], 2)
    cases = build_cases(quick, seeds)
    log(f"noise recovery: {len(cases)} cases of {len({c.function.key for c in cases})} functions")
    outcomes = kf.run(cases, extrap, install, workers, log, oracle=False)
    records = score(cases, outcomes)
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": socket.gethostname(),
            "cores": os.cpu_count(), "load_average": load, "git": report.revision(), "quick": quick,
            "command": command, "seconds": time.perf_counter() - start, "workers": workers,
            "extrap_repository": EXTRAP_REPOSITORY, "extrap_commit": EXTRAP_COMMIT,
            "families": {f.key: {"path": f.path, "test": f.test, "grid": list(f.grid),
                                 "seeds": max((c.seed for c in cases if family_of(c.function.key) == f),
                                              default=-1) + 1} for f in FAMILIES},
            "noises": sorted({c.noise for c in cases}), "repetitions": kf.REPETITIONS,
            "factors": list(kf.FACTORS), "contenders": list(outcomes)}
    return {"meta": meta, "groups": aggregate(records), "records": records,
            "misses": misses(records) if "extrap-refining" in outcomes else []}


# --- output --------------------------------------------------------------------------------


def _cells(groups: Sequence[Mapping | None], text: Callable[[Mapping], str]) -> str:
    return " / ".join(text(g) if g else "-" for g in groups)


def groups_table(groups: Sequence[Mapping]) -> str:
    """One row per family and noise level (then per family, the criterion, everything): cases, structures
    recovered, median errors at 4x and 16x and median fit seconds, each for automodel / Extra-P default /
    Extra-P refining (those that ran), as Markdown."""
    groups = [g for g in groups if "function" not in g]
    present = [c for c in CONTENDERS if any(g["contender"] == c for g in groups)]
    by = {(g["level"], g["family"], g["noise"], g["contender"]): g for g in groups}
    places = sorted({(g["level"], g["family"], g["noise"]) for g in groups},
                    key=lambda p: (("by noise", "family", "criterion", "all").index(p[0]), p[1],
                                   -1 if p[2] == "*" else p[2]))
    rows = []
    for level, family, noise in places:
        cells = [by.get((level, family, noise, c)) for c in present]
        label = {"criterion": f"**criterion**: {family}",
                 "all": "all"}.get(level, family)
        levels = (f"{100 * CRITERION_NOISES[0]:.0f}-{100 * CRITERION_NOISES[-1]:.0f} %" if level == "criterion"
                  else "all" if noise == "*" else f"{100 * noise:.0f} %")
        rows.append([label, levels, max(g["cases"] for g in cells if g),
                     _cells(cells, lambda g: str(g["recovered"])),
                     *(_cells(cells, lambda g, f=f: pct(g[f"e{f}"])) for f in kf.FACTORS),
                     _cells(cells, lambda g: f"{g['seconds']:.3f}")])
    who = " / ".join(SHORT[c] for c in present)
    return table(["family", "noise", "cases", f"recovered ({who})",
                  *(f"median error at {f}x" for f in kf.FACTORS), "median s per fit"], rows)


def criterion_table(groups: Sequence[Mapping]) -> str:
    """The criterion per function: its formula, cases and structures recovered per contender, as Markdown."""
    rows = [g for g in groups if g["level"] == "criterion by function"]
    present = [c for c in CONTENDERS if any(g["contender"] == c for g in rows)]
    by = {(g["function"], g["contender"]): g for g in rows}
    formulas = {f.key: f.formula for f in FUNCTIONS[CRITERION_FAMILY]}
    lines = [[key, f"`{formulas[key]}`", max(g["cases"] for g in cells if g),
              _cells(cells, lambda g: str(g["recovered"])), _cells(cells, lambda g: pct(g["e4"]))]
             for key in formulas if any(cells := [by.get((key, c)) for c in present])]
    who = " / ".join(SHORT[c] for c in present)
    return table(["function", "formula", "cases", f"recovered ({who})", "median error at 4x"], lines)


def misses_table(found: Sequence[Mapping]) -> str:
    """The cases of :func:`misses`, grouped per function and noise level: seeds and what automodel chose."""
    rows = []
    for (family, function, noise, truth), group in _group(found, ("family", "function", "noise", "truth")).items():
        chosen = sorted({r["automodel"] for r in group})
        rows.append([family, function, truth, f"{100 * noise:.0f} %", len(group),
                     ", ".join(str(r["seed"]) for r in group), "; ".join(chosen),
                     group[0]["automodel_formula"]])
    return table(["family", "function", "truth", "noise", "cases", "seeds", "automodel's lead", "e.g. automodel"],
                 rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.noise_recovery", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"functions {', '.join(QUICK_FUNCTIONS)}; noise {QUICK_NOISES}; one seed")
    ap.add_argument("--no-extrap", action="store_true", help="automodel only")
    ap.add_argument("--workers", type=int, default=kf.WORKERS, help=f"automodel processes (default {kf.WORKERS})")
    ap.add_argument("--refining-seeds", type=int, default=None,
                    help=f"seeds of the refining-test functions (default {FAMILIES[1].seeds})")
    ap.add_argument("--out", type=Path, default=None, help="write the records (json) to this file")
    args = ap.parse_args(argv)
    command = " ".join(["python -m benchmarks.noise_recovery", *(argv if argv is not None else sys.argv[1:])])
    seeds = {"refining-test": args.refining_seeds} if args.refining_seeds is not None else None
    results = collect(args.quick, not args.no_extrap, install=not args.quick, workers=args.workers, seeds=seeds,
                      command=command)
    print(groups_table(results["groups"]))
    print()
    print(criterion_table(results["groups"]))
    if results["misses"]:
        print(f"\nautomodel wrong, Extra-P refining right: {len(results['misses'])} cases")
        print(misses_table(results["misses"]))
    print(f"\n{results['meta']['seconds']:.0f} s")
    if args.out is not None:
        args.out.write_text(json.dumps(jsonable(results), indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
