"""automodel demo: the packaged dataset end to end, with a plot."""

from automodel.cli import main


def test_demo_prints_the_whole_job_and_writes_the_plot(tmp_path, capsys):
    import shutil

    from automodel.cli.demo import DEMO_DATA
    from automodel.terminal import WIDTH

    png = tmp_path / "demo.png"
    data = tmp_path / "site-packages-of-a-virtual-environment" / "automodel" / "demo" / "cg_fast.csv"
    data.parent.mkdir(parents=True)
    shutil.copy(DEMO_DATA, data)  # an installed package's path: the first line was 89 columns long
    assert main(["demo", "--plot", str(png), "--top", "3", "--data", str(data)]) == 0
    out, err = capsys.readouterr()
    # the best p is searched up to the largest p drawn (256), as the plot and the page search it: the text
    # said p = 64 "at the upper end of the searched range" beside a plot that marked p = 70
    assert "best process count at n = 400000: p = 70 " in out and "upper end of the searched range" not in err
    assert all(len(line) <= WIDTH for line in out.splitlines() if str(tmp_path) not in line)  # a path alone
    assert out.startswith("demo data:\n  " + str(data)) or len(f"demo data: {data} (36 runs)") <= WIDTH
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
