"""Seeded templates on the data of a fit: which run, their leaderboard rows, their refits and notes.

:func:`automodel.fit` runs the templates of the space (or the named ones) beside the search; each gets
one leaderboard row, scored by the same metrics (:mod:`automodel.solve.metrics`) as the searched
candidates, with leave-one-out and hold-out refits of the template itself (:func:`refit_errors`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from automodel.data import Dataset
from automodel.data.splits import holdout_rows
from automodel.errors import OptionError
from automodel.model.core import Model
from automodel.options import ROLE_NAMES, weights
from automodel.solve import metrics as metrics_mod
from automodel.solve.metrics import METRICS
from automodel.space.config import SearchSpace

__all__ = ["template_columns", "template_names", "template_rows", "template_note", "formula_gap", "refit_errors",
           "NOT_RUN", "TEMPLATE_BUDGET_SECONDS", "LOO_REFITS", "FORMULA_TOLERANCE"]

#: the note of a slow template that was not named
NOT_RUN = "not run by default"
#: a slow template whose estimated time on the data is at most this runs by default too
TEMPLATE_BUDGET_SECONDS = 1.0
#: templates are scored by leave-one-out refits up to this many configurations, by this many folds above
LOO_REFITS = 100


def template_columns() -> tuple[str, ...]:
    """The columns some template needs that are not parameter roles (FiM-Cal's counters): carried along
    by :func:`fit` when the data have them, and seen only by the templates that need them."""
    from automodel.templates import TEMPLATES  # every template module: on first use

    return tuple(dict.fromkeys(c for t in TEMPLATES.values() for c in t.requires
                               if c not in (*ROLE_NAMES, "time")))


def template_names(spec: str | Iterable[str] | None, space_templates: Iterable[str] = ()
                   ) -> tuple[tuple[str, ...], bool]:
    """The templates a fit considers, and whether they were named (so the slow ones run too).

    ``spec`` is ``None`` (the space's templates; a slow one runs only within the time budget), ``"none"``,
    ``"all"`` (every registered template), a comma-separated string or a list of names.

    Examples
    --------
    >>> template_names("hockney,kohashi")
    (('hockney', 'kohashi'), True)
    >>> template_names(None, ("amdahl",))
    (('amdahl',), False)
    """
    if spec is None:
        return tuple(space_templates), False
    if isinstance(spec, str):
        if spec.strip() in ("none", ""):
            return (), True
        if spec.strip() == "all":
            from automodel.templates import TEMPLATES

            return tuple(TEMPLATES), True
        spec = [name.strip() for name in spec.split(",") if name.strip()]
    return tuple(spec), True


def template_note(fitted: Any, ds: Dataset, predicted: np.ndarray | None = None) -> str:
    """A fitted template's own notes, the parameters of the data its formula does not use, and how far
    its formula is from its predictions when that is more than :data:`FORMULA_TOLERANCE` (not measured
    for a model whose ``closed_form`` says that its predictions are its formula); ``predicted``: its
    predictions at the rows of ``ds.frame`` when they are at hand."""
    notes = list(getattr(fitted, "notes", ()) or ())
    used = {str(symbol) for symbol in fitted.expr.free_symbols}
    ignored = [ds.roles.get(q, q) for q in ds.params if q not in used]
    if ignored:
        notes.append(f"ignores {', '.join(ignored)}")
    gap = 0.0 if getattr(fitted, "closed_form", False) else formula_gap(fitted, ds.frame, predicted)
    if gap > FORMULA_TOLERANCE:
        notes.append(f"its formula (the exports) differs from its predictions by up to {gap:.0%} on the runs")
    return "; ".join(notes)


#: a template whose formula and predictions differ by more than this on the runs says so
FORMULA_TOLERANCE = 0.01


def formula_gap(core: Any, frame: pd.DataFrame, predicted: np.ndarray | None = None) -> float:
    """The largest relative difference between ``core.expr`` evaluated at the rows of ``frame`` and
    ``core.predict`` there (``predicted``, when given: a simulation need not run twice; a simulated or
    posterior prediction against its closed form); 0 when they agree, inf when the formula cannot be
    evaluated."""
    import sympy

    symbols = sorted(core.expr.free_symbols, key=str)
    try:
        evaluate = sympy.lambdify(symbols, core.expr, modules="numpy")
        with np.errstate(all="ignore"):
            formula = np.broadcast_to(np.asarray(evaluate(*[frame[str(s)].to_numpy(float) for s in symbols]),
                                                 float), (len(frame),))
            pred = np.asarray(core.predict(frame) if predicted is None else predicted, float)
            gap = np.abs(formula - pred) / np.abs(pred)
    except (KeyError, TypeError, ValueError, NameError):
        return float("inf")
    return float(np.nanmax(gap)) if np.isfinite(gap).any() else float("inf")


def refit_errors(template: Any, options: Mapping[str, Any], frame: pd.DataFrame, hold: np.ndarray | None,
                 n_coefficients: int, loo: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Relative errors of ``template`` refitted without rows, for its ``loo`` and ``holdout`` scores.

    With ``loo``: leave-one-out refits up to :data:`LOO_REFITS` configurations, else :data:`LOO_REFITS`
    folds of a fixed random partition (each row predicted by a refit without its fold); ``automodel.fit``
    asks for them when its ranking metric uses ``loo`` (``loo``, ``forward``): they cost one fit per
    configuration. Always one refit without the ``hold`` rows (the largest configurations, as the
    searched candidates'). A refit that fails leaves ``inf`` (the template cannot be judged without
    those rows). Returns ``(m, 1)`` (or None) and ``(h, 1)`` (or None when nothing is held out).
    """
    y = frame["time"].to_numpy(float)
    m = len(y)
    folds = np.arange(m) if m <= LOO_REFITS else np.random.default_rng(0).permutation(m) % LOO_REFITS

    def refit_predict(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        try:
            with np.errstate(all="ignore"):
                got = np.asarray(template.fit(frame[train].reset_index(drop=True), **options).predict(
                    frame[test].reset_index(drop=True)), float)
        except OptionError:
            raise
        except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError):
            return np.full(int(test.sum()), np.inf)
        return np.where(np.isfinite(got), got, np.inf)

    errors = None
    if loo:
        errors = np.full(m, np.inf)
        for fold in np.unique(folds):
            out = folds == fold
            errors[out] = refit_predict(~out, out) / y[out] - 1.0
    held = None
    if hold is not None:
        held = metrics_mod.holdout_errors(refit_predict(~hold, hold), y[hold], m - int(hold.sum()), n_coefficients)
    return None if errors is None else errors[:, None], None if held is None else held[:, None]


def template_rows(ds: Dataset, sp: SearchSpace, ctx: Mapping[str, Any], named: bool = False, progress: bool = False
                  ) -> tuple[list[dict], list[Model | None]]:
    """One leaderboard row per template of the space's fit options (and its model, None when none);
    ``ctx``: what every model of the fit records besides its formula (keyword arguments of Model).

    A template of cost ``"slow"`` (:data:`automodel.templates.base.COSTS`) runs when ``named`` or when its
    estimated time on these data is within :data:`TEMPLATE_BUDGET_SECONDS`; otherwise its row says so,
    with the estimate. Slow templates show their own progress bar.
    """
    if not sp.fit.templates:
        return [], []
    from automodel.templates import TEMPLATES
    from automodel.templates.options import check_names, check_options

    check_names(sp.fit.templates, "templates" if named else sp.source)
    options = check_options(TEMPLATES, sp.fit.template_options, "template options")
    y = ds.frame["time"].to_numpy(float)
    w = weights(y, sp.fit.weighting)
    rows: list[dict] = []
    models: list[Model | None] = []
    blank = {m: np.nan for m in metrics_mod.METRICS}
    hold = holdout_rows(ds)
    for name in sp.fit.templates:
        template = TEMPLATES[name]
        own = [c for c in template.requires if c in ds.covariates]  # its columns that are not parameters
        frame = ds.frame[[*ds.params, *own, "time"]]  # a template sees the parameters, its own columns, time
        reason = template.applicable(frame)
        if reason is None and template.cost == "slow" and not named:
            seconds = template.seconds(frame)
            if seconds > TEMPLATE_BUDGET_SECONDS:
                reason = f"{NOT_RUN}: ~{seconds:.2g} s; --templates {name} runs it"
        if reason is None:
            try:
                given = options.get(name, {})
                fitted = (template.fit(frame, progress=progress, **given) if template.cost == "slow"
                          else template.fit(frame, **given))
                pred = np.asarray(fitted.predict(frame), float)
            except OptionError:
                raise  # the user's option, not these data: an error of the command, not a note of its row
            except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
                reason = f"fit failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        if reason is not None:
            rows.append({"formula": "", "n_terms": 0, **blank, "kind": f"template:{name}", "note": reason})
            models.append(None)
            continue
        k = fitted.n_coefficients
        e = (y - pred) * np.sqrt(w)
        loo_rel, hold_rel = (None, None) if template.cost == "slow" else refit_errors(
            template, given, frame, hold, k, loo=METRICS[sp.fit.metric].leverages)
        mets = {m: float(v[0]) for m, v in metrics_mod.compute(
            y, pred[:, None], k, np.array([e @ e]), holdout_rel=hold_rel, loo_rel=loo_rel).items()}
        models.append(Model(fitted, metrics=mets, **ctx))  # a template predicts from the parameters alone
        rows.append({"formula": models[-1].formula, "n_terms": k, **mets, "kind": f"template:{name}",
                     "note": template_note(fitted, ds, pred)})
    return rows, models
