"""The stage of data without ``n``: the P-term models of bayesian-kohashi-2022.txt (eqs. 1-6) on all runs."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automodel.search.canonical import subsets
from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.state import Search
from automodel.space.stages import POnlyConfig
from automodel.space.structure import Structure

__all__ = ["stage_p_only", "run", "STAGE"]


def stage_p_only(S: Search, ks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Every subset of up to ``max_terms`` of the stage's P-terms (fewer than the configurations less 2),
    scored on ``rows`` (all runs) as a final stage; returns the survivors of the targets ``ks``."""
    cfg = S.space.stage("p_only")
    terms = S.terms("p_only", "terms")
    max_terms = min(cfg.max_terms, S.ds.n_points - 2)
    S.notes.append("no n: p-only models (bayesian-kohashi-2022.txt, eqs. 1-6); "
                   "computation and communication stages skipped")
    kept, _ = S.run("p_only", ks, rows, "all runs",
                    S.reg.same([Structure(c) for c in subsets(terms, max_terms)], len(ks)), cfg.top, final=True)
    return kept


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """The first stage of data with ``p`` and no ``n``; the models are adaptive when extra parameters follow."""
    kept = stage_p_only(S, branch.ks, shape.all_rows)
    if S.ds.extra_params:
        S.adaptive = True
    yield Branch(branch.ks, kept)


STAGE = Stage("p_only", POnlyConfig, run, lambda S, shape: not shape.has_n and shape.has_p)
