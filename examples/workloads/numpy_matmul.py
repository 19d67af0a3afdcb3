"""A pure-Python parallel workload: dense matrix multiply with numpy over p worker processes.

Needs no MPI or SimGrid, for a quick real run of ``automodel run`` on any machine::

    automodel run --cmd 'python examples/workloads/numpy_matmul.py {n} {p}' \\
        --n 200:1000:5 --p 1,2 --reps 3 --time-regex 'time=(\\S+)' -o numpy_runs.csv

Usage: ``numpy_matmul.py <n> <p> [reps]``. C = A B for n x n matrices: A is split into p row
blocks, each worker (a multiprocessing process, numpy pinned to one thread) multiplies its
block by B (2 n^3 / p flops); the blocks travel through pipes (communication, about n^2 (p+1)
doubles). Prints ``time=<s> comp=<s> comm=<s>`` where comp is the slowest worker's multiply time
and comm = time - comp (pickling and transfer), best of ``reps`` repetitions.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # one core per worker, set before numpy loads BLAS

import multiprocessing as mp  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def _block(args: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, float]:
    a, b = args
    t0 = time.perf_counter()
    c = a @ b
    return c, time.perf_counter() - t0


def run(n: int, p: int, pool: mp.pool.Pool | None) -> tuple[float, float, np.ndarray]:
    """One multiply; returns (total time, computation time, C)."""
    rng = np.random.default_rng(n)
    a, b = rng.random((n, n)), rng.random((n, n))
    t0 = time.perf_counter()
    if pool is None:
        c, comp = _block((a, b))
    else:
        parts = pool.map(_block, [(blk, b) for blk in np.array_split(a, p)])
        c = np.vstack([part for part, _ in parts])
        comp = max(t for _, t in parts)
    return time.perf_counter() - t0, comp, c


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: numpy_matmul.py <n> <p> [reps]", file=sys.stderr)
        return 2
    try:
        n, p = int(argv[1]), int(argv[2])
        reps = int(argv[3]) if len(argv) > 3 else 1
    except ValueError:
        print(f"numpy_matmul.py: n, p and reps must be integers, got {argv[1:]}", file=sys.stderr)
        return 2
    if n < 1 or p < 1 or reps < 1:
        print("numpy_matmul.py: n, p and reps must be >= 1", file=sys.stderr)
        return 2
    pool = mp.get_context("spawn").Pool(p) if p > 1 else None
    try:
        if pool is not None:
            pool.map(_block, [(np.ones((2, 2)), np.ones((2, 2)))] * p)  # warm the workers up
        best = min((run(n, p, pool) for _ in range(reps)), key=lambda r: r[0])
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    total, comp, c = best
    print(f"numpy_matmul n={n} p={p} time={total:.6f} comp={comp:.6f} comm={max(total - comp, 0.0):.6f}")
    print(f"checksum={float(np.trace(c)):.6g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
