"""The resumable campaign: every run of a designed experiment, appended to a CSV as it finishes.

The experiment runner behind ``automodel run``. A *campaign* is a command template
(``'mpirun -np {p} ./app {n}'``), named parameter axes (``n``, ``p`` and any extras, see
:mod:`automodel.runner.grid`) and a number of repetitions. Each point of the Cartesian grid is
executed and measured by :mod:`automodel.runner.measure` and appended to a CSV as soon as it
finishes (flushed and synced), so an interrupted campaign resumes where it stopped.

Examples
--------
>>> campaign = Campaign("./app {n} {p}", {"n": [100, 200], "p": [1, 2]}, reps=2)
>>> len(plan(campaign)), columns_for(campaign)[:5]
(8, ['n', 'p', 'rep', 'time', 'cpu'])
"""

from __future__ import annotations

import csv
import fcntl
import io
import math
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from automodel.errors import DataError, OutputError
from automodel.files import TEXT_ENCODING, check_output, os_reason, write_atomic
from automodel.names import text_cell
from automodel.options import ROLE_NAMES
from automodel.runner.grid import BUILTIN_PLACEHOLDERS, expand_grid, format_value, placeholders, substitute
from automodel.runner.measure import (
    STATUS_NOT_EXECUTABLE,
    STATUS_NOT_FOUND,
    children_cpu_seconds,
    free_cpu_fraction,
    free_cpu_from_load,
    probe_bandwidth,
    read_cpu_times,
    run_once,
)

__all__ = ["Campaign", "columns_for", "iter_rows", "plan", "iter_plan", "count_runs", "check", "run_campaign",
           "MAX_RUNS", "lock_path"]


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
        Record the free CPU fraction as ``cpu``: from ``/proc/stat`` during the run, where there is
        none from the load average (:func:`~automodel.runner.measure.free_cpu_from_load`).
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
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 1:
            raise DataError(f"reps must be a whole number >= 1, got {self.reps}")
        if self.timeout is not None and not (math.isfinite(self.timeout) and self.timeout > 0):
            raise DataError(f"timeout must be a finite number of seconds > 0, got {self.timeout:g}")
        for name, pattern in [("time", self.time_regex or "")] + list(self.captures.items()):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise DataError(f"regular expression for '{name}' is invalid: {pattern!r} ({exc})") from None
        for role in ROLE_NAMES:
            if role in self.axes:
                _check_role_axis(role, self.axes[role])
        _check_column_names(self)
        if self.cwd is not None and not Path(self.cwd).is_dir():
            raise DataError(f"working directory {self.cwd}: no such folder")
        for label, template in (("command template", self.command), ("bw probe", self.bw_probe or "")):
            unknown = placeholders(template) - set(self.axes) - set(BUILTIN_PLACEHOLDERS)
            if unknown:
                raise DataError(f"{label}: unknown placeholder(s) {sorted(unknown)} (axes: {sorted(self.axes)})")


#: the columns a campaign writes of every run itself, which no axis or capture may name
RECORDED = ("rep", "time", "status", "error", "started")


def _check_column_names(campaign: Campaign) -> None:
    """Refuse an axis or a capture named as another column of the CSV (:func:`columns_for`): the header had
    the name twice and each row one value under both, the other lost (``--param time=2`` recorded the
    measured time as the parameter, ``--capture rep=...`` overwrote the repetition a resume matches)."""
    recorded = f"a column the campaign records of each run ({', '.join(RECORDED)}); choose another name"
    measured = {"cpu": (campaign.sample_cpu or "cpu" in campaign.captures, "free CPU fraction", "--no-cpu"),
                "bw": (bool(campaign.bw_probe) or "bw" in campaign.captures, "free bandwidth", "no --bw-probe")}
    for name in campaign.axes:
        if name in RECORDED:
            raise DataError(f"parameter name '{name}' is {recorded}")
        if measured.get(name, (False,))[0]:
            _, what, how = measured[name]
            raise DataError(f"parameter '{name}' is the {what} the campaign measures of each run; to set it as "
                            f"a parameter give {how} and no {name} capture")
    for name in campaign.captures:
        if name in campaign.axes:
            raise DataError(f"capture '{name}' is the column of parameter '{name}'; choose another name")
        if name in RECORDED:
            raise DataError(f"capture '{name}' is {recorded}" + (" (the time a run prints: --time-regex)"
                                                                 if name == "time" else ""))


def _check_role_axis(role: str, values: Sequence[object]) -> None:
    """Refuse an axis of a role (``n``, ``p``, ``cpu``, ``bw``) with a value its measured runs may not hold
    (:func:`automodel.data.cells.violation`): a campaign at ``p = 0`` ran and wrote runs that fit refuses."""
    import numpy as np

    from automodel.data.cells import RULES, magnitude_note, shown, violation

    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"parameter '{role}': expected {RULES[role][1]}, got {shown(value)}")
    found = violation(np.asarray(values, dtype=float), role, measured=True)
    if found is not None:
        i, what, beyond = found
        raise DataError(f"parameter '{role}': expected {what}{magnitude_note(role) if beyond else ''}, "
                        f"got {shown(values[i])}")


def columns_for(campaign: Campaign) -> list[str]:
    """The CSV header of a campaign: axes, rep, time, cpu, bw, captures, status, error, started."""
    cols = list(campaign.axes) + ["rep", "time"]
    if campaign.sample_cpu or "cpu" in campaign.captures:
        cols.append("cpu")
    if campaign.bw_probe or "bw" in campaign.captures:
        cols.append("bw")
    cols += [c for c in campaign.captures if c not in cols]
    return cols + ["status", "error", "started"]


#: most runs one campaign may plan (a grid beyond it is a typo, not an experiment)
MAX_RUNS = 1_000_000


def count_runs(campaign: Campaign) -> int:
    """How many runs the campaign plans, without expanding its grid."""
    return math.prod(len(values) for values in campaign.axes.values()) * campaign.reps


def iter_plan(campaign: Campaign) -> Iterator[dict[str, object]]:
    """Every run of the campaign in order, one at a time: the grid point plus ``rep`` and ``index``."""
    index = 0
    for point in expand_grid(campaign.axes):
        for rep in range(campaign.reps):
            yield {**point, "rep": rep, "index": index}
            index += 1


def check(campaign: Campaign) -> int:
    """The number of runs of the campaign, once it is known to be runnable: at most :data:`MAX_RUNS`
    runs, axes with values, and command templates that split and name only known placeholders.

    Raises
    ------
    DataError
        Naming what is wrong; nothing has been run or written.
    """
    total = count_runs(campaign)
    if total > MAX_RUNS:
        raise DataError(f"the grid plans {total:,} runs ({' x '.join(str(len(v)) for v in campaign.axes.values())}"
                        f" points x {campaign.reps} repetitions), more than the {MAX_RUNS:,} a campaign may have")
    first = next(iter_plan(campaign))
    for template in (campaign.command, campaign.bw_probe):
        if template:
            substitute(template, first)
    return total


def plan(campaign: Campaign) -> list[dict[str, object]]:
    """Every run of the campaign in order (:func:`iter_plan`), once :func:`check` accepts it."""
    check(campaign)
    return list(iter_plan(campaign))


def _run_key(run: Mapping[str, object], names: Sequence[str]) -> tuple[str, ...]:
    return tuple(format_value(run[n]) for n in names)


def _read_done(path: Path, header: list[str], key_names: Sequence[str], retry_failed: bool) -> set[tuple[str, ...]]:
    """Keys of runs already in ``path``; repairs a last line cut by an interruption. A file whose first
    line is not this campaign's header is refused before anything in it is changed. It is read as every
    input is (:data:`automodel.files.TEXT_ENCODING`: a byte-order mark before the header, as Excel writes
    one, is no part of the first column's name)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    raw = path.read_bytes()
    try:
        found = next(csv.reader([raw.split(b"\n", 1)[0].decode(TEXT_ENCODING).rstrip("\r")]))
    except UnicodeDecodeError:
        raise DataError(f"{path}, line 1: not UTF-8 text, so not a CSV of runs; choose another output "
                        "file") from None
    except csv.Error as exc:  # a header cell beyond the csv module's limit was a traceback
        raise _not_a_row(path, 1, exc) from None
    if found != header:
        raise DataError(f"{path}, line 1: columns {found} differ from this campaign's {header}; "
                        "choose another output file or delete it to start over")
    if not raw.endswith(b"\n"):  # interrupted mid-write: drop the partial row
        with open(path, "r+b") as fh:
            fh.truncate(raw.rfind(b"\n") + 1)
    done = set()
    status_at = header.index("status")
    key_at = [header.index(n) for n in key_names]
    rows = _rows(path)
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        if retry_failed and row[status_at] != "0":
            continue
        done.add(tuple(row[i] for i in key_at))
    if retry_failed:  # rewrite without the failed rows so they are not duplicated
        kept = [rows[0]] + [r for r in rows[1:] if len(r) == len(header) and r[status_at] == "0"]

        def write(tmp: Path) -> None:
            with open(tmp, "w", newline="", encoding="utf-8") as out:
                csv.writer(out).writerows(kept)

        write_atomic(path, write)
    return done


def _rows(path: Path) -> list[list[str]]:
    """The rows of the CSV of runs ``path``; a line that is not UTF-8 or a cell beyond the csv module's
    limit (csv.Error, a traceback) is a one-line DataError naming the line."""
    with open(path, newline="", encoding=TEXT_ENCODING) as fh:
        reader = csv.reader(fh)
        try:
            return list(reader)
        except csv.Error as exc:
            raise _not_a_row(path, reader.line_num, exc) from None
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text, so not a CSV of runs; choose another output file") from None


def _not_a_row(path: Path, line: int, exc: csv.Error) -> DataError:
    """The error for line ``line`` of the CSV of runs ``path``, which the csv module refused."""
    return DataError(f"{path}, line {line}: not a row of a CSV of runs ({exc}); choose another output file or "
                     "delete it to start over")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    return format_value(value)


def _measure(campaign: Campaign, run: Mapping[str, object], clk_tck: float) -> dict[str, object]:
    """One run of the campaign, measured: its grid point and ``rep``, time, load, captures, status,
    error and start time (the cells of its CSV row)."""
    row: dict[str, object] = {name: run[name] for name in list(campaign.axes) + ["rep"]}
    notes = []
    if campaign.bw_probe:
        row["bw"], note = probe_bandwidth(substitute(campaign.bw_probe, run), campaign.timeout)
        if note:
            notes.append(note)
    started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
    before, own_before = read_cpu_times(), children_cpu_seconds()
    t0 = time.perf_counter()
    result = run_once(substitute(campaign.command, run), campaign.timeout, campaign.time_regex, campaign.captures,
                      campaign.cwd)
    if campaign.sample_cpu:
        if time.perf_counter() - t0 < 0.1:  # too few clock ticks for a meaningful fraction
            time.sleep(0.1 - (time.perf_counter() - t0))
        after, own = read_cpu_times(), children_cpu_seconds() - own_before
        row["cpu"] = free_cpu_fraction(before, after, own, clk_tck) if before and after else free_cpu_from_load()
    row.update(result.captured)
    row.update(time=result.time, status=result.status, started=started,
               error=text_cell(" | ".join(([result.error] if result.error else []) + notes)))
    return row


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
    runs are recorded with their exit status and the tail of their stderr; they are not fatal,
    except a program that cannot be started at all (not found, not executable): every run would
    start it, so the campaign stops after that first row.
    The campaign (:func:`check`) and the output path are checked before the file is touched, and the
    runs are planned one at a time, so the memory does not grow with the grid.

    Parameters
    ----------
    campaign : Campaign
    output : path
        The CSV file (created with a header if missing; its folder must exist).
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

    Raises
    ------
    DataError
        The campaign cannot run (:func:`check`), ``output`` holds another campaign's columns, or the
        program cannot be started (after its one row is written).
    OutputError
        ``output`` is a directory, its folder does not exist, it cannot be read or written (a row that
        cannot be written whole is cut off: the file keeps whole rows only), or another campaign is
        writing it (one campaign at a time holds its lock, :func:`lock_path`).
    """
    from tqdm import tqdm

    total = check(campaign)
    path = check_output(output)
    header = columns_for(campaign)
    key_names = list(campaign.axes) + ["rep"]
    clk_tck = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    failed = 0
    with _locked(path):
        try:
            done = _read_done(path, header, key_names, retry_failed)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError as exc:
            raise OutputError(f"{path}: cannot be read and appended to ({os_reason(exc)})") from None
        skipped = sum(_run_key(run, key_names) in done for run in iter_plan(campaign)) if done else 0
        bar = tqdm(total=total, initial=skipped, disable=not progress, unit="run", dynamic_ncols=True)
        try:
            if os.fstat(fd).st_size == 0:
                _append(fd, path, header)
            for run in iter_plan(campaign):
                if _run_key(run, key_names) in done:
                    continue
                row, cells = _record(campaign, run, fd, path, header, clk_tck)
                failed += row["status"] != 0
                bar.update(1)
                bar.set_postfix(failed=failed, refresh=False)
                if on_result is not None:
                    on_result(cells)
                _stop_if_unstartable(campaign, row, path)
        finally:
            os.close(fd)
            bar.close()
    return {"planned": total, "skipped": skipped, "ran": total - skipped, "failed": failed}


def _record(campaign: Campaign, run: Mapping[str, object], fd: int, path: Path, header: Sequence[str],
            clk_tck: float) -> tuple[dict[str, object], dict[str, str]]:
    """Measure one run and append its CSV row to the output open as ``fd``.

    Parameters
    ----------
    campaign : Campaign
    run : mapping
        The run's grid point, ``rep`` and ``index`` (:func:`iter_plan`).
    fd : int
        The output file, open for appending.
    path : Path
        The output file's path (for messages).
    header : sequence of str
        The columns (:func:`columns_for`).
    clk_tck : float
        Clock ticks per second (for the free CPU fraction).

    Returns
    -------
    tuple
        The measured row (column -> value) and its cells as written (column -> text).
    """
    row = _measure(campaign, run, clk_tck)
    cells = {c: _cell(row.get(c, math.nan)) for c in header}
    _append(fd, path, [cells[c] for c in header])
    return row, cells


def _stop_if_unstartable(campaign: Campaign, row: Mapping[str, object], path: Path) -> None:
    """Stop the campaign after a run whose program could not be started, when every run starts it.

    Raises
    ------
    DataError
        ``row``'s program was not found or is not executable, and it does not depend on the run
        (:func:`_program_varies`).
    """
    if row["status"] in (STATUS_NOT_FOUND, STATUS_NOT_EXECUTABLE) and not _program_varies(campaign):
        raise DataError(f"{row['error']}; stopped after the first run, as every run starts this "
                        f"program (its row is in {path}; --retry-failed runs it again)")


def _program_varies(campaign: Campaign) -> bool:
    """Whether the program a run starts (its first word) depends on the run: a placeholder in it."""
    first = shlex.split(campaign.command)[:1]
    return bool(first) and bool(placeholders(first[0]))


def lock_path(path: Path) -> Path:
    """The lock file of the campaign output ``path``: ``.NAME.lock`` beside it (kept: removing a lock
    file another process has opened would let two campaigns in)."""
    return path.with_name(f".{path.name}.lock")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (:func:`lock_path`, ``flock``) for the ``with`` block, so
    that one campaign at a time appends to it; a campaign that finds it held is refused at once.

    Raises
    ------
    OutputError
        Another process holds the lock (naming its pid), or the lock file cannot be made.
    """
    lock = lock_path(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise OutputError(f"{path}: cannot make its lock file {lock} ({os_reason(exc)})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            raise OutputError(f"{path}: another automodel run (pid {holder or '?'}) is writing it; wait until it "
                              "has finished (a new run then resumes after its runs) or choose another output file") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _append(fd: int, path: Path, cells: list[str]) -> None:
    """Append one CSV row to the file open as ``fd``, synced (it survives an interruption). The row is
    written whole or not at all: when a write fails (a full disk, a file size limit) what was written
    of it is cut off again and the failure is an :class:`OutputError` naming ``path``."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    data = buffer.getvalue().encode("utf-8")
    size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise OutputError(f"{path}: cannot be written ({os_reason(exc)}); the runs before this one are kept "
                          "and a new run resumes after them") from None


def iter_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, str]]:
    """The rows of a runs CSV as dicts of cell text (for inspection and tests)."""
    with open(path, newline="", encoding=TEXT_ENCODING) as fh:
        yield from csv.DictReader(fh)
