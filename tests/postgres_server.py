"""A throwaway PostgreSQL server for the store tests, and the ``store_url`` fixture over every backend.

The server is made by ``initdb`` in a temporary directory and started by ``pg_ctl`` on a free port of
127.0.0.1 (its socket in the same directory, ``fsync`` off), once per test session, and stopped
(``pg_ctl stop -m immediate``) and deleted at the end. Under ``pytest -n 2`` each worker that runs a
store test has its own server, directory and port (a start that finds its port taken tries another). ``initdb`` refuses to run as root, so as root
the server runs as ``nobody``. Each test gets a fresh database (``CREATE DATABASE``). Without the
binaries (on ``PATH`` or under ``/usr/lib/postgresql/*/bin``) or the psycopg driver, the PostgreSQL
parameter is skipped with the reason.

A plugin of the test suite (``pytest_plugins`` in conftest.py): a test that takes ``store_url`` runs
on every backend, as optuna tests its storages through one list.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: the backends every store test runs on
BACKENDS = ("sqlite", "postgresql")
#: the backends of the store's interface that the observe contract runs on: the SQL ones and memory
STORAGES = (*BACKENDS, "memory")
#: the server's superuser
USER = "automodel"
#: who runs the server when the tests run as root
UNPRIVILEGED = "nobody"
#: tries to start the server, each on a new free port (the workers of ``pytest -n 2`` each start one)
STARTS = 3


def bindir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on ``PATH``, else the newest ``/usr/lib/postgresql/*/bin``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: float(p.parts[-3]))
    return versions[-1].parent if versions else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the PostgreSQL driver psycopg is not installed (pip install 'automodel-hpc[postgres]')"
    if bindir() is None:
        return "no PostgreSQL binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(UNPRIVILEGED)
        except KeyError:
            return f"running as root, and there is no user {UNPRIVILEGED!r} to run the server (initdb refuses root)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running PostgreSQL server in ``root`` on ``127.0.0.1:port``."""

    bin: Path
    root: Path
    port: int
    owner: dict = field(default_factory=dict)  # user/group for subprocess.run when run as root
    databases: itertools.count = field(default_factory=itertools.count)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str) -> None:
        done = subprocess.run([str(self.bin / args[0]), *args[1:]], capture_output=True, text=True, timeout=120,
                              cwd=self.root, **self.owner)
        if done.returncode:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    @classmethod
    def create(cls) -> Server:
        root = Path(tempfile.mkdtemp(prefix="automodel-pg-"))
        owner = {}
        if os.geteuid() == 0:
            user = pwd.getpwnam(UNPRIVILEGED)
            os.chown(root, user.pw_uid, user.pw_gid)
            owner = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        server = cls(bindir(), root, free_port(), owner)
        server._run("initdb", "-D", str(server.data), "-U", USER, "--auth=trust", "--encoding=UTF8", "--no-sync")
        for attempt in range(STARTS):
            try:
                server.start()
                return server
            except RuntimeError:  # the port was taken between free_port() and the server's bind
                if attempt == STARTS - 1:
                    raise
                server.port = free_port()
        return server

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        self._run("pg_ctl", "start", "-w", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options)

    def stop(self, mode: str = "immediate") -> None:
        self._run("pg_ctl", "stop", "-w", "-m", mode, "-D", str(self.data))

    def url(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def fresh_database(self) -> str:
        """The URL of a new, empty database."""
        import psycopg

        name = f"test_{next(self.databases)}"
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    """The session's PostgreSQL server (skipped, with the reason, where none can be started)."""
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    server = Server.create()
    yield server
    server.remove()


@pytest.fixture(params=STORAGES)
def storage(request: pytest.FixtureRequest, tmp_path: Path):
    """A new, empty store on each backend of the store's interface (:mod:`automodel.store.storage`): a
    SQLite file path, a PostgreSQL URL of a fresh database, or an in-memory store."""
    if request.param == "memory":
        from automodel.store.memory import MemoryStorage

        return MemoryStorage()
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("postgres").fresh_database()


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store on each backend: a SQLite file path, or a PostgreSQL URL of a fresh database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("postgres").fresh_database()
