"""Names from files and command lines: checked once, escaped when shown, renamed where code needs it.

Three rules, one place:

* A **parameter name** (a column that becomes a symbol of the model) is a Python identifier in NFKC
  normal form (:func:`parameter_problem`): Python reads ``ﬁ`` as ``fi``, so two names that differ only
  before NFKC would be one name in an export. Keywords and names the exports use (``lambda``,
  ``math``, ``log2``, ``double``) are valid names; the exports rename them (:func:`code_names`).
* A **label** (a column a role maps to, a space or kernel name) is printable text of bounded length
  (:func:`label_problem`): no control or format characters, so no terminal escapes, no second line, no
  right-to-left override.
* An **application name** (the key of a store's application) is a label in NFKC normal form without
  white space around it (:func:`normal_label`): ``Café`` typed in NFC and in NFD, or with a trailing
  space, prints the same and is one application.
* Whatever is shown goes through :func:`printable` (non-printable characters as Python escapes), and
  nothing from a file is ever written into code except as a name checked here or inside a comment as
  :func:`ascii` text.
"""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

__all__ = ["parameter_problem", "label_problem", "normal_label", "space_problem", "printable", "shortened",
           "code_names", "split_pairs", "text_cell", "kernel_name", "kernel_label", "listing", "LISTED", "PYTHON_RESERVED",
           "C_RESERVED", "MAX_LABEL_CHARS", "MAX_NAME_CHARS", "MAX_PARAMETERS", "SHOWN_CHARACTERS"]

#: longest parameter name
MAX_NAME_CHARS = 64
#: longest label (a column name, a space or kernel name)
MAX_LABEL_CHARS = 200
#: most parameters a file may give (a record of 5,000 took 80 s to read, one of 100,000 never ended)
MAX_PARAMETERS = 64
#: characters of a value (a cell, an item of a command line) an error message quotes
SHOWN_CHARACTERS = 40

#: names a Python export cannot give a parameter: keywords, builtins (the body may call ``max``, ``abs``),
#: the module the body uses and the function itself
PYTHON_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"math", "predicted_time"}

_C_KEYWORDS = """auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert
_Thread_local alignas alignof bool constexpr false nullptr static_assert thread_local true typeof
typeof_unqual _BitInt _Decimal32 _Decimal64 _Decimal128 asm fortran""".split()
_C_MATH = """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 expm1 fabs
fdim floor fma fmax fmin fmod frexp hypot ilogb ldexp lgamma llrint llround log log10 log1p log2 logb lrint
lround modf nan nearbyint nextafter nexttoward pow remainder remquo rint round scalbln scalbn sin sinh sqrt tan
tanh tgamma trunc j0 j1 jn y0 y1 yn gamma drem finite significand scalb exp10 pow10 sincos""".split()
_C_MACROS = """isnan isinf isfinite isnormal signbit fpclassify isgreater isgreaterequal isless islessequal
islessgreater isunordered iszero issubnormal issignaling iscanonical INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL
FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0
FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT math_errhandling float_t double_t signgam M_E M_LOG2E M_LOG10E M_LN2
M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2 NULL errno""".split()
#: names a C export cannot give a parameter: keywords (C89 to C23), ``<math.h>``'s functions (with
#: their ``f`` and ``l`` forms) and macros, the function itself
C_RESERVED = (frozenset(_C_KEYWORDS) | frozenset(_C_MACROS) | {"predicted_time", "main"}
              | frozenset(f"{name}{suffix}" for name in _C_MATH for suffix in ("", "f", "l")))


def parameter_problem(name: object) -> str | None:
    """Why ``name`` cannot be a parameter name (None when it can): it must be a string, an identifier
    of at most :data:`MAX_NAME_CHARS` characters, in NFKC normal form.

    Examples
    --------
    >>> parameter_problem("lambda") is None
    True
    >>> parameter_problem("\\ufb01")
    "'ﬁ' is not in NFKC normal form (Python reads it as 'fi')"
    """
    if not isinstance(name, str) or not name.isidentifier():
        return f"{printable(repr(name))[:MAX_LABEL_CHARS]} is not an identifier (letters, digits and '_')"
    if len(name) > MAX_NAME_CHARS:
        return f"{shortened(repr(name))} is longer than {MAX_NAME_CHARS} characters"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return f"{printable(repr(name))} is not in NFKC normal form (Python reads it as {printable(repr(normal))})"
    return None


def label_problem(text: object) -> str | None:
    """Why ``text`` cannot be a label (None when it can): a string of 1 to :data:`MAX_LABEL_CHARS`
    printable characters (no control, format or line-separator characters)."""
    if not isinstance(text, str):
        return f"expected a string, got {type(text).__name__}"
    if not text or len(text) > MAX_LABEL_CHARS:
        return f"expected 1 to {MAX_LABEL_CHARS} characters, got {len(text)}"
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        return f"{shortened(printable(repr(text)))} holds the non-printable character {ascii(bad)}"
    return None


def normal_label(text: str) -> str:
    """``text`` as a key: NFKC normal form (one spelling for what prints alike, ``ﬁ`` as ``fi``), white
    space around it removed.

    Examples
    --------
    >>> normal_label("Cafe\u0301 ") == normal_label("Caf\u00e9")
    True
    """
    return unicodedata.normalize("NFKC", text).strip()


def printable(text: str) -> str:
    """``text`` with every non-printable character (control, format, line separators; not the space)
    written as its Python escape, so that it shows as one line and cannot move the cursor or change
    the terminal.

    Examples
    --------
    >>> printable("a\\x1b[31mb\\nautomodel: error: c")
    'a\\\\x1b[31mb\\\\nautomodel: error: c'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


#: the first characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV injection")
FORMULA_STARTS = ("=", "+", "-", "@")


def text_cell(text: str) -> str:
    """``text`` (the output of another program) as a CSV cell of free text: one line, its non-printable
    characters escaped (:func:`printable`), and an apostrophe before it when it starts as a formula
    (:data:`FORMULA_STARTS`), which a spreadsheet then shows as text rather than evaluates.

    Examples
    --------
    >>> text_cell('=HYPERLINK("http://x")\\x1b[31m')
    '\\'=HYPERLINK("http://x")\\\\x1b[31m'
    """
    text = printable(text)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def shortened(text: str) -> str:
    """``text`` (a value's repr) as an error message quotes it: whole up to :data:`SHOWN_CHARACTERS`
    characters, else its start and how many characters it has.

    Examples
    --------
    >>> shortened(repr("k" * 5000))
    "'kkkkkkkkkkkkkkkkkkkkkkkkkkk... (5002 chars)"
    """
    return text if len(text) <= SHOWN_CHARACTERS else f"{text[:SHOWN_CHARACTERS - 12]}... ({len(text)} chars)"


_ASCII_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_C_PREFIX = re.compile(r"_[A-Z_]")


def _spelled(name: str, language: str) -> str:
    """``name`` with every character the language cannot read as itself written ``_uXXXX``: in C any
    that is not ASCII, in Python any that NFKC changes."""
    if language == "c":
        if _ASCII_NAME.match(name):
            return name
        out = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else f"_u{ord(c):04x}" for c in name)
        return out if not out[0].isdigit() else "_" + out
    return "".join(c if unicodedata.normalize("NFKC", c) == c else f"_u{ord(c):04x}" for c in name)


def code_names(params: tuple[str, ...] | list[str], language: str) -> dict[str, str]:
    """The name each parameter has in exported code (``"python"`` or ``"c"``): itself when the language
    reads it as itself and it is not reserved (:data:`PYTHON_RESERVED`, :data:`C_RESERVED`); else its
    spelling in the language (:func:`_spelled`) followed by ``_`` as often as it takes to be neither
    reserved nor the name of another parameter.

    Examples
    --------
    >>> code_names(["n", "lambda", "math"], "python")
    {'n': 'n', 'lambda': 'lambda_', 'math': 'math_'}
    >>> code_names(["log2", "double", "log2_"], "c")
    {'log2': 'log2__', 'double': 'double_', 'log2_': 'log2_'}
    """
    reserved = C_RESERVED if language == "c" else PYTHON_RESERVED

    def free(name: str) -> bool:  # C reserves every name that starts with __ or _ and a capital
        return name not in reserved and not (language == "c" and _C_PREFIX.match(name))

    taken = set(params)
    out = {q: q for q in params if _spelled(q, language) == q and free(q)}
    used = set(out.values())
    for q in params:
        if q in out:
            continue
        name = _spelled(q, language)
        name = "p" + name if language == "c" and _C_PREFIX.match(name) else name
        while not free(name) or name in used or name in taken:
            name += "_"
        out[q] = name
        used.add(name)
    return {q: out[q] for q in params}


_SPACE_NAME = re.compile(r"\w[\w .+-]*\Z")
#: longest search-space name
MAX_SPACE_CHARS = 100


def space_problem(name: object) -> str | None:
    """Why ``name`` cannot be the name of a search space (None when it can): letters, digits, ``_``,
    and after the first character also spaces and ``. + -``, at most :data:`MAX_SPACE_CHARS`.

    Examples
    --------
    >>> space_problem("default") is None
    True
    >>> space_problem("x'; import os") is not None
    True
    """
    if not isinstance(name, str):
        return f"expected a string, got {type(name).__name__}"
    if len(name) > MAX_SPACE_CHARS or not _SPACE_NAME.match(name):
        return (f"expected a name of letters, digits, '_' and (after the first) spaces and '. + -', at most "
                f"{MAX_SPACE_CHARS} characters, got {shortened(printable(repr(name)))}")
    return None


def split_pairs(items: Iterable[str], flag: str, error: type[Exception], expected: str = "NAME=VALUE",
                shown: str | None = None) -> dict[str, str]:
    """``NAME=VALUE`` items as a dict of names (stripped) to values (as written).

    Parameters
    ----------
    items
        The items, e.g. ``["k=8", "iters=1e3"]``.
    flag
        The option they came from, for the message (``--param``).
    error
        The error class raised: DataError, or SpaceError for ``--template-option`` (an
        :class:`~automodel.errors.AutomodelError`; passed in, as this module sits below the errors).
    expected
        What an item should look like, for the message.
    shown
        What the message quotes (default: the faulty item), e.g. the whole ``--target`` text; quoted
        :func:`shortened`, as the name and values of an item given twice.

    Raises
    ------
    Exception
        ``error`` in one line when an item has no ``=`` or no name, or names what an earlier item
        named: the later value silently replaced the earlier one (``--param k=2 k=200``,
        ``--target n=1e6,p=8,p=9``).

    Examples
    --------
    >>> split_pairs(["k=8", " iters =1e3"], "--param", ValueError)
    {'k': '8', 'iters': '1e3'}
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        quoted = shortened(repr(item if shown is None else shown))
        if not sep or not name:
            raise error(f"{flag} {quoted}: expected {expected}")
        if name in out:
            first, again = (shortened(printable(f"{name}={v.strip()}")) for v in (out[name], value))
            raise error(f"{flag} {quoted}: {shortened(printable(name))} is given twice ({first} and {again}), "
                        "expected each name once")
        out[name] = value
    return out


def kernel_name(callpath: str, metric: str) -> str:
    """The kernel label of a call path and metric: ``"main->solve [time]"`` (the call path alone when
    the file names no metric)."""
    return f"{callpath} [{metric}]" if metric else callpath


#: names (kernels, columns) a message lists, at most
LISTED = 5


def listing(names: Sequence[object], quote: Callable[[object], str] = lambda name: printable(repr(name))) -> str:
    """The first :data:`LISTED` of ``names`` as a message lists them, each quoted by ``quote``, and how
    many there are in all when there are more.

    Examples
    --------
    >>> listing(["a", "b", "c", "d", "e", "f"])
    "'a', 'b', 'c', 'd', 'e', ... (6 in all)"
    """
    listed = ", ".join(map(quote, names[:LISTED]))
    return listed + (f", ... ({len(names)} in all)" if len(names) > LISTED else "")


def kernel_label(name: str, labels: Iterable[str], error: type[Exception], at: str) -> str:
    """The kernel label that ``name`` (a ``--kernel`` argument) means among ``labels``: the label itself,
    or a call path written without its metric (``main->solve`` for ``main->solve [time]``) when the
    file holds that call path for one metric only.

    Raises
    ------
    Exception
        ``error`` in one line starting with ``at`` (the file): no such kernel (listing the first
        labels), or a call path measured in several metrics (listing them: name one).

    Examples
    --------
    >>> kernel_label("solve", ["main [time]", "solve [time]"], ValueError, "k.txt")
    'solve [time]'
    """
    labels = list(labels)
    if name in labels:
        return name
    same = [label for label in labels if label.endswith("]") and label.rpartition(" [")[0] == name]
    if len(same) == 1:
        return same[0]

    if same:
        raise error(f"{at}: kernel {printable(repr(name))} is measured in {len(same)} metrics ({listing(same)}); "
                    "name one")
    raise error(f"{at}: no kernel {printable(repr(name))}; expected one of {listing(labels)}")
