"""Speed of candidate fitting and of the full staged search, measured in one run.

Prints candidate fits per second per core (CPU time, ``time.process_time``, so the figures are
comparable on a busy machine; the wall-clock rate of the batched solver beside it) for k = 1..6
terms on m = 64 runs, for
  * automodel's batched solver (:func:`automodel.solve.lstsq.solve`, unconstrained and non-negative),
  * a Python loop of ``np.linalg.lstsq`` (the naive way),
  * batched normal equations on a shared Gram matrix with ``np.linalg.solve`` on a stack (the
    practical limit of the normal-equations approach in plain numpy),
and the CPU time of a full ``automodel.fit`` (search only, default templates, every template)
on a 4-parameter dataset (n, p, cpu, bw) and on hommexx (when the shared datasets are present).

Run: ``python -m benchmarks.speed [--quick]``. Single-threaded BLAS is forced so "per core" holds
(when this module is imported before numpy; ``python -m benchmarks`` does the same).
``collect`` gathers every speed measurement of ``python -m benchmarks`` as plain dictionaries,
including those of ``benchmarks.kernels`` and ``benchmarks.startup`` when they are available.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402
from itertools import combinations, islice  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from automodel.solve import design, lstsq  # noqa: E402


def _timed(fn, min_seconds: float = 0.3) -> float:
    """CPU seconds per call of ``fn`` (``time.process_time``, so the figure does not swing with the
    machine's load; repeated until ``min_seconds`` of CPU have passed; best of the repeats)."""
    return _timed_both(fn, min_seconds)[0]


def _timed_both(fn, min_seconds: float = 0.3) -> tuple[float, float]:
    """CPU and wall seconds per call of ``fn``, best of the repeats of :func:`_timed`."""
    best, wall, spent = np.inf, np.inf, 0.0
    while spent < min_seconds:
        t0, w0 = time.process_time(), time.perf_counter()
        fn()
        dt, dw = time.process_time() - t0, time.perf_counter() - w0
        best, wall, spent = min(best, dt), min(wall, dw), spent + dt
    return best, wall


def fits_per_second(m: int = 64, n_terms_pool: int = 40, n_candidates: int = 100_000,
                    loop_candidates: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.1, 2.0, size=(m, n_terms_pool))
    y = A[:, :3] @ np.array([1.0, 2.0, 3.0]) * (1 + 0.01 * rng.standard_normal(m))
    des = design.design(A, y)
    rows = []
    for k in range(1, 7):
        combos = np.array(list(islice(combinations(range(n_terms_pool), k), n_candidates)), dtype=np.intp)
        combos = np.resize(combos, (n_candidates, k))  # repeat small pools up to n_candidates
        t_batched, w_batched = _timed_both(lambda: lstsq.solve(des, combos, nonnegative=False))
        t_nonneg = _timed(lambda: lstsq.solve(des, combos, nonnegative=True))
        sub = combos[:loop_candidates]

        def loop():
            for c in sub:
                np.linalg.lstsq(A[:, c], y, rcond=None)

        t_loop = _timed(loop) * (n_candidates / loop_candidates)

        def gram_solve():
            G = des.gram[0][combos[:, :, None], combos[:, None, :]]
            b = des.moment[0][combos]
            np.linalg.solve(G, b[..., None])

        t_gram = _timed(gram_solve)
        rows.append({"k": k, "automodel fits/s": n_candidates / t_batched,
                     "automodel fits/s (wall)": n_candidates / w_batched,
                     "automodel nonneg fits/s": n_candidates / t_nonneg,
                     "lstsq loop fits/s": n_candidates / t_loop,
                     "gram+np.linalg.solve fits/s": n_candidates / t_gram,
                     "x vs loop": t_loop / t_batched, "x vs gram solve": t_gram / t_batched})
    return pd.DataFrame(rows)


def _four_parameter_runs() -> pd.DataFrame:
    """8 n x 4 p x 2 repetitions of ``c n^3/(p cpu) + d n^2 log2 p / bw + e`` with random cpu, bw."""
    rng = np.random.default_rng(1)
    rows = []
    for p in (1, 2, 4, 8):
        for n in np.linspace(1000, 8000, 8):
            for _ in range(2):
                cpu, bw = rng.uniform(0.4, 1.0, 2)
                t = 2e-10 * n ** 3 / (p * cpu) + 3e-8 * n ** 2 * np.log2(p) / bw + 0.5
                rows.append({"n": n, "p": p, "cpu": cpu, "bw": bw, "time": t * (1 + 0.02 * rng.standard_normal())})
    return pd.DataFrame(rows)


#: the fits timed per dataset: key -> ``templates`` argument of ``automodel.fit``
FIT_VARIANTS = {"search_seconds": "none", "seconds": None, "all_seconds": "all"}
#: the goal for a full fit with templates, CPU seconds on one core (issue 10)
FIT_GOAL = 1.0


def fit_seconds(data: Any, repeats: int = 3, **roles: str) -> dict:
    """CPU seconds on one core (``time.process_time``, single-threaded BLAS) of ``automodel.fit(data)``.

    Timed with the search alone (``templates="none"``), with the default templates (the fast ones; the
    slow ones are listed, not run) and with every template (``templates="all"``), best of
    ``repeats`` each, alternating so all see the same load; the wall time of the default fit too.
    """
    import automodel

    automodel.fit(data, progress=False, templates="all", **roles)  # warm caches (imports, sympy)
    best = dict.fromkeys(FIT_VARIANTS, np.inf)
    wall = np.inf
    for _ in range(repeats):
        for key, templates in FIT_VARIANTS.items():
            t0, w0 = time.process_time(), time.perf_counter()
            result = automodel.fit(data, progress=False, templates=templates, **roles)
            best[key] = min(best[key], time.process_time() - t0)
            if templates is None:
                wall = min(wall, time.perf_counter() - w0)
    n_fits = sum(r.n_fits for r in result.reports)
    return {**best, "wall_seconds": wall, "n_fits": n_fits, "n_runs": len(result.dataset.runs),
            "goal_met": bool(max(best["seconds"], best["all_seconds"]) < FIT_GOAL)}


def staged_search_seconds(repeats: int = 3) -> dict:
    """:func:`fit_seconds` on 4 parameters (n, p, cpu, bw; 8 n x 4 p x 2 repetitions), and on hommexx
    (``hommexx_nh_summit.csv``, n = nelem, p = nnode) when the shared datasets are present."""
    from benchmarks.tasks import default_datasets_dir

    out = fit_seconds(_four_parameter_runs(), repeats)
    hommexx = default_datasets_dir() / "hommexx_nh_summit.csv"
    out["hommexx"] = (fit_seconds(str(hommexx), repeats, n="nelem", p="nnode") if hommexx.exists()
                      else {"status": f"not available: {hommexx} is absent"})
    return out


def _fit_line(name: str, r: dict) -> str:
    if "status" in r:
        return f"{name}: skipped ({r['status']})"
    return (f"{name} ({r['n_runs']} runs, {r['n_fits']} candidate fits): search only {r['search_seconds']:.3f} s, "
            f"with the default templates {r['seconds']:.3f} s ({r['wall_seconds']:.3f} s wall), with every "
            f"template {r['all_seconds']:.3f} s CPU; goal < {FIT_GOAL:g} s {'met' if r['goal_met'] else 'NOT met'}")


def guarded(fn, *args: Any, **kwargs: Any) -> dict:
    """``{"status": "ok", "result": fn(...)}``, or ``{"status": "not available: <reason>"}`` if it raises."""
    try:
        return {"status": "ok", "result": fn(*args, **kwargs)}
    except Exception as error:  # a failing measurement is reported, not fatal
        first = (str(error).strip().splitlines() or [""])[0]
        return {"status": f"not available: {getattr(fn, '__name__', fn)} failed: "
                          f"{type(error).__name__}: {first}"}


def optional(module: str, function: str, *args: Any, **kwargs: Any) -> dict:
    """``guarded(module.function, ...)``, imported lazily; "not available" when it cannot be imported."""
    try:
        fn = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as error:
        return {"status": f"not available: {type(error).__name__}: {error}"}
    return guarded(fn, *args, **kwargs)


def _fits(quick: bool) -> dict:
    n_candidates = 20_000 if quick else 100_000
    table = fits_per_second(n_candidates=n_candidates, loop_candidates=500 if quick else 2000)
    return {"m": 64, "n_candidates": n_candidates, "rows": table.to_dict("records")}


def _staged(quick: bool) -> dict:
    return staged_search_seconds(1 if quick else 3)


def collect(quick: bool = False, log=print) -> dict:
    """Every speed measurement: fits per second, staged search, many kernels, start-up times, the profile
    report in a browser.

    ``benchmarks.kernels`` and ``benchmarks.startup`` are imported only here, so this works with or
    without them.  Each entry is ``{"status": "ok", "result": ...}`` or ``{"status": "not available:
    <reason>"}``.
    """
    jobs = {"fits_per_second": lambda: guarded(_fits, quick),
            "staged_search": lambda: guarded(_staged, quick),
            "scaling": lambda: optional("benchmarks.scaling", "collect", quick),
            "kernels": lambda: optional("benchmarks.kernels", "race", n_kernels=1000, quick=quick),
            "kernels_two": lambda: optional("benchmarks.kernels", "race_two_parameters", n_kernels=1000, quick=quick),
            "online": lambda: optional("benchmarks.online", "collect", quick),
            "scale": lambda: optional("benchmarks.scale", "collect", quick),
            "startup": lambda: optional("benchmarks.startup", "startup_times"),
            "report_page": lambda: optional("benchmarks.report_page", "collect", quick)}
    out = {}
    for name, job in jobs.items():
        start = time.perf_counter()
        out[name] = job()
        log(f"speed {name}: {out[name]['status']} ({time.perf_counter() - start:.1f} s)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer candidates (CI smoke run)")
    args = ap.parse_args(argv)
    table = pd.DataFrame(_fits(args.quick)["rows"])
    with pd.option_context("display.width", 200, "display.float_format", lambda v: f"{v:,.3g}"):
        print("candidate fits per second, one core, m = 64 runs")
        print(table.to_string(index=False))
    staged = _staged(args.quick)
    print("\nfull automodel.fit, CPU seconds on one core (best of the repeats):")
    print(textwrap.fill(_fit_line("4 parameters (n, p, cpu, bw)", staged), 100, subsequent_indent="    "))
    print(textwrap.fill(_fit_line("hommexx (n = nelem, p = nnode)", staged["hommexx"]), 100,
                        subsequent_indent="    "))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
