"""Load history in the store: per-host samples of available CPU and bandwidth, per-run loads from them
(rational-polynomial-yagnik-icpp2006.txt, sec. 3), and forecasts (:mod:`automodel.model.forecast`); on any
backend, through the store's interface (:mod:`automodel.store.storage`)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd

from automodel import data as data_mod
from automodel.data.cells import MAGNITUDE, missing, violation
from automodel.errors import DataError, StoreError, where
from automodel.names import label_problem
from automodel.store.db import Store, now
from automodel.store.storage import Storage, open_storage, read_app, run_frame

if TYPE_CHECKING:  # automodel.model.forecast imports scipy.signal (0.6 s); observe and record need none of it
    from automodel.model.forecast import Forecast

__all__ = ["record", "import_samples", "samples", "fill_run_loads", "forecast_load"]

RESOURCES = ("cpu", "bw")
#: how far ahead of this machine's clock a sample's time may be, in seconds: hosts' clocks differ (MIT
#: Kerberos allows 300 s of skew by default). A later time would stay the newest sample, and so the
#: load forecast, until then: ``load record --at 1e20`` was stored, and every forecast after it said 0.5
CLOCK_SKEW_S = 300.0


def _fraction(value: float | None, what: str) -> float | None:
    if value is None:
        return None
    if not (np.isfinite(value) and 0 < value <= 1):
        raise DataError(f"{what}: expected an available fraction in (0, 1], got {value!r}")
    return float(value)


def _instants(at: np.ndarray, what: Callable[[int], str]) -> np.ndarray:
    """``at`` (seconds since the epoch) when every time is finite, >= 0, 0 or of a magnitude the engine
    fits (:func:`automodel.data.cells.violation`) and not later than this machine's clock allows
    (:data:`CLOCK_SKEW_S`); else a one-line error naming ``what(i)`` of the first that is not."""
    at = np.asarray(at, float)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(at) & (at >= 0))
    found = violation(np.where(bad, 0.0, at), "at")
    if bad.any() or found is not None:
        i = int(np.argmax(bad)) if bad.any() else found[0]
        raise DataError(f"{what(i)}: expected a time in seconds since the epoch (a finite number >= 0, 0 or of "
                        f"magnitude {MAGNITUDE[0]:g} to {MAGNITUDE[1]:g}), got {at[i]!r}")
    late = at > now() + CLOCK_SKEW_S
    if late.any():
        i = int(np.argmax(late))
        raise DataError(f"{what(i)}: expected a time no later than now (seconds since the epoch, up to "
                        f"{CLOCK_SKEW_S:g} s of clock skew), got {at[i]:g}, {at[i] - now():.3g} s ahead")
    return at


def _host(value: object, what: str) -> str:
    """``value`` when it can name a host: 1 to 200 printable characters (:func:`automodel.names.label_problem`;
    it is printed by ``load forecast`` and the store holds 200); else a one-line error naming ``what``."""
    text = "" if missing(value) else str(value)
    problem = label_problem(text)
    if problem is not None:
        raise DataError(f"{what}: not a host name ({problem})")
    return text


def _insert_samples(store: str | Path | Store | Storage, rows: list[dict]) -> None:
    open_storage(store, create=True).session(lambda db: db.insert_samples(rows))


def record(store: str | Path | Store | Storage, cpu: float | None = None, bw: float | None = None,
           host: str | None = None, at: float | None = None) -> None:
    """Record one load sample of ``host`` (this machine by default) at ``at`` (now by default)."""
    if cpu is None and bw is None:
        raise DataError("a load sample needs --cpu and/or --bw")
    _insert_samples(store, [{"host": _host(socket.gethostname() if host is None else host, "--host"), "at": now() if at is None else float(_instants(np.array([at], float), lambda i: "--at")[0]),
                             "cpu": _fraction(cpu, "--cpu"), "bw": _fraction(bw, "--bw")}])


def import_samples(store: str | Path | Store | Storage, path: str | Path) -> int:
    """Import a CSV of periodic samples: columns ``time`` (or ``at``), ``host``, and ``cpu`` and/or ``bw``;
    the number of samples stored (a sample stored already, or twice in the file, is stored once)."""
    src = str(path)
    frame = data_mod.read_csv(Path(path))
    tcol = "at" if "at" in frame.columns else "time"
    for col in (tcol, "host"):
        if col not in frame.columns:
            raise DataError(f"{src}, column '{col}': missing; a load-sample file has time (or at), host, cpu, bw")
    have = [r for r in RESOURCES if r in frame.columns]
    if not have:
        raise DataError(f"{src}: no 'cpu' or 'bw' column; a load-sample file has time (or at), host, cpu, bw")
    at = _instants(data_mod.numeric(frame, tcol, tcol, src, 2), lambda i: where(src, i + 2, tcol))
    vals = {r: data_mod.numeric(frame, r, r, src, 2) for r in have}
    hosts = [_host(h, where(src, i + 2, "host")) for i, h in enumerate(frame["host"])]
    rows = [{"host": hosts[i], "at": float(at[i]), **{r: float(vals[r][i]) if r in vals else None
                                                     for r in RESOURCES}} for i in range(len(frame))]
    return open_storage(store, create=True).session(lambda db: _insert_new_samples(db, rows))


def _insert_new_samples(db: Any, rows: list[dict]) -> int:
    """Store the ``rows`` that are not stored yet (the same host, time and values), each once, in the
    session ``db``: importing a file of samples again adds nothing. The number stored."""
    def key(host: str, at: float, cpu: float | None, bw: float | None) -> tuple:
        return host, at, *(None if v is None or v != v else v for v in (cpu, bw))  # NULL and NaN alike

    seen = {key(s.host, s.at, s.cpu, s.bw) for h in sorted({r["host"] for r in rows}) for s in db.samples(h)}
    new = []
    for r in rows:
        k = key(r["host"], r["at"], r["cpu"], r["bw"])
        if k not in seen:
            seen.add(k)
            new.append(r)
    if new:
        db.insert_samples(new)
    return len(new)


def samples(store: str | Path | Store | Storage, host: str | None = None) -> pd.DataFrame:
    """All load samples (of one host), oldest first: host, at, cpu, bw."""
    rows = open_storage(store, create=False).session(lambda db: db.samples(host), write=False)
    return pd.DataFrame([(r.host, r.at, r.cpu, r.bw) for r in rows], columns=["host", "at", "cpu", "bw"])


def fill_run_loads(store: str | Path | Store | Storage, frame: pd.DataFrame, roles: dict, source: str) -> pd.DataFrame:
    """Add ``cpu``/``bw`` columns to runs with ``start`` and ``end`` columns: min over hosts of the
    per-host average of the samples during the run (an optional ``hosts`` column, ``h1;h2``, limits
    the hosts)."""
    from automodel.model.forecast import min_avg_avail

    smp = samples(store)
    out = frame.copy()
    start = data_mod.numeric(frame, "start", "start", source, 2)
    end = data_mod.numeric(frame, "end", "end", source, 2)
    run_hosts = None
    if "hosts" in frame.columns:
        run_hosts = [None if pd.isna(h) else [x.strip() for x in str(h).split(";") if x.strip()]
                     for h in frame["hosts"]]
    for r in RESOURCES:
        col = roles.get(r) or r
        if col in frame.columns:
            continue
        s = smp.dropna(subset=[r])
        if s.empty:
            continue
        v = min_avg_avail(s["host"].to_numpy(), s["at"].to_numpy(float), s[r].to_numpy(float), start, end, run_hosts)
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataError(f"{source}, row {i + 2}: no '{r}' load sample of the run's hosts at or before "
                            f"its end ({end[i]:g}); record samples with automodel load record")
        out[col] = v
    return out


def forecast_load(store: str | Path | Store | Storage, resource: str, app: str | None = None, host: str | None = None,
                  metric: str = "mse", window: int | None = None) -> tuple[Forecast, str]:
    """Forecast ``min_avg_avail`` of ``resource`` for the next run.

    From the per-host samples when there are any (each host forecast, the minimum taken, as the run
    will see the least available host), else from the application's run history.
    Returns the forecast and a description of the history used.
    """
    from automodel.model.forecast import forecast

    if resource not in RESOURCES:
        raise DataError(f"resource must be cpu or bw, got {resource!r}")
    if window is not None and window < 1:
        raise DataError(f"--window: expected a number of postcasts >= 1, got {window}")
    smp = samples(store, host).dropna(subset=[resource])
    if not smp.empty:
        best: tuple[Forecast, str] | None = None
        for h, part in smp.groupby("host", sort=True):
            f = forecast(part[resource].to_numpy(float), metric, window)
            if best is None or f.value < best[0].value:
                best = (f, f"samples of host {h} (least forecast of {smp['host'].nunique()} host(s))")
        return best
    if app is None:
        raise StoreError(f"no {resource} load samples in the store; record some with automodel load record")
    a, runs = read_app(store, app, lambda db, a: (a, run_frame(db, a)))
    if resource not in a.params or runs.empty:
        raise StoreError(f"no {resource} history: no load samples and application {app!r} has no {resource} column")
    return forecast(runs[resource].to_numpy(float), metric, window), f"the {len(runs)} runs of {app}"
