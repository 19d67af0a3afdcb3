"""The staged search of the adaptive model (adaptive-model-sanjay-slides.txt, slides 18-22, 25-26).

1. computation: on the runs with the lowest process count, every combination of up to ``max_terms``
   computation terms f(n), alone and divided by the CPU function(s); rank; prune; keep the top.
   Cheap families are evaluated first and a group of related terms is expanded only when its
   representative made the top list (slides 25-26).
2. communication: on the next process-count level, each surviving computation model fixed plus every
   communication term g(n), alone and divided by the bandwidth function(s); rank; prune; keep the top.
3. processors: on all runs, the computation part times each processor function, then the
   communication part times each processor function, then an optional overhead P-term.
Extra parameters multiply each part by a function of the parameter. Without ``n`` the search fits
the P-term models of bayesian-kohashi-2022.txt (eqs. 1-6). Every stage records which rows it used and
what it skipped and why.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from itertools import combinations, product
from math import comb
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from automodel.data import Dataset
from automodel.errors import DataError
from automodel.options import METRICS
from automodel.printing import terms_text
from automodel.search.score import Scores, Structure, TermCache, score
from automodel.search.prune import prune, rank
from automodel.space.config import SearchSpace
from automodel.space.parse import parse_term
from automodel.space.terms import ONE, Term

Followup = Callable[[Scores], list[Structure]]
#: the most parameters the PMNF route combines (2^L - 1 monomials: 15 for 4 parameters)
MAX_PMNF_PARAMETERS = 4

__all__ = ["StageReport", "TemplateLists", "SearchOutcome", "staged_search", "holdout_rows"]


@dataclass
class StageReport:
    """What one stage did: on which rows, how many candidates it fitted, kept and deleted."""

    name: str
    rows: str
    n_rows: int
    n_candidates: int = 0
    n_fits: int = 0
    n_deleted: int = 0
    n_kept: int = 0
    note: str = ""

    def line(self) -> str:
        text = (f"{self.name:<14} rows: {self.rows} ({self.n_rows})  fitted {self.n_candidates}, "
                f"deleted {self.n_deleted}, kept {self.n_kept}")
        return text + (f"  [{self.note}]" if self.note else "")


@dataclass
class SearchOutcome:
    """Final candidates scored on all rows, best first, and the stage reports."""

    scores: Scores
    order: np.ndarray
    reports: list[StageReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: whether a stage built its candidates from an earlier stage's survivors (so the candidates depend
    #: on the measured times); False: the same candidates for any times (kernels are solved batched)
    adaptive: bool = True


def _rename(term: Term, old: str, new: str) -> Term:
    """``term`` with parameter ``old`` replaced by ``new`` (the ``x`` placeholder of families)."""
    return Term(tuple(replace(f, param=new) if f.param == old else f for f in term.factors))


def _uses(term: Term, params: set[str]) -> bool:
    return term.params <= params


class _Search:
    """State of one staged search: the dataset, its term cache, the options, the reports."""

    def __init__(self, ds: Dataset, space: SearchSpace, progress: bool) -> None:
        self.ds = ds
        self.space = space
        self.opt = space.fit
        self.y = ds.frame["time"].to_numpy(float)
        self.cache = TermCache(ds.columns(), ds.n_points)
        self.params = set(ds.params)
        self.reports: list[StageReport] = []
        self.notes: list[str] = []
        self.final: list[Scores] = []
        self.adaptive = False
        self.bar = tqdm(total=6, desc="staged search", unit="stage", delay=1.0, disable=not progress,
                        leave=False)

    # -- helpers -------------------------------------------------------------------------------
    def terms(self, stage: str, key: str, default: tuple[Term, ...] = ()) -> tuple[Term, ...]:
        """The stage's terms that only use parameters this dataset has."""
        return tuple(t for t in self.space.stages.get(stage, {}).get(key, default) if _uses(t, self.params))

    def run(self, name: str, rows: np.ndarray, rows_text: str, structures: list[Structure],
            top: int, note: str = "", final: bool = False, then: Followup | None = None
            ) -> tuple[list[Structure], Scores | None]:
        """Score structures on rows, prune by percentile, keep the top; record the stage.

        A structure with as many terms as the rows have configurations (no residual degree of
        freedom: its score is undefined) is not fitted; the report says how many were skipped.
        ``then`` (the template-list cache, :class:`TemplateLists`) is given the scored structures and
        returns more to score before the stage prunes them all together.
        """
        n_rows = int(np.count_nonzero(rows))
        report = StageReport(name, rows_text, n_rows, note=note)
        self.reports.append(report)
        self.bar.update(1)
        unique: list[Structure] = []
        parts: list[Scores] = []
        skipped = 0

        def fit(batch: list[Structure]) -> Scores | None:  # the new ones with a residual dof, scored
            nonlocal skipped
            seen = {s.key for s in unique}
            fresh = list({s.key: s for s in batch if s.key not in seen}.values())
            supported = [s for s in fresh if len(s.terms) < n_rows]
            skipped += len(fresh) - len(supported)
            if not supported:
                return None
            unique.extend(supported)
            parts.append(score(self.cache, rows, self.y, supported, self.opt.weighting, self.opt.nonnegative,
                               with_loo=final or METRICS[self.opt.metric].leverages,
                               holdout=holdout_rows(self.ds, rows)))
            return parts[-1]

        first = fit(structures)
        if then is not None and first is not None:
            fit(then(first))
        if skipped:
            wide = f"{skipped} with {n_rows}+ terms not fitted on {n_rows} rows"
            report.note = f"{report.note}; {wide}" if report.note else wide
        report.n_candidates = len(unique)
        if then is not None:
            report.note = "; ".join(filter(None, [report.note, then.note()]))
            self.notes.append(f"{name}: {then.note()}")
        if not unique:
            return [], None
        sc = Scores.concat(parts)
        report.n_fits = sc.n_fits
        kept, n_deleted = prune(sc.metric(self.opt.metric), self.opt.prune_percentile,
                                self.opt.min_survivors, top)
        report.n_deleted, report.n_kept = n_deleted, len(kept)
        if final:
            self.final.append(sc)
        return [unique[i] for i in kept], sc


class TemplateLists:
    """The template-list cache of adaptive-model-sanjay-slides.txt, slide 26.

    The seeds of a stage (models from the previous stage, best first) fall into families (for the
    communication stage: which of the representative polynomial groups their computation part
    belongs to; for the processor stage: that and the communication part). The first seed of a
    family is fitted with every addition of the stage (communication terms, processor functions);
    the ``size`` additions that ranked best for it form the family's template list, and the other
    seeds of the family are fitted with that list only. Seeds of no family get every addition.

    Parameters
    ----------
    seeds : list of Structure
        The stage's seeds, best first.
    additions : list
        What the stage adds to a seed, in any form ``make`` understands.
    make : callable
        ``make(seed, addition) -> Structure``.
    family : callable
        ``family(seed)``: a hashable family key, or None for a seed of no family.
    size : int
        Length of a template list.
    metric : str
        The metric that ranks a representative's candidates.
    """

    def __init__(self, seeds: list[Structure], additions: list, make: Callable[[Structure, Any], Structure],
                 family: Callable[[Structure], Hashable | None], size: int, metric: str) -> None:
        self.seeds, self.additions, self.make = seeds, additions, make
        self.size, self.metric = size, metric
        self.families = [family(s) for s in seeds]
        self.leader: dict[Hashable, int] = {}
        for i, f in enumerate(self.families):
            if f is not None:
                self.leader.setdefault(f, i)
        self.n_first = self.n_rest = 0

    def first(self) -> list[Structure]:
        """Every addition to the seeds that lead a family or have none."""
        out = [self.make(s, a) for i, s in enumerate(self.seeds)
               if self.families[i] is None or self.leader[self.families[i]] == i for a in self.additions]
        self.n_first = len(out)
        return out

    def __call__(self, scored: Scores) -> list[Structure]:
        """The other seeds of each family with its template list, ranked on ``scored``."""
        value = dict(zip((s.key for s in scored.structures), scored.metric(self.metric)))
        lists = {}
        for f, i in self.leader.items():
            ranks = [value.get(self.make(self.seeds[i], a).key, np.inf) for a in self.additions]
            best = rank(np.asarray(ranks, float))[:self.size]
            lists[f] = [self.additions[j] for j in best if np.isfinite(ranks[j])]
        out = [self.make(s, a) for i, s in enumerate(self.seeds)
               if self.families[i] is not None and self.leader[self.families[i]] != i
               for a in lists[self.families[i]]]
        self.n_rest = len(out)
        return out

    def note(self) -> str:
        full = len(self.seeds) * len(self.additions)
        done = self.n_first + self.n_rest
        return (f"template-list cache (slide 26): {len(self.leader)} list(s) of {self.size}, "
                f"{done} candidates instead of {full} (saved {full - done})")


def holdout_rows(ds: Dataset, rows: np.ndarray | None = None) -> np.ndarray | None:
    """The largest configurations among ``rows`` (default all) of ``ds``: the top level of every
    parameter but the loads (each when it has at least 3 levels there), held out for the
    forward-extrapolation metric; None when nothing qualifies or fewer than 3 rows would be left."""
    rows = np.ones(ds.n_points, bool) if rows is None else rows
    hold = np.zeros(len(rows), bool)
    for q in ds.params:
        if q not in ("cpu", "bw"):
            v = ds.frame[q].to_numpy()
            if len(np.unique(v[rows])) >= 3:
                hold |= rows & (v == v[rows].max())
    left = int(np.count_nonzero(rows & ~hold))
    return hold if hold.any() and left >= 3 else None


def _subsets(terms: tuple[Term, ...], max_terms: int, min_terms: int = 1) -> list[tuple[Term, ...]]:
    return [c for k in range(min_terms, max_terms + 1) for c in combinations(terms, k)]


def _times(part: tuple[Term, ...], factor: Term) -> tuple[Term, ...]:
    return tuple(t * factor for t in part)


def _part_stage(S: _Search, name: str, rows: np.ndarray, rows_text: str, seeds: list[Structure],
                part: str, multipliers: tuple[Term, ...], final: bool, note: str = ""
                ) -> list[Structure]:
    """Stages 1 and 2: add subsets of a term family (times a load function) to every seed structure.

    Evaluates the base family first; a group is expanded only when its representative appears in a
    surviving candidate (slides 25-26). Records how many fits that saved against the full family.
    """
    cfg = S.space.stages.get(name, {})
    base = S.terms(name, "base")
    groups = _groups(S, name)
    max_terms = min(cfg.get("max_terms", 2), max(1, int(np.count_nonzero(rows)) - 3))
    loads = tuple(m for m in cfg.get("load", (ONE,)) if _uses(m, S.params)) or (ONE,)
    min_terms = 0 if part == "comm" else 1

    # the constant is the serial part: never divided by a load nor multiplied by a processor function
    intercepts = ((), (ONE,)) if ONE in base else ((),)
    base = tuple(t for t in base if t != ONE)

    def make(seed: Structure, add: tuple) -> Structure:
        sub, load, mult, icpt = add
        terms = _times(_times(sub, load), mult)
        return (Structure(seed.comp + terms, seed.comm, seed.extra + icpt) if part == "comp" else
                Structure(seed.comp, seed.comm + terms, seed.extra + icpt))

    additions = [(sub, load, mult, icpt) for sub in _subsets(base, max_terms, min_terms)
                 for load in loads for mult in multipliers for icpt in intercepts]
    comp_groups = _groups(S, "computation")
    lists = None
    if part == "comm" and cfg.get("template_list", 0) and comp_groups:
        lists = TemplateLists(seeds, additions, make, lambda s: _family(s.comp, comp_groups),
                              cfg["template_list"], S.opt.metric)
    survivors, _ = S.run(name, rows, rows_text, lists.first() if lists else
                         [make(seed, a) for seed in seeds for a in additions],
                         cfg.get("top", 16), note, final, then=lists)
    fitted = S.reports[-1].n_candidates
    if not survivors and part == "comm":  # hand on what the stage got: the computation models
        S.notes.append(f"{name}: no candidate could be fitted on {rows_text}; the computation models "
                       "go on without communication terms")
        return seeds
    def part_of(s: Structure) -> tuple[Term, ...]:
        return s.comp if part == "comp" else s.comm

    def with_part(s: Structure, new: tuple[Term, ...]) -> Structure:
        return Structure(new, s.comm, s.extra) if part == "comp" else Structure(s.comp, new, s.extra)

    expanded: list[Structure] = []
    hit_groups = []
    for g in groups:
        hits = [s for s in survivors if any(_contains(t, g.representative) for t in part_of(s))]
        if hits:
            hit_groups.append(terms_text([g.representative]))
        expanded += [with_part(s, tuple(_swap(t, g.representative, member) for t in part_of(s)))
                     for s in hits for member in g.members]
    if expanded:
        survivors, _ = S.run(name + "+groups", rows, rows_text, survivors + expanded, cfg.get("top", 16),
                             "groups expanded around: " + ", ".join(hit_groups), final)
        fitted += S.reports[-1].n_candidates
    if groups:
        all_terms = len(base) + sum(len(g.members) for g in groups)
        full = len(seeds) * len(loads) * len(multipliers) * len(intercepts) * sum(
            comb(all_terms, k) for k in range(min_terms, max_terms + 1))
        S.notes.append(f"{name}: overhead reduction fitted {fitted} candidates instead of {full} "
                       f"(saved {full - fitted}, {100 * (full - fitted) / max(full, 1):.0f}%)")
    return survivors


def _groups(S: _Search, stage: str) -> list:
    """The stage's term groups whose representative uses only parameters of the data."""
    return [g for g in S.space.stages.get(stage, {}).get("groups", ()) if _uses(g.representative, S.params)]


def _family(part: tuple[Term, ...], groups: list) -> frozenset[int] | None:
    """Which of ``groups`` (a representative and its members) the terms of ``part`` belong to; None
    when none: the family of a seed in the template-list cache (:class:`TemplateLists`)."""
    hits = frozenset(i for i, g in enumerate(groups) for t in part
                     if any(_contains(t, r) for r in (g.representative, *g.members)))
    return hits or None


def _contains(term: Term, rep: Term) -> bool:
    """Whether ``term`` is ``rep`` times only non-``n`` factors (loads, processor functions)."""
    rest = [f for f in term.factors if f not in rep.factors]
    return all(f in term.factors for f in rep.factors) and all(
        f.param not in rep.params for f in rest)


def _swap(term: Term, rep: Term, member: Term) -> Term:
    if not _contains(term, rep):
        return term
    return Term(tuple(f for f in term.factors if f not in rep.factors)) * member


def _stage_processors(S: _Search, seeds: list[Structure], rows: np.ndarray, final: bool) -> list[Structure]:
    """Stage 3 on ``rows``, or, with ``p_min`` in the space's ``[stages.processors]``, on the runs with
    ``p >= p_min`` (the slides train the processor functions on p = 2, 4, 8: adaptive-model-sanjay-
    slides.txt, slides 20-21), its survivors then scored on ``rows`` for the ranking."""
    cfg = S.space.stages.get("processors", {})
    top = cfg.get("top", 24)
    comp_f = S.terms("processors", "computation") or (ONE,)
    comm_f = S.terms("processors", "communication") or (ONE,)
    over = S.terms("processors", "overhead")
    p_min = cfg.get("p_min", 1)
    stage_rows, text, own = rows, "all runs", final
    if p_min > 1:
        subset = rows & (S.ds.frame["p"].to_numpy(float) >= p_min)
        if np.count_nonzero(subset) > max(len(s.terms) for s in seeds) + 2:
            stage_rows, text, own = subset, f"p >= {p_min}", False
        else:
            S.notes.append(f"processors: too few runs with p >= {p_min}; all runs used")
    size, comp_groups, comm_groups = cfg.get("template_list", 0), _groups(S, "computation"), _groups(S, "communication")

    def family(s: Structure) -> tuple | None:  # the computation and communication models' families
        comp = _family(s.comp, comp_groups)
        comm = _family(s.comm, comm_groups) if comm_groups else frozenset(s.comm)
        return None if comp is None or comm is None else (comp, comm)

    def times(s: Structure, f: Term) -> Structure:
        return Structure(_times(s.comp, f), s.comm, s.extra)

    def comm_times(s: Structure, f: Term) -> Structure:
        return Structure(s.comp, _times(s.comm, f), s.extra)

    def stage(name: str, base: list[Structure], functions: tuple[Term, ...], make: Callable
              ) -> tuple[list[Structure], list[Structure]]:
        lists = (TemplateLists(base, list(functions), make, family, size, S.opt.metric)
                 if size and comp_groups else None)
        first = lists.first() if lists else [make(s, f) for s in base for f in functions]
        kept, sc = S.run(name, stage_rows, text, first, top, final=own, then=lists)
        return kept, [] if sc is None else list(sc.structures)

    kept, scored = stage("processors/comp", seeds, comp_f, times)
    if any(s.comm for s in kept):
        kept, more = stage("processors/comm", kept, comm_f, comm_times)
        scored += more
    if over:
        s3c = kept + [Structure(s.comp, s.comm, s.extra + (f,)) for s in kept for f in over]
        kept, _ = S.run("processors/overhead", stage_rows, text, s3c, top, final=own)
        scored += s3c
    if final and not own:  # everything the stage scored, ranked on all runs (as the final stages are)
        S.run("processors/rank", rows, "all runs", scored, len(scored), final=True)
    return kept


def _stage_parameters(S: _Search, seeds: list[Structure], rows: np.ndarray) -> list[Structure]:
    cfg = S.space.stages.get("parameters", {})
    funcs = cfg.get("functions", (parse_term("x"),))
    kept = seeds
    for x in S.ds.extra_params:
        hs = [_rename(h, "x", x) for h in funcs]
        cands = []
        for s in kept:
            for h in hs:
                cands.append(Structure(_times(s.comp, h), s.comm, s.extra))
                if s.comm:
                    cands.append(Structure(s.comp, _times(s.comm, h), s.extra))
                    cands.append(Structure(_times(s.comp, h), _times(s.comm, h), s.extra))
        kept, _ = S.run(f"parameters/{x}", rows, "all runs", cands, cfg.get("top", 16), final=True)
    return kept


def _line_rows(ds: Dataset, x: str, xs: list[str]) -> tuple[np.ndarray, str]:
    """The rows on which parameter ``x`` alone varies: the configurations whose other parameters of
    ``xs`` hold the values with the most distinct ``x`` (the smallest values on a tie), as Extra-P's
    multi-parameter modeler models each parameter on a line of the grid; all rows when no such line
    has 3 distinct ``x``."""
    frame = ds.frame
    others = [q for q in xs if q != x]
    if not others:
        return np.ones(len(frame), bool), "all runs"
    counts = frame.groupby(others, sort=True)[x].nunique()
    best = counts.idxmax() if counts.max() >= 3 else None
    if best is None:
        return np.ones(len(frame), bool), "all runs"
    values = best if isinstance(best, tuple) else (best,)
    mask = np.logical_and.reduce([frame[q].to_numpy() == v for q, v in zip(others, values)])
    return mask, ", ".join(f"{q} = {v:g}" for q, v in zip(others, values))


def _collections(names: list[str], max_terms: int) -> list[tuple[frozenset[str], ...]]:
    """Every set of at most ``max_terms`` monomials (non-empty subsets of ``names``) that together
    use every name: the ways to combine one term per parameter by sums and products (for x, y:
    f + g, f g, f + f g, g + f g, f + g + f g)."""
    monomials = [frozenset(c) for k in range(1, len(names) + 1) for c in combinations(names, k)]
    full = frozenset(names)
    return [c for k in range(1, max_terms + 1) for c in combinations(monomials, k)
            if frozenset().union(*c) == full]


def _stage_pmnf(S: _Search, rows: np.ndarray) -> None:
    """Extra-P's hypothesis space on every parameter, whatever its name (not ``cpu``/``bw``): the
    performance model normal form c0 + sum_k c_k prod_l x_l^(i_kl/j_kl) log2^(h_kl)(x_l) (Calotoiu
    et al., SC'13, eq. 1), with signed coefficients and the constant model.

    Each parameter's building blocks (``terms``, with ``x`` for the parameter) are first ranked alone
    on the line of the grid where only that parameter varies; its ``per_parameter`` best (the
    constant, i.e. "no effect", among them when it ranks there) are then combined by sums and
    products across parameters into candidates of at most ``max_terms`` terms besides c0, scored on
    all rows. Where every block of every parameter gives at most ``exhaustive`` combined candidates,
    all blocks are combined (an exhaustive search).
    """
    cfg = S.space.stages["pmnf"]
    blocks = cfg.get("terms", ())
    xs = [x for x in S.ds.params if x not in ("cpu", "bw")]
    if not xs or len(xs) > MAX_PMNF_PARAMETERS:
        S.notes.append(f"pmnf: {len(xs)} parameters (other than cpu and bw); the PMNF route combines 1 to "
                       f"{MAX_PMNF_PARAMETERS}: skipped")
        return
    max_terms = cfg.get("max_terms", 3)
    per = {x: tuple(_rename(b, "x", x) for b in blocks) for x in xs}

    def alone(x: str) -> list[Structure]:  # the constant, and the constant plus one block of x
        return [Structure(extra=(ONE,), signed=True)] + [Structure(extra=(ONE, t), signed=True) for t in per[x]]

    if len(xs) == 1:
        S.run(f"pmnf/{xs[0]}", rows, "all runs", alone(xs[0]), cfg.get("top", 42), final=True)
        return
    n_collections = len(_collections(xs, max_terms))
    exhaustive = (int(np.prod([len(per[x]) + 1 for x in xs], dtype=float)) * n_collections
                  <= cfg.get("exhaustive", 20_000))
    lead: dict[str, list[Term | None]] = {}
    S.adaptive = S.adaptive or not exhaustive
    for x in xs:
        if exhaustive:
            lead[x] = [None, *per[x]]
            continue
        line, text = _line_rows(S.ds, x, xs)
        kept, _ = S.run(f"pmnf/{x}", rows & line, text, alone(x), cfg.get("per_parameter", 3))
        lead[x] = [s.extra[1] if len(s.extra) > 1 else None for s in kept] or [None]
    budget = cfg.get("budget", 8000)
    while int(np.prod([len(v) for v in lead.values()])) * n_collections > budget:  # bounded: drop the
        longest = max(xs, key=lambda q: len(lead[q]))                            # worst lead of the
        if len(lead[longest]) == 1:                                               # longest list
            break
        lead[longest] = lead[longest][:-1]
    cands = [Structure(extra=(ONE,), signed=True)]
    for choice in product(*(lead[x] for x in xs)):
        used = [x for x, t in zip(xs, choice) if t is not None]
        if not used:
            continue
        term_of = dict(zip(xs, choice))
        for collection in _collections(used, max_terms):
            monomials = []
            for mono in collection:
                term = ONE
                for x in sorted(mono, key=xs.index):
                    term = term * term_of[x]
                monomials.append(term)
            cands.append(Structure(extra=(ONE, *monomials), signed=True))
    S.run("pmnf/combined", rows, "all runs" + (" (exhaustive)" if exhaustive else ""), cands,
          cfg.get("top", 42), final=True)


def staged_search(ds: Dataset, space: SearchSpace, progress: bool = True) -> SearchOutcome:
    """Run the staged search of ``space`` on ``ds``; see the module docstring."""
    S = _Search(ds, space, progress)
    all_rows = np.ones(ds.n_points, bool)
    if ds.n_points < 3:
        raise DataError(f"{ds.source}: {ds.n_points} distinct configuration(s); the search needs at least 3")
    has_n = "n" in S.params
    p_levels = np.unique(ds.frame["p"]) if "p" in S.params else np.array([])
    has_p = len(p_levels) >= 2
    if "p" in S.params and not has_p:
        S.notes.append(f"a single p level (p = {p_levels[0]:g}): processor stage skipped")

    try:
        if not {"computation", "communication", "processors", "p_only", "parameters"} & set(space.stages):
            pass  # the PMNF route alone (the pmnf space)
        elif has_n:
            _search_with_n(S, p_levels, has_p, all_rows)
        elif has_p:
            cfg = space.stages.get("p_only", {})
            terms = S.terms("p_only", "terms")
            max_terms = min(cfg.get("max_terms", 4), ds.n_points - 2)
            S.notes.append("no n: p-only models (bayesian-kohashi-2022.txt, eqs. 1-6); "
                           "computation and communication stages skipped")
            kept, _ = S.run("p_only", all_rows, "all runs", [Structure(c) for c in _subsets(terms, max_terms)],
                            cfg.get("top", 24), final=True)
            if ds.extra_params:
                S.adaptive = True
                _stage_parameters(S, kept, all_rows)
        elif ds.extra_params:
            S.adaptive = S.adaptive or len(ds.extra_params) > 1
            S.notes.append("no n and no p: models in the extra parameters only")
            _stage_parameters(S, [Structure((ONE,))], all_rows)
        else:
            raise DataError(f"{ds.source}: no parameter column (n, p or an extra parameter) to model time with")
        pmnf = space.stages.get("pmnf")  # after the staged search: on a tie its non-negative twin ranks first
        if pmnf is not None and not set(pmnf.get("unless", ())) & S.params:
            _stage_pmnf(S, all_rows)
    finally:
        S.bar.close()

    return _final(S)


def _search_with_n(S: _Search, p_levels: np.ndarray, has_p: bool, all_rows: np.ndarray) -> None:
    S.adaptive = True
    ds = S.ds
    frame = ds.frame
    joint = False
    if has_p:
        rows1 = (frame["p"] == p_levels[0]).to_numpy()
        text1 = f"p = {p_levels[0]:g}"
        if frame.loc[rows1, "n"].nunique() < 3:
            joint = True
            S.notes.append(f"only {frame.loc[rows1, 'n'].nunique()} distinct n at the lowest p "
                           f"(p = {p_levels[0]:g}): computation and communication stages run on all runs "
                           "together with the processor functions")
    else:
        rows1, text1 = all_rows, "all runs"
        S.notes.append(("no p column" if "p" not in S.params else "one p level") +
                       ": computation and communication stages both use all runs")

    if joint:
        comp_f = S.terms("processors", "computation") or (ONE,)
        comm_f = S.terms("processors", "communication") or (ONE,)
        seeds = _part_stage(S, "computation", all_rows, "all runs", [Structure()], "comp", comp_f, True)
        seeds = _part_stage(S, "communication", all_rows, "all runs", seeds, "comm", comm_f, True)
        over = S.terms("processors", "overhead")
        if over:
            s3c = seeds + [Structure(s.comp, s.comm, s.extra + (f,)) for s in seeds for f in over]
            seeds, _ = S.run("processors/overhead", all_rows, "all runs", s3c,
                             S.space.stages.get("processors", {}).get("top", 24), final=True)
    else:
        single = not has_p
        seeds = _part_stage(S, "computation", rows1, text1, [Structure()], "comp", (ONE,), single)
        if not seeds:
            raise DataError(f"{ds.source}: no computation model could be fitted on the "
                            f"{int(rows1.sum())} configurations at {text1}")
        if has_p:
            rows2, text2, note = _communication_rows(frame, p_levels, min(len(s.terms) for s in seeds) + 2)
        else:
            rows2, text2, note = all_rows, "all runs", ""
        seeds = _part_stage(S, "communication", rows2, text2, seeds, "comm", (ONE,), single, note)
        if has_p:
            seeds = _stage_processors(S, seeds, all_rows, final=True)
    if ds.extra_params:
        _stage_parameters(S, seeds, all_rows)


def _communication_rows(frame, p_levels: np.ndarray, need: int) -> tuple[np.ndarray, str, str]:
    """Rows of the communication stage: the second-lowest p level when it has at least 3 distinct n
    and ``need`` configurations (the narrowest computation model, one communication term and one
    residual degree of freedom); else the lowest levels together, as few as give that (all runs at most)."""
    p, n = frame["p"].to_numpy(), frame["n"].to_numpy()
    second = p_levels[1]
    options = [(p == second, f"p = {second:g}")] + [(p <= level, f"p <= {level:g}") for level in p_levels[1:]]
    for i, (rows, text) in enumerate(options):
        if np.unique(n[rows]).size >= 3 and rows.sum() >= need:
            why = "" if i == 0 else (f"too few distinct n or configurations at p = {second:g} for the "
                                     f"computation models and a communication term: the {i + 1} lowest "
                                     "p levels together")
            return rows, text, why
    return np.ones(len(p), bool), "all runs", "too few configurations at any p level: all runs"


def _final(S: _Search) -> SearchOutcome:
    """Merge every stage scored on all runs; keep the best score per distinct term set (none when no
    stage could fit a candidate on all runs: the caller says so, with what else it has)."""
    if not S.final:
        empty = Scores([], np.zeros((0, 0)), {m: np.zeros(0) for m in METRICS}, np.zeros(0, int))
        return SearchOutcome(empty, np.zeros(0, int), S.reports, S.notes, S.adaptive)
    merged = Scores.concat(S.final)
    structures, coefs = merged.structures, merged.coefficients
    order = rank(merged.metric(S.opt.metric))
    seen: set = set()
    unique = []
    for i in order:  # drop duplicates: the same non-zero terms scored by two stages or zeroed by NNLS
        terms = structures[i].terms
        key = frozenset(t for t, c in zip(terms, coefs[i]) if c != 0.0)
        if key not in seen and merged.valid[i]:
            seen.add(key)
            unique.append(i)
    return SearchOutcome(merged, np.array(unique, dtype=int), S.reports, S.notes, S.adaptive)
