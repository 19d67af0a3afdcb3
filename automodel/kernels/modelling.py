"""The models of one group of kernels (measured at the same points): batched or staged.

:func:`fit_group` models the kernels of one group, or of a part of one: when the space's search is a
single stage, every (candidate, kernel) pair is solved in one batched call
(:func:`automodel.kernels.choice.best_per_kernel`); when it is multi-stage, every kernel has its own
search, each stage scored for all kernels at once (:func:`automodel.search.engine.search_kernels`).
See :mod:`automodel.kernels.fit_many`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.data.splits import holdout_rows
from automodel.errors import DataError
from automodel.kernels.choice import best_per_kernel, choose
from automodel.kernels.groups import Group, noise
from automodel.kernels.result import summary_row
from automodel.model.core import Model, TermModel
from automodel.options import ROLE_NAMES
from automodel.text.printing import formulas
from automodel.search.choice import description_lengths, log_predictions, probe_values, term_ceiling, term_lengths
from automodel.space.config import SearchSpace
from automodel.space.terms import Term

__all__ = ["fit_group"]


def _dataset(g: Group, source: str) -> data_mod.Dataset:
    """The dataset of a group's points and its first kernel's values, as :func:`automodel.data.load` makes it."""
    frame = pd.DataFrame({q: g.points[:, j] for j, q in enumerate(g.params)})
    frame["time"] = g.values[:, 0]
    return data_mod.load(frame, params=[q for q in g.params if q not in ROLE_NAMES], source=source,
                         aggregate=g.aggregate)


def _model(terms: tuple[Term, ...], coefs: np.ndarray, mets: dict[str, float], ctx: dict[str, Any]) -> Model:
    """The model as automodel.fit builds it (:meth:`TermModel.from_fit`, :func:`automodel.fitting.model_context`)."""
    return Model(TermModel.from_fit(terms, coefs[:len(terms)]), metrics=mets, **ctx)


def fit_group(g: Group, sp: SearchSpace, source: str) -> tuple[list, str]:
    """Model the kernels of one group (or of a part of one, :func:`automodel.kernels.schedule.part`).

    Returns ``(done, kind)``: ``done`` lists ``(input index, Model or None, summary row)``; ``kind`` is
    ``"batched"`` (one stage: every candidate fitted to every kernel at once), ``"staged"`` (a
    multi-stage search per kernel, each stage scored for all kernels at once) or ``"failed"``.
    """
    from automodel.search.score import TermCache
    from automodel.search.engine import search_kernels

    m = len(g.points)
    try:  # the first kernel's search: do the candidates depend on the measured values?
        ds = _dataset(g, source)
        first = search_kernels(ds, g.values[:, :1], sp)
    except DataError as exc:
        return [(int(i), None, summary_row(n, None, m, str(exc))) for i, n in zip(g.index, g.names)], "failed"
    from automodel.fitting import model_context

    ctx = model_context(ds, sp)
    if first.adaptive:
        out = _staged_group(g, ds, sp, ctx)
        _bands(out, g, ds, sp)
        return out, "staged"
    structures = first.outcome(0).scores.structures
    terms = [s.terms for s in structures]
    cache = TermCache(ds.columns(), ds.n_points)
    term_idx = [[cache.index(t) for t in ts] for ts in terms]
    best, coefs, mets = best_per_kernel(cache.matrix, g.values, term_idx, sp, holdout_rows(ds),
                                        noise(g, g.aggregate),
                                        np.array([s.signed for s in structures], bool),
                                        probe_values(cache.terms, ds.frame, ds.params),
                                        term_lengths(cache.terms), "holdout" in first.outcome(0).scores.metrics)
    out = _models(g, terms, best, coefs, mets, ctx, {})
    _bands(out, g, ds, sp)
    return out, "batched"


def _padded(columns: np.ndarray, width: int) -> np.ndarray:
    """``columns`` (N, w) cut or padded with -1 to ``width`` columns."""
    cols = np.full((len(columns), width), -1, np.intp)
    cols[:, :min(width, columns.shape[1])] = columns[:, :width]
    return cols


def _beyond(at: np.ndarray, columns: np.ndarray, ids: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(K, L, P) log predictions at the chooser's probes of every kernel's ranked candidates (``at`` (P, T)
    the terms' :func:`automodel.search.choice.probe_values`; ``ids`` (K, L) into ``columns``, -1 none;
    ``columns`` (N, w) each candidate's terms as indices into the terms, -1 padded; ``coefficients``
    (K, L, width) in that order), NaN where not positive."""
    cols = _padded(columns, coefficients.shape[2])
    logs = log_predictions(at, cols[np.maximum(ids, 0)], coefficients)
    return np.where(ids[:, :, None] >= 0, logs, np.nan)


def _lengths(terms: list[Term], columns: np.ndarray, ids: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """(K, L) description lengths (:func:`automodel.search.choice.description_lengths`) of every kernel's
    ranked candidates, in the layout of :func:`_beyond`."""
    cols = _padded(columns, coefficients.shape[2])
    return description_lengths(term_lengths(terms), cols[np.maximum(ids, 0)],
                               coefficients)


def _staged_group(g: Group, ds: data_mod.Dataset, sp: SearchSpace, ctx: dict[str, Any]) -> list:
    """The kernels of a group whose search is multi-stage: every kernel's own staged search, each stage
    scored for all kernels at once (:func:`automodel.search.engine.search_kernels`); each kernel's
    ranked final candidates chosen from by the rule automodel.fit applies (:func:`choose`), the chosen
    ones scored with every metric."""
    from automodel.search.engine import search_kernels

    many = search_kernels(ds, g.values, sp)
    K, L = many.order.shape
    rows = np.arange(K)[:, None]
    present = many.order >= 0
    at = np.where(present, many.order, 0)
    ids = many.ids[rows, at] if L else np.zeros((K, 0), np.intp)
    score = np.where(present, many.metrics[sp.fit.metric][rows, at], np.inf)
    n_terms = np.where(present, np.maximum((np.nan_to_num(many.coefficients[rows, at]) != 0.0).sum(axis=2), 1), 1)
    probes = probe_values(many.terms, ds.frame, ds.params)
    beyond = _beyond(probes, many.columns, np.where(present, ids, -1), many.coefficients[rows, at])
    length = _lengths(many.terms, many.columns, np.where(present, ids, -1), many.coefficients[rows, at])
    held = holdout_rows(ds)
    holdout = (np.where(present, many.metrics["holdout"][rows, at], np.nan)
               if "holdout" in many.metrics and held is not None else None)
    pick = choose(score, n_terms, np.ones(L, bool), len(g.points), sp, noise(g, g.aggregate), beyond, length,
                  holdout, 0 if holdout is None else int(held.sum()), term_ceiling(probes))
    pick = np.where(present.any(axis=1), pick, -1)
    chosen = np.where(pick >= 0, ids[np.arange(K), np.maximum(pick, 0)], -1)
    coefs, mets = many.rescore(chosen)
    used = np.unique(chosen[chosen >= 0])  # the chosen candidates, each once
    best = np.where(chosen >= 0, np.searchsorted(used, chosen), -1)
    return _models(g, [many.structures[i].terms for i in used], best, coefs, mets, ctx, many.failed)


def _models(g: Group, terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray,
            mets: dict[str, np.ndarray], ctx: dict[str, Any], failed: dict[int, str]) -> list:
    """``(input index, Model or None, summary row)`` of every kernel of ``g``: candidate ``best[j]`` (of
    ``terms``) with coefficients ``coefs[j]`` and metrics ``mets``; -1: the note of ``failed``, else that
    no candidate could be fitted."""
    m = len(g.points)
    texts = formulas(terms, best, coefs)
    out = []
    for j, (i, name) in enumerate(zip(g.index, g.names)):
        if best[j] < 0:
            out.append((int(i), None, summary_row(name, None, m, failed.get(j, "no candidate could be fitted"))))
            continue
        model = _model(terms[best[j]], coefs[j], {k: float(v[j]) for k, v in mets.items()}, ctx)
        out.append((int(i), model, summary_row(name, model, m, text=texts[j])))
    return out


def _bands(done: list, g: Group, ds: data_mod.Dataset, sp: SearchSpace) -> None:
    """Give every fitted kernel model of ``done`` its band (:func:`automodel.model.calibration.kernel_intervals`,
    all kernels of the group at once)."""
    from automodel.model.calibration import kernel_intervals

    fitted = [(i, model) for i, model, _ in done if model is not None]
    if not fitted:
        return
    column = {int(i): j for j, i in enumerate(g.index)}
    targets = g.values[:, [column[i] for i, _ in fitted]]
    for (_, model), interval in zip(fitted, kernel_intervals([m.core for _, m in fitted], ds, sp.fit, targets)):
        model.interval = interval
