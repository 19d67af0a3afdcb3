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
    args = ["run", "--cmd", f"{sys.executable} -I -S {app} {{n}} {{p}}", "--n", "100:800:8", "--p", "1,2,4,8",
            "--time-regex", r"time=(\S+)", "--no-cpu", "--no-progress", "-o", str(tmp_path / "r.csv")]
    assert main(args + ["--store", str(tmp_path / "s.db"), "--app", "toy"]) == 0
    out = capsys.readouterr().out
    assert "32 runs done (0 failed)" in out
    assert "toy: update" in out  # the store's observe report
    assert "chosen model: T = 1.0e-6*n^2/p + 0.0001*p" in out


def test_cause7_dry_run_does_not_build_the_whole_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17, cause 7: ``run --dry-run`` built the whole grid list (10^8 points); a typo such as
    ``1:1e12:+1`` asked for 10^12 values."""
    import tracemalloc

    from automodel.cli import main

    tracemalloc.start()
    # listed as 50 runs and a count, then refused as the run would refuse it (exit 2, not 0)
    assert main(["run", "--cmd", "app {n} {p}", "--n", "1:100000:100000", "--p", "1:1000:1000", "--dry-run"]) == 2
    assert tracemalloc.get_traced_memory()[1] < 100e6
    tracemalloc.stop()
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 + 50 + 1 and "... and 99,999,950 more" in out
    assert "# 100,000,000 runs" in err
    assert err.splitlines()[-1] == ("automodel: error: the grid plans 100,000,000 runs (100000 x 1000 points x 1 "
                                    "repetitions), more than the 1,000,000 a campaign may have")
    assert main(["run", "--cmd", "app {n}", "--n", "1:1e12:+1", "--dry-run"]) == 2
    assert "gives 1e+12 values, more than the 100000 an axis may have" in capsys.readouterr().err


def test_cause13_run_leaves_no_file_when_the_command_cannot_be_split(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17, cause 13: ``run`` left a header-only runs.csv when the template could not be split."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    assert main(["run", "--cmd", "app 'unclosed {n}", "--n", "1,2", "-o", str(out), "--no-progress"]) == 2
    assert "cannot split" in capsys.readouterr().err and not out.exists()
    assert main(["run", "--cmd", "app {n}", "--n", "1:100000:100000", "--p", "1:20:20", "-o", str(out)]) == 2
    assert "more than the 1,000,000 a campaign may have" in capsys.readouterr().err and not out.exists()


def test_cause12_run_errors_name_runs_csv_and_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17, cause 12: a bad measured value after ``automodel run`` was reported at
    ``<DataFrame>, row 0``; it is reported at runs.csv and the line of that run."""
    from automodel.cli import main

    app = tmp_path / "app.py"
    app.write_text("import sys; n, p = float(sys.argv[1]), float(sys.argv[2]); "
                   "print(f'time={-1 if n == 300 else 1e-6 * n * n / p}')")
    out = tmp_path / "runs.csv"
    assert main(["run", "--cmd", f"{sys.executable} -I -S {app} {{n}} {{p}}", "--n", "100:500:5", "--p", "1,2",
                 "--time-regex", r"time=(\S+)", "--no-cpu", "--no-progress", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(out.read_text().splitlines(), start=1) if text.startswith("300,"))
    assert f"{out}, line {line}, column 'time': expected a positive time, got -1" in err


def test_cause13_run_checks_its_options_and_output_before_creating_files(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17, cause 13: ``--timeout nan`` left a header-only runs.csv and a traceback; ``-o`` naming a
    directory was a traceback; a missing folder was created. Each is one line, exit 2, nothing written."""
    from automodel.cli import main

    run = ["run", "--cmd", "true {n}", "--n", "1,2", "--no-progress", "--no-fit"]
    for args, message in ((["--timeout", "nan", "-o", str(tmp_path / "runs.csv")],
                           "timeout must be a finite number of seconds > 0, got nan"),
                          (["-o", str(tmp_path)], f"{tmp_path}: is a directory, expected a file name to write"),
                          (["-o", str(tmp_path / "typo" / "runs.csv")],
                           f"{tmp_path / 'typo' / 'runs.csv'}: the folder {tmp_path / 'typo'} does not exist")):
        assert main(run + args) == 2
        out, err = capsys.readouterr()
        assert err == f"automodel: error: {message}\n" and out == ""
        assert list(tmp_path.iterdir()) == []


def test_cli_adaptive_campaign_resumes_without_repeating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from automodel.cli import main

    app = tmp_path / "app.py"
    app.write_text("import sys, math; n, p = float(sys.argv[1]), float(sys.argv[2]); "
                   "print(f'time={1e-7 * n * math.log2(n) / p + 2e-3 * math.log2(p) + 1e-3:.9f}')")
    out = tmp_path / "a.csv"
    args = ["run", "--cmd", f"{sys.executable} -I -S {app} {{n}} {{p}}", "--n", "1000:16000:*2", "--p", "1:64:*2",
            "--time-regex", r"time=(\S+)", "--no-cpu", "--no-progress", "-o", str(out), "--adaptive",
            "--target", "n=16000,p=64"]
    assert main(args + ["--until", "15%"]) == 0
    printed = capsys.readouterr().out
    assert "step 0: 12 runs" in printed and "stopped: the band at the target was narrow enough on two" in printed
    rows = list(iter_rows(out))
    keys = [(r["n"], r["p"]) for r in rows]
    assert len(keys) == len(set(keys)) < 35  # fewer runs than the grid, none twice
    assert main(args + ["--until", "15%"]) == 0  # resumed: the band is already narrow, nothing runs
    assert len(list(iter_rows(out))) == len(rows)
    assert f"step 0: {len(rows)} runs" in capsys.readouterr().out
    assert (tmp_path / "a.csv.history.csv").read_text().count("\n") >= 3
    for extra, message in ((["--until", "15%", "--max-p", "32"], "outside the allowed p"),
                           (["--budget", "0"], "budget must be a positive"), ([], "--until WIDTH% or --budget")):
        assert main(args + extra) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_run_writes_no_bar_into_a_redirected_stderr_and_stops_when_the_program_cannot_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --no-progress, standard error that is not a terminal gets no bar (issue 32, item 8); a
    program that cannot be started stops the campaign after its first run, not after all of them."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    assert main(["run", "--cmd", f"{sys.executable} -c pass {{n}}", "--n", "1,2,3", "--no-fit", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "run/s" not in err and "%|" not in err and "\r" not in err
    missing = tmp_path / "missing.csv"
    assert main(["run", "--cmd", "no-such-program-automodel {n} {p}", "--n", "1:96:96", "--p", "1",
                 "--no-progress", "-o", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "cannot run 'no-such-program-automodel'" in err and "stopped after the first run" in err
    assert len(missing.read_text().splitlines()) == 2  # the header and the one run


@pytest.mark.parametrize(("args", "message"), [
    (["--n", "nan", "--p", "1,2"], "parameter 'n': 'nan' is not finite"),
    (["--n", "inf,1", "--p", "1"], "parameter 'n': 'inf' is not finite"),
    (["--n", "1", "--p", "1,-Infinity"], "parameter 'p': '-Infinity' is not finite"),
    (["--n", "1", "--param", "k=2,1e999"], "parameter 'k': '1e999' is not finite"),
])
def test_run_refuses_a_listed_value_that_is_not_finite(args: list[str], message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``run --n nan --dry-run`` printed a grid with n = nan and exited 0 (``--n 1:nan:3`` was refused)."""
    from automodel.cli import main

    assert main(["run", "--cmd", "echo {n}", *args, "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert err == f"automodel: error: {message}\n" and out == ""
    assert main(["run", "--cmd", "echo {n} {mode}", "--n", "1", "--param", "mode=fast,slow", "--dry-run"]) == 0
    assert "echo 1 slow" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--n", "1", "--p", "0,1"], "parameter 'p': expected a positive process count, got 0"),
    (["--n", "1", "--p", "1:4:+1.5"], "parameter 'p': expected a process count (an integer >= 1), got 2.5"),
    (["--n", "1", "--p", "fast"], "parameter 'p': expected a positive process count, got 'fast'"),
    (["--n=-8,8", "--p", "1"], "parameter 'n': expected a positive problem size, got -8"),
    (["--n", "1e200", "--p", "1"], "parameter 'n': expected a positive problem size between 1e-100 and 1e+100 "
                                   "(the range automodel fits), got 1e+200"),
])
def test_run_refuses_a_role_value_its_runs_may_not_hold(args: list[str], message: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``run --p 0`` ran the program at p = 0 and wrote runs that ``fit`` then refused."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    assert main(["run", "--cmd", "echo {n} {p}", *args, "--no-fit", "--no-progress", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"automodel: error: {message}\n" and not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--param", "k=1,2", "--param", "k=3"], "--param 'k=3': k is given twice (k=1,2 and k=3)"),
    (["--capture", "c=c=(\\S+)", "--capture", "c=x"], "--capture 'c=x': c is given twice"),
])
def test_run_refuses_a_name_given_twice(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--param k=1,2 --param k=3`` ran k = 3 only (the later axis replaced the earlier without a word)."""
    from automodel.cli import main

    assert main(["run", "--cmd", "echo {n} {k}", "--n", "1", *args, "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert message in err and err.count("\n") == 1 and out == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--param", "k" * 5000], "--param 'kkkkkkkkkkkkkkkkkkkkkkkkkkk... (5002 chars): expected NAME=VALUE\n"),
    (["--param", "k=" + "1," * 3000 + "1", "--param", "k=2"],
     "--param 'k=2': k is given twice (k=1,1,1,1,1,1,1,1,1,1,1,1,1,... (6003 chars) and k=2), expected each "
     "name once\n"),
])
def test_run_quotes_a_long_bad_item_shortened(args: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A bad --param of 5,000 characters was echoed whole: it is quoted shortened, as a long cell is."""
    from automodel.cli import main

    assert main(["run", "--cmd", "echo {n} {k}", "--n", "1", *args, "--dry-run"]) == 2
    assert capsys.readouterr().err == f"automodel: error: {message}"


@pytest.mark.parametrize("history", ["damaged", "fifo"])
def test_run_adaptive_refuses_a_damaged_history_before_running_the_seed(history: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``OUTPUT.history.csv`` not UTF-8 or with an open quote: a pandas ParserError traceback after the seed
    ran; a FIFO there: the first step's append waited for a reader for ever."""
    import os

    from automodel.cli import main

    out = tmp_path / "a.csv"
    path = tmp_path / "a.csv.history.csv"
    if history == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b'\xff\xfe step\n"1,2\n')
    assert main(["run", "--cmd", "echo {n} {p}", "--n", "1:8:*2", "--p", "1:4:*2", "--no-progress", "-o", str(out),
                 "--adaptive", "--target", "n=16,p=8", "--budget", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"automodel: error: {path}: ") and err.count("\n") == 1 and not out.exists()


def test_run_counts_its_successful_runs_with_its_own_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row with two cells too many in a resumed runs CSV made pandas read the first column as the index:
    no status 0 was seen, 'error: no successful run' and exit status 1 after two successful runs."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    out.write_text("n,p,rep,time,cpu,status,error,started\n1,1,0,0.1,1,0,,2026,x,y\n")
    assert main(["run", "--cmd", "echo {n} {p}", "--n", "1,2", "--p", "1", "--no-fit", "--no-progress",
                 "-o", str(out)]) == 0
    assert "no successful run" not in capsys.readouterr().err


def test_a_campaign_whose_every_run_failed_says_the_first_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The README's replay example run outside a checkout: every run failed, and the one line said only
    "see its 'error' column" of a CSV the newcomer had not opened."""
    from automodel.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", "--cmd", f"{sys.executable} examples/replay.py {{n}} {{p}}", "--n", "1,2", "--p", "1",
                 "--no-fit", "--no-progress", "--no-cpu", "-o", "runs.csv"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("error: no successful run in runs.csv; the first: ") and "examples/replay.py" in err
    assert err.endswith("No such file or directory (each run's in its 'error' column)")


def test_run_adaptive_refuses_a_target_that_is_not_finite_before_running_the_seed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``run --adaptive --target n=nan`` ran the seed runs first and only then refused the target."""
    from automodel.cli import main

    out = tmp_path / "runs.csv"
    assert main(["run", "--cmd", "true {n} {p}", "--n", "1,2,4", "--p", "1,2", "--adaptive", "--target",
                 "n=nan,p=2", "--until", "15%", "--no-progress", "-o", str(out)]) == 2
    assert capsys.readouterr().err == "automodel: error: --target 'n=nan,p=2': n must be a finite number, got nan\n"
    assert not out.exists()


def test_run_refuses_a_space_with_a_bad_template_option_before_running(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``run --space FILE``: a template option of FILE its template does not take was found only by the
    fit after the campaign had run (and never with --store, whose observe runs no template). Now it is one
    line naming the file, exit 2, before anything runs or is written."""
    from importlib.resources import files

    from automodel.cli import main

    space = tmp_path / "space.toml"
    space.write_text((files("automodel") / "spaces" / "default.toml").read_text()
                     + "\n[fit.template_options.kohashi]\nn_terms = -4\n")
    out_csv, store = tmp_path / "runs.csv", tmp_path / "s.db"
    assert main(["run", "--cmd", "true {n} {p}", "--n", "1,2", "--p", "1,2", "--no-progress", "-o", str(out_csv),
                 "--space", str(space), "--store", str(store), "--app", "lu"]) == 2
    out, err = capsys.readouterr()
    assert err == (f"automodel: error: {space}: kohashi: option n_terms must be a whole number from 2 to 6, "
                   "got -4\n") and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["space.toml"]
