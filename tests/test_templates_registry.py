"""Every registered template loads back through the model file format (the registry's loaders)."""

import numpy as np
import pandas as pd
import pytest

from automodel.model import Model
from automodel.templates import TEMPLATES, describe


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(4)
    n, p = np.meshgrid([1e3, 2e3, 4e3, 8e3, 16e3], [1.0, 2.0, 4.0, 8.0, 16.0])
    n, p = n.ravel(), p.ravel()
    t = (1e-9 * n ** 2 / p + 1e-5 * n * np.log2(p) + 0.01) * (1 + 0.01 * rng.standard_normal(n.size))
    return pd.DataFrame({"n": n, "p": p, "time": t})


@pytest.mark.parametrize("name", sorted(n for n in TEMPLATES if n not in ("fim_com",)))
def test_template_round_trips_through_model_json(frame, name):
    template = TEMPLATES[name]
    reason = template.applicable(frame)
    if reason is not None:
        assert reason.startswith("not applicable")
        return
    fitted = template.fit(frame)
    model = Model(fitted, ("n", "p"), {"n": "n", "p": "p", "time": "time"})
    back = Model.from_dict(model.to_dict())
    assert np.array_equal(back.predict(frame), model.predict(frame))


def test_describe_lists_every_template():
    assert {row["name"] for row in describe()} == set(TEMPLATES)
