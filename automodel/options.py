"""The vocabulary every layer shares: parameter roles, strategy names, the weighting, one options record.

This module sits at the bottom of the package (it imports nothing from automodel but the errors), so
the data reader, the search-space loader, the solver and the search all agree on the same names. Each
strategy chosen by name has one registry: the metrics are objects in :mod:`automodel.solve.metrics`
(the registry checks the names), the selection rules are named here and implemented in
:mod:`automodel.search.select`, the weightings are here.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

if TYPE_CHECKING:  # numpy is imported by the weightings when they run: the CLI's parser starts without it
    import numpy as np

from automodel.errors import SpaceError

__all__ = ["TIME_UNITS", "DEFAULT_UNIT", "unit_name", "unit_in_name", "is_time_unit", "values_in", "ROLE_NAMES", "RELATIVE_RESOLUTION", "AGGREGATES", "DEFAULT_AGGREGATE", "MAD_TO_SIGMA", "SELECTIONS", "Weighting", "WEIGHTINGS", "weights",
           "FitOptions", "check_choice", "ROLE_GUESSES", "guess_role"]

#: canonical names of the parameter roles the engine knows; extra parameters keep their column name
ROLE_NAMES: tuple[str, ...] = ("n", "p", "cpu", "bw")

#: column names (lower case, without ``_``, ``-`` or spaces) that usually hold a role, for the hints of
#: the errors that meet an undeclared column: the process count and the problem size
ROLE_GUESSES: dict[str, frozenset[str]] = {
    "p": frozenset({"np", "nprocs", "nproc", "procs", "numprocs", "processes", "nprocesses", "ranks", "nranks",
                    "numranks", "mpiranks", "nodes", "nnodes", "numnodes", "cores", "ncores", "threads",
                    "nthreads", "numthreads", "ompnumthreads", "gpus", "ngpus", "workers"}),
    "n": frozenset({"size", "problemsize", "nsize", "inputsize", "datasize", "elements", "nelem", "nelements",
                    "cells", "ncells", "gridsize", "msgsize", "messagesize", "msgbytes", "bytes", "length"}),
}


def guess_role(column: str) -> str | None:
    """The role a column's name suggests (``procs``: ``p``; ``problem_size``: ``n``), or None.

    >>> [guess_role(c) for c in ("procs", "MPI ranks", "problem_size", "theta", "p")]
    ['p', 'p', 'n', None, None]
    """
    key = "".join(ch for ch in str(column).lower() if ch.isalnum())
    return next((role for role, names in ROLE_GUESSES.items() if key in names), None)


#: relative differences below this are rounding, not measurement: the solver works on normal equations in
#: double precision, whose residuals carry relative errors of about ``eps * cond``. A fitted term that
#: contributes less than this fraction of the smallest time is not part of the model (its coefficient
#: is zero), and scores closer than this to the best are equivalent (:mod:`automodel.search.select`).
RELATIVE_RESOLUTION = 1e-10
#: floats of per-row work held at once (residuals, predictions, leverages of many candidates at every
#: row: 256 MiB): the scorer and the bands' calibration take their candidates in chunks that fit
ROW_BUDGET = 1 << 25

#: the median absolute deviation of normal noise times this is its standard deviation (1 / Phi^-1(3/4)):
#: every robust scale of the package (the aggregate, the online anomalies, the selection's outliers)
MAD_TO_SIGMA = 1.4826

#: how repetitions of one configuration are combined
AGGREGATES: tuple[str, ...] = ("median", "mean", "min", "robust")
#: the default: the mean of the runs that are not outliers, the median where the noise is heavy-tailed
#: (:func:`automodel.data.repetitions.robust_means`)
DEFAULT_AGGREGATE = "robust"

#: selection rules by name (:mod:`automodel.search.select` implements them)
SELECTIONS: dict[str, str] = {
    "simplest": "the fewest terms among the candidates the data cannot tell apart from rank 1",
    "best": "rank 1",
}


@dataclass(frozen=True)
class Weighting:
    """Row weights of the least-squares fit, and the metric that is the standard error of that fit."""

    name: str
    weights: Callable[[np.ndarray], np.ndarray]
    standard_error: str


def _relative(y: np.ndarray) -> np.ndarray:
    return 1.0 / y ** 2


def _equal(y: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.ones_like(y)


#: weightings by name. ``relative`` minimises ``sum(((T - T_obs) / T_obs)^2)``
#: (bayesian-kohashi-2022.txt, eq. 7), so runs of 0.1 s and 1000 s count alike; ``none`` is ordinary
#: least squares.
WEIGHTINGS: dict[str, Weighting] = {w.name: w for w in (
    Weighting("none", _equal, "s"), Weighting("relative", _relative, "rel_s"))}


def weights(y: np.ndarray, weighting: str) -> np.ndarray:
    """Row weights of the fit for observed times ``y`` (any shape) under ``weighting``.

    Examples
    --------
    >>> weights([0.5, 2.0], "relative").tolist()
    [4.0, 0.25]
    """
    import numpy as np

    check_choice("weighting", weighting, WEIGHTINGS)
    return WEIGHTINGS[weighting].weights(np.asarray(y, float))


def check_choice(what: str, value: Any, known: Iterable[str], where: str = "") -> None:
    """Raise a one-line :class:`SpaceError` when ``value`` is not one of ``known``."""
    known = tuple(known)
    if value not in known:
        prefix = f"{where}: " if where else ""
        raise SpaceError(f"{prefix}unknown {what} {value!r}; expected one of {', '.join(known)}")


@dataclass(frozen=True)
class FitOptions:
    """How candidates are fitted, ranked, pruned and chosen: the one options record.

    The search (``[fit]`` of a search-space file) and the online store read the same fields; the
    online stage keeps more candidates alive (:meth:`online`).
    """

    nonnegative: bool = True
    weighting: str = "relative"
    metric: str = "rel_s"
    prune_percentile: float = 50.0
    min_survivors: int = 8
    templates: tuple[str, ...] = ()
    selection: str = "simplest"
    #: template name -> option -> value (``[fit.template_options.NAME]``; checked against the template's
    #: ``fit`` by :mod:`automodel.templates.options` when the template runs)
    template_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def check(self, where: str = "") -> None:
        """Validate the weighting and the selection rule (one-line :class:`SpaceError`); the metric is the
        metric registry's to check (:func:`automodel.solve.metrics.check_metric`)."""
        check_choice("weighting", self.weighting, WEIGHTINGS, where)
        check_choice("selection", self.selection, SELECTIONS, where)

    @classmethod
    def keys(cls) -> set[str]:
        return {f.name for f in fields(cls)}


#: the units of time a measurement may be in, and their size in seconds
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: the unit of a measurement that does not say
DEFAULT_UNIT = "s"
_UNIT_ALIASES = {"sec": "s", "secs": "s", "second": "s", "seconds": "s", "µs": "us", "μs": "us",
                 "usec": "us", "msec": "ms", "nsec": "ns"}


#: a time unit written at the end of a column's name: ``runtime_ms``, ``time (us)``, ``Time[s]``, ``t-nsec``
_UNIT_SUFFIX = re.compile(r"(?:[ _.\-]+[(\[]?|[(\[])(s|sec|secs|seconds|ms|msec|us|usec|µs|μs|ns|nsec)[)\]]?$",
                          re.IGNORECASE)


def unit_in_name(column: str) -> str | None:
    """The time unit a column's name ends with (``runtime_ms``: ``ms``; ``time (us)``: ``us``; ``elapsed_seconds``:
    ``s``), or None: what a newcomer's data say when they have no ``unit`` column and no ``--unit``.

    Examples
    --------
    >>> [unit_in_name(c) for c in ["runtime_ms", "time (us)", "Time[s]", "wall_usec", "time", "runs", "mass"]]
    ['ms', 'us', 's', 'us', None, None, None]
    """
    found = _UNIT_SUFFIX.search(str(column).strip())
    return None if found is None else unit_name(found.group(1).lower())


def unit_name(unit: str) -> str:
    """The unit of the measured values as printed: a time unit (``s``, ``ms``, ``us``, ``ns``; aliases
    such as ``µs`` or ``seconds`` normalised) or a free label for what is not a time (``misses``,
    ``visits``, ``bytes``), printable and at most 24 characters.

    Raises
    ------
    ValueError
        An empty, over-long or unprintable label (the callers turn it into their one-line error).

    Examples
    --------
    >>> unit_name("µs"), unit_name("misses")
    ('us', 'misses')
    """
    from automodel.names import label_problem

    text = str(unit).strip()
    text = _UNIT_ALIASES.get(text.lower(), text)
    problem = label_problem(text) if text else "it is empty"
    if problem is None and len(text) > 24:
        problem = f"{len(text)} characters, expected at most 24"
    if problem is not None:
        raise ValueError(f"a unit must be s, ms, us, ns or a short printable label: {problem}")
    return text


def values_in(unit: str) -> str:
    """How a command says the unit of the values it read: ``values in ms``; for seconds, the unit taken
    when nothing says otherwise, also the way to say otherwise (times in ms taken for seconds were
    fitted without a word). The words of ``fit``'s summary and of ``kernels``.

    >>> values_in("ms"), values_in("s")
    ('values in ms', 'values in s (else --unit ms, us or ns)')
    """
    return f"values in {unit}" if unit != DEFAULT_UNIT else f"values in {DEFAULT_UNIT} (else --unit ms, us or ns)"


def is_time_unit(unit: str) -> bool:
    """Whether ``unit`` (as :func:`unit_name` returns it) is a unit of time."""
    return unit in TIME_UNITS
