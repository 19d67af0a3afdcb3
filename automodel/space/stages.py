"""The typed settings of each stage of the search: one frozen dataclass per stage, defaults in one place.

A search-space file (``automodel/spaces/*.toml``) holds one ``[stages.<name>]`` table per stage it runs;
:func:`automodel.space.config.load_space` checks each table against its dataclass here and builds it.
A setting a table leaves out takes the default written here. The numeric defaults are the values of the
shipped ``default`` space (``tests/test_space_config.py`` holds the two together); a term family left
out adds nothing (the constant for the load and processor functions, ``x`` for the extra parameters).

The stages themselves live in :mod:`automodel.search.stages`, one module each, run in the order of its
table :data:`automodel.search.stages.STAGES`; a new stage is a dataclass here, one line in
:data:`STAGE_CONFIGS`, its module there and its line in that table.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from automodel.space.parse import parse_term
from automodel.space.terms import ONE, Term

__all__ = ["Group", "StageConfig", "ComputationConfig", "CommunicationConfig", "ProcessorsConfig", "POnlyConfig",
           "ParametersConfig", "PmnfConfig", "STAGE_CONFIGS", "kind_of", "lowest_of"]


@dataclass(frozen=True)
class Group:
    """A group of related terms evaluated only when its representative made the top list."""

    representative: Term
    members: tuple[Term, ...]


def _setting(default: Any, kind: str, low: int = 1) -> Any:
    """A field of a stage config: its default, what the TOML value must be (``int``, ``terms``,
    ``groups`` or ``names``: a list of parameter names) and, for integers, the lowest allowed."""
    if isinstance(default, tuple):
        return field(default=default, metadata={"kind": kind})
    return field(default=default, metadata={"kind": kind, "low": low})


def kind_of(config: type[StageConfig], key: str) -> str:
    """What the TOML value of setting ``key`` of ``config`` must be (see :func:`_setting`)."""
    return {f.name: f.metadata["kind"] for f in fields(config)}[key]


def lowest_of(config: type[StageConfig], key: str) -> int:
    """The lowest allowed value of the integer setting ``key`` of ``config``."""
    return {f.name: f.metadata.get("low", 1) for f in fields(config)}[key]


@dataclass(frozen=True)
class StageConfig:
    """Base of the stage configs; :meth:`keys` are the settings a ``[stages.<name>]`` table may hold."""

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def settings(self) -> dict[str, Any]:
        """Setting name -> value."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ComputationConfig(StageConfig):
    """Stage 1 (adaptive-model-sanjay-slides.txt, slide 18): up to ``max_terms`` terms f(n) of ``base``
    (and the ``groups`` expanded around their representatives, slides 25-26), each divided by every
    ``load`` function; the ``top`` best survive."""

    max_terms: int = _setting(2, "int")
    top: int = _setting(16, "int")
    load: tuple[Term, ...] = _setting((ONE,), "terms")
    base: tuple[Term, ...] = _setting((), "terms")
    groups: tuple[Group, ...] = _setting((), "groups")


@dataclass(frozen=True)
class CommunicationConfig(StageConfig):
    """Stage 2 (slide 19): each surviving computation model plus up to ``max_terms`` terms g(n), each
    divided by every ``load`` function; ``template_list`` > 0 turns on the cache of slide 26."""

    max_terms: int = _setting(1, "int")
    top: int = _setting(16, "int")
    load: tuple[Term, ...] = _setting((ONE,), "terms")
    base: tuple[Term, ...] = _setting((), "terms")
    groups: tuple[Group, ...] = _setting((), "groups")
    template_list: int = _setting(0, "int", low=0)


@dataclass(frozen=True)
class ProcessorsConfig(StageConfig):
    """Stage 3 (slides 20-21): the computation part times each of ``computation``, the communication part
    times each of ``communication``, then one ``overhead`` term; trained on ``p >= p_min``."""

    top: int = _setting(24, "int")
    computation: tuple[Term, ...] = _setting((), "terms")
    communication: tuple[Term, ...] = _setting((), "terms")
    overhead: tuple[Term, ...] = _setting((), "terms")
    p_min: int = _setting(1, "int")
    template_list: int = _setting(0, "int", low=0)


@dataclass(frozen=True)
class POnlyConfig(StageConfig):
    """Without ``n``: up to ``max_terms`` of the P-terms ``terms`` (bayesian-kohashi-2022.txt, eqs. 1-6)."""

    max_terms: int = _setting(3, "int")
    top: int = _setting(24, "int")
    terms: tuple[Term, ...] = _setting((), "terms")


@dataclass(frozen=True)
class ParametersConfig(StageConfig):
    """Extra parameters: each part of a model times each of ``functions`` (``x`` for the parameter)."""

    top: int = _setting(16, "int")
    functions: tuple[Term, ...] = _setting((parse_term("x"),), "terms")


@dataclass(frozen=True)
class PmnfConfig(StageConfig):
    """Extra-P's hypothesis space (Calotoiu et al., SC'13): the building blocks ``terms`` of each
    parameter, its ``per_parameter`` best combined into at most ``max_terms`` terms besides the constant,
    every block where that gives at most ``exhaustive`` candidates, at most ``budget`` per target;
    skipped for data with a parameter of ``unless``."""

    top: int = _setting(24, "int")
    terms: tuple[Term, ...] = _setting((), "terms")
    per_parameter: int = _setting(3, "int")
    max_terms: int = _setting(3, "int")
    exhaustive: int = _setting(2000, "int")
    unless: tuple[str, ...] = _setting((), "names")
    budget: int = _setting(8000, "int")


#: stage name -> its config class: the stages a search-space file may hold
STAGE_CONFIGS: dict[str, type[StageConfig]] = {
    "computation": ComputationConfig,
    "communication": CommunicationConfig,
    "processors": ProcessorsConfig,
    "p_only": POnlyConfig,
    "parameters": ParametersConfig,
    "pmnf": PmnfConfig,
}
