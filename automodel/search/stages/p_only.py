"""The stage of data without ``n``: the P-term models of bayesian-kohashi-2022.txt (eqs. 1-6) on all runs."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automodel.search.canonical import subsets
from automodel.search.stages.base import Branch, Shape, Stage
from automodel.search.state import Search
from automodel.space.stages import POnlyConfig
from automodel.space.structure import Structure
from automodel.space.terms import ONE, Cap, Term

__all__ = ["stage_p_only", "saturation_only", "run", "STAGE"]


def saturation_only(terms: tuple[Term, ...]) -> bool:
    """Whether a subset of P-terms is a model the stage takes: without a cap any subset; with one, the
    capped term alone or with the constant, ``c + a/min(p, pc)``: Amdahl's law with the point where
    speedup stops (:class:`~automodel.space.terms.Cap`). Beside other P-terms a cap is a kink inside
    the data that changes nothing beyond it (``a/min(p, 6) + b/p`` is ``a/6 + b/p`` from p = 6 on): an
    equivalent of ``c + b/p`` that is harder to read, and a fitted centre the coefficients do not count.

    >>> from automodel.space.parse import parse_term
    >>> [saturation_only(tuple(map(parse_term, s))) for s in (["1", "1/cap(p, 8)"], ["1/p", "1/cap(p, 8)"], ["1/p", "log2(p)"])]
    [True, False, True]
    """
    capped = [t for t in terms if any(isinstance(f, Cap) for f in t.factors)]
    return not capped or (len(capped) == 1 and all(t == ONE or t in capped for t in terms))


def stage_p_only(S: Search, ks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Every subset of up to ``max_terms`` of the stage's P-terms (fewer than the configurations less 2)
    that :func:`saturation_only` takes, scored on ``rows`` (all runs) as a final stage; returns the
    survivors of the targets ``ks``."""
    cfg = S.space.stage("p_only")
    terms = S.terms("p_only", "terms")
    max_terms = min(cfg.max_terms, S.ds.n_points - 2)
    S.notes.append("no n: p-only models (bayesian-kohashi-2022.txt, eqs. 1-6); "
                   "computation and communication stages skipped")
    candidates = [c for c in subsets(terms, max_terms) if saturation_only(c)]
    kept, _ = S.run("p_only", ks, rows, "all runs", S.reg.same([Structure(c) for c in candidates], len(ks)),
                    cfg.top, final=True)
    return kept


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """The first stage of data with ``p`` and no ``n``; the models are adaptive when extra parameters follow."""
    kept = stage_p_only(S, branch.ks, shape.all_rows)
    if S.ds.extra_params:
        S.adaptive = True
    yield Branch(branch.ks, kept)


STAGE = Stage("p_only", POnlyConfig, run, lambda S, shape: not shape.has_n and shape.has_p)
