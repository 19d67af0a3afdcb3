"""A warm interpreter for tests that start many Python processes: a server that imports the heavy
modules once and forks a process for each command, and the small client that stands in for the command.

``PYTHON warm_python.py serve SOCKET [MODULE ...]`` imports the MODULEs (those it can), listens on the
Unix socket SOCKET and prints ``ready``; it ends when its stdin closes.
``PYTHON -I -S warm_python.py SOCKET KIND ARG ...`` is a command: it sends its arguments, working directory, environment and its stdin, stdout and stderr (the
descriptors themselves) to the server, which forks; the fork takes them over and runs the command as the
interpreter would (``KIND`` ``automodel``: ``python -m automodel ARG ...``; ``python``: ``python ARG ...``
with ``-c CODE``, ``-m MODULE`` or a script; any other form is run by a new interpreter). The client
waits for the fork, forwards the signals it gets to it, and exits with its status (a fork killed by a
signal kills the client with it); a client that dies first (SIGKILL) takes its fork with it.

Each command is a process of its own, started from a copy of the server: only the imports are shared,
so a command runs as written and sees its own argv, folder, environment, descriptors and exit status.
Starting one costs a fork instead of an interpreter's start and imports (about a second of CPU for
pandas, scipy, sympy and SQLAlchemy). The server freezes its objects out of the collector before it
forks, and a fork ends with ``os._exit`` after what the interpreter's own exit does for a program
(threads joined, atexit functions, streams flushed), without tearing down the modules: either would
write to, and so copy, every page it shares with the server (a trivial command took 0.4 s of CPU that way).
Used by tests/test_readme.py (every ``automodel`` and ``python3`` of the pages) and
tests/test_store_conformance.py (the concurrent writers).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

HEADER = struct.Struct("!I")


class Warm:
    """A running server (started by :meth:`start`, ended by :meth:`stop`) and the commands of its clients."""

    def __init__(self, python: str, preload: tuple[str, ...], env: dict[str, str] | None = None) -> None:
        import subprocess
        import tempfile

        self.python = python
        self.folder = tempfile.mkdtemp(prefix="automodel-warm-")
        self.socket = os.path.join(self.folder, "python.sock")
        self.server = subprocess.Popen([python, os.path.abspath(__file__), "serve", self.socket, *preload],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=self.folder,
                                       text=True)
        if self.server.stdout.readline() != "ready\n":
            raise RuntimeError(f"the warm interpreter did not start (exit {self.server.wait(60)})")

    def command(self, kind: str) -> list[str]:
        """The argv that runs ``python ...`` (``kind`` ``python``) or ``automodel ...`` forked by the server."""
        return [self.python, "-I", "-S", os.path.abspath(__file__), self.socket, kind]

    def stop(self) -> None:
        self.server.stdin.close()
        self.server.wait(60)
        os.unlink(self.socket)
        os.rmdir(self.folder)


# -- the client: stdlib only, started with -I -S ---------------------------------------------------------
def client(path: str, kind: str, args: list[str]) -> None:
    if kind == "python" and not (args and (args[0] in ("-c", "-m") and len(args) > 1 or not args[0].startswith("-"))):
        os.execv(sys.executable, [sys.executable, *args])  # a form the server does not run: a new interpreter
    request = json.dumps({"kind": kind, "args": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [HEADER.pack(len(request)) + request], [0, 1, 2])
    reader = conn.makefile("r")
    pid = int(reader.readline())
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    how, value = reader.readline().split()
    if how == "signal":
        signal.signal(int(value), signal.SIG_DFL)
        os.kill(os.getpid(), int(value))
    sys.exit(int(value))


# -- the server -----------------------------------------------------------------------------------------------
def serve(path: str, modules: list[str]):
    """Serve until stdin closes; in a fork, return the function that runs its command."""
    import importlib
    import select

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:  # not installed here: a command that needs it fails as it would anyway
            pass
    base = sys.path[1:]  # without this file's folder: each command puts its own first
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    forks: dict[int, socket.socket | None] = {}  # None: its client died, the fork is killed
    import gc

    gc.freeze()  # the imports' objects stay out of the forks' collections (no copy of their pages)
    print("ready", flush=True)
    while True:
        watched = [listener, wake_r, 0, *filter(None, forks.values())]
        for ready in select.select(watched, [], [])[0]:
            if ready == 0:
                if not os.read(0, 4096):  # the tests are done
                    for pid in forks:
                        os.kill(pid, signal.SIGKILL)
                    return None
            elif ready == wake_r:
                try:
                    while os.read(wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            elif ready is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, EOFError, ValueError):  # a client that died mid-request
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for fd in (wake_r, wake_w):
                        os.close(fd)
                    for other in (listener, conn, *filter(None, forks.values())):
                        other.close()
                    return lambda: _run(request, fds, base)
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                forks[pid] = conn
            elif not ready.recv(1):  # the client died: so does its fork
                pid = next(pid for pid, c in forks.items() if c is ready)
                os.kill(pid, signal.SIGKILL)
                forks[pid] = None
                ready.close()
        while forks:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = forks.pop(pid, None)
            if conn is not None:
                how = ("signal", os.WTERMSIG(status)) if os.WIFSIGNALED(status) else ("exit", os.WEXITSTATUS(status))
                try:
                    conn.sendall(f"{how[0]} {how[1]}\n".encode())
                except OSError:
                    pass
                conn.close()


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 20)
        if not more:
            raise EOFError("the client went away mid-request")
        data += more
    return json.loads(data[HEADER.size:]), fds


def _run(request: dict, fds: list[int], base: list[str]) -> None:
    """In the fork: take over the client's descriptors, folder and environment, and run its command."""
    import runpy
    import types

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdout.reconfigure(line_buffering=os.isatty(1))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    args = request["args"]
    if request["kind"] == "automodel":
        args = ["-m", "automodel", *args]
    if args[0] == "-m":
        sys.argv, sys.path[:] = [args[1], *args[2:]], [os.getcwd(), *base]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv, sys.path[:] = ["-c", *args[2:]], ["", *base]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(args[1], "<string>", "exec"), main.__dict__)  # noqa: S102 (the command, as python -c runs it)
    else:
        script = os.path.abspath(args[0])
        sys.argv, sys.path[:] = list(args), [os.path.dirname(os.path.realpath(script)), *base]
        runpy.run_path(script, run_name="__main__")


def _exit(job) -> None:
    """Run ``job`` and end as the interpreter ends (the status of SystemExit, a traceback and 1 for any
    other exception, threads joined, atexit functions run, streams flushed) but without tearing down the
    imported modules: that would touch, and so copy, every page the fork shares with the server."""
    import atexit
    import threading

    try:
        job()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 (as the interpreter: print it, exit 1)
        sys.excepthook(*sys.exc_info())
        code = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # as the interpreter, when flushing stdout fails at exit
    os._exit(code & 0xFF)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        job = serve(sys.argv[2], sys.argv[3:])
        if job is not None:  # in a fork: the command, as the interpreter's own __main__ would run it
            _exit(job)
    else:
        client(sys.argv[1], sys.argv[2], sys.argv[3:])
