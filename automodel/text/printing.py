"""Formula printers: one sympy printer class per format, and the cached text of term models.

Every formula automodel shows goes through this module: the leaderboard of ``automodel fit``, the
kernel summary of ``automodel kernels``, the store's ranking, the ``formula`` of a model file and
``automodel show`` (whose formats are the registry :data:`automodel.output.export.FORMATS`). The printer
classes are in :mod:`automodel.text.printers` (imported on first use; sympy's printer protocol, one ``_print_<Node>`` method per change from sympy's defaults):

``text``
    :class:`TextPrinter`, a :class:`~sympy.printing.str.StrPrinter` with ``^`` for powers, ``min`` and
    ``max`` in lower case as every other function, and coefficients rounded to ``digits`` significant
    digits (4 by default).
``latex``
    ``\\log_{2}`` for ``log2`` (sympy prints ``\\operatorname{log}_{2}``), rounded coefficients.
``python``, ``c``
    Floats as Python's ``repr`` (the shortest text that reads back as the same double, at most 17
    significant digits), so the code reproduces the model exactly; ``log2`` is
    :class:`sympy.codegen.cfunctions.log2`, which C prints as ``log2(p)`` and Python as
    ``math.log2(p)`` natively.

A fitted term model is a sum ``c_1 t_1 + ... + c_k t_k`` of terms from a small set, so
:func:`formula` prints each term once (:func:`term_text`, cached per
:class:`~automodel.space.terms.Term`), takes each set of terms' order once from the printer's own
order of a sum (:func:`prime_orders`, one sympy call for many sets), and per model prints only the
coefficients, with the text printer's own number format. The result is the text printer's output for
the model's expression (tested on random models) at a small fraction of the cost, which is what lets
``automodel kernels`` print thousands of formulas; every path that shows a term model's formula
(``Model.formula``, the leaderboard, the kernel summary, the store) goes through :func:`formula`.

What sympy found about each term (its text, its place in the printer's order of a sum) is kept in a
file (:func:`cache_file`) and read back by the next process, so that a process that prints the
formulas of terms printed before imports no sympy (issue 35: ``automodel observe`` and the first fit
of a process paid 0.5 s to import sympy and 0.2 s to order the terms again).
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from automodel.text.coefficients import number
from automodel.lazy import lazy_names
from automodel.space.terms import ONE, Term, term_from_dict, term_sum

if TYPE_CHECKING:  # pragma: no cover
    import sympy

    from automodel.text.printers import CFormulaPrinter, LatexFormulaPrinter, PythonFormulaPrinter, TextPrinter

__all__ = ["TextPrinter", "to_text", "to_latex", "to_python", "to_c", "formula", "formulas", "prime_orders",
           "term_text", "terms_text", "number", "cache_file", "CACHE_ENV"]

__getattr__, __dir__ = lazy_names(globals(), {name: "automodel.text.printers" for name in (
    "TextPrinter", "LatexFormulaPrinter", "CFormulaPrinter", "PythonFormulaPrinter")})


def to_text(expr: sympy.Expr, digits: int = 4) -> str:
    """A readable one-line formula with ``digits`` significant digits per coefficient."""
    from automodel.text.printers import TextPrinter

    return TextPrinter({"digits": digits}).doprint(expr)


def to_latex(expr: sympy.Expr, digits: int = 4) -> str:
    """LaTeX of ``expr`` with ``digits`` significant digits per coefficient."""
    from automodel.text.printers import LatexFormulaPrinter

    return LatexFormulaPrinter({"digits": digits}).doprint(expr)


def to_python(expr: sympy.Expr, names: dict[str, str] | None = None) -> str:
    """A Python expression (``math.log2``, ``math.sqrt``, ...) that reproduces ``expr`` exactly; each
    symbol under its name in ``names`` (:func:`automodel.names.code_names`), if there."""
    from automodel.text.printers import PythonFormulaPrinter

    return PythonFormulaPrinter({"names": dict(names or {})}).doprint(expr)


def to_c(expr: sympy.Expr, names: dict[str, str] | None = None) -> str:
    """A C99 expression (``log2``, ``pow``, ``exp``, ``ceil`` from ``<math.h>``); each symbol under
    its name in ``names``, if there."""
    from automodel.text.printers import CFormulaPrinter

    return CFormulaPrinter({"names": dict(names or {})}).doprint(expr)


# -- term models --------------------------------------------------------------------------------
#: the environment variable naming the folder of :func:`cache_file` ("off": no file)
CACHE_ENV = "AUTOMODEL_CACHE_DIR"
#: bytes the cache file may have (a file of 2,300 terms has 0.3 MB); a larger one is not read
CACHE_MAX_BYTES = 32 << 20
#: the version of the cache file's layout and texts (2: each term listed with its
#: :attr:`~automodel.space.terms.Term.key`; 3: ``min(1, p - 1)``, no longer ``Min(1, p - 1)``): a change of
#: either makes the entries of an older file stale, so the version is in the file's name and body
CACHE_VERSION = 3
#: term -> (the text after its coefficient or None, whether ``c*term`` is two factors, the text of the
#: term's expression); found with sympy (:func:`_found`) or read from :func:`cache_file`
_FACTS: dict[Term, tuple[str | None, bool, str]] = {}
#: term -> its place in the printer's order of the sum of all the terms that have one (:func:`prime_orders`),
#: for the terms this process looked up or ordered; replaced whole, never changed in place, so a thread
#: that reads it (automodel serve) sees one ordering
_RANK: dict[Term, int] = {}
#: the cache file's entries by term key, as read (``[term as a dict, text, lone, expression text, place]``):
#: a term is rebuilt only when it is looked up (rebuilding every term the file holds cost more than the
#: rest of a small command: 0.1 s for 2300 terms)
_FILE: dict[str, list] = {}
#: whether the cache file was read (``"read"``), whether this process found facts it lacks (``"new"``) and
#: whether it ordered the terms again (``"reordered"``: the file's places are then out of date)
_STATE = {"read": False, "new": False, "reordered": False}


def cache_file() -> Path | None:
    """The file that keeps what sympy found about each term between processes: under the folder named
    by ``AUTOMODEL_CACHE_DIR`` (``off``: none), else ``$XDG_CACHE_HOME/automodel``, else
    ``~/.cache/automodel``; None (no cache, as ``off``) when that folder is not one this process may
    trust (:func:`_private_folder`)."""
    folder = os.environ.get(CACHE_ENV)
    if folder == "off":
        return None
    if not folder:
        folder = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "automodel")
    return Path(folder) / f"printing-{CACHE_VERSION}.json" if _private_folder(folder) else None


def _private_folder(folder: str) -> bool:
    """Whether ``folder`` can hold the cache: an absolute path (a relative one would read a file of the
    working directory) to a folder (after its links) of this user that no one else may write in.

    The cache's texts become the formulas every command prints and writes to model files, so a file
    someone else could write (a shared folder, a folder of another user, a name that is a file) is not
    read: the commands run as with ``off``, a little slower, never failing for a cache (a bad value of
    ``AUTOMODEL_CACHE_DIR`` is not worth refusing a fit for; its results are the same)."""
    if not os.path.isabs(folder):
        return False
    try:
        info = os.stat(folder)
    except (OSError, ValueError):  # missing, not reachable, or a NUL byte
        return False
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _cache_text(path: Path) -> str | None:
    """The text of the cache file ``path``: a regular file of this user (not followed when it is a link:
    a link to elsewhere is not the cache) of at most :data:`CACHE_MAX_BYTES`; None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not stat.S_ISREG(info.st_mode) or not mine or info.st_size > CACHE_MAX_BYTES:
            return None
        data = handle.read(CACHE_MAX_BYTES + 1)
    return data.decode("utf-8") if len(data) <= CACHE_MAX_BYTES else None


def _read_cache() -> None:
    """Read the entries of :func:`cache_file` into :data:`_FILE`, once per process. A missing, unreadable
    or malformed file, or one written with another sympy than the one loaded, is ignored."""
    global _FILE
    if _STATE["read"]:
        return
    _STATE["read"] = True
    path = cache_file()
    try:
        text = None if path is None else _cache_text(path)
        body = None if text is None else json.loads(text)
        if not isinstance(body, dict) or body.get("version") != CACHE_VERSION:
            return
        if "sympy" in sys.modules and body.get("sympy") != sys.modules["sympy"].__version__:
            return
        entries = {}
        for key, data, text, lone, expression, rank in body["terms"]:
            if not isinstance(key, str) or not (text is None or isinstance(text, str)) or not isinstance(
                    expression, str) or not (rank is None or isinstance(rank, int)) or not isinstance(
                    data, list) or not all(isinstance(f, dict) for f in data):
                return
            entries[key] = [data, text, bool(lone), expression, rank]
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):  # nested too deep
        return
    _FILE = entries


def _from_file(term: Term) -> list | None:
    """The cache file's entry of ``term`` (:data:`_FILE`), read first if need be; None when it has none."""
    _read_cache()
    return _FILE.get(term.key)


def _place(term: Term) -> int | None:
    """``term``'s place in the printer's order of a sum (:data:`_RANK`, else the cache file's unless this
    process ordered the terms again); None when it has none."""
    rank = _RANK.get(term)
    if rank is None and not _STATE["reordered"]:
        entry = _from_file(term)
        rank = None if entry is None else entry[4]
    return rank


def _ranked() -> list[Term]:
    """Every term with a place (:func:`_place`), in order: the file's terms rebuilt (when the terms are
    ordered again, which imports sympy anyway)."""
    _read_cache()
    places = dict(_RANK)
    if not _STATE["reordered"]:
        for entry in _FILE.values():
            if entry[4] is not None:
                data = entry[0]
                try:
                    names = {f.get("param") for f in data} | {f.get("center_param") for f in data
                                                              if f.get("center_param")}
                    places.setdefault(term_from_dict(data, names), entry[4])
                except (ValueError, TypeError):  # a damaged entry (unhashable names, a bad factor): no place
                    continue
    return sorted(places, key=places.__getitem__)


def _write_cache() -> None:
    """Write the cache file's entries with this process's facts and places to :func:`cache_file` when this
    process found facts the file lacked (at exit; atomically: a reader sees the old file or the new one,
    and the last writer wins)."""
    path = cache_file()
    if path is None or not _STATE["new"]:
        return
    try:
        import sympy

        from automodel.files import write_text

        _read_cache()
        entries = {key: list(entry) for key, entry in _FILE.items()}
        if _STATE["reordered"]:  # the file's places are out of date: every ranked term is in _RANK
            for entry in entries.values():
                entry[4] = None
        for term, facts in _FACTS.items():  # (a place the file has is kept: it is in the same ordering)
            entry = entries.get(term.key)
            entries[term.key] = [term.to_dict(), *facts, None if entry is None else entry[4]]
        for term, rank in _RANK.items():
            entries.setdefault(term.key, [term.to_dict(), *_found(term), None])[4] = rank
        body = {"version": CACHE_VERSION, "sympy": sympy.__version__,
                "terms": [[key, *entry] for key, entry in entries.items()]}
        write_text(path, json.dumps(body, separators=(",", ":")))
        _STATE["new"] = False
    except Exception:  # noqa: BLE001  (a cache: a command never fails for it)
        pass


def _learnt() -> None:
    """Note that this process found facts that :func:`cache_file` lacks: it is written at exit."""
    if not _STATE["new"]:
        import atexit

        atexit.register(_write_cache)
        _STATE["new"] = True


def _found(term: Term) -> tuple[str | None, bool, str]:
    """What the printer makes of ``term`` (:data:`_FACTS`), read from the cache file or found with sympy
    when not known."""
    facts = _FACTS.get(term)
    if facts is not None:
        return facts
    entry = _from_file(term)
    if entry is not None:
        facts = _FACTS[term] = (entry[1], entry[2], entry[3])
        return facts
    import sympy

    from automodel.text.printers import TextPrinter

    printer = TextPrinter()
    text = None
    if term == ONE:
        text = ""
    else:
        product = sympy.Float(1.5) * term.expr
        if product.is_Mul and product.as_coeff_Mul() == (sympy.Float(1.5), term.expr):
            printed = printer.doprint(product)
            text = printed[3:] if printed.startswith("1.5") and printed[3:4] in ("*", "/") else None
    facts = _FACTS[term] = (text, not isinstance(term.expr, sympy.Mul), printer.doprint(term.expr))
    _learnt()
    return facts


def term_text(term: Term) -> str | None:
    """The text after the coefficient in ``c*term`` (``"*n^2/p"``; ``""`` for the constant), printed once
    per term; None when the printer does not print ``c*term`` as the coefficient and the term (a number
    times a sum is distributed: ``c*(p + 1)`` is ``c*p + c``).

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> term_text(power("n", 2) * power("p", -1))
    '*n^2/p'
    """
    return _found(term)[0]


#: terms (with nonzero coefficients) -> the printer's order of their sum; filled by :func:`prime_orders`
_ORDERS: dict[tuple[Term, ...], tuple[int, ...]] = {}


def prime_orders(sums: Iterable[tuple[Term, ...]]) -> None:
    """The printer's order of many sums of terms, from at most one sympy call.

    The order of a sum (:meth:`~sympy.core.expr.Expr.as_ordered_terms`) compares the terms' exponent
    vectors lexicographically, over the generators of the whole sum in one fixed order; a generator
    that two terms both lack does not change how they compare, so the order of any subset of terms is
    the order of the whole set restricted to it. The terms first ordered get their places in the order
    of their sum (:data:`_RANK`, kept in :func:`cache_file`); when some term of ``sums`` has none, the
    terms of ``sums`` alone are ordered, once (:func:`_sympy_rank`), and each sum's order is read off
    from the places (ordering every term known again cost a sympy call that grew with each new term).
    """
    global _RANK
    todo = [s for s in dict.fromkeys(sums) if s not in _ORDERS and _printable(s)]
    if not todo:
        return
    places = {t: _place(t) for s in todo for t in s}
    if any(r is None for r in places.values()):
        # the new terms are ordered among themselves (one sympy call) and then put into the kept order
        # (:func:`_merged`), so a later process that prints them needs no sympy; ordering only the new
        # terms and keeping nothing imported sympy in every process that printed them again, and ordering
        # every known term again at each new one grew with the terms known (0.7 s for 1130 terms)
        every = list(places)
        wanted = [t for t in every if places[t] is None]
        local = _sympy_rank(wanted)
        merged = None if local is None else _merged(_ranked(), sorted(wanted, key=local.__getitem__))
        if merged is None:  # two terms the printer merges: order these sums' terms alone, not kept
            local = _sympy_rank(every)
            if local is None:  # term_text() rules this out; formula() then prints the expression
                return
            for s in todo:
                _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: local[s[i]]))
            return
        _RANK = {t: i for i, t in enumerate(merged)}  # replaced whole: a reader in another thread sees one
        _STATE["reordered"] = True                     # ordering
        _learnt()
        places = {t: _RANK[t] for t in every}
    else:  # kept for the next sums, and for the cache file when this process writes it
        _RANK = {**_RANK, **places}
    for s in todo:
        _ORDERS[s] = tuple(sorted(range(len(s)), key=lambda i: places[s[i]]))


def _merged(known: list[Term], new: list[Term]) -> list[Term] | None:
    """``new`` (in the printer's order) put into ``known`` (in the printer's order): each by binary search
    from where the one before it went, comparing two terms with one small sympy call (the order of any
    two terms is their order in any sum that holds both: :func:`prime_orders`); about log2 of the terms
    known calls a new term. None when the printer merges two terms it compares."""
    out = list(known)
    low = 0
    for term in new:
        high = len(out)
        while low < high:
            middle = (low + high) // 2
            pair = _sympy_rank([out[middle], term])
            if pair is None:
                return None
            if pair[out[middle]] < pair[term]:
                low = middle + 1
            else:
                high = middle
        out.insert(low, term)
        low += 1
    return out


def _sympy_rank(terms: list[Term]) -> dict[Term, int] | None:
    """Each of ``terms``' place in the text printer's order of their sum (one sympy call; coefficients
    2, 3, ... name the terms); None when the printer merges two of them."""
    import sympy

    from automodel.text.printers import TextPrinter

    exprs = list(dict.fromkeys(t.expr for t in terms))
    if len(exprs) < 2:
        ordered_exprs = exprs
    else:
        ordered = TextPrinter()._as_ordered_terms(sympy.Add(*[sympy.Float(2 + i) * e for i, e in enumerate(exprs)]))
        if len(ordered) != len(exprs):
            return None
        ordered_exprs = [exprs[int(a.as_coeff_Mul()[0]) - 2] for a in ordered]
    position = {e: r for r, e in enumerate(ordered_exprs)}
    return {t: position[t.expr] for t in terms}


@lru_cache(maxsize=65536)
def _printable(terms: tuple[Term, ...]) -> bool:
    """Whether the sum of these terms (nonzero coefficients) prints as each coefficient and its term's
    text: every term has a text, no two terms are equal, and it is not the constant alone."""
    return (bool(terms) and terms != (ONE,) and all(term_text(t) is not None for t in terms)
            and len({_found(t)[2] for t in terms}) == len(terms))


def _lone_factor(term: Term) -> bool:
    """Whether ``c*term`` is a product of two factors, the coefficient and one more."""
    return _found(term)[1]


def _layout(terms: tuple[Term, ...]) -> tuple[tuple[int, ...], int] | None:
    """How the printer prints a sum of these terms (nonzero coefficients, all finite): the order of
    its terms, and the index of the constant when sympy's one special case can apply (``c0 - c1*x``
    prints the positive constant first, ``Expr.as_ordered_terms``), else -1. None when the sum does not
    print as each coefficient and its term's text."""
    if not _printable(terms):
        return None
    if terms not in _ORDERS:
        prime_orders([terms])
    order = _ORDERS.get(terms)
    if order is None:
        return None
    first = -1
    if len(terms) == 2 and ONE in terms:
        i = terms.index(ONE)
        first = i if _lone_factor(terms[1 - i]) else -1
    return order, first


def _render(terms: tuple[Term, ...], coefficients: Sequence[float], layout: tuple[tuple[int, ...], int]) -> str:
    order, i = layout
    if i >= 0 and coefficients[i] > 0 > coefficients[1 - i]:
        order = (i, 1 - i)
    text = ""
    for j in order:
        c = coefficients[j]
        text += (" - " if c < 0 else " + ") if text else ("-" if c < 0 else "")
        text += number(abs(c)) + term_text(terms[j])
    return text


def formula(terms: Sequence[Term], coefficients: Sequence[float]) -> str:
    """The text of the term model ``sum(c*t)``: :func:`to_text` of its expression, from cached parts.

    Each term's text (:func:`term_text`) and each set of terms' order (:func:`prime_orders`) is found
    once; per model only the coefficients are printed, with the text printer's number format. A model
    whose expression is not a plain sum of its terms (a term twice, a lone constant, a term sympy
    distributes, a coefficient that is not finite) is printed from its expression.

    Examples
    --------
    >>> from automodel.space.terms import power
    >>> formula((power("n", 2) * power("p", -1), power("p")), (1e-6, 1e-4))
    '1.0e-6*n^2/p + 0.0001*p'
    >>> formula((ONE, power("p")), (-2.5, 0.0))
    '-2.5'
    """
    kept = [(t, float(c)) for t, c in zip(terms, coefficients) if c != 0.0]
    nonzero, values = tuple(t for t, _ in kept), [c for _, c in kept]
    if nonzero == (ONE,) and math.isfinite(values[0]):  # the constant alone: the number as the printer writes it
        return ("-" if values[0] < 0 else "") + number(abs(values[0]))
    layout = _layout(nonzero) if all(math.isfinite(c) for c in values) else None
    if layout is None:
        return to_text(term_sum(terms, coefficients))
    return _render(nonzero, values, layout)


def formulas(terms: list[tuple[Term, ...]], best: np.ndarray, coefs: np.ndarray) -> list[str]:
    """The formula of every kernel's model: candidate ``best[j]`` with coefficients ``coefs[j]`` (an
    empty string where ``best[j] < 0``), equal to :func:`formula` of each. The layout of each distinct
    (candidate, nonzero coefficients) is found once, the orders of all of them in one sympy call
    (:func:`prime_orders`); per kernel only its coefficients are printed."""
    finite = np.isfinite(np.where(np.isnan(coefs), 0.0, coefs)).all(axis=1)
    keys = [(int(b), tuple(coefs[j, :len(terms[b])] != 0.0)) if b >= 0 else None for j, b in enumerate(best)]
    chosen = {key: tuple(t for t, keep in zip(terms[key[0]], key[1]) if keep) for key in set(keys) - {None}}
    prime_orders(t for t in chosen.values() if _printable(t))
    layouts = {key: _layout(t) for key, t in chosen.items()}
    out = []
    for j, key in enumerate(keys):
        if key is None:
            out.append("")
            continue
        row = coefs[j, :len(key[1])]
        layout = layouts[key]
        out.append(_render(chosen[key], row[list(key[1])].tolist(), layout) if layout is not None and finite[j]
                   else formula(terms[key[0]], tuple(row.tolist())))
    return out


def terms_text(terms: Iterable[Term]) -> str:
    """The structure of a candidate without its coefficients, in its own order: ``n^2/p + log2(p)``."""
    return " + ".join(_found(t)[2] for t in terms)
