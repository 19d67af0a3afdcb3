"""The sympy symbols every model is written in: one positive real symbol per canonical parameter name."""

from __future__ import annotations

from functools import lru_cache

import sympy
from sympy.codegen.cfunctions import log2

__all__ = ["symbol", "log2"]


@lru_cache(maxsize=None)
def symbol(name: str) -> sympy.Symbol:
    """The symbol for parameter ``name`` (positive and real, so ``log2`` and powers simplify).

    Always build symbols through this function: sympy symbols with different assumptions are
    different symbols, and a model written with ``Symbol('n')`` would not match one written with
    ``symbol('n')``.
    """
    return sympy.Symbol(name, positive=True, real=True)
