"""automodel demo: the packaged dataset end to end, with a plot."""

from automodel.cli import main


def test_demo_prints_the_whole_job_and_writes_the_plot(tmp_path, capsys):
    png = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(png), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "demo data:" in out and "chosen model: T = " in out and "best process count" in out
    assert png.stat().st_size > 10_000
    page = (tmp_path / "demo.html").read_text(encoding="utf-8")  # the fit's report beside the plot
    assert "report written to" in out and str(tmp_path / "demo.html") in out  # a long path on a line of its own
    assert 'id="held-out"' in page and "<math" in page


def test_a_plot_name_the_demo_cannot_draw_is_refused_before_the_search(tmp_path, capsys):
    """--plot demo.html was refused only after the search had run and its results had been printed."""
    assert main(["demo", "--plot", str(tmp_path / "demo.html")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "expected a file name ending in .png" in captured.err
    assert list(tmp_path.iterdir()) == []
