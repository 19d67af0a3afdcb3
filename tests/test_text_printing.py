"""The printers: golden strings per format, printed code that computes the model's predictions, and the
cached text of term models equal to the text printer's output for the model's expression."""

import math

import numpy as np
import pytest
import sympy

from automodel.text import printing
from automodel.model.core import TermModel
from automodel.text.printing import (TextPrinter, formula, formulas, prime_orders, term_text, terms_text, to_c,
                                to_latex, to_python, to_text)
from automodel.space.config import load_space
from automodel.space.parse import parse_term
from automodel.space.symbols import log2, symbol
from automodel.space.terms import ONE, PowerLog, Term, saturating

n, p, cpu = symbol("n"), symbol("p"), symbol("cpu")


def _terms() -> list[Term]:
    """The default space's terms, some products of them, a sigmoid and a ceiling."""
    space = load_space("default")
    levels = {"p": np.array([1.0, 2, 4, 8, 16, 32])}  # caps put at measured levels, as the search puts them
    terms = {t for stage in space.stages.values() for v in stage.settings().values() if isinstance(v, tuple)
             for t in saturating([t for t in v if hasattr(t, "factors")], levels)}
    terms |= {t * parse_term(f) for t in list(terms) for f in ("1/p", "log2(p)", "1/cpu")}
    terms |= {parse_term("sigmoid(p, n/48)"), parse_term("ceil_log2(p)")}
    return sorted(terms, key=str)


def _random_models(rng: np.random.Generator, terms: list[Term], count: int) -> list[tuple[tuple, tuple]]:
    cases = []
    for _ in range(count):
        chosen = tuple(terms[i] for i in rng.choice(len(terms), rng.integers(1, 5), replace=False))
        coefs = tuple(float(rng.choice([1, 1, -1]) * 10 ** rng.uniform(-12, 12)) for _ in chosen)
        if rng.random() < 0.2:
            coefs = (0.0,) + coefs[1:]  # a coefficient NNLS set to zero
        cases.append((chosen, coefs))
    return cases


def test_golden_strings():
    expr = sympy.Float(1.23456e-6) * n ** 2 * log2(n) / p + sympy.Float(3.2e-3) * sympy.sqrt(p) \
        + sympy.Float(0.5) / cpu + sympy.Float(2.0)
    assert to_text(expr) == "1.235e-6*n^2*log2(n)/p + 0.0032*sqrt(p) + 2.0 + 0.5/cpu"
    assert to_text(expr, 2) == "1.2e-6*n^2*log2(n)/p + 0.0032*sqrt(p) + 2.0 + 0.5/cpu"
    assert to_text(sympy.Float(0.25) * n ** sympy.Rational(3, 2) / sympy.sqrt(p)) == "0.25*n^(3/2)/sqrt(p)"
    assert to_text(sympy.Float(2.0)) == "2.0"
    assert to_latex(sympy.Float(1.5) * log2(p) ** 2) == r"1.5 \log_{2}\left(p\right)^{2}"
    assert to_c(sympy.Float(0.0032) * log2(p) + n ** 3) == "pow(n, 3) + 0.0032*log2(p)"
    assert to_python(sympy.Float(0.0032) * log2(p)) == "0.0032*math.log2(p)"
    assert to_c(sympy.Float(0.1) + sympy.Float(0.2)) == "0.30000000000000004"  # exact, not rounded
    assert terms_text((parse_term("n^2/p"), parse_term("log2(p)"))) == "n^2/p + log2(p)"


def test_min_prints_in_lower_case_and_reads_back():
    """over1(p) and cap(p, c) print as ``min(...)`` like every other function (sympy prints ``Min``), in
    the formulas of term models too, and the text reads back as the same expression (sympy's parser)."""
    terms = (parse_term("over1(p)"), parse_term("1/p"), parse_term("cap(p, 16)"), parse_term("1/cap(p, 8)"))
    model = TermModel(terms, (5.018, 62.75, 1.5, 2.5))
    text = formula(model.terms, model.coefficients)
    assert text == to_text(model.expr) == "5.018*min(1, p - 1) + 1.5*min(16, p) + 2.5/min(8, p) + 62.75/p"
    assert terms_text(terms[:1]) == "min(1, p - 1)" and term_text(terms[0]) == "*min(1, p - 1)"
    assert to_text(sympy.Max(p, n)) == "max(n, p)"
    assert sympy.sympify(text, locals={"p": p}) == model.expr


def test_coefficients_have_four_significant_digits():
    number = TextPrinter().number
    assert [number(v) for v in (1e-5, 12345.6, 1e-4, 2.0, 123.45, 0.00012345)] == \
        ["1.0e-5", "1.235e+4", "0.0001", "2.0", "123.5", "0.0001235"]
    assert TextPrinter({"digits": 6}).number(12345.6) == "12345.6"


def test_term_text():
    assert term_text(parse_term("n^2/p")) == "*n^2/p"
    assert term_text(parse_term("1/cpu")) == "/cpu"
    assert term_text(parse_term("sqrt(p)*log2(p)")) == "*sqrt(p)*log2(p)"
    assert term_text(ONE) == ""
    assert term_text(Term((PowerLog("p", 1, 0, 1),))) is None  # c*(p + 1) prints as c*p + c
    assert formula((parse_term("n^2/p"), parse_term("p")), (1e-6, 1e-4)) == "1.0e-6*n^2/p + 0.0001*p"


def test_printed_code_computes_the_predictions():
    terms = _terms()
    rng = np.random.default_rng(3)
    frame = {"n": np.array([3000.0, 500.0]), "p": np.array([48.0, 5.0]), "cpu": np.array([0.5, 1.0]),
             "bw": np.array([0.8, 1.0]), "x": np.array([7.0, 2.5])}
    c_names = {"pow": math.pow, "log2": math.log2, "sqrt": math.sqrt, "exp": math.exp, "ceil": math.ceil,
               "cbrt": np.cbrt, "fmin": min}
    for chosen, coefs in _random_models(rng, terms, 40):
        model = TermModel(chosen, coefs)
        predicted = model.predict(frame)
        for row in range(2):
            values = {q: float(v[row]) for q, v in frame.items()}
            python = eval(to_python(model.expr), {"math": math, **values})  # noqa: S307 (a test)
            c_like = eval(to_c(model.expr), {**c_names, **values})  # noqa: S307 (C99 reads as Python here)
            assert python == pytest.approx(predicted[row], rel=1e-12, abs=1e-300)
            assert c_like == pytest.approx(predicted[row], rel=1e-12, abs=1e-300)


def test_term_model_text_equals_the_printed_expression():
    terms = _terms()
    cases = _random_models(np.random.default_rng(7), terms, 300)
    for primed in (False, True):  # print orders found one sum at a time, or all in one sympy call
        printing._ORDERS.clear()
        if primed:
            prime_orders(tuple(t for t, c in zip(*case) if c != 0.0) for case in cases)
        for chosen, coefs in cases:
            assert formula(chosen, coefs) == to_text(TermModel(chosen, coefs).expr)
    for t in terms:  # two terms with the constant: sympy has a special order for "c0 - c1*x"
        for coefs in ((2.0, -1.5), (-2.0, 1.5), (2.0, 1.5), (-2.0, -1.5)):
            assert formula((t, ONE), coefs) == to_text(TermModel((t, ONE), coefs).expr)
    assert formula((ONE,), (3.0,)) == to_text(TermModel((ONE,), (3.0,)).expr)
    assert formula((parse_term("p"), ONE), (-1.5, 2.0)) == "2.0 - 1.5*p"
    offset = Term((PowerLog("p", 1, 0, 1),))  # printed from its expression: 2.5*p + 2.5, not 2.5*p + 1.5
    assert formula((offset,), (2.5,)) == to_text(TermModel((offset,), (2.5,)).expr) == "2.5*p + 2.5"
    assert formula((offset, ONE), (2.5, 1.0)) == "2.5*p + 3.5"
    assert formula((parse_term("p"),), (math.inf,)) == to_text(TermModel((parse_term("p"),), (math.inf,)).expr)


def test_formulas_of_many_kernels_equal_one_at_a_time():
    terms = _terms()
    rng = np.random.default_rng(11)
    candidates = [tuple(terms[i] for i in rng.choice(len(terms), rng.integers(1, 4), replace=False)) + (ONE,)
                  for _ in range(40)]
    best = rng.integers(-1, len(candidates), 200)
    coefs = np.full((len(best), 4), np.nan)
    for j, b in enumerate(best):
        if b >= 0:
            k = len(candidates[b])
            coefs[j, :k] = rng.choice([1.0, -1.0], k) * 10 ** rng.uniform(-8, 2, k) * (rng.random(k) > 0.15)
    printing._ORDERS.clear()
    texts = formulas(candidates, best, coefs)
    assert texts == [formula(candidates[b], tuple(coefs[j, :len(candidates[b])])) if b >= 0 else ""
                     for j, b in enumerate(best)]
    assert all(t == to_text(TermModel(candidates[b], tuple(coefs[j, :len(candidates[b])])).expr)
               for j, (b, t) in enumerate(zip(best, texts)) if b >= 0)


def test_number_is_the_printers_float_text():
    rng = np.random.default_rng(11)
    values = np.concatenate([rng.choice([-1, 1], 3000) * 10 ** rng.uniform(-14, 14, 3000),
                             [0.0, 1.0, -1.0, 0.5, 1e-4, 9.9995, 99995.0, 123456.0, 0.00012345]])
    for digits in (4, 6):
        printer = TextPrinter({"digits": digits})
        for v in values:
            assert printer.number(v) == printer._print_Float(sympy.Float(float(v))), (digits, v)


def test_a_later_process_prints_known_terms_without_sympy(tmp_path):
    import json
    import subprocess
    import sys

    code = ("import sys\nfrom automodel.text.printing import formula, terms_text\nfrom automodel.space.parse import parse_term\n"
            "terms = (parse_term('n^2/p'), parse_term('log2(p)'), parse_term('1'))\n"
            "print(formula(terms, (1.5e-6, -2.0, 0.25)), '|', terms_text(terms), '|', 'sympy' in sys.modules)")
    env = {**__import__("os").environ, "AUTOMODEL_CACHE_DIR": str(tmp_path)}
    first, second = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True).stdout.strip() for _ in range(2))
    assert first.rsplit("|", 1)[0] == second.rsplit("|", 1)[0]
    assert first.endswith("True") and second.endswith("False")
    assert first.split(" | ")[0] == to_text(TermModel((parse_term('n^2/p'), parse_term('log2(p)'), ONE),
                                                      (1.5e-6, -2.0, 0.25)).expr)
    cache = tmp_path / f"printing-{printing.CACHE_VERSION}.json"
    assert len(json.loads(cache.read_text())["terms"]) == 3
    cache.write_text("{not json")  # a damaged file is ignored, and written again
    third = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert third.stdout.strip() == first and json.loads(cache.read_text())["version"] == printing.CACHE_VERSION
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**env, "AUTOMODEL_CACHE_DIR": "off"})
    assert off.stdout.strip() == first


def test_terms_first_printed_after_the_cache_was_filled_are_kept_too(tmp_path):
    """Issue 35: a sum with a term the cache had no place for was ordered alone and its places thrown
    away, so every later process that printed it imported sympy again (0.38 s of `automodel kernels`)."""
    import subprocess
    import sys

    code = ("import sys\nfrom automodel.text.printing import formula\nfrom automodel.space.parse import parse_term\n"
            "terms = tuple(parse_term(t) for t in sys.argv[1].split(';'))\n"
            "print(formula(terms, [1.5 + i for i in range(len(terms))]), '|', 'sympy' in sys.modules)")
    env = {**__import__("os").environ, "AUTOMODEL_CACHE_DIR": str(tmp_path)}

    def run(terms: str) -> tuple[str, str]:
        out = subprocess.run([sys.executable, "-c", code, terms], capture_output=True, text=True, env=env, check=True)
        text, imported = out.stdout.strip().split(" | ")
        return text, imported

    assert run("n^2/p;log2(p);1")[1] == "True"
    later = run("sqrt(n);n^2/p;1")
    assert later[1] == "True"  # sqrt(n) is new to the cache
    assert run("sqrt(n);n^2/p;1") == (later[0], "False")
    assert run("log2(p);sqrt(n)")[1] == "False"  # any sum of known terms


def _cache_of(folder, monkeypatch, text="*EVIL"):
    """A cache file in ``folder`` whose text for n^2/p is ``text``, and this process made to read it afresh."""
    import json

    term = parse_term("n^2/p")
    folder.mkdir(exist_ok=True)
    body = {"version": printing.CACHE_VERSION, "sympy": sympy.__version__,
            "terms": [[term.key, term.to_dict(), text, True, "n^2/p", 0]]}
    path = folder / f"printing-{printing.CACHE_VERSION}.json"
    path.write_text(json.dumps(body))
    monkeypatch.setenv(printing.CACHE_ENV, str(folder))
    monkeypatch.setattr(printing, "_STATE", {"read": False, "new": False, "reordered": False})
    monkeypatch.setattr(printing, "_FILE", {})
    return path, term


def test_a_cache_that_someone_else_could_write_is_not_read(tmp_path, monkeypatch):
    """Before: the texts of a cache in a folder anyone may write, or a link to a file elsewhere, became
    the formulas printed and written to model files ('0.01*n+__import__(...)'); now such a cache is
    not read (the command runs as with AUTOMODEL_CACHE_DIR=off); one of this user's own folder is."""
    path, term = _cache_of(tmp_path / "mine", monkeypatch)
    (tmp_path / "mine").chmod(0o700)
    printing._read_cache()
    assert printing._FILE[term.key][1] == "*EVIL"  # the control: this file is read where it may be
    shared = tmp_path / "shared"
    _cache_of(shared, monkeypatch)
    shared.chmod(0o777)
    assert printing.cache_file() is None
    printing._read_cache()
    assert printing._FILE == {}
    linked = tmp_path / "linked"
    linked.mkdir(mode=0o700)
    (linked / path.name).symlink_to(path)
    _cache_of(tmp_path / "other", monkeypatch)
    monkeypatch.setenv(printing.CACHE_ENV, str(linked))
    printing._read_cache()
    assert printing._FILE == {}
    for value in (str(path), "relative/cache", str(tmp_path / "missing")):  # a file, a relative path, no folder
        monkeypatch.setenv(printing.CACHE_ENV, value)
        assert printing.cache_file() is None


def test_a_cache_nested_too_deep_is_ignored_not_a_traceback(tmp_path, monkeypatch):
    """Before: a cache file of 100,000 nested brackets was a RecursionError traceback of every command."""
    path, _ = _cache_of(tmp_path / "deep", monkeypatch)
    (tmp_path / "deep").chmod(0o700)
    path.write_text("[" * 100_000 + "]" * 100_000)
    printing._read_cache()
    assert printing._FILE == {}
    assert formula((parse_term("n^2/p"),), (1.5,)) == "1.5*n^2/p"
