"""benchmarks/adaptive_smpi.py: configurations simulated on demand through the runner, once each."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from benchmarks.adaptive_smpi import PROGRAMS, Simulator


def test_a_configuration_is_simulated_once_and_read_back(tmp_path):
    app = tmp_path / "fake_smpirun.py"
    app.write_text("import sys; n, p = map(float, sys.argv[1:]); print(f'Simulated time: {n / p:g} seconds.')")
    sim = Simulator(f"{sys.executable} {app} {{n}} {{p}}", tmp_path, tmp_path / "runs.csv")
    first = sim(pd.DataFrame({"n": [8.0, 8.0], "p": [1.0, 4.0]}))
    assert first["time"].tolist() == pytest.approx([8.0, 2.0]) and sim.simulated == 2
    again = sim(pd.DataFrame({"n": [8.0, 16.0], "p": [4.0, 2.0]}))  # resumed: only the new one runs
    assert again["time"].tolist() == pytest.approx([2.0, 8.0]) and sim.simulated == 3


def test_nas_ep_is_offered_only_what_it_can_run():
    feasible = PROGRAMS["nas_ep"]["feasible"]
    assert feasible(2 ** 20, 16) and not feasible(2 ** 20, 32) and feasible(2 ** 25, 256)
