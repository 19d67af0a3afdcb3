"""The store subcommands: observe, ranking, runs, predict from the store, load forecast."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest

import automodel
from automodel import store as S
from automodel.cli import main
from automodel.errors import StoreError
from automodel.cli import predict as cli_predict
from automodel.cli import store as cli_store
from test_store_observe import _grid, _runs


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="automodel")
    sub = parser.add_subparsers(dest="command")
    cli_store.register(sub)
    pr = sub.add_parser("predict")
    cli_predict.add_predict_options(pr)
    pr.set_defaults(handler=cli_predict.predict_from_store)
    args = parser.parse_args(list(argv))
    return args.handler(args)


def test_store_subcommands(tmp_path, capsys):
    path = str(tmp_path / "s.db")
    data = tmp_path / "runs.csv"
    _grid().rename(columns={"time": "secs"}).to_csv(data, index=False)
    assert _cli("observe", "--store", path, "--app", "lu", "--time", "secs", str(data)) == 0
    out = capsys.readouterr().out
    assert "new application: staged search" in out and "new leader: T =" in out
    assert _cli("observe", "--store", path, "--app", "lu", str(data)) == 0
    assert "nothing added, no update: its 32 run(s) are in the store already" in capsys.readouterr().out
    more = tmp_path / "more.csv"
    bad = _runs(3, 3).rename(columns={"time": "secs"})
    bad.loc[2, ["n", "secs"]] = [4000.0, 500.0]
    bad.to_csv(more, index=False)
    assert _cli("observe", "--store", path, "--app", "lu", str(more)) == 0  # remembers the columns
    out = capsys.readouterr().out
    assert "flagged run" in out and "pruned" in out
    assert _cli("ranking", "--store", path, "--app", "lu", "--top", "3") == 0
    lines = capsys.readouterr().out.splitlines()  # the header, and each row with its formula below it
    assert len(lines) == 7 and [line.split()[0] for line in lines[1::2]] == ["1", "2", "3"]
    assert main(["ranking", "--store", path, "--app", "lu", "--top", "3", "--wide"]) == 0
    assert capsys.readouterr().out.count("\n") == 4  # one line a row
    assert _cli("ranking", "--store", path, "--app", "lu", "--history") == 0
    assert "observe" in capsys.readouterr().out
    flagged = S.runs(path, "lu", ("flagged",))
    assert _cli("runs", "--store", path, "--app", "lu", "--readmit", str(flagged["id"].iloc[0])) == 0
    assert "readmitted" in capsys.readouterr().out
    assert _cli("predict", "--store", path, "--app", "lu", "--n", "9000", "--p", "16") == 0
    out = capsys.readouterr().out
    assert "cpu forecast:" in out and "bw forecast:" in out and "predicted time" in out
    assert _cli("load", "forecast", "--store", path, "--app", "lu") == 0
    assert "postcast error" in capsys.readouterr().out


def test_observe_aggregate_and_duplicates(tmp_path, capsys):
    path, data = str(tmp_path / "s.db"), tmp_path / "runs.csv"
    grid = _grid()
    pd.concat([grid, grid.assign(time=grid["time"] * 1.5)]).to_csv(data, index=False)
    assert _cli("observe", "--store", path, "--app", "lu", "--aggregate", "min", str(data)) == 0
    assert "32 run(s) added" in capsys.readouterr().out
    assert _cli("observe", "--store", path, "--app", "lu", "--allow-duplicates", str(data)) == 0
    assert "update 2: 64 run(s) added" in capsys.readouterr().out
    assert len(S.runs(path, "lu")) == 96


def test_store_errors_are_one_line(tmp_path, capsys):
    typo = str(tmp_path / "typo.db")
    for argv in (["ranking", "--app", "lu"], ["runs", "--app", "lu"], ["load", "forecast"],
                 ["predict", "--app", "lu", "--n", "9000", "--p", "16"]):
        assert main([*argv, "--store", typo]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{typo}: no such store" in err
    assert not Path(typo).exists()  # a mistyped store is not created
    path, empty = str(tmp_path / "s.db"), tmp_path / "empty.csv"
    empty.write_text("")
    for argv, message in ([["load", "record", "--cpu", "0.5", "--at", at], "--at: expected a time"]
                          for at in ("nan", "inf", "-5")):
        assert main([*argv, "--store", path]) == 2 and message in capsys.readouterr().err
    assert not Path(path).exists()  # rejected before the store is opened
    assert main(["load", "record", "--store", path, "--cpu", "0.5", "--at", "5"]) == 0
    assert main(["load", "forecast", "--store", path, "--window", "-5"]) == 2
    assert "--window: expected a number of postcasts >= 1" in capsys.readouterr().err
    assert main(["observe", "--store", path, "--app", "lu", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty.csv: the file is empty" in err


def test_predict_from_the_store_uses_the_leader_that_observe_reports(tmp_path, capsys):
    """Issue 14: ``predict --store`` used the best-scored candidate while ``observe`` reported the
    selection rule's leader (the demo runs: two different formulas)."""
    from importlib.resources import files

    path = str(tmp_path / "s.db")
    demo = str(files("automodel") / "demo" / "cg_fast.csv")
    assert main(["observe", "--store", path, "--app", "cg", demo]) == 0
    leader = next(line for line in capsys.readouterr().out.splitlines() if "leader: T = " in line)
    assert main(["predict", "--store", path, "--app", "cg", "--n", "400000", "--p", "512"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "model: T = " + leader.split("leader: T = ")[1].split("   (was")[0]
    assert "90% band (one run): " in out
    # the time as fit prints one (4 significant digits, 3 for the band's ends), not '.6g' beside '.4g'
    from automodel.model.best_p import figure
    from automodel.store import leader_model

    at = {"n": [400000.0], "p": [512.0]}
    model = leader_model(path, "cg")
    (low,), (high,) = model.predict_interval(at, level=0.9)
    assert out.splitlines()[1:] == [f"predicted time at n = 400000, p = 512: {figure(model.predict(at)[0], 4)} s",
                                    f"90% band (one run): {figure(low)} to {figure(high)} s"]
    assert main(["predict", "--store", path, "--app", "cg", "--n", "400000", "--p", "512", "--rank", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] != out.splitlines()[0]  # rank 1 by score differs here
    # a value of an option refused as best-p refuses it, not as '<DataFrame>, row 0, column 'n''
    assert main(["predict", "--store", path, "--app", "cg", "--n", "-5", "--p", "2"]) == 2
    assert capsys.readouterr().err == "automodel: error: n must be a positive problem size, got -5\n"


BAD_TEMPLATE_OPTIONS = [  # (the table, what the one-line error says after the file name)
    ("[fit.template_options.kohashi]\nn_terms = -4", "kohashi: option n_terms must be a whole number from 2 to 6, "
                                                     "got -4"),
    ('[fit.template_options.kohashi]\nn_terms = "abc"', "kohashi.n_terms takes int, got 'abc'"),
    ("[fit.template_options.kohashi]\nnterms = 4", "template kohashi has no option 'nterms'"),
    ("[fit.template_options.kohashy]\nn_terms = 4", "options for unknown template 'kohashy'"),
]


def _space_file(tmp_path: Path, table: str) -> Path:
    from importlib.resources import files

    space = tmp_path / "space.toml"
    space.write_text((files("automodel") / "spaces" / "default.toml").read_text() + "\n" + table + "\n")
    return space


@pytest.mark.parametrize("table, message", BAD_TEMPLATE_OPTIONS)
def test_observe_refuses_a_space_with_a_bad_template_option_before_storing(table, message, tmp_path, capsys):
    """``observe --space FILE`` never runs the templates: a template option of FILE its template does not
    take was not checked and the runs were stored (exit 0). Now it is one line naming the file, exit 2,
    for a new application and for one the store has, and the store is left as it was."""
    path, data = str(tmp_path / "s.db"), tmp_path / "runs.csv"
    _grid().to_csv(data, index=False)
    space = _space_file(tmp_path, table)
    assert main(["observe", "--store", path, "--app", "new", "--space", str(space), str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"automodel: error: {space}: {message}") and err.count("\n") == 1
    assert not Path(path).exists()  # nothing stored, not even an empty store
    assert main(["observe", "--store", path, "--app", "lu", str(data)]) == 0
    capsys.readouterr()
    before = S.runs(path, "lu")
    more = tmp_path / "more.csv"
    _runs(3, 3).to_csv(more, index=False)
    for app in ("lu", "new"):
        assert main(["observe", "--store", path, "--app", app, "--space", str(space), str(more)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"automodel: error: {space}: {message}") and err.count("\n") == 1
    pd.testing.assert_frame_equal(S.runs(path, "lu"), before)
    with pytest.raises(StoreError, match="new"):  # the new application was not created
        S.runs(path, "new")
    assert main(["fit", str(data), "--quiet", "--space", str(space)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"automodel: error: {space}: {message}") and err.count("\n") == 1


def test_observe_refuses_a_space_naming_an_unknown_template(tmp_path, capsys):
    """A misspelt name in ``[fit] templates`` was caught only when a fit ran the templates: ``observe``
    stored the runs with exit 0. Now the space is refused where it is loaded, by the registry's table of
    names (no template module imported)."""
    path, data = str(tmp_path / "s.db"), tmp_path / "runs.csv"
    _grid().to_csv(data, index=False)
    space = _space_file(tmp_path, "")
    space.write_text(space.read_text().replace('templates = ["amdahl", ', 'templates = ["amdhal", ', 1))
    assert main(["observe", "--store", path, "--app", "lu", "--space", str(space), str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"automodel: error: {space}: unknown template(s) ['amdhal']") and err.count("\n") == 1
    assert not Path(path).exists()


def test_observe_takes_a_space_with_good_template_options(tmp_path, capsys):
    path, data = str(tmp_path / "s.db"), tmp_path / "runs.csv"
    _grid().to_csv(data, index=False)
    space = _space_file(tmp_path, '[fit.template_options.kohashi]\nn_terms = 4\npc_search = "bounded"\n'
                                  '[fit.template_options.hockney]\nbreakpoints = "paper"')
    assert main(["observe", "--store", path, "--app", "lu", "--space", str(space), str(data)]) == 0
    assert "32 run(s) added (new application: staged search)" in capsys.readouterr().out
    assert len(S.runs(path, "lu")) == 32


def test_fit_of_a_stored_application_chooses_as_fit_of_its_runs(tmp_path, capsys):
    """``fit --store S --app NAME`` fits the runs the application fits, read with the roles it was observed
    with (in seconds, as the store keeps them), and chooses what ``fit`` of the same runs chooses;
    FILE beside it, no application, or a role of its own are one-line errors."""
    path = str(tmp_path / "s.db")
    runs = _grid().rename(columns={"time": "wall_ms", "p": "ranks"})
    S.observe(path, "lu", runs, time="wall_ms", p="ranks")
    frame, roles = S.admitted_runs(path, "lu")
    assert list(frame.columns) == ["n", "ranks", "cpu", "bw", "wall_ms"] and len(frame) == 32
    assert roles["time"] == "wall_ms" and roles["p"] == "ranks" and frame.attrs["source"] == "application 'lu'"
    assert roles["unit"] == "s"  # observe stored the times in seconds
    direct = automodel.fit(runs.assign(wall_ms=runs["wall_ms"] / 1000), time="wall_ms", p="ranks", unit="s",
                           progress=False)
    assert main(["fit", "--store", path, "--app", "lu", "--top", "1", "-o", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    assert f"chosen model: T = {direct.best.formula}" in out and " s (90% band" in out
    assert automodel.load_model(tmp_path / "m.json").formula == direct.best.formula
    for argv, message in [(["x.csv", "--store", path, "--app", "lu"], "FILE or --store S --app NAME, not both"),
                          (["--store", path], "fit --store needs --app NAME"),
                          (["--store", path, "--app", "lu", "--p", "ranks"], "leave out --p"),
                          (["--store", path, "--app", "lu", "--unit", "ms"], "leave out --unit (the store keeps"),
                          ([], "fit needs FILE, or --store S --app NAME"),
                          (["--store", path, "--app", "nope"], "no application 'nope'")]:
        assert main(["fit", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
