"""Search spaces are data: read and validate a TOML file into a :class:`SearchSpace`.

The shipped spaces are package data, ``automodel/spaces/<name>.toml`` (in the wheel as in a checkout);
any other TOML file is given by its path.

Stage definitions, term families, top-K per stage, pruning percentile, ranking metric and fit options
all live in the file; this module only checks them, turns term strings into :class:`Term` objects and
each ``[stages.<name>]`` table into its typed config (:mod:`automodel.space.stages`, where the defaults
of every setting are).
"""

from __future__ import annotations

import functools
import stat
import tomllib
from dataclasses import dataclass, field, replace
from importlib.resources import files
from math import comb
from pathlib import Path
from typing import Any

from automodel.data.cells import shown
from automodel.errors import SpaceError
from automodel.files import read_text
from automodel.names import space_problem
from automodel.options import FitOptions
from automodel.solve.metrics import check_metric
from automodel.space.parse import parse_term
from automodel.space.stages import STAGE_CONFIGS, Group, StageConfig, kind_of, lowest_of
from automodel.space.terms import Term

__all__ = ["SearchSpace", "Group", "load_space", "check_fit", "space_path", "SPACES_DIR", "MAX_SETTING", "MAX_SUBSETS",
           "MAX_PMNF_PARAMETERS"]

#: the largest whole-number setting of a stage (top, budget, exhaustive, ...)
MAX_SETTING = 1_000_000
#: the most subsets of its term family (of 1 to ``max_terms`` terms) a stage may try per seed
MAX_SUBSETS = 100_000
#: the most parameters the PMNF route combines (2^L - 1 monomials: 15 for 4 parameters)
MAX_PMNF_PARAMETERS = 4

#: the search spaces shipped with automodel (package data)
SPACES_DIR = Path(str(files("automodel") / "spaces"))


@dataclass(frozen=True)
class SearchSpace:
    """A validated search space. ``stages`` maps the name of each stage the file holds to its typed
    config (:data:`automodel.space.stages.STAGE_CONFIGS`)."""

    name: str
    description: str
    fit: FitOptions
    stages: dict[str, StageConfig] = field(default_factory=dict)
    source: str = ""

    def stage(self, name: str) -> StageConfig:
        """The config of stage ``name``: the file's, or the defaults when the file has no such table."""
        return self.stages.get(name) or STAGE_CONFIGS[name]()


_FIT_KEYS = FitOptions.keys()


def space_path(name_or_file: str | Path) -> Path:
    """Resolve a space given by name (``default``) or by a path to a TOML file."""
    p = Path(name_or_file)
    if p.suffix == ".toml" or p.exists():
        return p
    candidate = SPACES_DIR / f"{name_or_file}.toml"
    if candidate.exists():
        return candidate
    known = sorted(f.stem for f in SPACES_DIR.glob("*.toml"))
    raise SpaceError(f"no search space named {str(name_or_file)!r}; known: {', '.join(known) or 'none'}, "
                     f"or give a path to a .toml file")


def _terms(value: Any, where: str) -> tuple[Term, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpaceError(f"{where}: expected a list of term strings")
    out = []
    for v in value:
        try:
            out.append(parse_term(v))
        except SpaceError as exc:
            raise SpaceError(f"{where}: {exc}") from None
    return tuple(out)


def _int(value: Any, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_SETTING:
        raise SpaceError(f"{where}: expected an integer from {low} to {MAX_SETTING:,}, got {shown(value)}")
    return value


def _check_subsets(stage: dict[str, Any], where: str, sname: str) -> None:
    """Refuse a ``max_terms`` whose subsets of the stage's term family (its base terms and group members;
    for PMNF the monomials of :data:`MAX_PMNF_PARAMETERS` parameters) are more than :data:`MAX_SUBSETS`:
    the search would build every one of them."""
    if "max_terms" not in stage:
        return
    if sname == "pmnf":
        family = 2 ** MAX_PMNF_PARAMETERS - 1
    else:
        family = len(stage.get("base", stage.get("terms", ()))) + sum(len(g.members) for g in stage.get("groups", ()))
    total, largest = 0, 0
    for k in range(1, min(stage["max_terms"], family) + 1):
        total += comb(family, k)
        if total > MAX_SUBSETS:
            raise SpaceError(f"{where} max_terms = {stage['max_terms']:,}: more than {MAX_SUBSETS:,} subsets of its "
                             f"{family} terms to try; expected at most {largest}")
        largest = k


def load_space(name_or_file: str | Path = "default") -> SearchSpace:
    """Read a search space by name or path; every problem is a one-line :class:`SpaceError`.

    A regular file is read once per process while its modification time and size stay the same
    (:func:`_cached_space`): ``observe`` loads its space on every call, and parsing the default one's
    terms cost 16 ms of the 28 an observe took."""
    path = space_path(name_or_file)
    try:
        status = path.stat()
    except OSError:  # not there, or a name too long: the reader says so in one line
        status = None
    if status is not None and stat.S_ISREG(status.st_mode):
        return _cached_space(str(path), status.st_mtime_ns, status.st_size)
    return _read_space(path)


@functools.lru_cache(maxsize=16)
def _cached_space(path: str, mtime_ns: int, size: int) -> SearchSpace:
    """:func:`_read_space` of the regular file ``path`` as it was at ``mtime_ns`` and ``size`` (a
    :class:`SearchSpace` is frozen; an error is raised, never cached)."""
    return _read_space(Path(path))


def _read_space(path: Path) -> SearchSpace:
    """The search space of the file at ``path``, every field checked."""
    src = str(path)
    text = read_text(path, "a search-space TOML file", SpaceError)
    try:
        raw = tomllib.loads(text)
    except (ValueError, RecursionError) as exc:  # ValueError: TOMLDecodeError, or an integer of 4,300+ digits
        raise SpaceError(f"{src}: not valid TOML ({str(exc).splitlines()[0].split(';')[0][:120]})") from None
    unknown = set(raw) - {"name", "description", "fit", "stages"}
    if unknown:
        raise SpaceError(f"{src}: unknown top-level key(s) {sorted(unknown)}; expected name, description, fit, stages")
    name = raw.get("name", path.stem)
    if not isinstance(name, str):
        raise SpaceError(f"{src}: 'name' must be a string")
    problem = space_problem(name)
    if problem is not None:  # the name goes into every model file and export of the space
        raise SpaceError(f"{src}: 'name' {'(the file name, as it has none) ' if 'name' not in raw else ''}"
                         f"{problem}")
    fit_raw = raw.get("fit", {})
    if not isinstance(fit_raw, dict):
        raise SpaceError(f"{src}: 'fit' must be a [fit] table, got {shown(fit_raw)}")
    if set(fit_raw) - _FIT_KEYS:
        raise SpaceError(f"{src}: [fit] has unknown key(s) {sorted(set(fit_raw) - _FIT_KEYS)}; "
                         f"expected {sorted(_FIT_KEYS)}")
    fit = check_fit(FitOptions(**fit_raw), f"{src}: [fit]")
    if not isinstance(fit.templates, (list, tuple)) or not all(isinstance(t, str) for t in fit.templates):
        raise SpaceError(f"{src}: [fit] templates must be a list of template names")
    opts = fit.template_options
    if not isinstance(opts, dict) or not all(isinstance(v, dict) for v in opts.values()):
        raise SpaceError(f"{src}: [fit.template_options] must hold one table per template, e.g. "
                         f"[fit.template_options.kohashi] n_terms = 6")
    fit = replace(fit, templates=tuple(fit.templates),
                  template_options={name: dict(values) for name, values in opts.items()})

    stages_raw = raw.get("stages", {})
    if not isinstance(stages_raw, dict) or not stages_raw:
        raise SpaceError(f"{src}: needs at least one [stages.<name>] table; known stages: {sorted(STAGE_CONFIGS)}")
    stages = {sname: _stage(sname, body, f"{src}: [stages.{sname}]") for sname, body in stages_raw.items()}
    description = raw.get("description", "")
    return SearchSpace(name, str(description), fit, stages, src)


def check_fit(fit: FitOptions, where: str) -> FitOptions:
    """``fit`` with its percentile a float, once its sign constraint, weighting, selection rule, metric,
    pruning percentile and survivors are values the search takes; else a one-line :class:`SpaceError`
    starting with ``where`` (a space file's ``[fit]``, a store's stored options)."""
    if not isinstance(fit.nonnegative, bool):
        raise SpaceError(f"{where} nonnegative must be true or false")
    fit.check(where)
    check_metric(fit.metric, where)
    pct = fit.prune_percentile
    if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 < pct <= 100:
        raise SpaceError(f"{where} prune_percentile must be a number in (0, 100], got {pct!r}")
    _int(fit.min_survivors, f"{where} min_survivors", 1)
    return replace(fit, prune_percentile=float(pct))


def _stage(sname: str, body: Any, where: str) -> StageConfig:
    """The typed config of the ``[stages.<sname>]`` table ``body``; every problem a one-line :class:`SpaceError`."""
    if sname not in STAGE_CONFIGS:
        raise SpaceError(f"{where}: unknown stage; known stages: {sorted(STAGE_CONFIGS)}")
    if not isinstance(body, dict):
        raise SpaceError(f"{where}: expected a table")
    config = STAGE_CONFIGS[sname]
    extra = set(body) - set(config.keys())
    if extra:
        raise SpaceError(f"{where}: unknown key(s) {sorted(extra)}; expected {sorted(config.keys())}")
    stage: dict[str, Any] = {}
    for key, value in body.items():
        kind = kind_of(config, key)
        if kind == "int":
            stage[key] = _int(value, f"{where} {key}", lowest_of(config, key))
        elif kind == "terms":
            stage[key] = _terms(value, f"{where} {key}")
        elif kind == "names":
            if not isinstance(value, list) or not all(isinstance(v, str) and v.isidentifier() for v in value):
                raise SpaceError(f"{where} {key}: expected a list of parameter names, got {value!r:.60}")
            stage[key] = tuple(value)
        else:
            stage[key] = _groups(value, where, sname, key)
    _check_subsets(stage, where, sname)
    return config(**stage)


def _groups(value: Any, where: str, sname: str, key: str) -> tuple[Group, ...]:
    """The ``[[stages.<sname>.groups]]`` tables ``value`` as :class:`Group` objects."""
    if not isinstance(value, list):
        raise SpaceError(f"{where} {key}: expected [[stages.{sname}.groups]] tables")
    groups = []
    for i, g in enumerate(value):
        gw = f"{where} group {i + 1}"
        if not isinstance(g, dict) or set(g) != {"representative", "members"}:
            raise SpaceError(f"{gw}: expected exactly the keys representative and members")
        groups.append(Group(_terms([g["representative"]], gw)[0], _terms(g["members"], gw)))
    return tuple(groups)
