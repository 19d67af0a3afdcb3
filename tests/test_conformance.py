"""One conformance check over every registered template and the searched model (as scikit-learn's
``parametrize_with_checks``): fit, predict, the model-file round trip, every export format, and
``applicable`` with its reason. The mathematics of each template is tested in its own file."""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.errors import DataError
from automodel.output.export import FORMATS, export
from automodel.model.core import Core, Model
from automodel.templates.base import COSTS, Template
from automodel.model_file import model_from_dict
from automodel.templates import TEMPLATES, describe
from automodel.templates._fim_markov import first_step_time

NOT_PARAMETERS = {"time", "U", "TC", "SC", "F"}


class Searched:
    """The staged search seen through the :class:`Template` protocol, so it takes the same checks."""

    name, title, source, requires, cost = "searched", "staged search", "automodel.search", ("time",), "fast"

    def applicable(self, frame: pd.DataFrame) -> str | None:
        try:
            automodel.load(frame)
        except DataError as exc:
            return f"not applicable: {exc}"
        return None

    def seconds(self, frame: pd.DataFrame) -> float:
        return 0.2

    def fit(self, frame: pd.DataFrame, **options: Any) -> Core:
        return automodel.fit(frame, templates="none", progress=False, **options).best.core

    def from_dict(self, d: dict) -> Core:
        raise NotImplementedError  # searched models load through automodel.model_file only

    def check_options(self, options: Mapping[str, Any]) -> None:
        """No option values of its own to check (automodel.fit checks its arguments)."""


def _runs() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n, p = np.meshgrid([1e3, 2e3, 4e3, 8e3, 16e3], [1.0, 2.0, 4.0, 8.0, 16.0])
    n, p = n.ravel(), p.ravel()
    cpu, bw = rng.uniform(0.5, 1.0, (2, n.size))
    t = (1e-9 * n ** 2 / (p * cpu) + 1e-5 * n * np.log2(p) / bw + 0.01) * (1 + 0.01 * rng.standard_normal(n.size))
    return pd.DataFrame({"n": n, "p": p, "cpu": cpu, "bw": bw, "time": t})


def _counters() -> pd.DataFrame:
    """Runs with hardware counters (FiM-Cal's eq. 12 inputs), time from its first-step form."""
    rows = [{"iterations": it, "n": size, "p": p, "U": 0.5 + 1e-3 * it, "TC": 2e6 + 5e4 * it + 300.0 * size,
             "SC": 0.3 * (2e6 + 5e4 * it + 300.0 * size), "F": 2e9}
            for it in (10, 20, 40) for size in (1e3, 3e3, 5e3) for p in (1, 2, 4, 8)]
    frame = pd.DataFrame(rows)
    frame["time"] = first_step_time(1.25 * frame["TC"].to_numpy(), 2e9, frame["p"].to_numpy())
    return frame


#: template name -> options that keep the check quick (the defaults are tested in its own file)
OPTIONS: dict[str, dict] = {"fim_com": {"max_nfev": 20, "reps": 8}, "fim_cal": {"epsilon": 1e-4, "tau": 1e-3}}
CASES: dict[str, Template] = {**TEMPLATES, "searched": Searched()}


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    return {"runs": _runs(), "counters": _counters()}


@pytest.mark.parametrize("name", list(CASES))
def test_conformance(name: str, frames: dict[str, pd.DataFrame]) -> None:
    template = CASES[name]
    assert isinstance(template, Template) and template.cost in COSTS and template.name == name
    frame = next(f for f in frames.values() if template.applicable(f) is None)

    core = template.fit(frame, **OPTIONS.get(name, {}))
    assert isinstance(core, Core) and core.n_coefficients >= 1
    params = tuple(c for c in frame.columns if c not in NOT_PARAMETERS)
    model = Model(core, params, {q: q for q in (*params, "time")})
    pred = model.predict(frame)
    assert pred.shape == (len(frame),) and np.all(np.isfinite(pred))

    back = model_from_dict(json.loads(model.to_json()), "round trip")
    assert back.name == core.name
    np.testing.assert_allclose(back.predict(frame), pred, rtol=1e-12)

    for fmt in FORMATS:
        text = export(model, fmt)
        assert isinstance(text, str) and text.strip(), fmt

    reason = template.applicable(pd.DataFrame({"x": [1.0, 2.0]}))
    assert isinstance(reason, str) and reason.startswith("not applicable")


def test_every_module_is_registered_and_described() -> None:
    assert {row["name"] for row in describe()} == set(TEMPLATES)
    assert {row["cost"] for row in describe()} <= set(COSTS)
    assert [n for n, t in TEMPLATES.items() if t.cost == "slow"] == ["fim_com"]


def test_the_name_map_of_the_registry_agrees_with_the_modules() -> None:
    from importlib import import_module

    from automodel.templates import MODULE_OF, MODULES, template

    declared = {}
    for module in MODULES:
        mod = import_module(f"automodel.templates.{module}")
        declared.update({t.name: module for t in getattr(mod, "TEMPLATES", None) or [mod.TEMPLATE]})
    assert list(MODULE_OF.items()) == list(declared.items())
    assert list(MODULE_OF) == list(TEMPLATES)
    assert all(template(name) is t for name, t in TEMPLATES.items())
    assert template("nope") is None


def test_slow_templates_run_when_named_or_within_the_budget(frames: dict[str, pd.DataFrame], monkeypatch) -> None:
    runs = frames["runs"]
    board = automodel.fit(runs, progress=False).leaderboard.set_index("kind")
    assert np.isfinite(board.loc["template:fim_com", "rel_s"])  # its estimate is within the 1 s budget
    monkeypatch.setattr("automodel.templates.evaluate.TEMPLATE_BUDGET_SECONDS", 0.0)
    board = automodel.fit(runs, progress=False).leaderboard.set_index("kind")
    assert board.loc["template:fim_com", "note"].startswith("not run by default: ~")
    assert "--templates fim_com runs it" in board.loc["template:fim_com", "note"]
    assert np.isfinite(board.loc["template:kohashi", "rel_s"])
    named = automodel.fit(runs, progress=False, templates="fim_com,kohashi").leaderboard
    assert set(named["kind"]) - {"searched"} == {"template:fim_com", "template:kohashi"}
    assert named["rank"].notna().all()
    assert set(automodel.fit(runs, progress=False, templates="none").leaderboard["kind"]) == {"searched"}
    with pytest.raises(automodel.SpaceError, match="unknown template"):
        automodel.fit(runs, progress=False, templates=["nope"])
