"""Run Extra-P (``pip install extrap``) on task groups, in its own virtual environment.

Extra-P pins ``numpy < 2``, so it lives in ``benchmarks/.extrap-venv/`` (gitignored),
created once by ``ensure_extrap()``.  ``run_extrap`` writes each group's training rows
as an Extra-P text file, runs one driver process in the venv that models every group
(each in a ``try`` block, so one failure does not stop the others) and returns per group
the formula, the predictions at the test and training rows and the modelling time.
When Extra-P cannot be installed or the driver crashes, every result carries a status
``"extrap unavailable: <reason>"`` or ``"extrap failed: <reason>"`` and callers go on.

Modelers: ``"default"`` is Extra-P's default (the basic single-parameter modeler, and the
multi-parameter modeler on top of it for several parameters); ``"refining"`` is the
refining single-parameter modeler, used inside the multi-parameter modeler when there
are several parameters (as ``--modeler multi-parameter --options #spm=Refining``);
``"negative"`` is the default with negative exponents allowed (the basic single-parameter
modeler's option ``allow_negative_exponents``, "Negative exponents ... for strong scaling",
``extrap/modelers/single_parameter/basic.py``, set on the single-parameter modeler inside the
multi-parameter one when there are several parameters): terms such as ``p^(-1)``, ``p^(-1/2) log2(p)``;
``"adaptive"`` is the adaptive (DNN-based, noise-aware) single-parameter modeler, inside the
multi-parameter one for several parameters; it needs the extension ``extrap-adaptive-modeler`` (TensorFlow,
about 2.5 GB) in the venv, which :func:`ensure_extrap` does not install (:data:`ADAPTIVE_INSTALL`); without
it every task of that variant carries the status ``"extrap unavailable: ..."``.
Extra-P models the mean of the repetitions (its default measure).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from benchmarks.extrap_text import task_text

VENV_DIR = Path(__file__).resolve().parent / ".extrap-venv"
#: Extra-P's modelers, by the names its command line takes too (``extrap --modeler NAME``)
MODELERS = ("default", "refining")
#: what ``run_extrap`` runs: the modelers, the default with negative exponents allowed, and the
#: adaptive modeler (when its extension is installed)
VARIANTS = (*MODELERS, "negative", "adaptive")
#: how to add the adaptive modeler to the venv (its extension pulls TensorFlow)
ADAPTIVE_INSTALL = f"{VENV_DIR / 'bin' / 'pip'} install extrap-adaptive-modeler"

_DRIVER = r'''
import json, os, sys, time, warnings
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy

report_to, sys.stdout = sys.stdout, sys.stderr  # the adaptive modeler's training prints progress bars

t0 = time.perf_counter()
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers import single_parameter
from extrap.modelers.abstract_modeler import MultiParameterModeler
from extrap.modelers.model_generator import ModelGenerator
import extrap
import_seconds = time.perf_counter() - t0

jobs = json.load(open(sys.argv[1]))
out = []
for job in jobs:
    t0 = time.perf_counter()
    record = {"key": job["key"], "formula": None, "test": None, "train": None, "warnings": []}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            experiment = TextFileReader().read_experiment(job["path"])
            generator = ModelGenerator(experiment, modeler="Default")
            modeler = generator.modeler
            if job["modeler"] == "refining":
                if isinstance(modeler, MultiParameterModeler):
                    modeler.single_parameter_modeler = single_parameter.all_modelers["Refining"]()
                else:
                    generator = ModelGenerator(experiment, modeler="Refining")
            elif job["modeler"] == "adaptive":
                if isinstance(modeler, MultiParameterModeler):
                    modeler.single_parameter_modeler = single_parameter.all_modelers["Adaptive"]()
                else:
                    generator = ModelGenerator(experiment, modeler="Adaptive")
            elif job["modeler"] == "negative":
                single = (modeler.single_parameter_modeler if isinstance(modeler, MultiParameterModeler)
                          else modeler)
                single.allow_negative_exponents = True
            elif job["modeler"] != "default":
                raise ValueError("unknown modeler " + repr(job["modeler"]))
            generator.model_all()
            model = next(iter(generator.models.values()))
            function = model.hypothesis.function
            names = [str(p) for p in experiment.parameters]
            record["formula"] = function.to_string(*names)
            for part in ("test", "train"):
                points = numpy.asarray(job[part], dtype=float).reshape(-1, len(names))
                values = numpy.asarray(function.evaluate(points.T), dtype=float)
                record[part] = numpy.broadcast_to(values, (len(points),)).tolist()
        record["warnings"] = sorted({str(w.message) for w in caught})
        record["status"] = "ok"
    except Exception as error:
        record["status"] = "extrap failed: %s: %s" % (type(error).__name__, error)
    record["seconds"] = time.perf_counter() - t0
    out.append(record)
json.dump({"version": extrap.__version__, "import_seconds": import_seconds, "results": out},
          report_to)
'''


@dataclass(frozen=True)
class ExtrapResult:
    """Extra-P's model of one task group.

    Attributes
    ----------
    status : str
        ``"ok"`` or a one-line reason (``"extrap unavailable: ..."``, ``"extrap failed: ..."``).
    formula : str or None
        Extra-P's function string, in the task's column names.
    predictions : ndarray
        One prediction per ``task.test`` row (NaN when the status is not ok).
    train_predictions : ndarray
        One prediction per ``task.train`` row.
    seconds : float
        Wall time of reading the file and modelling this group inside the driver.
    modeler : str
    warnings : tuple of str
        Warnings Extra-P raised while modelling.
    """

    status: str
    formula: str | None
    predictions: np.ndarray
    train_predictions: np.ndarray
    seconds: float
    modeler: str
    warnings: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def venv_python(venv_dir: Path = VENV_DIR) -> Path:
    """Path of the venv's python executable."""
    sub = "Scripts/python.exe" if sys.platform == "win32" else "bin/python"
    return venv_dir / sub


def ensure_extrap(venv_dir: Path = VENV_DIR, install: bool = True,
                  timeout: float = 900.0) -> tuple[Path | None, str]:
    """Create the Extra-P venv once and check that ``import extrap`` works.

    Parameters
    ----------
    venv_dir : Path
        Where the venv lives.
    install : bool
        Create it and ``pip install extrap`` when missing.
    timeout : float
        Seconds allowed for the installation.

    Returns
    -------
    python : Path or None
        The venv's python, or None when Extra-P is unavailable.
    status : str
        ``"ok"`` or ``"extrap unavailable: <reason>"``.
    """
    python = venv_python(venv_dir)
    try:
        if not python.exists():
            if not install:
                return None, f"extrap unavailable: no virtual environment at {venv_dir}"
            subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True,
                           capture_output=True, timeout=timeout)
        check = [str(python), "-c", "import extrap"]
        if subprocess.run(check, capture_output=True, timeout=120).returncode != 0:
            if not install:
                return None, "extrap unavailable: extrap is not installed in the venv"
            pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "extrap"],
                                 capture_output=True, text=True, timeout=timeout)
            if pip.returncode != 0:
                tail = (pip.stderr or pip.stdout).strip().splitlines()[-1:] or ["pip failed"]
                return None, f"extrap unavailable: pip install extrap failed: {tail[0]}"
            if subprocess.run(check, capture_output=True, timeout=120).returncode != 0:
                return None, "extrap unavailable: import extrap fails after installation"
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"extrap unavailable: {type(error).__name__}: {error}"
    return python, "ok"


def extrap_version(venv_dir: Path = VENV_DIR) -> str | None:
    """Extra-P's version string, or None when unavailable."""
    python, status = ensure_extrap(venv_dir, install=False)
    if python is None:
        return None
    done = subprocess.run([str(python), "-c", "import extrap; print(extrap.__version__)"],
                          capture_output=True, text=True, timeout=120)
    return done.stdout.strip() or None


def _failed(tasks: Sequence, modeler: str, status: str) -> dict[tuple[str, str], ExtrapResult]:
    return {t.key: ExtrapResult(status, None, np.full(len(t.test), np.nan),
                                np.full(len(t.train), np.nan), float("nan"), modeler)
            for t in tasks}


def run_extrap(tasks: Sequence, modeler: str = "default", venv_dir: Path = VENV_DIR,
               install: bool = True, timeout: float = 1800.0) -> dict[tuple[str, str], ExtrapResult]:
    """Model every task group with Extra-P.

    Parameters
    ----------
    tasks : sequence of benchmarks.tasks.Task
    modeler : {"default", "refining", "negative", "adaptive"}
    venv_dir : Path
        Extra-P's virtual environment (created when missing and ``install``).
    install : bool
        Allow creating the venv.
    timeout : float
        Seconds allowed for the whole driver run.

    Returns
    -------
    dict
        ``task.key`` -> ExtrapResult, predictions aligned to ``task.test`` rows.

    Examples
    --------
    >>> results = run_extrap(load_tasks(quick=True), "refining")   # doctest: +SKIP
    """
    if modeler not in VARIANTS:
        raise ValueError(f"modeler {modeler!r} is not one of {VARIANTS}")
    python, status = ensure_extrap(venv_dir, install)
    if python is None:
        return _failed(tasks, modeler, status)
    if modeler == "adaptive":
        check = [str(python), "-c", "import extrap_adaptive_modeler"]
        if subprocess.run(check, capture_output=True, timeout=300).returncode != 0:
            return _failed(tasks, modeler, "extrap unavailable: the adaptive modeler's extension is not "
                                           f"installed ({ADAPTIVE_INSTALL})")
    with tempfile.TemporaryDirectory(prefix="extrap-run-") as tmp:
        jobs = []
        for i, task in enumerate(tasks):
            path = Path(tmp) / f"task{i}.txt"
            path.write_text(task_text(task))
            jobs.append({"key": i, "path": str(path), "modeler": modeler,
                         "test": task.test[task.columns].to_numpy(float).tolist(),
                         "train": task.train[task.columns].to_numpy(float).tolist()})
        (Path(tmp) / "jobs.json").write_text(json.dumps(jobs))
        (Path(tmp) / "driver.py").write_text(_DRIVER)
        try:
            done = subprocess.run([str(python), str(Path(tmp) / "driver.py"),
                                   str(Path(tmp) / "jobs.json")], capture_output=True,
                                  text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return _failed(tasks, modeler, f"extrap failed: timeout after {timeout:.0f} s")
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            return _failed(tasks, modeler, f"extrap failed: {tail[0]}")
        report = json.loads(done.stdout)
    results: dict[tuple[str, str], ExtrapResult] = {}
    for task, record in zip(tasks, report["results"]):
        ok = record["status"] == "ok"
        results[task.key] = ExtrapResult(
            status=record["status"], formula=record["formula"],
            predictions=np.asarray(record["test"], float) if ok else np.full(len(task.test), np.nan),
            train_predictions=(np.asarray(record["train"], float) if ok
                               else np.full(len(task.train), np.nan)),
            seconds=float(record["seconds"]), modeler=modeler,
            warnings=tuple(record["warnings"]))
    return results


class CliTiming(NamedTuple):
    """Wall and CPU (user + system) seconds of one ``extrap`` run, and its status."""

    seconds: float
    cpu_seconds: float
    status: str


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_cli(arguments: Sequence[str], venv_dir: Path = VENV_DIR,
             timeout: float = 1800.0) -> CliTiming:
    """Time one ``extrap`` command-line run, e.g. ``["--version"]``.

    The CPU time is less sensitive than the wall time to other load on the machine.

    Returns
    -------
    CliTiming
        NaN times when Extra-P is unavailable; status ``"ok"`` or the reason for failure.
    """
    python, status = ensure_extrap(venv_dir, install=False)
    if python is None:
        return CliTiming(float("nan"), float("nan"), status)
    command = [str(python.parent / "extrap"), *arguments]
    cpu = _children_cpu()
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return CliTiming(float("nan"), float("nan"), f"extrap failed: timeout after {timeout:.0f} s")
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return CliTiming(seconds, cpu, f"extrap failed: {tail[0]}")
    return CliTiming(seconds, cpu, "ok")
