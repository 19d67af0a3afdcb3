"""FiM-Com template: communication time of a collective from a calibrated queueing simulation.

Source: Bhimani et al. 2019, ``seeds/fim-bhimani-2019.txt``, section 3 (Fig. 4, eqs. 13-16); the
simulation itself is :mod:`automodel.templates._fim_queue`. The service-process parameters are
calibrated against measured times (``time`` vs ``n`` and ``p``) with ``scipy.optimize``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from automodel.data.cells import finite_number, floats, shown
from automodel.errors import DataError, ModelFileError
from automodel.templates import _fim_queue
from automodel.templates._fim_queue import (PATTERNS, QueueParams, batches, config_rng, draw, run, stack, variates,
                                            zeta_ratio_ok)
from automodel.templates.base import ColumnTemplate, MissingColumn, check_option, json_float, positive, read_float, whole

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

__all__ = ["TEMPLATE", "FimComModel", "FimComTemplate", "calibrate", "simulate_frame"]

_PARAM_NAMES: tuple[str, ...] = ("zeta_max", "meta_mean", "meta_log", "init_mean", "recv_mean")

# cost model of :meth:`FimComTemplate.seconds`, measured on one core: simulations of the training set
# in a default calibration (least_squares with a finite-difference Jacobian), seconds per variate
# drawn, per sender job simulated, per vectorised pass
_EVALUATIONS = 400
#: relative tolerances of the calibration's least squares (cost, step and gradient): the simulated means
#: it fits carry a Monte Carlo error of order ``1/sqrt(fit_reps)`` (8 replications: several per cent) of
#: the model's own, so finer than 1e-4 buys digits the model does not have (scipy's default 1e-8 took
#: twice the simulations; benchmarks/RESULTS.md)
TOLERANCE = 1e-4
#: most simulated repetitions a model file may ask for
MAX_REPS = 4096
#: the largest seed (a model file's, and the option's)
MAX_SEED = 2 ** 63 - 1
_SECONDS_PER_VARIATE = 1.5e-8
_SECONDS_PER_JOB = 2e-8
_SECONDS_PER_PASS = 2e-5


def _configs(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``n`` and ``p`` as floats and integers, with a one-line error on bad values."""
    for name in ("n", "p"):
        if name not in frame.columns:
            raise MissingColumn(f"FiM-Com: column '{name}' is missing", name)
    n = floats(frame["n"])
    p = floats(frame["p"])
    bad = np.flatnonzero(~(np.isfinite(n) & (n > 0)))
    if bad.size:
        raise DataError(f"FiM-Com: row {int(bad[0])}, column 'n': expected a data size > 0")
    bad = np.flatnonzero(~(np.isfinite(p) & (p >= 1) & (p <= 2 ** 53) & (p == np.round(p))))
    if bad.size:
        raise DataError(f"FiM-Com: row {int(bad[0])}, column 'p': expected a whole number from 1 to 2^53")
    return n, p.astype(np.int64)


def _unique_configs(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(n, p)`` of ``frame`` and, per row, the index of its configuration."""
    n, p = _configs(frame)
    unique, inverse = np.unique(np.column_stack([n, p.astype(float)]), axis=0, return_inverse=True)
    return unique[:, 0], unique[:, 1].astype(np.int64), np.ravel(inverse)


def _batches(n: np.ndarray, p: np.ndarray, job_size: float, reps: int) -> tuple[list[np.ndarray], int]:
    """The configurations in batches of at most ``MAX_VARIATES`` variates of a kind
    (:func:`~automodel.templates._fim_queue.batches`) and the variates of a kind of all; every
    configuration is checked (:func:`~automodel.templates._fim_queue.variates`) before any is drawn."""
    counts = [variates(float(nk), int(pk), job_size, reps) for nk, pk in zip(n, p)]
    return batches(counts), sum(counts)


class _Simulator:
    """The draws of distinct configurations (one batch of :func:`_batches`), drawn once and stacked by
    shape; ``runs`` simulates them all for given parameters (common random numbers: a deterministic
    function)."""

    def __init__(self, pattern: str, n: np.ndarray, p: np.ndarray, job_size: float, reps: int, seed: int) -> None:
        draws = [draw(pattern, float(nk), int(pk), job_size, reps, config_rng(seed, pattern, float(nk), int(pk)))
                 for nk, pk in zip(n, p)]
        groups: dict[tuple, list[int]] = {}
        for i, d in enumerate(draws):
            groups.setdefault(d.shape_key, []).append(i)
        self.reps = reps
        self.groups = [(np.array(idx), stack([draws[i] for i in idx])) for idx in groups.values()]
        self.n_configs = len(draws)

    def runs(self, params: QueueParams) -> np.ndarray:
        """Completion times, shape ``(configurations, reps)``."""
        out = np.empty((self.n_configs, self.reps))
        for idx, stacked in self.groups:
            out[idx] = run(stacked, params).reshape(idx.size, self.reps)
        return out


def simulate_frame(frame: pd.DataFrame, pattern: str, params: QueueParams, job_size: float,
                   reps: int, seed: int = 0) -> np.ndarray:
    """Simulated completion times, shape ``(len(frame), reps)``; one seeded run per distinct (n, p).

    Each configuration's draws depend only on the seed and the configuration
    (:func:`~automodel.templates._fim_queue.config_rng`); configurations of the same shape are
    simulated in one vectorised pass. They are drawn, simulated and dropped in batches (:func:`_batches`),
    so the memory is bounded however many rows ``frame`` has.
    """
    n, p, inverse = _unique_configs(frame)
    out = np.empty((n.size, reps))
    for idx in _batches(n, p, job_size, reps)[0]:
        out[idx] = _Simulator(pattern, n[idx], p[idx], job_size, reps, seed).runs(params)
    return out[inverse]


def _initial_guess(pattern: str, n: np.ndarray, p: np.ndarray, time: np.ndarray, ratio: float) -> np.ndarray:
    """Starting values from the data: small-message time split over C, R, M; rate from the largest."""
    small = float(np.min(time))
    volume = n * (np.maximum(p - 1, 1) if pattern == "scatter" else 1.0)
    k = int(np.argmax(volume / time))
    zeta = 2.0 * volume[k] / time[k] / (1.0 + ratio)
    return np.log([zeta, 0.2 * small, 0.05 * small, 0.4 * small, 0.2 * small])


def calibrate(frame: pd.DataFrame, pattern: str, job_size: float, reps: int = 8, seed: int = 0,
              zeta_ratio: float = 0.9, max_nfev: int = 200, progress: bool = False) -> tuple[QueueParams, float]:
    """Fit the service parameters of eqs. 13-16 to measured times (least squares on log ratios).

    The residual is ``log(simulated mean / measured)``: a relative error that treats over- and
    under-prediction alike across the orders of magnitude that message sizes span.

    Common random numbers: the standard variates of every training configuration are drawn once and
    kept (at most ``MAX_HELD`` of a kind), so the simulated mean is a deterministic, piecewise-smooth
    function of the parameters, which ``scipy.optimize.least_squares`` minimises over their logarithms.
    ``progress`` shows a bar of the simulations of the training set once they have run for a second.

    Returns
    -------
    (params, rms) : tuple
        The calibrated :class:`QueueParams` and the RMS of the training log ratios.
    """
    n_all, p_all = _configs(frame)
    time = floats(frame["time"])
    bad = np.flatnonzero(~(np.isfinite(time) & (time > 0)))
    if bad.size:
        raise DataError(f"FiM-Com: row {int(bad[0])}, column 'time': expected a time > 0")
    n, p, inverse = _unique_configs(frame)
    plan, held = _batches(n, p, job_size, reps)
    if held > _fim_queue.MAX_HELD:
        raise DataError(f"FiM-Com: calibrating on {n.size} configurations holds {held:.3g} random variates of "
                        f"each kind, more than the {_fim_queue.MAX_HELD} it keeps ({reps} repetitions x peers x "
                        "jobs); calibrate on fewer or smaller configurations, or fewer repetitions")
    simulators = [(idx, _Simulator(pattern, n[idx], p[idx], job_size, reps, seed)) for idx in plan]
    bar = tqdm(desc=f"FiM-Com {pattern}", unit="simulation", delay=1.0, disable=not progress, leave=False)

    def params_of(x: np.ndarray) -> QueueParams:
        return QueueParams(*np.exp(x), zeta_ratio=zeta_ratio)

    def residuals(x: np.ndarray) -> np.ndarray:
        bar.update()
        means = np.empty(n.size)
        for idx, simulator in simulators:
            means[idx] = simulator.runs(params_of(x)).mean(axis=1)
        return np.log(means[inverse] / time)

    x0 = _initial_guess(pattern, n_all, p_all, time, zeta_ratio)
    lower, upper = x0 - 25.0, x0 + 25.0
    from scipy.optimize import least_squares  # here: 0.6 s of CPU to import, for this slow template alone

    with bar:
        fit = least_squares(residuals, x0, bounds=(lower, upper), diff_step=1e-3, x_scale=1.0,
                            max_nfev=max_nfev, ftol=TOLERANCE, xtol=TOLERANCE, gtol=TOLERANCE)
    return params_of(fit.x), float(np.sqrt(np.mean(fit.fun**2)))


@dataclass(frozen=True)
class FimComModel:
    """A calibrated FiM-Com queueing model; ``predict`` is the seeded simulated mean.

    Attributes
    ----------
    pattern : str
        ``"scatter"``, ``"broadcast"`` or ``"gather"`` (Fig. 4 a-c).
    params : QueueParams
        Calibrated service parameters of eqs. 13-16.
    job_size : float
        Units of ``n`` per job (packet).
    reps : int
        Replications per configuration at prediction time.
    seed : int
        Base seed; predictions are deterministic.
    """

    pattern: str
    params: QueueParams
    job_size: float
    reps: int = 64
    seed: int = 0
    rms_: float = field(default=float("nan"), compare=False)
    name: str = "fim_com"
    n_coefficients: int = 5

    def simulate(self, frame: pd.DataFrame) -> np.ndarray:
        """Simulated completion times per row, shape ``(len(frame), reps)``."""
        return simulate_frame(frame, self.pattern, self.params, self.job_size, self.reps, self.seed)

    def predict_parts(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """The whole prediction is the communication: FiM-Com models the collective communication
        (fim-bhimani-2019.txt, sec. 3)."""
        return {"communication": self.predict(frame)}

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Mean simulated communication time per row (same unit as the training ``time``)."""
        return self.simulate(frame).mean(axis=1)

    def predict_interval(self, frame: pd.DataFrame, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Central ``level`` quantile band of the simulated times (same draws as :meth:`predict`)."""
        if not 0 < level < 1:
            raise DataError(f"FiM-Com: level must be in (0, 1), got {shown(level)}")
        sims = self.simulate(frame)
        return np.quantile(sims, (1 - level) / 2, axis=1), np.quantile(sims, (1 + level) / 2, axis=1)

    @cached_property  # built once: the leaderboard, the notes and the exports each ask for it
    def expr(self) -> sympy.Expr:
        """A fluid (bottleneck) approximation of the simulated mean, for printing only.

        ``eta + max(D, M, R)`` with the stage totals ``D = volume * E[1/mu_1]`` (eq. 13),
        ``M = sender jobs * meta_mean`` (eq. 14 without the log-queue term) and
        ``R = jobs per receiver * psi`` (eq. 16), plus ``psi * ln(p - 1)`` for the slowest of the
        ``p - 1`` receivers (about the mean maximum of exponentials). The simulation has no closed form; ``predict``
        is the simulation, not this expression.
        """
        import sympy
        from automodel.space.symbols import symbol
        q = self.params
        n, p = symbol("n"), symbol("p")
        peers = sympy.Max(p - 1, 1)
        jobs = sympy.Max(sympy.ceiling(n / sympy.Float(self.job_size)), 1)
        if q.zeta_ratio < 1:
            inv_rate = math.log(1 / q.zeta_ratio) / (q.zeta_max * (1 - q.zeta_ratio))
        else:
            inv_rate = 1 / q.zeta_max
        volume = n * peers if self.pattern == "scatter" else n
        sender_jobs = jobs * peers if self.pattern == "scatter" else jobs
        receiver_jobs = jobs * peers if self.pattern == "gather" else jobs
        slowest = 0 if self.pattern == "gather" else sympy.Float(q.recv_mean) * sympy.log(peers)
        return sympy.Float(q.init_mean) + slowest + sympy.Max(sympy.Float(inv_rate) * volume,
                                                              sympy.Float(q.meta_mean) * sender_jobs,
                                                              sympy.Float(q.recv_mean) * receiver_jobs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (numbers and names only)."""
        q = self.params
        return {"kind": "template", "template": "fim_com", "version": 1, "pattern": self.pattern,
                **{k: float(getattr(q, k)) for k in _PARAM_NAMES}, "zeta_ratio": float(q.zeta_ratio),
                "job_size": float(self.job_size), "reps": self.reps, "seed": self.seed,
                "rms": json_float(self.rms_)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FimComModel":
        """Rebuild from :meth:`to_dict` output, validating every field (nothing is executed)."""
        if not isinstance(d, dict) or d.get("kind") != "template" or d.get("template") != "fim_com":
            raise ModelFileError("FiM-Com model file: expected kind 'template' and template 'fim_com'")
        if d.get("version") != 1:
            raise ModelFileError(f"FiM-Com model file: unknown version {shown(d.get('version'))}, expected 1")
        if d.get("pattern") not in PATTERNS:
            raise ModelFileError(f"FiM-Com model file: 'pattern' must be one of {PATTERNS}")

        def number(key: str) -> float:
            v = d.get(key)
            if not finite_number(v) or v < 0:
                raise ModelFileError(f"FiM-Com model file: '{key}' must be a finite number >= 0, got {shown(v)}")
            return float(v)

        def integer(key: str, low: int, high: int) -> int:
            v = d.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise ModelFileError(f"FiM-Com model file: '{key}' must be an integer from {low} to {high}, "
                                     f"got {shown(v)}")
            return v

        try:
            params = QueueParams(*(number(k) for k in _PARAM_NAMES), zeta_ratio=number("zeta_ratio"))
        except DataError as exc:
            raise ModelFileError(f"FiM-Com model file: {exc}") from None
        job_size = number("job_size")
        if job_size <= 0:
            raise ModelFileError("FiM-Com model file: 'job_size' must be > 0")
        rms = read_float(d, "rms", allow_none=True)  # null or absent: the calibration's error is not known
        return cls(pattern=d["pattern"], params=params, job_size=job_size, reps=integer("reps", 1, MAX_REPS),
                   seed=integer("seed", 0, MAX_SEED), rms_=float("nan") if rms is None else rms)


@dataclass(frozen=True)
class FimComTemplate(ColumnTemplate):
    """FiM-Com as a seeded template (``TEMPLATE`` below); ``fit`` returns a :class:`FimComModel`.

    Slow: calibration simulates the training set a few hundred times, and drawing the receivers
    costs ``reps x (p - 1) x jobs`` variates per configuration (:meth:`seconds`), so it runs only
    when named (``automodel fit --templates fim_com``).
    """

    model_class: ClassVar[type] = FimComModel
    cost: ClassVar[str] = "slow"

    name: str = "fim_com"
    title: str = "FiM-Com: queueing simulation of scatter, broadcast and gather"
    source: str = "fim-bhimani-2019.txt, sec. 3.2-3.3, Fig. 4, eqs. 13-16"
    requires: tuple[str, ...] = ("time", "n", "p")

    def seconds(self, frame: pd.DataFrame, max_jobs: int = 32, reps: int = 64, fit_reps: int = 8) -> float:
        """Estimated CPU seconds of ``fit(frame)`` with the default pattern (broadcast) and budget.

        Counts the variates drawn (fit and prediction) and the jobs simulated per evaluation over
        the distinct ``(n, p)``, at rates measured on one core (``benchmarks/speed.py``).
        """
        try:
            n, p, _ = _unique_configs(frame)
        except DataError:
            return 0.0
        jobs = np.maximum(np.ceil(n / (float(np.max(n)) / max_jobs) - 1e-9), 1)
        drawn = float(np.sum(jobs * np.maximum(p - 1, 1))) * (reps + fit_reps)
        simulated = float(np.sum(jobs)) * fit_reps * _EVALUATIONS
        shapes = np.unique(jobs).size * _EVALUATIONS
        return _SECONDS_PER_VARIATE * drawn + _SECONDS_PER_JOB * simulated + _SECONDS_PER_PASS * shapes

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The checks of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        pattern, job_size, seed, zeta_ratio = (options[k] for k in ("pattern", "job_size", "seed", "zeta_ratio"))
        check_option(pattern in (*PATTERNS, "auto"), self.name, "pattern", ", ".join(map(repr, (*PATTERNS, "auto"))),
                     pattern)
        check_option(positive(job_size, allow_none=True), self.name, "job_size", "none or a number > 0", job_size)
        for name, high in (("max_jobs", math.inf), ("reps", MAX_REPS), ("fit_reps", MAX_REPS), ("max_nfev", math.inf)):
            check_option(whole(options[name], 1, high), self.name, name, "a whole number >= 1" if high == math.inf
                         else f"a whole number from 1 to {high}", options[name])
        check_option(whole(seed, 0, MAX_SEED), self.name, "seed", f"a whole number from 0 to {MAX_SEED}", seed)
        check_option(zeta_ratio_ok(zeta_ratio), self.name, "zeta_ratio", "a number in (0, 1]", zeta_ratio)

    def fit(self, frame: pd.DataFrame, *, pattern: str = "broadcast", job_size: float | None = None,
            max_jobs: int = 32, reps: int = 64, fit_reps: int = 8, seed: int = 0,
            zeta_ratio: float = 0.9, max_nfev: int = 200, progress: bool = False) -> FimComModel:
        """Calibrate the queueing model of ``pattern`` to the measured times.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``time``, ``n`` (data size per receiver, or per sender for gather) and ``p``.
        pattern : {"scatter", "broadcast", "gather", "auto"}
            Fig. 4's model; ``"auto"`` calibrates all three and keeps the lowest training error.
            A linear broadcast (the root sends a copy to each receiver) is ``"scatter"``.
        job_size : float, optional
            Units of ``n`` per job; default ``max(n) / max_jobs`` over the training rows.
        reps, fit_reps : int
            Replications per configuration for prediction and for calibration.
        seed : int
            Base seed (results are reproducible).
        zeta_ratio : float
            ``zeta_min / zeta_max`` of eq. 13 (0.9 in the paper).
        max_nfev : int
            Budget of simulations of the training set for ``least_squares``.
        progress : bool
            Show a progress bar of the simulations once calibration has run for a second.
        """
        self.check_options({"pattern": pattern, "job_size": job_size, "max_jobs": max_jobs, "reps": reps,
                            "fit_reps": fit_reps, "seed": seed, "zeta_ratio": zeta_ratio, "max_nfev": max_nfev})
        reason = self.applicable(frame)
        if reason is not None:
            raise DataError(f"FiM-Com: {reason}")
        n, _ = _configs(frame)
        if job_size is None:
            job_size = float(np.max(n)) / max_jobs
        patterns = PATTERNS if pattern == "auto" else (pattern,)
        best: FimComModel | None = None
        for name in patterns:
            params, rms = calibrate(frame, name, job_size, reps=fit_reps, seed=seed,
                                    zeta_ratio=zeta_ratio, max_nfev=max_nfev, progress=progress)
            model = FimComModel(name, params, float(job_size), reps=reps, seed=seed, rms_=rms)
            if best is None or rms < best.rms_:
                best = model
        assert best is not None
        return best


TEMPLATE = FimComTemplate()
