"""The command line as a whole: bad input is one line and exit 2 with no output file left; the console script."""

import subprocess
import sys

import pytest

from automodel.cli import main


@pytest.mark.parametrize("content, args, fragment", [
    ("time,n,p\n1,10,1\n-1,20,1\n", [], "row 3, column 'time'"),
    ("time,n,p\n1,10,1\nx,20,1\n", [], "got 'x'"),
    ("time,n,p\n1,10,1\nnan,20,1\n", [], "row 3, column 'time'"),
    ("", [], "the file is empty"),
    ("time,n,p\n1,10,1\n2,20,1\n", ["--p", "procs"], "column 'procs': no such column"),
    ("time,n,p\n1,10,1\n2,20,1\n", [], "distinct configuration"),
    ("time,n,p\n1,10,1\n2,20,1\n3,30,1\n", ["--space", "nosuch"], "no search space named 'nosuch'"),
])
def test_bad_input_exit_2_one_line_no_output(tmp_path, capsys, content, args, fragment):
    data = tmp_path / "bad.csv"
    data.write_text(content)
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--quiet", "-o", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".automodel-*"))


def test_malformed_space_and_model(tmp_path, runs_csv, capsys):
    space = tmp_path / "bad.toml"
    space.write_text("name = 'x'\n[stages.computation]\nbase = ['exp(n)']\n")
    assert main(["fit", str(runs_csv), "--quiet", "--space", str(space)]) == 2
    assert "cannot read term" in capsys.readouterr().err
    bad = tmp_path / "m.json"
    bad.write_text('{"format": "automodel-model", "version": 1, "params": ["n"], "model": {"kind": "pickle"}}')
    assert main(["show", str(bad)]) == 2
    assert "unknown model kind" in capsys.readouterr().err
    out = tmp_path / "pred.csv"
    assert main(["predict", str(bad), str(runs_csv), "-o", str(out)]) == 2 and not out.exists()


def test_console_script_help():
    done = subprocess.run([sys.executable, "-m", "automodel", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "fit" in done.stdout and "demo" in done.stdout


def test_a_closed_pipe_ends_quietly(tmp_path, fitted):
    """``automodel predict ... | head -3`` ended in a BrokenPipeError traceback (issue 15; issue 13)."""
    model = tmp_path / "m.json"
    fitted[0].best.save(model)
    rows = tmp_path / "rows.csv"
    rows.write_text("n,p,cpu,bw\n" + "".join(f"{1000 + i},{1 + i % 8},1,1\n" for i in range(40000)))
    proc = subprocess.Popen([sys.executable, "-m", "automodel", "predict", str(model), str(rows)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as head does after its lines
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""


@pytest.mark.parametrize("argv", [["fit", "runs.csv", "--top", "-1"], ["ranking", "--store", "s.db", "--app", "a",
                                                                        "--top", "-1"],
                                  ["demo", "--top", "x"], ["run", "--cmd", "x", "--n", "1", "--dry-run", "--top", "-2"]])
def test_a_negative_number_of_rows_to_print_is_refused(argv, capsys):
    """``fit --top -1`` printed every row but the last, under "top -1"."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "argument --top: expected a whole number of rows >= 0" in capsys.readouterr().err


@pytest.mark.parametrize("argv, option, kind", [
    (["best-p", "m.json", "--n", "1e5", "--p-max", "\uff16\uff14"], "--p-max", "a number"),
    (["best-p", "m.json", "--n", "\u0661\u0660\u0660"], "--n", "a number"),
    (["predict", "--store", "s.db", "--app", "a", "--n", "1_000", "--p", "4"], "--n", "a number"),
    (["suggest", "runs.csv", "--target", "n=1e6,p=64", "--count", "\uff13"], "--count", "a whole number"),
    (["serve", "--port", "80_80"], "--port", "a whole number"),
])
def test_a_number_option_takes_ascii_digits_as_a_table_does(argv, option, kind, capsys):
    """``float`` and ``int`` read Unicode and full-width digits and underscores (``--p-max ６４`` was 64)
    where a CSV cell holding them is refused: one reading of a written number
    (:mod:`automodel.data.numerals`), before anything is read or run."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"argument {option}: expected {kind} such as" in capsys.readouterr().err


def test_a_grid_value_in_other_digits_is_a_name_and_a_target_is_refused():
    from automodel.cli.suggest import parse_target
    from automodel.errors import DataError
    from automodel.runner.grid import parse_values

    assert parse_values("\u0661\u0660\u0660,5", "n") == ["\u0661\u0660\u0660", 5]  # was [100, 5]
    with pytest.raises(DataError, match="expected NAME=NUMBER"):
        parse_target("n=\uff16\uff14,p=8")
    with pytest.raises(DataError, match="n must be a finite number, got nan"):
        parse_target("n=nan,p=8")


def test_help_shows_examples_that_parse_and_a_bare_command_shows_the_help(capsys):
    """A newcomer's first ``automodel`` printed ``error: the following arguments are required: COMMAND``,
    and no ``--help`` showed how a command is called."""
    import shlex

    from automodel.cli import _commands, build_parser

    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: automodel") and "examples:\n  automodel demo\n" in err
    parser = build_parser()
    shown = [parser, *(c for c in _commands(parser) if c.epilog)]
    assert {c.prog for c in shown} >= {"automodel", "automodel fit", "automodel predict", "automodel best-p"}
    for command in shown:
        lines = [line.strip() for line in command.epilog.splitlines()]
        calls = [shlex.split(line) for line in lines if line.startswith("automodel ") and "COMMAND" not in line]
        assert calls and all(args[0] == "automodel" for args in calls)
        for args in calls:
            assert build_parser().parse_args(args[1:]).command == args[1]  # no SystemExit: it parses


def test_a_fit_whose_report_reader_goes_away_still_writes_its_model(tmp_path):
    """``automodel fit runs.csv -o m.json | head -3``: head went away during the report, the command ended
    (141) before it wrote the model, and m.json was not there."""
    from importlib.resources import files

    model = tmp_path / "m.json"
    proc = subprocess.Popen([sys.executable, "-m", "automodel", "fit", str(files("automodel") / "demo/cg_fast.csv"),
                             "-o", str(model), "--templates", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after the first line of the report
    proc.stderr.read()
    assert proc.wait(timeout=300) in (0, 141) and model.exists()
    assert main(["show", str(model)]) == 0


def test_fit_and_best_p_name_the_process_count_and_size_by_the_files_columns(tmp_path, capsys):
    """'best process count at n = 400000: p = 64' spoke of n and p to one whose file said size and procs."""
    runs = tmp_path / "runs.csv"
    runs.write_text("size,procs,secs\n" + "".join(f"{n},{p},{1e-6 * n / p + 1e-3 * p:g}\n"
                                                  for n in (1000, 2000, 4000, 8000) for p in (1, 2, 4, 8)))
    model = tmp_path / "model.json"
    assert main(["fit", str(runs), "--time", "secs", "--n", "size", "--p", "procs", "--templates", "none",
                 "-o", str(model)]) == 0
    out = capsys.readouterr().out
    assert "best process count at size = 8000: procs = " in out and "at n = " not in out
    assert main(["best-p", str(model), "--n", "8000"]) == 0
    assert capsys.readouterr().out.startswith("best procs = ")
