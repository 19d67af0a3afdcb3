"""The store subcommands: observe, ranking, runs, predict from the store, load forecast."""

from __future__ import annotations

import argparse

from automodel import store as S
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
    more = tmp_path / "more.csv"
    bad = _runs(3, 3).rename(columns={"time": "secs"})
    bad.loc[2, ["n", "secs"]] = [4000.0, 500.0]
    bad.to_csv(more, index=False)
    assert _cli("observe", "--store", path, "--app", "lu", str(more)) == 0  # remembers the columns
    out = capsys.readouterr().out
    assert "flagged run" in out and "pruned" in out
    assert _cli("ranking", "--store", path, "--app", "lu", "--top", "3") == 0
    assert capsys.readouterr().out.count("\n") == 4
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
