"""Run an application over a designed grid of parameters, measure time and load, write runs as they finish.

The experiment runner behind ``automodel run``. A *campaign* is a command template
(``'mpirun -np {p} ./app {n}'``), named parameter axes (``n``, ``p`` and any extras) and a
number of repetitions. Each point of the Cartesian grid is executed without a shell, timed
(wall clock, or the time the application prints), and appended to a CSV as soon as it
finishes, so an interrupted campaign resumes where it stopped.

Load columns follow rational-polynomial-yagnik (sec. 2-3): ``cpu`` is the free CPU fraction
of the machine during the run (from ``/proc/stat``, not counting the run's own processes) and
``bw`` the free bandwidth fraction reported by a user-supplied probe command.

Examples
--------
>>> axes = {"n": parse_values("100:400:4", "n"), "p": parse_values("1,2", "p")}
>>> [tuple(point.values()) for point in expand_grid(axes)][:3]
[(100, 1), (100, 2), (200, 1)]
>>> substitute("./app {n} --procs={p}", {"n": 100, "p": 2})
['./app', '100', '--procs=2']
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import re
import resource
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from automodel.errors import DataError

__all__ = [
    "Campaign",
    "CpuTimes",
    "RunResult",
    "STATUS_NOT_FOUND",
    "STATUS_NOT_EXECUTABLE",
    "STATUS_NO_TIME",
    "STATUS_TIMEOUT",
    "columns_for",
    "expand_grid",
    "format_value",
    "free_cpu_fraction",
    "parse_values",
    "plan",
    "read_cpu_times",
    "run_campaign",
    "run_once",
    "substitute",
]

#: Exit status recorded when a run exceeded its timeout (as coreutils ``timeout``).
STATUS_TIMEOUT = 124
#: Exit status recorded when the program exists but cannot be executed.
STATUS_NOT_EXECUTABLE = 126
#: Exit status recorded when the program is not found.
STATUS_NOT_FOUND = 127
#: Exit status recorded when the program exited 0 but printed no time matching ``time_regex``.
STATUS_NO_TIME = 65
#: Placeholders every campaign provides besides its axes: repetition and run index.
BUILTIN_PLACEHOLDERS = ("rep", "index")

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_FLOAT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_ERROR_TAIL = 300


# ----------------------------------------------------------------------------- grid


def _number(text: str, name: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"parameter '{name}': '{text}' is not a number (expected e.g. 1000:8000:8)") from None
    if not math.isfinite(value):
        raise DataError(f"parameter '{name}': '{text}' is not finite")
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _tidy(values: list[float], integral: bool) -> list[int | float]:
    if integral:
        out: list[int | float] = []
        for v in values:
            r = int(round(v))
            if not out or out[-1] != r:
                out.append(r)
        return out
    return [float(f"{v:.12g}") for v in values]


def parse_values(spec: str, name: str = "value") -> list[int | float | str]:
    """Expand one axis specification into its list of values.

    Parameters
    ----------
    spec : str
        ``a:b:k`` -- ``k`` values linearly spaced from ``a`` to ``b`` inclusive;
        ``a:b:k:log`` -- ``k`` values geometrically spaced; ``a:b:*f`` -- ``a, a*f, a*f^2, ...``
        up to ``b``; ``a:b:+s`` -- ``a, a+s, ...`` up to ``b``; ``v1,v2,...`` -- an explicit list
        (numbers or strings); a single value. Ranges whose ends are integers give integers
        (rounded, duplicates removed).
    name : str
        The parameter name, used in error messages.

    Returns
    -------
    list
        The values in order.

    Raises
    ------
    DataError
        If the specification is empty or malformed.

    Examples
    --------
    >>> parse_values("1:256:*2", "p")
    [1, 2, 4, 8, 16, 32, 64, 128, 256]
    >>> parse_values("10:1000:3:log", "n")
    [10, 100, 1000]
    """
    spec = spec.strip()
    if not spec:
        raise DataError(f"parameter '{name}': empty value specification")
    if ":" not in spec:
        items = [s.strip() for s in spec.split(",")]
        if any(not s for s in items):
            raise DataError(f"parameter '{name}': empty item in list '{spec}'")
        out: list[int | float | str] = []
        for s in items:
            try:
                out.append(_number(s, name))
            except DataError:
                out.append(s)
        return out
    parts = spec.split(":")
    if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] not in ("log", "lin")):
        raise DataError(f"parameter '{name}': '{spec}' is not a range (expected a:b:k, a:b:k:log, a:b:*f or a:b:+s)")
    lo, hi = _number(parts[0], name), _number(parts[1], name)
    integral = isinstance(lo, int) and isinstance(hi, int)
    step = parts[2]
    if step.startswith("*") or step.startswith("+"):
        if len(parts) == 4:
            raise DataError(f"parameter '{name}': '{spec}' mixes a step with a spacing")
        s = float(_number(step[1:], name))
        geometric = step.startswith("*")
        if (geometric and (s <= 1 or lo <= 0)) or (not geometric and s <= 0) or hi < lo:
            raise DataError(f"parameter '{name}': '{spec}' does not go from a up to b (need b >= a, factor > 1, step > 0)")
        values, v = [], float(lo)
        while v <= hi * (1 + 1e-12):
            values.append(v)
            v = v * s if geometric else v + s
        return list(_tidy(values, integral and (geometric or float(s).is_integer())))
    count = _number(step, name)
    if not isinstance(count, int) or count < 1:
        raise DataError(f"parameter '{name}': count '{step}' in '{spec}' must be a positive integer")
    if count == 1:
        return [lo]
    if len(parts) == 4 and parts[3] == "log":
        if lo <= 0 or hi <= 0:
            raise DataError(f"parameter '{name}': geometric range '{spec}' needs positive ends")
        ratio = (hi / lo) ** (1.0 / (count - 1))
        values = [lo * ratio**i for i in range(count)]
    else:
        values = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
    return list(_tidy(values, integral))


def expand_grid(axes: Mapping[str, Sequence[object]]) -> list[dict[str, object]]:
    """The Cartesian product of the axes, first axis varying slowest.

    Parameters
    ----------
    axes : mapping of str to sequence
        Parameter name -> its values, in the order the columns should appear.

    Returns
    -------
    list of dict
        One dict per grid point.
    """
    for name, values in axes.items():
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise DataError(f"parameter name '{name}' is not an identifier (letters, digits, underscore)")
        if name in BUILTIN_PLACEHOLDERS:
            raise DataError(f"parameter name '{name}' is reserved (built-in placeholder)")
        if len(values) == 0:
            raise DataError(f"parameter '{name}' has no values")
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def format_value(value: object) -> str:
    """How a parameter value is written on the command line and in the CSV (``100``, ``0.5``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def substitute(template: str | Sequence[str], point: Mapping[str, object]) -> list[str]:
    """Turn a command template into an argument vector for ``point``; no shell is involved.

    The template is split with :func:`shlex.split` *before* substitution, so a value is
    inserted literally into its argument: spaces, ``;`` or ``$(...)`` in a value are never
    interpreted.

    Raises
    ------
    DataError
        If the template names a placeholder that ``point`` does not define, or is empty.
    """
    try:
        argv = shlex.split(template) if isinstance(template, str) else list(template)
    except ValueError as exc:
        raise DataError(f"command template: cannot split {template!r} ({exc})") from None
    if not argv:
        raise DataError("command template is empty (expected e.g. 'mpirun -np {p} ./app {n}')")

    def repl(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in point:
            known = ", ".join("{" + k + "}" for k in point)
            raise DataError(f"command template: unknown placeholder {{{key}}} (known: {known})")
        return format_value(point[key])

    return [_PLACEHOLDER.sub(repl, arg) for arg in argv]


def placeholders(template: str) -> set[str]:
    """The placeholder names a command template uses."""
    return set(_PLACEHOLDER.findall(template))


# ----------------------------------------------------------------------------- load


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


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ----------------------------------------------------------------------------- one run


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
    """
    regex = re.compile(time_regex) if time_regex else None
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            cwd=cwd, start_new_session=True, text=True, errors="replace",
        )
    except FileNotFoundError as exc:
        return RunResult(STATUS_NOT_FOUND, math.nan, 0.0, "", f"cannot run {argv[0]!r}: {exc.strerror}")
    except PermissionError as exc:
        return RunResult(STATUS_NOT_EXECUTABLE, math.nan, 0.0, "", f"cannot run {argv[0]!r}: {exc.strerror}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        wall = time.perf_counter() - start
        return RunResult(STATUS_TIMEOUT, math.nan, wall, out, _tail(f"{err}\ntimed out after {timeout:g} s"))
    except BaseException:  # KeyboardInterrupt: do not leave the application running
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        raise
    wall = time.perf_counter() - start
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


# ----------------------------------------------------------------------------- campaign


@dataclass(frozen=True)
class Campaign:
    """A designed experiment: command template, axes, repetitions and what to measure.

    Parameters
    ----------
    command : str
        Template such as ``'mpirun -np {p} ./app {n}'``; placeholders are the axis names plus
        ``{rep}`` (0-based repetition) and ``{index}`` (position of the run in the campaign).
    axes : mapping of str to sequence
        Parameter name -> values (see :func:`parse_values`).
    reps : int
        Repetitions per grid point.
    timeout : float, optional
        Seconds per run.
    time_regex : str, optional
        Parse the time from stdout instead of measuring wall time.
    captures : mapping of str to str
        Further columns parsed from stdout. A ``cpu`` or ``bw`` capture replaces the measured load.
    bw_probe : str, optional
        A command run before each run whose stdout holds the free bandwidth fraction (last number,
        or ``bw=<x>``); recorded as ``bw``.
    sample_cpu : bool
        Record the free CPU fraction from ``/proc/stat`` as ``cpu``.
    cwd : path, optional
        Working directory of the runs.
    """

    command: str
    axes: Mapping[str, Sequence[object]]
    reps: int = 1
    timeout: float | None = None
    time_regex: str | None = None
    captures: Mapping[str, str] = field(default_factory=dict)
    bw_probe: str | None = None
    sample_cpu: bool = True
    cwd: str | None = None

    def __post_init__(self) -> None:
        if self.reps < 1:
            raise DataError(f"reps must be >= 1, got {self.reps}")
        if self.timeout is not None and self.timeout <= 0:
            raise DataError(f"timeout must be > 0 seconds, got {self.timeout}")
        for name, pattern in [("time", self.time_regex or "")] + list(self.captures.items()):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise DataError(f"regular expression for '{name}' is invalid: {pattern!r} ({exc})") from None
        for label, template in (("command template", self.command), ("bw probe", self.bw_probe or "")):
            unknown = placeholders(template) - set(self.axes) - set(BUILTIN_PLACEHOLDERS)
            if unknown:
                raise DataError(f"{label}: unknown placeholder(s) {sorted(unknown)} (axes: {sorted(self.axes)})")


def columns_for(campaign: Campaign) -> list[str]:
    """The CSV header of a campaign: axes, rep, time, cpu, bw, captures, status, error, started."""
    cols = list(campaign.axes) + ["rep", "time"]
    if campaign.sample_cpu or "cpu" in campaign.captures:
        cols.append("cpu")
    if campaign.bw_probe or "bw" in campaign.captures:
        cols.append("bw")
    cols += [c for c in campaign.captures if c not in cols]
    return cols + ["status", "error", "started"]


def plan(campaign: Campaign) -> list[dict[str, object]]:
    """Every run of the campaign in order: the grid point plus ``rep`` and ``index``."""
    runs = []
    for point in expand_grid(campaign.axes):
        for rep in range(campaign.reps):
            runs.append({**point, "rep": rep, "index": len(runs)})
    return runs


def _run_key(run: Mapping[str, object], names: Sequence[str]) -> tuple[str, ...]:
    return tuple(format_value(run[n]) for n in names)


def _read_done(path: Path, header: list[str], key_names: Sequence[str], retry_failed: bool) -> set[tuple[str, ...]]:
    """Keys of runs already in ``path``; repairs a last line cut by an interruption."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):  # interrupted mid-write: drop the partial row
        with open(path, "r+b") as fh:
            fh.truncate(raw.rfind(b"\n") + 1)
    done = set()
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        found = next(reader, None)
        if found is None:
            return set()
        if found != header:
            raise DataError(
                f"{path}, row 1: columns {found} differ from this campaign's {header}; "
                "choose another output file or delete it to start over"
            )
        status_at = header.index("status")
        for row in reader:
            if len(row) != len(header):
                continue
            if retry_failed and row[status_at] != "0":
                continue
            done.add(tuple(row[header.index(n)] for n in key_names))
    if retry_failed:  # rewrite without the failed rows so they are not duplicated
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        kept = [rows[0]] + [r for r in rows[1:] if len(r) == len(header) and r[status_at] == "0"]
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(kept)
    return done


def _probe_bw(command: str, run: Mapping[str, object], timeout: float | None) -> tuple[float, str]:
    result = run_once(substitute(command, run), timeout=timeout or 60.0)
    if result.status != 0:
        return math.nan, f"bw probe failed ({result.status}): {result.error}"
    value = _search_float(re.compile(r"bw\s*=\s*(\S+)"), result.stdout)
    if value is None:
        numbers = _FLOAT.findall(result.stdout)
        value = float(numbers[-1]) if numbers else None
    if value is None or not (0 < value <= 1):
        return math.nan, f"bw probe printed no fraction in (0, 1]: {_tail(result.stdout, 80)!r}"
    return value, ""


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    return format_value(value)


def run_campaign(
    campaign: Campaign,
    output: str | os.PathLike[str],
    progress: bool = True,
    retry_failed: bool = False,
    on_result: Callable[[dict[str, str]], None] | None = None,
) -> dict[str, int]:
    """Execute every run of ``campaign`` not yet in ``output``, appending one CSV row per run.

    Each row is flushed and synced as soon as its run finishes, so an interrupted campaign
    resumes where it stopped when called again with the same output file. Failing or timed-out
    runs are recorded with their exit status and the tail of their stderr; they are not fatal.

    Parameters
    ----------
    campaign : Campaign
    output : path
        The CSV file (created with a header if missing).
    progress : bool
        Show a tqdm progress bar with runs done, failures and estimated time left.
    retry_failed : bool
        Run again the runs recorded with status != 0 (their old rows are removed).
    on_result : callable, optional
        Called with each written row (column -> cell text).

    Returns
    -------
    dict
        ``{"planned": ..., "skipped": ..., "ran": ..., "failed": ...}``.
    """
    from tqdm import tqdm

    path = Path(output)
    header = columns_for(campaign)
    key_names = list(campaign.axes) + ["rep"]
    done = _read_done(path, header, key_names, retry_failed)
    runs = plan(campaign)
    todo = [r for r in runs if _run_key(r, key_names) not in done]
    new_file = not path.exists() or path.stat().st_size == 0
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    clk_tck = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    failed = 0
    bar = tqdm(total=len(runs), initial=len(runs) - len(todo), disable=not progress, unit="run", dynamic_ncols=True)
    try:
        with open(path, "a", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            if new_file:
                writer.writerow(header)
                fh.flush()
            for run in todo:
                argv = substitute(campaign.command, run)
                row: dict[str, object] = {name: run[name] for name in key_names}
                notes = []
                if campaign.bw_probe:
                    row["bw"], note = _probe_bw(campaign.bw_probe, run, campaign.timeout)
                    if note:
                        notes.append(note)
                started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
                before, own_before = read_cpu_times(), _children_cpu_seconds()
                t0 = time.perf_counter()
                result = run_once(argv, campaign.timeout, campaign.time_regex, campaign.captures, campaign.cwd)
                if campaign.sample_cpu:
                    if time.perf_counter() - t0 < 0.1:  # too few clock ticks for a meaningful fraction
                        time.sleep(0.1 - (time.perf_counter() - t0))
                    after, own = read_cpu_times(), _children_cpu_seconds() - own_before
                    row["cpu"] = free_cpu_fraction(before, after, own, clk_tck) if before and after else math.nan
                row.update(result.captured)
                row["time"] = result.time
                row["status"] = result.status
                row["error"] = " | ".join(([result.error] if result.error else []) + notes)
                row["started"] = started
                cells = {c: _cell(row.get(c, math.nan)) for c in header}
                writer.writerow([cells[c] for c in header])
                fh.flush()
                os.fsync(fh.fileno())
                if result.status != 0:
                    failed += 1
                bar.update(1)
                bar.set_postfix(failed=failed, refresh=False)
                if on_result is not None:
                    on_result(cells)
    finally:
        bar.close()
    return {"planned": len(runs), "skipped": len(runs) - len(todo), "ran": len(todo), "failed": failed}


def iter_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, str]]:
    """The rows of a runs CSV as dicts of cell text (for inspection and tests)."""
    with open(path, newline="", encoding="utf-8") as fh:
        yield from csv.DictReader(fh)
