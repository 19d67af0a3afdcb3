"""Kohashi et al.'s T(p) models (3 to 6 terms, c_i >= 0, relative-error cost) and their Bayesian posterior.

Source: bayesian-kohashi-2022.txt. Terms (sec. 2.1, eqs. 1-6): ``c1/p``, ``c2``, ``c3 log p``,
``c4 log p / sqrt p``, ``c5 / p^2``, ``c6 p / (1 + exp(-(p - pc)))`` with ``pc = M / n_core``.
Cost (eq. 7): ``F = sum_j ((T(p_j) - T_j) / T_j)^2``. Posterior (sec. 2.2-2.3): uniform priors on
``[0, c_max]``, likelihood ``exp(-F / tau)``, sampled by replica-exchange Monte Carlo
(:mod:`automodel.templates.remc`). Extension (sec. 3.3): ``c_i(M) = c_i3 M^3 + c_i2 M^2 + c_i1 M + c_i0``
with the problem size ``M`` in column ``n``. Logarithms are base 2 (the base is absorbed by c3, c4).
"""

from __future__ import annotations

import time as clock
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from automodel.errors import DataError, ModelFileError
from automodel.space.terms import logistic
from automodel.templates.base import (MODEL_VERSION, ColumnTemplate, check_option, column, positive, read_float,
                                           read_floats, read_header, read_notes, solve_weighted, times, whole)
from automodel.templates.remc import DEFAULT_TEMPERATURES, hdi, ladder, replica_exchange

if TYPE_CHECKING:  # sympy (0.3 s) is imported by the expressions only: fitting and predicting need none of it
    import sympy

#: a posterior whose adjacent temperatures swap less often than this did not mix
MIN_EXCHANGE = 0.05
#: ... nor one with fewer effective samples of a coefficient than this
MIN_ESS = 100

__all__ = ["KOHASHI", "TEMPLATE", "KohashiModel", "term_basis", "features", "fit_pc", "pc_study"]

TERM_NAMES = ("1/p", "1", "log2 p", "log2 p / sqrt p", "1/p^2", "p sigmoid(p - pc)")
#: the numbers of terms a model has (2 is Amdahl's law), and the degrees of c_i(n) (sec. 3.3: cubic)
N_TERMS = (2, 6)
DEGREES = (0, 3)
#: how ``pc`` of the 6-term model is fitted (:func:`fit_pc`)
PC_SEARCHES = ("bounded", "optuna")
#: most REMC steps a posterior may take (the sampler keeps every step after burn-in: 10^9 steps asked for
#: 45 GiB; 10^6 take about half a minute), and most trials of an optuna search of ``pc``
MAX_STEPS = 1_000_000
MAX_TRIALS = 10_000


def term_basis(p: np.ndarray, n_terms: int, pc: np.ndarray | float | None = None) -> np.ndarray:
    """The first ``n_terms`` Kohashi terms at ``p`` as columns (eqs. 1-6 without coefficients).

    Examples
    --------
    >>> term_basis(np.array([4.0]), 5).round(4).tolist()
    [[0.25, 1.0, 2.0, 1.0, 0.0625]]
    """
    p = np.asarray(p, dtype=float)
    lp = np.log2(p)
    cols = [1.0 / p, np.ones_like(p), lp, lp / np.sqrt(p), p**-2.0]
    if n_terms == 6:
        if pc is None:
            raise DataError("kohashi: the 6-term model needs pc (given, from n / cores_per_node, or fitted)")
        cols.append(p * logistic(p - np.asarray(pc, dtype=float)))
    return np.column_stack(cols[:n_terms])


def features(p: np.ndarray, n: np.ndarray | None, n_terms: int, degree: int,
             pc: np.ndarray | float | None) -> np.ndarray:
    """Columns ``term_i(p) * n^j`` (i-major, j = 0..degree) of the sec. 3.3 extension; ``degree 0``: terms."""
    basis = term_basis(p, n_terms, pc)
    if degree == 0:
        return basis
    powers = np.vander(np.asarray(n, dtype=float), degree + 1, increasing=True)
    return (basis[:, :, None] * powers[:, None, :]).reshape(basis.shape[0], -1)


def fit_pc(p: np.ndarray, t: np.ndarray, n: np.ndarray | None = None, degree: int = 0, n_grid: int = 64, *,
           search: str = "bounded", n_trials: int = 64, timeout: float | None = None, storage: str | None = None,
           study_name: str | None = None, seed: int | None = 0) -> float:
    """``pc`` of the 6-term model minimising eq. 7 (NNLS for the c_i at each pc) over ``[min p, max p]``.

    The centre stays within the measured p: "the six-term model is meaningful only when the data case
    at P = 4096 and/or P = 10000 are included in the teacher data" (bayesian-kohashi-2022.txt, sec. 3.1,
    on eq. 6), as T_6 vanishes for P << P_c. A centre beyond the data is fitted to the vanishing tail of
    the sigmoid, its coefficient to the noise: with ``[min p, 2 max p]`` the SMPI sweeps (train p <= 16)
    took centres near 32 and the six-term model was off by 10^5 % on average beyond the data (mean of
    group means, python -m benchmarks.workloads); with ``[min p, max p]`` 18 %, its best p within a
    factor 2 in 15 of 16 sweeps (13 before), the canonical tasks within 1 point either way.

    Parameters
    ----------
    search : "bounded" or "optuna"
        ``"bounded"``: a log grid of ``n_grid`` points, refined by a bounded 1-D search between the best
        grid point's neighbours. ``"optuna"``: an optuna study (TPE sampler seeded by ``seed``, ``pc`` on
        a log scale) of ``n_trials`` trials or ``timeout`` seconds, whichever ends first; the best pc of
        the whole study is returned.
    storage : str, optional
        Where the optuna study is kept, so that several workers or machines extend one study and a later
        call resumes it (``load_if_exists``): a database URL (``sqlite:///studies.db``, the store's
        database, ``postgresql://...``) or the path of a journal file. None: in memory.
    study_name : str, optional
        The study's name in ``storage`` (None: a new name, a new study).

    Examples
    --------
    >>> p = np.arange(1.0, 33.0)
    >>> t = term_basis(p, 6, pc=12.0) @ np.array([8.0, 1.0, 0.5, 0.2, 1.0, 0.05])
    >>> round(fit_pc(p, t), 2)
    12.0
    """
    lo, hi = float(np.min(p)), float(np.max(p))

    def cost(pc: float) -> float:
        _, res = solve_weighted(features(p, n, 6, degree, pc), t, relative=True, nonnegative=True)
        return float(res @ res)

    if search == "optuna":
        study = pc_study(storage, study_name, seed)
        study.optimize(lambda trial: cost(trial.suggest_float("pc", lo, hi, log=True)), n_trials=n_trials,
                       timeout=timeout)
        return float(study.best_params["pc"])
    _check_pc_search(search)
    grid = np.geomspace(lo, hi, n_grid)
    values = np.array([cost(g) for g in grid])
    i = int(np.argmin(values))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, n_grid - 1)]
    from scipy.optimize import minimize_scalar  # here: scipy.optimize costs 0.6 s of CPU to import

    refined = minimize_scalar(cost, bounds=(a, b), method="bounded", options={"xatol": 1e-3 * a})
    return float(refined.x) if refined.fun <= values[i] else float(grid[i])


def pc_study(storage: str | None, study_name: str | None, seed: int | None) -> Any:
    """The optuna study of :func:`fit_pc` (created, or loaded when ``storage`` has it), quiet but for
    warnings; a storage that cannot be opened is a one-line DataError."""
    import optuna
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        where = storage if storage is None or "://" in storage else JournalStorage(JournalFileBackend(storage))
        return optuna.create_study(storage=where, study_name=study_name, load_if_exists=True,
                                   sampler=optuna.samplers.TPESampler(seed=seed), direction="minimize")
    except Exception as exc:  # noqa: BLE001  (SQLAlchemy, OS and optuna errors share no base but Exception)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"kohashi: optuna storage {storage!r} cannot be opened: {reason}") from None


@dataclass
class KohashiModel:
    """A fitted Kohashi model: point coefficients (minimum of eq. 7, the posterior mode) and,
    when Bayesian, thinned posterior samples of the same coefficients.

    ``coefficients`` are ordered term-major: ``c_{i,j}`` multiplies ``term_i(p) * n^j``.
    """

    #: ``predict`` evaluates ``expr`` itself: the fit does not recheck it (tests/test_templates_options.py does)
    closed_form: ClassVar[bool] = True

    n_terms: int
    degree: int
    coefficients: np.ndarray
    pc: float | None = None
    cores_per_node: float | None = None
    samples: np.ndarray | None = None
    p_max: float = 1.0
    n_ref: float | None = None
    notes: tuple[str, ...] = ()
    diagnostics: dict = field(default_factory=dict)
    name: str = "kohashi"

    @property
    def n_coefficients(self) -> int:
        """The coefficients the fit left nonzero (as for the searched candidates' NNLS fits), and a fitted pc.

        Counting all ``n_terms * (degree + 1)`` left the six-term model in ``n`` (24 coefficients and pc)
        no degree of freedom on the SMPI sweeps' 20 runs, where NNLS keeps 5 to 11.
        """
        return int(np.count_nonzero(self.coefficients)) + (1 if self.n_terms == 6 and self.cores_per_node is None else 0)

    def _pc(self, n: np.ndarray | None) -> np.ndarray | float | None:
        if self.n_terms < 6:
            return None
        if self.cores_per_node is not None:
            return np.asarray(n) / self.cores_per_node
        return self.pc

    def _features(self, frame: pd.DataFrame) -> np.ndarray:
        p = column(frame, "p")
        needs_n = self.degree > 0 or (self.n_terms == 6 and self.cores_per_node is not None)
        n = column(frame, "n") if needs_n else None
        return features(p, n, self.n_terms, self.degree, self._pc(n))

    @property
    def expr(self) -> sympy.Expr:
        """``sum_i c_i(n) term_i(p)`` with the point coefficients."""
        import sympy
        from automodel.space.symbols import log2, symbol
        p, n = symbol("p"), symbol("n")
        pc = n / sympy.Float(self.cores_per_node) if self.cores_per_node is not None else sympy.Float(self.pc or 0)
        terms = [1 / p, sympy.Integer(1), log2(p), log2(p) / sympy.sqrt(p), p**-2, p / (1 + sympy.exp(pc - p))]
        c = self.coefficients.reshape(self.n_terms, self.degree + 1)
        return sympy.Add(*[sympy.Float(float(c[i, j])) * n**j * terms[i]
                           for i in range(self.n_terms) for j in range(self.degree + 1)])

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Point prediction (minimum of eq. 7) at the rows of ``frame``."""
        return self._features(frame) @ self.coefficients

    def _sample_predictions(self, frame: pd.DataFrame) -> np.ndarray:
        if self.samples is None:
            raise DataError("kohashi: this model was fitted without bayesian=True; no posterior samples")
        return self.samples @ self._features(frame).T

    def coefficient_spread(self, frame: pd.DataFrame) -> np.ndarray | None:
        """Log-space standard deviation of the prediction over the posterior samples at each row of
        ``frame`` (the coefficient part of the model's band, :class:`automodel.model.interval.Interval`);
        None without samples. Samples that predict no positive time are left out."""
        if self.samples is None:
            return None
        with np.errstate(all="ignore"):
            logs = np.log(self._sample_predictions(frame))
        logs = np.where(np.isfinite(logs), logs, np.nan)
        with np.errstate(all="ignore"):
            return np.nan_to_num(np.nanstd(logs, axis=0, ddof=1), nan=0.0)

    def predict_median(self, frame: pd.DataFrame) -> np.ndarray:
        """Posterior median of each prediction (bayesian-kohashi sec. 3.1, the solid lines of Figs. 1-2)."""
        return np.median(self._sample_predictions(frame), axis=0)

    def predict_interval(self, frame: pd.DataFrame, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Highest-density interval of each prediction (the 95 % HDR of sec. 3.1)."""
        return hdi(self._sample_predictions(frame), level)

    def _grid_frame(self, p_grid: Sequence[float] | None, n: float | None) -> pd.DataFrame:
        grid = (np.unique(np.round(np.geomspace(1, 4 * self.p_max, 400))) if p_grid is None
                else np.asarray(p_grid, dtype=float))
        frame = pd.DataFrame({"p": grid})
        if self.degree > 0 or (self.n_terms == 6 and self.cores_per_node is not None):
            frame["n"] = float(n if n is not None else (self.n_ref or 1.0))
        return frame

    def best_p(self, p_grid: Sequence[float] | None = None, n: float | None = None) -> float:
        """``argmin_p T(p)`` of the point model over ``p_grid`` (default: 1 .. 4 x largest trained p)."""
        frame = self._grid_frame(p_grid, n)
        return float(frame["p"].iloc[int(np.argmin(self.predict(frame)))])

    def best_p_interval(self, p_grid: Sequence[float] | None = None, level: float = 0.95,
                        n: float | None = None) -> tuple[float, float, float]:
        """Posterior of ``P* = argmin_p T(p)`` (sec. 3.3): ``(median, HDI lower, HDI upper)``."""
        frame = self._grid_frame(p_grid, n)
        best = frame["p"].to_numpy()[np.argmin(self._sample_predictions(frame), axis=1)]
        lo, hi = hdi(best[:, None], level)
        return float(np.median(best)), float(lo[0]), float(hi[0])

    def to_dict(self) -> dict:
        return {"kind": "template", "template": "kohashi", "version": MODEL_VERSION, "n_terms": self.n_terms,
                "degree": self.degree, "coefficients": self.coefficients.tolist(), "pc": self.pc,
                "cores_per_node": self.cores_per_node, "p_max": self.p_max, "n_ref": self.n_ref,
                "samples": None if self.samples is None else self.samples.tolist(), "notes": list(self.notes),
                "diagnostics": {k: v for k, v in self.diagnostics.items() if isinstance(v, (int, float, str))}}

    @classmethod
    def from_dict(cls, d: dict) -> "KohashiModel":
        read_header(d, "kohashi")
        n_terms, degree = d.get("n_terms"), d.get("degree")
        if type(n_terms) is not int or not whole(n_terms, *N_TERMS) or type(degree) is not int or not whole(
                degree, *DEGREES):
            raise ModelFileError(f"model fields 'n_terms' ({N_TERMS[0]}-{N_TERMS[1]}) and 'degree' "
                                 f"({DEGREES[0]}-{DEGREES[1]}): expected small integers")
        k = n_terms * (degree + 1)
        coef = np.array(read_floats(d, "coefficients", length=k))
        samples = d.get("samples")
        if samples is not None:
            if not isinstance(samples, list) or not samples:
                raise ModelFileError("model field 'samples': expected a non-empty list of lists")
            samples = np.array([read_floats({"s": row}, "s", length=k) for row in samples])
        model = cls(n_terms=n_terms, degree=degree, coefficients=coef, pc=read_float(d, "pc", allow_none=True),
                    cores_per_node=read_float(d, "cores_per_node", allow_none=True), samples=samples,
                    p_max=read_float(d, "p_max"), n_ref=read_float(d, "n_ref", allow_none=True),
                    notes=read_notes(d))
        if n_terms == 6 and model.pc is None and model.cores_per_node is None:
            raise ModelFileError("6-term kohashi model needs 'pc' or 'cores_per_node'")
        return model


@dataclass(frozen=True)
class KohashiTemplate(ColumnTemplate):
    """Kohashi's 3- to 6-term T(p) models with NNLS on relative errors and REMC posterior."""

    model_class: ClassVar[type] = KohashiModel

    name: str = "kohashi"
    title: str = "Kohashi T(p) models (c_i >= 0, relative error) with Bayesian REMC"
    source: str = ("bayesian-kohashi-2022.txt, sec. 2.1 eqs. 1-6 (terms), eq. 7 (cost), sec. 2.2-2.3 (REMC), "
                   "sec. 3.3 (c_i(M) cubic in M)")
    requires: tuple[str, ...] = ("p",)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The checks of :meth:`fit` on its option values alone (:meth:`Template.check_options`)."""
        _check_options(**options)

    def fit(self, frame: pd.DataFrame, n_terms: int = 3, pc: float | None = None,
            cores_per_node: float | None = None, degree: int | None = None, bayesian: bool = False,
            n_steps: int = 20_000, temperatures: Sequence[float] | None = None,
            c_max: Sequence[float] | None = None, max_samples: int = 1000, seed: int | None = 0,
            pc_search: str = "bounded", pc_trials: int = 64, pc_timeout: float | None = None,
            pc_storage: str | None = None, pc_study: str | None = None, **options: Any) -> KohashiModel:
        """Fit ``T(p)`` (or ``T(p, n)``) with ``c >= 0`` minimising eq. 7; optionally sample the posterior.

        Parameters
        ----------
        n_terms : 3, 4, 5 or 6 (2 gives Amdahl's law).
        pc, cores_per_node : for the 6-term model, ``pc`` directly, or ``pc = n / cores_per_node``
            (needs column ``n``); with neither, ``pc`` is fitted (:func:`fit_pc`).
        pc_search, pc_trials, pc_timeout, pc_storage, pc_study : how ``pc`` is fitted: :func:`fit_pc`'s
            ``search``, ``n_trials``, ``timeout``, ``storage`` and ``study_name`` (``"optuna"``: a study
            seeded by ``seed``, shared by every fit given the same storage and study name).
        degree : degree of ``c_i(n)`` (sec. 3.3; default: 0 without a varying ``n`` column, else
            ``min(3, distinct n - 1)``).
        bayesian : run replica-exchange MC (``n_steps`` per temperature, first half burn-in). A chain
            that did not mix (adjacent temperatures swapping less than :data:`MIN_EXCHANGE` of the
            time, or fewer than :data:`MIN_ESS` effective samples of a coefficient) is a DataError;
            the diagnostics (acceptances, effective sample sizes) are in ``model.diagnostics``.
        temperatures : default :func:`~automodel.templates.remc.ladder` from the paper's coldest
            (0.1) to its hottest (10) temperature, as many as the coefficients need for swaps (the
            paper's four, :data:`~automodel.templates.remc.DEFAULT_TEMPERATURES`, never swapped with
            six coefficients).
        c_max : upper prior bounds of the coefficients (default: 10x the largest ``T_j / term(p_j)``).
        max_samples : posterior samples kept in the model (evenly thinned).
        """
        _check_options(n_terms, pc, cores_per_node, degree, n_steps, temperatures, c_max, max_samples, seed,
                       pc_search, pc_trials, pc_timeout)
        t = times(frame)
        p = column(frame, "p")
        notes: list[str] = []
        has_n = "n" in frame.columns
        n = column(frame, "n") if has_n else None
        if degree is None:
            degree = min(3, int(np.unique(n).size) - 1) if has_n else 0
        if degree > 0 and not has_n:
            raise DataError(f"{frame.attrs.get('source', 'data')}: degree {degree} in n needs column 'n'")
        if cores_per_node is not None and not has_n:
            raise DataError(f"{frame.attrs.get('source', 'data')}: pc = n / cores_per_node needs column 'n'")
        if n_terms == 6 and pc is None and cores_per_node is None:
            pc = fit_pc(p, t, n, degree, search=pc_search, n_trials=pc_trials, timeout=pc_timeout,
                        storage=pc_storage, study_name=pc_study, seed=seed)
            how = "an optuna study" if pc_search == "optuna" else "bounded 1-D search"
            notes.append(f"pc fitted by {how}: {pc:.4g}")
        model = KohashiModel(n_terms=int(n_terms), degree=int(degree), coefficients=np.zeros(0), pc=pc,
                             cores_per_node=cores_per_node, p_max=float(np.max(p)),
                             n_ref=float(np.max(n)) if has_n else None)
        x = model._features(frame)
        if x.shape[0] < x.shape[1]:
            notes.append(f"{x.shape[0]} rows for {x.shape[1]} coefficients: NNLS picks one minimiser")
        coef, _ = solve_weighted(x, t, relative=True, nonnegative=True)
        model.coefficients = coef
        if bayesian:
            if temperatures is None:
                temperatures = ladder(min(DEFAULT_TEMPERATURES), max(DEFAULT_TEMPERATURES), x.shape[1])
            model.samples, model.diagnostics = _posterior(x, t, coef, n_steps, temperatures, c_max, max_samples,
                                                          seed)
            notes.append(f"posterior from {n_steps} REMC steps at {len(temperatures)} temperatures "
                         f"{min(temperatures):.3g} to {max(temperatures):.3g}; exchange acceptance >= "
                         f"{model.diagnostics['exchange_acceptance_min']:.2f}, effective samples >= "
                         f"{model.diagnostics['ess_min']:.0f}")
        model.notes = tuple(notes)
        return model


def _check_options(n_terms: Any, pc: Any, cores_per_node: Any, degree: Any, n_steps: Any, temperatures: Any,
                   c_max: Any, max_samples: Any, seed: Any, pc_search: Any, pc_trials: Any, pc_timeout: Any,
                   **unchecked: Any) -> None:
    """A one-line :class:`~automodel.errors.OptionError` for an option of :meth:`KohashiTemplate.fit`
    whose value the template does not take (whatever the data); ``unchecked``: its options that take any
    value (:meth:`KohashiTemplate.check_options` passes them all)."""
    check_option(whole(n_terms, *N_TERMS), "kohashi", "n_terms", f"a whole number from {N_TERMS[0]} to "
                 f"{N_TERMS[1]}", n_terms)
    check_option(degree is None or whole(degree, *DEGREES), "kohashi", "degree",
                 f"none or a whole number from {DEGREES[0]} to {DEGREES[1]}", degree)
    for name, value in (("pc", pc), ("cores_per_node", cores_per_node), ("pc_timeout", pc_timeout)):
        check_option(positive(value, allow_none=True), "kohashi", name, "none or a number > 0", value)
    check_option(whole(n_steps, 2, MAX_STEPS), "kohashi", "n_steps", f"a whole number from 2 to {MAX_STEPS:,}", n_steps)
    check_option(whole(max_samples, 1), "kohashi", "max_samples", "a whole number >= 1", max_samples)
    check_option(whole(pc_trials, 1, MAX_TRIALS), "kohashi", "pc_trials", f"a whole number from 1 to {MAX_TRIALS:,}",
                 pc_trials)
    for name, values in (("temperatures", temperatures), ("c_max", c_max)):
        check_option(values is None or (len(values) > 0 and all(positive(v) for v in values)), "kohashi", name,
                     "none or numbers > 0", values)
    check_option(seed is None or whole(seed, 0), "kohashi", "seed", "none or a whole number >= 0", seed)
    _check_pc_search(pc_search)


def _check_pc_search(search: Any) -> None:
    check_option(search in PC_SEARCHES, "kohashi", "pc_search", " or ".join(map(repr, PC_SEARCHES)), search)


def _posterior(x: np.ndarray, t: np.ndarray, coef: np.ndarray, n_steps: int, temperatures: Sequence[float],
               c_max: Sequence[float] | None, max_samples: int, seed: int | None) -> tuple[np.ndarray, dict]:
    """REMC samples of the coefficients under eq. 7 (sampling in column-normalised coordinates)."""
    wx = x / t[:, None]                                  # rows of eq. 7: (T(p_j) - T_j) / T_j = wx @ c - 1
    norms = np.linalg.norm(wx, axis=0)
    norms[norms == 0] = 1.0
    a = wx / norms                                       # u = c * norms
    if c_max is None:
        ratio = np.where(x > 1e-12 * np.max(x, axis=0), t[:, None] / np.where(x > 0, x, 1.0), 0.0)
        c_max = 10.0 * np.max(ratio, axis=0)
    upper = np.asarray(c_max, dtype=float) * norms
    k = a.shape[1]
    q = a.T @ a
    cov = np.linalg.inv(q + 1e-6 * np.trace(q) / k * np.eye(k)) / 2.0
    proposal = np.linalg.cholesky(cov) * 2.38 / np.sqrt(k)
    ones = np.ones(a.shape[0])

    def cost(u: np.ndarray) -> np.ndarray:
        r = u @ a.T - ones
        return np.einsum("ij,ij->i", r, r)

    start = clock.perf_counter()
    result = replica_exchange(cost, np.zeros(k), upper, np.minimum(coef * norms, upper), n_steps=n_steps,
                              temperatures=temperatures, proposal=proposal, seed=seed)
    took = clock.perf_counter() - start
    keep = np.linspace(0, result.samples.shape[0] - 1, min(max_samples, result.samples.shape[0])).astype(int)
    ess = result.ess
    exchange = float(np.min(result.exchange_acceptance, initial=1.0))
    diagnostics = {"remc_seconds": took, "acceptance_coldest": float(result.acceptance[0]),
                   "exchange_acceptance_min": exchange, "ess_min": float(np.min(ess)),
                   "n_temperatures": len(result.temperatures)}
    problems = []
    if exchange < MIN_EXCHANGE:
        worst = int(np.argmin(result.exchange_acceptance))
        tau = result.temperatures
        problems.append(f"swaps between temperatures {tau[worst]:.3g} and {tau[worst + 1]:.3g} accepted "
                        f"{exchange:.1%} (at least {MIN_EXCHANGE:.0%} needed)")
    if np.min(ess) < MIN_ESS:
        problems.append(f"coefficient {int(np.argmin(ess)) + 1} has {np.min(ess):.0f} effective samples of "
                        f"{result.samples.shape[0]} (at least {MIN_ESS} needed)")
    if problems:
        raise DataError(f"kohashi: the replica exchange did not mix: {'; '.join(problems)}; give more n_steps"
                        f"{' or closer temperatures' if exchange < MIN_EXCHANGE else ''}")
    return result.samples[keep] / norms, diagnostics


KOHASHI = KohashiTemplate()
TEMPLATE = KOHASHI
