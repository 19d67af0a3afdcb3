"""What to run next: the configurations that narrow the prediction band at a target most per core-hour.

The band of a fitted model at a target configuration ``t`` (:class:`~automodel.model.interval.Interval`,
:mod:`automodel.solve.band`) is the sum in quadrature of parts. One more run at a configuration ``x``
shrinks three of them; the run noise and the misfit stay:

growth
    ``g_q d_q(t)``, ``d_q`` the doublings by which ``t`` lies beyond the measured range of ``q``: a run
    at ``x`` extends the range to ``x_q`` (:func:`automodel.solve.band.doublings_beyond` with the range
    each candidate would leave).
choice
    the disagreement at ``t`` of the candidates the data cannot tell apart (``Interval.alternatives``).
    A run at ``x`` whose noise is ``sigma_x`` (one run and the misfit in quadrature, at least
    :data:`MIN_NOISE`) weighs alternative ``a`` by ``exp(-D_a(x)^2 / (2 sigma_x^2))``,
    ``D_a(x) = log(a(x) / yhat(x))``: the expected likelihood ratio of ``a`` against the chosen model
    after that run. Where the tied candidates agree (inside the data) a run tells them nothing; where
    they part ways (between the data and the target) it tells them apart. The part at ``t`` is the
    weighted root mean square of the alternatives' log ratios there.
coefficients
    ``sqrt(a_t' C a_t) / yhat(t)`` for a term model: one more row ``a_x`` in the least squares gives
    ``C' = C - C a_x a_x' C / (v_x + a_x' C a_x)`` (Sherman-Morrison), ``v_x = (sigma_x yhat(x))^2``.

A run costs ``reps * p * yhat(x)`` core-seconds (``p = 1`` for a model without ``p``). The batch is
chosen greedily (:func:`plan_runs`): the candidate with the largest narrowing of the band per core-hour
is taken, the parts are updated as if it had been measured, and the next is chosen given it, so a
batch does not buy the same information twice. The degrees of freedom of the parts stay those of the
fit (a new run adds one to the misfit's; not counted).

The adaptive-model seed automates the training experiments of each stage (adaptive-model-sanjay-
slides.txt, slides 18-22: single-processor runs, then 2, 4 and 8 processes); FiM calibrates from a
few measured configurations (fim-bhimani-2019.txt, sec. 2.4, Algorithm 1). Here the experiments are
chosen by what they are expected to teach the model about the target.

The package, one job a module: :mod:`~automodel.suggestion.results` (the plan and its suggestions),
:mod:`~automodel.suggestion.candidates` (the configurations that may be run),
:mod:`~automodel.suggestion.alternatives` (what a run could tell the tied candidates apart by),
:mod:`~automodel.suggestion.greedy` (the batch) and :mod:`~automodel.suggestion.facade`
(:func:`suggest`, the entry point).
"""

from __future__ import annotations

from automodel.suggestion.candidates import LOAD_ROLES, candidate_grid, check_target
from automodel.suggestion.facade import suggest
from automodel.suggestion.greedy import MIN_NOISE, plan_runs
from automodel.suggestion.results import NothingToRun, NoTimeAtTarget, Plan, Suggestion

__all__ = ["Suggestion", "Plan", "NothingToRun", "NoTimeAtTarget", "suggest", "plan_runs", "candidate_grid", "check_target", "MIN_NOISE",
           "LOAD_ROLES"]
