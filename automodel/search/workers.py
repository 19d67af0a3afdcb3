"""Workers: joblib (loky processes by default, or the backend the caller activated) or a ``dask.distributed``
cluster, for :func:`automodel.kernels.fit_many.fit_many` (tasks of kernels) and for one large
:func:`automodel.fit` (the per-row work of scoring, :func:`automodel.search.score.score_pairs`).

:func:`use` makes the :class:`Workers` of a fit the active ones for its duration (a context variable,
as ``joblib.parallel_backend`` activates a backend): every scoring inside it, in the search, the
leaderboard's metrics and the bands' forward refits, finds them with :func:`active` and sends them
the work that is large enough to pay for them. One joblib pool (a persistent ``joblib.Parallel``) serves
the whole fit, started when the fit starts; an object the tasks read (a prepared design) is sent once,
however many tasks read it (:meth:`Workers.share`): written once to a file in shared memory that
loky or multiprocessing workers map (no copy), or scattered once to every worker of the cluster.
"""

from __future__ import annotations

import numbers
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from automodel.errors import DataError, install_hint

__all__ = ["DASK_WORKER_ENVIRON", "DASK_INSTALL", "Workers", "cluster", "n_workers", "idle_workers",
           "default_jobs", "use", "active"]

#: the environment to start dask workers with (``distributed.nanny.pre-spawn-environ``): dask's default
#: without its ``MALLOC_TRIM_THRESHOLD_=65536``, with which glibc maps every large numpy temporary
#: afresh and a task of the staged search took twice the CPU (measured: 1.53 s against 0.85 s)
DASK_WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}
#: how to get dask's distributed scheduler (``scheduler=``, ``--scheduler``)
DASK_INSTALL = install_hint("dask")
#: a shared-memory file system is used for the shared files when it has this much free space (joblib's rule)
SHARED_MEMORY_MIN_FREE = 2 << 30
#: seconds a scheduler has to connect (dask's own timeout) and then to answer dask's handshake
CONNECT_S = 10.0

_ACTIVE: ContextVar[Workers | None] = ContextVar("automodel_workers", default=None)


@contextmanager
def cluster(scheduler: Any) -> Iterator[Any]:
    """The ``dask.distributed`` client of ``scheduler`` (an address or a client; None: none), closed
    after if made here.

    Raises
    ------
    DataError
        dask's distributed scheduler is not installed, or the scheduler cannot be reached.
    """
    if scheduler is None:
        yield None
        return
    try:
        from dask.distributed import Client
    except ImportError:
        raise DataError(f"scheduler {scheduler}: running on a dask cluster needs dask's distributed "
                        f"scheduler: {DASK_INSTALL}") from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    try:
        client = _connect(Client, scheduler)
    except (OSError, TimeoutError, ValueError) as exc:
        raise DataError(f"scheduler {scheduler}: cannot connect ({exc})") from None
    with client:
        yield client


def _connect(client_class: type, scheduler: str) -> Any:
    """``client_class(scheduler)`` within :data:`CONNECT_S` seconds twice over: dask bounds the connect
    but not its read of the scheduler's handshake, so an address that accepts and never answers held
    ``--scheduler`` for ever. The attempt runs in a daemon thread that is left behind when it overruns.

    Raises
    ------
    TimeoutError
        No client within the bound.
    """
    made: dict[str, Any] = {}

    def connect() -> None:
        try:
            made["client"] = client_class(scheduler, timeout=f"{CONNECT_S:g}s")
        except BaseException as exc:  # noqa: BLE001  (handed to the caller's thread)
            made["error"] = exc

    thread = threading.Thread(target=connect, name="automodel-dask-connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_S)
    if thread.is_alive():
        raise TimeoutError(f"no answer to dask's handshake within {2 * CONNECT_S:g} s")
    if "error" in made:
        raise made["error"]
    return made["client"]


def default_jobs(jobs: int | None, otherwise: int) -> int:
    """``jobs``, or for None the ``n_jobs`` of the active ``joblib.parallel_backend``, else ``otherwise``
    (joblib not imported yet: no backend is active, and joblib is not imported for nothing).

    Raises
    ------
    DataError
        ``jobs`` 0 or not a whole number (joblib's ValueError, a traceback, once the work was large), or
        more workers than this machine has cores either way (``--jobs 100000`` started as many processes
        once the work was large; joblib read ``-5`` on two cores as one worker).
    """
    cores = os.cpu_count() or 1
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs == 0
                             or abs(jobs) > cores):
        raise DataError(f"jobs: expected a whole number of workers from 1 to {cores} (this machine's cores) or "
                        f"from -{cores} to -1 (-1: every core, -2: every core but one), got {jobs!r}")
    parallel = sys.modules.get("joblib.parallel")
    if jobs is not None or parallel is None:
        return otherwise if jobs is None else jobs
    return parallel.get_active_backend()[1] or otherwise


def idle_workers(n: int) -> int:
    """Of ``n`` local workers, those the machine's load leaves a core each: its cores less the
    processes that were running or waiting over the last minute (``os.getloadavg``, this process's
    own included, so one worker, this process, is always left); ``n`` where the load is unknown.

    Two loky workers on a two-core machine whose load average was 4.5 took 17.8 s for 6,000 kernels,
    one process 11.2 s (issue 32): workers that share a core with others do not pay for themselves.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not on this platform
        return n
    return max(1, min(n, int(1 + (os.cpu_count() or 1) - load)))


def n_workers(jobs: int, client: Any) -> int:
    """Workers available: the cluster's threads, else what the active joblib backend gives ``jobs``."""
    from joblib import effective_n_jobs

    return sum(client.nthreads().values()) if client is not None else effective_n_jobs(jobs)


class Workers:
    """The workers of one fit: a cluster's (``client``), else a joblib pool of ``jobs`` started by
    :meth:`start` or on first use and kept until :meth:`close`.

    Attributes
    ----------
    n : int
        How many workers (:func:`n_workers`).
    """

    def __init__(self, jobs: int, client: Any = None) -> None:
        from joblib.parallel import BACKENDS, get_active_backend

        self.n = n_workers(jobs, client)
        self._jobs, self._client = jobs, client
        self._parallel: Any = None
        self._warming: Iterator[Any] | None = None  # the tasks of :meth:`start`, under way
        backend = get_active_backend()[0]
        #: processes on this machine, which map files (else the object itself goes with the tasks)
        self._maps = client is None and isinstance(backend, (BACKENDS["loky"], BACKENDS["multiprocessing"]))
        self._folder: Path | None = None
        self._shared: tuple[Any, Any, Path | None] | None = None  # the object, its handle, its file

    def share(self, obj: Any, shipped: Callable[[Any], Any]) -> Any:
        """What tasks receive in place of ``obj`` (the same object as the last call's: the same handle):
        ``shipped(obj)`` (what the tasks read of it) scattered to every worker of the cluster, or
        written to a file the workers map (joblib's processes), or itself (threads). The previous
        object shared is released."""
        if self._shared is not None and self._shared[0] is obj:
            return self._shared[1]
        self._release()
        path = None
        if self._client is not None:
            handle = self._client.scatter(shipped(obj), broadcast=True, hash=False)
        elif self._maps:
            import joblib

            path = self._temporary() / f"{id(obj)}.pkl"
            joblib.dump(shipped(obj), path)
            handle = _File(str(path))
        else:
            handle = obj
        self._shared = (obj, handle, path)
        return handle

    def start(self, module: str) -> None:
        """Start the workers and have each import ``module`` now, in the background, so that the first
        tasks do not wait for them (starting a loky worker that imports the scoring took 0.5 s)."""
        if self._client is not None:
            from dask.distributed import fire_and_forget

            for address in self._client.nthreads():
                fire_and_forget(self._client.submit(_imported, module, workers=[address], pure=False))
        elif self._warming is None:
            from joblib import delayed

            self._warming = self._pool()(delayed(_imported)(module) for _ in range(self.n))

    def map(self, func: Callable[..., Any], shared: Any, items: Sequence[tuple]) -> list:
        """``[func(shared, *item) for item in items]``, each call a task on the workers; ``shared`` a
        handle of :meth:`share`."""
        if self._client is not None:
            futures = self._client.map(func, *([shared] * len(items), *zip(*items)), pure=False)
            return self._client.gather(futures)
        from joblib import delayed

        pool = self._pool()
        self._ready()
        return list(pool(delayed(_call)(func, shared, *item) for item in items))

    def close(self) -> None:
        """Stop using the pool and remove the shared files (the loky processes stay, for joblib's reuse)."""
        self._release()
        self._ready()
        if self._parallel is not None:
            self._parallel.__exit__(None, None, None)
            self._parallel = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _pool(self) -> Any:
        """The persistent ``joblib.Parallel`` (its calls return generators: they dispatch at once)."""
        if self._parallel is None:
            from joblib import Parallel

            self._parallel = Parallel(n_jobs=self._jobs, return_as="generator").__enter__()
        return self._parallel

    def _ready(self) -> None:
        """Wait for the tasks of :meth:`start` (a joblib pool runs one call at a time)."""
        if self._warming is not None:
            list(self._warming)
            self._warming = None

    def _temporary(self) -> Path:
        """A folder for the shared files: ``JOBLIB_TEMP_FOLDER``, else the shared memory of ``/dev/shm``
        when it has :data:`SHARED_MEMORY_MIN_FREE`, else the system's temporary folder."""
        if self._folder is None:
            where = os.environ.get("JOBLIB_TEMP_FOLDER")
            if where is None and os.path.isdir("/dev/shm"):
                stat = os.statvfs("/dev/shm")
                where = "/dev/shm" if stat.f_bavail * stat.f_frsize >= SHARED_MEMORY_MIN_FREE else None
            self._folder = Path(tempfile.mkdtemp(prefix="automodel-workers-", dir=where))
        return self._folder

    def _release(self) -> None:
        if self._shared is None:
            return
        _, handle, path = self._shared
        self._shared = None
        if self._client is not None:
            self._client.cancel(handle)
        if path is not None:
            path.unlink(missing_ok=True)  # mapped pages stay valid until the workers drop them


@dataclass(frozen=True)
class _File:
    """An object written by ``joblib.dump`` to ``path``, loaded by each task with its arrays mapped from
    the file: nothing is copied, the processes share the pages, and a worker holds them only while a
    task runs (loky restarts a worker whose memory stays 300 MB above its start: a design of 10^6 rows
    kept mapped between tasks did that)."""

    path: str

    def load(self) -> Any:
        import joblib

        return joblib.load(self.path, mmap_mode="r")


def _imported(module: str) -> None:
    """Import ``module`` (on a worker)."""
    import_module(module)


def _call(func: Callable[..., Any], shared: Any, *item: Any) -> Any:
    """``func(shared, *item)`` on a joblib worker, a shared file mapped."""
    return func(shared.load() if isinstance(shared, _File) else shared, *item)


@contextmanager
def use(jobs: int, scheduler: Any = None, start: str | None = None) -> Iterator[Workers | None]:
    """The :class:`Workers` of ``jobs`` (or of the cluster of ``scheduler``, an address or a client,
    :func:`cluster`), active (:func:`active`) until the block ends; None and nothing active when there
    is one worker at most. ``start``: a module the workers import at once (:meth:`Workers.start`)."""
    if jobs == 1 and scheduler is None:  # serial: not even joblib imported
        yield None
        return
    with cluster(scheduler) as client:
        pool = Workers(jobs, client)
        if pool.n <= 1:
            yield None
            return
        if start is not None:
            pool.start(start)
        token = _ACTIVE.set(pool)
        try:
            yield pool
        finally:
            _ACTIVE.reset(token)
            pool.close()


def active() -> Workers | None:
    """The workers of :func:`use` around this call, or None."""
    return _ACTIVE.get()
