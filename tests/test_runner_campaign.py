"""Tests of automodel.runner.campaign: resumable campaigns of a tiny fake application."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from automodel.errors import DataError
from automodel.runner.campaign import Campaign, columns_for, iter_rows, plan, run_campaign
from automodel.runner.grid import substitute
from automodel.runner.measure import STATUS_TIMEOUT, run_once


def test_plan_and_columns() -> None:
    campaign = Campaign(command="./app {n} {p} {rep} {index}", axes={"n": [1, 2], "p": [4]}, reps=2)
    assert plan(campaign) == [{"n": 1, "p": 4, "rep": 0, "index": 0}, {"n": 1, "p": 4, "rep": 1, "index": 1},
                              {"n": 2, "p": 4, "rep": 0, "index": 2}, {"n": 2, "p": 4, "rep": 1, "index": 3}]
    assert columns_for(campaign) == ["n", "p", "rep", "time", "cpu", "status", "error", "started"]
    loaded = Campaign(command="./app {n}", axes={"n": [1]}, sample_cpu=False, captures={"bw": "b=(\\S+)", "x": "x"})
    assert columns_for(loaded) == ["n", "rep", "time", "bw", "x", "status", "error", "started"]
    for bad in ({"reps": 0}, {"reps": 2.5}, {"timeout": 0.0}, {"time_regex": "("}, {"command": "./app {m}"}):
        with pytest.raises(DataError):
            Campaign(**{"command": "./app {n}", "axes": {"n": [1]}, **bad})


def test_no_shell_values_reach_program_literally(tmp_path: Path) -> None:
    echo = tmp_path / "echo_argv.py"
    echo.write_text("import sys, json; print(json.dumps(sys.argv[1:]))")
    marker = tmp_path / "pwned"
    hostile = [f"; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", "a b > c"]
    campaign = Campaign(command=f"{sys.executable} {echo} {{word}}", axes={"word": hostile}, sample_cpu=False,
                        captures={})  # not n: a problem size is a number
    out = tmp_path / "runs.csv"
    seen = []
    run_campaign(campaign, out, progress=False)
    for value in hostile:
        result = run_once(substitute(campaign.command, {"word": value}))
        seen.append(result.stdout.strip())
    assert not marker.exists()
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


def test_failure_and_timeout_are_recorded(app: str, tmp_path: Path) -> None:
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


def test_a_failed_runs_error_text_is_no_formula_nor_escape_in_the_csv(tmp_path: Path) -> None:
    """What a failed run printed last on stderr is its 'error' cell: a line that starts as a formula
    (Open MPI's banner of dashes, ``=HYPERLINK(...)``) was a formula in a spreadsheet, and an escape
    sequence reached the terminal of whoever printed the file."""
    loud = tmp_path / "loud.py"
    loud.write_text("import sys\nsys.stderr.write(sys.argv[1] + '\\x1b[31m\\n')\nsys.exit(1)\n")
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{sys.executable} {loud} {{word}}", axes={"word": ["=HYPERLINK(1)", "-----", "ok"]},
                        sample_cpu=False)
    run_campaign(campaign, out, progress=False)
    errors = {r["word"]: r["error"] for r in iter_rows(out)}
    assert errors == {"=HYPERLINK(1)": "'=HYPERLINK(1)\\x1b[31m", "-----": "'-----\\x1b[31m", "ok": "ok\\x1b[31m"}


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


def test_resume_from_a_csv_that_starts_with_a_byte_order_mark(app: str, tmp_path: Path) -> None:
    """A CSV of runs saved by Excel starts with a UTF-8 byte-order mark: it is read as every input is,
    the mark no part of the first column's name (its header was refused as differing from the campaign's)."""
    out = tmp_path / "runs.csv"
    campaign = Campaign(command=f"{app} {{n}} 1 print", axes={"n": [1, 2, 3]}, sample_cpu=False)
    run_campaign(campaign, out, progress=False)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"\xef\xbb\xbf" + b"".join(lines[:3]))  # the header and two runs, after a mark
    assert run_campaign(campaign, out, progress=False) == {"planned": 3, "skipped": 2, "ran": 1, "failed": 0}
    assert sorted(r["n"] for r in iter_rows(out)) == ["1", "2", "3"]
    assert run_campaign(campaign, out, progress=False, retry_failed=True)["ran"] == 0


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


def test_a_missing_working_directory_is_refused_before_any_run(tmp_path: Path) -> None:
    """``--cwd`` naming no folder made every run fail as 'cannot run ...: No such file or directory', as if
    the program were missing; it is refused before runs.csv exists."""
    with pytest.raises(DataError, match=r"^working directory .*nowhere: no such folder$"):
        Campaign(command="true {n}", axes={"n": [1]}, cwd=str(tmp_path / "nowhere"))


def test_another_file_as_output_is_refused_before_it_is_changed(tmp_path: Path) -> None:
    """A one-line file without a final newline (or any file whose first line is not this campaign's
    header) was cut to nothing as an 'interrupted last row', then filled with runs; binary bytes were a
    UnicodeDecodeError. It is refused, byte for byte unchanged."""
    campaign = Campaign(command="true {n}", axes={"n": [1]}, sample_cpu=False)
    for content in (b"my notes, no newline at the end", b"\xff\xfe binary\n", b"n,rep,time\n1,0,2\n"):
        out = tmp_path / "notes.txt"
        out.write_bytes(content)
        with pytest.raises(DataError, match=r"notes.txt, line 1: (columns|not UTF-8).*choose another output file"):
            run_campaign(campaign, out, progress=False)
        assert out.read_bytes() == content
