"""Terms of the staged search made once: equal terms are one object, products built once per pair.

The stages multiply the same terms by the same functions for every seed; :func:`canonical` makes equal
terms made in different ways one object, so the structures that hold them compare (and are interned)
by identity, not factor by factor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from itertools import combinations

from automodel.space.terms import ONE, Over1, Term

__all__ = ["canonical", "multiplied", "times", "subsets", "rename_param", "uses_only", "unit_factor"]


def subsets(terms: tuple[Term, ...], max_terms: int, min_terms: int = 1) -> list[tuple[Term, ...]]:
    """Every subset of ``min_terms`` to ``max_terms`` of ``terms``, smallest first, in the order of ``terms``."""
    return [c for k in range(min_terms, max_terms + 1) for c in combinations(terms, k)]


@lru_cache(maxsize=1 << 16)
def multiplied(a: Term, b: Term) -> Term:
    """``a * b``, built once (stages multiply the same terms by the same functions for every seed)."""
    return canonical(a * b)


@lru_cache(maxsize=1 << 16)
def canonical(term: Term) -> Term:
    """The first term seen equal to ``term``: equal terms made in different ways become one object, so
    the structures that hold them compare (and are interned) by identity, not factor by factor."""
    return term


canonical(ONE)  # first: the constant of the stages (``ONE``) is the canonical constant


def times(part: tuple[Term, ...], factor: Term) -> tuple[Term, ...]:
    """Each term of ``part`` times ``factor`` (:func:`multiplied`)."""
    return tuple(multiplied(t, factor) for t in part)


def rename_param(term: Term, old: str, new: str) -> Term:
    """``term`` with parameter ``old`` replaced by ``new`` (the ``x`` placeholder of families)."""
    return canonical(Term(tuple(replace(f, param=new) if f.param == old else f for f in term.factors)))


def uses_only(term: Term, params: set[str]) -> bool:
    """Whether every parameter of ``term`` is one of ``params``."""
    return term.params <= params


def unit_factor(term: Term, lowest: Mapping[str, float]) -> bool:
    """True when a factor ``over1(x)`` of ``term`` is 1 on every run (no run has x below 2): the term is
    then the same as without it, which the stage's list holds."""
    return any(isinstance(f, Over1) and lowest[f.param] >= 2 for f in term.factors)
