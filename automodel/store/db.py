"""Opening a store (SQLite path or any SQLAlchemy URL) and its write transactions.

Every write is one transaction that holds the application's write lock from its first statement:
on SQLite ``BEGIN IMMEDIATE`` (so two observers never read the same state and both write it back);
elsewhere ``SELECT ... FOR UPDATE`` on the application row (:func:`lock_application`). SQLite runs
in WAL mode, so readers never wait and a process killed mid-write leaves the last committed state.
"""

from __future__ import annotations

import io
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
from sqlalchemy import create_engine, event, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from automodel.errors import StoreError
from automodel.store import schema

__all__ = ["Store", "open_store", "pack", "unpack"]

BUSY_TIMEOUT_S = 120.0


def _url(target: str | Path) -> str:
    text = str(target)
    if "://" in text:
        return text
    path = Path(text).expanduser().resolve()
    if not path.parent.is_dir():
        raise StoreError(f"{text}: the folder {path.parent} does not exist")
    if path.is_dir():
        raise StoreError(f"{text}: is a directory, expected a store file (SQLite) or a database URL")
    return f"sqlite:///{path}"


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record) -> None:  # pragma: no cover - exercised through every test
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # pragma: no cover
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


class Store:
    """A handle on one store; cheap to create, safe to share between threads of one process."""

    def __init__(self, target: str | Path) -> None:
        self.target = str(target)
        url = _url(target)
        self.is_sqlite = url.startswith("sqlite")
        try:
            self.engine = _sqlite_engine(url) if self.is_sqlite else create_engine(url)
            with self.write() as conn:
                schema.metadata.create_all(conn)
        except StoreError:
            raise
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise StoreError(f"{self.target}: cannot open the store ({_short(exc)})") from None

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed on success, rolled back on any error."""
        try:
            with self.engine.begin() as conn:
                yield conn
        except OperationalError as exc:
            raise StoreError(f"{self.target}: write failed ({_short(exc)})") from None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn:
                yield conn
        except OperationalError as exc:
            raise StoreError(f"{self.target}: read failed ({_short(exc)})") from None

    def lock_application(self, conn: Connection, app_id: int) -> None:
        """Row lock on servers that have one (SQLite already holds the database write lock)."""
        if not self.is_sqlite:
            conn.execute(select(schema.applications.c.id).where(schema.applications.c.id == app_id)
                         .with_for_update())

    def dispose(self) -> None:
        self.engine.dispose()


def _short(exc: BaseException) -> str:
    if isinstance(exc, DBAPIError) and exc.orig is not None:
        exc = exc.orig
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def open_store(target: str | Path | Store) -> Store:
    """A :class:`Store` for a SQLite file path or a SQLAlchemy URL (``postgresql://...``)."""
    return target if isinstance(target, Store) else Store(target)


def pack(**arrays: np.ndarray) -> bytes:
    """Arrays to an ``.npz`` blob."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def unpack(blob: bytes, where: str) -> dict[str, np.ndarray]:
    """An ``.npz`` blob back to arrays, never unpickling; a damaged blob is a :class:`StoreError`."""
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError) as exc:
        raise StoreError(f"{where}: damaged state blob ({_short(exc)})") from None


def now() -> float:
    return time.time()
