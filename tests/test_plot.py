"""The model plot: a PNG of time against n per process count and against p, extrapolation dashed."""

import matplotlib.image
import numpy as np

import automodel
from automodel.plot import plot_model


def test_plot_writes_a_picture(tmp_path):
    from tests.conftest import make_runs

    runs = make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * p, np.linspace(100, 800, 8), [1, 2, 4, 8])
    train, test = runs[runs["p"] <= 4], runs[runs["p"] > 4]
    model = automodel.fit(train, progress=False).best
    path = plot_model(model, train, tmp_path / "m.png", test=test, title="toy")
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400
    assert image[..., :3].std() > 0.05  # not a blank canvas
