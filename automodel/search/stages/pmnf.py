"""The PMNF route: Extra-P's hypothesis space on every parameter, whatever its name (Calotoiu et al., SC'13)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, product

import numpy as np

from automodel.data import Dataset
from automodel.options import weights
from automodel.search.canonical import multiplied, rename_param
from automodel.search.outcome import StageReport
from automodel.search.registry import ragged
from automodel.space.structure import Structure
from automodel.search.state import Search
from automodel.solve.lines import effect_pvalue, line_rss
from automodel.space.config import MAX_PMNF_PARAMETERS
from automodel.search.stages.base import PMNF, Branch, Shape, Stage
from automodel.space.stages import PmnfConfig
from automodel.space.terms import ONE, Term

__all__ = ["stage_pmnf", "NO_EFFECT_P", "run", "applies", "STAGE"]


def _lines(ds: Dataset, x: str, xs: list[str], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, str]:
    """The lines of the grid in ``x`` among ``rows``: the runs whose other parameters of ``xs`` (at least
    one) are fixed.

    Returns each run's line (int labels), which runs lie on a line with at least 3 distinct ``x`` (the
    lines a block of ``x`` is judged on), how many such lines, and a text for the report ("25 line(s)").
    When no line has 3 distinct ``x``, all ``rows`` form one line."""
    frame = ds.frame
    line = frame.groupby([q for q in xs if q != x], sort=False).ngroup().to_numpy()
    distinct = frame[x].where(rows).groupby(line).transform("nunique").to_numpy()  # NaN: not counted
    on = rows & (distinct >= 3)
    if not on.any():
        return np.zeros(len(frame), np.int64), rows, 1, "all runs"
    n_lines = len(np.unique(line[on]))
    return line, on, n_lines, f"{n_lines} line(s)"


#: a parameter whose best block explains its lines no better than noise would with this probability
#: (F test against the constant on every line, :func:`automodel.solve.lines.effect_pvalue`) offers the
#: PMNF route its best block only (and, as always, "left out"): three blocks fitted to noise alone make a
#: crowd of steep, tiny terms that fit the noise and outvote the constant in the departing rule
#: (:func:`automodel.search.select.departing_rows`; a constant of two parameters, 5 % noise, became
#: ``42.84 - 3.9e-6 y^(5/2) log2(y)^2``, 45x off at 16x). Measured (python -m benchmarks.accuracy): with
#: no block at all for such a parameter, a RELeARN region chose an exploding RBASP template (46.0 ->
#: 49.6 % median, 53 -> 13155 % mean); with the best block, Extra-P's matrix-multiply profiles in x, y,
#: z went 13.9 / 21.8 -> 7.5 / 10.3 % (median / mean)
NO_EFFECT_P = 1e-3


def _lead_blocks(S: Search, x: str, xs: list[str], ks: np.ndarray, rows: np.ndarray, blocks: tuple[Term, ...],
                 keep: int) -> list[list[Term | None]]:
    """Each target's ``keep`` best ``blocks`` of ``x``, after ``None`` (x left out), by the residual sum
    of squares of ``c_g + b_g block(x)`` fitted on every line ``g`` of the grid in ``x`` and pooled
    (:func:`automodel.solve.lines.line_rss`); the best alone where even that one has no significant
    effect (:data:`NO_EFFECT_P`). Recorded as the stage ``pmnf/x``."""
    line, on, n_lines, text = _lines(S.ds, x, xs, rows)
    n_on = int(np.count_nonzero(on))
    report = StageReport(f"pmnf/{x}", text, n_on)
    S.reports.append(report)
    S.bar.update(1)
    cols = np.array([S.cache.index(t) for t in blocks], np.intp)
    Y = S.Y[on][:, ks]
    rss, rss_constant = line_rss(S.cache.at(on, cols), Y, weights(Y, S.opt.weighting), line[on])
    best = np.argsort(rss, axis=0, kind="stable")[:keep].T  # (K, keep)
    effect = effect_pvalue(rss.min(axis=0), rss_constant, n_on, n_lines)
    weak = (effect > NO_EFFECT_P)[:, None] & (np.arange(keep) >= 1)[None, :]  # its best block only
    ok = np.take_along_axis(np.isfinite(rss).T, best, axis=1) & ~weak
    report.n_candidates = len(blocks)
    report.n_fits = int(np.isfinite(rss).sum())
    report.n_kept = int(ok.sum())
    report.n_deleted = report.n_fits - report.n_kept
    return [[None, *(blocks[i] for i, good in zip(b, g) if good)] for b, g in zip(best, ok)]


def _collections(names: list[str], max_terms: int) -> list[tuple[frozenset[str], ...]]:
    """Every set of at most ``max_terms`` monomials (non-empty subsets of ``names``) that together
    use every name: the ways to combine one term per parameter by sums and products (for x, y:
    f + g, f g, f + f g, g + f g, f + g + f g)."""
    monomials = [frozenset(c) for k in range(1, len(names) + 1) for c in combinations(names, k)]
    full = frozenset(names)
    return [c for k in range(1, max_terms + 1) for c in combinations(monomials, k)
            if frozenset().union(*c) == full]


def stage_pmnf(S: Search, ks: np.ndarray, rows: np.ndarray) -> None:
    """Extra-P's hypothesis space on every parameter, whatever its name (not ``cpu``/``bw``): the
    performance model normal form c0 + sum_k c_k prod_l x_l^(i_kl/j_kl) log2^(h_kl)(x_l) (Calotoiu
    et al., SC'13, eq. 1), with signed coefficients and the constant model.

    Each parameter's building blocks (``terms``, with ``x`` for the parameter) are first ranked alone,
    ``c_g + b_g block(x)`` on every line ``g`` of the grid where only that parameter varies (its own
    intercept and slope per line, the residuals pooled: :func:`_lead_blocks`). Its ``per_parameter``
    best, and always the parameter left out ("no effect": noise on a parameter without effect makes
    some shrinking block rank above the constant), are then combined by sums and products across
    parameters into candidates of at most ``max_terms`` terms besides c0, scored on all rows. Where
    every block of every parameter gives at most ``exhaustive`` combined candidates, all blocks are
    combined (an exhaustive search). Each target combines its own best blocks; targets with the same
    ones share their candidates.
    """
    cfg: PmnfConfig = S.space.stage("pmnf")  # type: ignore[assignment]
    blocks = cfg.terms
    xs = [x for x in S.ds.params if x not in ("cpu", "bw")]
    if not xs or len(xs) > MAX_PMNF_PARAMETERS:
        S.notes.append(f"pmnf: {len(xs)} parameters (other than cpu and bw); the PMNF route combines 1 to "
                       f"{MAX_PMNF_PARAMETERS}: skipped")
        return
    max_terms = cfg.max_terms
    per = {x: tuple(rename_param(b, "x", x) for b in blocks) for x in xs}

    if len(xs) == 1:  # the constant, and the constant plus one block
        alone = [Structure(extra=(ONE,), signed=True)] + [Structure(extra=(ONE, t), signed=True) for t in per[xs[0]]]
        S.run(f"pmnf/{xs[0]}", ks, rows, "all runs", S.reg.same(alone, len(ks)), cfg.top, final=True)
        return
    n_collections = len(_collections(xs, max_terms))
    exhaustive = (int(np.prod([len(per[x]) + 1 for x in xs], dtype=float)) * n_collections
                  <= cfg.exhaustive)
    leads: dict[str, list[list[Term | None]]] = {}
    S.adaptive = S.adaptive or not exhaustive
    for x in xs:
        if exhaustive:
            leads[x] = [[None, *per[x]]] * len(ks)
            continue
        leads[x] = _lead_blocks(S, x, xs, ks, rows, per[x], cfg.per_parameter)
    budget = cfg.budget
    memo: dict[tuple, np.ndarray] = {}
    rows_of = []
    for r in range(len(ks)):
        lead = {x: leads[x][r] for x in xs}
        while int(np.prod([len(v) for v in lead.values()])) * n_collections > budget:  # bounded: drop the
            longest = max(xs, key=lambda q: len(lead[q]))                             # worst lead of the
            if len(lead[longest]) == 1:                                                # longest list
                break
            lead[longest] = lead[longest][:-1]
        key = tuple(tuple(lead[x]) for x in xs)
        if key not in memo:
            memo[key] = S.reg.ids(_pmnf_candidates(xs, lead, max_terms))
        rows_of.append(memo[key])
    cands = ragged(np.concatenate(rows_of), np.fromiter(map(len, rows_of), np.intp, len(rows_of)))
    S.run("pmnf/combined", ks, rows, "all runs" + (" (exhaustive)" if exhaustive else ""), cands,
          cfg.top, final=True)


def _pmnf_candidates(xs: list[str], lead: dict[str, list[Term | None]], max_terms: int) -> list[Structure]:
    """The constant, and every combination by sums and products (:func:`_collections`) of one lead block
    per parameter (None: the parameter left out). Each product is built once for every target
    (:func:`~automodel.search.canonical.multiplied`)."""
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
                    term = multiplied(term, term_of[x])
                monomials.append(term)
            cands.append(Structure(extra=(ONE, *monomials), signed=True))
    return cands


def run(S: Search, shape: Shape, branch: Branch) -> Iterator[Branch]:
    """Extra-P's route on every target and all runs, after the staged search (on a tie its non-negative
    twin ranks first); it hands nothing on."""
    stage_pmnf(S, branch.ks, shape.all_rows)
    yield from ()


def applies(S: Search, shape: Shape) -> bool:
    """Unless the data have a parameter of the stage's ``unless``."""
    return not set(S.space.stage("pmnf").unless) & S.params


STAGE = Stage("pmnf", PmnfConfig, run, applies, route=PMNF)
