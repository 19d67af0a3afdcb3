"""The stage of data without ``n``: the P-term models of bayesian-kohashi-2022.txt (eqs. 1-6) on all runs."""

from __future__ import annotations

import numpy as np

from automodel.search.canonical import subsets
from automodel.space.structure import Structure
from automodel.search.state import Search

__all__ = ["stage_p_only"]


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
