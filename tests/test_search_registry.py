"""The interned structures of a search (automodel.search.registry) and the products of its terms
(automodel.search.canonical)."""

import numpy as np

from automodel.search.canonical import multiplied
from automodel.search.registry import Registry
from automodel.search.score import TermCache
from automodel.space.parse import parse_term
from automodel.space.structure import Structure


def _structures() -> list[Structure]:
    t = {s: parse_term(s) for s in ("1", "p", "log2(p)", "n", "n*p", "1/p")}
    return [Structure((t["n"],), (t["log2(p)"],), (t["1"],)),
            Structure(extra=(t["1"], t["p"]), signed=True),
            Structure((t["n"], t["n*p"])),
            Structure(extra=(t["p"], t["1"]), signed=True),  # the term set of the second
            Structure((t["1/p"], t["n"]), (t["1/p"],))]       # a term twice: one column


def test_structures_are_numbered_in_the_order_of_first_sight_with_their_terms_columns():
    structures = _structures()
    reg = Registry(TermCache({"p": np.array([2.0, 4.0, 8.0]), "n": np.array([1.0, 2.0, 3.0])}, 3))
    assert reg.ids(structures[:2] + structures[:1]).tolist() == [0, 1, 0]
    assert reg.ids(structures[1:] + structures[3:]).tolist() == [1, 2, 3, 4, 3, 4]
    assert reg.ids([]).tolist() == []
    assert reg.structures == structures
    columns = [[reg.cache.index(t) for t in s.terms] for s in structures]
    width = max(map(len, columns))
    assert reg.array("columns").tolist() == [c + [-1] * (width - len(c)) for c in columns]
    assert reg.array("width").tolist() == [len(s.terms) for s in structures]
    assert reg.array("signed").tolist() == [s.signed for s in structures]
    assert reg.array("comm").tolist() == [bool(s.comm) for s in structures]
    assert reg.array("key").tolist() == [0, 1, 2, 1, 3]  # term sets, numbered in the order of first sight


def test_products_built_once_equal_the_plain_products():
    a, b = parse_term("n^(1/2)*log2(p)"), parse_term("p^(3/2)")
    made = multiplied(a, b)
    assert made == a * b and made.key == (a * b).key and hash(made) == hash(a * b)
    assert multiplied(parse_term("n^(1/2)*log2(p)"), parse_term("p^(3/2)")) is made
