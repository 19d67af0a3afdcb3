"""automodel fit: the leaderboard, the chosen formula and the selection option."""

from automodel.cli import main


def test_fit_prints_leaderboard_and_formula(runs_csv, model_json, capsys):
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "leaderboard" in out and "chosen model: T =" in out and "best process count" in out
    assert model_json.exists()


def test_fit_selection_option(runs_csv, capsys):
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3", "--selection", "best"]) == 0
    assert "why: rank 1, the best rel_s" in capsys.readouterr().out
    assert main(["fit", str(runs_csv), "--quiet", "--top", "3", "--selection", "simplest"]) == 0
    assert "why: rank" in capsys.readouterr().out
