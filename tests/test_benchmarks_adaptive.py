"""benchmarks.adaptive: the workloads it replays and the ladder of grids it compares with (no fits)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not installed

from benchmarks import adaptive  # noqa: E402


def test_workloads_are_one_row_per_measured_configuration():
    found = adaptive.workloads()
    suites = {suite for suite, _, _ in found}
    assert suites == {"smpi-ours", "smpi-others", "real"}
    for _, name, table in found:
        assert list(table.columns) == ["n", "p", "time"], name
        assert not table.duplicated(["n", "p"]).any(), name


def test_the_ladder_grows_from_the_seed_to_every_allowed_configuration():
    allowed = pd.DataFrame([(n, p) for n in range(1, 7) for p in (1, 2, 4, 8, 16, 32, 64, 128, 256)],
                           columns=["n", "p"])
    rungs = adaptive.ladder(allowed)
    assert [len(r) for r in rungs] == [12, 20, 30, 42, 48, 54]
    assert all(set(map(tuple, a.to_numpy())) < set(map(tuple, b.to_numpy())) for a, b in zip(rungs, rungs[1:]))
