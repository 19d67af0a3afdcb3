"""observe: bad input is a one-line error and adds nothing (concurrency, idempotence and the other
backends: test_store_conformance.py). Shared runs of a known formula for the store tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from automodel import store as S
from automodel.errors import DataError, StoreError


def _runs(seed: int, m: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = rng.choice(np.linspace(1000, 8000, 8), m)
    p = rng.choice([1.0, 2.0, 4.0, 8.0], m)
    cpu, bw = rng.uniform(0.5, 1, m), rng.uniform(0.5, 1, m)
    t = 2e-10 * n ** 3 / (p * cpu) + 3e-9 * n ** 2 * np.log2(p) / bw + 0.5
    return pd.DataFrame(dict(n=n, p=p, cpu=cpu, bw=bw, time=t * (1 + 0.02 * rng.standard_normal(m))))


def _grid(seed: int = 0) -> pd.DataFrame:
    g = _runs(seed, 32)
    g["n"] = np.tile(np.linspace(1000, 8000, 8), 4)
    g["p"] = np.repeat([1.0, 2.0, 4.0, 8.0], 8)
    g["time"] = (2e-10 * g.n ** 3 / (g.p * g.cpu) + 3e-9 * g.n ** 2 * np.log2(g.p) / g.bw + 0.5) * \
        (1 + 0.02 * np.random.default_rng(seed).standard_normal(32))
    return g


def test_bad_input_is_a_one_line_error(tmp_path):
    path = tmp_path / "s.db"
    S.observe(path, "app", _grid())
    with pytest.raises(DataError, match="'bw'"):
        S.observe(path, "app", _runs(1, 2).drop(columns=["bw"]))
    with pytest.raises(DataError, match="row 1, column 'time'"):
        S.observe(path, "app", _runs(1, 2).assign(time=[1.0, -1.0]))
    with pytest.raises(StoreError, match="no application 'other'; the store has app"):
        S.ranking(path, "other")
    empty, header = tmp_path / "empty.csv", tmp_path / "header.csv"
    empty.write_text("")
    header.write_text("n,p,cpu,bw,time\n")
    for bad in (empty, header):
        with pytest.raises(DataError, match="no rows|empty"):
            S.observe(path, "app", bad)
    assert S.verify(path, "app")["runs"] == 32  # failed observes added nothing
