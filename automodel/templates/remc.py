"""Replica-exchange Monte Carlo over a box, vectorised over replicas, and highest-density intervals.

Source: bayesian-kohashi-2022.txt, sec. 2.2-2.3: posterior ``pi(X|D) ~ exp(-F/tau) * uniform prior on
[0, c_max]``, temperatures ``tau = 0.1, 0.464, 2.154, 10``, burn-in of the first half, samples of the
lowest temperature kept; replica exchange after Hukushima and Nemoto (ref. [16] there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = ["DEFAULT_TEMPERATURES", "RemcResult", "replica_exchange", "hdi", "ladder", "effective_sample_size"]

#: bayesian-kohashi sec. 2.3: tau_k = 10^(2k/3) tau_0, tau_0 = 0.1.
DEFAULT_TEMPERATURES: tuple[float, ...] = (0.1, 0.1 * 10 ** (2 / 3), 0.1 * 10 ** (4 / 3), 10.0)


def ladder(coldest: float, hottest: float, dimension: int) -> tuple[float, ...]:
    """Geometric temperatures from ``coldest`` to ``hottest`` close enough for swaps to be accepted.

    For a cost that is quadratic in ``dimension`` coordinates (eq. 7 is), the energy at temperature
    ``tau`` has mean ``F_min + dimension tau / 2`` and standard deviation ``tau sqrt(dimension / 2)``,
    so adjacent temperatures of ratio ``1 + sqrt(2 / dimension)`` overlap by about one standard
    deviation and swap about a third of the time. The paper's four temperatures over a factor 100
    (:data:`DEFAULT_TEMPERATURES`) are that far apart only for ``dimension <= 1``; with six
    coefficients no swap was ever accepted.

    Examples
    --------
    >>> len(ladder(0.1, 10.0, 6)), ladder(0.1, 10.0, 6)[-1]
    (12, 10.0)
    """
    ratio = 1.0 + np.sqrt(2.0 / max(dimension, 1))
    rungs = int(np.ceil(np.log(hottest / coldest) / np.log(ratio))) + 1
    return tuple(float(v) for v in np.geomspace(coldest, hottest, max(rungs, 2)))


def effective_sample_size(samples: np.ndarray) -> np.ndarray:
    """Effective sample size of each column of a chain ``samples`` (n, k): ``n / (1 + 2 sum rho_t)``
    over Geyer's initial positive sequence of autocorrelations (from an FFT), at most ``n``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> iid = effective_sample_size(rng.standard_normal((4000, 1)))[0]
    >>> walk = effective_sample_size(np.cumsum(rng.standard_normal((4000, 1)), axis=0))[0]
    >>> bool(iid > 3000), bool(walk < 100)
    (True, True)
    """
    x = np.asarray(samples, float)
    n = x.shape[0]
    if n < 4:
        return np.full(x.shape[1], float(n))
    x = x - x.mean(axis=0)
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(x, size, axis=0)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), size, axis=0)[:n] / n
    out = np.full(x.shape[1], float(n))
    for j in range(x.shape[1]):
        if acov[0, j] <= 0:
            continue
        rho = acov[:, j] / acov[0, j]
        pairs = rho[:n - n % 2].reshape(-1, 2).sum(axis=1)  # Geyer: rho_2m + rho_2m+1
        stop = int(np.argmax(pairs <= 0)) if (pairs <= 0).any() else len(pairs)
        tau = -1.0 + 2.0 * pairs[:stop].sum()
        out[j] = min(float(n), n / max(tau, 1e-12))
    return out


@dataclass(frozen=True)
class RemcResult:
    """Samples of the coldest replica after burn-in, and diagnostics."""

    samples: np.ndarray              # (n_kept, k)
    costs: np.ndarray                # (n_kept,) cost F of each kept sample
    acceptance: np.ndarray           # (n_replicas,) move acceptance after burn-in
    exchange_acceptance: np.ndarray  # (n_replicas - 1,) swap acceptance of each adjacent pair
    temperatures: tuple[float, ...]

    @property
    def ess(self) -> np.ndarray:
        """(k,) effective sample size of each coordinate of the kept samples."""
        return effective_sample_size(self.samples)


def replica_exchange(cost: Callable[[np.ndarray], np.ndarray], lower: Sequence[float], upper: Sequence[float],
                     x0: Sequence[float], n_steps: int = 100_000,
                     temperatures: Sequence[float] = DEFAULT_TEMPERATURES, proposal: np.ndarray | None = None,
                     burn_in: float = 0.5, seed: int | np.random.Generator | None = 0, adapt: bool = True,
                     block: int = 4096) -> RemcResult:
    """Sample ``exp(-cost(x) / tau)`` on the box ``[lower, upper]`` at every temperature at once.

    Each step moves all replicas together (Gaussian random walk ``x + sqrt(tau) s_r z @ proposal.T``,
    Metropolis accept; a move out of the box has zero prior and is rejected), then tries to swap the configurations of adjacent
    temperatures (even pairs on even steps, odd pairs on odd steps) with probability
    ``min(1, exp((1/tau_i - 1/tau_j)(F_i - F_j)))``. During burn-in the step scales ``s_r`` adapt
    towards 25-35 % acceptance; afterwards they are fixed, so the kept chain is a valid Markov chain.

    Parameters
    ----------
    cost : vectorised cost, ``(n_replicas, k) -> (n_replicas,)``.
    proposal : ``(k, k)`` matrix shaping the random walk (e.g. a Cholesky factor of the posterior
        covariance); default ``diag(upper - lower) / 100``.
    burn_in : fraction of the steps discarded (the paper: one half).
    seed : seed or Generator; equal seeds give equal samples.

    Examples
    --------
    >>> r = replica_exchange(lambda x: np.sum((x - 1.0) ** 2, axis=1), [0.0], [3.0], [2.0], n_steps=4000)
    >>> bool(abs(np.mean(r.samples) - 1.0) < 0.1)
    True
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    k = lower.size
    tau = np.asarray(sorted(temperatures), dtype=float)
    n_rep = tau.size
    beta = 1.0 / tau
    chol = np.diag((upper - lower) / 100.0) if proposal is None else np.asarray(proposal, dtype=float)
    scale = np.sqrt(tau)
    x = np.tile(np.clip(np.asarray(x0, dtype=float), lower, upper), (n_rep, 1))
    f = cost(x)
    n_burn = int(burn_in * n_steps)
    n_kept = n_steps - n_burn
    samples = np.empty((n_kept, k))
    costs = np.empty(n_kept)
    accepted = np.zeros(n_rep)
    window = np.zeros(n_rep)
    swaps = np.zeros(n_rep - 1)
    tries = np.zeros(n_rep - 1)
    parity = [np.arange(0, n_rep - 1, 2), np.arange(1, n_rep - 1, 2)]
    dbeta = [beta[q] - beta[q + 1] for q in parity]
    for start in range(0, n_steps, block):
        size = min(block, n_steps - start)
        steps = rng.standard_normal((size, n_rep, k)) @ chol.T
        log_u = np.log(rng.random((size, n_rep)))
        log_v = np.log(rng.random((size, n_rep)))
        for i in range(size):
            step = start + i
            x, f, ok = _metropolis(cost, x, f, x + scale[:, None] * steps[i], lower, upper, log_u[i], beta)
            pairs = parity[step % 2]
            if pairs.size:
                swap = _exchange(x, f, pairs, log_v[i, pairs], dbeta[step % 2])
            if step < n_burn:
                window += ok
                if adapt and (step + 1) % 200 == 0:
                    scale *= _scale_factor(window / 200)
                    window[:] = 0
            else:
                accepted += ok
                if pairs.size:
                    swaps[pairs] += swap
                    tries[pairs] += 1
                samples[step - n_burn] = x[0]
                costs[step - n_burn] = f[0]
    return RemcResult(samples=samples, costs=costs, acceptance=accepted / max(n_kept, 1),
                      exchange_acceptance=swaps / np.maximum(tries, 1), temperatures=tuple(tau.tolist()))


def _metropolis(cost: Callable[[np.ndarray], np.ndarray], x: np.ndarray, f: np.ndarray, prop: np.ndarray,
                lower: np.ndarray, upper: np.ndarray, log_u: np.ndarray, beta: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One Metropolis step of every replica at once.

    Parameters
    ----------
    cost : vectorised cost, ``(n_replicas, k) -> (n_replicas,)``.
    x, f : ``(n_replicas, k)`` configurations and their ``(n_replicas,)`` costs.
    prop : ``(n_replicas, k)`` proposed configurations.
    lower, upper : ``(k,)`` the box; a proposal outside it has zero prior and is rejected.
    log_u : ``(n_replicas,)`` logarithms of uniform draws.
    beta : ``(n_replicas,)`` inverse temperatures.

    Returns
    -------
    tuple
        The new configurations and costs, and which proposals were accepted.

    Examples
    --------
    >>> x, f, ok = _metropolis(lambda x: x[:, 0], np.ones((2, 1)), np.ones(2), np.array([[0.5], [2.0]]),
    ...                        np.zeros(1), np.full(1, 1.5), np.log([0.5, 0.5]), np.ones(2))
    >>> x.ravel().tolist(), ok.tolist()
    ([0.5, 1.0], [True, False])
    """
    fp = cost(prop)
    outside = (prop < lower) | (prop > upper)
    if outside.any():  # zero prior outside the box: rejected (mirroring would bias correlated moves)
        fp = np.where(outside.any(axis=1), np.inf, fp)
    ok = log_u < (f - fp) * beta
    return np.where(ok[:, None], prop, x), np.where(ok, fp, f), ok


def _exchange(x: np.ndarray, f: np.ndarray, pairs: np.ndarray, log_v: np.ndarray, dbeta: np.ndarray) -> np.ndarray:
    """Try to swap the configurations of the replicas ``pairs`` and ``pairs + 1``, in place.

    Parameters
    ----------
    x, f : ``(n_replicas, k)`` configurations and their ``(n_replicas,)`` costs, changed in place.
    pairs : indices of the lower replica of each pair.
    log_v : logarithms of uniform draws, one per pair.
    dbeta : ``beta[pairs] - beta[pairs + 1]``.

    Returns
    -------
    ndarray of bool
        Which pairs swapped: with probability ``min(1, exp(dbeta (F_i - F_j)))``.
    """
    swap = log_v < dbeta * (f[pairs] - f[pairs + 1])
    if swap.any():
        a, b = pairs[swap], pairs[swap] + 1
        x[a], x[b] = x[b], x[a]  # fancy indexing copies the right-hand side first
        f[a], f[b] = f[b], f[a]
    return swap


def _scale_factor(rate: np.ndarray) -> np.ndarray:
    """The factor of each replica's step scale during burn-in: larger above 35 % acceptance, smaller
    below 25 %.

    Examples
    --------
    >>> _scale_factor(np.array([0.5, 0.3, 0.1])).tolist()
    [1.25, 1.0, 0.8]
    """
    return np.where(rate > 0.35, 1.25, np.where(rate < 0.25, 0.8, 1.0))


def hdi(samples: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of each column: the shortest interval holding ``level`` of the samples.

    Examples
    --------
    >>> lo, hi = hdi(np.arange(100.0)[:, None], 0.9)
    >>> float(hi[0] - lo[0])
    89.0
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    s = np.sort(np.asarray(samples, dtype=float), axis=0)
    n = s.shape[0]
    w = max(int(np.ceil(level * n)), 1)
    widths = s[w - 1:] - s[: n - w + 1]
    i = np.argmin(widths, axis=0)
    cols = np.arange(s.shape[1])
    return s[i, cols], s[i + w - 1, cols]
