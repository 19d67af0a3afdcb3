"""FiM-Com's queueing models of scatter, broadcast and gather, simulated many jobs at once.

Source: Bhimani et al. 2019, ``seeds/fim-bhimani-2019.txt``, section 3.2-3.3 and Fig. 4: stations
D (data transfer), M (metadata), C (network initialisation) and R (receive) in series, with the
service processes of eqs. 13-16. Each job is a piece of the message of at most ``job_size`` units
of ``n``. Everything is vectorised over replications, senders, receivers and jobs: FIFO queues are
solved with the Lindley recursion as a cumulative maximum, and M's queue-length-dependent service
by a monotone fixed-point iteration that is exact when it stops. The receivers are reduced once
per draw (:func:`draw`): a FIFO receiver's last departure is ``max_j(a_j + psi * tail_j)`` with
``tail_j`` the standard service still to come from job ``j`` on, so only the tails are kept (for a
broadcast, whose receivers all see the same arrivals, only their maximum over receivers).
Configurations whose draws have the same shape are simulated together (:func:`stack`).

Interpretations (the paper leaves them open; the released C code, ``bhimanijanki/FiM``, guides):

* eq. 13, ``mu_1 = Uniform(zeta_min, zeta_max)``: a job of ``s`` units takes ``s / mu_1`` with the
  rate drawn per job; ``zeta_min = ratio * zeta_max`` (the paper measures 90-100 %, ratio 0.9).
* eq. 14, ``mu_2 = log(chi)``: a rate of ``log 1 = 0`` would never serve, so as in ``broadcast.c``
  the metadata service *time* is ``Exp(meta_mean) + meta_log * log(chi)``, with ``chi`` the jobs
  waiting behind the one entering service (no log term when ``chi = 0``).
* eq. 15, ``mu_3 = exp(eta)``: C is a delay (infinite) server, each job delayed ``Exp(eta)``.
* eq. 16, ``mu_4 = phi * exp(psi)``: each receiver serves its jobs FIFO with ``Exp(psi)`` times;
  the factor ``phi`` (receivers fetching at once) is realised by simulating the ``phi`` receivers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from automodel.data.cells import shown
from automodel.errors import DataError

__all__ = ["PATTERNS", "QueueParams", "Draws", "MAX_VARIATES", "MAX_HELD", "job_count", "job_sizes", "variates",
           "batches", "draw", "stack", "tails", "run", "lindley", "simulate", "config_rng"]

PATTERNS: tuple[str, ...] = ("scatter", "broadcast", "gather")


@dataclass(frozen=True)
class QueueParams:
    """Service-process parameters of eqs. 13-16 (times in the unit of the measured ``time``).

    Attributes
    ----------
    zeta_max : float
        Upper bound of the data rate of D (units of ``n`` per time unit), eq. 13.
    meta_mean, meta_log : float
        Mean exponential part and log(queue) coefficient of M's service time, eq. 14.
    init_mean : float
        ``eta``: mean initialisation delay of C, eq. 15.
    recv_mean : float
        ``psi``: mean receive time per job at R, eq. 16.
    zeta_ratio : float
        ``zeta_min / zeta_max`` in (0, 1].
    """

    zeta_max: float
    meta_mean: float
    meta_log: float
    init_mean: float
    recv_mean: float
    zeta_ratio: float = 0.9

    def __post_init__(self) -> None:
        values = (self.zeta_max, self.meta_mean, self.meta_log, self.init_mean, self.recv_mean)
        if not all(np.isfinite(v) and v >= 0 for v in values) or self.zeta_max <= 0:
            raise DataError(f"FiM-Com: queue parameters must be finite, >= 0 and zeta_max > 0, got "
                            f"{', '.join(shown(v) for v in values)}")
        if not zeta_ratio_ok(self.zeta_ratio):
            raise DataError(f"FiM-Com: zeta_ratio must be in (0, 1], got {self.zeta_ratio:g}")


def zeta_ratio_ok(ratio: object) -> bool:
    """``zeta_min / zeta_max`` of eq. 13 is a number in (0, 1]."""
    return isinstance(ratio, (int, float, np.integer, np.floating)) and not isinstance(ratio, bool) and 0 < ratio <= 1


@dataclass(frozen=True)
class Draws:
    """Standard random variates of one configuration, or of several stacked (common random numbers
    across parameters).

    Shapes: ``data`` (reps, senders, sender_jobs) uniforms for D; ``meta`` and ``init`` the same
    shape, standard exponentials for M and C; ``sizes`` the units of every sender job (broadcasts
    against ``data``). ``recv_tail`` holds, per receiver, the standard exponential service of R
    from each job to the last (:func:`tails`): (reps, receivers, jobs) for scatter, (reps, 1, jobs)
    for broadcast (the maximum over receivers, who all see the same arrivals) and
    (reps, 1, senders * jobs) for gather.
    """

    pattern: str
    receivers: int
    sizes: np.ndarray
    data: np.ndarray
    meta: np.ndarray
    init: np.ndarray
    recv_tail: np.ndarray

    @property
    def n_jobs(self) -> int:
        """Jobs entering the D stations over all replications and senders."""
        return int(self.data.size)

    @property
    def shape_key(self) -> tuple:
        """Draws with equal keys stack into one simulation (:func:`stack`)."""
        return self.pattern, self.data.shape[1:], self.recv_tail.shape[1:]


def tails(service: np.ndarray, max_over_receivers: bool = False) -> np.ndarray:
    """``tail_j = sum_{i >= j} service_i`` along the last axis: a FIFO server's work from job j on.

    Lindley's recursion (:func:`lindley`) unrolled gives the last departure ``max_j(a_j + tail_j)``.
    With ``max_over_receivers`` (``service`` of shape (reps, receivers, jobs)), the maximum over
    axis 1, kept as length 1. Accumulated job by job from the last: one pass over ``service``, no
    temporary of its size (receivers run into thousands).

    Examples
    --------
    >>> tails(np.array([1.0, 2.0, 3.0])).tolist()
    [6.0, 5.0, 3.0]
    """
    jobs = service.shape[-1]
    out = np.empty((service.shape[0], 1, jobs) if max_over_receivers else service.shape)
    acc = np.zeros(service.shape[:-1])
    for j in range(jobs - 1, -1, -1):
        acc += service[..., j]
        out[..., j] = acc.max(axis=1, keepdims=True) if max_over_receivers else acc
    return out


def stack(draws: list[Draws]) -> Draws:
    """Draws of configurations with one :attr:`Draws.shape_key`, stacked along the replications."""
    first = draws[0]
    if any(d.shape_key != first.shape_key for d in draws):
        raise ValueError("FiM-Com: only draws of the same shape stack")
    sizes = np.concatenate([np.broadcast_to(d.sizes, (d.data.shape[0], 1, d.data.shape[-1])) for d in draws])
    return Draws(first.pattern, first.receivers, sizes, *(np.concatenate([getattr(d, f) for d in draws])
                                                          for f in ("data", "meta", "init", "recv_tail")))


def job_count(n: float, job_size: float) -> int:
    """How many jobs a message of ``n`` units makes: ``ceil(n / job_size)``, at least one.

    Examples
    --------
    >>> job_count(10.0, 4.0)
    3
    """
    if not (np.isfinite(n) and n > 0 and np.isfinite(job_size) and job_size > 0):
        raise DataError(f"FiM-Com: message size n and job_size must be > 0, got {n:g}, {job_size:g}")
    return max(int(np.ceil(n / job_size - 1e-9)), 1)


def job_sizes(n: float, job_size: float) -> np.ndarray:
    """Split a message of ``n`` units into :func:`job_count` jobs (the last one partial).

    Examples
    --------
    >>> job_sizes(10.0, 4.0).tolist()
    [4.0, 4.0, 2.0]
    """
    count = job_count(n, job_size)
    sizes = np.full(count, float(job_size))
    sizes[-1] = n - job_size * (count - 1)
    return sizes


#: most random variates of one kind (uniform, service times, ...) one configuration, or one batch of
#: configurations simulated together (:func:`batches`), may draw: 16 MB of each, about 270 MB at the
#: peak of the simulation. A configuration draws ``reps x (p - 1) x jobs`` of each (:func:`variates`); a
#: larger one is refused with the largest p (or n) it could simulate, rather than using gigabytes.
MAX_VARIATES = 2 ** 21
#: most variates of one kind a calibration holds: the draws of every training configuration are kept
#: for the whole least-squares fit (common random numbers), 32 MB of each
MAX_HELD = 2 ** 22


def variates(n: float, p: int, job_size: float, reps: int) -> int:
    """How many random variates of each kind one configuration draws: ``reps x (p - 1) x jobs``.

    Raises
    ------
    DataError
        When that is more than :data:`MAX_VARIATES`, naming the largest p it simulates at this n, or
        the largest n when even p = 2 needs too many. Nothing is allocated.
    """
    jobs = job_count(n, job_size)
    count = reps * max(int(p) - 1, 1) * jobs
    if reps * jobs > MAX_VARIATES:
        raise DataError(f"FiM-Com: simulating n = {n:g} needs {reps * jobs:.3g} random variates of each kind "
                        f"at any p ({reps} repetitions x {jobs} jobs of {job_size:g}), more than the "
                        f"{MAX_VARIATES} it allows; the largest n it simulates is "
                        f"{MAX_VARIATES // reps * job_size:.10g}")
    if count > MAX_VARIATES:
        raise DataError(f"FiM-Com: simulating p = {p:g} at n = {n:g} needs {count:.3g} random variates of each "
                        f"kind ({reps} repetitions x {max(int(p) - 1, 1)} peers x {jobs} jobs), more than the "
                        f"{MAX_VARIATES} it allows; the largest p it simulates there is "
                        f"{MAX_VARIATES // (reps * jobs) + 1}")
    return count


def batches(counts: Sequence[int]) -> list[np.ndarray]:
    """The indices of ``counts`` (each at most :data:`MAX_VARIATES`) in consecutive groups whose sum is
    at most :data:`MAX_VARIATES`: configurations drawn and simulated together.

    Examples
    --------
    >>> [b.tolist() for b in batches([MAX_VARIATES // 2, MAX_VARIATES // 2, 1])]
    [[0, 1], [2]]
    """
    out: list[np.ndarray] = []
    start, total = 0, 0
    for i, count in enumerate(counts):
        if total + count > MAX_VARIATES and i > start:
            out.append(np.arange(start, i))
            start, total = i, 0
        total += count
    if start < len(counts):
        out.append(np.arange(start, len(counts)))
    return out


def draw(pattern: str, n: float, p: int, job_size: float, reps: int, rng: np.random.Generator) -> Draws:
    """Draw every random variate one configuration needs.

    ``n`` is the data size per receiver (per sender for gather), as MPI counts are; ``p`` processes
    give ``p - 1`` receivers (scatter, broadcast) or senders (gather), at least one.

    Raises
    ------
    DataError
        When the configuration needs more than :data:`MAX_VARIATES` variates of a kind (:func:`variates`).
    """
    if pattern not in PATTERNS:
        raise DataError(f"FiM-Com: pattern must be one of {PATTERNS}, got {pattern!r}")
    if int(p) != p or p < 1:
        raise DataError(f"FiM-Com: process count p must be a positive integer, got {shown(p)}")
    if int(reps) != reps or reps < 1:
        raise DataError(f"FiM-Com: reps must be a positive integer, got {shown(reps)}")
    variates(n, p, job_size, reps)
    peers = max(int(p) - 1, 1)
    sizes = job_sizes(float(n), float(job_size))
    jobs = sizes.size
    if pattern == "scatter":  # one sender, a distinct block per receiver, round robin (Fig. 4a)
        sender_shape, recv_shape = (reps, 1, peers * jobs), (reps, peers, jobs)
    elif pattern == "broadcast":  # one sender, each job duplicated to every receiver (Fig. 4b)
        sender_shape, recv_shape = (reps, 1, jobs), (reps, peers, jobs)
    else:  # gather: parallel D, M, C per sender, one FIFO receiver (Fig. 4c)
        sender_shape, recv_shape = (reps, peers, jobs), (reps, 1, peers * jobs)
    data, meta = rng.random(sender_shape), rng.standard_exponential(sender_shape)
    init, recv = rng.standard_exponential(sender_shape), rng.standard_exponential(recv_shape)
    tail = tails(recv, max_over_receivers=pattern == "broadcast")
    return Draws(pattern, peers, np.tile(sizes, peers) if pattern == "scatter" else sizes, data, meta, init, tail)


def lindley(arrivals: np.ndarray, service: np.ndarray) -> np.ndarray:
    """Departure times of a FIFO single server, along the last axis (arrivals sorted).

    ``d_k = max(a_k, d_{k-1}) + S_k`` unrolled: ``d_k = C_k + max_{j<=k}(a_j - C_{j-1})`` with
    ``C`` the cumulative service.

    Examples
    --------
    >>> lindley(np.array([0.0, 0.0, 5.0]), np.array([1.0, 1.0, 1.0])).tolist()
    [1.0, 2.0, 6.0]
    """
    total = np.cumsum(service, axis=-1)
    return total + np.maximum.accumulate(arrivals - (total - service), axis=-1)


class _RowCounter:
    """Counts, per row of the last axis, how many sorted arrivals are <= each query.

    The rows are packed once into one sorted key array (row ``r`` maps its values into
    ``[2r, 2r + 1]``), so each count is a single ``np.searchsorted`` over all rows.
    """

    def __init__(self, sorted_values: np.ndarray) -> None:
        rows = sorted_values.reshape(-1, sorted_values.shape[-1])
        self.shape = sorted_values.shape
        self.width = rows.shape[1]
        self.scale = (np.abs(rows[:, -1]) + 1e-300)[:, None]
        self.offset = 2.0 * np.arange(rows.shape[0])[:, None]
        self.keys = (self.offset + rows / self.scale).ravel()
        self.base = np.arange(rows.shape[0])[:, None] * self.width

    def __call__(self, queries: np.ndarray) -> np.ndarray:
        q = np.minimum(queries.reshape(-1, self.width) / self.scale, 1.5)  # >= last arrival: all
        found = np.searchsorted(self.keys, (self.offset + q).ravel(), side="right")
        return (found.reshape(q.shape) - self.base).reshape(self.shape)


def _metadata_station(arrivals: np.ndarray, exp_part: np.ndarray, meta_log: float,
                      max_iter: int | None = None) -> np.ndarray:
    """Departures of M, whose service time grows with log of the queue behind the job (eq. 14).

    Fixed point of ``chi -> service -> departures (Lindley) -> chi`` from ``chi = 0``: the map is
    monotone, so the iterates rise to the unique fixed point, which is the sequential solution
    (job k's ``chi`` only depends on jobs before it). It stops when ``chi`` no longer changes.
    """
    if meta_log == 0.0:
        return lindley(arrivals, exp_part)
    jobs = arrivals.shape[-1]
    index = np.arange(jobs)
    chi = np.zeros(arrivals.shape, dtype=np.int64)
    count_le = _RowCounter(arrivals)
    for _ in range(max_iter or jobs + 1):
        service = exp_part + meta_log * np.log(np.maximum(chi, 1))
        depart = lindley(arrivals, service)
        start = depart - service
        new_chi = count_le(start) - index - 1
        if np.array_equal(new_chi, chi):
            return depart
        chi = new_chi
    return depart


def run(draws: Draws, params: QueueParams) -> np.ndarray:
    """Completion time of the collective in each replication, shape ``(reps,)``.

    D serves all jobs of a sender from time 0 (all data in memory, sec. 3.2), M follows FIFO, C
    delays each job, R queues per receiver; the collective ends when the last job is received.
    """
    rate = params.zeta_max * (params.zeta_ratio + (1.0 - params.zeta_ratio) * draws.data)
    d_out = np.cumsum(draws.sizes / rate, axis=-1)  # single server D with every job waiting at t = 0
    m_out = _metadata_station(d_out, params.meta_mean * draws.meta, params.meta_log)
    c_out = m_out + params.init_mean * draws.init
    # scatter: block q (jobs q*J .. q*J+J-1) goes to receiver q; broadcast: the same arrivals reach
    # every receiver; gather: one receiver of every sender's jobs
    arrive = np.sort(c_out.reshape(draws.recv_tail.shape), axis=-1)
    done = arrive + params.recv_mean * draws.recv_tail  # last departure: max_j (a_j + psi * tail_j)
    return done.reshape(done.shape[0], -1).max(axis=-1)


def simulate(pattern: str, n: float, p: int, params: QueueParams, job_size: float, reps: int,
             seed: int = 0) -> np.ndarray:
    """Seeded simulation of one configuration: completion times of ``reps`` replications.

    The generator is seeded from ``(seed, pattern, n, p)`` so a configuration gives the same
    result whatever else is simulated alongside it.

    Examples
    --------
    >>> q = QueueParams(zeta_max=100.0, meta_mean=0.0, meta_log=0.0, init_mean=0.0, recv_mean=0.0,
    ...                 zeta_ratio=1.0)
    >>> simulate("broadcast", 1000.0, 4, q, job_size=100.0, reps=3).tolist()
    [10.0, 10.0, 10.0]
    """
    return run(draw(pattern, n, p, job_size, reps, config_rng(seed, pattern, n, p)), params)


def config_rng(seed: int, pattern: str, n: float, p: int) -> np.random.Generator:
    """A generator that depends only on the seed and the configuration."""
    n_bits = int(np.float64(n).view(np.uint64))
    return np.random.default_rng([int(seed), PATTERNS.index(pattern), n_bits, int(p)])
