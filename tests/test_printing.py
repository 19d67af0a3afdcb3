"""The printers: golden strings per format, and the cached text of term models equal to the printer's."""

import math

import numpy as np
import sympy

from automodel import printing
from automodel.model import TermModel
from automodel.printing import formula, prime_orders, terms_text, to_c, to_latex, to_python, to_text
from automodel.space.config import load_space
from automodel.space.parse import parse_term
from automodel.space.symbols import log2, symbol

n, p, cpu = symbol("n"), symbol("p"), symbol("cpu")


def test_golden_strings():
    expr = sympy.Float(1.23456e-6) * n ** 2 * log2(n) / p + sympy.Float(3.2e-3) * sympy.sqrt(p) \
        + sympy.Float(0.5) / cpu + sympy.Float(2.0)
    assert to_text(expr) == "1.235e-6*n^2*log2(n)/p + 0.0032*sqrt(p) + 2.0 + 0.5/cpu"
    assert to_text(expr, 2) == "1.2e-6*n^2*log2(n)/p + 0.0032*sqrt(p) + 2.0 + 0.5/cpu"
    assert to_text(sympy.Float(0.25) * n ** sympy.Rational(3, 2) / sympy.sqrt(p)) == "0.25*n^(3/2)/sqrt(p)"
    assert to_latex(sympy.Float(1.5) * log2(p) ** 2) == r"1.5 \log_{2}\left(p\right)^{2}"
    assert to_c(sympy.Float(0.0032) * log2(p) + n ** 3) == "pow(n, 3) + 0.0032*log2(p)"
    assert to_python(sympy.Float(0.0032) * log2(p)) == "0.0032*math.log2(p)"
    assert terms_text((parse_term("n^2/p"), parse_term("log2(p)"))) == "n^2/p + log2(p)"


def test_code_printers_round_trip():
    rng = np.random.default_rng(3)
    c = rng.uniform(0, 1, 3) * np.array([1e-7, 1e-3, 1.0])
    expr = sympy.Float(c[0]) * n ** 2 / p + sympy.Float(c[1]) * log2(p) + sympy.Float(c[2]) * sympy.ceiling(log2(p))
    value = float(expr.subs({n: 3000.0, p: 48.0}))
    assert eval(to_python(expr), {"math": math, "n": 3000.0, "p": 48.0}) == value  # noqa: S307 (a test)
    c_like = to_c(expr).replace("pow(n, 2)", "n**2").replace("log2", "math.log2").replace("ceil", "math.ceil")
    assert eval(c_like, {"math": math, "n": 3000.0, "p": 48.0}) == value  # noqa: S307


def test_term_model_text_equals_the_printed_expression():
    space = load_space("default")
    terms = {t for stage in space.stages.values() for v in stage.values() if isinstance(v, tuple)
             for t in v if hasattr(t, "factors")}
    terms |= {t * parse_term(f) for t in list(terms) for f in ("1/p", "log2(p)", "1/cpu")}
    terms |= {parse_term("sigmoid(p, n/48)")}
    terms = sorted(terms, key=str)
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(300):
        chosen = tuple(terms[i] for i in rng.choice(len(terms), rng.integers(1, 5), replace=False))
        coefs = tuple(float(rng.choice([1, 1, -1]) * 10 ** rng.uniform(-12, 12)) for _ in chosen)
        if rng.random() < 0.2:
            coefs = (0.0,) + coefs[1:]  # a coefficient NNLS set to zero
        cases.append((chosen, coefs))
    for primed in (False, True):  # print orders found one sum at a time, or all in one sympy call
        printing._ORDERS.clear()
        if primed:
            prime_orders(tuple(t for t, c in zip(*case) if c != 0.0) for case in cases)
        for chosen, coefs in cases:
            assert formula(chosen, coefs) == to_text(TermModel(chosen, coefs).expr)
    one = parse_term("1")
    for t in terms:  # two terms with the constant: sympy has a special order for "c0 - c1*x"
        for coefs in ((2.0, -1.5), (-2.0, 1.5), (2.0, 1.5), (-2.0, -1.5)):
            assert formula((t, one), coefs) == to_text(TermModel((t, one), coefs).expr)
    assert formula((one,), (3.0,)) == to_text(TermModel((one,), (3.0,)).expr)
    assert formula((parse_term("p"), one), (-1.5, 2.0)) == "2.0 - 1.5*p"
