"""The canonical extrapolation tasks of the shared datasets README, as data.

Each task trains on the small runs of one group and is judged on its large runs
(``/work/shared/datasets/README.md``, section "Canonical extrapolation tasks").
Rows are kept as measured (one row per repetition); the target column is ``time``.

Dataset choices that the README leaves open:

- ``osu-p`` uses ``osu_coll_orfeo_tanjaderin.csv`` only.  ``osu_bcast_orfeo_mzampar.csv``
  stops at ``P = 48``, so the README split (train ``P <= 32``, test ``P >= 64``) leaves it
  without a single test row, whatever the ``allocation``; it is listed in ``skipped``.
- ``mandelbrot-strong`` uses source ``tanjaderin``, study ``mpi_strong``, as the README says;
  the mzampar strong-scaling series is listed in ``skipped``.

Tasks of issue 11 built from Extra-P text files (``extrap-text/``), read at run time with
``automodel.read`` (its tidy frame: ``kernel``, ``callpath``, ``metric``, one column per parameter,
``time`` holding the metric's value); one group per region (and metric):

- ``extrap-mm-x`` (``mm_single_parameter_x.txt``, one profile per x = 1 .. 2000): train
  ``x <= 500``, test ``x in {1000, 2000}`` (the issue's split); ``x`` is an extra parameter.
  Metrics kept: ``time`` and the PAPI counters (floating-point operations, L2/L3 cache misses), the
  quantities a model of a kernel predicts.  Left out (listed in ``skipped``): ``visits`` (exact call
  counts, constant in x here, nothing to model) and ``min_time`` / ``max_time`` (minimum and maximum
  over a region's visits: equal to ``time`` for single-visit regions, so the same data twice).
- ``extrap-mm-xyz`` (``mm_multi_parameter_xyz.txt``, x, y, z each in {1, 10, 25}, 27 profiles): with
  three levels per parameter, no split holds out larger values of a parameter and still leaves three
  training levels of it (train ``z <= 10``, test ``z = 25`` leaves two levels of z, too few for a
  term in z).  The split is instead out of the training hull: train on the 20 profiles with at most
  one parameter at 25, test on the 7 with two or three at 25 (``(25, 25, 1)`` .. ``(25, 25, 25)``),
  i.e. predict where several parameters are large together, which needs the right interaction
  (product) structure, as ``mat_mul`` ~ ``x y z``.  Same metrics as ``extrap-mm-x``.
- ``relearn-regions`` (``relearn_data.txt``, p 32 .. 512 x n 5000 .. 9000, 2 repetitions): every
  region is a group, roles ``p`` and ``n``, train ``p <= 128``, test ``p in {256, 512}``.

In these tasks a group whose values are not all positive, or all equal, is left out whole (listed
in ``skipped``) instead of dropping rows: a counter that is zero at some sizes, or constant, is not
a run time to extrapolate.

A group is kept only when a model with one term per parameter can be fitted on its
training rows: every parameter needs at least ``MIN_VALUES_PER_PARAM`` distinct training
values and the group at least ``2 * n_params + 1`` distinct training configurations,
and the test split must not be empty.  Groups that fail are listed in ``skipped``
with the reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import automodel

TARGET = "time"
MIN_VALUES_PER_PARAM = 3

#: Groups kept by ``quick=True`` (one representative group per task).
QUICK_GROUPS: dict[str, tuple[str, ...]] = {
    "hommexx-n-p": ("alg=SL,qsize=10",),
    "relearn-p": ("theta=0.3",),
    "mandelbrot-strong": ("source=tanjaderin,study=mpi_strong",),
    "osu-p": ("collective=bcast,algorithm=default", "collective=reduce,algorithm=default"),
    "extrap-mpi": ("mpi=OpenMPI,collective=MPI_Bcast",),
    "contention-m": ("collective=bcast,contention=0",),
    "extrap-mm-x": ("callpath=main->mat_mul,metric=time",),
    "extrap-mm-xyz": ("callpath=main->mat_mul,metric=time",),
    "relearn-regions": ("callpath=main()",),
}


@dataclass(frozen=True, eq=False)
class Task:
    """One group of one extrapolation task.

    Attributes
    ----------
    name : str
        Task name, e.g. ``"hommexx-n-p"``.
    group : str
        Group label, ``"col=value,col=value"``, e.g. ``"alg=SL,qsize=10"``.
    params : dict[str, str]
        automodel role -> column name, in modelling order (``"n"``, ``"p"`` or
        an extra parameter name).
    train, test : pandas.DataFrame
        Original rows (repetitions kept) of the training and held-out splits.
    p_sweep : bool
        True when the task has a ``p`` role, so scoring compares the best ``p``.
    source : str
        Dataset file name.
    unit : str
        Unit of ``time``.
    target : str
        Target column, ``"time"``.
    split : str
        The train and test conditions, as text.
    """

    name: str
    group: str
    params: dict[str, str]
    train: pd.DataFrame
    test: pd.DataFrame
    p_sweep: bool
    source: str
    unit: str = "s"
    target: str = TARGET
    split: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """``(name, group)``, the key used by result dictionaries."""
        return (self.name, self.group)

    @property
    def columns(self) -> list[str]:
        """Parameter column names in modelling order."""
        return list(self.params.values())

    @property
    def p_column(self) -> str | None:
        """Column of the ``p`` role, or None."""
        return self.params.get("p")


@dataclass(frozen=True)
class Skipped:
    """A task group (or a whole dataset) left out, and why."""

    name: str
    group: str
    reason: str


@dataclass(frozen=True)
class _Spec:
    """A task: file, grouping, parameter roles, and train/test/select conditions (``DataFrame.eval``).

    ``source`` is a CSV file, or an Extra-P text file (``.txt``, read with ``automodel.read``).
    ``metrics`` (a regular expression matched in full against the ``metric`` column) keeps those
    metrics only; every other metric is listed in ``skipped`` (reason from ``METRIC_SKIPS``).
    ``whole_groups`` leaves out a group whose values are not all positive or all equal, instead of
    dropping its non-positive rows.  ``units`` are ``(metric regex, unit)`` pairs for metrics whose unit
    is not ``unit``; groups in ``unit`` come first (the task's unit is that of its first group).
    ``note`` is appended to the split text (what the reader of the results must know).
    """

    name: str
    source: str
    group_by: tuple[str, ...]
    params: dict[str, str]
    train: str
    test: str
    select: str | None = None
    unit: str = "s"
    metrics: str | None = None
    whole_groups: bool = False
    units: tuple[tuple[str, str], ...] = ()
    note: str = ""


#: ``extrap-mm-xyz``: two or three of x, y, z at their largest value, 25 (the held-out profiles)
_TWO_AT_25 = "(x == 25 and y == 25) or (x == 25 and z == 25) or (y == 25 and z == 25)"

SPECS: tuple[_Spec, ...] = (
    _Spec("hommexx-n-p", "hommexx_nh_summit.csv", ("alg", "qsize"), {"n": "nelem", "p": "nnode"},
          "ne <= 128", "ne >= 256"),
    _Spec("relearn-p", "relearn.csv", ("theta",), {"p": "p", "n": "n_per_rank"},
          "p <= 128", "p in [256, 512]"),
    _Spec("mandelbrot-strong", "mandelbrot_orfeo.csv", ("source", "study"), {"p": "P"},
          "P <= 64", "P > 64", select="source == 'tanjaderin' and study == 'mpi_strong'"),
    _Spec("osu-p", "osu_coll_orfeo_tanjaderin.csv", ("collective", "algorithm"),
          {"p": "P", "n": "msg_bytes"}, "P <= 32", "P >= 64", unit="us"),
    _Spec("extrap-mpi", "extrap_mpi_collectives.csv", ("mpi", "collective"), {"p": "P"},
          "P <= 256", "P == 512", unit="us"),
    _Spec("contention-m", "mpi_contention_iitk.csv", ("collective", "contention"), {"n": "msg_bytes"},
          "msg_bytes <= 262144", "msg_bytes > 262144"),
    _Spec("extrap-mm-x", "extrap-text/mm_single_parameter_x.txt", ("callpath", "metric"), {"x": "x"},
          "x <= 500", "x in [1000, 2000]", metrics=r"time|PAPI_\w+", whole_groups=True,
          units=((r"PAPI_\w+", "count"),),
          note="metrics time (s) and PAPI counters (counts); visits, min_time, max_time left out"),
    _Spec("extrap-mm-xyz", "extrap-text/mm_multi_parameter_xyz.txt", ("callpath", "metric"),
          {"x": "x", "y": "y", "z": "z"}, f"not ({_TWO_AT_25})", _TWO_AT_25, metrics=r"time|PAPI_\w+",
          whole_groups=True, units=((r"PAPI_\w+", "count"),),
          note="x, y, z only take 1, 10, 25, so no split past the largest value keeps 3 training levels: "
               "the held-out profiles have two or three of them at 25, outside the training hull; "
               "metrics time (s) and PAPI counters (counts); visits, min_time, max_time left out"),
    _Spec("relearn-regions", "extrap-text/relearn_data.txt", ("callpath",), {"p": "p", "n": "n"},
          "p <= 128", "p in [256, 512]", metrics="time", whole_groups=True),
)

#: Why a metric of an Extra-P text file is not modelled (``_Spec.metrics`` leaves it out).
METRIC_SKIPS: dict[str, str] = {
    "visits": "exact call counts (integers), not a measured quantity to extrapolate",
    "min_time": "minimum over a region's visits; equals time for single-visit regions (same data twice)",
    "max_time": "maximum over a region's visits; equals time for single-visit regions (same data twice)",
}

#: The stand-in task of ``bundled_tasks``: SMPI runs shipped in the checkout (the demo's data is
#: package data, ``automodel/demo/``; the others are in ``examples/data``), relative to its root.
BUNDLED_ROOT = Path(__file__).resolve().parents[1]
BUNDLED_FILES: tuple[str, ...] = ("automodel/demo/cg_fast.csv", "examples/data/jacobi_slow.csv")
BUNDLED_SPEC = _Spec("bundled-smpi-p", ",".join(BUNDLED_FILES), ("workload",),
                     {"n": "n", "p": "p"}, "p <= 8", "p > 8")

#: Datasets (or parts) deliberately not used, with the reason.
DATASET_SKIPS: tuple[Skipped, ...] = (
    Skipped("osu-p", "osu_bcast_orfeo_mzampar.csv",
            "P only reaches 48, so the split P <= 32 / P >= 64 has no test rows"),
    Skipped("mandelbrot-strong", "source=mzampar,study=mpi_strong",
            "the README task names source tanjaderin, study mpi_strong"),
)


def default_datasets_dir() -> Path:
    """Return the shared datasets directory.

    ``$AUTOMODEL_DATASETS`` if set, else ``<repo>/../shared/datasets``.
    """
    env = os.environ.get("AUTOMODEL_DATASETS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def _group_label(columns: tuple[str, ...], values: tuple) -> str:
    return ",".join(f"{c}={v}" for c, v in zip(columns, values))


def _fit_problem(train: pd.DataFrame, test: pd.DataFrame, columns: list[str]) -> str | None:
    """Return why a group cannot be fitted, or None when it can."""
    if test.empty:
        return "no test rows"
    for column in columns:
        n_values = train[column].nunique()
        if n_values < MIN_VALUES_PER_PARAM:
            return (f"only {n_values} distinct training values of {column} "
                    f"(need {MIN_VALUES_PER_PARAM})")
    n_configs = len(train.drop_duplicates(columns))
    need = 2 * len(columns) + 1
    if n_configs < need:
        return f"only {n_configs} distinct training configurations (need {need})"
    return None


def _degenerate(rows: pd.DataFrame) -> str | None:
    """Why a group of an Extra-P text file is left out whole (not all positive, constant), or None."""
    bad = ~(rows[TARGET] > 0)
    if bad.all():
        return f"every value is zero, negative or missing ({len(rows)} rows)"
    if bad.any():
        return f"{int(bad.sum())} of {len(rows)} values are zero, negative or missing"
    if rows[TARGET].nunique() == 1:
        return f"constant: every value is {rows[TARGET].iloc[0]:g}"
    return None


def _select_metrics(spec: _Spec, frame: pd.DataFrame) -> tuple[pd.DataFrame, list[Skipped]]:
    """Keep the metrics of ``spec.metrics``; list the others as skipped."""
    if spec.metrics is None:
        return frame, []
    keep = frame["metric"].astype(str).map(lambda m: re.fullmatch(spec.metrics, m) is not None)
    skipped = [Skipped(spec.name, f"metric={m}", METRIC_SKIPS.get(m, f"metric not in {spec.metrics}"))
               for m in sorted(frame.loc[~keep, "metric"].unique())]
    return frame[keep], skipped


def _spec_tasks(spec: _Spec, frame: pd.DataFrame) -> tuple[list[Task], list[Skipped]]:
    if spec.select is not None:
        frame = frame[frame.eval(spec.select)]
    frame, skipped = _select_metrics(spec, frame)
    tasks: list[Task] = []
    columns = list(spec.params.values())
    split = f"train {spec.train}; test {spec.test}" + (f"; {spec.note}" if spec.note else "")
    for values, rows in frame.groupby(list(spec.group_by), sort=True):
        values = values if isinstance(values, tuple) else (values,)
        group = _group_label(spec.group_by, values)
        if spec.whole_groups:
            problem = _degenerate(rows)
            if problem is not None:
                skipped.append(Skipped(spec.name, group, problem))
                continue
        bad = ~(rows[TARGET] > 0)
        if bad.any():
            skipped.append(Skipped(spec.name, group,
                                   f"dropped {int(bad.sum())} rows with non-positive or missing time"))
            rows = rows[~bad]
        train = rows[rows.eval(spec.train)].reset_index(drop=True)
        test = rows[rows.eval(spec.test)].reset_index(drop=True)
        problem = _fit_problem(train, test, columns)
        if problem is not None:
            skipped.append(Skipped(spec.name, group, problem))
            continue
        metric = str(dict(zip(spec.group_by, values)).get("metric", ""))
        unit = next((u for pattern, u in spec.units if re.fullmatch(pattern, metric)), spec.unit)
        tasks.append(Task(name=spec.name, group=group, params=dict(spec.params),
                          train=train, test=test, p_sweep="p" in spec.params,
                          source=spec.source, unit=unit, split=split))
    tasks.sort(key=lambda t: t.unit != spec.unit)  # stable: the groups in the task's unit first
    return tasks, skipped


def _read(path: Path) -> pd.DataFrame:
    """A CSV file as it is, or an Extra-P text file as automodel's tidy frame (read in place)."""
    if path.suffix == ".txt":
        return automodel.read(path, format="text")
    return pd.read_csv(path)


def build_tasks(datasets_dir: Path | str | None = None,
                quick: bool = False) -> tuple[list[Task], list[Skipped]]:
    """Build every canonical task group and the list of what was left out.

    Parameters
    ----------
    datasets_dir : path, optional
        Directory of the shared datasets; ``default_datasets_dir()`` when None.
    quick : bool
        Keep only the representative groups of ``QUICK_GROUPS``.

    Returns
    -------
    tasks : list of Task
    skipped : list of Skipped

    Examples
    --------
    >>> tasks, skipped = build_tasks()              # doctest: +SKIP
    >>> tasks[0].key                                # doctest: +SKIP
    ('hommexx-n-p', 'alg=Eul,qsize=10')
    """
    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    if not root.is_dir():
        raise FileNotFoundError(f"datasets directory not found: {root} "
                                "(set AUTOMODEL_DATASETS to the shared datasets folder)")
    tasks: list[Task] = []
    skipped: list[Skipped] = list(DATASET_SKIPS)
    for spec in SPECS:
        spec_tasks, spec_skipped = _spec_tasks(spec, _read(root / spec.source))
        tasks.extend(spec_tasks)
        skipped.extend(spec_skipped)
    if quick:
        tasks = [t for t in tasks if t.group in QUICK_GROUPS.get(t.name, ())]
    return tasks, skipped


def bundled_tasks(root: Path | str = BUNDLED_ROOT) -> list[Task]:
    """The stand-in task built from the bundled SMPI runs (``BUNDLED_FILES`` under ``root``).

    One group per file of ``BUNDLED_FILES`` (``workload=<file stem>``), parameters ``n`` and ``p``,
    train ``p <= 8``, predict ``p > 8`` (``examples/data/README.md``).  Used when the shared
    datasets are absent (a clean clone, CI), so that every code path of the benchmark still runs.
    """
    paths = [Path(root) / name for name in BUNDLED_FILES]
    frames = [pd.read_csv(path).assign(workload=path.stem) for path in paths]
    return _spec_tasks(BUNDLED_SPEC, pd.concat(frames, ignore_index=True))[0]


def tasks_or_bundled(datasets_dir: Path | str | None = None,
                     quick: bool = False) -> tuple[list[Task], list[Skipped], str | None]:
    """The canonical tasks, or the bundled stand-in when the shared datasets are absent.

    Returns
    -------
    tasks, skipped
        As ``build_tasks``.
    note : str or None
        Why the bundled task replaced the canonical ones (None when it did not).
    """
    try:
        tasks, skipped = build_tasks(datasets_dir, quick)
    except FileNotFoundError as error:
        note = (f"{error}; the canonical tasks were not run: falling back to the bundled task "
                f"{BUNDLED_SPEC.name} ({', '.join(BUNDLED_FILES)})")
        return bundled_tasks(), [], note
    return tasks, skipped, None


def by_name(tasks: Sequence[Task]) -> dict[str, list[Task]]:
    """The groups of each task, by task name, in order of first appearance."""
    out: dict[str, list[Task]] = {}
    for task in tasks:
        out.setdefault(task.name, []).append(task)
    return out


def load_tasks(datasets_dir: Path | str | None = None, quick: bool = False) -> list[Task]:
    """Return the canonical task groups (see ``build_tasks``)."""
    return build_tasks(datasets_dir, quick)[0]


def pooled_columns(train: pd.DataFrame, params: Iterable[str], target: str) -> list[str]:
    """The columns of ``train`` a task pools as repetitions, for ``automodel.fit(ignore=...)``: every
    column but its parameters and target (the task's definition says what a configuration is: e.g.
    contention-m pools the ``line`` and ``file`` of several source files measured at one message size)."""
    declared = set(params) | {target}
    return [str(c) for c in train.columns if c not in declared]
