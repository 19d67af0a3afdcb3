"""Tests of automodel.runner.measure: one timed run, the free CPU fraction, the bandwidth probe.

The fake application and its fixture ``app`` (tests/conftest.py) are shared with the campaign and
``automodel run`` tests.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest

from automodel.runner.grid import substitute
from automodel.runner.measure import (
    STATUS_NO_TIME,
    STATUS_NOT_FOUND,
    STATUS_TIMEOUT,
    CpuTimes,
    free_cpu_fraction,
    probe_bandwidth,
    read_cpu_times,
    run_once,
)

def test_run_once_time_regex_and_missing_program(app: str) -> None:
    printed = run_once(substitute(f"{app} 100 4 print", {}), time_regex=r"time=(\S+)", captures={"comp": r"comp=(\S+)"})
    assert printed.status == 0 and printed.time == pytest.approx(0.06, abs=1e-6)
    assert printed.captured == {"comp": pytest.approx(0.05, abs=1e-6)}
    missing = run_once(substitute(f"{app} 1 1 print", {}), time_regex=r"walltime=(\S+)")
    assert missing.status == STATUS_NO_TIME and math.isnan(missing.time)
    missing = run_once(["/nonexistent/app", "1"])
    assert missing.status == STATUS_NOT_FOUND and "cannot run" in missing.error


def test_run_once_failure_and_timeout(app: str) -> None:
    failed = run_once(substitute(f"{app} 666 1 print", {}))
    assert failed.status == 3 and "boom: bad n" in failed.error and math.isnan(failed.time)
    t0 = time.perf_counter()
    hung = run_once(substitute(f"{app} 999 1 print", {}), timeout=0.5)
    assert time.perf_counter() - t0 < 10
    assert hung.status == STATUS_TIMEOUT and "timed out" in hung.error and math.isnan(hung.time)


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


def test_probe_bandwidth_reads_a_fraction_or_says_why_not() -> None:
    def probe(code: str) -> tuple[float, str]:
        return probe_bandwidth([sys.executable, "-c", code])

    assert probe("print('link 3 of 4: bw = 0.25 measured')") == (0.25, "")
    assert probe("print('free: 0.5')") == (0.5, "")  # no bw=: the last number printed
    value, note = probe("print('bw=3')")
    assert math.isnan(value) and "no fraction in (0, 1]" in note
    value, note = probe("import sys; sys.exit(4)")
    assert math.isnan(value) and note.startswith("bw probe failed (4)")


def test_a_program_the_system_cannot_execute_is_a_failed_run(tmp_path: Path) -> None:
    """A file with the executable bit but no program in it (no ``#!`` line) raised ``OSError: [Errno 8]
    Exec format error`` out of the campaign, after runs.csv was created."""
    from automodel.runner.measure import STATUS_NOT_EXECUTABLE

    text = tmp_path / "app.txt"
    text.write_text("not a program\n")
    text.chmod(0o755)
    result = run_once([str(text)])
    assert result.status == STATUS_NOT_EXECUTABLE and result.error == f"cannot run '{text}': Exec format error"


def test_free_cpu_from_the_load_average_where_there_is_no_proc_stat(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    """macOS and the BSDs have no ``/proc/stat``: the campaign records ``1 - load / cores`` instead of
    nothing (issue 32; the standard library's ``os.getloadavg``, no new dependency)."""
    import os

    from automodel.runner import campaign as campaign_mod
    from automodel.runner.measure import free_cpu_from_load

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    assert free_cpu_from_load() == pytest.approx(0.75)
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 1.0, 1.0))
    assert free_cpu_from_load() == 0.01
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 1.0, 1.0))
    monkeypatch.setattr(campaign_mod, "read_cpu_times", lambda: None)
    out = tmp_path / "runs.csv"
    campaign_mod.run_campaign(campaign_mod.Campaign(command="true {n}", axes={"n": [1]}), out, progress=False)
    assert "0.5," in out.read_text().splitlines()[1]
