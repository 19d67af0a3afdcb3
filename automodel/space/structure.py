"""The candidate noun: a structure is a sum of terms, kept in its computation, communication and other parts.

adaptive-model-sanjay-slides.txt, slides 20-21 keep the parts apart so later stages can transform each one
(divide the computation part by a CPU function, multiply the communication part by a processor function).
The search scores structures (:mod:`automodel.search.score`), the store keeps them live
(:mod:`automodel.store`), the bands' calibration refits them (:mod:`automodel.model.calibration`).
"""

from __future__ import annotations

from dataclasses import dataclass

from automodel.space.terms import Term

__all__ = ["Structure"]


@dataclass(frozen=True)
class Structure:
    """A candidate model: ``sum(c * t for t in comp + comm + extra)`` (duplicates merged)."""

    comp: tuple[Term, ...] = ()
    comm: tuple[Term, ...] = ()
    extra: tuple[Term, ...] = ()
    #: fitted with coefficients of any sign (the PMNF route, as Extra-P fits), whatever the space's
    #: ``nonnegative``
    signed: bool = False

    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(dict.fromkeys(self.comp + self.comm + self.extra))

    @property
    def key(self) -> frozenset[Term]:
        return frozenset(self.terms)

    @property
    def parts(self) -> tuple[str, ...]:
        """The part of the run time each of :attr:`terms` models (adaptive-model-sanjay-slides.txt,
        slides 20-21): ``computation``, ``communication``, or ``overhead`` (the serial constant and
        the overhead P-terms); empty for a structure of extra terms only (the PMNF route)."""
        if not (self.comp or self.comm):
            return ()
        comp, comm = set(self.comp), set(self.comm)
        return tuple("computation" if t in comp else "communication" if t in comm else "overhead"
                     for t in self.terms)
