"""Many kernels at once: one performance model per kernel of a profile.

A profile (an Extra-P file or CUBE set, a CSV or DataFrame with a ``kernel`` column) holds many kernels
(call path and metric) measured at the same few points. :func:`fit_many` models every kernel with the
search space and ranking metric :func:`automodel.fit` uses, but shares the work between kernels:

* kernels measured at the same points form a group; each distinct term is evaluated once per group;
* when the space's search is a single stage for these parameters (one parameter ``p``: the p-only
  P-terms of bayesian-kohashi-2022.txt, eqs. 1-6; one extra parameter; the ``pmnf`` space), its
  candidate list does not depend on the measured values, so every (candidate, kernel) pair of the
  group is solved in one batched call (:mod:`automodel.kernels.choice`) and each kernel gets the candidate
  that automodel.fit chooses among the searched ones (its ranking metric and selection rule,
  :mod:`automodel.search.select`): the same model as ``automodel.fit(..., templates=())``;
* a multi-stage search (``n`` present, several parameters) prunes per kernel between stages, so those
  kernels run the staged search one by one (same result, no batching);
* groups (and chunks of one-by-one kernels) go to joblib worker processes only when the work measured
  on the first of them predicts more than ``parallel_after`` seconds for the rest: starting loky
  workers that import automodel took 2.1 s on a 2-core machine, so two workers pay off only when
  the rest would take more than about twice that serially.

Seeded templates are not fitted: they are whole-dataset fits outside the search space; use
:func:`automodel.fit` on one kernel for its full leaderboard. Kernels that cannot be modelled (fewer
than 3 distinct points, a value that is not positive) are listed with the reason, never dropped.

Examples
--------
>>> result = automodel.fit_many("profile.txt")        # doctest: +SKIP
>>> result.summary.head()                             # doctest: +SKIP
>>> result.models["main->solve [time]"].predict({"p": [1024]})   # doctest: +SKIP
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.data.cells import rows_of
from automodel.errors import DataError
from automodel.solve import metrics as metrics_mod
from automodel.printing import formulas
from automodel.kernels.choice import best_per_kernel, choose
from automodel.kernels.groups import Group, groups, noise
from automodel.model import Model, TermModel
from automodel.space.config import SearchSpace
from automodel.options import ROLE_NAMES
from automodel.space.terms import Term

__all__ = ["ManyResult", "fit_many", "load_kernels", "SUMMARY_COLUMNS"]

SUMMARY_COLUMNS = ["kernel", "formula", "n_terms", "n_points", *metrics_mod.METRICS, "note"]
_KERNELS_PER_TASK = 64  # one-by-one kernels handed to a worker at a time
#: columns of a tidy frame (automodel.data.tidy) that describe a kernel: never parameters by default
DESCRIPTIVE = ("callpath", "metric")


@dataclass
class ManyResult:
    """One model per kernel.

    Attributes
    ----------
    models : dict
        Kernel name -> :class:`automodel.Model` (predict, formula, export, save), for every kernel that
        could be modelled, in input order.
    summary : DataFrame
        One row per kernel in input order: ``kernel, formula, n_terms, n_points``, every metric of
        :mod:`automodel.solve.metrics` and a ``note`` (why a kernel was not modelled, else empty).
    space : SearchSpace
        The search space (with the overrides applied).
    notes : list of str
        How the kernels were grouped and fitted (batched, one by one, in parallel or not).
    """

    models: dict[str, Model]
    summary: pd.DataFrame
    space: SearchSpace
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per kernel: its formula and fit error (the ranking metric), or why it has no model."""
        metric = self.space.fit.metric
        width = min(max((len(k) for k in self.summary["kernel"]), default=0), 48)
        out = []
        for row in self.summary.itertuples(index=False):
            label = f"{row.kernel:<{width}}"
            if row.note:
                out.append(f"{label}  no model: {row.note}")
            else:
                out.append(f"{label}  {metric} {getattr(row, metric):<9.3g} T = {row.formula}")
        return out


# -- input -----------------------------------------------------------------------------------------
def load_kernels(data: str | Path | pd.DataFrame, format: str | None = None  # noqa: A002
                 ) -> tuple[pd.DataFrame, str, int | np.ndarray]:
    """The table of kernels in ``data``: a file in any format :func:`automodel.data.read` reads (of
    ``format``, or detected), or a DataFrame.

    Returns the frame, its source name and where its rows are (for messages): the line offset of the
    first row, or the line or record of every row (:func:`automodel.data.cells.rows_of`).
    """
    frame = data if isinstance(data, pd.DataFrame) else data_mod.read(Path(data), format)
    return frame, frame.attrs.get("source", "<DataFrame>"), rows_of(frame)


def _columns(frame: pd.DataFrame, kernel: str, time: str, params: Iterable[str] | None, source: str
             ) -> list[str]:
    for col, role in ((kernel, "kernel"), (time, "time")):
        if col not in frame.columns:
            raise DataError(f"{source}, column '{col}': missing (the {role} column); the table has "
                            f"{', '.join(map(str, frame.columns))}")
    if params is None:  # the tidy frame's descriptive columns are not parameters
        params = frame.attrs.get("params") or [c for c in frame.columns if c not in (kernel, time, *DESCRIPTIVE)]
    params = [str(q) for q in params]
    for q in params:
        if q not in frame.columns:
            raise DataError(f"{source}, column '{q}': no such parameter column; the table has "
                            f"{', '.join(map(str, frame.columns))}")
        if not q.isidentifier() or q in (kernel, time):
            raise DataError(f"{source}, column '{q}': a parameter needs a name that is an identifier and "
                            f"not the kernel or time column")
    if not params:
        raise DataError(f"{source}: no parameter column besides '{kernel}' and '{time}'")
    return [q for q in ROLE_NAMES if q in params] + [q for q in params if q not in ROLE_NAMES]


def _dataset(g: Group, source: str) -> data_mod.Dataset:
    frame = pd.DataFrame({q: g.points[:, j] for j, q in enumerate(g.params)})
    frame["time"] = g.values[:, 0]
    return data_mod.load(frame, params=[q for q in g.params if q not in ROLE_NAMES], source=source,
                         aggregate=g.aggregate)


def _model(terms: tuple[Term, ...], coefs: np.ndarray, mets: dict[str, float], ctx: dict[str, Any]) -> Model:
    """The model as automodel.fit builds it (:meth:`TermModel.from_fit`, :func:`automodel.fitting.model_context`)."""
    return Model(TermModel.from_fit(terms, coefs[:len(terms)]), metrics=mets, **ctx)


def _row(name: str, model: Model | None, n_points: int, note: str = "", text: str | None = None) -> dict[str, Any]:
    if model is None:
        return {"kernel": name, "formula": "", "n_terms": 0, "n_points": n_points,
                **{m: np.nan for m in metrics_mod.METRICS}, "note": note}
    core = model.core
    return {"kernel": name, "formula": model.formula if text is None else text,
            "n_terms": len(core.terms), "n_points": n_points, **model.metrics,
            "note": note}


def _fit_group(g: Group, sp: SearchSpace, source: str, only: slice | None = None) -> tuple[list, str]:
    """Model the kernels of one group, or of the slice ``only`` of its kernels.

    Returns ``(done, kind)``: ``done`` lists ``(input index, Model or None, summary row)``; ``kind`` is
    ``"batched"``, ``"staged"`` (searched one by one), ``"failed"``, or ``"split"`` (a multi-stage group
    too large for one task: nothing done, run its slices instead).
    """
    from automodel.search.score import TermCache
    from automodel.search.staged import holdout_rows, staged_search

    m = len(g.points)
    try:
        ds = _dataset(g, source)
        outcome = staged_search(ds, sp, progress=False)
    except DataError as exc:
        return [(int(i), None, _row(n, None, m, str(exc))) for i, n in zip(g.index, g.names)], "failed"
    from automodel.fitting import model_context

    ctx = model_context(ds, sp)
    out = []
    if not outcome.adaptive:  # the candidates do not depend on the measured values
        terms = [s.terms for s in outcome.scores.structures]
        cache = TermCache(ds.columns(), ds.n_points)
        term_idx = [[cache.index(t) for t in ts] for ts in terms]
        best, coefs, mets = best_per_kernel(cache.matrix, g.values, term_idx, sp, holdout_rows(ds),
                                            noise(g, g.aggregate),
                                            np.array([s.signed for s in outcome.scores.structures], bool))
        texts = formulas(terms, best, coefs)
        for j, (i, name) in enumerate(zip(g.index, g.names)):
            if best[j] < 0:
                out.append((int(i), None, _row(name, None, m, "no candidate could be fitted")))
                continue
            model = _model(terms[best[j]], coefs[j], {k: float(v[j]) for k, v in mets.items()}, ctx)
            out.append((int(i), model, _row(name, model, m, text=texts[j])))
        _bands(out, g, ds, sp)
        return out, "batched"
    if only is None and len(g.names) > _KERNELS_PER_TASK:
        return [], "split"
    se = noise(g, g.aggregate)
    for j in range(len(g.names))[only or slice(None)]:
        i, name, y = int(g.index[j]), g.names[j], g.values[:, j]
        try:
            res = staged_search(replace(ds, frame=ds.frame.assign(time=y), runs=ds.runs.assign(time=y)), sp,
                                progress=False)
        except DataError as exc:
            out.append((i, None, _row(name, None, m, str(exc))))
            continue
        sc, order = res.scores, res.order  # ranked, one per distinct set of nonzero terms
        n_terms = np.maximum((np.nan_to_num(sc.coefficients[order]) != 0.0).sum(axis=1), 1)
        pick = choose(sc.metric(sp.fit.metric)[order][None], n_terms[None], np.ones(len(order), bool), m, sp,
                      (se[0][j:j + 1], se[1][j:j + 1]))[0]
        top = int(order[pick])
        model = _model(sc.structures[top].terms, sc.coefficients[top],
                       {k: float(v[top]) for k, v in sc.metrics.items()}, ctx)
        out.append((i, model, _row(name, model, m)))
    _bands(out, g, ds, sp)
    return out, "staged"


def _bands(done: list, g: Group, ds: data_mod.Dataset, sp: SearchSpace) -> None:
    """Give every fitted kernel model of ``done`` its band (:func:`automodel.calibration.kernel_intervals`,
    all kernels of the group at once)."""
    from automodel.calibration import kernel_intervals

    fitted = [(i, model) for i, model, _ in done if model is not None]
    if not fitted:
        return
    column = {int(i): j for j, i in enumerate(g.index)}
    targets = g.values[:, [column[i] for i, _ in fitted]]
    for (_, model), interval in zip(fitted, kernel_intervals([m.core for _, m in fitted], ds, sp.fit, targets)):
        model.interval = interval


def _run(task: tuple[Group, SearchSpace, str, slice | None]) -> tuple[list, str]:
    return _fit_group(*task)


def _size(task: tuple[Group, SearchSpace, str, slice | None]) -> int:
    return len(task[0].names[task[3] or slice(None)])


# -- the public entry point ------------------------------------------------------------------------
def fit_many(data: str | Path | pd.DataFrame, *, kernel: str = "kernel", time: str = "time",
             params: Iterable[str] | None = None, space: str | Path | SearchSpace = "default",
             aggregate: str = "median", metric: str | None = None, weighting: str | None = None,
             nonnegative: bool | None = None, selection: str | None = None, jobs: int = -1,
             parallel_after: float = 5.0, format: str | None = None) -> ManyResult:  # noqa: A002
    """Model every kernel of a profile; see the module docstring for how the work is shared.

    Parameters
    ----------
    data : path or DataFrame
        A file in any format :func:`automodel.data.read` reads (Extra-P text, JSON, JSON Lines, Talpas,
        a saved experiment, a CUBE set; a CSV, TSV or Parquet table) or a DataFrame with one row per run:
        a kernel column, parameter columns and a time (value) column.
    kernel, time : str
        The kernel and value columns.
    params : iterable of str, optional
        Parameter columns (default: ``data.attrs["params"]`` of a frame read from an Extra-P format, else
        every other column but ``callpath`` and ``metric``). ``n``, ``p``, ``cpu``, ``bw`` take their
        roles; others are extra parameters.
    space, aggregate, metric, weighting, nonnegative, selection :
        As for :func:`automodel.fit`.
    jobs : int
        Worker processes at most (joblib's convention: -1 all cores, 1 none).
    parallel_after : float
        Go parallel only when the rest of the work is predicted to take longer than this (seconds),
        from the time the work done so far took per kernel.
    format : str, optional
        The format of a file (a key of :data:`automodel.data.FORMATS`); None detects it.

    Returns
    -------
    ManyResult

    Raises
    ------
    DataError
        Malformed input (missing column, text in a number column, bad Extra-P text).
    """
    frame, source, offset = load_kernels(data, format)
    cols = _columns(frame, kernel, time, params, source)
    from automodel.fitting import with_options

    sp = with_options(space, metric=metric, weighting=weighting, nonnegative=nonnegative,
                      selection=selection)
    names, found, bad = groups(frame, kernel, time, cols, source, offset, aggregate)
    rows: dict[int, dict] = {j: _row(names[j], None, n, note) for j, (n, note) in bad.items()}
    models: dict[int, Model] = {}
    kinds: list[str] = []
    queue = [(g, sp, source, None) for g in found]
    started, n_done, parallel = _time.perf_counter(), 0, False
    while queue:
        batch, queue = (queue, []) if parallel else (queue[:1], queue[1:])
        for task, (done, kind) in zip(batch, _parallel(batch, jobs) if parallel else map(_run, batch)):
            if kind == "split":
                g = task[0]
                queue += [(g, sp, source, slice(lo, lo + _KERNELS_PER_TASK))
                          for lo in range(0, len(g.names), _KERNELS_PER_TASK)]
                continue
            kinds.append(kind)
            n_done += len(done)
            for i, model, row in done:
                rows[i] = row
                if model is not None:
                    models[i] = model
        if queue and not parallel and _workers(jobs) > 1 and len(queue) > 1:
            rate = (_time.perf_counter() - started) / max(n_done, 1)
            parallel = rate * sum(map(_size, queue)) > parallel_after
    summary = pd.DataFrame([rows[j] for j in range(len(names))], columns=SUMMARY_COLUMNS)
    notes = [*frame.attrs.get("notes", ()),
             f"{len(names)} kernels in {len(found)} group(s) of shared points: {kinds.count('batched')} "
             f"group(s) solved batched, {kinds.count('staged')} task(s) of kernels searched one by one "
             f"(multi-stage search){' in parallel' if parallel else ''}; {len(rows) - len(models)} not modelled"]
    return ManyResult({names[j]: models[j] for j in sorted(models)}, summary, sp, notes)


def _workers(jobs: int) -> int:
    import os
    n = os.cpu_count() or 1
    return n if jobs < 0 else max(1, min(jobs, n))


def _parallel(tasks: list, jobs: int) -> list[tuple[list, str]]:
    from joblib import Parallel, delayed
    return Parallel(n_jobs=_workers(jobs))(delayed(_run)(t) for t in tasks)



