"""The template-list cache of the staged search (adaptive-model-sanjay-slides.txt, slide 26): fits saved
and the held-out error, with and without it, on the same tasks.

The tasks have both ``n`` and ``p`` (the cache works on the communication and processor stages of such
searches): the known formulas with 1-20 % noise of :mod:`benchmarks.bands` and the bundled SMPI runs.
For every list length of :data:`SIZES` (0 = no cache, the default space) the default space is fitted
with ``template_list = size`` in ``[stages.communication]`` and ``[stages.processors]``; the record
gives the candidates fitted by the search (the sum of its stage reports), its CPU seconds and the
median relative error on the held-out runs.

Run: ``python -m benchmarks.overhead [--quick]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

import automodel
from automodel.space.config import load_space
from benchmarks.bands import known_noise_tasks
from benchmarks.tasks import Task, bundled_tasks, pooled_columns

#: template-list lengths compared; 0 is the search without the cache
SIZES = (0, 2, 4)


def space_with_lists(size: int) -> automodel.SearchSpace:
    """The default space with template lists of ``size`` in the communication and processor stages."""
    space = load_space("default")
    if not size:
        return space
    stages = {name: (replace(body, template_list=size) if name in ("communication", "processors") else body)
              for name, body in space.stages.items()}
    return replace(space, stages=stages)


def measure(tasks: list[Task], size: int) -> dict:
    """Candidates fitted, CPU seconds and median held-out relative error of ``tasks`` with lists of ``size``."""
    space = space_with_lists(size)
    fits, errors = 0, []
    start = time.process_time()
    for task in tasks:
        result = automodel.fit(task.train, time=task.target, n="n", p="p", cpu=None, bw=None, space=space,
                               progress=False, intervals=False, templates=[],
                               ignore=pooled_columns(task.train, ("n", "p"), task.target))
        fits += sum(r.n_candidates for r in result.reports)
        y = task.test[task.target].to_numpy(float)
        errors.append(np.abs(result.best.predict(task.test) - y) / y)
    return {"size": size, "tasks": len(tasks), "candidates": fits, "cpu_s": time.process_time() - start,
            "median_error": float(np.median(np.concatenate(errors)))}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed per known formula and noise")
    args = ap.parse_args(argv)
    groups = {"known-noise": known_noise_tasks(1 if args.quick else 3), "smpi": bundled_tasks()}
    records = []
    print(f"{'group':<12} {'list':>4} {'tasks':>5} {'candidates':>10} {'saved':>6} {'CPU s':>6} {'median err':>10}")
    for group, tasks in groups.items():
        base = None
        for size in SIZES:
            rec = {"group": group, **measure(tasks, size)}
            base = base or rec["candidates"]
            rec["saved"] = 1 - rec["candidates"] / base
            records.append(rec)
            print(f"{group:<12} {size or 'off':>4} {rec['tasks']:>5} {rec['candidates']:>10} "
                  f"{rec['saved']:>6.0%} {rec['cpu_s']:>6.1f} {rec['median_error']:>10.1%}")
    return records


if __name__ == "__main__":
    main()
