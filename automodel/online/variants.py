"""Candidate variants: a structure with its computation and communication parts divided, or not, by the loads."""

from __future__ import annotations

from typing import Iterable

from automodel.space.structure import Structure
from automodel.space.terms import Term, power

__all__ = ["load_variants"]


def load_variants(structures: Iterable[Structure], params: Iterable[str]) -> list[Structure]:
    """Each structure plus its variants with the computation part divided (or not) by ``cpu`` and the
    communication part divided (or not) by ``bw`` (rational-polynomial-yagnik-icpp2006.txt, eq. 5):
    a load that was constant so far may change, so both forms stay alive."""
    params = set(params)

    def toggle(part: tuple[Term, ...], load: str) -> tuple[Term, ...]:
        return tuple(t * power(load, 1 if load in t.params else -1) for t in part)

    out: dict = {}
    for s in structures:
        comps = [s.comp, toggle(s.comp, "cpu")] if "cpu" in params and s.comp else [s.comp]
        comms = [s.comm, toggle(s.comm, "bw")] if "bw" in params and s.comm else [s.comm]
        for c in comps:
            for g in comms:
                v = Structure(c, g, s.extra)
                out.setdefault(v.key, v)
    return list(out.values())
