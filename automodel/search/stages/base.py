"""What a stage of the search is to the engine: its name, its config type, when it applies, how it runs.

A stage's :attr:`Stage.run` takes a :class:`Branch` (the targets and the survivors the stage builds on)
and yields the branches the next stage of its route continues from, one at a time: the engine
(:mod:`automodel.search.engine`) runs the rest of the route on each before it asks for the next, so a
stage that splits its targets (communication, by the rows each needs) keeps the order in which the
candidates are scored, and with it the order of ties.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from automodel.search.state import Search
from automodel.space.stages import StageConfig

__all__ = ["Shape", "Branch", "Stage", "STAGED", "PMNF"]

#: the route of the seeds' staged search (adaptive-model-sanjay-slides.txt) and Extra-P's route
STAGED, PMNF = "staged", "pmnf"


@dataclass(frozen=True)
class Shape:
    """What the data allow, decided once per search.

    Attributes
    ----------
    all_rows : (m,) bool array
        Every run.
    has_n, has_p : bool
        The data have ``n``; they have two ``p`` levels or more.
    p_levels : array
        The distinct ``p``, sorted (empty without ``p``).
    joint : bool
        The lowest ``p`` has fewer than 3 distinct ``n``: the computation and communication stages run
        on all runs, with the processor functions.
    rows, text : (m,) bool array, str
        The runs of the computation stage (the lowest ``p``, or all runs) and how they are described.
    """

    all_rows: np.ndarray
    has_n: bool
    has_p: bool
    p_levels: np.ndarray
    joint: bool
    rows: np.ndarray
    text: str


@dataclass(frozen=True)
class Branch:
    """Targets ``ks`` and their survivors ``seeds`` (len(ks), S) that the next stage builds on; ``seeds``
    is None before the first stage of a route."""

    ks: np.ndarray
    seeds: np.ndarray | None = None


@dataclass(frozen=True)
class Stage:
    """One stage: its ``name`` (its ``[stages.<name>]`` table in a space file), its ``config`` type, the
    ``route`` it belongs to, whether it ``applies`` to the data, and ``run``."""

    name: str
    config: type[StageConfig]
    run: Callable[[Search, Shape, Branch], Iterator[Branch]]
    applies: Callable[[Search, Shape], bool]
    route: str = STAGED
