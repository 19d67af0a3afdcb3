"""Speed of candidate fitting and of the full staged search, measured in one run.

Prints candidate fits per second per core for k = 1..6 terms on m = 64 runs, for
  * automodel's batched solver (:func:`automodel.solve.lstsq.solve`, unconstrained and non-negative),
  * a Python loop of ``np.linalg.lstsq`` (the naive way),
  * batched normal equations on a shared Gram matrix with ``np.linalg.solve`` on a stack (the
    practical limit of the normal-equations approach in plain numpy),
and the wall time of a full staged search on a 4-parameter dataset (n, p, cpu, bw).

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
import time  # noqa: E402
from typing import Any  # noqa: E402
from itertools import combinations, islice  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from automodel.solve import design, lstsq  # noqa: E402


def _timed(fn, min_seconds: float = 0.3) -> float:
    """Seconds per call of ``fn`` (repeated until ``min_seconds`` have passed; best of the repeats)."""
    best, spent = np.inf, 0.0
    while spent < min_seconds:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
    return best


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
        t_batched = _timed(lambda: lstsq.solve(des, combos, nonnegative=False))
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
                     "automodel nonneg fits/s": n_candidates / t_nonneg,
                     "lstsq loop fits/s": n_candidates / t_loop,
                     "gram+np.linalg.solve fits/s": n_candidates / t_gram,
                     "x vs loop": t_loop / t_batched, "x vs gram solve": t_gram / t_batched})
    return pd.DataFrame(rows)


def staged_search_seconds(repeats: int = 3) -> dict:
    """Wall time of ``automodel.fit`` on 4 parameters (n, p, cpu, bw; 8 n x 4 p x 2 repetitions).

    Measured with the space's seeded templates (the default) and without them (``templates=()``:
    the staged search alone), best of ``repeats`` each, alternating so both see the same load.
    """
    import automodel

    rng = np.random.default_rng(1)
    rows = []
    for p in (1, 2, 4, 8):
        for n in np.linspace(1000, 8000, 8):
            for _ in range(2):
                cpu, bw = rng.uniform(0.4, 1.0, 2)
                t = 2e-10 * n ** 3 / (p * cpu) + 3e-8 * n ** 2 * np.log2(p) / bw + 0.5
                rows.append({"n": n, "p": p, "cpu": cpu, "bw": bw, "time": t * (1 + 0.02 * rng.standard_normal())})
    df = pd.DataFrame(rows)
    automodel.fit(df, progress=False)  # warm caches (imports, sympy)
    variants = {"seconds": None, "search_seconds": ()}  # templates: the space's, then none
    best = dict.fromkeys(variants, np.inf)
    for _ in range(repeats):
        for key, templates in variants.items():
            t0 = time.perf_counter()
            result = automodel.fit(df, progress=False, templates=templates)
            best[key] = min(best[key], time.perf_counter() - t0)
    n_fits = sum(r.n_fits for r in result.reports)
    return {**best, "n_fits": n_fits, "n_runs": len(df)}


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
    """Every speed measurement: fits per second, staged search, many kernels, start-up times.

    ``benchmarks.kernels`` and ``benchmarks.startup`` are imported only here, so this works with or
    without them.  Each entry is ``{"status": "ok", "result": ...}`` or ``{"status": "not available:
    <reason>"}``.
    """
    jobs = {"fits_per_second": lambda: guarded(_fits, quick),
            "staged_search": lambda: guarded(_staged, quick),
            "kernels": lambda: optional("benchmarks.kernels", "race", n_kernels=1000, quick=quick),
            "startup": lambda: optional("benchmarks.startup", "startup_times")}
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
    print(f"\nfull staged search (n, p, cpu, bw; {staged['n_runs']} runs): {staged['seconds']:.3f} s wall, "
          f"{staged['n_fits']} candidate fits, templates included; "
          f"{staged['search_seconds']:.3f} s without the templates")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
