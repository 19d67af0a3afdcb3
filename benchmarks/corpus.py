"""The model-selection corpus: extrapolation tasks in a development part and a locked test part.

Judge a selection rule on data it was not tuned on (``DESIGN.md``, section 6a). Every task is a
:class:`SelectionTask`: training rows (the small configurations a user could afford), test rows (the
larger ones to predict), the roles of its parameters for :func:`automodel.fit`, its suite and its part.

Suites and where they come from (one loader each; a loader that finds nothing returns a note, never
raises):

- ``real`` -- :func:`real_dev_tasks`, the seven CSVs of ``<datasets>/real-dev/`` (Vlasiator, Manticore);
  :func:`canonical_tasks`, every group of the canonical tasks of :mod:`benchmarks.tasks`; both part
  ``dev`` (the team tuned on them). :func:`directory_tasks` of ``benchmarks/data/real_public/``.
- ``smpi-ours`` -- :func:`smpi_ours_tasks`, the project's SMPI sweeps of :mod:`benchmarks.workloads`,
  part ``dev``.
- ``smpi-others`` -- :func:`directory_tasks` of ``benchmarks/data/smpi_others/``.

The two directory corpora are split by :func:`part_of`, a fixed rule on the task name, so that
nobody chooses which tasks are held out after seeing results. Data are read in place (``$AUTOMODEL_DATASETS``,
``benchmarks/data/``), never copied.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from benchmarks.tasks import Task, default_datasets_dir, load_tasks, pooled_columns

TARGET = "time"
SUITES = ("real", "smpi-ours", "smpi-others")
PARTS = ("dev", "test")
DATA_DIR = Path(__file__).resolve().parent / "data"
#: the directory corpora: folder under ``DATA_DIR`` -> (name prefix, suite)
DIRECTORY_CORPORA: dict[str, tuple[str, str]] = {
    "smpi_others": ("smpi-others", "smpi-others"),
    "real_public": ("real-public", "real"),
}
#: roles of the real-dev files (column -> automodel role); any other parameter column is an extra
REAL_DEV_ROLES: dict[str, str] = {"cells": "n", "nodes": "p", "threads": "p"}
#: columns of a task CSV that are not parameters
NON_PARAMETERS = frozenset({TARGET, "split", "source"})

#: what a loader returns: the tasks it built and a note per thing it skipped
Loaded = tuple[list["SelectionTask"], list[str]]


@dataclass(frozen=True, eq=False)
class SelectionTask:
    """One extrapolation task: fit on ``train``, predict the configurations of ``test``.

    Attributes
    ----------
    name : str
        Stable name, ``<corpus>/<task>[/<group>]``, e.g. ``"real-dev/vlasiator_mahti_strong"``.
    suite : {"real", "smpi-ours", "smpi-others"}
    part : {"dev", "test"}
    train, test : pandas.DataFrame
        Tidy rows (one per run, repetitions kept): the parameter columns and ``time``.
    roles : dict of str to str
        automodel role (``"n"``, ``"p"``) -> column, as :func:`automodel.fit` takes them.
    params : tuple of str
        Further parameter columns (``params=`` of :func:`automodel.fit`).
    provenance : str
        Where the rows come from and how they were split.
    """

    name: str
    suite: str
    part: str
    train: pd.DataFrame
    test: pd.DataFrame
    roles: dict[str, str]
    params: tuple[str, ...] = ()
    provenance: str = ""

    @property
    def columns(self) -> list[str]:
        """Every parameter column, roles first."""
        return [*self.roles.values(), *self.params]

    def fit_kwargs(self) -> dict:
        """Keyword arguments of :func:`automodel.fit` for these roles (a role the task lacks is None)."""
        declared = [*self.roles.values(), *self.params]
        return {"n": self.roles.get("n"), "p": self.roles.get("p"), "params": list(self.params),
                "ignore": pooled_columns(self.train, declared, TARGET)}

    def as_task(self) -> Task:
        """The same rows as a :class:`benchmarks.tasks.Task` (what :mod:`benchmarks.extrap_tool` models)."""
        params = {**self.roles, **{c: c for c in self.params}}
        return Task(name=self.name, group="", params=params, train=self.train, test=self.test,
                    p_sweep="p" in self.roles, source=self.provenance)


def part_of(name: str) -> str:
    """The part (``"dev"`` or ``"test"``) of a task of a directory corpus, from its name alone.

    The rule is fixed in code before anyone looks at results, so the held-out part cannot be chosen
    (even unconsciously) to flatter a selection rule: a SHA-256 of the full task name, one third of
    the names ``dev`` (to develop on), two thirds ``test`` (locked: run only to report). It depends
    on nothing but the name, so adding tasks never moves an existing one between parts.

    >>> [part_of(f"smpi-others/{c}") for c in "abc"]
    ['dev', 'test', 'test']
    """
    return "dev" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0 else "test"


# -- helpers -----------------------------------------------------------------------------------------
def _positive(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows whose time is a positive number."""
    return rows[pd.to_numeric(rows[TARGET], errors="coerce") > 0]


def _split(name: str, frame: pd.DataFrame, columns: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame] | str:
    """``(train, test)`` rows (``columns`` and ``time``) of a frame with a ``split`` column, or why not."""
    missing = [c for c in (*columns, TARGET, "split") if c not in frame.columns]
    if missing:
        return f"{name}: no column {', '.join(missing)}"
    rows = _positive(frame)
    keep = [*columns, TARGET]
    train = rows.loc[rows["split"] == "train", keep].reset_index(drop=True)
    test = rows.loc[rows["split"] == "test", keep].reset_index(drop=True)
    if train.empty or test.empty:
        return f"{name}: {len(train)} training and {len(test)} test rows with a positive time"
    return train, test


def _read_csv(path: Path) -> pd.DataFrame | str:
    """The CSV at ``path``, or a one-line reason it cannot be read."""
    try:
        return pd.read_csv(path)
    except (OSError, ValueError) as error:
        return f"{path}: {type(error).__name__}: {error}"


# -- loaders -----------------------------------------------------------------------------------------
def real_dev_tasks(datasets_dir: Path | str | None = None) -> Loaded:
    """The CSVs of ``<datasets>/real-dev/`` (README there), suite ``real``, part ``dev``.

    Roles by column name (:data:`REAL_DEV_ROLES`): Vlasiator ``cells`` -> n and ``nodes`` -> p
    (the weak-scaling files have only ``nodes``), Manticore ``threads`` -> p.
    """
    folder = Path(datasets_dir or default_datasets_dir()) / "real-dev"
    paths = sorted(folder.glob("*.csv"))
    if not paths:
        return [], [f"real-dev: no CSV in {folder}"]
    tasks, notes = [], []
    for path in paths:
        frame = _read_csv(path)
        if isinstance(frame, str):
            notes.append(frame)
            continue
        parameters = [c for c in frame.columns if c not in NON_PARAMETERS]
        roles = {REAL_DEV_ROLES[c]: c for c in parameters if c in REAL_DEV_ROLES}
        name = f"real-dev/{path.stem}"
        rows = _split(name, frame, parameters)
        if isinstance(rows, str):
            notes.append(rows)
            continue
        sources = ", ".join(sorted(frame["source"].astype(str).unique())) if "source" in frame else ""
        tasks.append(SelectionTask(name, "real", "dev", *rows, roles=roles,
                                   params=tuple(c for c in parameters if c not in REAL_DEV_ROLES),
                                   provenance=f"{path}; {sources}"))
    return tasks, notes


def canonical_tasks(datasets_dir: Path | str | None = None, quick: bool = False) -> Loaded:
    """Every group of the canonical tasks (:func:`benchmarks.tasks.load_tasks`), suite ``real``, part ``dev``.

    Named ``canonical/<task>/<group>``; the roles ``n`` and ``p`` of the task, its other parameters as extras.
    """
    try:
        groups = load_tasks(datasets_dir, quick)
    except Exception as error:  # a missing file or a reader's bug: the other suites still run
        return [], [f"canonical: {type(error).__name__}: {error}"]
    return [_from_task(t, f"canonical/{t.name}/{t.group}", "real") for t in groups], []


def smpi_ours_tasks(folder: Path | str | None = None) -> Loaded:
    """The project's SMPI sweeps (:mod:`benchmarks.workloads`, its split), suite ``smpi-ours``, part ``dev``."""
    from benchmarks import workloads

    tasks, notes = [], []
    files = workloads.sweep_files(folder or workloads.SWEEPS)
    for path in files:
        try:
            task = workloads.sweep_task(path)
        except (OSError, ValueError, KeyError) as error:
            notes.append(f"smpi-ours: {path}: {type(error).__name__}: {error}")
            continue
        tasks.append(_from_task(task, f"smpi-ours/{path.stem}", "smpi-ours"))
    return tasks, notes or ([] if files else [f"smpi-ours: no sweep CSV in {folder or workloads.SWEEPS}"])


def _from_task(task: Task, name: str, suite: str) -> SelectionTask:
    """A :class:`benchmarks.tasks.Task` as a development task."""
    roles = {r: c for r, c in task.params.items() if r in ("n", "p")}
    params = tuple(c for r, c in task.params.items() if r not in ("n", "p"))
    columns = [*roles.values(), *params, TARGET]
    return SelectionTask(name, suite, "dev", task.train[columns], task.test[columns], roles=roles, params=params,
                         provenance=f"{task.source}; {task.split}")


def directory_tasks(folder: Path | str, prefix: str, suite: str,
                    part: Callable[[str], str] = part_of) -> Loaded:
    """The tasks of a directory corpus: one CSV per task and a ``tasks.json`` manifest.

    The manifest maps a task to ``{"file", "roles", "params", "groups", "provenance"}``; group columns
    split one file into tasks ``<task>/<value>,<value>``. Names are ``<prefix>/<task>[/<group>]`` and
    the part of each is ``part(name)`` (:func:`part_of`).
    """
    folder = Path(folder)
    manifest_path = folder / "tasks.json"
    if not manifest_path.is_file():
        return [], [f"{prefix}: no manifest {manifest_path}"]
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as error:
        return [], [f"{prefix}: {manifest_path}: {type(error).__name__}: {error}"]
    if not isinstance(manifest, Mapping):
        return [], [f"{prefix}: {manifest_path}: expected an object of tasks"]
    tasks, notes = [], []
    for task, entry in manifest.items():
        built, skipped = _manifest_tasks(folder, f"{prefix}/{task}", suite, entry, part)
        tasks += built
        notes += skipped
    return tasks, notes


def _manifest_tasks(folder: Path, name: str, suite: str, entry: Mapping,
                    part: Callable[[str], str]) -> Loaded:
    """The tasks of one manifest entry (one per group of its file)."""
    if not isinstance(entry, Mapping) or "file" not in entry:
        return [], [f"{name}: manifest entry without a file"]
    frame = _read_csv(folder / str(entry["file"]))
    if isinstance(frame, str):
        return [], [f"{name}: {frame}"]
    roles = {str(r): str(c) for r, c in dict(entry.get("roles") or {}).items() if c}
    params = tuple(str(c) for c in entry.get("params") or () if c not in roles.values())
    groups = [str(c) for c in entry.get("groups") or ()]
    columns = [*roles.values(), *params]
    provenance = str(entry.get("provenance", "")) or str(folder / str(entry["file"]))
    if groups and any(g not in frame.columns for g in groups):
        return [], [f"{name}: no group column {', '.join(g for g in groups if g not in frame.columns)}"]
    pieces = frame.groupby(groups, sort=True) if groups else [((), frame)]
    tasks, notes = [], []
    for values, rows in pieces:
        values = values if isinstance(values, tuple) else (values,)
        full = f"{name}/{','.join(map(str, values))}" if groups else name
        split = _split(full, rows, columns)
        if isinstance(split, str):
            notes.append(split)
            continue
        tasks.append(SelectionTask(full, suite, part(full), *split, roles=roles, params=params,
                                   provenance=provenance))
    return tasks, notes


def load_corpus(datasets_dir: Path | str | None = None, data_dir: Path | str = DATA_DIR,
                quick: bool = False) -> Loaded:
    """Every task of every suite and part, and the notes of what was skipped.

    ``quick`` keeps the canonical tasks' representative groups only.
    """
    loaded = [real_dev_tasks(datasets_dir), canonical_tasks(datasets_dir, quick), smpi_ours_tasks(),
              *(directory_tasks(Path(data_dir) / sub, prefix, suite)
                for sub, (prefix, suite) in DIRECTORY_CORPORA.items())]
    return [t for tasks, _ in loaded for t in tasks], [n for _, notes in loaded for n in notes]


def select(tasks: Sequence[SelectionTask], parts: Sequence[str] = ("dev",), suites: Sequence[str] = (),
           substring: str = "") -> list[SelectionTask]:
    """The tasks of ``parts`` and ``suites`` (every suite when empty) whose name contains ``substring``."""
    return [t for t in tasks if t.part in parts and (not suites or t.suite in suites) and substring in t.name]
