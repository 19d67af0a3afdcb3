"""Run an application over a designed grid of parameters and record each run: ``automodel run``.

Three modules, in the order a campaign uses them: :mod:`~automodel.runner.grid` (axes, their
Cartesian product, command templates), :mod:`~automodel.runner.measure` (one timed run and the
machine load around it) and :mod:`~automodel.runner.campaign` (every run of the grid, appended
to a CSV as it finishes and resumed after an interruption). :mod:`~automodel.runner.adaptive` runs
what :func:`automodel.suggest` asks for instead of the whole grid (``automodel run --adaptive``).
"""

from automodel.runner.campaign import (MAX_RUNS, Campaign, columns_for, count_runs, iter_plan, iter_rows, plan,
                                       run_campaign)
from automodel.runner.grid import (
    BUILTIN_PLACEHOLDERS,
    expand_grid,
    format_value,
    parse_values,
    placeholders,
    substitute,
)
from automodel.runner.measure import (
    STATUS_NO_TIME,
    STATUS_NOT_EXECUTABLE,
    STATUS_NOT_FOUND,
    STATUS_TIMEOUT,
    CpuTimes,
    RunResult,
    children_cpu_seconds,
    free_cpu_fraction,
    probe_bandwidth,
    read_cpu_times,
    run_once,
)

__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "Campaign",
    "CpuTimes",
    "RunResult",
    "STATUS_NOT_FOUND",
    "STATUS_NOT_EXECUTABLE",
    "STATUS_NO_TIME",
    "STATUS_TIMEOUT",
    "children_cpu_seconds",
    "columns_for",
    "expand_grid",
    "format_value",
    "free_cpu_fraction",
    "iter_rows",
    "parse_values",
    "placeholders",
    "plan",
    "iter_plan",
    "count_runs",
    "MAX_RUNS",
    "probe_bandwidth",
    "read_cpu_times",
    "run_campaign",
    "run_once",
    "substitute",
]
