"""The scheduling of groups of kernels over workers: tasks, their estimated cost, and their cutting.

A task is the kernels of one group (all or a part of them) for :func:`automodel.kernels.fit_many.fit_many`
to model; :func:`by_cost` cuts the work left into tasks of about equal estimated cost for the workers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from automodel.kernels.groups import Group
from automodel.space.config import SearchSpace

__all__ = ["Task", "PROBE_KERNELS", "TASKS_PER_WORKER", "part", "cost", "by_cost"]

#: kernels of a group searched here first, to measure the cost of the rest: enough that the batched
#: scoring's cost per kernel is measured, not its fixed cost
PROBE_KERNELS = 32
#: tasks per worker when the rest is cut by cost: more balance the workers, fewer ship less
TASKS_PER_WORKER = 4

#: a task: kernels of one group (all or a part), the space, the source name, and the group's number
Task = tuple[Group, SearchSpace, str, int]


def part(g: Group, lo: int, hi: int) -> Group:
    """Kernels ``lo:hi`` of ``g`` as a group of their own (each kernel's model does not depend on the others)."""
    k = slice(lo, hi)
    return replace(g, names=g.names[k], index=g.index[k], values=g.values[:, k], spread=g.spread[:, k],
                   count=g.count[:, k])


def cost(task: Task) -> int:
    """The estimated cost of a task: kernels x points."""
    return len(task[0].names) * len(task[0].points)


def by_cost(tasks: list[Task], n_workers: int) -> list[Task]:
    """``tasks`` cut into tasks of about equal cost (:func:`cost`), :data:`TASKS_PER_WORKER` per worker,
    largest first (so that the last ones to start are small and the workers finish together).

    Examples
    --------
    >>> g = Group(("p",), np.ones((4, 1)), tuple("abcdefgh"), np.arange(8), np.ones((4, 8)),
    ...           np.zeros((4, 8)), np.ones((4, 8)))
    >>> [len(t[0].names) for t in by_cost([(g, None, "", 0)], 2)]
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    target = sum(map(cost, tasks)) / (n_workers * TASKS_PER_WORKER)
    out = []
    for g, sp, source, gid in tasks:
        step = max(1, int(np.ceil(target / len(g.points))))
        out += [(part(g, lo, lo + step), sp, source, gid) for lo in range(0, len(g.names), step)]
    return sorted(out, key=cost, reverse=True)
