"""Tests of ``automodel run`` (automodel.cli.run): dry run, a campaign from the command line, then fit and store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from automodel.runner.campaign import iter_rows


def test_cli_dry_run_and_run(app: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from automodel.cli import main

    assert main(["run", "--cmd", f"{app} {{n}} {{p}} {{k}}", "--n", "10:30:3", "--p", "1,2",
                 "--param", "k=print", "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split("\t") == ["n", "p", "k", "rep", "command"]
    assert len(lines) == 1 + 6 and lines[-1].split("\t")[:3] == ["30", "2", "print"]
    out = tmp_path / "cli.csv"
    code = main(["run", "--cmd", f"{app} {{n}} {{p}} print", "--n", "10,20", "--p", "1", "--no-progress",
                 "--time-regex", r"time=(\S+)", "-o", str(out), "--no-fit", "--no-cpu"])
    assert code == 0 and len(list(iter_rows(out))) == 2
    assert main(["run", "--cmd", "x {n}", "--n", "1", "--param", "k", "--dry-run"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err
    assert main(["run", "--cmd", f"{app} 666 1", "--n", "1", "--no-progress", "-o", str(tmp_path / "bad.csv"),
                 "--no-cpu"]) == 1


def test_cli_run_then_fit_and_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("automodel.fitting")
    from automodel.cli import main

    app = tmp_path / "model_app.py"
    app.write_text("import sys; n, p = float(sys.argv[1]), float(sys.argv[2]); "
                   "print(f'time={1e-6 * n * n / p + 1e-4 * p:.9f}')")
    args = ["run", "--cmd", f"{sys.executable} {app} {{n}} {{p}}", "--n", "100:800:8", "--p", "1,2,4,8",
            "--time-regex", r"time=(\S+)", "--no-cpu", "--no-progress", "-o", str(tmp_path / "r.csv")]
    assert main(args + ["--store", str(tmp_path / "s.db"), "--app", "toy"]) == 0
    out = capsys.readouterr().out
    assert "32 runs done (0 failed)" in out
    assert "toy: update" in out  # the store's observe report
    assert "chosen model: T = 1.0e-6*n^2/p + 0.0001*p" in out
