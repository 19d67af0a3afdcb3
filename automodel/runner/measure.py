"""One timed run: execute a command without a shell, time it, and measure the load around it.

The time is the wall clock, or the number the application prints (a regular expression over its
stdout). Load follows rational-polynomial-yagnik (sec. 2-3): the free CPU fraction of the machine
during the run comes from ``/proc/stat``, not counting the run's own processes (elsewhere from the
load average, :func:`free_cpu_from_load`), and the free
bandwidth fraction from a user-supplied probe command run just before.

Examples
--------
>>> result = run_once(["true"])
>>> result.status, result.error
(0, '')
"""

from __future__ import annotations

import math
import os
import re
import resource
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "CpuTimes",
    "RunResult",
    "STATUS_NOT_EXECUTABLE",
    "STATUS_NOT_FOUND",
    "STATUS_NO_TIME",
    "STATUS_TIMEOUT",
    "children_cpu_seconds",
    "free_cpu_fraction",
    "free_cpu_from_load",
    "probe_bandwidth",
    "read_cpu_times",
    "run_once",
]

#: Exit status recorded when a run exceeded its timeout (as coreutils ``timeout``).
STATUS_TIMEOUT = 124
#: Exit status recorded when the program exists but cannot be executed (no permission, not a program).
STATUS_NOT_EXECUTABLE = 126
#: Exit status recorded when the program is not found.
STATUS_NOT_FOUND = 127
#: Exit status recorded when the program exited 0 but printed no time matching ``time_regex``.
STATUS_NO_TIME = 65

_FLOAT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_BW = re.compile(r"bw\s*=\s*(\S+)")
_ERROR_TAIL = 300


@dataclass(frozen=True)
class CpuTimes:
    """Aggregate CPU counters from the first line of ``/proc/stat``, in clock ticks."""

    idle: int
    total: int


def read_cpu_times(path: str | os.PathLike[str] = "/proc/stat") -> CpuTimes | None:
    """Read the machine-wide CPU counters; ``None`` where ``/proc/stat`` does not exist."""
    try:
        with open(path, encoding="ascii") as fh:
            first = fh.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu" or len(first) < 5:
        return None
    ticks = [int(x) for x in first[1:9]]  # user nice system idle iowait irq softirq steal
    return CpuTimes(idle=ticks[3] + (ticks[4] if len(ticks) > 4 else 0), total=sum(ticks))


def free_cpu_fraction(before: CpuTimes, after: CpuTimes, own_seconds: float, clk_tck: float) -> float:
    """Free CPU fraction of the machine between two readings, not counting the run itself.

    ``(idle ticks + ticks used by the run's processes) / all ticks``: a run alone on the machine
    sees 1.0 however many cores it keeps busy; other users' work lowers it. Clipped to
    [0.01, 1] because load divisors (rational-polynomial-yagnik, eqs. 1-5) need cpu > 0.

    Returns
    -------
    float
        The fraction, or NaN if no tick elapsed between the readings.
    """
    total = after.total - before.total
    if total <= 0:
        return math.nan
    free = (after.idle - before.idle + own_seconds * clk_tck) / total
    return min(1.0, max(0.01, free))


def free_cpu_from_load() -> float:
    """Free CPU fraction from the one-minute load average, where ``/proc/stat`` is missing (macOS,
    the BSDs): ``1 - load / cores``, clipped to [0.01, 1] as :func:`free_cpu_fraction`. Coarser than
    the counters (a minute's average, the run's own processes included once they have run a while),
    and from the standard library (``os.getloadavg``), not a new dependency.

    Returns
    -------
    float
        The fraction, or NaN where the platform has no load average.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return math.nan
    return min(1.0, max(0.01, 1.0 - load / (os.cpu_count() or 1)))


def children_cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process's finished, waited-for children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class RunResult:
    """What one execution produced: ``time`` is NaN unless ``status == 0``."""

    status: int
    time: float
    wall: float
    stdout: str
    error: str
    captured: dict[str, float] = field(default_factory=dict)


def _tail(text: str, limit: int = _ERROR_TAIL) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    joined = " | ".join(lines[-5:])
    return joined[-limit:]


def _search_float(regex: re.Pattern[str], text: str) -> float | None:
    matches = list(regex.finditer(text))
    if not matches:
        return None
    match = matches[-1]
    token = match.group(1) if regex.groups else match.group(0)
    found = _FLOAT.search(token)
    return float(found.group(0)) if found else None


#: bytes of a run's stdout kept (the last ones: the time regex takes the last match) and of its stderr
MAX_STDOUT_BYTES = 1 << 20
MAX_STDERR_BYTES = 1 << 16
#: seconds the pipes may stay open once the run has exited or been killed (a daemon it started may
#: hold them): then they are closed, and what was printed so far is the run's output
PIPE_GRACE_S = 1.0


def _kill(proc: subprocess.Popen, close: bool = True) -> None:
    """Kill the run's process group, reap the run and (``close``) close its pipes."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for stream in (proc.stdout, proc.stderr) if close else ():
        stream.close()


def _drain(proc: subprocess.Popen, timeout: float | None) -> tuple[bool, float, str, str]:
    """Read the run's stdout and stderr until both close, keeping the last :data:`MAX_STDOUT_BYTES` and
    :data:`MAX_STDERR_BYTES`; kill its process group after ``timeout`` seconds, and stop reading
    :data:`PIPE_GRACE_S` after it exited or was killed even if a process it left behind holds a pipe.

    Returns
    -------
    tuple of (bool, float, str, str)
        Whether it timed out, when it ended (``time.perf_counter()``), and the kept stdout and stderr
        (UTF-8, bad bytes replaced; a cut stdout starts with a note).
    """
    limits = {proc.stdout: MAX_STDOUT_BYTES, proc.stderr: MAX_STDERR_BYTES}
    kept: dict[object, deque[bytes]] = {stream: deque() for stream in limits}
    sizes = dict.fromkeys(limits, 0)  # bytes in kept
    printed = dict.fromkeys(limits, 0)  # bytes read
    deadline = None if timeout is None else time.perf_counter() + timeout
    timed_out, ended = False, None
    with selectors.DefaultSelector() as selector:
        for stream in limits:
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            now = time.perf_counter()
            if ended is None and proc.poll() is not None:
                ended = now
            elif ended is None and deadline is not None and now >= deadline:
                timed_out, ended = True, now
                _kill(proc, close=False)
            if ended is not None and now >= ended + PIPE_GRACE_S:
                break
            for key, _ in selector.select(0.05):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                chunks = kept[key.fileobj]
                chunks.append(chunk)
                sizes[key.fileobj] += len(chunk)
                printed[key.fileobj] += len(chunk)
                while sizes[key.fileobj] - len(chunks[0]) >= limits[key.fileobj]:
                    sizes[key.fileobj] -= len(chunks.popleft())
    end = time.perf_counter() if ended is None else min(ended, time.perf_counter())
    proc.wait()
    for stream in limits:
        stream.close()
    out, err = (b"".join(kept[s])[-limits[s]:].decode("utf-8", errors="replace").replace("\r\n", "\n")
                for s in (proc.stdout, proc.stderr))
    if printed[proc.stdout] > MAX_STDOUT_BYTES:
        out = f"[only the last {MAX_STDOUT_BYTES} bytes of stdout are kept]\n" + out
    return timed_out, end, out, err


def run_once(
    argv: Sequence[str],
    timeout: float | None = None,
    time_regex: str | None = None,
    captures: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Execute ``argv`` (no shell) and measure it.

    Parameters
    ----------
    argv : sequence of str
        The program and its arguments.
    timeout : float, optional
        Seconds after which the whole process group is killed and the run recorded with
        :data:`STATUS_TIMEOUT`.
    time_regex : str, optional
        A regular expression searched in stdout (last match wins); its first group (or the
        whole match) holds the time in seconds. Without it the wall-clock time is used.
    captures : mapping of str to str, optional
        Column name -> regular expression for further numbers the application prints
        (e.g. ``{"comp": r"comp=(\\S+)"}``); missing ones are NaN.
    cwd : path, optional
        Working directory of the run.

    Returns
    -------
    RunResult
        Its stdout holds the last :data:`MAX_STDOUT_BYTES` the run printed. Reading stops
        :data:`PIPE_GRACE_S` after the run exited (or was killed), so a daemon it left holding its
        pipes delays it by no more than that.
    """
    regex = re.compile(time_regex) if time_regex else None
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            cwd=cwd, start_new_session=True,
        )
    except FileNotFoundError as exc:
        return RunResult(STATUS_NOT_FOUND, math.nan, 0.0, "", f"cannot run {argv[0]!r}: {exc.strerror}")
    except OSError as exc:  # no permission, no program in the file (exec format error), ...
        return RunResult(STATUS_NOT_EXECUTABLE, math.nan, 0.0, "", f"cannot run {argv[0]!r}: {exc.strerror}")
    try:
        timed_out, end, out, err = _drain(proc, timeout)
    except BaseException:  # KeyboardInterrupt: do not leave the application running
        _kill(proc)
        raise
    wall = end - start
    if timed_out:
        return RunResult(STATUS_TIMEOUT, math.nan, wall, out, _tail(f"{err}\ntimed out after {timeout:g} s"))
    code = proc.returncode
    status = 128 - code if code < 0 else code  # killed by signal s -> 128 + s, as a shell says
    captured = {}
    for column, pattern in (captures or {}).items():
        value = _search_float(re.compile(pattern), out)
        captured[column] = math.nan if value is None else value
    if status != 0:
        return RunResult(status, math.nan, wall, out, _tail(err) or f"exit status {status}", captured)
    measured = wall
    if regex is not None:
        value = _search_float(regex, out)
        if value is None:
            return RunResult(STATUS_NO_TIME, math.nan, wall, out,
                             _tail(f"no match for time regex {time_regex!r} in stdout: {_tail(out, 120)}"), captured)
        measured = value
    return RunResult(0, measured, wall, out, "", captured)


def probe_bandwidth(argv: Sequence[str], timeout: float | None = None) -> tuple[float, str]:
    """Run a bandwidth probe and read the free bandwidth fraction it prints.

    Parameters
    ----------
    argv : sequence of str
        The probe and its arguments (run without a shell, as :func:`run_once`).
    timeout : float, optional
        Seconds allowed to the probe (default 60).

    Returns
    -------
    tuple of (float, str)
        The fraction (``bw=<x>`` in stdout, else the last number printed) and an empty note; or
        NaN and a note saying why there is none (the probe failed, or printed no number in (0, 1]).
    """
    result = run_once(argv, timeout=timeout or 60.0)
    if result.status != 0:
        return math.nan, f"bw probe failed ({result.status}): {result.error}"
    value = _search_float(_BW, result.stdout)
    if value is None:
        numbers = _FLOAT.findall(result.stdout)
        value = float(numbers[-1]) if numbers else None
    if value is None or not (0 < value <= 1):
        return math.nan, f"bw probe printed no fraction in (0, 1]: {_tail(result.stdout, 80)!r}"
    return value, ""
