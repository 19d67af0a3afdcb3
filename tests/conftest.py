"""Shared fixtures: synthetic runs of known formulas with a little noise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def make_runs(formula, ns, ps, reps=1, noise=0.02, seed=0, load=False):
    """One row per (n, p, repetition) with time = formula(n, p, cpu, bw) * (1 + noise * N(0, 1))."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in ps:
        for n in ns:
            for _ in range(reps):
                cpu = rng.uniform(0.4, 1.0) if load else 1.0
                bw = rng.uniform(0.4, 1.0) if load else 1.0
                t = formula(n, p, cpu, bw) * (1 + noise * rng.standard_normal())
                row = {"n": n, "p": p, "time": t}
                if load:
                    row.update(cpu=cpu, bw=bw)
                rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture
def runs_loaded():
    """c n^3/(p cpu) + d n^2 log2 p / bw + e on p in 1..8, n in 1000..8000 (issue 2's example)."""
    return make_runs(lambda n, p, c, b: 2e-10 * n ** 3 / (p * c) + 3e-8 * n ** 2 * np.log2(p) / b + 0.5,
                     np.linspace(1000, 8000, 8), [1, 2, 4, 8], reps=2, noise=0.02, seed=1, load=True)
