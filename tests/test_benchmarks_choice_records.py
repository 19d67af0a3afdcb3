"""The chooser's records: every ranked candidate with the chooser's inputs and its held-out error."""

from __future__ import annotations

from dataclasses import asdict

import joblib
import numpy as np
import pandas as pd
import pytest

import automodel

from automodel.search.choice import choose
from benchmarks import choice_records, selection
from benchmarks.corpus import SelectionTask


def _task() -> SelectionTask:
    """Runs of T = 2 + 0.001 n + 100 / p at n x p, with 1 % noise; held out: larger p and n."""
    rng = np.random.default_rng(3)

    def runs(ps, ns):
        return pd.DataFrame([{"n": n, "p": p, "time": (2 + 0.001 * n + 100 / p) * (1 + 0.01 * rng.standard_normal())}
                             for n in ns for p in ps for _ in range(2)])
    return SelectionTask("synthetic/grid", "real", "dev", runs([1, 2, 4, 8], [1000, 2000, 4000]),
                         runs([32, 64], [16000]), roles={"n": "n", "p": "p"})


@pytest.fixture(scope="module")
def rec() -> choice_records.TaskCandidates:
    return choice_records.record(_task())


def test_a_record_replays_fits_choice_and_scores_it_as_the_benchmark_does(rec, tmp_path):
    task = _task()
    n = len(rec.formulas)
    assert n > 10 and rec.logs.shape[0] == n and rec.errors.shape == (n,) and rec.values.shape == (n,)
    assert choice_records.replay(rec) == rec.chosen
    best = automodel.fit(task.train, time="time", **task.fit_kwargs(), progress=False, intervals=False).best
    assert np.isclose(rec.errors[rec.chosen], selection.model_error(best, selection.configurations(task)))
    assert rec.errors.min() <= rec.errors[rec.chosen]
    joblib.dump([asdict(rec)], tmp_path / "records.pkl")
    (again,) = choice_records.load(tmp_path / "records.pkl")
    assert again.formulas == rec.formulas and choice_records.replay(again) == rec.chosen


def test_a_variant_rule_is_replayed_on_the_same_inputs(rec):
    seen = {}

    def best_scored(values, n_terms, *args):
        seen["n"] = len(values)
        return choose(values, n_terms, *args[:2], "best")

    picked = choice_records.replay(rec, best_scored)
    assert seen["n"] == len(rec.formulas)
    finite = np.where(rec.set_aside, np.inf, rec.values)
    assert picked == int(np.argmin(finite))
