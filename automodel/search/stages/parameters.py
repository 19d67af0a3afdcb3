"""The stage of the extra parameters (iterations, clusters, ...): each part of a model times a function of each."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automodel.search.canonical import rename_param, times
from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.state import Search
from automodel.space.stages import ParametersConfig
from automodel.space.structure import Structure
from automodel.space.terms import ONE

__all__ = ["stage_parameters", "run", "STAGE"]


def stage_parameters(S: Search, ks: np.ndarray, seeds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each extra parameter x in turn, each survivor of ``seeds`` (R, S) with its computation part, its
    communication part or both times each of the stage's functions of x, scored on ``rows`` as a final
    stage; returns the survivors of the targets ``ks``."""
    cfg: ParametersConfig = S.space.stage("parameters")  # type: ignore[assignment]
    funcs = cfg.functions
    kept = seeds
    for x in S.ds.extra_params:
        hs = [rename_param(h, "x", x) for h in funcs]

        def make(s: Structure) -> list[Structure]:
            cands = []
            for h in hs:
                cands.append(Structure(times(s.comp, h), s.comm, s.extra))
                if s.comm:
                    cands.append(Structure(s.comp, times(s.comm, h), s.extra))
                    cands.append(Structure(times(s.comp, h), times(s.comm, h), s.extra))
            return cands

        kept, _ = S.run(f"parameters/{x}", ks, rows, "all runs", S.reg.table(kept, make), cfg.top,
                        final=True)
    return kept


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """The last stage of data with extra parameters; the first (from the constant) without ``n`` and ``p``."""
    seeds = branch.seeds
    if seeds is None:
        S.adaptive = S.adaptive or len(S.ds.extra_params) > 1
        S.notes.append("no n and no p: models in the extra parameters only")
        seeds = S.reg.same([Structure((ONE,))], len(branch.ks))
    yield Branch(branch.ks, stage_parameters(S, branch.ks, seeds, shape.all_rows))


STAGE = Stage("parameters", ParametersConfig, run, lambda S, shape: bool(S.ds.extra_params))
