"""Issue 31, causes 5-7 and 9 for ``automodel run``: no wait without a bound (a daemon holding the run's
pipes, a run printing without end), one campaign at a time on one CSV, and a write that fails (a full
disk) is one line and leaves no partial row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from automodel.runner.campaign import iter_rows
from automodel.runner.measure import MAX_STDOUT_BYTES, PIPE_GRACE_S, STATUS_TIMEOUT, run_once

#: a program that leaves a daemon (its own session, so no kill of the run's group reaches it) holding
#: its stdout and stderr for 30 s, writes the daemon's pid to argv[1], then sleeps argv[2] seconds
DAEMON = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        open(sys.argv[1], "w").write(str(os.getpid()))
        time.sleep(30)
        os._exit(0)
    time.sleep(0.2)
    print("time=0.5", flush=True)
    time.sleep(float(sys.argv[2]))
""")


def _run_leaving_daemon(tmp_path: Path, sleep: float, timeout: float | None):
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    pid_file = tmp_path / "daemon.pid"
    t0 = time.perf_counter()
    try:
        result = run_once([sys.executable, str(script), str(pid_file), str(sleep)], timeout=timeout,
                          time_regex=r"time=(\S+)")
        return result, time.perf_counter() - t0
    finally:
        for _ in range(50):
            if pid_file.exists() and pid_file.read_text():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
                break
            time.sleep(0.02)


def test_a_timeout_returns_when_a_daemon_holds_the_pipes(tmp_path: Path) -> None:
    result, took = _run_leaving_daemon(tmp_path, sleep=20, timeout=0.5)
    assert result.status == STATUS_TIMEOUT and "timed out after 0.5 s" in result.error
    assert took < 0.5 + PIPE_GRACE_S + 1.0
    assert 0.5 <= result.wall < 1.0


def test_a_run_that_exits_leaving_a_daemon_is_measured_and_returns(tmp_path: Path) -> None:
    result, took = _run_leaving_daemon(tmp_path, sleep=0, timeout=None)
    assert result.status == 0 and result.time == 0.5
    assert took < PIPE_GRACE_S + 1.5 and result.wall < 1.0


def test_the_output_a_run_prints_is_kept_within_a_bound() -> None:
    program = ("import sys\nblock = b'x' * (1 << 20) + b'\\n'\nfor _ in range(64): sys.stdout.buffer.write(block)\n"
               "print('time=0.25')")  # 64 MiB printed
    result = run_once([sys.executable, "-c", program], time_regex=r"time=(\S+)")
    assert result.status == 0 and result.time == 0.25
    assert len(result.stdout) < MAX_STDOUT_BYTES + 200


def _cli(*args: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-m", "automodel", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_two_campaigns_on_one_csv_record_each_run_once(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    # each run sleeps 0.002 n / 0.1 + 0.01 s (0.4 to 1.6 s): the first campaign still holds the lock when the
    # second, a new interpreter, gets to it on a loaded machine (with p = 1 it lost that race at load 10)
    args = ("run", "--cmd", f"{app} {{n}} 0.1", "--n", "20,40,60,80", "--p", "1", "--no-fit",
            "--no-progress", "--no-cpu", "-o", str(out))
    first = _cli(*args)
    deadline = time.monotonic() + 30
    while not out.exists():  # the first campaign holds the lock once it has created the file
        assert first.poll() is None and time.monotonic() < deadline, "the first campaign made no file"
        time.sleep(0.01)
    second = _cli(*args)
    _, err = second.communicate(timeout=30)
    assert first.wait(timeout=30) == 0
    assert second.returncode == 2 and err.count("\n") == 1
    assert f"{out}: another automodel run (pid {first.pid}) is writing it" in err
    text = out.read_text()
    assert text.count("n,p,rep,time") == 1
    assert [r["n"] for r in iter_rows(out)] == ["20", "40", "60", "80"]


def _limit_file_size(limit: int):
    def limit_it() -> None:  # a full disk, as the write sees it: EFBIG past the limit
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_it


def test_a_full_disk_is_one_line_and_leaves_whole_rows(app: str, tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    args = ("run", "--cmd", f"{app} {{n}} 1", "--n", "20,40,60,80", "--p", "1", "--no-fit", "--no-progress",
            "--no-cpu", "-o", str(out))
    proc = _cli(*args, preexec_fn=_limit_file_size(150))  # the header and about two rows
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith(f"automodel: error: {out}: cannot be written (file too large)")
    text = out.read_text()
    assert text.endswith("\n") and all(line.count(",") == 6 for line in text.splitlines())
    done = [r["n"] for r in iter_rows(out)]
    assert 1 <= len(done) < 4
    assert _cli(*args).wait(timeout=30) == 0  # the disk has room again: the campaign resumes
    assert [r["n"] for r in iter_rows(out)] == ["20", "40", "60", "80"]


def test_a_damaged_or_special_output_file_is_one_line(tmp_path: Path, capsys) -> None:
    """The CSV of an earlier campaign with a cell beyond the csv module's limit, or bytes that are not
    UTF-8 after the header, was a csv.Error or UnicodeDecodeError traceback; a FIFO given as -o waited
    for a reader for ever. The file is left as it was."""
    from automodel.cli import main

    header = "n,p,rep,time,status,error,started\n"
    args = ["run", "--cmd", "true {n} {p}", "--n", "1,2", "--p", "1", "--no-fit", "--no-progress", "--no-cpu", "-o"]
    for name, tail, message in [
            ("long.csv", '"' + "x" * 200_000 + '"\n', "long.csv, line 2: not a row of a CSV of runs (field larger "
                                                      "than field limit (131072))"),
            ("latin1.csv", "1,1,0,0.1,0,caf\xe9,x\n", "latin1.csv: not UTF-8 text, so not a CSV of runs"),
            # the same cell as the header: the header's own reader let csv.Error through, a traceback
            ("longhead.csv", "x" * 200_000 + "\n", "longhead.csv, line 1: not a row of a CSV of runs (field larger "
                                                  "than field limit (131072))")]:
        out = tmp_path / name
        out.write_bytes((header * (name != "longhead.csv") + tail).encode("latin-1"))
        before = out.read_bytes()
        assert main([*args, str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert out.read_bytes() == before
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "automodel", *args, str(fifo)], capture_output=True, text=True,
                          timeout=20, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 2 and done.stderr == (f"automodel: error: {fifo}: is a FIFO (named pipe), expected a "
                                                    "file name to write (a regular file)\n")


def test_an_axis_or_capture_named_as_a_recorded_column_is_refused(tmp_path: Path, capsys) -> None:
    """``--param time=2`` wrote a header with 'time' twice and the measured time under both (the parameter
    lost); ``--capture rep=...`` overwrote the repetition a resume matches; exit 0 each time."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    args = ["run", "--cmd", "echo 5 {n}", "--n", "1", "--p", "1", "--no-fit", "--no-progress", "-o", str(out)]
    for extra, message in [
            (["--param", "time=2"], "parameter name 'time' is a column the campaign records of each run"),
            (["--param", "status=2"], "parameter name 'status' is a column the campaign records of each run"),
            (["--param", "cpu=0.5"], "parameter 'cpu' is the free CPU fraction the campaign measures"),
            (["--param", "bw=0.5", "--bw-probe", "echo 0.5", "--no-cpu"], "parameter 'bw' is the free bandwidth"),
            (["--capture", r"rep=(\d+)"], "capture 'rep' is a column the campaign records of each run"),
            (["--capture", r"time=(\d+)"], "(the time a run prints: --time-regex)"),
            (["--capture", r"n=(\d+)"], "capture 'n' is the column of parameter 'n'")]:
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()
    assert main([*args, "--param", "cpu=0.5", "--no-cpu", "--capture", r"k=(\d+)"]) == 0
    assert [(r["cpu"], r["k"], r["rep"]) for r in iter_rows(out)] == [("0.5", "1", "0")]


def test_an_adaptive_campaign_checks_its_target_before_the_seed(tmp_path: Path, capsys) -> None:
    """A target that misses p, names another parameter, a p of 0.5, or --per-step 0 was refused only after
    the seed's twelve runs had run (hours of a machine for an argument typed wrong)."""
    from automodel.cli import main

    app = tmp_path / "app.py"
    app.write_text("import sys\nprint(f'time={float(sys.argv[1]) / float(sys.argv[2]):g}')\n")
    out = tmp_path / "runs.csv"
    args = ["run", "--cmd", f"{sys.executable} {app} {{n}} {{p}}", "--time-regex", r"time=(\S+)",
            "--n", "100:1600:*2", "--p", "1:16:*2", "--adaptive", "--budget", "1", "--no-progress", "-o", str(out)]
    for extra, message in [(["--target", "n=1e6"], "target: no value for p; give every parameter"),
                           (["--target", "n=1e6,p=64,x=5"], "target: unknown parameter 'x'; the model has n, p, cpu"),
                           (["--target", "n=1e6,p=0.5"], "target: p must be a whole number, got 0.5"),
                           (["--target", "n=1e6,p=64,bw=0.5"], "target: unknown parameter 'bw'"),
                           (["--target", "n=1e6,p=64", "--per-step", "0"], "count must be a whole number >= 1")]:
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()
