"""The fitted model: the Core protocol, predictions, exports, the best process count."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.model import Core, TermModel


def test_best_p_is_argmin_over_integers(fitted):
    model = fitted[0].best
    p, t = model.best_p(n=8000, p_max=512)
    ps = np.arange(1, 513)
    times = model.predict({"n": np.full(512, 8000.0), "p": ps.astype(float)})
    assert p == ps[np.argmin(times)] and t == pytest.approx(times.min())


def test_term_model_is_a_core_and_model_imports_no_template(fitted):
    core = fitted[0].best.core
    assert isinstance(core, TermModel) and isinstance(core, Core) and fitted[0].best.name == "searched"
    probe = "import sys, automodel.model; print(any(m.startswith('automodel.templates') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert not hasattr(automodel.model, "TEMPLATE_LOADERS") and not hasattr(automodel.model, "load_model")


def test_cause9_predict_never_returns_a_non_finite_time_silently():
    """Issue 17, cause 9: ``predict`` returned NaN (a fractional power of a negative offset) or inf (an
    exponent of 1e30 far outside the training range) for loaded models, without a word."""
    from automodel.space.parse import parse_term
    core = TermModel((parse_term("n^(1000)"),), (1.0,))
    model = automodel.Model(core, params=("n",), roles={"n": "size"}, ranges={"n": [1.0, 2.0]})
    assert model.predict({"n": [1.5]}).tolist() == [1.5 ** 1000]
    with pytest.raises(automodel.DataError, match=r"^runs.csv, row 3: the model predicts no finite time at "
                                                  r"size = 1e\+06 \(got inf; trained on size in \[1, 2\]\)$"):
        model.predict(pd.DataFrame({"size": [1.5, 1e6]}), source="runs.csv")
    with pytest.raises(automodel.DataError, match=r"<DataFrame>, row 1: .*got inf"):
        model.predict(pd.DataFrame({"n": [1.5, 1e6]}))
