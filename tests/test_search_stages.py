"""automodel.search.stages: the table of stages the engine runs, one line per stage."""

from __future__ import annotations

import numpy as np

import automodel
from automodel.search import engine
from automodel.search.stages import STAGES
from automodel.search.stages.base import STAGED, Stage
from automodel.space.stages import STAGE_CONFIGS, ComputationConfig
from tests.conftest import make_runs


def test_the_table_holds_every_configured_stage_in_order():
    assert {name: stage.config for name, stage in STAGES.items()} == STAGE_CONFIGS
    assert list(STAGES) == ["computation", "communication", "processors", "p_only", "parameters", "pmnf"]
    assert [s.route for s in STAGES.values()] == [STAGED] * 5 + ["pmnf"]


def test_a_stage_in_the_table_runs_on_every_branch_its_predecessor_yields(monkeypatch):
    """A stage added to the table runs where the table puts it: after communication, once per branch
    the communication stage yields (one per row set), on those branches' targets; yielding its branch
    unchanged leaves the choice as it was."""
    f = lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * np.log2(p)
    runs = make_runs(f, np.linspace(1000, 8000, 6), [1, 2, 4, 8], reps=1, noise=0.01)
    before = automodel.fit(runs, progress=False, templates="none").best.formula
    seen = []

    def run(S, shape, branch):
        seen.append((tuple(branch.ks), branch.seeds.shape[0]))
        yield branch

    toy = Stage("toy", ComputationConfig, run, lambda S, shape: shape.has_n)
    items = list(STAGES.items())
    monkeypatch.setattr(engine, "STAGES", dict(items[:2] + [("toy", toy)] + items[2:]))
    after = automodel.fit(runs, progress=False, templates="none").best.formula
    assert seen and all(n == len(ks) for ks, n in seen)
    assert sorted(k for ks, _ in seen for k in ks) == [0]  # one target, in one branch
    assert after == before
