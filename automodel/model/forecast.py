"""Load forecasting: the Network Weather Service's mixture of experts, and per-run load from per-host samples.

rational-polynomial-yagnik-icpp2006.txt, sec. 3: the load a run *will* see (``min_avg_avail_cpu``,
``min_avg_avail_band``) is forecast from the history of measured values with the NWS "mixture of
experts": several forecasters postcast the history and the one with the least postcast error makes
the next forecast. The experts here (the NWS set, Wolski 1998, ref. [15] of the paper):

* last value; running mean of all history;
* exponential smoothing ``f <- f + g (x - f)`` with gains :data:`GAINS`;
* sliding-window means and medians over :data:`WINDOWS` values;
* 30 % trimmed means over the same windows (the lowest and highest 30 % of the window dropped);
* an adaptive-window median: at each step the median over whichever window of
  :data:`ADAPTIVE_WINDOWS` has had the least postcast error so far.

The postcasts of every expert are computed as one ``(n_experts, n + 1)`` array (vectorised over time;
the experts are a fixed list of array expressions), and selection is a cumulative sum of errors and
an ``argmin`` over the expert axis.

Per run, sec. 3 averages each host's periodic samples over the run and takes the minimum over hosts:
:func:`min_avg_avail`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.signal import lfilter

__all__ = ["GAINS", "WINDOWS", "TRIM", "ADAPTIVE_WINDOWS", "EXPERTS", "Forecast", "postcasts", "forecast",
           "min_avg_avail"]

GAINS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75)
WINDOWS = (5, 31)
TRIM = 0.3
ADAPTIVE_WINDOWS = (3, 5, 9, 17, 31, 63)

EXPERTS: tuple[str, ...] = (("last", "running_mean") + tuple(f"exp_smooth_{g:g}" for g in GAINS)
                            + tuple(f"mean_{w}" for w in WINDOWS) + tuple(f"median_{w}" for w in WINDOWS)
                            + tuple(f"trimmed_mean_{w}" for w in WINDOWS) + ("adaptive_median",))


def _windows(x: np.ndarray, w: int) -> np.ndarray:
    """(n + 1, w) windows: row t holds the last ``w`` values before t (NaN where the history is shorter)."""
    padded = np.concatenate([np.full(w, np.nan), x])
    return sliding_window_view(padded, w)  # row t = padded[t:t+w] = x[t-w:t]


def _window_mean(x: np.ndarray, w: int) -> np.ndarray:
    c = np.concatenate([[0.0], np.cumsum(x)])
    t = np.arange(len(x) + 1)
    lo = np.maximum(t - w, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (c[t] - c[lo]) / (t - lo)


def _window_median(x: np.ndarray, w: int) -> np.ndarray:
    win = _windows(x, w)
    out = np.full(len(win), np.nan)
    full = np.isfinite(win).any(axis=1)
    srt = np.sort(win[full], axis=1)  # NaN sort last
    cnt = np.isfinite(srt).sum(axis=1)
    rows = np.arange(len(srt))
    out[full] = 0.5 * (srt[rows, (cnt - 1) // 2] + srt[rows, cnt // 2])
    return out


def _window_trimmed_mean(x: np.ndarray, w: int, trim: float = TRIM) -> np.ndarray:
    win = _windows(x, w)
    srt = np.sort(win, axis=1)
    cnt = np.isfinite(srt).sum(axis=1)
    g = np.floor(trim * cnt).astype(int)
    cs = np.concatenate([np.zeros((len(srt), 1)), np.cumsum(np.nan_to_num(srt), axis=1)], axis=1)
    rows = np.arange(len(srt))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (cs[rows, cnt - g] - cs[rows, g]) / (cnt - 2 * g)


def _errors(f: np.ndarray, x: np.ndarray, metric: str) -> np.ndarray:
    """(E, n) postcast errors: column t is the error of the forecast of x[t] (column 0 is NaN)."""
    d = f[:, :len(x)] - x[None, :]
    return d * d if metric == "mse" else np.abs(d)


def _choose(err: np.ndarray, window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Expert chosen at each step 0..n (least mean error over the postcasts before it) and that mean error.

    Returns ``choice`` (n + 1,) and ``mean_err`` (E, n + 1): the mean error of each expert over the
    postcasts available before step t (within the last ``window`` of them when given).
    """
    e = np.where(np.isfinite(err), err, 0.0)
    have = np.isfinite(err).astype(float)
    cs = np.concatenate([np.zeros((len(e), 1)), np.cumsum(e, axis=1)], axis=1)  # cs[:, t] = sum_{s<t}
    cn = np.concatenate([np.zeros((len(e), 1)), np.cumsum(have, axis=1)], axis=1)
    if window is not None:  # a window longer than the history is all of it (and 10**21 fits no C long)
        lag = np.maximum(np.arange(cs.shape[1]) - min(window, cs.shape[1]), 0)
        cs, cn = cs - cs[:, lag], cn - cn[:, lag]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(cn > 0, cs / cn, np.inf)
    return np.argmin(mean, axis=0), mean


def postcasts(x: np.ndarray, metric: str = "mse") -> np.ndarray:
    """Every expert's forecast of ``x[t]`` from ``x[:t]``, for t = 0..n: shape (len(EXPERTS), n + 1).

    Column 0 is NaN (no history); column n is each expert's forecast of the next value.
    """
    x = np.asarray(x, float)
    n = len(x)
    out = np.full((len(EXPERTS), n + 1), np.nan)
    if n == 0:
        return out
    out[0, 1:] = x
    out[1, 1:] = np.cumsum(x) / np.arange(1, n + 1)
    for i, g in enumerate(GAINS):  # s[t] = (1 - g) s[t-1] + g x[t], s[-1] = x[0]: forecast of x[t+1]
        out[2 + i, 1:] = lfilter([g], [1.0, -(1.0 - g)], x, zi=[(1.0 - g) * x[0]])[0]
    r = 2 + len(GAINS)
    for w in WINDOWS:
        out[r] = _window_mean(x, w)
        r += 1
    for w in WINDOWS:
        out[r] = _window_median(x, w)
        r += 1
    for w in WINDOWS:
        out[r] = _window_trimmed_mean(x, w)
        r += 1
    meds = np.vstack([_window_median(x, w) for w in ADAPTIVE_WINDOWS])
    pick, _ = _choose(_errors(meds, x, metric), None)
    out[r] = meds[pick, np.arange(n + 1)]
    out[:, 0] = np.nan
    return out


@dataclass
class Forecast:
    """The mixture's next value and how it was chosen.

    Attributes
    ----------
    value : float
        Forecast of the next value.
    expert : str
        The expert that made it (least postcast error).
    error : float
        That expert's mean postcast error (``metric``; over ``window`` recent postcasts when given).
    mixture_error : float
        The mean postcast error of the mixture itself (each step forecast by the expert chosen then).
    errors : dict
        Mean postcast error of every expert.
    """

    value: float
    expert: str
    error: float
    mixture_error: float
    metric: str
    n_history: int
    window: int | None = None
    errors: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        root = " (root)" if self.metric == "mse" else ""
        err = self.error ** 0.5 if self.metric == "mse" else self.error
        return (f"{self.value:.4g} by {self.expert} ({self.metric}{root} postcast error {err:.3g} over "
                f"{self.n_history} values{'' if self.window is None else f', last {self.window}'})")


def forecast(series: np.ndarray, metric: str = "mse", window: int | None = None) -> Forecast:
    """Forecast the next value of ``series`` with the expert of least postcast error.

    Parameters
    ----------
    series : 1-D array
        The history, oldest first (at least one value).
    metric : {"mse", "mae"}
        Postcast error measure.
    window : int, optional
        Judge the experts on their last ``window`` postcasts only (all history by default).

    Examples
    --------
    >>> forecast(np.r_[np.zeros(30), np.ones(30)]).expert  # a step: tracking experts win
    'last'
    """
    if metric not in ("mse", "mae"):
        raise ValueError(f"metric must be 'mse' or 'mae', got {metric!r}")
    x = np.asarray(series, float)
    if x.ndim != 1 or not len(x) or not np.isfinite(x).all():
        raise ValueError("the load history must be a non-empty 1-D series of finite numbers")
    f = postcasts(x, metric)
    err = _errors(f, x, metric)
    choice, mean = _choose(err, window)
    n = len(x)
    final = int(choice[n])
    if not np.isfinite(mean[final, n]):
        final = 0  # a single value: the last value is all there is
    steps = np.arange(1, n)
    mixed = f[choice[steps], steps]
    d = mixed - x[1:]
    mix_err = float(np.mean(d * d if metric == "mse" else np.abs(d))) if len(d) else float("nan")
    return Forecast(float(f[final, n]), EXPERTS[final], float(mean[final, n]) if np.isfinite(mean[final, n])
                    else float("nan"), mix_err, metric, n, window,
                    {name: float(mean[i, n]) for i, name in enumerate(EXPERTS)})


def min_avg_avail(hosts: np.ndarray, at: np.ndarray, value: np.ndarray, start: np.ndarray, end: np.ndarray,
                  run_hosts: list[list[str] | None] | None = None) -> np.ndarray:
    """``min_avg_avail`` of each run (rational-polynomial-yagnik-icpp2006.txt, sec. 3).

    Each host's samples inside ``[start, end]`` are averaged (a host without a sample in the window
    holds its last earlier sample); the run gets the minimum over its hosts (all hosts by default).
    NaN where a host has no sample at or before the run's end.

    Parameters
    ----------
    hosts, at, value : 1-D arrays
        The samples: host name, time, measured available fraction.
    start, end : 1-D arrays
        Each run's time window.
    run_hosts : list, optional
        Per run, the hosts it used (``None`` for all).
    """
    start, end = np.asarray(start, float), np.asarray(end, float)
    names = sorted(set(np.asarray(hosts).tolist()))
    per_host = np.full((len(names), len(start)), np.nan)
    for h, name in enumerate(names):  # one vectorised pass over the runs per host
        sel = np.asarray(hosts) == name
        order = np.argsort(np.asarray(at, float)[sel], kind="stable")
        t = np.asarray(at, float)[sel][order]
        v = np.asarray(value, float)[sel][order]
        cs = np.concatenate([[0.0], np.cumsum(v)])
        lo = np.searchsorted(t, start, "left")
        hi = np.searchsorted(t, end, "right")
        cnt = hi - lo
        with np.errstate(invalid="ignore", divide="ignore"):
            avg = (cs[hi] - cs[lo]) / cnt
        held = np.where(lo > 0, v[np.maximum(lo - 1, 0)], np.nan)
        per_host[h] = np.where(cnt > 0, avg, held)
    if run_hosts is not None:
        use = np.array([[r is None or name in r for r in run_hosts] for name in names], bool).reshape(per_host.shape)
        per_host = np.where(use, per_host, np.inf)
        per_host[:, ~use.any(axis=0)] = np.nan
    with np.errstate(invalid="ignore"):
        out = np.min(per_host, axis=0) if len(names) else np.full(len(start), np.nan)
    return np.where(np.isfinite(out), out, np.nan)
