"""Opening a store (SQLite path or any SQLAlchemy URL) and running its transactions.

Every call on a store is one transaction run by :meth:`Store.transaction`. A write holds the
application's write lock from the statement that reads the application: on SQLite the database
lock (``BEGIN IMMEDIATE``, so two observers never read the same state and both write it back);
elsewhere ``SELECT ... FOR UPDATE`` on the application row (:meth:`automodel.store.sql.SqlSession.find_app`).
A read sees one snapshot (a plain ``BEGIN`` on SQLite, ``REPEATABLE READ`` elsewhere). SQLite runs in
WAL mode, so readers never wait and a process killed mid-write leaves the last committed state.

A transient failure (a serialisation failure, a deadlock, a lost connection or a restarting server,
a locked SQLite file) is retried with jittered exponential backoff (from :data:`BACKOFF_S`, at most
:data:`MAX_BACKOFF_S` apart) for a budget of seconds (:data:`RETRY_S`, sized for a server restart;
the environment variable :data:`RETRY_VARIABLE` sets another), with a one-line note on stderr once
they have lasted :data:`NOTE_AFTER_S`; then, as every other database error, it is a one-line
:class:`~automodel.errors.StoreError` naming the store (the URL's password masked) and the cause.
A permanent failure (an unknown database or user, a refused password) is not retried.

PostgreSQL URLs (``postgresql://user@host/db``) use the psycopg 3 driver (``pip install
'automodel-hpc[postgres]'``).
"""

from __future__ import annotations

import io
import os
import random
import re
import sys
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import quote, unquote_plus, urlsplit

import numpy as np
from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, OperationalError, SAWarning, SQLAlchemyError

from automodel.data.numerals import number_text
from automodel.errors import StoreError, install_hint
from automodel.names import printable
from automodel.store import schema

__all__ = ["Store", "open_store", "database_url", "transient", "pack", "unpack", "now", "retry_budget",
           "RETRY_S", "RETRY_VARIABLE", "writable", "read_only_url"]

T = TypeVar("T")

#: how long SQLite waits for another writer's lock before the attempt fails (then retried within the
#: budget)
BUSY_TIMEOUT_S = 30.0
#: how long connecting to a database server may take
CONNECT_TIMEOUT_S = 10
#: seconds a transaction that fails transiently is retried for (a PostgreSQL restart takes seconds,
#: a crash recovery or a restart under load longer); the waits between attempts double from
#: BACKOFF_S up to MAX_BACKOFF_S
RETRY_S = 30.0
BACKOFF_S = 0.1
MAX_BACKOFF_S = 2.0
#: seconds of retrying after which a one-line note says so on stderr
NOTE_AFTER_S = 1.0
#: the environment variable that sets another retry budget in seconds (0: no retry)
RETRY_VARIABLE = "AUTOMODEL_STORE_RETRY_S"
#: what a server says, in a connection failure without an SQLSTATE, while it starts, stops or recovers
#: (retried; any other FATAL message, such as an unknown database or user, is permanent)
_STARTING = ("starting up", "shutting down", "in recovery mode", "too many clients", "terminating connection",
             "not yet accepting connections")
#: PostgreSQL SQLSTATEs retried (besides class 08, connection exceptions): serialization_failure,
#: deadlock_detected, admin_shutdown, crash_shutdown, cannot_connect_now
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "57P01", "57P02", "57P03"})
#: the PostgreSQL advisory lock that serialises creating and migrating the tables
SCHEMA_LOCK = 0x6175746F
#: schemes that mean the psycopg 3 driver (SQLAlchemy's default for them is psycopg2)
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: the execution option that marks a read-only transaction (a plain ``BEGIN`` on SQLite)
READ_ONLY = "automodel_read_only"


def database_url(target: str | Path) -> str:
    """The SQLAlchemy URL of a store: a path becomes ``sqlite:///ABSOLUTE``; ``postgresql://`` and
    ``postgres://`` become ``postgresql+psycopg://``; any other URL is kept.

    Examples
    --------
    >>> database_url("postgresql://me@db.example.org/runs")
    'postgresql+psycopg://me@db.example.org/runs'
    """
    text_ = str(target)
    if text_.startswith(POSTGRES_SCHEMES):
        return "postgresql+psycopg://" + text_.partition("://")[2]
    if "://" in text_:
        return text_
    path = Path(text_).expanduser().resolve()
    if not path.parent.is_dir():
        raise StoreError(f"{text_}: the folder {path.parent} does not exist")
    if path.is_dir():
        raise StoreError(f"{text_}: is a directory, expected a store file (SQLite) or a database URL")
    return f"sqlite:///{path}"


#: a password in a URL: ``scheme://user:PASSWORD@host`` and any query field naming one (``?password=``,
#: ``&sslpassword=``)
_NETLOC_PASSWORD = re.compile(r"^([A-Za-z][\w+.-]*://[^:/?#@]*:)[^/?#]*@")
_QUERY_PASSWORD = re.compile(r"([?&;][^=&#;]*password[^=&#;]*=)[^&#;]*", re.IGNORECASE)


def _shown(target: str | Path) -> str:
    """The store as messages name it: the path as given, or the URL with every password masked (in
    ``user:pass@`` and in query fields such as ``?password=``), also when the URL does not parse.

    Examples
    --------
    >>> _shown("postgresql://me:secret@db/runs?password=secret&sslmode=require")
    'postgresql://me:***@db/runs?password=***&sslmode=require'
    >>> _shown("postgresql://me:secret@db:port/runs")
    'postgresql://me:***@db:port/runs'
    """
    text_ = str(target)
    if "://" not in text_:
        return text_
    try:
        text_ = make_url(text_).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError, TypeError):
        text_ = _NETLOC_PASSWORD.sub(r"\1***@", text_)
    return _QUERY_PASSWORD.sub(r"\1***", text_)


def _secrets(target: str) -> tuple[str, ...]:
    """The passwords a store URL holds (``user:PASSWORD@``, ``?password=PASSWORD``), as given and
    decoded, longest first, so that messages can mask them wherever a driver quotes them."""
    if "://" not in target:
        return ()
    found = [m.group(0)[len(m.group(1)):-1] for m in [_NETLOC_PASSWORD.match(target)] if m]
    found += [m.group(0)[len(m.group(1)):] for m in _QUERY_PASSWORD.finditer(target)]
    found += [unquote_plus(v) for v in found]
    return tuple(sorted({v for v in found if len(v) >= 3}, key=len, reverse=True))


def _url_problem(url: str) -> str | None:
    """What is wrong with the host part of a database URL that does not parse, in words (None when
    it is not that)."""
    try:
        urlsplit(url).port
    except ValueError:
        return "the port after the host must be a number from 0 to 65535"
    return None


def _sqlite_uri_problem(url: str) -> str | None:
    """What is wrong with a SQLite URL with ``uri=true`` whose database is a path, not a ``file:`` URI:
    SQLite would open (and create) a file named with the query, ``runs.db?mode=ro``, even for a reader
    (None when it is not that)."""
    parsed = make_url(url)
    uri = str(parsed.query.get("uri", "")).lower() in ("true", "1")
    if not uri or (parsed.database or "").startswith("file:"):
        return None
    return (f"with uri=true the database is a file: URI (sqlite:///file:{parsed.database}?mode=ro&uri=true); "
            f"this one would open a file named {parsed.database}?...")


def _driver_hint(url: str) -> str:
    """How to get the driver a database URL names: the ``postgres`` extra installs psycopg 3, which a
    ``postgresql+psycopg2://`` URL does not use.

    Examples
    --------
    >>> _driver_hint("postgresql+psycopg2://me@host/runs")
    "pip install psycopg2-binary, or write the URL as postgresql://... for psycopg 3 (pip install 'automodel-hpc[postgres]')"
    """
    scheme = url.partition("://")[0].lower()
    if scheme.startswith("postgres") and "+" in scheme and not scheme.endswith("+psycopg"):
        driver = scheme.partition("+")[2]
        package = {"psycopg2": "psycopg2-binary"}.get(driver, driver)
        return (f"pip install {package}, or write the URL as postgresql://... for psycopg 3 "
                f"({install_hint('postgres')})")
    return f"for PostgreSQL: {install_hint('postgres')}"


def transient(exc: DBAPIError, sqlite: bool) -> bool:
    """Whether a failed transaction may succeed when run again (see the module docstring)."""
    cause = str(exc.orig).lower()
    if sqlite:
        return isinstance(exc, OperationalError) and ("locked" in cause or "busy" in cause)
    if exc.connection_invalidated:
        return True
    state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    if state is None:  # no connection: refused (a restarting server) is worth retrying, a timeout is not,
        # nor what the server refuses for good (FATAL: database "x" does not exist, password failed)
        permanent = "fatal:" in cause and not any(words in cause for words in _STARTING)
        return isinstance(exc, OperationalError) and "timeout" not in cause and not permanent
    return state in TRANSIENT_SQLSTATES or state.startswith("08")


def retry_budget() -> float:
    """The seconds transient failures are retried for: :data:`RETRY_VARIABLE` when set, else
    :data:`RETRY_S`.

    Raises
    ------
    StoreError
        The variable holds no number of seconds from 0 to 86400.
    """
    text_ = os.environ.get(RETRY_VARIABLE, "").strip()
    if not text_:
        return RETRY_S
    value = number_text(text_)  # ASCII digits: float() also took '٣' and '1_0'; NaN fails the bounds
    if not 0 <= value <= 86400:
        raise StoreError(f"{RETRY_VARIABLE}={text_[:40]!r}: expected a number of seconds from 0 to 86400")
    return value


def writable(path: Path) -> bool:
    """Whether the SQLite file ``path`` can be written: the file and its folder (where SQLite makes its
    ``-wal`` and ``-shm`` files) writable, and not on read-only media."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def read_only_url(path: str) -> str:
    """The URL that opens the SQLite file ``path`` read-only and immutable (no lock, no ``-wal`` or
    ``-shm`` file made: what read-only media and files without write permission allow)."""
    return f"sqlite:///file:{quote(path)}?mode=ro&immutable=1&uri=true"


def _sqlite_store_or_new(cursor: Any) -> bool:
    """Whether the SQLite file of ``cursor`` (a driver's cursor, before any SQLAlchemy) is empty or an
    automodel store, not another program's database (:func:`schema.foreign_tables`)."""
    names = {row[0] for row in cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    known = {t.name for t in schema.metadata.sorted_tables} & names
    columns = {name: {row[1] for row in cursor.execute(f'PRAGMA table_info("{name}")')} for name in known}
    return schema.foreign_tables(names, columns, sqlite=True) is None


def _sqlite_engine(url: str, read_only: bool = False) -> Engine:
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record) -> None:  # pragma: no cover - exercised through every test
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if not read_only and _sqlite_store_or_new(cur):  # another program's file is left as it is
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:  # pragma: no cover
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READ_ONLY) else "BEGIN IMMEDIATE")

    return engine


def _server_engine(url: str) -> Engine:
    """The engine of a database server. A pooled connection is not pinged before each transaction (a
    round trip each): one the server closed (a restart) fails the transaction's first statement, which
    :meth:`Store.transaction` retries on a new connection, as it retries a connection lost mid-way."""
    parsed = make_url(url)
    args = {"connect_timeout": CONNECT_TIMEOUT_S} if parsed.get_backend_name() == "postgresql" and \
        "connect_timeout" not in parsed.query else {}
    return create_engine(url, connect_args=args)


#: the engine (pool of connections) of each database this process opened, its tables checked: an engine
#: lives as long as the process, so a call on a store path pays neither a new connection nor a check
#: of the tables, nor, on SQLite, the WAL checkpoint of closing the last connection (10 ms)
_ENGINES: dict[str, Engine] = {}


def _forget_after_fork() -> None:
    """In a forked child: leave the parent's connections to the parent (dropped, not closed)."""
    for engine in _ENGINES.values():
        engine.dispose(close=False)
    _ENGINES.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def _forget(url: str) -> None:
    """Close and drop the engine of ``url``, if this process has one."""
    engine = _ENGINES.pop(url, None)
    if engine is not None:
        engine.dispose()


class Store:
    """A handle on one store; cheap to create, safe to share between threads of one process.

    Parameters
    ----------
    target : path or URL
        A SQLite file or a SQLAlchemy URL.
    create : bool
        Create the store when it does not exist (writers); otherwise a missing SQLite file or a
        database without the store's tables is a :class:`StoreError` (readers: a mistyped path
        must not leave an empty store behind).
    """

    def __init__(self, target: str | Path, create: bool = True) -> None:
        self.target = _shown(target)
        self._secrets = _secrets(str(target))
        url = database_url(target)
        self.is_sqlite = url.startswith("sqlite")
        self.read_only = False
        self._schema_known = False  # whether a write found the store's schema one this version may write
        try:
            problem = _sqlite_uri_problem(url) if self.is_sqlite else _url_problem(url)
            if problem is not None:
                raise StoreError(f"{self.target}: not a database URL ({problem})")
            database = make_url(url).database
            local = self.is_sqlite and database not in (None, "", ":memory:") and "mode=" not in url
            if local and not Path(database).exists():
                _forget(url)  # an engine of a deleted file would write into the deleted file
                if not create:
                    raise StoreError(f"{self.target}: no such store (automodel observe or automodel load "
                                     "record creates one)")
            elif local and not writable(Path(database)):
                url, self.read_only = read_only_url(database), True
            if url in _ENGINES:
                self._url, self.engine = url, _ENGINES[url]
                return
            self._url = url
            with warnings.catch_warnings():  # what the driver would ignore (?mode=ro without uri=true: the
                warnings.simplefilter("error", SAWarning)  # file opened for writing, two lines of warning)
                self.engine = _sqlite_engine(url, self.read_only) if self.is_sqlite else _server_engine(url)
        except ImportError as exc:
            raise StoreError(f"{self.target}: the database driver is missing ({exc}); {_driver_hint(url)}") from None
        except SAWarning as exc:
            raise StoreError(f"{self.target}: {self._cause(exc).partition(' (Background')[0]}") from None
        except (SQLAlchemyError, ValueError) as exc:
            raise StoreError(f"{self.target}: not a database URL ({_url_problem(url) or self._cause(exc)})") from None
        try:
            if self.transaction(schema.outdated, write=False):
                self.transaction(lambda conn: self._setup(conn, create))
        except StoreError:
            self.engine.dispose()
            raise
        _ENGINES[url] = self.engine

    def _cause(self, exc: BaseException) -> str:
        """The first line of an error, with the URL's passwords masked should the driver quote them."""
        cause = _short(exc)
        for secret in self._secrets:
            cause = cause.replace(secret, "***")
        return cause

    def _setup(self, conn: Connection, create: bool) -> None:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
        if not create and not inspect(conn).has_table(schema.applications.name):
            raise StoreError(f"{self.target}: not an automodel store (it has no applications table)")
        schema.migrate(conn)

    def _refuse_newer(self, conn: Connection) -> None:
        """Refuse to write a store a newer automodel wrote (:func:`schema.newer_version`), or a database of
        another program (:func:`schema.foreign`: migrating it would alter its tables), in one line."""
        why = schema.foreign(conn)
        if why is not None:
            raise StoreError(f"{self.target}: not an automodel store ({why}); expected a store of automodel "
                             "observe, or a new file")
        newer = schema.newer_version(conn)
        if newer is not None:
            raise StoreError(f"{self.target}: written by a newer automodel (store schema {newer}; this version "
                             f"knows up to {schema.SCHEMA_VERSION}): it can be read, not written; upgrade "
                             "automodel to write it")

    def transaction(self, work: Callable[[Connection], T], write: bool = True) -> T:
        """``work(conn)`` in one transaction, committed when it returns, rolled back when it raises.

        Transient failures run it again for :func:`retry_budget` seconds, so ``work`` must have no
        effect outside the database. Every database error ends as a one-line :class:`StoreError`, and so
        does a write to a store of a newer schema (:meth:`_refuse_newer`).
        """
        if write and self.read_only:
            raise StoreError(f"{self.target}: the store is read-only (read-only media, or no permission to write "
                             "the file or its folder): it can be read, not written")
        attempt, first, noted = 1, None, False
        while True:
            try:
                with self.engine.connect() as conn:
                    if not write:
                        conn.execution_options(**self._read_options())
                    with conn.begin():
                        if write and not self._schema_known:
                            self._refuse_newer(conn)
                            self._schema_known = True  # once a handle: a newer automodel does not appear mid-run
                        return work(conn)
            except DBAPIError as exc:
                now_ = time.monotonic()
                first = now_ if first is None else first
                budget = retry_budget()
                wait = min(MAX_BACKOFF_S, BACKOFF_S * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
                if not transient(exc, self.is_sqlite) or now_ + wait - first > budget:
                    retried = f" (gave up after {attempt} attempts in {now_ - first:.1f} s)" if attempt > 1 else ""
                    raise StoreError(f"{self.target}: {self._cause(exc)}{retried}") from None
                if not noted and now_ + wait - first >= NOTE_AFTER_S:  # an outage, not a moment's contention
                    noted = True
                    print(f"automodel: note: {printable(self.target)}: {printable(self._cause(exc))}; retrying for up "
                          f"to {budget:g} s ({RETRY_VARIABLE})", file=sys.stderr, flush=True)
            except SQLAlchemyError as exc:
                raise StoreError(f"{self.target}: {self._cause(exc)}") from None
            time.sleep(wait)
            attempt += 1

    def _read_options(self) -> dict[str, object]:
        return {READ_ONLY: True} if self.is_sqlite else {"isolation_level": "REPEATABLE READ"}

    def dispose(self) -> None:
        """Close the store's connections (those of every :class:`Store` on its database)."""
        _forget(self._url)
        self.engine.dispose()


def _short(exc: BaseException) -> str:
    if isinstance(exc, DBAPIError) and exc.orig is not None:
        exc = exc.orig
    text_ = str(exc).strip().splitlines()
    return text_[0][:200] if text_ else type(exc).__name__


def open_store(target: str | Path | Store, create: bool = True) -> Store:
    """A :class:`Store` for a SQLite file path or a SQLAlchemy URL (``postgresql://...``); ``create``
    as for :class:`Store`."""
    return target if isinstance(target, Store) else Store(target, create)


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
    except (ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile) as exc:  # TypeError: text, not a blob
        raise StoreError(f"{where}: damaged state blob ({_short(exc)})") from None


def now() -> float:
    return time.time()

