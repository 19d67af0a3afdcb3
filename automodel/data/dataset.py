"""Measurements in: read a file (any format of :mod:`automodel.data.readers`) or DataFrame of one kernel,
map columns to roles, validate, aggregate repetitions.

All checks live here, so the rest of the engine can assume clean numbers. A measurement table has one
row per run; the roles are ``time`` (the target, seconds), ``n`` (problem size), ``p`` (process count),
``cpu`` and ``bw`` (free CPU and bandwidth fractions in (0, 1], rational-polynomial-yagnik-icpp2006.txt,
sec. 3) and any number of extra numeric parameters. Rows with identical parameters are repetitions; the
fit uses the mean of those that are not outliers, or their median where the noise is heavy-tailed
(:func:`~automodel.data.repetitions.robust_means`; or the median, mean or min on request), and the
spread that goes with that aggregate is kept as the noise estimate
(:func:`~automodel.data.repetitions.aggregate_groups`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Mapping, NamedTuple

import numpy as np
import pandas as pd

from automodel.data.cells import floats, located, numeric, rows_of, shown
from automodel.data.readers import read
from automodel.data.repetitions import aggregate_groups, aggregate_se
from automodel.data.tidy import one_kernel
from automodel.errors import DataError, where
from automodel.options import (AGGREGATES, DEFAULT_AGGREGATE, DEFAULT_UNIT, ROLE_NAMES, guess_role, is_time_unit,
                               unit_in_name, unit_name, values_in)
from automodel.names import MAX_NAME_CHARS, label_problem, parameter_problem, printable

__all__ = ["Dataset", "Runs", "load", "load_runs", "check_pooling", "column_names", "role_hint", "time_hint", "BOOKKEEPING",
           "data_unit", "floor_zeros"]

@dataclass(frozen=True)
class Dataset:
    """A validated measurement table with canonical column names.

    Attributes
    ----------
    runs : DataFrame
        One row per run, columns ``params + ("time",)``.
    frame : DataFrame
        One row per distinct configuration: the parameters, ``time`` (the aggregate of the
        repetitions), ``spread`` (their standard deviation, 0 for single runs) and ``count``.
    params : tuple of str
        Canonical parameter names present, ``n, p, cpu, bw`` first, then the extra parameters.
    roles : dict
        Canonical name -> column name in the source.
    source : str
        Where the data came from (file name or ``"<DataFrame>"``), for messages.
    unit : str
        The unit of the times (:func:`automodel.options.unit_name`: ``s``, ``ms``, ``us``, ``ns`` or
        a label for a value that is not a time).
    pooled : tuple of str
        The columns the user let differ between repetitions (``ignore``), pooled knowingly.
    where : str
        The condition the rows were selected by (``--where``, :func:`~automodel.data.tidy.select_rows`),
        empty when they are every row of the source.
    """

    runs: pd.DataFrame
    frame: pd.DataFrame
    params: tuple[str, ...]
    roles: Mapping[str, str]
    source: str
    aggregate: str = DEFAULT_AGGREGATE
    notes: tuple[str, ...] = field(default=())
    covariates: tuple[str, ...] = ()
    unit: str = DEFAULT_UNIT
    pooled: tuple[str, ...] = ()
    where: str = ""

    def described(self) -> str:
        """Which column is which and the unit, as the first line of a fit's summary says it: ``parameters
        n, p`` where the columns bear the roles' names, else ``parameters n (column size), p (column
        procs); time: column walltime_ms, in ms`` (a newcomer's file says so in its own names); ``values
        in ms`` for a time column named ``time`` in another unit than seconds, and for one in seconds the
        way to say otherwise (times in ms in a column ``time`` were taken for seconds without a word); and
        the columns the repetitions were pooled over (``ignore``); the condition that selected the rows
        (``--where``)."""
        quoted = {q: shlex.quote(printable(str(c))) for q, c in self.roles.items()}
        params = [q if self.roles.get(q, q) == q else f"{q} (column {quoted[q]})" for q in self.params]
        text = f"parameters {', '.join(params) or 'none'}"
        if self.roles.get("time", "time") != "time":
            text += f"; time: column {quoted['time']}, in {self.unit}"
        else:
            text += f"; {values_in(self.unit)}"
        pooled = [printable(c) for c in self.pooled]
        text += f"; repetitions pooled over {', '.join(pooled)}" if pooled else ""
        return text + (f"; the rows where {printable(self.where)}" if self.where else "")

    @property
    def n_points(self) -> int:
        return len(self.frame)

    @property
    def extra_params(self) -> tuple[str, ...]:
        return tuple(q for q in self.params if q not in ROLE_NAMES)

    @property
    def noise(self) -> float:
        """Median relative spread of the repeated configurations (NaN when nothing is repeated)."""
        rep = self.frame[self.frame["count"] > 1]
        if rep.empty:
            return float("nan")
        return float(np.median(rep["spread"] / rep["time"]))

    def aggregate_se(self) -> tuple[float, float]:
        """Pooled standard error of the aggregated times, ``(relative, seconds)``: :func:`aggregate_se`."""
        f = self.frame
        rel, absolute = aggregate_se(f["time"].to_numpy(float), f["spread"].to_numpy(float),
                                     f["count"].to_numpy(float), self.aggregate)
        return float(rel), float(absolute)

    def columns(self) -> dict[str, np.ndarray]:
        """Parameter columns of the aggregated frame as float arrays, for term evaluation."""
        return {q: self.frame[q].to_numpy(float) for q in self.params}

    def ranges(self) -> dict[str, list[float]]:
        """Training range ``[min, max]`` of every parameter."""
        return {q: [float(self.frame[q].min()), float(self.frame[q].max())] for q in self.params}


def load(
    data: str | Path | pd.DataFrame,
    *,
    time: str = "time",
    n: str | None = "n",
    p: str | None = "p",
    cpu: str | None = "cpu",
    bw: str | None = "bw",
    params: str | Iterable[str] = (),
    aggregate: Literal["median", "mean", "min", "robust"] = DEFAULT_AGGREGATE,
    explicit: Iterable[str] = (),
    source: str | None = None,
    covariates: Iterable[str] = (),
    ignore: str | Iterable[str] = (),
    unit: str | None = None,
) -> Dataset:
    """Read and validate measurements.

    Parameters
    ----------
    data : path or DataFrame
        A file in any format :func:`automodel.data.read` reads (a CSV file: one row per run, header line;
        an Extra-P file or CUBE set holding one kernel) or a DataFrame; its ``attrs`` may hold ``source``
        (the file it came from) and ``lines`` (each row's line there), for messages, and ``params`` (the
        parameters of an Extra-P file: those without a role are the default extra parameters). A frame
        with a ``kernel`` column must hold one kernel (:func:`automodel.data.one_kernel`).
    time, n, p, cpu, bw : str or None
        Column holding each role. ``None`` means the role is absent. A role left at its default name
        whose column does not exist is silently absent, except ``time``; a role named explicitly (listed
        in ``explicit``) must exist.
    params : iterable of str
        Extra numeric parameter columns (iterations, clusters, ...), modelled under their own names
        (default: the parameters in ``attrs["params"]`` that no role takes).
    aggregate : {"median", "mean", "min", "robust"}
        How repetitions (rows with identical parameters) are combined (``"robust"``: the mean of the
        runs that are not outliers, :func:`~automodel.data.repetitions.robust_means`).
    explicit : iterable of str
        Roles the user named on purpose; a missing column for them is an error.
    covariates : iterable of str
        Columns carried along when the data have them (checked numbers, the median per configuration
        in ``frame``), but not parameters of the search: what a template needs besides the parameters
        (FiM-Cal's hardware counters U, TC, SC, F).
    ignore : iterable of str
        Columns whose values may differ between repetitions (pooled knowingly); any other column that
        is neither a role, a parameter nor a covariate must not (:func:`check_pooling`).
    unit : str, optional
        The unit of the times (:func:`automodel.options.unit_name`); default: the one value of the
        data's ``unit`` column, else the unit the time column's name ends with (``runtime_ms``), else
        seconds. A ``unit`` column that disagrees is an error.

    Raises
    ------
    DataError
        With file, row (as a line number of the file, the header being line 1) and column.
    """
    if aggregate not in AGGREGATES:
        raise DataError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    data = data if isinstance(data, pd.DataFrame) else read(Path(data))
    found = data_unit(one_kernel(data), source or data.attrs.get("source", "<DataFrame>"), unit, time)
    runs, params_present, roles, src, notes, carried = _runs(
        data, time=time, n=n, p=p, cpu=cpu, bw=bw, params=params, explicit=explicit, source=source,
        covariates=covariates, ignore=ignore, counts=not is_time_unit(found))
    frame = _aggregate(runs, params_present, aggregate, carried)
    return Dataset(runs, frame, params_present, roles, src, aggregate, notes=notes, covariates=carried,
                   unit=found, pooled=tuple(column_names(ignore)), where=str(data.attrs.get("where") or ""))


def role_hint(role: str, available: list[str]) -> str:
    """How to name the column a missing role probably is (the options ``fit`` and ``run`` share): for
    the time, the one column whose name says time (``runtime_ms``, ``Time (us)``), with its unit, and
    the options of the roles whose column has another name (``procs``, ``size``:
    :func:`automodel.options.guess_role`), so that a file of ``procs, size, walltime_ms`` learns all
    three options from its first error rather than one per attempt.

    >>> role_hint("time", ["run_id", "procs", "size", "walltime_ms"])
    ' (--time walltime_ms, read in ms; and perhaps --p procs --n size)'
    """
    if role != "time":
        return ""
    hints = [hint] if (hint := time_hint(available)) else []
    guessed: dict[str, list[str]] = {}
    for c in available:
        if (r := guess_role(c)) is not None and r not in available:
            guessed.setdefault(r, []).append(c)
    roles = " ".join(f"--{r} {shlex.quote(cs[0])}" for r, cs in guessed.items() if len(cs) == 1)
    if roles:
        hints.append(f"and perhaps {roles}" if hints else f"perhaps {roles}")
    return f" ({'; '.join(hints)})" if hints else ""


def time_hint(available: Iterable[str]) -> str:
    """``--time walltime_ms, read in ms``: the option naming the one column of ``available`` whose name
    says time (``runtime_ms``, ``Time (us)``), with its unit; empty when there is none or several.

    >>> time_hint(["region", "procs", "time_us"]), time_hint(["a", "b"])
    ('--time time_us, read in us', '')
    """
    likely = [c for c in available if "time" in c.lower() or unit_in_name(c) is not None]
    if len(likely) != 1:
        return ""
    unit = unit_in_name(likely[0])
    return f"--time {shlex.quote(likely[0])}{'' if unit is None else f', read in {unit}'}"


def data_unit(raw: pd.DataFrame | None, src: str, unit: str | None = None, time: str | None = None) -> str:
    """The unit of the times: ``unit`` (checked, :func:`automodel.options.unit_name`), else the one
    value of the ``unit`` column of ``raw`` (the shared OSU data say ``us`` so), else the unit the name
    of the ``time`` column ends with (``runtime_ms``, ``time (us)``: :func:`automodel.options.unit_in_name`),
    else seconds.

    Raises
    ------
    DataError
        A unit that is not a unit, a ``unit`` column of several values, or one that disagrees with
        ``unit``.
    """
    given = None
    if unit is not None:
        try:
            given = unit_name(unit)
        except ValueError as exc:
            raise DataError(f"--unit {shown(str(unit))}: {exc}") from None  # 100,000 characters: cut
    column = raw["unit"] if raw is not None and "unit" in raw.columns else None
    if column is None:  # a profile's metric that is not a time (visits, PAPI_L3_TCM) is its own unit
        metrics = list(pd.unique(raw["metric"].dropna())) if raw is not None and "metric" in raw.columns else []
        if given is None and len(metrics) == 1 and "time" not in str(metrics[0]).lower():
            try:
                return unit_name(str(metrics[0]))
            except ValueError:
                pass
        return given or (time is not None and unit_in_name(time)) or DEFAULT_UNIT
    values = [str(v) for v in pd.unique(column.dropna())]
    try:
        names = sorted({unit_name(v) for v in values})
    except ValueError as exc:
        raise DataError(f"{where(src, column='unit')}: {exc}") from None
    if len(names) > 1:
        raise DataError(f"{where(src, column='unit')}: {len(names)} units ({', '.join(names)}); expected one "
                        "(select rows with --where, e.g. \"unit == 'us'\")")
    if given is not None and names and names[0] != given:
        raise DataError(f"{where(src, column='unit')}: the data say {names[0]}, --unit says {given}")
    return given or (names[0] if names else DEFAULT_UNIT)


class Runs(NamedTuple):
    """The validated runs of :func:`load_runs`: :class:`Dataset` without the aggregated ``frame``."""

    runs: pd.DataFrame
    params: tuple[str, ...]
    roles: Mapping[str, str]
    source: str
    notes: tuple[str, ...]
    covariates: tuple[str, ...]


def load_runs(data: str | Path | pd.DataFrame, *, time: str = "time", n: str | None = "n", p: str | None = "p",
              cpu: str | None = "cpu", bw: str | None = "bw", params: Iterable[str] = (),
              explicit: Iterable[str] = (), source: str | None = None, covariates: Iterable[str] = (),
              ignore: Iterable[str] = ()) -> Runs:
    """The runs of :func:`load` (read, mapped to roles, validated), not aggregated: for a caller that
    keeps every run (``automodel.store.observe``), without the cost of grouping the repetitions.
    The same arguments (but ``aggregate``), the same errors, the same :attr:`Dataset.runs`."""
    return Runs(*_runs(data, time=time, n=n, p=p, cpu=cpu, bw=bw, params=params, explicit=explicit,
                       source=source, covariates=covariates, ignore=ignore))


def _runs(data: str | Path | pd.DataFrame, *, time: str, n: str | None, p: str | None, cpu: str | None,
          bw: str | None, params: Iterable[str], explicit: Iterable[str], source: str | None,
          covariates: Iterable[str], ignore: Iterable[str] = (), counts: bool = False) -> tuple[pd.DataFrame, tuple[str, ...], dict[str, str], str, tuple[str, ...],
                                              tuple[str, ...]]:
    """:func:`load` up to the aggregation: the runs, the parameters, the roles, the source, the notes and
    the covariates carried. With ``counts`` (values that are not times) a value may be 0: zeros are
    fitted as half the smallest value (:func:`floor_zeros`, as ``automodel kernels`` does)."""
    raw = data if isinstance(data, pd.DataFrame) else read(Path(data))
    src = source or raw.attrs.get("source", "<DataFrame>")
    params, ignore = column_names(params), column_names(ignore)
    if raw.empty:
        raise DataError(f"{src}: no rows, expected one row per run")
    raw = one_kernel(raw)
    raw, notes = _without_failed_runs(raw, src)
    row_offset = rows_of(raw)  # where each row is in the file, for messages
    given = list(raw.attrs.get("params", ()))
    raw = raw.reset_index(drop=True)

    explicit = set(explicit) | {"time"}
    available = [str(c) for c in raw.columns]
    mapping: dict[str, str] = {}
    for role, col in (("time", time), ("n", n), ("p", p), ("cpu", cpu), ("bw", bw)):
        if col is None:
            continue
        if col in available:
            mapping[role] = col
        elif role in explicit:
            raise DataError(f"{where(src, column=col)}: no such column for the {role!r} role; "
                            f"the file has {', '.join(available)}{role_hint(role, available)}")
    if not params:  # an Extra-P file's parameters that no role takes
        params = [q for q in given if q not in mapping.values() and q not in ROLE_NAMES]
    for extra in params:
        if extra in mapping:
            continue
        if extra not in available:
            raise DataError(f"{where(src, column=extra)}: no such column for an extra parameter; "
                            f"the file has {', '.join(available)}")
        if not extra.isidentifier() or extra in ROLE_NAMES or extra == "time":
            raise DataError(f"{where(src, column=printable(extra))}: an extra parameter needs a name that is a "
                            f"valid identifier and not one of time, n, p, cpu, bw")
        problem = parameter_problem(extra)
        if problem is not None:
            raise DataError(f"{where(src, column=printable(extra))}: an extra parameter needs a name in NFKC "
                            f"normal form, at most {MAX_NAME_CHARS} characters: {problem}; rename the column")
        mapping[extra] = extra
    for role, col in mapping.items():
        problem = label_problem(col)
        if problem is not None:
            raise DataError(f"{src}: the column of the {role!r} role needs a printable name: {problem}")
    used = list(mapping.values())
    if len(set(used)) != len(used):
        raise DataError(f"{src}: one column is mapped to two roles ({mapping})")

    canon = {role: numeric(raw, col, "value" if counts and role == "time" else role, src, row_offset, measured=True)
             for role, col in mapping.items()}
    if counts:
        canon["time"], note = _counts(canon["time"], src, mapping["time"], row_offset)
        notes = [*notes, *note]
    params_present = tuple(r for r in ROLE_NAMES if r in canon) + tuple(
        q for q in mapping if q not in ROLE_NAMES and q != "time")
    carried = tuple(c for c in dict.fromkeys(covariates) if c in available and c not in used)
    check_pooling(raw, [c for r, c in mapping.items() if r != "time"], ignore, src, skip=[mapping["time"], *carried])
    canon.update({c: numeric(raw, c, c, src, row_offset) for c in carried})
    runs = pd.DataFrame({q: canon[q] for q in params_present + carried + ("time",)})
    return (runs, params_present, {r: mapping[r] for r in params_present + ("time",)}, src, tuple(notes),
            carried)


def _counts(y: np.ndarray, src: str, column: str, row_offset: int | np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Values that are counts: 0 or more, each zero fitted as half the smallest value (:func:`floor_zeros`)."""
    if (y < 0).any():
        i = int(np.argmax(y < 0))
        raise DataError(f"{located(src, i, column, row_offset)}: expected a count of 0 or more, got {y[i]:g}")
    if not (y > 0).any():
        raise DataError(f"{where(src, column=column)}: every value is 0, so the model is T = 0 (automodel "
                        "kernels writes it so); nothing to search")
    floored, found = floor_zeros(y, np.zeros(len(y), int), 1)
    return floored, [f"{n} value(s) of 0 fitted as {v:.3g}, half the smallest measured" for n, v in found.values()]


def floor_zeros(y: np.ndarray, codes: np.ndarray, n_kernels: int) -> tuple[np.ndarray, dict[int, tuple[int, float]]]:
    """The values with each kernel's zeros raised to half its smallest positive value, and, by kernel,
    ``(zeros raised, the value they were raised to)``; a kernel of zeros only gets 1 everywhere and
    the value 0 (its model, a constant, is scaled to 0 afterwards:
    :func:`automodel.kernels.groups.zero_model`).

    Counters (cache misses, visits) are 0 where a time never is. Extra-P fits them on absolute errors;
    here every fit weight, relative metric and log-normal band divides by the value or takes its log,
    so a zero is read as "below the resolution": half the smallest value measured. A fit on counts of
    0, 1, 2 then sees 0.5, 1, 2; a kernel of zeros only is the constant 0, as in Extra-P.
    """
    zero = y == 0
    if not zero.any():
        return y, {}
    y = y.copy()
    smallest = np.full(n_kernels, np.inf)
    np.minimum.at(smallest, codes[~zero], y[~zero])
    counts = np.bincount(codes[zero], minlength=n_kernels)
    floor = np.where(np.isfinite(smallest), smallest / 2, 0.0)
    y[zero] = np.where(floor[codes[zero]] > 0, floor[codes[zero]], 1.0)
    return y, {int(j): (int(counts[j]), float(floor[j])) for j in np.flatnonzero(counts)}


#: columns that say which run a row is, never a parameter: repetition indices, the kernel of a tidy
#: profile, the bookkeeping of ``automodel run`` and of the store's runs
BOOKKEEPING = frozenset({"rep", "reps", "repetition", "repetitions", "series", "seed", "trial", "kernel",
                         "callpath", "metric", "status", "error", "started", "start", "end", "unit"})


def column_names(names: str | Iterable[str] | None) -> list[str]:
    """Column names given as one name or several: ``"theta"`` is one column, not five of one letter each
    (``ignore="hostname"`` pooled over the columns ``h``, ``o``, ... that no file has).

    >>> column_names("theta"), column_names(["theta", "k"]), column_names(None)
    (['theta'], ['theta', 'k'], [])
    """
    if names is None:
        return []
    return [names] if isinstance(names, str) else [str(q) for q in names]


def check_pooling(raw: pd.DataFrame, keys: list[str], ignore: Iterable[str], src: str, *,
                  skip: Iterable[str] = ()) -> None:
    """Refuse to pool as repetitions rows that differ in a column nobody declared.

    Rows whose parameter columns ``keys`` are equal are repetitions of one configuration. A further column
    whose values differ within a configuration and recur across rows (at most half as many distinct values
    as rows: a factor such as ``theta`` or ``collective``, not a per-run value such as ``time_min`` or a
    job id) would be averaged away silently; so would every column that varies with it. Columns in
    ``ignore`` (the user's ``--ignore``: each must be a column of ``raw``), in ``skip`` (the time, the
    covariates; present or not) and :data:`BOOKKEEPING` names are not checked.

    Raises
    ------
    DataError
        An ``ignore`` name that is no column of ``raw`` (``--ignore date,hostname``, one name with a comma,
        or a misspelt one let the refusal stand with no clue why); or one line naming each such column, its
        number of distinct values, and the options, among them the ``--ignore`` that pools them all.
    """
    available = [str(c) for c in raw.columns]
    for name in ignore:
        if name not in available:
            parts = [q.strip() for q in name.split(",")]
            apart = (f"; name each column apart: --ignore {' '.join(shlex.quote(q) for q in parts)}"
                     if len(parts) > 1 and all(q in available for q in parts) else "")
            raise DataError(f"{where(src, column=printable(name))}: no such column to pool over (--ignore); "
                            f"the file has {', '.join(printable(c) for c in available)}{apart}")
    skip = set(ignore) | set(keys) | set(skip)
    others = [i for i, c in enumerate(raw.columns) if str(c) not in skip and str(c).lower() not in BOOKKEEPING]
    if not others or len(raw) < 2:
        return
    group = raw.groupby(keys, sort=False, dropna=False).ngroup().to_numpy() if keys else np.zeros(len(raw), int)
    if group.max() + 1 == len(raw):
        return  # no repetitions at all
    found, roles, pooled = [], [], []
    for i in others:  # by position: a frame may name two columns alike
        c, column = raw.columns[i], raw.iloc[:, i]
        distinct = column.nunique(dropna=True)
        if distinct < 2 or distinct > len(raw) / 2:
            continue
        pairs = pd.DataFrame({"g": group, "v": column}).dropna().drop_duplicates()
        if len(pairs) > pairs["g"].nunique():
            found.append(f"'{printable(str(c))}' ({distinct} values)")
            pooled.append(shlex.quote(printable(str(c))))
            if (role := guess_role(str(c))) is not None:
                roles.append(f"--{role} {shlex.quote(str(c))}")
    if found:
        same = ", ".join(printable(k) for k in keys) or "parameters"
        hint = f" or a role ({' '.join(roles)})" if roles else ""
        raise DataError(f"{src}: rows with the same {same} differ in undeclared column(s) {', '.join(found)}; "
                        "pooling them as repetitions would average them away: declare a parameter with "
                        f"--param COL{hint}, select rows with --where EXPR, or pool knowingly with --ignore "
                        f"{' '.join(dict.fromkeys(pooled))}")


def _without_failed_runs(raw: pd.DataFrame, src: str) -> tuple[pd.DataFrame, list[str]]:
    """``raw`` without the runs that ``automodel run`` recorded as failed (column ``status`` not 0: a
    non-zero exit, a timeout), and the note that says which; the rows keep their file lines."""
    if "status" not in raw.columns or "time" not in raw.columns:
        return raw, []
    status = floats(raw["status"])
    failed = status != 0  # a status that is not a number counts as failed too
    if not failed.any():
        return raw, []
    where_rows = rows_of(raw)
    lines = where_rows if isinstance(where_rows, np.ndarray) else np.arange(len(raw)) + where_rows
    if failed.all():
        raise DataError(f"{src}, column 'status': every one of the {len(raw)} runs failed (status not 0); "
                        "expected some successful runs (status 0)")
    shown = ", ".join(str(v) for v in lines[failed][:5]) + (", ..." if failed.sum() > 5 else "")
    kept = raw[~failed].copy()
    kept.attrs = {**raw.attrs, "lines": [int(v) if isinstance(v, (int, np.integer)) else v
                                         for v in lines[~failed]]}
    return kept, [f"{int(failed.sum())} failed run(s) skipped (column 'status' not 0; line(s) {shown})"]


def _aggregate(runs: pd.DataFrame, params: tuple[str, ...], how: str, covariates: tuple[str, ...] = ()
               ) -> pd.DataFrame:
    if not params:
        _, time, spread, count = aggregate_groups(runs["time"].to_numpy(float), np.zeros(len(runs), int), how)
        stats = {"time": time[0], "spread": spread[0], "count": int(count[0]),
                 **{c: runs[c].median() for c in covariates}}
        return pd.DataFrame([stats])
    grouped = runs.groupby(list(params), sort=True)
    codes = grouped.ngroup().to_numpy()
    _, time, spread, count = aggregate_groups(runs["time"].to_numpy(float), codes, how)
    frame = grouped.size().reset_index()[list(params)]
    frame["time"], frame["spread"], frame["count"] = time, spread, count
    for c in covariates:
        frame[c] = grouped[c].median().to_numpy()
    return frame
