"""Issue 31, causes 6-7: no read without a bound. A FIFO or a device given as an input is refused
before it is opened; a file, standard input and an archive member are read to a stated limit of bytes
(``AUTOMODEL_MAX_INPUT_BYTES``); an Extra-P array's stated shape is checked before it is allocated."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from automodel.cli import main
from automodel.data.readers import read
from automodel.errors import AutomodelError, DataError
from automodel.files import LIMIT_VARIABLE, MAX_INPUT_BYTES, input_limit

ROOT = Path(__file__).resolve().parents[1]


def _automodel(*args: str, timeout: float = 20):
    return subprocess.run([sys.executable, "-m", "automodel", *args], capture_output=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_fifo_given_as_the_data_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)  # nobody writes it: opening it would block for ever
    done = _automodel("fit", str(fifo), timeout=15)
    err = done.stderr.decode()
    assert done.returncode == 2 and err.count("\n") == 1
    assert f"{fifo}: is a FIFO (named pipe), expected a file of measurements in a regular file" in err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_as_inputs(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", device]) == 2
    assert main(["show", device]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 3)[-1] for line in err] == ["is a character device, expected a file of measurements "
                                                        "in a regular file",
                                                        "is a character device, expected a model JSON file in a "
                                                        "regular file"]


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.csv"
    with open(path, "wb") as fh:  # 2 GiB on one line (sparse: no disk used)
        fh.truncate(2 << 30)
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"automodel: error: {path}: 2,147,483,648 bytes, more than the {MAX_INPUT_BYTES:,} bytes a file "
                   f"of measurements may have; set {LIMIT_VARIABLE} to raise the limit\n")


def test_the_limit_is_set_by_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for text, limit in (("", MAX_INPUT_BYTES), ("2G", 2 << 30), ("500k", 500 << 10), ("1000", 1000)):
        monkeypatch.setenv(LIMIT_VARIABLE, text)
        assert input_limit() == limit
    monkeypatch.setenv(LIMIT_VARIABLE, "40")
    path = tmp_path / "runs.csv"
    path.write_text("n,p,time\n" + "".join(f"{n},1,{n / 1000}\n" for n in (1000, 2000, 4000, 8000)))
    with pytest.raises(DataError, match=rf"runs\.csv: 53 bytes, more than the 40 bytes"):
        read(path)
    for bad in ("-1", "1e9", "lots", "0", "\u00b2", "\u0663M", "\uff15"):  # '²': a ValueError traceback;
        # Arabic-Indic 3 and full-width 5 were read as numbers, which no other number of automodel is
        monkeypatch.setenv(LIMIT_VARIABLE, bad)
        with pytest.raises(AutomodelError, match=f"{LIMIT_VARIABLE}=.*expected a number of bytes > 0"):
            read(path)


def test_standard_input_is_read_to_the_limit(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    stream = io.BytesIO(b"n,p,time\n" + b"1000,1,1.0\n" * 50)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))
    monkeypatch.setenv(LIMIT_VARIABLE, "100")
    assert main(["fit", "-"]) == 2
    assert capsys.readouterr().err == (f"automodel: error: <stdin>: more than the 100 bytes standard input may "
                                       f"have; set {LIMIT_VARIABLE} to raise the limit\n")
    assert stream.tell() == 101  # the rest is not read


#: the child reads each file as `automodel fit` does (argv: limit=path pairs, the limit of each in
#: AUTOMODEL_MAX_INPUT_BYTES) and prints each exit code and how much its peak memory grew meanwhile
PEAK = """
import os, resource, sys
import automodel.data.readers, automodel.cli
for pair in sys.argv[1:]:
    limit, path = pair.split("=", 1)
    os.environ["AUTOMODEL_MAX_INPUT_BYTES"] = limit
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = automodel.cli.main(["fit", path])
    print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def _shape_bomb(path: Path) -> Path:
    """A saved Extra-P experiment whose one array of kept repetitions says it holds 10^11 values."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 11,)})
    doc = {"Extra-P": "4.2.0", "parameters": ["p"], "measurements": {"main": {"time": [
        {"coordinate": [2.0], "median": 1.0, "repetitions": 2, "values": [0, 0]}]}}}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("experiment.json", json.dumps(doc))
        z.writestr("values/0.indx", b"Extra-P INDEX\0\0\0" + np.array([1, 16], "<u8").tobytes())
        z.writestr("values/0.vals", b"Extra-P VALUES\0\0" + header.getvalue() + np.ones(4).tobytes())
    return path


def test_the_memory_of_each_reader_is_bounded_on_crafted_inputs(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.extra-p"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:  # 24 MiB of JSON white space in 24 KiB
        with z.open("experiment.json", "w") as member:
            block = b" " * (1 << 20)
            for _ in range(24):
                member.write(block)
    sparse = tmp_path / "huge.csv"
    with open(sparse, "wb") as fh:  # 2 GiB (no disk used)
        fh.truncate(2 << 30)
    line = tmp_path / "line.csv"
    line.write_text(",".join(["1"] * 2_500_000))
    crafted = [("1M", bomb), ("256M", sparse), ("256M", line), ("256M", _shape_bomb(tmp_path / "shape.extra-p"))]
    done = subprocess.run([sys.executable, "-c", PEAK, *(f"{limit}={path}" for limit, path in crafted)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    results = [tuple(map(int, row.split())) for row in done.stdout.splitlines()]
    assert [code for code, _ in results] == [2, 2, 2, 2], done.stderr
    assert all(grown_kib < 16 << 10 for _, grown_kib in results), results  # under 16 MiB above the imports
    errors = done.stderr.splitlines()
    assert len(errors) == 4
    assert errors[0] == (f"automodel: error: {bomb}, experiment.json: 25,165,824 bytes unpacked, more than the "
                         f"1,048,576 bytes a member may have; set {LIMIT_VARIABLE} to raise the limit")


def test_an_extrap_array_whose_stated_shape_is_huge_is_refused(tmp_path: Path) -> None:
    path = _shape_bomb(tmp_path / "shape.extra-p")
    with pytest.raises(DataError) as err:
        read(path)
    assert str(err.value) == (f"{path}, measurements.main.time[0].values: values/0.vals at offset 16: an array of "
                              "shape (100000000000,) (100,000,000,000 values) in 160 bytes; expected at most "
                              "16,777,216 values, all of them in the file")


def test_a_file_of_one_long_line_is_refused_before_pandas_reads_it(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "line.csv"
    path.write_text(",".join(["1"] * 2_500_000) + "\n")  # 5 MB: a table of 2.5 million columns
    assert main(["fit", str(path)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {path}, row 1: the header line is longer than 1,048,576 "
                                       "bytes; expected at most 10,000 column names\n")
    path.write_text("\n" + ",".join(f"c{i}" for i in range(20_000)) + "\n")
    with pytest.raises(DataError, match=r"line\.csv, row 2: the header names 20,000 columns; expected at most 10,000"):
        read(path)


def test_suggest_reads_a_json_file_of_runs_within_the_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """suggest opened a RUNS file ending in .json itself, to see whether it is a model file: a FIFO waited
    for ever and JSON nested 10^5 deep was a RecursionError traceback."""
    fifo = tmp_path / "runs.json"
    os.mkfifo(fifo)
    done = _automodel("suggest", str(fifo), "--target", "n=1000,p=8", timeout=15)
    assert done.returncode == 2 and done.stderr.decode() == (
        f"automodel: error: {fifo}: is a FIFO (named pipe), expected a file of measurements in a regular file\n")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["suggest", str(deep), "--target", "n=1000,p=8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{deep}: JSON nested too deeply" in err


def test_an_output_that_is_a_fifo_or_a_device_is_refused_and_kept(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The finished file was renamed onto the output path: ``-o /dev/null`` run as root replaced the
    device by a regular file. A FIFO stands for any such path (making a device needs root)."""
    import stat

    fifo = tmp_path / "model.json"
    os.mkfifo(fifo)
    runs = tmp_path / "runs.csv"
    runs.write_text("n,p,time\n" + "".join(f"{n},1,{n / 1000}\n" for n in (1000, 2000, 4000, 8000)))
    assert main(["fit", str(runs), "-o", str(fifo)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {fifo}: is a FIFO (named pipe), expected a file name to "
                                       "write (a regular file)\n")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_archive_listing_too_many_members_is_refused_before_they_are_listed(tmp_path: Path) -> None:
    """zipfile builds an object per member when it opens an archive: 200,000 empty members (17 MB) took
    126 MB and 10 s, the input limit allowed 3 million. The count in the end record is checked first."""
    import struct

    from automodel.data.readers.experiment import MAX_MEMBERS

    path = tmp_path / "many.extra-p"  # the end record alone, stating 65,535 members
    path.write_bytes(b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 65535, 65535, 0, 0, 0))
    with pytest.raises(DataError) as err:
        read(path)
    assert str(err.value) == (f"{path}: an archive of 65,535 members; expected a saved Extra-P experiment (.extra-p: "
                              f"a ZIP archive holding experiment.json) of at most {MAX_MEMBERS:,}")


@pytest.mark.parametrize("command", [["fit", "{long}.csv"], ["fit", "{runs}", "-o", "{long}.json"], ["show", "{long}.json"],
                                     ["fit", "{runs}", "--space", "{long}.toml"], ["ranking", "--store", "{long}.db",
                                                                                  "--app", "a"]])
def test_a_file_name_too_long_for_the_system_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          command: list[str]) -> None:
    """pathlib's is_dir() and exists() raise OSError(ENAMETOOLONG) where they return False for a missing
    file: a traceback from every path a command takes."""
    runs = tmp_path / "runs.csv"
    runs.write_text("n,p,time\n" + "".join(f"{n},1,{n / 1000}\n" for n in (1000, 2000, 4000, 8000)))
    long = str(tmp_path / ("a" * 5000))
    assert main([arg.format(long=long, runs=runs) for arg in command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"automodel: error: {long[:100]}... (")
    assert err.endswith(" characters): file name too long, expected a path the system can open\n")


def test_a_fit_of_64_parameters_combines_its_band_without_a_traceback(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The band's parts (one per parameter and more) went to ``np.broadcast``, which takes at most 64
    arrays: a JSON Lines file of 62 parameters was a ValueError traceback and exit 1."""
    rng = np.random.default_rng(1)
    path = tmp_path / "wide.jsonl"
    with path.open("w") as fh:
        for _ in range(40):
            point = {f"q{i}": int(rng.choice([1, 2, 4, 8])) for i in range(64)}
            fh.write(json.dumps({"params": point, "value": 1.0 + sum(point.values())}) + "\n")
    assert main(["fit", str(path), "-o", str(tmp_path / "m.json")]) == 0
    assert "model written to" in capsys.readouterr().out


def test_band_parts_of_any_number_combine() -> None:
    from automodel.solve.band import combine

    assert combine().shape == ()
    assert np.allclose(combine(*[np.ones(3)] * 70, 0.0), np.sqrt(70.0))


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".txt"])
def test_a_file_of_too_many_parameters_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          suffix: str) -> None:
    """A JSON Lines record of 100,000 parameters never finished reading (pandas copies the frame's
    attributes, the list of parameters among them, for each grouping column: quadratic); 5,000 took
    80 s. A file may give at most MAX_PARAMETERS."""
    from automodel.names import MAX_PARAMETERS

    names = [f"q{i}" for i in range(100_000)]
    path = tmp_path / f"wide{suffix}"
    if suffix == ".jsonl":
        path.write_text(json.dumps({"params": dict.fromkeys(names, 1), "value": 1.0}) + "\n")
        where = "line 1, params"
    elif suffix == ".json":
        path.write_text(json.dumps({"parameters": names, "measurements": {}}))
        where = "parameters"
    else:
        path.write_text("PARAMETER " + " ".join(names) + "\n")
        where = "line 1"
    assert main(["kernels", str(path)]) == 2
    assert capsys.readouterr().err == (f"automodel: error: {path}, {where}: 100,000 parameter names; expected at "
                                       f"most {MAX_PARAMETERS}\n")


@pytest.mark.parametrize(("name", "text", "where", "key"), [
    ("f.json", '{"parameters": ["x"], "measurements": {"main": {"time": [{"point": [1], "values": [1]}]}, '
               '"main": {"time": [{"point": [1], "values": [2]}]}}}', "", "main"),
    ("f.jsonl", '{"params": {"x": 1}, "value": 1}\n{"params": {"x": 2, "x": 3}, "value": 2}\n', ", line 2", "x"),
])
def test_a_json_key_given_twice_is_refused_not_dropped(tmp_path: Path, name: str, text: str, where: str,
                                                       key: str) -> None:
    """json keeps the last of two equal keys: a second call path "main" dropped the first one's
    measurements without a word."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError) as err:
        read(path)
    assert str(err.value).startswith(f'{path}{where}: the key "{key}" is given twice in one object; expected each '
                                     "key once in ")


def test_predictions_of_rows_that_hold_a_predicted_column_are_shown(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Rows with columns 'predicted' and 'lower' (an earlier output predicted again): the table on the
    terminal left out the new predictions as if they were columns of the input ('not shown: predicted,
    lower'), showing only 'upper'."""
    from automodel.model.core import Model, TermModel
    from automodel.space.terms import ONE, power

    model = Model(TermModel((ONE, power("p", -1)), (1.0, 8.0)), ("p",), {"p": "p", "time": "time"}, {"p": [1.0, 8.0]})
    model.save(tmp_path / "m.json")
    (tmp_path / "rows.csv").write_text("p,predicted,lower\n2,99,98\n")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "rows.csv")]) == 0
    head, row = capsys.readouterr().out.splitlines()[:2]
    assert head.split()[:2] == ["p", "predicted"] and float(row.split()[1]) == 5.0


def test_a_fim_cal_walk_of_unbounded_steps_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fim_cal.max_steps=1e12 with a threshold never met: Algorithm 1 walked for days."""
    rows = "".join(f"{n:g},{p:g},0.5,{tc:g},{0.3 * tc:g},2e9,{tc / 2e9 / p:g}\n" for n in (1e3, 3e3, 5e3)
                   for p in (1, 2, 4, 8) for tc in [2e6 + 300 * n])
    (tmp_path / "runs.csv").write_text("n,p,U,TC,SC,F,time\n" + rows)
    assert main(["fit", str(tmp_path / "runs.csv"), "--quiet", "--templates", "fim_cal", "--template-option",
                 "fim_cal.max_steps=1000000000000", "fim_cal.epsilon=1e-12", "fim_cal.tau=1e-12"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "option max_steps must be a whole number from 1 to 100,000,000, got 1e+12" in err


@pytest.mark.parametrize("column", ["TC", "time", "p"])
def test_fim_cal_does_not_regress_a_counter_on_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      column: str) -> None:
    """fim_cal.parameters=TC regressed TC on TC (eq. 11) exactly: a model whose formula needs the counter
    TC to predict (ranked among the equivalent candidates)."""
    rows = "".join(f"{n:g},{p:g},0.5,{tc:g},{0.3 * tc:g},2e9,{tc / 2e9 / p:g}\n" for n in (1e3, 3e3, 5e3)
                   for p in (1, 2, 4, 8) for tc in [2e6 + 300 * n])
    (tmp_path / "runs.csv").write_text("n,p,U,TC,SC,F,time\n" + rows)
    assert main(["fit", str(tmp_path / "runs.csv"), "--quiet", "--templates", "fim_cal", "--template-option",
                 f"fim_cal.parameters={column}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "option parameters must be none or columns other than time, p, cpu, bw" in err


@pytest.mark.parametrize("option, message", [
    ("kohashi.n_steps=1000000000", "option n_steps must be a whole number from 2 to 1,000,000, got 1e+09"),
    ("kohashi.pc_trials=1000000000000 kohashi.pc_timeout=1",  # (the timeout: the test ends without the fix)
     "option pc_trials must be a whole number from 1 to 10,000, got 1e+12")])
def test_a_template_option_asking_for_unbounded_work_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                option: str, message: str) -> None:
    """kohashi.n_steps=1e9 (with bayesian=true): the sampler's array of 45 GiB was a MemoryError traceback,
    exit 1; pc_trials=1e12 (with the optuna search of pc) ran for ever."""
    p = np.array([1.0, 2.0, 4.0, 8.0, 16.0] * 2)
    (tmp_path / "runs.csv").write_text("p,time\n" + "".join(f"{v:g},{1 / v + 0.01 * v:g}\n" for v in p))
    assert main(["fit", str(tmp_path / "runs.csv"), "--quiet", "--templates", "kohashi", "--template-option",
                 *option.split(), "kohashi.bayesian=true", "kohashi.n_terms=6", "kohashi.pc_search=optuna"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_rbasp_does_not_regress_the_time_on_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """rbasp.variables=time fitted log2 T on log2 T exactly: that model led the leaderboard and then could
    predict no run ('data: missing column 'time'', exit 2, naming neither the file nor the option)."""
    rows = "".join(f"{n},{p},{1e-3 * n / p + 0.01:g}\n" for n in (100, 200, 400, 800) for p in (1, 2, 4, 8))
    (tmp_path / "runs.csv").write_text("n,p,time\n" + rows)
    for value in ("time", "n,time", "p"):
        assert main(["fit", str(tmp_path / "runs.csv"), "--quiet", "--templates", "rbasp", "--template-option",
                     f"rbasp.variables={value}"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "rbasp: option variables must be none or columns other than time and p" in err
    assert main(["fit", str(tmp_path / "runs.csv"), "--quiet", "--templates", "rbasp", "--template-option",
                 "rbasp.variables=n"]) == 0


def test_what_a_command_wrote_is_said_within_80_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """'10 models written to PATH' and the like were printed whole: a path of 60 characters made a line of
    81 (the width test failed once pytest's folders reached pytest-1000)."""
    monkeypatch.chdir(tmp_path)
    folder = Path("x" * 50)
    folder.mkdir()
    rows = "".join(f"{k},{n},{p},{n / p + k:g}\n" for k in (1, 2) for n in (100, 200, 400, 800) for p in (1, 2, 4, 8))
    (folder / "runs.csv").write_text("kernel,n,p,time\n" + rows)
    (folder / "one.csv").write_text("n,p,time\n" + "".join(r.split(",", 1)[1] for r in rows.splitlines(True)[:16]))
    for argv in (["kernels", str(folder / "runs.csv"), "--out", str(folder / "models.json"), "--report",
                  str(folder / "profile.html")],
                 ["kernels", str(folder / "runs.csv"), "--out", str(folder / "summary.csv")],
                 ["fit", str(folder / "one.csv"), "--quiet", "--templates", "none", "-o", str(folder / "m.json")],
                 ["predict", str(folder / "m.json"), str(folder / "one.csv"), "-o", str(folder / "p.csv")],
                 ["report", str(folder / "m.json"), "-o", str(folder / "r.html")]):
        capsys.readouterr()
        assert main(argv) == 0, argv
        captured = capsys.readouterr()
        long = [line for line in (captured.out + captured.err).splitlines() if len(line) > 80]
        assert not long, (argv[0], long)


@pytest.mark.parametrize("option", [["--n", "5"], ["--p", "0"], ["--param", "k=1"], ["--cpu", "0.5"], ["--rank", "2"]])
def test_predict_from_a_file_refuses_the_options_of_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            option: list[str]) -> None:
    """``predict MODEL DATA --n 5`` printed the predictions at the rows' n, the option ignored without a word."""
    from automodel.model.core import Model, TermModel
    from automodel.space.terms import ONE, power

    Model(TermModel((ONE, power("p", -1)), (1.0, 8.0)), ("p",), {"p": "p", "time": "time"}, {"p": [1.0, 8.0]}
          ).save(tmp_path / "m.json")
    (tmp_path / "rows.csv").write_text("p\n2\n")
    assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "rows.csv"), *option]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {option[0]}: an option of predict --store S --app NAME" in err
