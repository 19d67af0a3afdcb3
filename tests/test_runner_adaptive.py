"""automodel.runner.adaptive: the loop of fit, suggest and measure, its stops, and no run made twice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from automodel.errors import DataError
from automodel.runner.adaptive import adaptive, core_hours, seed_design

NS, PS = [1e3, 2e3, 4e3, 8e3, 1.6e4, 3.2e4, 6.4e4], [1, 2, 4, 8, 16, 32, 64, 128, 256]


def truth(frame: pd.DataFrame) -> pd.DataFrame:
    n, p = frame["n"].to_numpy(float), frame["p"].to_numpy(float)
    return frame.assign(time=1e-7 * n * np.log2(n) / p + 2e-3 * np.log2(p) + 1e-3)


def test_reaches_the_width_without_repeating_a_run():
    made = []

    def measure(configs):
        made.extend(map(tuple, configs[["n", "p"]].to_numpy()))
        return truth(configs)

    out = adaptive(truth(seed_design({"n": NS, "p": PS})), measure, {"n": 6.4e4, "p": 256}, until=0.15,
                   budget=1.0, count=3, grid={"n": NS, "p": PS})
    assert out.stop == "until" and out.steps[-1].width <= 0.15
    assert out.steps[-2].width <= 0.15 and out.steps[-1].forward <= 0.15  # confirmed on runs it did not see
    assert len(made) == len(set(made)) and not set(made) & {(n, p) for n in NS[:3] for p in PS[:4]}
    widths = [s.width for s in out.steps]
    assert widths[-1] < widths[0]
    assert [s.n_runs for s in out.steps] == [12 + sum(len(s.next) for s in out.steps[:i]) for i in range(len(widths))]
    assert core_hours(out.runs) == pytest.approx(out.steps[-1].core_hours)


def test_stops_when_the_budget_is_spent():
    seed = truth(seed_design({"n": NS, "p": PS}))
    budget = core_hours(seed) * 1.5
    out = adaptive(seed, truth, {"n": 6.4e4, "p": 256}, budget=budget, count=2, grid={"n": NS, "p": PS})
    assert out.stop in ("budget", "nothing")
    assert out.steps[-1].core_hours <= budget * 1.2  # the last batch is chosen within what is left, by prediction


def test_needs_a_stop():
    with pytest.raises(DataError, match="--until WIDTH% or --budget"):
        adaptive(truth(seed_design({"n": NS, "p": PS})), truth, {"n": 6.4e4, "p": 256})


def test_a_configuration_that_fails_is_not_asked_for_again():
    asked = []

    def measure(configs):
        asked.extend(map(tuple, configs[["n", "p"]].to_numpy()))
        return truth(configs[configs["p"] != 16])  # every run at p = 16 fails

    out = adaptive(truth(seed_design({"n": NS, "p": PS})), measure, {"n": 6.4e4, "p": 256}, until=0.15,
                   budget=1.0, count=3, grid={"n": NS, "p": PS}, max_steps=3)
    assert any(p == 16 for _, p in asked)  # asked for, failed
    assert len(asked) == len(set(asked))
    assert not (out.runs["p"] == 16).any()


def test_core_hours_and_the_steps_in_the_models_unit():
    from automodel.runner.adaptive import Step, core_hours

    runs = pd.DataFrame({"p": [2.0, 4.0], "time": [900.0, 450.0]})
    assert core_hours(runs) == pytest.approx(1.0) and core_hours(runs, "ms") == pytest.approx(1e-3)
    step = Step(0, 12, 0.5, 3.0, 2.0, 4.0, 0.33, "1 + 8/p", unit="us")
    assert step.line().endswith("target 3 us (+-33%)")
    checked = Step(2, 18, 0.000978, 0.007079, 0.004, 0.0127, 0.8, "f", forward=0.8)
    head = checked.line(width=60)
    assert all(len(line) <= 60 for line in head.splitlines()) and "last runs 80% off" in head


def test_a_confident_fit_wrong_on_the_runs_it_did_not_see_does_not_stop_the_campaign():
    def measure(configs):  # the new runs are 40 % slower than the seed's law predicts
        return truth(configs).assign(time=lambda f: f["time"] * 1.4)

    out = adaptive(truth(seed_design({"n": NS, "p": PS})), measure, {"n": 6.4e4, "p": 256}, until=0.15,
                   budget=1.0, count=3, grid={"n": NS, "p": PS}, max_steps=2)
    first = out.steps[1]
    # the batch is predicted by the seed's fit (exact where it interpolates, short of the 40 % beyond it)
    assert 0.25 <= first.forward <= 0.4 * 1.05 and first.width >= first.forward
    assert first.upper >= first.predicted * (1 + first.forward) * 0.999 and first.model_width <= first.width
    assert out.stop == "steps"


def test_a_fit_with_no_positive_time_at_the_target_tests_the_runs_nearest_it(monkeypatch):
    """A step whose model predicts no positive time at the target has no band to narrow: the campaign
    runs the configurations nearest the target (and goes on), not an error mid-campaign."""
    import automodel.runner.adaptive as A
    from automodel.suggestion import NoTimeAtTarget

    plan = A._plan
    calls = []

    def first_has_no_time(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise NoTimeAtTarget("the model predicts no positive time at the target (-0.06)")
        return plan(*args, **kwargs)

    monkeypatch.setattr(A, "_plan", first_has_no_time)
    made = []

    def measure(configs):
        made.extend(map(tuple, configs[["n", "p"]].to_numpy()))
        return truth(configs)

    out = adaptive(truth(seed_design({"n": NS, "p": PS})), measure, {"n": 6.4e4, "p": 256}, budget=1.0, count=3,
                   grid={"n": NS, "p": PS}, max_steps=2)
    first = out.steps[0]
    assert np.isnan(first.predicted) and first.width == np.inf and len(first.next) == 3
    assert "target no positive time predicted (the runs nearest it test the model)" in first.line().replace("\n   ", "")
    assert (6.4e4, 256.0) in made[:3]  # the target itself is the nearest configuration
    assert len(out.steps) == 2 and np.isfinite(out.steps[1].predicted)
