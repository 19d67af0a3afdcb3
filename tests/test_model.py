"""The fitted model: the Core protocol, predictions, exports, the best process count."""

import subprocess
import sys

import numpy as np
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
