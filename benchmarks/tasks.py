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

A group is kept only when a model with one term per parameter can be fitted on its
training rows: every parameter needs at least ``MIN_VALUES_PER_PARAM`` distinct training
values and the group at least ``2 * n_params + 1`` distinct training configurations,
and the test split must not be empty.  Groups that fail are listed in ``skipped``
with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

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
    """A task: file, grouping, parameter roles, and train/test/select conditions (``DataFrame.eval``)."""

    name: str
    source: str
    group_by: tuple[str, ...]
    params: dict[str, str]
    train: str
    test: str
    select: str | None = None
    unit: str = "s"


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
)

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


def _spec_tasks(spec: _Spec, frame: pd.DataFrame) -> tuple[list[Task], list[Skipped]]:
    if spec.select is not None:
        frame = frame[frame.eval(spec.select)]
    tasks: list[Task] = []
    skipped: list[Skipped] = []
    columns = list(spec.params.values())
    for values, rows in frame.groupby(list(spec.group_by), sort=True):
        group = _group_label(spec.group_by, values)
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
        tasks.append(Task(name=spec.name, group=group, params=dict(spec.params),
                          train=train, test=test, p_sweep="p" in spec.params,
                          source=spec.source, unit=spec.unit,
                          split=f"train {spec.train}; test {spec.test}"))
    return tasks, skipped


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
        spec_tasks, spec_skipped = _spec_tasks(spec, pd.read_csv(root / spec.source))
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
