"""Tests of automodel.runner and the run subcommand on a tiny fake application."""

from __future__ import annotations

import math
import sys
import textwrap
import time
from pathlib import Path

import pytest

from automodel.errors import DataError
from automodel.runner import (
    STATUS_NO_TIME,
    STATUS_NOT_FOUND,
    STATUS_TIMEOUT,
    Campaign,
    CpuTimes,
    expand_grid,
    free_cpu_fraction,
    iter_rows,
    parse_values,
    read_cpu_times,
    run_campaign,
    run_once,
    substitute,
)

FAKE_APP = textwrap.dedent(
    """
    import sys, time
    n, p = float(sys.argv[1]), float(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "sleep"
    if n == 666:
        sys.stderr.write("line one\\nboom: bad n\\n")
        sys.exit(3)
    if n == 999:
        time.sleep(30)
    t = 0.002 * n / p + 0.01
    if mode == "sleep":
        time.sleep(t)
    print(f"comp={0.002 * n / p:.6f} time={t:.6f}")
    """
)


@pytest.fixture()
def app(tmp_path: Path) -> str:
    path = tmp_path / "fake_app.py"
    path.write_text(FAKE_APP)
    return f"{sys.executable} {path}"


def test_parse_values_ranges_and_lists() -> None:
    assert parse_values("1000:8000:8", "n") == [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]
    assert parse_values("1:256:*2", "p") == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert parse_values("10:1000:3:log", "n") == [10, 100, 1000]
    assert parse_values("0:1:+0.25", "x") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_values("1,2,4,8", "p") == [1, 2, 4, 8]
    assert parse_values("0.5,fast", "mode") == [0.5, "fast"]
    assert parse_values("7", "n") == [7]
    for bad in ["", "1:2", "a:5:2", "1:10:0", "1:10:*1", "10:1:+1", "1,,2", "0:10:3:log"]:
        with pytest.raises(DataError):
            parse_values(bad, "n")


def test_expand_grid_order_and_names() -> None:
    grid = expand_grid({"n": [1, 2], "p": [1, 4], "k": ["a"]})
    assert [tuple(g.values()) for g in grid] == [(1, 1, "a"), (1, 4, "a"), (2, 1, "a"), (2, 4, "a")]
    with pytest.raises(DataError, match="reserved"):
        expand_grid({"rep": [1]})
    with pytest.raises(DataError, match="no values"):
        expand_grid({"n": []})


def test_substitute_whole_arguments_and_unknown_placeholder() -> None:
    argv = substitute("./app -n {n} --p={p} 'a b'", {"n": 10, "p": 2.0})
    assert argv == ["./app", "-n", "10", "--p=2", "a b"]
    assert substitute("x {n}", {"n": "two words"}) == ["x", "two words"]
    with pytest.raises(DataError, match="unknown placeholder"):
        substitute("./app {m}", {"n": 1})


def test_no_shell_values_reach_program_literally(tmp_path: Path) -> None:
    echo = tmp_path / "echo_argv.py"
    echo.write_text("import sys, json; print(json.dumps(sys.argv[1:]))")
    marker = tmp_path / "pwned"
    hostile = [f"; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", "a b > c"]
    campaign = Campaign(command=f"{sys.executable} {echo} {{n}}", axes={"n": hostile}, sample_cpu=False,
                        captures={})
    out = tmp_path / "runs.csv"
    seen = []
    run_campaign(campaign, out, progress=False)
    for value in hostile:
        result = run_once(substitute(campaign.command, {"n": value}))
        seen.append(result.stdout.strip())
    assert not marker.exists()
    import json
    assert [json.loads(s) for s in seen] == [[v] for v in hostile]
    assert [r["status"] for r in iter_rows(out)] == ["0"] * 4


def test_campaign_wall_time_and_columns(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} {{p}}", axes={"n": [50, 150], "p": [1, 2]}, reps=2,
                        captures={"comp": r"comp=(\S+)"})
    counts = run_campaign(campaign, out, progress=False)
    assert counts == {"planned": 8, "skipped": 0, "ran": 8, "failed": 0}
    rows = list(iter_rows(out))
    assert list(rows[0]) == ["n", "p", "rep", "time", "cpu", "comp", "status", "error", "started"]
    for r in rows:
        expected = 0.002 * int(r["n"]) / int(r["p"]) + 0.01
        assert expected <= float(r["time"]) < expected + 1.0  # wall time includes interpreter start
        assert 0.0 < float(r["cpu"]) <= 1.0
        assert float(r["comp"]) == pytest.approx(0.002 * int(r["n"]) / int(r["p"]), abs=1e-6)
        assert r["status"] == "0" and r["error"] == ""
    assert [(r["n"], r["p"], r["rep"]) for r in rows][:3] == [("50", "1", "0"), ("50", "1", "1"), ("50", "2", "0")]


def test_time_regex_parses_printed_time(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} {{p}} print", axes={"n": [100, 400], "p": [1, 4]},
                        time_regex=r"time=(\S+)", sample_cpu=False)
    run_campaign(campaign, out, progress=False)
    for r in iter_rows(out):
        assert float(r["time"]) == pytest.approx(0.002 * int(r["n"]) / int(r["p"]) + 0.01, abs=1e-6)
    missing = run_once(substitute(f"{app} 1 1 print", {}), time_regex=r"walltime=(\S+)")
    assert missing.status == STATUS_NO_TIME and math.isnan(missing.time)


def test_failure_timeout_and_missing_program_are_recorded(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} 1 print", axes={"n": [10, 666, 999, 20]}, timeout=1.0,
                        sample_cpu=False)
    t0 = time.perf_counter()
    counts = run_campaign(campaign, out, progress=False)
    assert time.perf_counter() - t0 < 10
    assert counts["failed"] == 2
    rows = {r["n"]: r for r in iter_rows(out)}
    assert rows["666"]["status"] == "3" and "boom: bad n" in rows["666"]["error"] and rows["666"]["time"] == ""
    assert rows["999"]["status"] == str(STATUS_TIMEOUT) and "timed out" in rows["999"]["error"]
    assert rows["10"]["status"] == "0" and rows["20"]["status"] == "0"
    missing = run_once(["/nonexistent/app", "1"])
    assert missing.status == STATUS_NOT_FOUND and "cannot run" in missing.error


def test_resume_after_interruption(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} {{p}} print", axes={"n": [1, 2, 3], "p": [1, 2]},
                        sample_cpu=False)
    written = []

    def interrupt(row: dict[str, str]) -> None:
        written.append(row)
        if len(written) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_campaign(campaign, out, progress=False, on_result=interrupt)
    assert len(list(iter_rows(out))) == 3
    with open(out, "a") as fh:  # a row cut in the middle by a crash
        fh.write("3,2,0,0.0")
    counts = run_campaign(campaign, out, progress=False)
    assert counts == {"planned": 6, "skipped": 3, "ran": 3, "failed": 0}
    rows = list(iter_rows(out))
    assert sorted((r["n"], r["p"]) for r in rows) == sorted((str(n), str(p)) for n in (1, 2, 3) for p in (1, 2))
    again = run_campaign(campaign, out, progress=False)
    assert again["ran"] == 0


def test_retry_failed_and_header_mismatch(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} 1 print", axes={"n": [666, 5]}, sample_cpu=False)
    run_campaign(campaign, out, progress=False)
    assert run_campaign(campaign, out, progress=False)["ran"] == 0
    assert run_campaign(campaign, out, progress=False, retry_failed=True) == {
        "planned": 2, "skipped": 1, "ran": 1, "failed": 1}
    assert len(list(iter_rows(out))) == 2
    other = Campaign(command=f"{app} {{n}} {{p}}", axes={"n": [1], "p": [1]}, sample_cpu=False)
    with pytest.raises(DataError, match="differ"):
        run_campaign(other, out, progress=False)


def test_free_cpu_fraction_and_proc_stat(tmp_path: Path) -> None:
    before, after = CpuTimes(idle=1000, total=2000), CpuTimes(idle=1100, total=2400)
    assert free_cpu_fraction(before, after, own_seconds=0.0, clk_tck=100) == pytest.approx(0.25)
    # the run's own 2 s (200 ticks) of CPU do not count as load
    assert free_cpu_fraction(before, after, own_seconds=2.0, clk_tck=100) == pytest.approx(0.75)
    assert free_cpu_fraction(before, after, own_seconds=9.0, clk_tck=100) == 1.0
    assert math.isnan(free_cpu_fraction(before, before, 0.0, 100))
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 1 5 80 4 0 0 0 0 0\ncpu0 5 0 2 40 2 0 0 0 0 0\n")
    assert read_cpu_times(stat) == CpuTimes(idle=84, total=100)
    assert read_cpu_times(tmp_path / "missing") is None


def test_bw_probe_and_load_columns(app: str, tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import sys; print('measured bw=%s' % (1.0 / (1 + int(sys.argv[1]))))")
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} 1 print", axes={"n": [1, 2, 3]},
                        bw_probe=f"{sys.executable} {probe} {{index}}")
    run_campaign(campaign, out, progress=False)
    rows = list(iter_rows(out))
    assert [float(r["bw"]) for r in rows] == pytest.approx([1.0, 0.5, 1 / 3])
    assert all(0 < float(r["cpu"]) <= 1 for r in rows)
    with pytest.raises(DataError, match="bw probe"):
        Campaign(command="x {n}", axes={"n": [1]}, bw_probe="probe {m}")


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
