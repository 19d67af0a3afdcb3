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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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
    name: str
    source: str
    group_by: tuple[str, ...]
    params: dict[str, str]
    is_train: Callable[[pd.DataFrame], pd.Series]
    is_test: Callable[[pd.DataFrame], pd.Series]
    select: Callable[[pd.DataFrame], pd.Series] | None = None
    unit: str = "s"


SPECS: tuple[_Spec, ...] = (
    _Spec("hommexx-n-p", "hommexx_nh_summit.csv", ("alg", "qsize"),
          {"n": "nelem", "p": "nnode"},
          lambda d: d["ne"] <= 128, lambda d: d["ne"] >= 256),
    _Spec("relearn-p", "relearn.csv", ("theta",),
          {"p": "p", "n": "n_per_rank"},
          lambda d: d["p"] <= 128, lambda d: d["p"].isin([256, 512])),
    _Spec("mandelbrot-strong", "mandelbrot_orfeo.csv", ("source", "study"),
          {"p": "P"},
          lambda d: d["P"] <= 64, lambda d: d["P"] > 64,
          select=lambda d: (d["source"] == "tanjaderin") & (d["study"] == "mpi_strong")),
    _Spec("osu-p", "osu_coll_orfeo_tanjaderin.csv", ("collective", "algorithm"),
          {"p": "P", "n": "msg_bytes"},
          lambda d: d["P"] <= 32, lambda d: d["P"] >= 64, unit="us"),
    _Spec("extrap-mpi", "extrap_mpi_collectives.csv", ("mpi", "collective"),
          {"p": "P"},
          lambda d: d["P"] <= 256, lambda d: d["P"] == 512, unit="us"),
    _Spec("contention-m", "mpi_contention_iitk.csv", ("collective", "contention"),
          {"n": "msg_bytes"},
          lambda d: d["msg_bytes"] <= 256 * 1024, lambda d: d["msg_bytes"] > 256 * 1024),
)

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


def _spec_tasks(spec: _Spec, datasets_dir: Path) -> tuple[list[Task], list[Skipped]]:
    frame = pd.read_csv(datasets_dir / spec.source)
    if spec.select is not None:
        frame = frame[spec.select(frame)]
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
        train = rows[spec.is_train(rows)].reset_index(drop=True)
        test = rows[spec.is_test(rows)].reset_index(drop=True)
        problem = _fit_problem(train, test, columns)
        if problem is not None:
            skipped.append(Skipped(spec.name, group, problem))
            continue
        tasks.append(Task(name=spec.name, group=group, params=dict(spec.params),
                          train=train, test=test, p_sweep="p" in spec.params,
                          source=spec.source, unit=spec.unit))
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
        spec_tasks, spec_skipped = _spec_tasks(spec, root)
        tasks.extend(spec_tasks)
        skipped.extend(spec_skipped)
    if quick:
        tasks = [t for t in tasks if t.group in QUICK_GROUPS.get(t.name, ())]
    return tasks, skipped


def load_tasks(datasets_dir: Path | str | None = None, quick: bool = False) -> list[Task]:
    """Return the canonical task groups (see ``build_tasks``)."""
    return build_tasks(datasets_dir, quick)[0]
