"""Stage 2 of adaptive-model-sanjay-slides.txt (slide 19): communication terms g(n) (and g(n)/bw) added to
each surviving computation model, on the next process-count level."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.stages.parts import part_stage
from automodel.search.state import Search
from automodel.space.stages import CommunicationConfig
from automodel.space.terms import ONE, Term

__all__ = ["stage_communication", "communication_rows", "run", "STAGE"]


def stage_communication(S: Search, ks: np.ndarray, rows: np.ndarray, rows_text: str, seeds: np.ndarray,
                        multipliers: tuple[Term, ...], final: bool, note: str = "") -> np.ndarray:
    """The communication stage of the targets ``ks`` on ``rows``: each surviving computation model of
    ``seeds`` (R, S) kept and every subset (none included) of the ``[stages.communication]`` terms times
    a load function and each of ``multipliers`` added
    (:func:`~automodel.search.stages.parts.part_stage`); a target whose candidates all fail hands its
    computation models on. Returns the survivors."""
    return part_stage(S, ks, "communication", rows, rows_text, seeds, "comm", multipliers, final, note)


def communication_rows(frame: pd.DataFrame, p_levels: np.ndarray, need: int) -> tuple[np.ndarray, str, str]:
    """Rows of the communication stage: the second-lowest p level when it has at least 3 distinct n
    and ``need`` configurations (the narrowest computation model, one communication term and one
    residual degree of freedom); else the lowest levels together, as few as give that (all runs at most)."""
    p, n = frame["p"].to_numpy(), frame["n"].to_numpy()
    second = p_levels[1]
    options = [(p == second, f"p = {second:g}")] + [(p <= level, f"p <= {level:g}") for level in p_levels[1:]]
    for i, (rows, text) in enumerate(options):
        if np.unique(n[rows]).size >= 3 and rows.sum() >= need:
            why = "" if i == 0 else (f"too few distinct n or configurations at p = {second:g} for the "
                                     f"computation models and a communication term: the {i + 1} lowest "
                                     "p levels together")
            return rows, text, why
    return np.ones(len(p), bool), "all runs", "too few configurations at any p level: all runs"


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """Stage 2 after the computation stage: on all runs with the processor functions (``shape.joint``),
    else the targets grouped by the rows they need (:func:`communication_rows`, by the narrowest
    computation model's width), one branch per group, yielded as each is scored."""
    ks, seeds = branch.ks, branch.seeds
    if shape.joint:
        multipliers = S.terms("processors", "communication") or (ONE,)
        yield Branch(ks, stage_communication(S, ks, shape.all_rows, "all runs", seeds, multipliers, True))
        return
    widths = np.where(seeds >= 0, S.reg.array("width")[np.maximum(seeds, 0)], np.iinfo(np.intp).max)
    need = widths.min(axis=1, initial=np.iinfo(np.intp).max) + 2
    parts: dict[bytes, tuple[np.ndarray, str, str, list[np.ndarray]]] = {}  # the targets of each row set
    values, first = np.unique(need, return_index=True)
    for k in values[np.argsort(first)]:  # the rows of the communication stage: by the narrowest model's width
        rows, text, note = (communication_rows(S.ds.frame, shape.p_levels, int(k)) if shape.has_p
                            else (shape.all_rows, "all runs", ""))
        key = rows.tobytes() + text.encode()
        parts.setdefault(key, (rows, text, note, []))[3].append(np.flatnonzero(need == k))
    for rows, text, note, members in parts.values():
        at = np.sort(np.concatenate(members))
        yield Branch(ks[at], stage_communication(S, ks[at], rows, text, seeds[at], (ONE,), not shape.has_p, note))


STAGE = Stage("communication", CommunicationConfig, run, lambda S, shape: shape.has_n)
