"""The structures of a staged search interned as integers, and the ragged integer arrays the search of
many targets keeps them in (:mod:`automodel.search.engine`): what a stage makes of a seed is built once
for every target that has the seed, and every target's candidates are one row of an (R, C) array, -1
padded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, islice

import numpy as np
import pandas as pd

from automodel.search.score import Scores, TermCache
from automodel.space.structure import Structure

__all__ = ["Registry", "Batch", "ragged", "sorted_groups", "labels", "compact", "hstack", "put"]


class Registry:
    """The structures of a search interned as integers, shared by its targets: what a stage makes of a
    seed is built once for every target that has the seed (:meth:`table`)."""

    def __init__(self, cache: TermCache) -> None:
        self.cache = cache
        self.structures: list[Structure] = []
        self._id: dict[Structure, int] = {}
        self._key_id: dict[tuple[int, ...], int] = {}
        #: the structures interned since :meth:`array` last ran, one block per call of :meth:`ids`:
        #: their keys, widths, columns (concatenated), signs and communication parts
        self._new: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._arrays = {"key": np.zeros(0, np.intp), "width": np.zeros(0, np.intp), "signed": np.zeros(0, bool),
                        "comm": np.zeros(0, bool), "columns": np.full((0, 1), -1, np.intp)}

    def ids(self, structures: list[Structure]) -> np.ndarray:
        """The integer of each structure (interned on first sight, numbered in the order of first sight)."""
        interned = self._id
        n_known = len(interned)
        out = np.fromiter((interned.setdefault(s, len(interned)) for s in structures), np.intp, len(structures))
        fresh = np.flatnonzero(out >= n_known)
        if not len(fresh):
            return out
        first = fresh[np.unique(out[fresh], return_index=True)[1]]  # each new structure's first sight
        new = [structures[j] for j in first.tolist()]
        self.structures += new
        terms = [s.terms for s in new]
        width = np.fromiter(map(len, terms), np.intp, len(terms))
        flat = self.cache.indices(list(chain.from_iterable(terms)))
        at = iter(flat)
        key_of = self._key_id.setdefault
        keys = [key_of(tuple(sorted(islice(at, w))), len(self._key_id)) for w in width.tolist()]  # term sets
        self._new.append((np.array(keys, np.intp), width, np.array(flat, np.intp),
                          np.fromiter((s.signed for s in new), bool, len(new)),
                          np.fromiter((bool(s.comm) for s in new), bool, len(new))))
        return out

    def array(self, name: str) -> np.ndarray:
        """Per structure: ``key`` (its term set, as :attr:`Structure.key`), ``width``, ``signed``, ``comm``
        (has a communication part) or ``columns`` (its terms' cache columns, (N, width), -1 padded)."""
        if self._new:
            key, width, flat, signed, comm = map(np.concatenate, zip(*self._new))
            self._new = []
            old = self._arrays["columns"]
            block = ragged(flat, width, old.shape[1])
            if block.shape[1] > old.shape[1]:
                old = np.pad(old, ((0, 0), (0, block.shape[1] - old.shape[1])), constant_values=-1)
            self._arrays = {"key": np.r_[self._arrays["key"], key], "width": np.r_[self._arrays["width"], width],
                            "signed": np.r_[self._arrays["signed"], signed],
                            "comm": np.r_[self._arrays["comm"], comm], "columns": np.concatenate([old, block])}
        return self._arrays[name]

    def table(self, seeds: np.ndarray, make: Callable[[Structure], list[Structure]]) -> np.ndarray:
        """``make(seed)`` for every seed of ``seeds`` (R, S) (-1: none), concatenated per row: (R, S * A)
        ids, -1 padded (A: the longest list ``make`` gave). Each distinct seed's list is made once."""
        present = seeds >= 0
        uniq, inv = np.unique(seeds[present], return_inverse=True)
        made = [make(self.structures[i]) for i in uniq.tolist()]
        lens = np.fromiter(map(len, made), np.intp, len(made))
        tab = ragged(self.ids(list(chain.from_iterable(made))), lens)
        out = np.full(seeds.shape + tab.shape[1:], -1, np.intp)
        out[present] = tab[inv.reshape(-1)]
        return out.reshape(len(seeds), -1)

    def rows(self, lists: list[list[Structure]]) -> np.ndarray:
        """The ids of each list of structures, one row per list, (len(lists), longest), -1 padded."""
        return ragged(self.ids(list(chain.from_iterable(lists))), np.fromiter(map(len, lists), np.intp, len(lists)))

    def same(self, structures: list[Structure], n_rows: int) -> np.ndarray:
        """The same candidates for ``n_rows`` targets, (n_rows, len(structures))."""
        return np.tile(self.ids(structures), (n_rows, 1))


def ragged(flat: np.ndarray, lens: np.ndarray, width: int = 0) -> np.ndarray:
    """Consecutive runs of ``flat`` of lengths ``lens`` as the rows of a (len(lens), at least ``width``)
    array, -1 padded."""
    out = np.full((len(lens), max(int(lens.max(initial=0)), width)), -1, flat.dtype)
    starts = np.cumsum(lens) - lens
    out[np.repeat(np.arange(len(lens)), lens), np.arange(len(flat)) - np.repeat(starts, lens)] = flat
    return out


def sorted_groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row of ``keys`` (R, C) sorted stably: the order, and where each run of equal keys starts
    and ends (bool (R, C) in sorted positions)."""
    order = np.argsort(keys, axis=1, kind="stable")
    s = np.take_along_axis(keys, order, axis=1)
    start = np.ones(s.shape, bool)
    end = np.ones(s.shape, bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    end[:, :-1] = start[:, 1:]
    return order, start, end


def labels(rows: np.ndarray) -> np.ndarray:
    """One integer per row of ``rows`` (N, w) of integers >= -1, the same for equal rows: the columns
    folded in one at a time, each fold numbered by :func:`pandas.factorize` (a hash table, no sort)."""
    out = np.zeros(len(rows), np.int64)
    for column in rows.T:
        out = pd.factorize(out * (int(column.max(initial=-1)) + 2) + column + 1)[0]
    return out


def compact(ids: np.ndarray, *more: np.ndarray) -> tuple[np.ndarray, ...]:
    """The entries >= 0 of every row of ``ids`` moved to its front in order (-1 behind), the width cut to
    the longest row; ``more`` (arrays of the same leading shape) rearranged alike."""
    order = np.argsort(ids < 0, axis=1, kind="stable")
    width = int((ids >= 0).sum(axis=1).max(initial=0))
    take = order[:, :width]
    return tuple(np.take_along_axis(a, take.reshape(take.shape + (1,) * (a.ndim - 2)), axis=1)
                 for a in (ids, *more))


def hstack(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ``a`` followed by the rows of ``b`` (ids, -1 padded), compacted."""
    return compact(np.concatenate([a, b], axis=1))[0]


def put(base: np.ndarray, rows: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``base`` (R, C) with ``rows`` replaced by ``new`` (len(rows), C'), -1 padded to the wider."""
    width = max(base.shape[1], new.shape[1])
    out = np.full((len(base), width), -1, np.intp)
    out[:, :base.shape[1]] = base
    out[rows] = -1
    out[rows, :new.shape[1]] = new
    return compact(out)[0]


@dataclass
class Batch:
    """Candidates of some targets (``ks``) scored on one row set: ``ids`` (R, C), -1 for none."""

    ks: np.ndarray
    ids: np.ndarray
    metrics: dict[str, np.ndarray]
    coefs: np.ndarray
    valid: np.ndarray
    n_fits: np.ndarray

    def concat(self, other: Batch) -> Batch:
        width = max(self.coefs.shape[2], other.coefs.shape[2])
        pad = lambda c: np.pad(c, ((0, 0), (0, 0), (0, width - c.shape[2])), constant_values=np.nan)  # noqa: E731
        return Batch(self.ks, np.concatenate([self.ids, other.ids], axis=1),
                      {m: np.concatenate([v, other.metrics[m]], axis=1) for m, v in self.metrics.items()},
                      np.concatenate([pad(self.coefs), pad(other.coefs)], axis=1),
                      np.concatenate([self.valid, other.valid], axis=1), self.n_fits + other.n_fits)

    def scores(self, r: int, reg: Registry) -> Scores:
        """Row ``r`` as the :class:`Scores` of its candidates."""
        at = np.flatnonzero(self.ids[r] >= 0)
        widths = reg.array("width")[self.ids[r, at]]
        return Scores([reg.structures[i] for i in self.ids[r, at]], self.coefs[r, at],
                      {m: v[r, at] for m, v in self.metrics.items()}, widths, int(self.n_fits[r]), self.valid[r, at])
