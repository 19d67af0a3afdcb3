"""The figures: a model over n and p (runs, fit, extrapolation dashed, band, best p), the candidates
where they disagree, and ``automodel plot`` writing PNG, SVG and PDF."""

import matplotlib.figure
import matplotlib.image
import numpy as np
import pytest

import automodel
from automodel.cli import main
from automodel.output.plot import plot_campaign, plot_candidates, plot_model
from tests.conftest import make_runs


@pytest.fixture(scope="module")
def fitted():
    runs = make_runs(lambda n, p, c, b: 1e-6 * n ** 2 / p + 1e-3 * p, np.linspace(100, 800, 8), [1, 2, 4, 8])
    train, test = runs[runs["p"] <= 4], runs[runs["p"] > 4]
    return automodel.fit(train, progress=False), train, test


def _picture(path):
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400
    assert image[..., :3].std() > 0.05  # not a blank canvas
    return image


def test_plot_model_draws_runs_fit_band_and_best_p(fitted, tmp_path):
    result, train, test = fitted
    fig = plot_model(result.best, tmp_path / "m.png", runs=train, held_out=test, title="toy")
    _picture(tmp_path / "m.png")
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 2  # the figure, for a notebook


def test_plot_model_draws_into_the_axes_given(fitted):
    import matplotlib.pyplot as plt

    result, train, test = fitted
    fig, ax = plt.subplots()
    assert plot_model(result.best, runs=train, held_out=test, ax=ax) is fig
    assert ax.get_xlabel() == "p" and ax.lines and fig.axes == [ax]  # a single Axes: the p panel
    fig2, axes = plt.subplots(1, 2)
    plot_model(result.best, ax=axes)
    assert [a.get_xlabel() for a in axes] == ["n", "p"]
    with pytest.raises(ValueError, match="3 axes for the 2 panels"):
        plot_model(result.best, ax=plt.subplots(1, 3)[1])
    plt.close("all")


def test_process_counts_are_drawn_at_whole_numbers_only(fitted):
    """``over1(p)`` and ``ceiling(log2(p))`` have values at p = 1.5 that no run can have: the p panel
    draws every curve at whole process counts (all of them at small p), the n panel anywhere."""
    import matplotlib.pyplot as plt

    result, train, _ = fitted
    fig, axes = plt.subplots(1, 2)
    plot_model(result.best, runs=train, ax=axes)
    p_values = np.concatenate([line.get_xdata() for line in axes[1].lines if len(line.get_xdata()) > 2])
    assert np.all(p_values == np.round(p_values)) and {1.0, 2.0, 3.0, 4.0} <= set(p_values.tolist())
    n_values = np.concatenate([line.get_xdata() for line in axes[0].lines if len(line.get_xdata()) > 2])
    assert np.any(n_values != np.round(n_values))
    plt.close(fig)


def test_plot_model_without_runs_and_candidates(fitted, tmp_path):
    result, train, _ = fitted
    plot_model(result.best, tmp_path / "m.svg")
    text = (tmp_path / "m.svg").read_text()
    assert text.startswith("<?xml") and "<svg" in text
    _picture(plot_candidates(result.models[:4], tmp_path / "c.png", runs=train))


def test_plot_refuses_an_unknown_format(fitted, tmp_path):
    with pytest.raises(automodel.AutomodelError, match=r"m\.jpg: expected a file name ending in \.png, \.svg, \.pdf"):
        plot_model(fitted[0].best, tmp_path / "m.jpg")
    assert not (tmp_path / "m.jpg").exists()


def test_cli_plot(fitted, tmp_path, capsys):
    result, train, _ = fitted
    model = tmp_path / "model.json"
    result.best.save(model)
    runs = tmp_path / "runs.csv"
    train.to_csv(runs, index=False)
    assert main(["plot", str(model), str(runs), "-o", str(tmp_path / "fit.png")]) == 0
    _picture(tmp_path / "fit.png")
    assert main(["plot", str(model), "-o", str(tmp_path / "alt.pdf"), "--candidates"]) == 0
    assert (tmp_path / "alt.pdf").read_bytes().startswith(b"%PDF")
    assert "equivalent candidate(s)" in capsys.readouterr().out
    assert main(["plot", str(model), str(runs), "-o", str(tmp_path / "x.gif")]) == 2
    assert "expected a file name ending in .png" in capsys.readouterr().err
    train.drop(columns="p").to_csv(runs, index=False)
    assert main(["plot", str(model), str(runs), "-o", str(tmp_path / "fit.png")]) == 2
    assert "column 'p': missing" in capsys.readouterr().err


def test_plot_command_draws_a_kernel_and_the_runs_beyond_the_fit(fitted, tmp_path, capsys, monkeypatch):
    """A kernel of a models file is drawn with its own rows; runs beyond the training ranges are drawn
    as held out (open triangles), not as runs the fit saw."""
    import pandas as pd

    from automodel.output import plot as plot_mod
    from automodel.model_file import save_models

    result, train, test = fitted
    save_models({"solve": result.best, "halo": result.models[1]}, tmp_path / "models.json")
    rows = pd.concat([train.assign(kernel="solve"), test.assign(kernel="solve"), train.assign(kernel="halo")])
    rows.to_csv(tmp_path / "rows.csv", index=False)
    drawn = {}

    def spy(model, path, runs=None, held_out=None, **options):  # noqa: ANN001, ANN202
        drawn.update(model=model, runs=runs, held_out=held_out)
        return real(model, path, runs=runs, held_out=held_out, **options)

    real = plot_mod.plot_model
    monkeypatch.setattr(plot_mod, "plot_model", spy)
    argv = ["plot", str(tmp_path / "models.json"), str(tmp_path / "rows.csv"), "-o", str(tmp_path / "k.png")]
    assert main(argv) == 2  # two models: which one?
    assert "choose one with --kernel NAME" in capsys.readouterr().err
    assert main([*argv, "--kernel", "solve"]) == 0
    _picture(tmp_path / "k.png")
    assert drawn["model"].formula == result.best.formula
    assert len(drawn["runs"]) == len(train) and len(drawn["held_out"]) == len(test)  # p = 8: beyond the fit
    said = " ".join(capsys.readouterr().out.split())  # wrapped to 80 columns
    assert f"{len(test)} run(s) beyond the training ranges drawn as held out" in said


def test_plot_campaign_draws_the_band_per_step(tmp_path):
    import pandas as pd

    from automodel.errors import OutputError

    history = pd.DataFrame({"step": [0, 1], "core_hours": [1e-4, 3e-4], "predicted": [0.004, 0.007],
                            "lower": [0.001, 0.0065], "upper": [0.016, 0.0075]})
    out = plot_campaign(history, tmp_path / "band.png", truth=0.0071, until=0.15)
    assert matplotlib.image.imread(out).shape[1] > 300
    with pytest.raises(OutputError, match="missing lower"):
        plot_campaign(history.drop(columns="lower"), tmp_path / "x.png")
