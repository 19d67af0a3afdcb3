"""Every ranked candidate of every selection task, with what the chooser reads and what the held-out runs say.

A rule of choice is judged by the error, on the held-out runs, of the candidate it picks. Fitting the
corpus takes a minute; replaying a rule on recorded candidates takes a second. This module records, for
each task of :mod:`benchmarks.corpus`, every ranked leaderboard row of one :func:`automodel.fit` (searched
candidates and templates) with every input of :func:`automodel.search.choice.choose`: the ranking score,
the coefficients left nonzero, the description length, the forward-split (``holdout``) error, the log
predictions at the chooser's probe points, whether the candidate was set aside, the repetitions' noise;
and each candidate's error on the task's held-out configurations (:func:`benchmarks.selection.ranked_errors`'s
median relative error). :func:`replay` runs the chooser again on a record: on the recorded inputs it
picks the candidate ``fit`` chose, which :func:`main` checks on every task, so a variant of the rule
replayed on the records (:func:`load`) is measured as ``python -m benchmarks.selection`` would measure it.

The development part is for trying rules; the locked test part is recorded only to report a rule
chosen beforehand (benchmarks/RESULTS.md, issue 36).

Run::

    AUTOMODEL_DATASETS=../shared/datasets python -m benchmarks.choice_records --part dev --out out/choice-dev.pkl
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed

import automodel
from automodel.data.splits import holdout_rows
from automodel.model.core import predict_many
from automodel.search.choice import choose, core_length, probe_points
from benchmarks.corpus import TARGET, SelectionTask
from benchmarks.selection import configurations, ranked_errors, selected_tasks, task_arguments

__all__ = ["TaskCandidates", "record", "replay", "load", "main"]


@dataclass
class TaskCandidates:
    """One task's ranked candidates (N, leaderboard order) and the chooser's inputs.

    Attributes
    ----------
    name, suite, part : str
        The task (:class:`benchmarks.corpus.SelectionTask`).
    formulas : list of str
    values : (N,) array
        The ranking ``metric``'s score.
    n_terms, lengths : (N,) int arrays
        Coefficients left nonzero; description length (:func:`automodel.search.choice.core_length`).
    holdout : (N,) array
        The forward-split error (NaN where the search did not compute it).
    logs : (N, P) array
        Natural logs of the predictions at :func:`automodel.search.choice.probe_points` (NaN where not
        positive).
    set_aside : (N,) bool array
        Grows beyond the data faster than any term of the space (the leaderboard's ``set aside``).
    chosen : int
        The row ``fit`` chose.
    errors : (N,) array
        Median relative error on the held-out configurations (infinite where a prediction is not finite).
    n_points, n_holdout : int
        Configurations scored; configurations the forward split held out (0: no forward evidence).
    metric, selection : str
    noise_relative, noise_absolute : float
        The repetitions' pooled standard error.
    """

    name: str
    suite: str
    part: str
    formulas: list[str]
    values: np.ndarray
    n_terms: np.ndarray
    lengths: np.ndarray
    holdout: np.ndarray
    logs: np.ndarray
    set_aside: np.ndarray
    chosen: int
    errors: np.ndarray
    n_points: int
    n_holdout: int
    metric: str
    selection: str
    noise_relative: float
    noise_absolute: float


def record(task: SelectionTask) -> TaskCandidates:
    """Fit ``task``'s training rows (no bands) and record every ranked candidate."""
    result = automodel.fit(task.train, time=TARGET, **task.fit_kwargs(), progress=False, max_rows=100000,
                           intervals=False)
    ds = result.dataset
    board = result.leaderboard[result.leaderboard["rank"].notna()].reset_index(drop=True)
    cores = [m.core for m in result.models]
    configs = configurations(task)
    probes = probe_points(ds.frame, ds.params)
    with np.errstate(all="ignore"):  # one batched product per width (a core that cannot predict: NaN)
        at = predict_many(cores, probes)
        logs = np.log(np.where(at > 0, at, np.nan))
    errors = ranked_errors(task, result, configs)  # every candidate at once
    metric = result.space.fit.metric
    holdout = board["holdout"].to_numpy(float) if "holdout" in board else np.full(len(board), np.nan)
    held = holdout_rows(ds)
    searched = (board["kind"] == "searched").to_numpy()
    n_holdout = 0 if held is None or np.isnan(holdout[searched]).all() else int(held.sum())
    noise_relative, noise_absolute = ds.aggregate_se()
    return TaskCandidates(
        task.name, task.suite, task.part, board["formula"].astype(str).tolist(), board[metric].to_numpy(float),
        board["n_terms"].to_numpy(int), np.array([core_length(c) for c in cores], int), holdout, logs,
        (board["choice"] == "set aside").to_numpy(), int(np.flatnonzero(board["choice"] == "chosen")[0]), errors,
        ds.n_points, n_holdout, metric, result.space.fit.selection, float(noise_relative), float(noise_absolute))


def replay(rec: TaskCandidates, chooser: Callable = choose) -> int:
    """The row ``chooser`` (the signature of :func:`automodel.search.choice.choose`) picks on ``rec``'s
    inputs, the set-aside rows left out as :func:`~automodel.search.choice.admissible_scores` leaves them."""
    values = np.where(rec.set_aside, np.inf, rec.values)
    return int(chooser(values, rec.n_terms, rec.n_points, rec.metric, rec.selection, rec.noise_relative,
                       rec.noise_absolute, rec.logs, rec.lengths, rec.holdout, rec.n_holdout).index)


def load(path: Path | str) -> list[TaskCandidates]:
    """The records :func:`main` wrote to ``path`` (stored as plain dictionaries, so that they load whatever
    module wrote them)."""
    return [TaskCandidates(**fields) for fields in joblib.load(path)]


def _record_or_none(task: SelectionTask) -> TaskCandidates | None:
    try:
        return record(task)
    except Exception:  # a task fit cannot model is reported by benchmarks.selection, not here
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.choice_records", description=__doc__.splitlines()[0])
    task_arguments(ap)
    ap.add_argument("--out", type=Path, required=True, help="where the records go (joblib's pickle; read with load)")
    args = ap.parse_args(argv)
    tasks, _ = selected_tasks(args)
    start = time.perf_counter()
    records = [r for r in Parallel(n_jobs=args.jobs)(delayed(_record_or_none)(t) for t in tasks) if r is not None]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    joblib.dump([asdict(r) for r in records], args.out)
    picks = [replay(r) for r in records]
    same = sum(pick == r.chosen or r.errors[pick] == r.errors[r.chosen] for pick, r in zip(picks, records))
    chosen = [r.errors[r.chosen] for r in records]
    oracle = [float(np.min(r.errors)) for r in records]
    print(f"{len(records)} of {len(tasks)} tasks recorded in {time.perf_counter() - start:.0f} s to {args.out}; "
          f"the chooser replayed picks fit's choice (or one as good) on {same}; median error: chosen "
          f"{100 * np.median(chosen):.1f} %, oracle {100 * np.median(oracle):.1f} %")
    return 0 if same == len(records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
