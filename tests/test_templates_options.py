"""Template options (issue 14): read from each template's fit, reachable from the CLI and the space."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.errors import OptionError, SpaceError
from automodel.templates import TEMPLATES
from automodel.templates.options import (check_options, checked_space, convert, parse_assignments,
                                         template_options)

P = np.repeat([1.0, 2, 4, 8, 16, 32, 64], 2)


def strong_scaling() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"p": P, "time": (40 / P + 2 + 0.2 * np.log2(P)) * np.exp(0.02 * rng.standard_normal(len(P)))})


def test_every_template_option_comes_from_its_fit_with_default_and_help():
    kohashi = template_options(TEMPLATES["kohashi"])
    assert kohashi["n_terms"].default == 3 and kohashi["n_terms"].annotation == "int"
    assert kohashi["n_terms"].help.startswith("3, 4, 5 or 6")
    assert "frame" not in kohashi and "progress" not in template_options(TEMPLATES["fim_com"])
    assert template_options(TEMPLATES["fim_com"])["pattern"].default == "broadcast"


@pytest.mark.parametrize("template, key, text, value", [
    ("kohashi", "n_terms", "6", 6), ("kohashi", "pc", "none", None), ("kohashi", "pc", "12.5", 12.5),
    ("kohashi", "bayesian", "true", True), ("kohashi", "temperatures", "0.1,1,10", (0.1, 1.0, 10.0)),
    ("hockney", "breakpoints", "8192,131072", (8192.0, 131072.0)), ("hockney", "breakpoints", "search", "search"),
    ("fim_com", "pattern", "scatter", "scatter")])
def test_values_convert_by_the_annotation(template, key, text, value):
    assert convert(TEMPLATES[template], key, text) == value


@pytest.mark.parametrize("template, key, text, message", [
    ("kohashi", "nterms", "6", "template kohashi has no option 'nterms'; its options: n_terms, pc"),
    ("kohashi", "n_terms", "six", "kohashi.n_terms takes int, got 'six'"),
    ("kohashi", "bayesian", "maybe", "kohashi.bayesian takes bool, got 'maybe'")])
def test_a_wrong_option_is_one_line_naming_template_and_option(template, key, text, message):
    with pytest.raises(SpaceError, match=message):
        convert(TEMPLATES[template], key, text)
    with pytest.raises(SpaceError, match="expected TEMPLATE.OPTION=VALUE"):
        parse_assignments(["kohashi=6"])
    with pytest.raises(SpaceError, match="kohashi.n_terms is given twice"):  # the later one won, silently
        parse_assignments(["kohashi.n_terms=6", "kohashi.n_terms=4"])


def test_a_400_digit_whole_number_option_is_one_line():
    """``--template-option kohashi.n_terms=<400 digits>``: math.isfinite of the int, an OverflowError traceback."""
    with pytest.raises(SpaceError, match=r"kohashi.n_terms takes int, got '9{20,}\.\.\. \(402 chars\)$"):
        convert(TEMPLATES["kohashi"], "n_terms", "9" * 400)


def test_fit_cli_and_space_reach_kohashi_n_terms(tmp_path, capsys):
    data = tmp_path / "runs.csv"
    strong_scaling().to_csv(data, index=False)
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--quiet", "--templates", "kohashi", "--template-option",
                 "kohashi.n_terms=6", "kohashi.pc=40"]) == 0
    result = automodel.fit(data, progress=False, templates="kohashi",
                           template_options={"kohashi": {"n_terms": "6", "pc": "40"}})
    kohashi = next(m for m in result.models if m.name == "kohashi")
    assert kohashi.core.n_terms == 6 and kohashi.core.pc == 40.0
    space = tmp_path / "space.toml"
    text = (automodel.load_space("default").source and
            open(automodel.load_space("default").source, encoding="utf-8").read())
    space.write_text(text.replace("[fit]", "[fit.template_options.kohashi]\nn_terms = 4\n\n[fit]", 1), encoding="utf-8")
    result = automodel.fit(data, progress=False, space=space, templates="kohashi")
    assert next(m for m in result.models if m.name == "kohashi").core.n_terms == 4
    capsys.readouterr()
    assert main(["fit", str(data), "--quiet", "--template-option", "kohashi.nterms=6", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("automodel: error: template options: template kohashi has no option 'nterms'")
    assert err.count("\n") == 1 and not out.exists()


def test_a_template_option_the_data_refuses_is_noted_in_its_row():
    """An option the template takes but these data cannot serve (a degree in n without column n) is a
    note of the template's row; the fit goes on."""
    result = automodel.fit(strong_scaling(), progress=False, templates="kohashi",
                           template_options={"kohashi": {"degree": 2}})
    row = result.leaderboard[result.leaderboard["kind"] == "template:kohashi"].iloc[0]
    assert row["note"] == "fit failed: data: degree 2 in n needs column 'n'"


#: (template, options, the start of the OptionError): values a template does not take, whatever the data
OUT_OF_RANGE = [
    ("kohashi", {"n_terms": -4}, "kohashi: option n_terms must be a whole number from 2 to 6, got -4"),
    ("kohashi", {"n_terms": 9}, "kohashi: option n_terms must be a whole number from 2 to 6, got 9"),
    ("kohashi", {"pc": -40.0}, "kohashi: option pc must be none or a number > 0, got -40"),
    ("kohashi", {"cores_per_node": 0.0}, "kohashi: option cores_per_node must be none or a number > 0, got 0"),
    ("kohashi", {"degree": -1}, "kohashi: option degree must be none or a whole number from 0 to 3, got -1"),
    ("kohashi", {"degree": 9}, "kohashi: option degree must be none or a whole number from 0 to 3, got 9"),
    ("kohashi", {"n_steps": -1}, "kohashi: option n_steps must be a whole number from 2 to 1,000,000, got -1"),
    ("kohashi", {"max_samples": 0}, "kohashi: option max_samples must be a whole number >= 1, got 0"),
    ("kohashi", {"pc_trials": 0}, "kohashi: option pc_trials must be a whole number from 1 to 10,000, got 0"),
    ("kohashi", {"pc_timeout": -1.0}, "kohashi: option pc_timeout must be none or a number > 0, got -1"),
    ("kohashi", {"temperatures": (0.1, -1.0)}, "kohashi: option temperatures must be none or numbers > 0, "
                                               r"got \(0.1, -1.0\)"),
    ("kohashi", {"seed": -1}, "kohashi: option seed must be none or a whole number >= 0, got -1"),
    ("kohashi", {"pc_search": "grid"}, "kohashi: option pc_search must be 'bounded' or 'optuna', got 'grid'"),
    ("prophesy", {"degree": -1}, "prophesy: option degree must be a whole number from 0 to 7, got -1"),
    ("rbasp", {"g": "cubic"}, "rbasp: option g must be 'linear', 'quadratic', 'auto', got 'cubic'"),
    ("rational", {"degrees": (3, -1, 2)}, "rational: option degrees must be 'search' or 3 whole numbers from 0 "
                                          r"to 7, got \(3, -1, 2\)"),
    ("rational", {"degrees": "all"}, "rational: option degrees must be 'search' or 3 whole numbers from 0 to 7, "
                                     "got 'all'"),
    ("rational", {"max_degree": 50}, "rational: option max_degree must be a whole number from 0 to 7, got 50"),
    ("hockney", {"breakpoints": (131072.0, 8192.0)}, "hockney: option breakpoints must be none, 'paper', "
                                                     r"'search' or increasing sizes > 0, got \(131072.0, 8192.0\)"),
    ("hockney", {"breakpoints": "guess"}, "hockney: option breakpoints must be none, 'paper', 'search' or "
                                          "increasing sizes > 0, got 'guess'"),
    ("hockney_collective", {"schedule": "p2p"}, "hockney_collective: option schedule must be 'auto' or one of "),
    ("hockney_collective", {"schedules": ("ring",)}, "hockney_collective: option schedules must be none or some "),
    ("fim_cal", {"method": "exact"}, "fim_cal: option method must be 'first_step' or 'chain', got 'exact'"),
    ("fim_cal", {"stages": 0}, "fim_cal: option stages must be a whole number >= 1, got 0"),
    ("fim_cal", {"epsilon": -1e-5}, "fim_cal: option epsilon must be a number > 0, got -1e-05"),
    ("fim_cal", {"tau": 0.0}, "fim_cal: option tau must be a number > 0, got 0"),
    ("fim_cal", {"max_steps": 0}, "fim_cal: option max_steps must be a whole number from 1 to 100,000,000, got 0"),
    ("fim_com", {"pattern": "alltoall"}, "fim_com: option pattern must be 'scatter', 'broadcast', 'gather', "
                                         "'auto', got 'alltoall'"),
    ("fim_com", {"reps": 0}, "fim_com: option reps must be a whole number from 1 to 4096, got 0"),
    ("fim_com", {"fit_reps": 10**6}, "fim_com: option fit_reps must be a whole number from 1 to 4096, got 1e\\+06"),
    ("fim_com", {"zeta_ratio": 2.0}, r"fim_com: option zeta_ratio must be a number in \(0, 1\], got 2"),
    ("fim_com", {"job_size": -1.0}, "fim_com: option job_size must be none or a number > 0, got -1"),
    ("fim_com", {"max_jobs": 0}, "fim_com: option max_jobs must be a whole number >= 1, got 0"),
]


@pytest.mark.parametrize("template, options, message", OUT_OF_RANGE)
def test_an_option_outside_what_the_template_takes_is_an_option_error(template, options, message):
    """``kohashi.n_terms=-4`` and the like: an OptionError naming template, option, expectation and value,
    whatever the data (checked before them)."""
    with pytest.raises(OptionError, match=f"^{message}"):
        TEMPLATES[template].fit(strong_scaling(), **options)


@pytest.mark.parametrize("template, options, message", OUT_OF_RANGE)
def test_the_template_checks_an_option_value_without_data(template, options, message):
    """The checks of each template's fit on the values alone (Template.check_options, which fit runs),
    over the defaults (check_options), prefixed with where the options come from."""
    defaults = {key: option.default for key, option in template_options(TEMPLATES[template]).items()}
    TEMPLATES[template].check_options(defaults)  # the defaults are values it takes
    with pytest.raises(OptionError, match=f"^{message}"):
        TEMPLATES[template].check_options({**defaults, **options})
    with pytest.raises(OptionError, match=f"^space.toml: {message}"):
        check_options(TEMPLATES, {template: {key: list(value) if isinstance(value, tuple) else value  # as TOML has it
                                             for key, value in options.items()}}, "space.toml")


def test_a_space_file_is_checked_whole_where_it_is_loaded(tmp_path):
    """checked_space: a bad template option of a space file is a SpaceError naming the file (fit,
    kernels, observe and run load their space with it); a good one is converted as the fit takes it."""
    from importlib.resources import files

    default = (files("automodel") / "spaces" / "default.toml").read_text()
    space = tmp_path / "space.toml"
    space.write_text(default + "\n[fit.template_options.kohashi]\nn_terms = 9\n")
    with pytest.raises(OptionError, match=f"^{space}: kohashi: option n_terms must be a whole number from 2 to 6"):
        checked_space(space)
    with pytest.raises(OptionError, match=f"^{space}: kohashi: option n_terms"):
        automodel.fit(strong_scaling(), progress=False, space=space, templates="none")
    space.write_text(default + "\n[fit.template_options.kohashi]\nn_terms = 4\n")
    assert checked_space(space).fit.template_options == {"kohashi": {"n_terms": 4}}
    assert checked_space("default").name == "default"


def test_a_space_without_template_options_loads_without_the_template_registry():
    import subprocess
    import sys

    probe = ("import sys\nfrom automodel.templates.options import checked_space\nchecked_space('default')\n"
             "print(sorted(m for m in sys.modules if m.startswith('automodel.templates.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['automodel.templates.base',", "'automodel.templates.options']"]


@pytest.mark.parametrize("option, got", [
    ("kohashi.n_terms=-4", "-4"), ("kohashi.pc=-40", "-40"), ("kohashi.degree=9", "9"), ("kohashi.n_steps=-1", "-1"),
    ("rbasp.g=cubic", "'cubic'"), ("rational.max_degree=50", "50"), ("prophesy.degree=-1", "-1"),
    ("hockney.breakpoints=0,10", "(0.0, 10.0)")])
def test_fit_cli_stops_at_an_option_outside_what_the_template_takes(option, got, tmp_path, capsys):
    """``fit --template-option kohashi.n_terms=-4`` fitted, noted "fit failed" in the row and exited 0."""
    data = tmp_path / "runs.csv"
    frame = strong_scaling()
    frame["n"] = 1000.0 * frame["p"]
    frame.to_csv(data, index=False)
    template, rest = option.split(".", 1)
    assert main(["fit", str(data), "--quiet", "--templates", template, "--template-option", option]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"automodel: error: template options: {template}: option {rest.split('=')[0]} must be ")
    assert err.endswith(f", got {got}\n") and err.count("\n") == 1 and out == ""


def test_fit_raises_an_option_error_and_keeps_data_failures_as_notes():
    with pytest.raises(OptionError, match="^template options: kohashi: option n_terms must be"):
        automodel.fit(strong_scaling(), progress=False, templates="kohashi,amdahl",
                      template_options={"kohashi": {"n_terms": -4}})
    result = automodel.fit(strong_scaling(), progress=False, templates="kohashi,prophesy")
    notes = result.leaderboard.set_index("kind")["note"]
    assert notes["template:prophesy"].startswith("not applicable")  # no column n: a note, as before


def test_templates_command_lists_options_within_80_columns(capsys):
    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    assert "      n_terms (int, default 3): 3, 4, 5 or 6" in out
    assert max(map(len, out.splitlines())) <= 80


def test_templates_are_scored_under_every_metric_by_refits():
    """Issue 14: under --metric loo, holdout or forward every template scored NaN and sank below every
    searched model. Now loo is the RMS relative error of leave-one-out refits (checked by hand for
    Amdahl) and holdout that of a refit without the largest p."""
    frame = strong_scaling().groupby("p", as_index=False)["time"].median()
    result = automodel.fit(frame, progress=False, templates="amdahl,kohashi", metric="loo")
    board = result.leaderboard.set_index("kind")
    for kind in ("template:amdahl", "template:kohashi"):
        assert np.isfinite(board.loc[kind, ["loo", "holdout", "forward"]].astype(float)).all()
    amdahl = TEMPLATES["amdahl"]
    errors = []
    for i in range(len(frame)):
        rest = frame.drop(index=i).reset_index(drop=True)
        errors.append(amdahl.fit(rest).predict(frame.iloc[[i]].reset_index(drop=True))[0] / frame["time"][i] - 1)
    assert board.loc["template:amdahl", "loo"] == pytest.approx(np.sqrt(np.mean(np.square(errors))))
    top = frame["p"] == frame["p"].max()
    held = amdahl.fit(frame[~top].reset_index(drop=True)).predict(frame[top].reset_index(drop=True))
    assert board.loc["template:amdahl", "holdout"] == pytest.approx(abs(held[0] / frame["time"][top].iloc[0] - 1))


def test_a_template_says_what_it_ignores_and_its_own_notes():
    """Issue 14: Prophesy, the rational polynomials and Amdahl ignored p (or n) without saying so, and a
    fitted template's own notes never reached the leaderboard."""
    from importlib.resources import files

    result = automodel.fit(str(files("automodel") / "demo" / "cg_fast.csv"), progress=False,
                           templates="prophesy,amdahl,rational,rbasp")
    notes = dict(zip(result.leaderboard["kind"], result.leaderboard["note"]))
    assert notes["template:prophesy"] == "ignores p" and notes["template:amdahl"] == "ignores n"
    assert notes["template:rational"].startswith("no column cpu: its part is dropped")
    assert notes["template:rational"].endswith("; ignores p")
    assert notes["template:rbasp"].startswith("g(p) chosen")


def test_a_template_whose_formula_differs_from_its_predictions_says_so():
    """Issue 14: FiM-Com's exported formula differed from its (simulated) predictions by 18 % without a
    warning; closed-form templates agree to rounding."""
    from importlib.resources import files

    from automodel.templates.evaluate import formula_gap

    result = automodel.fit(str(files("automodel") / "demo" / "cg_fast.csv"), progress=False, templates="all")
    notes = dict(zip(result.leaderboard["kind"], result.leaderboard["note"]))
    assert "its formula (the exports) differs from its predictions by up to" in notes["template:fim_com"]
    frame = result.dataset.frame
    closed = [model for model in result.models if getattr(model.core, "closed_form", False)]
    # the fit does not measure the gap of a model that says its predictions are its formula: this does
    assert {"kohashi", "amdahl", "rbasp", "rational", "hockney", "prophesy", "multivariate_type1",
            "multivariate_type2"} <= {model.name for model in closed}
    assert any(model.name.startswith("hockney_collective") for model in closed)
    for model in closed:
        assert formula_gap(model.core, frame) < 1e-9, model.name
