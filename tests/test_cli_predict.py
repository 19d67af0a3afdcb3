"""automodel predict from a model file: predictions, and a missing column as a one-line error."""

import numpy as np
import pandas as pd

from automodel.cli import main


def test_predict_writes_a_column_of_predictions(runs_csv, model_json, tmp_path):
    out_csv = tmp_path / "pred.csv"
    assert main(["predict", str(model_json), str(runs_csv), "-o", str(out_csv)]) == 0
    pred = pd.read_csv(out_csv)
    assert "predicted" in pred.columns and len(pred) == 56
    assert np.median(np.abs(pred["predicted"] / pred["time"] - 1)) < 0.05


def test_predict_missing_column(tmp_path, model_json, capsys):
    data = tmp_path / "rows.csv"
    data.write_text("n,cpu\n100,1\n")
    assert main(["predict", str(model_json), str(data)]) == 2
    assert "column 'p': missing" in capsys.readouterr().err
