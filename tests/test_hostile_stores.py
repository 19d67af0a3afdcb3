"""Issue 31, causes 5 and 9-10 in the store: an application name is one key however it is typed (NFC
or NFD, white space around it) and never empty; a damaged JSON record is a one-line error naming its
table, row and column; a store on read-only media (or without write permission) can be read."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from automodel.cli import main
from automodel.store import observe
from automodel.store.db import Store

ROOT = Path(__file__).resolve().parents[1]
RUNS = Path(__file__).parent / "bad_inputs" / "valid_runs.csv"


def _observed(tmp_path: Path, app: str = "lu") -> Path:
    db = tmp_path / "runs.db"
    observe(db, app, RUNS)
    return db


def test_nfc_and_nfd_names_are_one_application(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nfc, nfd = unicodedata.normalize("NFC", "Café"), unicodedata.normalize("NFD", "Café")
    assert nfc != nfd
    db = _observed(tmp_path, nfc)
    assert main(["observe", "--store", str(db), "--app", nfd + " ", str(RUNS)]) == 0
    assert "nothing added" in capsys.readouterr().out
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM applications").fetchall() == [(nfc,)]
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 12  # the runs of valid_runs.csv, once
    assert main(["ranking", "--store", str(db), "--app", nfd]) == 0


@pytest.mark.parametrize("name, problem", [("", "expected 1 to 200 characters, got 0"),
                                           ("   ", "expected 1 to 200 characters, got 0"),
                                           ("a\x1b[2Jb", "holds the non-printable character '\\x1b'")])
def test_an_empty_or_unprintable_application_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              name: str, problem: str) -> None:
    db = tmp_path / "runs.db"
    assert main(["observe", "--store", str(db), "--app", name, str(RUNS)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("automodel: error: application name ") and problem in err
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM applications").fetchone()[0] == 0


@pytest.mark.parametrize("table, column, value, message", [
    ("runs", "params", "{not json", "table 'runs', row 3, column 'params': damaged record, not JSON"),
    ("runs", "params", "[1, 2]", "table 'runs', row 3, column 'params': damaged record, expected an object, got list"),
    ("applications", "roles", "nul", "table 'applications', row 1, column 'roles': damaged record, not JSON"),
])
def test_a_damaged_json_record_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str,
                                           column: str, value: str, message: str) -> None:
    db = _observed(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?", (value, 3 if table == "runs" else 1))
    assert main(["runs", "--store", str(db), "--app", "lu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.fixture(scope="module")
def observed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _observed(tmp_path_factory.mktemp("observed"))


def _copy(store: Path, folder: Path) -> Path:
    """A copy of the SQLite file ``store`` (with its write-ahead log) in ``folder``."""
    for suffix in ("", "-wal"):
        if Path(f"{store}{suffix}").exists():
            shutil.copy(f"{store}{suffix}", folder / f"runs.db{suffix}")
    return folder / "runs.db"


@pytest.mark.parametrize("table, column, value, command, message", [
    ("state", "arrays", "text", ["ranking"], "application 'lu': damaged state blob ("),
    ("state", "n_runs", "x", ["ranking"], "table 'state', row 1, column 'n_runs': damaged record, expected an integer, "
                                          "got 'x'"),
    ("candidates", "term_index", '["a"]', ["ranking"], "table 'candidates', row 1, column 'term_index': damaged "
                                                       "record, expected a list of term indices"),
    ("applications", "params", "[1]", ["ranking"], "table 'applications', row 1, column 'params': damaged record, "
                                                   "expected a list of parameter names"),
    ("applications", "roles", '{"n": 1}', ["ranking"], "table 'applications', row 1, column 'roles': damaged record, "
                                                       "expected an object of column names"),
    ("applications", "n_updates", "x", ["runs"], "table 'applications', row 1, column 'n_updates': damaged record, "
                                                 "expected an integer, got 'x'"),
    ("runs", "params", '{"n": "x", "p": 1}', ["predict", "--n", "400", "--p", "4"],
     "table 'runs', row 1, column 'params': damaged record, expected a finite number for 'n', got 'x'"),
])
def test_a_damaged_value_sqlite_let_in_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], observed_once: Path,
                                                   table: str, column: str, value: str, command: list[str],
                                                   message: str) -> None:
    """SQLite keeps text in an INTEGER column and a JSON record may hold the wrong types: each was a
    TypeError, ValueError or AttributeError traceback."""
    assert message in _damaged_error(tmp_path, capsys, observed_once, table, column, value, command)


def _damaged_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], observed_once: Path, table: str, column: str,
                   value: str, command: list[str]) -> str:
    """The one-line error of ``command`` on a copy of the store whose first row of ``table`` holds
    ``value`` in ``column``."""
    db = _copy(observed_once, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM {table})", (value,))
    assert main([command[0], "--store", str(db), "--app", "lu", *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


def test_a_stored_formula_is_printed_without_its_escapes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          observed_once: Path) -> None:
    db = _copy(observed_once, tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE history SET leader_formula = ?", ("n\x1b[2J",))
    assert main(["ranking", "--store", str(db), "--app", "lu", "--history", "--wide"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "n\\x1b[2J" in out


@pytest.mark.parametrize("flag", ["--exclude", "--readmit"])
@pytest.mark.parametrize("run_id", [str(1 << 63), "0"])
def test_a_run_id_sql_cannot_hold_is_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str,
                                            run_id: str) -> None:
    """A run id beyond 64 bits was an OverflowError traceback from the SQLite driver."""
    db = _observed(tmp_path)
    before = db.read_bytes()
    assert main(["runs", "--store", str(db), "--app", "lu", flag, run_id]) == 2
    err = capsys.readouterr().err
    assert err == f"automodel: error: run {run_id}: not a run of application 'lu'\n"
    assert db.read_bytes() == before


def test_a_store_of_a_newer_schema_is_read_not_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store a newer automodel wrote was written by this one as if it knew its rules."""
    db = _observed(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE applications SET schema_version = 99")
    before = db.read_bytes()
    assert main(["ranking", "--store", str(db), "--app", "lu"]) == 0
    capsys.readouterr()
    for argv in (["observe", "--app", "lu", str(RUNS)], ["load", "record", "--cpu", "0.5"]):
        assert main([*argv, "--store", str(db)]) == 2
        assert capsys.readouterr().err == (f"automodel: error: {db}: written by a newer automodel (store schema 99; "
                                           "this version knows up to 3): it can be read, not written; upgrade "
                                           "automodel to write it\n")
    assert db.read_bytes() == before


def _read_only(folder: Path) -> list[str] | None:
    """A command prefix that runs its command with ``folder`` on read-only media (a read-only bind mount
    in a private mount namespace); None where this process may not make one."""
    mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && exec \"$@\""
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        if shutil.which("unshare") and subprocess.run([*prefix, "sh", "-c", mount, "sh", "true"],
                                                      capture_output=True).returncode == 0:
            return [*prefix, "sh", "-c", mount, "sh"]
    return None


#: the child reads the store (ranking), then tries to write it (observe), and prints both exit codes
READ_THEN_WRITE = """
import sys
from automodel.cli import main
db, runs = sys.argv[1:]
codes = [main(["ranking", "--store", db, "--app", "lu"]), main(["observe", "--store", db, "--app", "lu", runs])]
print("exit codes", *codes)
"""


@pytest.mark.parametrize("tables, message", [
    (["CREATE TABLE runs (a, b)"], "it has tables (runs) and none named 'applications'"),
    (["CREATE TABLE applications (x)"], "its table 'applications' has no column 'id'"),
])
def test_a_database_of_another_program_is_refused_and_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  tables: list[str], message: str) -> None:
    """observe added its columns to another program's ``runs`` table and then failed with a TypeError
    traceback; it now refuses the file before writing anything."""
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        for statement in tables:
            conn.execute(statement)
    before = sqlite3.connect(db).execute("SELECT sql FROM sqlite_master").fetchall()
    for command in (["observe", "--store", str(db), "--app", "lu", str(RUNS)], ["ranking", "--store", str(db), "--app", "lu"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"other.db: not an automodel store ({message})" in err
    assert sqlite3.connect(db).execute("SELECT sql FROM sqlite_master").fetchall() == before
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone() == ("delete",)  # not switched to WAL


def test_a_store_on_read_only_media_can_be_read(tmp_path: Path) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    db = _observed(folder)
    Store(db).dispose()  # the last connection closes the WAL: the file is all there is, as on a copied disk
    files = sorted(folder.iterdir())
    prefix = _read_only(folder)
    if prefix is None:
        if os.geteuid() == 0:
            pytest.skip("no mount namespace for a read-only mount, and root writes through file modes")
        prefix = []
        os.chmod(db, 0o444)
        os.chmod(folder, 0o555)
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", READ_THEN_WRITE, str(db), str(RUNS)],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    finally:
        os.chmod(folder, 0o755)
    assert done.stdout.splitlines()[-1] == "exit codes 0 2", done.stderr
    assert "rank" in done.stdout and "n/p" in done.stdout  # the ranking: a row, its formula below
    assert done.stderr == (f"automodel: error: {db}: the store is read-only (read-only media, or no permission to "
                           "write the file or its folder): it can be read, not written\n")
    assert sorted(folder.iterdir()) == files


# -- PostgreSQL: a restart is waited for, a permanent error is not ---------------------------------------
def test_observers_wait_for_a_server_down_longer_than_the_old_retries(postgres, capsys) -> None:
    """The server is down for 3.5 s (the old retries gave up after at most 3.1 s): every observer waits,
    finishes, and each run is stored once."""
    import threading
    import time

    import numpy as np
    import pandas as pd

    from automodel.store import runs as stored_runs

    url = postgres.fresh_database()
    observe(url, "lu", RUNS)
    batches = [pd.DataFrame({"n": [1000.0 * (k + 2), 3000.0 * (k + 2)], "p": [2, 4],
                             "time": [0.5 + k, 0.7 + k]}) for k in range(3)]
    results: dict[int, object] = {}

    def observer(k: int) -> None:
        try:
            results[k] = observe(url, "lu", batches[k])
        except Exception as exc:  # noqa: BLE001  (the test reports it)
            results[k] = exc

    postgres.stop("fast")
    threads = [threading.Thread(target=observer, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    time.sleep(3.5)
    postgres.start()
    for t in threads:
        t.join(timeout=60)
    assert all(not isinstance(r, Exception) for r in results.values()), results
    assert sorted(len(r.run_ids) for r in results.values()) == [2, 2, 2]
    frame = stored_runs(url, "lu")
    assert len(frame) == 12 + 6 and not frame.duplicated(["n", "p", "time"]).any()
    assert sorted(np.unique(frame["update_no"]).tolist()) == [1, 2, 3, 4]  # the first observe and one update per observer
    assert "retrying for up to 30 s" in capsys.readouterr().err


def test_an_unknown_database_is_not_retried(postgres, capsys) -> None:
    import time

    url = postgres.url("no_such_database")
    started = time.monotonic()
    assert main(["ranking", "--store", url, "--app", "lu"]) == 2
    err = capsys.readouterr().err
    assert time.monotonic() - started < 1.0 and err.count("\n") == 1
    assert 'database "no_such_database" does not exist' in err and "gave up" not in err


def test_readmit_and_exclude_in_one_command_change_both_or_neither(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 observed_once: Path) -> None:
    """``runs --readmit 1 --exclude 999``: run 1 was re-admitted and refitted, stored, before run 999 was
    found to be no run (exit 2, half the command done); a run given to both was re-admitted, then
    excluded, two updates."""
    db = _copy(observed_once, tmp_path)
    assert main(["runs", "--store", str(db), "--app", "lu", "--exclude", "1", "2"]) == 0
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT id, status, note FROM runs ORDER BY id").fetchall()
    for extra, message in [(["--readmit", "1", "--exclude", "999"], "run 999: not a run of"),
                           (["--readmit", "2", "--exclude", "2"], "run 2: given to re-admit and to exclude")]:
        assert main(["runs", "--store", str(db), "--app", "lu", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT id, status, note FROM runs ORDER BY id").fetchall() == before
    assert main(["runs", "--store", str(db), "--app", "lu", "--readmit", "1", "--exclude", "3"]) == 0
    with sqlite3.connect(db) as conn:
        assert [r[0] for r in conn.execute("SELECT status FROM runs WHERE id <= 3 ORDER BY id")] == [
            "readmitted", "excluded", "excluded"]


@pytest.mark.parametrize("rank", ["0", "-5"])
def test_a_rank_below_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], observed_once: Path,
                                     rank: str) -> None:
    """``predict --store S --app A --rank 0`` (or -5) was read as rank 1, the best-scored candidate: an
    answer from neither the candidate asked for nor the leader, exit 0."""
    db = _copy(observed_once, tmp_path)
    assert main(["predict", "--store", str(db), "--app", "lu", "--n", "200", "--p", "2", f"--rank={rank}"]) == 2
    err = capsys.readouterr().err
    assert err == f"automodel: error: --rank: expected a rank of the ranking, 1 (the best-scored) or more, got {rank}\n"
    assert main(["predict", "--store", str(db), "--app", "lu", "--n", "200", "--p", "2", "--rank=1"]) == 0


@pytest.mark.parametrize("param, message", [("iters=5", "--param iters: the model has no parameter 'iters' (its "
                                                         "parameters: n, p)"),
                                            ("n=400", "--param n: give n with --n, not --param")])
def test_predict_from_a_store_refuses_a_param_the_model_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             observed_once: Path, param: str, message: str) -> None:
    """``predict --store S --app A --n 200 --p 2 --param iters=5``: the misspelt or unknown parameter was
    ignored without a word (best-p from a model file refuses it), and ``--param n=400`` lost to --n."""
    db = _copy(observed_once, tmp_path)
    assert main(["predict", "--store", str(db), "--app", "lu", "--n", "200", "--p", "2", "--param", param]) == 2
    err = capsys.readouterr().err
    assert err == f"automodel: error: {message}\n"


@pytest.mark.parametrize("option", [["-o", "out.csv"], ["--json"], ["--parts"], ["--kernel", "x"],
                                    ["--load-from", "runs.db"]])
def test_predict_from_a_store_refuses_the_options_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            observed_once: Path, option: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``predict --store S --app A --n 200 --p 2 -o out.csv`` wrote no file and --json printed text, each
    ignored without a word, exit 0."""
    monkeypatch.chdir(tmp_path)
    db = _copy(observed_once, tmp_path)
    assert main(["predict", "--store", str(db), "--app", "lu", "--n", "200", "--p", "2", *option]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {option[0]}: for predict MODEL.json DATA; with --store S" in err
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("command", [["fit", str(RUNS), "--quiet", "--templates", "none"],
                                     ["suggest", str(RUNS), "--target", "n=1000,p=16"],
                                     ["run", "--cmd", "true {n} {p}", "--n", "1", "--p", "1", "--no-fit",
                                      "--no-progress", "--no-cpu", "-o", "runs.csv"]])
def test_an_app_without_a_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    """``fit runs.csv --app lu`` fitted the file and ``run ... --app lu`` stored nothing: --app without
    --store was ignored without a word, exit 0."""
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--app", "lu"]) == 2
    err = capsys.readouterr().err
    assert err == "automodel: error: --app 'lu': an application of a store; give --store S too, or drop --app\n"
    assert not (tmp_path / "runs.csv").exists()


def test_damaged_params_of_neighbouring_runs_are_not_read_as_others(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     observed_once: Path) -> None:
    """Before: the runs' params were parsed in one document joined by commas, so damaged rows paired
    up: '{"n": 100, "p": "' and '", "p": 2}' read as one record, '{"n": 200, "p": 1}, {"n": 1, "p": 1}'
    as two; runs, fit and predict --store went on with shifted parameters, exit 0. Now each row is
    its own record and the first damaged one is named."""
    db = _copy(observed_once, tmp_path)
    with sqlite3.connect(db) as conn:
        for row, text in ((3, '{"n": 100.0, "p": "'), (4, '", "p": 2}'), (5, '{"n": 200.0, "p": 1.0}, {"n": 1, "p": 1}')):
            conn.execute("UPDATE runs SET params = ? WHERE id = ?", (text, row))
    for command in (["runs"], ["fit", "--quiet"], ["predict", "--n", "400", "--p", "4"]):
        assert main([command[0], "--store", str(db), "--app", "lu", *command[1:]]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "table 'runs', row 3, column 'params': damaged record, not JSON" in err


@pytest.mark.parametrize("table, column, value, message", [
    ("terms", "term", "[" * 50_000 + "]" * 50_000, "table 'terms', row (app_id 1, idx 0), column 'term': damaged "
                                                   "record, not JSON (maximum recursion depth exceeded"),
    ("terms", "term", '{"a": 1}', "table 'terms', row (app_id 1, idx 0), column 'term': damaged record, expected a "
                                  "list, got dict"),
    ("applications", "options", '{"online": 5}', "table 'applications', row 1, column 'options': damaged record, "
                                                 "expected {\"online\": {...}, \"space\": NAME}"),
    ("applications", "options", '{"online": {"weighting": "bogus"}}',
     "table 'applications', row 1, column 'options': damaged record, online: unknown weighting 'bogus'"),
    ("applications", "options", '{"online": {"prune_percentile": "x"}}',
     "table 'applications', row 1, column 'options': damaged record, online prune_percentile must be a number"),
    ("applications", "options", '{"online": {"anomaly_mad": "x"}}',
     "table 'applications', row 1, column 'options': damaged record, online anomaly_mad must be a finite number "
     "above 0, got 'x'"),
], ids=["deep term", "term object", "online 5", "weighting", "percentile", "anomaly_mad"])
@pytest.mark.parametrize("command", [["ranking"], ["predict", "--n", "400", "--p", "4"]], ids=["ranking", "predict"])
def test_a_damaged_term_or_options_record_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      observed_once: Path, table: str, column: str, value: str,
                                                      message: str, command: list[str]) -> None:
    """Before: a term nested too deep was a RecursionError traceback, stored options {"online": 5} an
    AttributeError, a weighting the store does not know a KeyError, a percentile or threshold of text a
    numpy TypeError (observe), each exit 1; now the record is named in one line, exit 2."""
    assert message in _damaged_error(tmp_path, capsys, observed_once, table, column, value, command)
