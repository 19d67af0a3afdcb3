"""Every command's text within 80 columns on the bundled data, unless ``--wide`` (issue 32, item 7).

The data are the ones a checkout or a wheel carries (the demo runs, examples/data, benchmarks/data);
machine-readable output is not text for reading and is not held to the width: ``--json``, ``show
--format json``, CSV on standard output, ``run --dry-run``'s tab-separated commands, and the one-line
error of bad input.
"""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from automodel.cli import build_parser, main
from automodel.terminal import WIDTH

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "automodel" / "demo" / "cg_fast.csv"
SWEEPS = ROOT / "examples" / "data" / "sweeps"
LOADED = ROOT / "examples" / "data" / "jacobi_loaded.csv"
GROMACS = ROOT / "benchmarks" / "data" / "real_public" / "hecbiosim_gromacs_archer2.csv"
OSU = ROOT / "benchmarks" / "data" / "smpi_others" / "osu_allreduce_fast.csv"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> tuple[Path, dict[str, list[str]]]:
    """A folder with the demo runs, a model file of them and a models file of ten bundled sweeps named
    as a profile names its kernels (call paths longer than a line), and the lines the ``fit`` and
    ``kernels`` commands that made them printed."""
    folder = tmp_path_factory.mktemp("width")
    (folder / "runs.csv").write_text(DEMO.read_text())
    frames = [pd.read_csv(f)[["n", "p", "time"]].assign(kernel=f"main->MPI_Comm_split->solve->{f.stem}"
                                                        "->exchange_halo_and_reduce [time]")
              for f in sorted(SWEEPS.glob("*.csv"))]
    pd.concat(frames).to_csv(folder / "many.csv", index=False)
    pd.DataFrame({"n": [800000, 800000], "p": [64, 128]}).to_csv(folder / "larger.csv", index=False)
    printed = {}
    for argv in (["fit", str(folder / "runs.csv"), "-o", str(folder / "model.json"), "--top", "12"],
                 ["kernels", str(folder / "many.csv"), "--out", str(folder / "models.json")]):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            assert main(argv) == 0
        printed[" ".join(argv[:2])] = (out.getvalue() + err.getvalue()).splitlines()
    return folder, printed


def run(argv: list[str], capsys) -> list[str]:  # noqa: ANN001
    """The lines ``automodel ARGV`` prints on standard output and standard error (exit status 0)."""
    capsys.readouterr()
    assert main(argv) == 0, argv
    captured = capsys.readouterr()
    return (captured.out + captured.err).splitlines()


def commands(w: Path) -> list[list[str]]:
    """One command line of every command that prints text, on the bundled data."""
    runs, model, models, store = str(w / "runs.csv"), str(w / "model.json"), str(w / "models.json"), str(w / "s.db")
    return [
        ["fit", str(LOADED), "--templates", "none", "--quiet"],
        ["fit", str(GROMACS), "--n", "atoms", "--p", "ranks", "--param", "steps", "--ignore", "split", "source",
         "--templates", "none"],
        ["fit", str(OSU), "--unit", "us", "--ignore", "split", "source", "--templates", "none"],
        ["predict", model, runs], ["predict", model, str(w / "larger.csv"), "--parts"], ["predict", models, str(w / "many.csv")],
        *(["show", model, "--format", f] for f in ("text", "latex", "python", "c")),
        ["show", models], ["show", models, "--format", "python"],
        ["best-p", model, "--n", "800000", "--p-max", "1024"],
        ["evaluate", model, runs], ["evaluate", models, str(w / "many.csv")],
        ["plot", model, runs, "-o", str(w / "fit.png")],
        ["plot", models, "--kernel", next(iter(pd.read_csv(w / "many.csv")["kernel"])), "-o", str(w / "k.png")],
        ["suggest", runs, "--target", "n=800000,p=256"],
        ["observe", "--store", store, "--app", "cg", runs],
        ["ranking", "--store", store, "--app", "cg"], ["ranking", "--store", store, "--app", "cg", "--history"],
        ["ranking", "--store", store, "--app", "cg", "--pruned", "--top", "3"],
        ["runs", "--store", store, "--app", "cg"],
        ["load", "record", "--store", store, "--cpu", "0.5", "--bw", "0.8"], ["load", "forecast", "--store", store],
        ["predict", "--store", store, "--app", "cg", "--n", "800000", "--p", "64"],
        ["templates"], ["demo", "--plot", str(w / "demo.png")],
        ["run", "--cmd", f"{sys.executable} -c pass {{n}} {{p}}", "--n", "1,2", "--p", "1,2", "--no-fit",
         "-o", str(w / "app.csv")],
    ]


def test_every_command_within_80_columns(work, capsys):
    folder, printed = work
    wide = {name: line for name, lines in printed.items() for line in lines if len(line) > WIDTH}
    assert len(printed["kernels " + str(folder / "many.csv")]) > 10
    for argv in commands(folder):
        lines = run(argv, capsys)
        wide.update({" ".join(argv[:2]): line for line in lines if len(line) > WIDTH})
    assert not wide, wide


def test_help_within_80_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    parser = build_parser()
    names = [a for a in parser._subparsers._group_actions[0].choices]
    for name in [None, *names, "load record", "load forecast"]:
        argv = [*(name.split() if name else []), "--help"]
        with pytest.raises(SystemExit):
            main(argv)
        long = [line for line in capsys.readouterr().out.splitlines() if len(line) > WIDTH]
        assert not long, (name, long)


def test_wide_prints_whole_lines(work, capsys):
    models = str(work[0] / "models.json")
    narrow = run(["show", models], capsys)
    lines = run(["show", models, "--wide"], capsys)
    assert max(map(len, lines)) > WIDTH and len(lines) == 10 < len(narrow)  # one line per kernel: name: formula
    assert all("->exchange_halo_and_reduce [time]: " in line for line in lines)
