"""FiM-Cal's stochastic Markov model of active/passive processes (pure, vectorised mathematics).

Everything here follows Bhimani et al. 2019, ``seeds/fim-bhimani-2019.txt``, section 2.1:
the base case (eqs. 1-5), the t-process transition probabilities (eqs. 6-8) and the stage
completion probability and time (eqs. 9-10). Arrays broadcast over configurations; the only Python
loops run over Markov states (at most ``t + 1``), never over samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automodel.data.cells import shown
from automodel.errors import DataError
from automodel.templates.base import check_option, whole

__all__ = [
    "BaseProbabilities",
    "base_probabilities",
    "transition_matrix",
    "stochastic_matrix",
    "first_step_completion",
    "first_step_time",
    "chain_expected_cycles",
    "chain_time",
    "MAX_CHAIN_T",
    "MAX_CHAIN_ENTRIES",
]

#: most processes the full chain (method "chain") is solved for: a configuration holds (t + 1)^2
#: transition probabilities and costs O(t^3), 0.1 s at t = 512 (so every t up to it, as a best-p search
#: asks, about 12 s); "first_step" has no limit
MAX_CHAIN_T = 512
#: most transition probabilities of the configurations solved together (8 MB a matrix): at least one
#: configuration of :data:`MAX_CHAIN_T` processes
MAX_CHAIN_ENTRIES = 2 ** 20


def _processes(t: float) -> int:
    """``t`` as the int process count of a chain: a whole number from 1 to :data:`MAX_CHAIN_T`; else a
    one-line DataError (nothing is allocated)."""
    try:
        whole = int(t) == t and t >= 1
    except (OverflowError, ValueError, TypeError):
        whole = False
    if not whole:
        raise DataError(f"FiM-Cal: process count t must be a positive integer, got {shown(t)}")
    if t > MAX_CHAIN_T:
        raise DataError(f"FiM-Cal: the full chain solves at most t = {MAX_CHAIN_T} processes, got {shown(t)} "
                        "(method 'first_step' has no limit)")
    return int(t)


@dataclass(frozen=True)
class BaseProbabilities:
    """Single-process, single-stage probabilities (seed sec. 2.1.1, Table 1); arrays of one shape."""

    p_act: np.ndarray
    p_a2p: np.ndarray
    p_pass: np.ndarray
    p_p2a: np.ndarray
    p_s1: np.ndarray
    inv_tc: np.ndarray  # 1/TC, kept exact: P_act + P_a2p = 1 - 1/TC loses digits when TC ~ 1e9


def base_probabilities(u: np.ndarray, tc: np.ndarray, sc: np.ndarray) -> BaseProbabilities:
    """Base-case probabilities from utilisation ``U``, total cycles ``TC`` and stall cycles ``SC``.

    Eqs. 1-5 of the seed (sec. 2.1.1): ``P_act = U``, ``P_a2p = 1 - U - 1/TC``,
    ``P_pass = SC/TC``, ``P_p2a = 1 - P_pass``, ``P_s1 = 1 - P_act - P_a2p = 1/TC``.

    Parameters
    ----------
    u, tc, sc : array_like
        Counters of one process; broadcast against each other.

    Returns
    -------
    BaseProbabilities

    Raises
    ------
    DataError
        When a probability would leave [0, 1]: ``TC >= 1``, ``0 <= SC <= TC`` and
        ``0 <= U <= 1 - 1/TC`` are required (Algorithm 1, line 3).

    Examples
    --------
    >>> b = base_probabilities(0.5, 10.0, 4.0)
    >>> float(b.p_a2p), float(b.p_pass)
    (0.4, 0.4)
    """
    u, tc, sc = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (u, tc, sc)))
    if not np.all(tc >= 1.0):
        raise DataError(f"FiM-Cal: column 'TC' must be >= 1 cycle, got {np.min(tc):g}")
    if not np.all((sc >= 0.0) & (sc <= tc)):
        raise DataError("FiM-Cal: column 'SC' must satisfy 0 <= SC <= TC")
    if not np.all((u >= 0.0) & (u <= 1.0 - 1.0 / tc + 1e-12)):
        raise DataError("FiM-Cal: column 'U' must satisfy 0 <= U <= 1 - 1/TC (eq. 2 needs P_a2p >= 0)")
    p_act = u
    p_a2p = np.clip(1.0 - u - 1.0 / tc, 0.0, 1.0)
    p_pass = sc / tc
    p_p2a = 1.0 - p_pass
    p_s1 = 1.0 - p_act - p_a2p
    return BaseProbabilities(p_act, p_a2p, p_pass, p_p2a, p_s1, 1.0 / tc)


def _binomial_rows(t: int, p_one: np.ndarray, p_other: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``C(c, a) p_one^a p_other^(c-a)`` for every count ``c`` in ``counts`` and ``a = 0..t``.

    Returns an array of shape ``p_one.shape + (len(counts), t + 1)``; zero where ``a > c``.
    """
    from scipy.special import gammaln, xlogy
    a = np.arange(t + 1, dtype=float)
    c = counts.astype(float)[:, None]
    valid = a[None, :] <= c
    safe_rest = np.where(valid, c - a[None, :], 0.0)
    log_comb = gammaln(c + 1.0) - gammaln(a[None, :] + 1.0) - gammaln(safe_rest + 1.0)
    po = np.asarray(p_one, dtype=float)[..., None, None]
    pr = np.asarray(p_other, dtype=float)[..., None, None]
    log_term = log_comb + xlogy(a[None, :], po) + xlogy(safe_rest, pr)
    return np.where(valid, np.exp(log_term), 0.0)


def transition_matrix(base: BaseProbabilities, t: int, finished_wait_active: bool = False) -> np.ndarray:
    """State transition probabilities ``P_ij(t)`` of one stage with ``t`` processes (eqs. 6-8).

    State ``i`` has ``i`` active and ``t - i`` passive processes. Eqs. 6-8 are the three cases of
    one convolution: ``a`` of the ``i`` active processes stay active (``P_act``), ``i - a`` turn
    passive (``P_a2p``), ``b = j - a`` of the ``t - i`` passive ones turn active (``P_p2a``) and the
    rest stay passive (``P_pass``). Row ``i`` therefore sums to ``(1 - 1/TC)^i``; the missing mass
    is the stage completion probability, and eq. 9 takes it from the all-active row ``i = t``.

    Parameters
    ----------
    base : BaseProbabilities
        Output of :func:`base_probabilities`, arrays of shape ``S``.
    t : int
        Number of processes (``t >= 1``); the matrix has ``M = t + 1`` states.
    finished_wait_active : bool
        If True, rows ``i < t`` give the completion mass back to "stay active" (``P_act + 1/TC``):
        a process that has finished its cycles waits at the barrier, active, because the stage can
        only complete when all processes are active (sec. 2.1.2). The paper does not say where that
        mass goes; this choice makes rows ``i < t`` sum to 1 exactly.

    Returns
    -------
    numpy.ndarray
        Shape ``S + (t + 1, t + 1)``; entry ``[..., i, j]`` is ``P_ij``.

    Examples
    --------
    >>> b = base_probabilities(0.5, 10.0, 0.4 * 10.0)
    >>> m = transition_matrix(b, 2)
    >>> round(float(m[2, 2]), 12) == 0.25     # P22 = P_act^2
    True
    """
    t = _processes(t)
    states = np.arange(t + 1)
    stay = _binomial_rows(t, base.p_act, base.p_a2p, states)  # [..., i, a]
    if finished_wait_active:
        waiting = _binomial_rows(t, 1.0 - np.asarray(base.p_a2p, dtype=float), base.p_a2p, states)
        stay = np.where((states < t)[:, None], waiting, stay)
    rise = _binomial_rows(t, base.p_p2a, base.p_pass, t - states)  # [..., i, b]
    out = np.zeros(stay.shape[:-1] + (t + 1,), dtype=float)
    for a in range(t + 1):  # loop over states, vectorised over configurations and rows
        out[..., :, a:] += stay[..., :, a : a + 1] * rise[..., :, : t + 1 - a]
    return out


def stochastic_matrix(base: BaseProbabilities, t: int) -> np.ndarray:
    """The stage chain with an absorbing "stage complete" state appended (index ``t + 1``).

    Transient rows come from :func:`transition_matrix` with ``finished_wait_active=True``; the
    completion column holds eq. 9's ``P_s = 1 - sum_j P_tj`` on the all-active row and zero
    elsewhere; the absorbing row is ``e_{t+1}``. Every row sums to 1.

    Returns
    -------
    numpy.ndarray
        Shape ``S + (t + 2, t + 2)``.
    """
    q = transition_matrix(base, t, finished_wait_active=True)
    shape = q.shape[:-2]
    full = np.zeros(shape + (t + 2, t + 2), dtype=float)
    full[..., : t + 1, : t + 1] = q
    full[..., t, t + 1] = first_step_completion(base, t)
    full[..., t + 1, t + 1] = 1.0
    return full


def first_step_completion(base: BaseProbabilities, t: int | np.ndarray) -> np.ndarray:
    """Eq. 9 on the first step out of the all-active state: ``P_s = 1 - (P_act + P_a2p)^t``.

    Because row ``t`` of eqs. 6-8 is the binomial expansion of ``(P_act + P_a2p)^t`` and
    ``P_act + P_a2p = 1 - 1/TC`` (eq. 2), this is ``1 - (1 - 1/TC)^t``, computed as
    ``-expm1(t * log1p(-1/TC))`` to keep precision when ``TC`` is ~1e9 cycles.
    """
    return -np.expm1(np.asarray(t, dtype=float) * np.log1p(-np.asarray(base.inv_tc, dtype=float)))


def first_step_time(tc: np.ndarray, f: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``T = 1 / (F (1 - (1 - 1/TC)^t))`` (eqs. 9-10 with the authors' first-step reading).

    This is what the released code (``bhimanijanki/FiM``, ``tp.m``) computes; it is about
    ``TC / (t F)`` when ``TC >> t`` and exactly ``TC / F`` when ``t = 1``.

    Examples
    --------
    >>> float(first_step_time(1e9, 2e9, 1))
    0.5
    """
    tc = np.asarray(tc, dtype=float)
    p_s = -np.expm1(np.asarray(t, dtype=float) * np.log1p(-1.0 / tc))
    return 1.0 / (np.asarray(f, dtype=float) * p_s)


def chain_expected_cycles(base: BaseProbabilities, t: int) -> np.ndarray:
    """Expected cycles until a stage completes, starting with all ``t`` processes active.

    The chain of :func:`stochastic_matrix` leaves only from the all-active state, with
    probability ``P_s`` per visit, so by renewal the expected time is ``1 / (P_s * pi_t)``, where
    ``pi_t`` is the stationary probability of the all-active state in the chain whose completion
    mass is sent back to the all-active state (a proper stochastic matrix; a well-conditioned
    solve even when ``1/TC`` is ~1e-9, unlike ``(I - Q) m = 1``). This equals the first-step
    time divided by the long-run fraction of cycles in which all processes are active.

    Returns
    -------
    numpy.ndarray
        Expected cycles, shape ``S``.
    """
    q = transition_matrix(base, t, finished_wait_active=True)
    p_s = first_step_completion(base, t)
    q = q.copy()
    q[..., t, t] += p_s
    m = t + 1
    # Stationary distribution: pi (Q - I) = 0 with sum(pi) = 1; replace one equation by the sum.
    lhs = np.swapaxes(q, -1, -2) - np.eye(m)
    lhs[..., -1, :] = 1.0
    rhs = np.zeros(lhs.shape[:-1])
    rhs[..., -1] = 1.0
    pi = np.linalg.solve(lhs, rhs[..., None])[..., 0]
    return 1.0 / (p_s * pi[..., t])


def check_stages(stages: object) -> None:
    """A one-line OptionError unless ``stages`` (of the chain, FiM-Cal's option) is a whole number >= 1."""
    check_option(whole(stages, 1), "fim_cal", "stages", "a whole number >= 1", stages)


def chain_time(u: np.ndarray, tc: np.ndarray, sc: np.ndarray, f: np.ndarray, t: np.ndarray,
               stages: int = 1) -> np.ndarray:
    """Calculation time of ``stages`` synchronised stages from the full chain (eqs. 6-10).

    Each stage has ``TC / stages`` cycles and starts all-active (the previous stage could only
    complete in that state, sec. 2.1.2), so ``T_n = stages * cycles(TC / stages) / F``. The seed's
    chaining of eq. 9 ("P_s1 as incoming probability for stage 2") is not specified further; with
    identical stages that start all-active it reduces to this sum.

    Parameters
    ----------
    u, tc, sc, f, t : array_like
        Per-configuration counters, clock (cycles per second) and process count; broadcast.
    stages : int
        Number of stages ``n``.

    Returns
    -------
    numpy.ndarray
        Seconds (if ``F`` is in Hz), one per configuration. Loops over distinct ``t``, solving at most
        :data:`MAX_CHAIN_ENTRIES` transition probabilities at once.

    Raises
    ------
    DataError
        A ``t`` that is not a whole number from 1 to :data:`MAX_CHAIN_T`, or counters out of range.
    """
    check_stages(stages)
    arrays = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (u, tc, sc, f, t)))
    u, tc, sc, f, t = (np.ravel(x) for x in arrays)
    out = np.empty(u.shape, dtype=float)
    distinct = np.unique(t)
    counts = [_processes(t_value) for t_value in distinct]  # every t checked before any is solved
    for t_value, count in zip(distinct, counts):
        rows = np.flatnonzero(t == t_value)
        step = max(MAX_CHAIN_ENTRIES // (count + 2) ** 2, 1)
        for start in range(0, rows.size, step):
            sel = rows[start:start + step]
            base = base_probabilities(u[sel], tc[sel] / stages, sc[sel] / stages)
            out[sel] = stages * chain_expected_cycles(base, count) / f[sel]
    return out.reshape(arrays[0].shape)
