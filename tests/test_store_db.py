"""Opening a store: paths and URLs, one-line errors, readers that create nothing, what is retried."""

import io
import sqlite3
import sys

import numpy as np
import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from automodel import store as S
from automodel.errors import StoreError
from automodel.store.db import database_url, pack, transient, unpack


def test_open_errors(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        S.Store(tmp_path / "missing" / "s.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="junk.db: file is not a database"):
        S.Store(junk)
    with pytest.raises(StoreError, match="no such store"):
        S.Store(tmp_path / "typo.db", create=False)
    assert not (tmp_path / "typo.db").exists()
    with pytest.raises(StoreError, match="not a database URL"):
        S.Store("nosuchdialect://host/db")
    store = S.Store(tmp_path / "new.db")
    assert (tmp_path / "new.db").exists()
    store.dispose()


def test_a_sqlite_url_whose_query_sqlite_would_not_read_is_one_line(tmp_path):
    """``?mode=ro`` without ``uri=true`` was ignored (two lines of SAWarning, the file opened for
    writing); with ``uri=true`` but a path, not a ``file:`` URI, a reader created ``s.db?mode=ro``."""
    path = tmp_path / "s.db"
    S.record(path, cpu=0.5, host="a", at=1.0)
    with pytest.raises(StoreError, match=r"s.db\?mode=ro: Query string argument\(s\) 'mode' are not accepted.*URL\.$"):
        S.samples(f"sqlite:///{path}?mode=ro")
    with pytest.raises(StoreError, match="with uri=true the database is a file: URI"):
        S.samples(f"sqlite:///{path}?mode=ro&uri=true")
    assert sorted(p.name for p in tmp_path.iterdir() if "mode" in p.name) == []
    assert S.samples(f"sqlite:///file:{path}?mode=ro&uri=true")["cpu"].tolist() == [0.5]


def test_a_deleted_store_file_is_a_new_store(tmp_path):
    path = tmp_path / "s.db"
    S.record(path, cpu=0.5, host="a", at=1.0)  # the process keeps the file's engine
    path.unlink()
    with pytest.raises(StoreError, match="no such store"):
        S.samples(path)
    S.record(path, cpu=0.6, host="a", at=2.0)
    assert path.exists() and S.samples(path)["cpu"].tolist() == [0.6]


def test_urls():
    assert database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("postgresql+psycopg2://u@h/db") == "postgresql+psycopg2://u@h/db"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_a_missing_driver_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    with pytest.raises(StoreError, match=r"u:\*\*\*@127.0.0.1:1/db: the database driver is missing .*"
                                         r"pip install 'automodel-hpc\[postgres\]'"):
        S.Store("postgresql://u:secret@127.0.0.1:1/db")


def test_what_is_transient():
    def error(cls, cause):
        return cls("SELECT", {}, cause)

    locked, missing = sqlite3.OperationalError("database is locked"), sqlite3.OperationalError("no such table: x")
    assert transient(error(OperationalError, locked), sqlite=True)
    assert not transient(error(OperationalError, missing), sqlite=True)
    for state, expected in (("40001", True), ("40P01", True), ("57P01", True), ("08006", True), ("23505", False),
                            ("42P01", False)):
        cause = type("PgError", (Exception,), {"sqlstate": state})("x")
        assert transient(error(OperationalError, cause), sqlite=False) is expected
    assert transient(error(OperationalError, OSError("connection refused")), sqlite=False)
    for cause, expected in (('FATAL:  database "runs" does not exist', False), ("FATAL:  password authentication "
                            "failed for user \"me\"", False), ("FATAL:  the database system is starting up", True),
                            ("FATAL:  the database system is in recovery mode", True)):
        assert transient(error(OperationalError, OSError(f"connection failed: {cause}")), sqlite=False) is expected
    assert not transient(error(OperationalError, OSError("connection timeout expired")), sqlite=False)
    assert not transient(error(IntegrityError, ValueError("duplicate")), sqlite=False)


def test_a_state_blob_unpacks_as_numpy_loads_it():
    """unpack gives back the arrays numpy.load returns (values, dtypes, layouts, writable); a damaged blob
    (a flipped byte: a CRC error; a truncated one) is a StoreError."""
    rng = np.random.default_rng(0)
    arrays = {"gram": rng.random((7, 7)), "alive": rng.random(9) > 0.5, "f": np.asfortranarray(rng.random((3, 4))),
              "empty": np.zeros((0, 5)), "ints": np.arange(4, dtype=">i4"), "nan": np.array([np.nan, 1.0])}
    blob = pack(**arrays)
    got = unpack(blob, "state")
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        for k in arrays:
            ref = npz[k]
            assert got[k].dtype == ref.dtype and got[k].flags.writeable
            assert (got[k].flags.c_contiguous, got[k].flags.f_contiguous) == (ref.flags.c_contiguous,
                                                                              ref.flags.f_contiguous)
            np.testing.assert_array_equal(got[k], ref)
    damaged = bytearray(blob)
    damaged[len(blob) // 2] ^= 0xFF
    for bad in (bytes(damaged), blob[:100]):
        with pytest.raises(StoreError, match="damaged state blob"):
            unpack(bad, "state")


def test_the_retry_budget_is_an_option(monkeypatch):
    from automodel.store.db import RETRY_S, RETRY_VARIABLE, retry_budget

    assert retry_budget() == RETRY_S == 30.0
    monkeypatch.setenv(RETRY_VARIABLE, "120")
    assert retry_budget() == 120.0
    for bad in ("-1", "soon", "1e9", "nan", "\u0663", "1_0"):  # float() read Arabic-Indic 3 and 1_0 (10)
        monkeypatch.setenv(RETRY_VARIABLE, bad)
        with pytest.raises(StoreError, match=f"{RETRY_VARIABLE}=.*expected a number of seconds from 0 to 86400"):
            retry_budget()


def test_a_psycopg2_url_gets_the_hint_for_its_driver(monkeypatch):
    """``postgresql+psycopg2://`` names a driver the ``postgres`` extra does not install (psycopg 3):
    the hint says how to get either (issue 32)."""
    monkeypatch.setitem(sys.modules, "psycopg2", None)  # as where it is not installed
    with pytest.raises(StoreError) as caught:
        S.open_store("postgresql+psycopg2://me@127.0.0.1:1/runs")
    said = str(caught.value)
    assert "pip install psycopg2-binary, or write the URL as postgresql://" in said
    assert "pip install 'automodel-hpc[postgres]'" in said
