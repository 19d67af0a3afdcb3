"""automodel show and best-p on a model file."""

import json

from automodel.cli import main
from automodel.model_file import load_model


def test_show_every_format_and_best_p(model_json, capsys):
    model = load_model(model_json)
    shown = {}
    for fmt in ("text", "latex", "python", "c", "json"):
        assert main(["show", str(model_json), "--format", fmt]) == 0
        shown[fmt] = capsys.readouterr().out
    assert json.loads(shown["json"])["formula"] == model.formula
    assert "def predicted_time(n, p):" in shown["python"] and "double predicted_time(double n, double p)" in shown["c"]
    assert r"\log_{2}" in shown["latex"] and "log2(p)" in shown["text"]
    assert main(["best-p", str(model_json), "--n", "5000", "--p-max", "256"]) == 0
    p, t = model.best_p(n=5000, p_max=256)
    assert capsys.readouterr().out.startswith(f"best p = {p}")
