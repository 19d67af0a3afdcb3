"""FiM-Cal template: calculation time from a Markov chain fed by regressed hardware counters.

Source: Bhimani et al. 2019, ``seeds/fim-bhimani-2019.txt``, section 2: the Markov model
(eqs. 1-10, in :mod:`automodel.templates._fim_markov`), the regression that extrapolates ``U``,
``TC`` and ``SC`` to new application parameters (eq. 11) and the calibration of the sensitivity
constant alpha (eq. 12, Algorithm 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np
import pandas as pd

from automodel.data.cells import finite_number, floats, shown
from automodel.errors import DataError, ModelFileError
from automodel.templates._fim_markov import chain_time, check_stages, first_step_time
from automodel.templates.base import ColumnTemplate, MissingColumn, check_option, json_float, positive, read_float, whole

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["TEMPLATE", "FimCalModel", "FimCalTemplate", "fit_regression", "calibrate_alpha"]

COUNTERS: tuple[str, ...] = ("U", "TC", "SC", "F")
_NOT_PARAMETERS = frozenset({"time", "p", "cpu", "bw", *COUNTERS})
#: most steps of Algorithm 1's walk (10^7 take about 13 s; 10^12 asked for ran for days)
MAX_STEPS = 100_000_000
METHODS: tuple[str, ...] = ("first_step", "chain")


def fit_regression(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Eq. 11: ordinary least squares ``y = beta_0 + beta_1 x_1 + ... + beta_k x_k``.

    Parameters
    ----------
    x : numpy.ndarray
        Shape ``(n_points, k)`` application parameters.
    y : numpy.ndarray
        Shape ``(n_points,)`` or ``(n_points, n_targets)`` counters (``U``, ``TC``, ``SC``).

    Returns
    -------
    numpy.ndarray
        Coefficients, shape ``(k + 1,)`` or ``(k + 1, n_targets)``, intercept first.

    Examples
    --------
    >>> fit_regression(np.array([[1.0], [2.0], [3.0]]), np.array([3.0, 5.0, 7.0])).round(9)
    array([1., 2.])
    """
    design = np.column_stack([np.ones(len(x)), x])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        raise DataError(
            f"FiM-Cal: eq. 11 needs at least {design.shape[1]} configurations with independent "
            f"application parameters, got rank {np.linalg.matrix_rank(design)}"
        )
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return coef


def _check_calibration(epsilon: Any, tau: Any, max_steps: Any) -> None:
    """A one-line OptionError unless the step ``epsilon`` and threshold ``tau`` are > 0 and ``max_steps`` >= 1."""
    for name, value in (("epsilon", epsilon), ("tau", tau)):
        check_option(positive(value), "fim_cal", name, "a number > 0", value)
    check_option(whole(max_steps, 1, MAX_STEPS), "fim_cal", "max_steps", f"a whole number from 1 to {MAX_STEPS:,}",
                 max_steps)


def calibrate_alpha(time_of_alpha: Callable[[np.ndarray], np.ndarray], actual: np.ndarray,
                    epsilon: float = 1e-5, tau: float = 0.01, max_steps: int = 1_000_000,
                    relative: bool = False, chunk: int = 4096) -> tuple[float, float, int]:
    """Algorithm 1 of the seed (sec. 2.2.2): walk alpha in steps of ``epsilon`` until RMS < tau.

    The walk starts at ``alpha = 1`` (the regression of eq. 11 unchanged; the paper's ``alpha = 0``
    would give zero counters, and the released ``tp.m`` starts at 1). Its direction is decided once,
    from the mean error at the start (lines 6-8): up when the actual times exceed the predictions.
    Rows whose predictions are invalid (``NaN``, the "bad values" of lines 3 and 16-17) are left
    out of the RMS. Candidate steps are evaluated ``chunk`` at a time in one vectorised call.
    Where the paper would loop for ever (RMS never below ``tau``), the walk stops at the RMS
    minimum along its direction, or after ``max_steps``.

    Parameters
    ----------
    time_of_alpha : callable
        Maps alphas of shape ``(K,)`` to predicted times of shape ``(K, n_points)``.
    actual : numpy.ndarray
        Measured times, shape ``(n_points,)``.
    epsilon, tau : float
        Step and RMS threshold (the paper's examples: 1e-5 and 0.01).
    max_steps : int
        Upper bound on the number of steps.
    relative : bool
        Use the RMS of relative errors instead of the paper's absolute RMS.

    Returns
    -------
    (alpha, rms, steps) : tuple
    """
    _check_calibration(epsilon, tau, max_steps)
    actual = np.asarray(actual, dtype=float)

    def rms(alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pred = np.atleast_2d(time_of_alpha(alphas))
        err = actual[None, :] - pred
        if relative:
            err = err / actual[None, :]
        ok = np.isfinite(err)
        count = ok.sum(axis=1)
        sq = np.where(ok, err, 0.0) ** 2
        value = np.sqrt(sq.sum(axis=1) / np.maximum(count, 1))
        mean_err = np.where(ok, err, 0.0).sum(axis=1) / np.maximum(count, 1)
        return np.where(count > 0, value, np.inf), mean_err

    start_rms, start_mean = rms(np.array([1.0]))
    if start_rms[0] < tau:
        return 1.0, float(start_rms[0]), 0
    direction = 1.0 if start_mean[0] > 0 else -1.0
    best = (1.0, float(start_rms[0]), 0)
    done = 0
    while done < max_steps:
        steps = np.arange(done + 1, min(done + chunk, max_steps) + 1)
        alphas = 1.0 + direction * epsilon * steps
        keep = alphas > 0
        if not np.any(keep):
            break
        steps, alphas = steps[keep], alphas[keep]
        values, _ = rms(alphas)
        below = np.flatnonzero(values < tau)
        if below.size:
            k = below[0]
            return float(alphas[k]), float(values[k]), int(steps[k])
        k = int(np.argmin(values))
        if values[k] < best[1]:
            best = (float(alphas[k]), float(values[k]), int(steps[k]))
        if k < len(values) - 1 or not np.all(keep):  # passed the minimum, or alpha hit 0
            break
        done = int(steps[-1])
    return best


def _parameter_matrix(frame: pd.DataFrame, parameters: Sequence[str]) -> np.ndarray:
    """The application parameters as a float matrix, with a one-line error naming a bad column."""
    columns = []
    for name in parameters:
        if name not in frame.columns:
            raise MissingColumn(f"FiM-Cal: column '{name}' (an application parameter of eq. 11) is missing", name)
        values = floats(frame[name])
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise DataError(f"FiM-Cal: row {int(bad[0])}, column '{name}': expected a finite number")
        columns.append(values)
    return np.column_stack(columns) if columns else np.empty((len(frame), 0))


def _process_counts(frame: pd.DataFrame) -> np.ndarray:
    """Column ``p`` as positive integers (``t`` of eqs. 6-8), or ones when the column is absent."""
    if "p" not in frame.columns:
        return np.ones(len(frame))
    t = floats(frame["p"])
    bad = np.flatnonzero(~(np.isfinite(t) & (t >= 1) & (t == np.round(t))))
    if bad.size:
        raise DataError(f"FiM-Cal: row {int(bad[0])}, column 'p': expected a positive integer process count")
    return t


@dataclass(frozen=True)
class FimCalModel:
    """A fitted FiM-Cal model: counters from eq. 12, time from eqs. 9-10.

    Attributes
    ----------
    parameters : tuple of str
        Application-parameter columns (``x`` of eq. 11), in coefficient order.
    beta_tc, beta_u, beta_sc : tuple of float
        Eq. 11 coefficients, intercept first (``beta_u``/``beta_sc`` are empty for ``first_step``).
    alpha : float
        Sensitivity constant of eq. 12 (Algorithm 1).
    clock : float
        ``F`` in cycles per time unit of the ``time`` column (median of the training ``F``).
    method : str
        ``"first_step"`` (authors' code, ``T = 1/(F(1 - (1 - 1/TC)^t))``) or ``"chain"``.
    stages : int
        Number of synchronised stages ``n`` for ``"chain"``.
    uses_p : bool
        Whether ``t`` comes from column ``p`` (else ``t = 1``).
    """

    parameters: tuple[str, ...]
    beta_tc: tuple[float, ...]
    alpha: float
    clock: float
    method: str = "first_step"
    stages: int = 1
    uses_p: bool = True
    beta_u: tuple[float, ...] = ()
    beta_sc: tuple[float, ...] = ()
    rms_: float = field(default=float("nan"), compare=False)
    name: str = "fim_cal"

    @property
    def n_coefficients(self) -> int:
        """Fitted numbers used by :meth:`predict`: the eq. 11 coefficients in use plus alpha."""
        return len(self.beta_tc) + len(self.beta_u) + len(self.beta_sc) + 1

    def counters(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Eq. 12 extrapolation of ``(U, TC, SC)``, clipped into the domain of eqs. 1-5.

        Like the released ``tp.m`` (which replaces bad values), out-of-domain extrapolations are
        clipped: ``TC >= 1``, ``0 <= SC <= TC``, ``0 <= U <= 1 - 1/TC``.
        """
        design = np.column_stack([np.ones(len(frame)), _parameter_matrix(frame, self.parameters)])
        tc = np.maximum(self.alpha * design @ np.asarray(self.beta_tc), 1.0)
        if self.method == "first_step":
            return np.full(len(frame), np.nan), tc, np.full(len(frame), np.nan)
        sc = np.clip(self.alpha * design @ np.asarray(self.beta_sc), 0.0, tc)
        u = np.clip(self.alpha * design @ np.asarray(self.beta_u), 0.0, 1.0 - 1.0 / tc)
        return u, tc, sc

    def predict_parts(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """The whole prediction is the computation: FiM-Cal models the calculation
        (fim-bhimani-2019.txt, sec. 2)."""
        return {"computation": self.predict(frame)}

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Predicted calculation time per row (same unit as the training ``time``)."""
        t = _process_counts(frame) if self.uses_p else np.ones(len(frame))
        u, tc, sc = self.counters(frame)
        if self.method == "first_step":
            return first_step_time(tc, self.clock, t)
        return chain_time(u, tc, sc, self.clock, t, stages=self.stages)

    @property
    def expr(self) -> sympy.Expr:
        """``1/(F (1 - (1 - 1/TC)^p))`` with ``TC = alpha (beta_0 + sum beta_k x_k)`` (eqs. 10, 12).

        The full chain has no closed sympy form, so for ``method="chain"`` this is still the
        first-step closed form (a lower bound of the chain's time); ``predict`` is exact.
        """
        import sympy
        from automodel.space.symbols import symbol
        tc = sympy.Float(self.alpha * self.beta_tc[0])
        for name, b in zip(self.parameters, self.beta_tc[1:]):
            tc = tc + sympy.Float(self.alpha * b) * symbol(name)
        if not self.uses_p:
            return tc / sympy.Float(self.clock)
        return 1 / (sympy.Float(self.clock) * (1 - (1 - 1 / tc) ** symbol("p")))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (numbers and names only)."""
        return {
            "kind": "template", "template": "fim_cal", "version": 1,
            "method": self.method, "stages": self.stages, "uses_p": self.uses_p,
            "parameters": list(self.parameters), "alpha": self.alpha, "clock": self.clock,
            "beta_tc": list(self.beta_tc), "beta_u": list(self.beta_u), "beta_sc": list(self.beta_sc),
            "rms": json_float(self.rms_),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FimCalModel":
        """Rebuild from :meth:`to_dict` output, validating every field (nothing is executed)."""
        if not isinstance(d, dict) or d.get("kind") != "template" or d.get("template") != "fim_cal":
            raise ModelFileError("FiM-Cal model file: expected kind 'template' and template 'fim_cal'")
        if d.get("version") != 1:
            raise ModelFileError(f"FiM-Cal model file: unknown version {d.get('version')!r}, expected 1")
        method = d.get("method")
        if method not in METHODS:
            raise ModelFileError(f"FiM-Cal model file: 'method' must be one of {METHODS}, got {method!r}")
        params = d.get("parameters")
        if not isinstance(params, list) or not all(isinstance(x, str) and x.isidentifier() for x in params):
            raise ModelFileError("FiM-Cal model file: 'parameters' must be a list of identifier strings")

        def number(key: str, positive: bool = False) -> float:
            v = d.get(key)
            if not finite_number(v):
                raise ModelFileError(f"FiM-Cal model file: '{key}' must be a finite number, got {shown(v)}")
            if positive and v <= 0:
                raise ModelFileError(f"FiM-Cal model file: '{key}' must be > 0, got {shown(v)}")
            return float(v)

        def numbers(key: str, length: int) -> tuple[float, ...]:
            v = d.get(key)
            ok = isinstance(v, list) and len(v) == length and all(
                finite_number(x) for x in v)
            if not ok:
                raise ModelFileError(f"FiM-Cal model file: '{key}' must be a list of {length} finite numbers")
            return tuple(float(x) for x in v)

        width = len(params) + 1
        extra = width if method == "chain" else 0
        stages = d.get("stages")
        if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
            raise ModelFileError(f"FiM-Cal model file: 'stages' must be a positive integer, got {stages!r}")
        uses_p = d.get("uses_p")
        if not isinstance(uses_p, bool):
            raise ModelFileError("FiM-Cal model file: 'uses_p' must be true or false")
        rms = read_float(d, "rms", allow_none=True)  # null or absent: the calibration's error is not known
        return cls(parameters=tuple(params), beta_tc=numbers("beta_tc", width),
                   alpha=number("alpha", positive=True), clock=number("clock", positive=True),
                   method=method, stages=stages, uses_p=uses_p, beta_u=numbers("beta_u", extra),
                   beta_sc=numbers("beta_sc", extra),
                   rms_=float("nan") if rms is None else rms)


def _counter_column(frame: pd.DataFrame, name: str) -> np.ndarray:
    values = floats(frame[name])
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise DataError(f"FiM-Cal: row {int(bad[0])}, column '{name}': expected a finite number")
    return values


@dataclass(frozen=True)
class FimCalTemplate(ColumnTemplate):
    """FiM-Cal as a seeded template (``TEMPLATE`` below); ``fit`` returns a :class:`FimCalModel`.

    Fast: the first-step calibration of alpha scans 4096 steps per numpy pass (``method="chain"``
    is slower, and only runs when asked for)."""

    model_class: ClassVar[type] = FimCalModel

    name: str = "fim_cal"
    title: str = "FiM-Cal: Markov chain of active/passive processes with regressed counters"
    source: str = "fim-bhimani-2019.txt, sec. 2.1-2.2, eqs. 1-12, Algorithm 1"
    requires: tuple[str, ...] = ("time", "U", "TC", "SC", "F")

    def applicable(self, frame: pd.DataFrame) -> str | None:
        """None when the hardware counters are present, otherwise the reason."""
        if not all(c in frame.columns for c in COUNTERS):
            return "not applicable: needs columns U, TC, SC, F (hardware counters)"
        if "time" not in frame.columns:
            return "not applicable: no column time"
        return None

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The checks of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        method = options["method"]
        check_option(method in METHODS, "fim_cal", "method", " or ".join(map(repr, METHODS)), method)
        check_stages(options["stages"])
        _check_calibration(options["epsilon"], options["tau"], options["max_steps"])
        parameters = options.get("parameters")  # eq. 11 regressing TC on TC (or the time) fits exactly
        check_option(parameters is None or not any(q in _NOT_PARAMETERS for q in parameters), "fim_cal",
                     "parameters", "none or columns other than time, p, cpu, bw and the counters", parameters)

    def fit(self, frame: pd.DataFrame, *, parameters: Sequence[str] | None = None,
            method: str = "first_step", stages: int = 1, epsilon: float = 1e-5, tau: float = 0.01,
            max_steps: int = 1_000_000, relative: bool = True) -> FimCalModel:
        """Fit eq. 11 to the counters and calibrate alpha (Algorithm 1) on the measured times.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``time``, ``U``, ``TC``, ``SC``, ``F``, optionally ``p`` and parameter columns.
        parameters : sequence of str, optional
            Application-parameter columns; default every numeric column that is not ``time``,
            ``p``, ``cpu``, ``bw`` or a counter.
        method : {"first_step", "chain"}
            Time from the first step out of the all-active state (default; the authors' code) or
            from the expected absorption time of the full chain.
        relative : bool
            Calibrate alpha on the RMS of relative errors (default), so that the paper's threshold
            ``tau = 0.01`` means 1 % whatever the unit of time; ``false`` is the paper's absolute RMS
            (seconds), which leaves alpha at 1 when the times are milliseconds.
        stages, epsilon, tau, max_steps
            See :func:`automodel.templates._fim_markov.chain_time` and :func:`calibrate_alpha`.
        """
        self.check_options({"method": method, "stages": stages, "epsilon": epsilon, "tau": tau,
                            "max_steps": max_steps, "parameters": parameters})
        reason = self.applicable(frame)
        if reason is not None:
            raise DataError(f"FiM-Cal: {reason}")
        if parameters is None:
            parameters = [c for c in frame.columns if c not in _NOT_PARAMETERS
                          and pd.api.types.is_numeric_dtype(frame[c])]
        parameters = tuple(parameters)
        x = _parameter_matrix(frame, parameters)
        u, tc, sc, f = (_counter_column(frame, c) for c in COUNTERS)
        time = _counter_column(frame, "time")
        if np.any(time <= 0):
            raise DataError(f"FiM-Cal: row {int(np.flatnonzero(time <= 0)[0])}, column 'time': expected > 0")
        if np.any(f <= 0):
            raise DataError(f"FiM-Cal: row {int(np.flatnonzero(f <= 0)[0])}, column 'F': expected > 0")
        uses_p = "p" in frame.columns
        t = _process_counts(frame)
        clock = float(np.median(f))
        design = np.column_stack([np.ones(len(frame)), x])
        if method == "first_step":
            beta = fit_regression(x, tc)
            betas: dict[str, tuple[float, ...]] = {"beta_tc": tuple(map(float, beta))}
            tc_hat = design @ beta

            def time_of_alpha(alphas: np.ndarray) -> np.ndarray:
                scaled = alphas[:, None] * tc_hat[None, :]
                with np.errstate(invalid="ignore", divide="ignore"):
                    out = first_step_time(np.where(scaled > 1.0, scaled, np.nan), clock, t[None, :])
                return out
        else:
            beta = fit_regression(x, np.column_stack([tc, u, sc]))
            betas = {k: tuple(map(float, beta[:, i])) for i, k in enumerate(("beta_tc", "beta_u", "beta_sc"))}
            hats = design @ beta

            def time_of_alpha(alphas: np.ndarray) -> np.ndarray:
                tc_a = alphas[:, None] * hats[None, :, 0]
                u_a = alphas[:, None] * hats[None, :, 1]
                sc_a = alphas[:, None] * hats[None, :, 2]
                good = (tc_a > stages) & (sc_a > 0) & (sc_a < tc_a) & (u_a >= 0) & (u_a <= 1 - stages / tc_a)
                out = np.full(tc_a.shape, np.nan)
                if np.any(good):
                    rows = np.broadcast_to(t[None, :], tc_a.shape)[good]
                    out[good] = chain_time(u_a[good], tc_a[good], sc_a[good], clock, rows, stages=stages)
                return out

        chunk = 4096 if method == "first_step" else 64
        alpha, rms, _ = calibrate_alpha(time_of_alpha, time, epsilon=epsilon, tau=tau,
                                        max_steps=max_steps, relative=relative, chunk=chunk)
        return FimCalModel(parameters=parameters, alpha=alpha, clock=clock, method=method,
                           stages=int(stages), uses_p=uses_p, rms_=rms, **betas)


TEMPLATE = FimCalTemplate()
