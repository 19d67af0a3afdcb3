"""The one-call entry point: ``automodel.fit(data)`` -> leaderboard and best model."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.model.calibration import calibrate
from automodel.errors import DataError
from automodel.data.splits import holdout_rows
from automodel.solve import metrics as metrics_mod
from automodel.model.core import Model, TermModel, predict_many
from automodel.options import DEFAULT_AGGREGATE, DEFAULT_UNIT, ROLE_NAMES
from automodel.search import workers
from automodel.online.anomaly import unexplained
from automodel.online.live import OnlineOptions
from automodel.search.score import PARALLEL_ROWS, all_metrics
from automodel.search.choice import (choose, core_length, description_lengths, log_predictions, probe_points,
                                     probe_values, term_ceiling, term_lengths)
from automodel.search.select import MIN_DOF, too_few_dof
from automodel.search.selection import Selection
from automodel.search.engine import staged_search
from automodel.search.outcome import SearchOutcome, StageReport
from automodel.space.config import SearchSpace
from automodel.templates.base import json_float
from automodel.templates.evaluate import NOT_RUN, template_columns, template_names, template_rows
from automodel.templates.options import checked_space
from automodel.terminal import WIDTH, table, wrap

__all__ = ["FitResult", "fit", "screen", "with_options", "model_context"]

LEADERBOARD_COLUMNS = ["rank", "formula", "n_terms", *metrics_mod.METRICS, "kind", "choice", "note"]
#: the leaderboard's ``choice`` of a candidate the chooser set aside before the tie: beyond the data it grows
#: faster than any term of the search space (:func:`automodel.search.choice.admissible_scores`)
SET_ASIDE = "set aside"


@dataclass
class FitResult:
    """What a search found.

    Attributes
    ----------
    leaderboard : DataFrame
        One row per candidate (searched and seeded), best first: rank, formula, n_terms, every metric,
        kind (``searched`` or ``template:<name>``), choice (``chosen``; ``equivalent`` for the
        candidates the data cannot tell apart from the best; ``set aside`` for those that grow beyond the
        data faster than any term of the search space, not compared) and a note (e.g. why a template
        does not apply).
    best : Model
        The chosen model: the simplest candidate statistically equivalent to rank 1
        (:mod:`automodel.search.select`), or the best-ranked one not set aside with ``selection="best"``
        (:func:`automodel.search.choice.admissible_scores`).
    models : list of Model
        The model of every ranked leaderboard row, in leaderboard order.
    """

    leaderboard: pd.DataFrame
    best: Model
    models: list[Model]
    dataset: data_mod.Dataset
    space: SearchSpace
    reports: list[StageReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    selection: Selection | None = None
    anomalies: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        ranked = int(self.leaderboard["rank"].notna().sum()) if "rank" in self.leaderboard else 0
        return (f"FitResult({self.dataset.source}: {len(self.dataset.runs)} runs, {ranked} ranked candidates; "
                f"chosen T = {self.best.formula})")

    def _repr_html_(self) -> str:
        from html import escape

        board = self.leaderboard[self.leaderboard["rank"].notna()].head(10)
        columns = [c for c in ("rank", "formula", "n_terms", self.space.fit.metric, "kind", "choice")
                   if c in board.columns]
        return (f"<p>{escape(self.dataset.source)}: {len(self.dataset.runs)} runs; "
                f"{escape(self.dataset.described())}; chosen <code>T = {escape(self.best.formula)}</code></p>"
                + board[columns].to_html(index=False, float_format=lambda v: f"{v:.4g}"))

    def report(self, path: str | Path, held_out: pd.DataFrame | None = None, title: str = "") -> Path:
        """Write the HTML report of this fit to ``path`` (:mod:`automodel.output.report.fit`): one page that needs
        no network, with the chosen formula typeset, why it was chosen, the sortable leaderboard, the fit
        and extrapolation plots with the band, the best process count, the anomalies and the data.
        ``held_out``: runs kept out of the fit (canonical column names), drawn and tabled against the
        predictions."""
        from automodel.files import write_text
        from automodel.output.report.fit import fit_page

        return write_text(path, fit_page(self, held_out, title))

    def summary(self, top: int = 10, width: int | None = WIDTH) -> str:
        """The stage log, the top of the leaderboard and the chosen formula, as text on lines of at most
        ``width`` columns (None: no limit; formulas wrapped between their terms)."""
        head = (f"data: {self.dataset.source}: {len(self.dataset.runs)} runs, {self.dataset.n_points} distinct "
                f"configurations; {self.dataset.described()}")
        if np.isfinite(self.dataset.noise):
            head += f"; repetition noise (median relative spread) {self.dataset.noise:.1%}"
        lines = wrap(head, width, "", "    ")
        name_width = max((len(r.name) for r in self.reports), default=0)
        for r in self.reports:  # a stage's line, and its note on lines of its own
            head, *note = r.line(name_width).split("\n")
            lines += [*wrap(head, width, "  ", "      "),
                      *(line for n in note for line in wrap(n.strip(), width, "      ", "       "))]
        lines += [line for n in self.notes for line in wrap(f"note: {n}", width, "  ", "    ")]
        ranked = self.leaderboard["rank"].notna()
        board = self.leaderboard[ranked].head(top).copy()
        chosen = self.leaderboard[self.leaderboard["choice"] == "chosen"]
        if len(chosen) and chosen.index[0] not in board.index:  # the chosen row is always shown
            board = pd.concat([board, chosen])
        metric = self.space.fit.metric
        columns = ["rank", "n_terms", metric, *(["holdout"] if metric != "holdout" else []), "kind", "choice",
                   "formula"]
        legend = "; ".join(f"{m}: {metrics_mod.METRICS[m].description}" for m in columns[2:4]
                           if m in metrics_mod.METRICS)  # what rel_s is, for one who never met it
        lines += ["", *wrap(f"leaderboard (ranked by {metric}, lower is better, top {top}; every metric: fit "
                            "--json):", width),
                  *wrap(f"({legend})", width, "", " "),
                  table(board[columns].rename(columns={"n_terms": "terms"}), width, below=["formula"],
                        float_format=lambda v: f"{v:.4g}")]
        unfitted = self.leaderboard[~ranked]
        if len(unfitted):
            lines += ["", "templates without a model:"]
            lines += [line for row in unfitted.itertuples()
                      for line in wrap(f"{row.kind.removeprefix('template:')}: {row.note}", width, "  ", "    ")]
        if len(self.anomalies):
            lines += ["", *wrap("runs no leading model explains (residual relative to the chosen model's "
                                "prediction; severity: robust z-score):", width),
                      table(self.anomalies, width, float_format=lambda v: f"{v:.4g}")]
        lines += ["", *wrap(f"chosen model: T = {self.best.formula}", width, "", "    ")]
        if self.selection is not None:
            lines += wrap(f"why: rank {self.selection.index + 1}, {self.selection.reason}", width, "  ", "    ")
        return "\n".join(lines)


def fit(data: str | Path | pd.DataFrame, *, time: str = "time", n: str | None = "n", p: str | None = "p",
        cpu: str | None = "cpu", bw: str | None = "bw", params: str | Iterable[str] = (),
        space: str | Path | SearchSpace = "default", aggregate: str = DEFAULT_AGGREGATE, metric: str | None = None,
        weighting: str | None = None, nonnegative: bool | None = None, selection: str | None = None,
        templates: str | Iterable[str] | None = None, explicit: Iterable[str] = (), progress: bool = True,
        max_rows: int = 100, intervals: bool = True,
        template_options: Mapping[str, Mapping[str, Any]] | None = None, drop_anomalies: bool = False,
        jobs: int | None = None, scheduler: Any = None, ignore: str | Iterable[str] = (),
        unit: str | None = None) -> FitResult:
    """Search for the performance model of the runs in ``data``.

    Parameters
    ----------
    data : path or DataFrame
        One row per run; see :func:`automodel.data.load` for the column roles.
    params, ignore : str or iterable of str
        Extra parameter columns, and undeclared columns whose values may differ between repetitions
        (pooled knowingly); one name or several. Rows of one configuration that differ in any other
        column are an error naming it (:func:`automodel.data.dataset.check_pooling`), never pooled
        silently. Errors name the command-line options: ``--p procs`` is ``p="procs"``, ``--param COL``
        ``params=``, ``--ignore COL ...`` ``ignore=``, ``--where EXPR`` ``fit(df.query(EXPR))``.
    unit : str, optional
        The unit of the times (``s``, ``ms``, ``us``, ``ns``, or a label for a value that is not a
        time); default: the data's ``unit`` column, else seconds. The models keep it
        (``Model.unit``) for every printed time and plot axis.
    space : name, path or SearchSpace
        The search space (a name of ``automodel/spaces/<name>.toml``, or a TOML file).
    metric, weighting, nonnegative, selection :
        Override the space's fit options (``selection``: ``"simplest"`` or ``"best"``, see
        :mod:`automodel.search.select`).
    templates : None, "none", "all", "NAME,..." or list of names
        Seeded templates beside the search (:func:`template_names`). ``None``: the space's, of which
        a slow one (a simulation, a posterior) runs when its estimate on the data is within
        :data:`automodel.templates.evaluate.TEMPLATE_BUDGET_SECONDS` and is otherwise listed with that estimate; named templates
        all run.
    template_options : mapping, optional
        Template name -> option -> value, over the space's ``[fit.template_options]``: e.g.
        ``{"kohashi": {"n_terms": 6}}``. Values may be text as typed on a command line
        (:mod:`automodel.templates.options`); ``automodel templates`` lists every option.
    max_rows : int
        Searched candidates kept in the leaderboard (templates are always listed).
    drop_anomalies : bool
        Runs that no leading model explains (:func:`screen`: the chosen model and its equivalent
        candidates, the store's anomaly rule) are always listed in ``FitResult.anomalies``, in the
        summary and in the model file's options; with this they are also set aside and the search runs
        again without them. Off by default: on the canonical tasks setting them aside made
        contention-m's bursts (real, and in the held-out runs too) look like noise and raised its
        median error from 64 % to 73 % (benchmarks/RESULTS.md).
    intervals : bool
        Calibrate every ranked model's prediction band (:mod:`automodel.model.calibration`; forward splits
        of the data, a few batched refits of the final candidates).
    jobs : int, optional
        Workers at most for the per-row work of scoring (joblib's ``n_jobs``: -1 all the active joblib
        backend has, 1 none; None: the ``n_jobs`` of the active ``joblib.parallel_backend``, else 1).
        The backend is loky (processes) unless the caller activated another. Used only on data of
        at least :data:`~automodel.search.score.PARALLEL_ROWS` configurations, and then only for the
        scorings of at least :data:`~automodel.search.score.PARALLEL_PAIR_ROWS` rows x candidates
        (:mod:`automodel.search.workers`); the result is the serial one, bit for bit.
    scheduler : str or dask.distributed.Client, optional
        Send that work to this ``dask.distributed`` cluster (a scheduler address such as
        ``tcp://host:8786``, or a client) instead, one piece per worker thread (on data of at least
        :data:`~automodel.search.score.PARALLEL_ROWS` configurations; smaller fits run here and do not
        connect to it: a connection took 5 s for no work). Needs the ``dask`` extra.

    Examples
    --------
    >>> result = automodel.fit(df, params=["iterations"])  # doctest: +SKIP
    >>> result.best.predict(new_runs)                      # doctest: +SKIP
    """
    ds = data_mod.load(data, time=time, n=n, p=p, cpu=cpu, bw=bw, params=params, aggregate=aggregate,
                       explicit=explicit, covariates=template_columns(), ignore=ignore, unit=unit)
    sp = with_options(space, metric=metric, weighting=weighting, nonnegative=nonnegative, selection=selection)
    names, named = template_names(templates, sp.fit.templates)
    merged = {name: {**sp.fit.template_options.get(name, {}), **(template_options or {}).get(name, {})}
              for name in {*sp.fit.template_options, *(template_options or {})}}
    sp = replace(sp, fit=replace(sp.fit, templates=names, template_options=merged))

    jobs = workers.default_jobs(jobs, 1)
    large = ds.n_points >= PARALLEL_ROWS  # smaller: the workers' start costs more than they save
    with workers.cluster(scheduler if large else None) as client, \
            workers.use(jobs if large else 1, client, "automodel.search.score"):
        return _fit_screened(ds, sp, named, progress, max_rows, intervals, drop_anomalies)


def _fit_screened(ds: data_mod.Dataset, sp: SearchSpace, named: bool, progress: bool, max_rows: int,
                  intervals: bool, drop_anomalies: bool) -> FitResult:
    """:func:`fit` of the loaded ``ds`` in the space ``sp``: search, screening, bands."""
    result, outcome = _fit_dataset(ds, sp, named, progress, max_rows)
    anomalies = screen(result)
    if len(anomalies) and drop_anomalies:
        kept = ds.runs.drop(index=anomalies.index)
        extras = [q for q in ds.params if q not in ROLE_NAMES]
        cleaned = data_mod.load(kept, **{q: (q if q in ds.params else None) for q in ROLE_NAMES},
                                params=extras, aggregate=ds.aggregate, covariates=ds.covariates)
        ds = replace(cleaned, roles=ds.roles, source=ds.source, pooled=ds.pooled)
        result, outcome = _fit_dataset(ds, sp, named, progress, max_rows)
        anomalies = anomalies.assign(action="set aside")
        result.notes.append(f"{len(anomalies)} anomalous run(s) set aside and the search run again without "
                            f"them (listed below)")
    elif len(anomalies):
        anomalies = anomalies.assign(action="kept")
        result.notes.append(f"{len(anomalies)} run(s) no leading model explains, kept in the fit (listed "
                            f"below; --drop-anomalies sets them aside)")
    result.anomalies = anomalies
    if intervals:
        structures = [outcome.scores.structures[i] for i in outcome.order[:max_rows]]
        for model, interval in zip(result.models, calibrate(ds, sp.fit, [m.core for m in result.models],
                                                             result.selection.equivalent, structures)):
            model.interval = interval
    if len(anomalies):
        record = [{k: json_float(v) if isinstance(v, float) else v for k, v in run.items()}  # an infinite
                  for run in anomalies.reset_index(drop=True).to_dict(orient="records")]  # severity (a MAD
        # of 0: every other run explained exactly) is null in the model file, as in --json
        for model in result.models:
            model.options = {**model.options, "anomalies": record}
    return result


def _fit_dataset(ds: data_mod.Dataset, sp: SearchSpace, named: bool, progress: bool, max_rows: int
                 ) -> tuple[FitResult, SearchOutcome]:
    """The search, the templates, the ranking and the choice on ``ds`` (no bands, no screening).

    The choice is made among every distinct searched candidate and every template, whatever
    ``max_rows`` shows: the leaderboard lists the best ``max_rows`` searched candidates, the best of
    every size and the chosen one."""
    outcome = staged_search(ds, sp, progress=progress)
    t_rows, t_models = template_rows(ds, sp, model_context(ds, sp), named, progress)
    probes = probe_points(ds.frame, ds.params)
    pool = _searched_pool(outcome, ds, sp.fit.metric)
    t_ok = [i for i, m in enumerate(t_models) if m is not None]
    t_logs = np.zeros((len(t_ok), len(probes)))
    if t_ok:
        with np.errstate(all="ignore"):
            predicted = predict_many([t_models[i].core for i in t_ok], probes)
            t_logs = np.log(np.where(predicted > 0, predicted, np.nan))
    candidates = np.concatenate([pool["ids"], -1 - np.array(t_ok, dtype=int)])  # >= 0 searched, < 0 template
    values = np.concatenate([pool["values"], [t_rows[i][sp.fit.metric] for i in t_ok]])
    n_terms = np.concatenate([pool["n_terms"], [t_rows[i]["n_terms"] for i in t_ok]]).astype(int)
    logs = np.concatenate([pool["logs"], t_logs])
    lengths = np.concatenate([pool["lengths"], [core_length(t_models[i].core) for i in t_ok]]).astype(int)
    holdout = np.concatenate([pool["holdout"], [t_rows[i].get("holdout", np.nan) for i in t_ok]])
    if not np.isfinite(values).any():
        raise DataError(_nothing_fitted(ds, outcome, t_rows))
    held = holdout_rows(ds)
    chosen = choose(values, n_terms, ds.n_points, sp.fit.metric, sp.fit.selection, *ds.aggregate_se(), logs,
                    lengths, holdout, 0 if held is None or np.isnan(pool["holdout"]).all() else int(held.sum()),
                    pool["ceiling"])
    picked = int(candidates[chosen.index])
    shown = list(outcome.order[:max_rows])
    sizes = outcome.scores.n_terms[outcome.order]  # and the best-ranked candidate of every size
    first = outcome.order[np.sort(np.unique(sizes, return_index=True)[1])]
    shown += [int(i) for i in [*first, picked] if i >= 0 and i not in set(shown)]
    rows, models = _searched_rows(outcome, ds, sp, shown)
    kept = _distinct_formulas([r["formula"] for r in rows], shown.index(picked) if picked >= 0 else -1)
    shown, rows, models = [shown[j] for j in kept], [rows[j] for j in kept], [models[j] for j in kept]
    board = pd.DataFrame(rows + t_rows)
    all_models = models + t_models
    keys = shown + [-1 - i for i in range(len(t_rows))]  # the candidate of every row, as in ``candidates``
    order = np.argsort(np.where(np.isfinite(board[sp.fit.metric]), board[sp.fit.metric], np.inf), kind="stable")
    board = board.iloc[order].reset_index(drop=True)
    ranked = [all_models[i] for i in order]
    ranks = np.cumsum([m is not None for m in ranked])
    board.insert(0, "rank", pd.array([int(r) if m is not None else None for r, m in zip(ranks, ranked)],
                                     dtype="Int64"))
    models_out = [m for m in ranked if m is not None]
    ranked_keys = np.array([keys[i] for i in order if all_models[i] is not None])
    equivalent = np.isin(ranked_keys, candidates[chosen.equivalent])
    position = int(np.flatnonzero(ranked_keys == picked)[0])
    selection = Selection(position, 0, chosen.threshold, equivalent,
                          _why(chosen.reason, board[sp.fit.metric].to_numpy(float)[:position],
                               board["n_terms"].to_numpy()[:position], ds.n_points))
    choice = np.where(equivalent, "equivalent", "")
    if chosen.set_aside is not None:  # grows beyond the data faster than any term of the space
        choice[np.isin(ranked_keys, candidates[chosen.set_aside])] = SET_ASIDE
    choice[position] = "chosen"
    board["choice"] = ""
    board.loc[board["rank"].notna().to_numpy(), "choice"] = choice
    board = board[LEADERBOARD_COLUMNS]
    skipped = [f"{row['kind']} {row['note']}" for row in t_rows if row["note"].startswith(NOT_RUN)]
    return FitResult(board, models_out[position], models_out, ds, sp, outcome.reports,
                     [*ds.notes, *outcome.notes, *skipped], selection), outcome


def _why(reason: str, above: np.ndarray, n_terms: np.ndarray, n_points: int) -> str:
    """The chooser's ``reason``, with why the candidates ranked above the chosen one (their scores
    ``above``, their coefficients ``n_terms``) were not compared, when some were not: the rank-8 choice
    of rule ``best`` is "the best rel_s of the candidates compared", not "the best rel_s"."""
    scarce = int(np.count_nonzero(np.isfinite(above) & too_few_dof(n_terms, n_points)))
    if not scarce:
        return reason
    return (f"{reason}{' of the candidates compared' if reason.startswith('the best') else ''}; {scarce} "
            f"candidate(s) ranked above it have fewer than {MIN_DOF} residual degrees of freedom (runs minus "
            "coefficients): their score is not compared")


def _distinct_formulas(formulas: list[str], keep: int = -1) -> list[int]:
    """Positions of ``formulas`` to show, one per distinct text: ``keep`` for its own, else the first.

    The two routes can reach the same model (mandelbrot: ``2.894 + 55.48/p`` as the staged search's
    ``c + 1/p`` and the normal form's ``c + p^-1``); the leaderboard shows it once.

    Examples
    --------
    >>> _distinct_formulas(["a", "b", "a", "c", "b"], keep=4)
    [0, 3, 4]
    """
    chosen: dict[str, int] = {}
    for j, text in enumerate(formulas):
        if text not in chosen or j == keep:
            chosen[text] = j
    return sorted(chosen.values())


def _searched_pool(outcome: SearchOutcome, ds: data_mod.Dataset, metric: str) -> dict[str, np.ndarray]:
    """What the chooser needs of every distinct searched candidate (``outcome.order``): its position
    (``ids``), ranking metric, ``holdout`` error (NaN where the search did not compute it), coefficients left nonzero (``n_terms``), description length
    (:func:`~automodel.search.choice.description_lengths`) and log predictions at the chooser's probes
    (:func:`~automodel.search.choice.probe_points`, one batched product,
    :func:`~automodel.search.choice.log_predictions`); and the steepest growth of the searched terms there
    (``ceiling``, :func:`~automodel.search.choice.term_ceiling`)."""
    sc = outcome.scores
    ids = np.asarray(outcome.order, dtype=int)
    coefs = sc.coefficients[ids]
    columns = outcome.columns[ids]
    at = probe_values(outcome.terms, ds.frame, ds.params)
    return {"ids": ids, "values": sc.metrics[metric][ids],
            "holdout": sc.metrics["holdout"][ids] if "holdout" in sc.metrics else np.full(len(ids), np.nan),
            "logs": log_predictions(at, columns, np.where(columns >= 0, coefs, 0.0)), "ceiling": term_ceiling(at),
            "n_terms": np.maximum((np.nan_to_num(coefs) != 0.0).sum(axis=1), 1),
            "lengths": description_lengths(term_lengths(outcome.terms), columns,
                                           np.where(columns >= 0, coefs, 0.0))}


def screen(result: FitResult) -> pd.DataFrame:
    """The runs no leading model explains (the store's anomaly rule, :func:`automodel.online.anomaly.unexplained`,
    with its defaults): the chosen model and the candidates equivalent to it, best first, up to
    ``n_leaders``. One row per flagged run (index: its position in the input), with the user's column
    names, the relative residual under the chosen model and the severity (robust z-score)."""
    ds, rule = result.dataset, OnlineOptions()
    ranked = [i for i, eq in enumerate(result.selection.equivalent) if eq and i != result.selection.index]
    leaders = [result.best, *(result.models[i] for i in ranked)][:rule.n_leaders]
    y = ds.runs["time"].to_numpy(float)
    columns = ds.runs[list(ds.params)].reset_index(drop=True)
    with np.errstate(all="ignore"):
        pred = np.column_stack([np.asarray(m.core.predict(columns), float) for m in leaders])
    rel = np.where(np.isfinite(pred), (y[:, None] - pred) / y[:, None], np.inf)
    flagged, severity = unexplained(rel, np.ones(len(y), bool), rule.anomaly_mad, rule.anomaly_floor)
    out = ds.runs[flagged].rename(columns=dict(ds.roles))
    position = np.flatnonzero(flagged)
    out.insert(0, "row", position + 2 if ds.source != "<DataFrame>" else position)  # the file's row (header 1)
    return out.assign(residual=rel[flagged, 0], severity=severity[flagged])


def _nothing_fitted(ds: data_mod.Dataset, outcome: SearchOutcome, t_rows: list[dict]) -> str:
    """Why no candidate could be fitted: the data's configurations and ranges, each stage's and template's
    note."""
    ranges = "; ".join(f"{q} from {lo:g} to {hi:g}" for q, (lo, hi) in ds.ranges().items())
    fitted = sum(r.n_candidates for r in outcome.reports)
    why = (f"{ds.source}: no candidate model could be fitted on {ds.n_points} configurations ({ranges}): "
           f"of {fitted} searched candidates none has terms that are finite there and a fit that is not T = 0")
    notes = [f"{row['kind'].removeprefix('template:')} {row['note']}" for row in t_rows if row["note"]]
    if len(notes) > 3:
        notes = notes[:3] + [f"{len(notes) - 3} more"]
    return why + (f"; templates: {'; '.join(notes)}" if notes else "")


def with_options(space: str | Path | SearchSpace, **options: Any) -> SearchSpace:
    """The search space (a name, file or SearchSpace) with the fit ``options`` that are not None replaced;
    an unknown metric, selection or weighting is a one-line :class:`SpaceError` (:meth:`FitOptions.check`,
    :func:`automodel.solve.metrics.check_metric`), as is a template option of the space that its template
    does not take (:func:`~automodel.templates.options.checked_space`)."""
    sp = checked_space(space)
    options = {k: v for k, v in options.items() if v is not None}
    if not options:
        return sp
    fit_options = replace(sp.fit, **options)
    fit_options.check()
    metrics_mod.check_metric(fit_options.metric)
    return replace(sp, fit=fit_options)


def model_context(ds: data_mod.Dataset, sp: SearchSpace) -> dict[str, Any]:
    """What every model fitted on ``ds`` in ``sp`` records besides its formula (keyword arguments of Model)."""
    return {"params": ds.params, "roles": dict(ds.roles), "ranges": ds.ranges(), "space": sp.name,
            "options": {"weighting": sp.fit.weighting, "nonnegative": sp.fit.nonnegative,
                        "metric": sp.fit.metric, "aggregate": ds.aggregate,
                        **({"unit": ds.unit} if ds.unit != DEFAULT_UNIT else {}),
                        **({"ignore": list(ds.pooled)} if ds.pooled else {}),
                        **({"where": ds.where} if ds.where else {})}}


def _searched_rows(outcome: SearchOutcome, ds: data_mod.Dataset, sp: SearchSpace, shown: list[int]
                   ) -> tuple[list[dict], list[Model]]:
    """One leaderboard row and model per searched candidate ``shown`` (positions in ``outcome.scores``)."""
    sc = outcome.scores
    ctx = model_context(ds, sp)
    rows, models = [], []
    staged = "n" in ds.params  # the computation and communication stages ran (PMNF structures have no parts)
    metrics = all_metrics(sc, shown, ds, sp.fit)
    for j, i in enumerate(shown):
        terms = sc.structures[i].terms
        core = TermModel.from_fit(terms, sc.coefficients[i, :len(terms)], sc.structures[i].parts if staged else ())
        mets = {m: float(v[j]) for m, v in metrics.items()}
        models.append(Model(core, metrics=mets, **ctx))
        rows.append({"formula": models[-1].formula, "n_terms": len(core.terms), **mets, "kind": "searched",
                     "note": "", "route": "pmnf" if sc.structures[i].signed else "staged"})
    return rows, models
