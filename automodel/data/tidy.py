"""The tidy table of a profile: one row per repetition of one kernel (call path, metric) at one point.

Every reader of Extra-P's formats (:mod:`automodel.data.readers.extrap_text`, :mod:`automodel.data.readers`)
builds its frame with :func:`tidy`, so they all have the columns ``kernel, callpath, metric, <params...>,
time`` and the same ``attrs``: ``params`` (the parameter columns, in the file's order), ``source`` (the
file), ``lines`` (a list: where each row is, its line or a record such as ``measurements[3]``, for
messages) and ``notes`` (what the reader decided, e.g. that repetitions were summarised). Values are kept as read, signs
and all: whether they may be modelled is for the caller (:func:`automodel.data.load` wants positive
times; :func:`automodel.fit_many` lists a kernel with a value <= 0 as not modelled).

Examples
--------
>>> frame = tidy("f.jsonl", ["p"], [("main", "time")], np.array([0, 0]), np.array([[1.0], [2.0]]),
...              np.array([3.0, 2.0]), np.array([1, 2]))
>>> frame.to_dict("list")
{'kernel': ['main [time]', 'main [time]'], 'callpath': ['main', 'main'], 'metric': ['time', 'time'], \
'p': [1.0, 2.0], 'time': [3.0, 2.0]}
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from automodel.data.cells import finite_number, place, shown
from automodel.errors import DataError
from automodel.names import LISTED, MAX_PARAMETERS, kernel_label, kernel_name, listing, parameter_problem

__all__ = ["tidy", "kernel_name", "check_params", "number", "every_point", "one_kernel", "keep_rows", "select_rows", "backquoted", "condition_problem", "RESERVED",
           "ROOT"]

#: columns of the tidy table that cannot be parameter names
RESERVED = ("callpath", "kernel", "metric", "time")
#: the call path of a measurement whose file names none (Extra-P's name for it)
ROOT = "<root>"
#: what a ``--where`` condition may hold: names, constants, lists of them, comparisons, arithmetic and the
#: boolean operators; no call, attribute, subscript or ``@`` variable, so that a condition only reads the
#: columns (pandas' python engine would otherwise run ``time.to_csv('x')``)
CONDITION_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
                   ast.Invert, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In,
                   ast.NotIn, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
                   ast.BitAnd, ast.BitOr, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple)


def check_params(names: Sequence[object], at: str) -> list[str]:
    """``names`` as parameter names: at least one and at most :data:`~automodel.names.MAX_PARAMETERS`,
    each an identifier that is not a column of the tidy table, none twice; else a one-line
    :class:`DataError` that starts with ``at`` (file and place)."""
    if not names:
        raise DataError(f"{at}: no parameter names; expected at least one")
    if len(names) > MAX_PARAMETERS:
        raise DataError(f"{at}: {len(names):,} parameter names; expected at most {MAX_PARAMETERS}")
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.isidentifier() or name in RESERVED:
            raise DataError(f"{at}: expected a parameter name made of letters, digits and '_' (not one of "
                            f"{', '.join(RESERVED)}), got {shown(name)}")
        problem = parameter_problem(name)
        if problem is not None:
            raise DataError(f"{at}: expected a parameter name in NFKC normal form: {problem}")
        if name in names[:i]:
            raise DataError(f"{at}: parameter {shown(name)} is named twice")
    return [str(n) for n in names]


def number(value: object, at: str, what: str = "a finite number") -> float:
    """A number of a JSON document (not a boolean, not NaN or infinite) as a float; else a one-line
    :class:`DataError` that starts with ``at``."""
    if not finite_number(value):
        raise DataError(f"{at}: expected {what}, got {shown(value)}")
    return float(value)  # type: ignore[arg-type]


def tidy(source: str, params: Sequence[str], kernels: Sequence[tuple[str, str]], kernel: np.ndarray,
         points: np.ndarray, values: np.ndarray, where: np.ndarray, notes: Sequence[str] = ()) -> pd.DataFrame:
    """The tidy frame of ``len(values)`` rows.

    Parameters
    ----------
    source : str
        The file, for messages.
    params : sequence of str
        Parameter names, checked by :func:`check_params`.
    kernels : sequence of (call path, metric)
        The kernels, in the order the file gives them.
    kernel : int array (N,)
        Row ``i`` is a value of ``kernels[kernel[i]]``...
    points : float array (N, len(params))
        ... at the point ``points[i]``...
    values : float array (N,)
        ... and its value is ``values[i]``.
    where : array (N,)
        Where row ``i`` is in the file: a line number, or a record (``measurements[3]``).
    notes : sequence of str
        What the reader decided, kept in ``attrs["notes"]``.

    Raises
    ------
    DataError
        No rows.
    """
    if not len(values):
        raise DataError(f"{source}: no measurements; expected at least one value of one kernel")
    params = check_params(list(params), source)
    kernel = np.asarray(kernel, dtype=np.intp)
    points = np.asarray(points, float).reshape(len(values), len(params))
    columns = {"kernel": np.asarray([kernel_name(c, m) for c, m in kernels], dtype=object)[kernel],
               "callpath": np.asarray([c for c, _ in kernels], dtype=object)[kernel],
               "metric": np.asarray([m for _, m in kernels], dtype=object)[kernel]}
    columns.update({q: points[:, j] for j, q in enumerate(params)})
    columns["time"] = np.asarray(values, float)
    out = pd.DataFrame(columns)
    # plain lists: attrs that pandas can compare (pd.concat) and write (to_parquet)
    out.attrs.update(params=params, source=source, lines=np.asarray(where).tolist(), notes=list(notes))
    return out


def every_point(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` when every kernel has a value at every point of the file (Extra-P's rule for its JSON,
    JSON Lines and Talpas files: a kernel measured at fewer points makes the file invalid); else a
    one-line :class:`DataError` naming the kernel's first record and the points it lacks."""
    params = frame.attrs["params"]
    point = frame.groupby(params, sort=False).ngroup().to_numpy()
    codes, labels = pd.factorize(frame["kernel"])
    n_points = int(point.max()) + 1
    seen = np.zeros((len(labels), n_points), bool)
    seen[codes, point] = True
    short = np.flatnonzero(~seen.all(axis=1))
    if not len(short):
        return frame
    k = int(short[0])
    first = frame.drop_duplicates(params)
    missing = first[~seen[k, point[first.index]]]
    lacks = "; ".join(", ".join(f"{q} = {v:g}" for q, v in zip(params, row))
                      for row in missing[params].head(LISTED).itertuples(index=False))
    more = f" and {len(missing) - LISTED} more" if len(missing) > LISTED else ""
    at = place(frame.attrs["lines"][int(np.argmax(codes == k))])
    raise DataError(f"{frame.attrs['source']}, {at}: kernel {shown(labels[k])} has values at "
                    f"{int(seen[k].sum())} of the {n_points} points of the file (none at {lacks}{more}); "
                    "expected every kernel at every point")


def _listing(labels: Sequence[object]) -> str:
    """``labels`` as a message lists them (:func:`automodel.names.listing`), each quoted as a cell."""
    return listing(labels, shown)


def one_kernel(frame: pd.DataFrame, name: str | None = None) -> pd.DataFrame:
    """The rows of one kernel of ``frame`` (its ``kernel`` column), its ``attrs`` kept (``lines`` cut
    to the rows kept).

    Parameters
    ----------
    frame : DataFrame
        A tidy frame, or a table of runs (returned as it is when it has no ``kernel`` column and
        ``name`` is None).
    name : str, optional
        The kernel label (:func:`~automodel.names.kernel_name`), or its call path alone when it has one
        metric (:func:`~automodel.names.kernel_label`). None: the frame must hold a single kernel.

    Raises
    ------
    DataError
        Several kernels and no ``name``, or no kernel of that name: one line listing the kernels.
    """
    src = frame.attrs.get("source", "<DataFrame>")
    if "kernel" not in frame.columns:
        if name is None:
            return frame
        raise DataError(f"{src}: no 'kernel' column, so no kernel {shown(name)} to choose; the file holds "
                        "one kernel")
    labels = list(pd.unique(frame["kernel"]))
    if name is None:
        if len(labels) == 1:
            return frame
        raise DataError(f"{src}: {len(labels)} kernels ({_listing(labels)}); a fit models one: name it "
                        "(automodel fit --kernel NAME) or model every kernel (automodel kernels)")
    name = kernel_label(name, labels, DataError, src)
    return keep_rows(frame, (frame["kernel"] == name).to_numpy())


def keep_rows(frame: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows of ``frame`` where ``keep`` (booleans) holds, its ``attrs`` kept and each row's file
    line with it (a CSV's rows get ``lines`` from ``first_row``), so that errors still name the file's lines."""
    out = frame[keep].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    lines = frame.attrs.get("lines")
    if lines is None or len(lines) != len(frame):
        lines = np.arange(len(frame)) + int(frame.attrs.get("first_row", 0))
    out.attrs["lines"] = np.asarray(lines)[keep].tolist()
    return out


def backquoted(expr: str) -> tuple[str, dict[str, str]]:
    """``expr`` with each backquoted column name (pandas' ```my col```) outside quoted strings replaced by
    a plain name, and the column of each such name.

    The condition checked and the condition evaluated are then the same text, with no backquote left for
    pandas to split differently (a backquote inside a quoted string stays, and :func:`condition_problem`
    refuses it).

    >>> backquoted("`call path` != 'a`b' and n > 0")
    ("backquoted_0 != 'a`b' and n > 0", {'backquoted_0': 'call path'})
    """
    out: list[str] = []
    names: dict[str, str] = {}
    i, quote = 0, ""
    while i < len(expr):
        char = expr[i]
        end = expr.find("`", i + 1) if char == "`" and not quote else -1
        if end > i:
            name = f"backquoted_{len(names)}"
            names[name] = expr[i + 1:end]
            out.append(name)
            i = end + 1
            continue
        if quote and char == "\\":
            out.append(expr[i:i + 2])
            i += 2
            continue
        quote = ("" if char == quote else quote) if quote else (char if char in "'\"" else "")
        out.append(char)
        i += 1
    return "".join(out), names


def condition_problem(expr: str, text_columns: Collection[str] = ()) -> str | None:
    """Why ``expr`` is not a plain condition on columns (:data:`CONDITION_NODES`), or None.

    Backquoted column names (pandas' ```my col```) count as names; a backquote inside a quoted string,
    or one left open, is refused, and so is arithmetic that could grow without end
    (:func:`_arithmetic_problem`; ``text_columns``: the names of the columns that hold text).

    >>> condition_problem("theta == 0.3 and `call path` != 'main'") is None
    True
    >>> condition_problem("time.to_csv('x')")
    'a call or an attribute (to_csv) is not a condition'
    >>> condition_problem("'`' == n.to_csv('x') or '`' == 'a'")
    'a backquote inside a quoted string (or left open) is not allowed'
    """
    plain = backquoted(expr)[0]
    if "`" in plain:
        return "a backquote inside a quoted string (or left open) is not allowed"
    try:
        tree = ast.parse(plain.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"not an expression ({getattr(exc, 'msg', None) or type(exc).__name__})"
    nodes = list(ast.walk(tree))  # from the top down: a node's children come after it
    named: set[int] = set()  # the nodes with a column name among them, found once from the bottom up
    for node in reversed(nodes):
        if isinstance(node, ast.Name) or any(id(child) in named for child in ast.iter_child_nodes(node)):
            named.add(id(node))
    inside: set[int] = set()  # the nodes under an operation on constants, judged with it
    for node in nodes:
        if not isinstance(node, CONDITION_NODES):
            target = getattr(node, "func", node)
            name = getattr(target, "attr", None) or getattr(target, "id", None)
            return (f"a call or an attribute{f' ({name})' if name else ''} is not a condition"
                    if isinstance(node, (ast.Call, ast.Attribute)) else f"{type(node).__name__.lower()} is not allowed")
        if isinstance(node, ast.BinOp) and id(node) not in inside:
            if (why := _arithmetic_problem(node, id(node) in named, text_columns)) is not None:
                return why
        if id(node) in inside or (isinstance(node, ast.BinOp) and id(node) not in named):
            inside.update(id(child) for child in ast.iter_child_nodes(node))
    return None


#: the largest integer (in bits) a constant of a condition may reach while it is computed: 2**4096 is
#: computed at once, 9**9**9 (a number of 369 million digits) would take minutes and memory
MAX_CONSTANT_BITS = 4096
_CONSTANT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                 ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
                 ast.Pow: lambda a, b: a ** b}


def _bounded_value(node: ast.AST) -> int | float:
    """The value of arithmetic on number constants (``2**20``, ``-1.5e3``, ``3 * 1024``), computed only
    while its integers stay within :data:`MAX_CONSTANT_BITS` bits.

    Raises
    ------
    ArithmeticError, TypeError, ValueError
        Text or other constants, another operator, an integer that would grow beyond the bound (its
        size is estimated before a power or a product is computed), a division by zero.

    >>> _bounded_value(ast.parse("2**20 + 3 * -1.5", mode="eval").body)
    1048571.5
    """
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _bounded_value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if not (isinstance(node, ast.BinOp) and type(node.op) in _CONSTANT_OPS):
        raise TypeError("only numbers and + - * / // % ** are computed")
    a, b = _bounded_value(node.left), _bounded_value(node.right)
    if isinstance(a, int) and isinstance(b, int):
        bits = {ast.Pow: a.bit_length() * max(b, 0), ast.Mult: a.bit_length() + b.bit_length()}.get(type(node.op), 0)
        if bits > MAX_CONSTANT_BITS:
            raise OverflowError(f"an integer of about {bits} bits, more than {MAX_CONSTANT_BITS}")
    value = _CONSTANT_OPS[type(node.op)](a, b)
    if isinstance(value, complex):
        raise ValueError("a complex number")
    return value


def _arithmetic_problem(node: ast.BinOp, named: bool, text_columns: Collection[str]) -> str | None:
    """Why the arithmetic ``node`` of a condition may not be computed, or None: on constants alone (not
    ``named``: no column among its operands) it is Python's, allowed while its integers stay small
    (``2**20``; :func:`_bounded_value`, not ``9**9**9``: a big integer computed for ever), on text or a
    list a repetition (``'a' * 10**10``: ten gigabytes). On a numeric column it is numpy's, bounded by the
    column's length."""
    if not named:
        try:
            _bounded_value(node)
        except (ArithmeticError, TypeError, ValueError, RecursionError) as exc:
            return f"arithmetic on constants ({shown(ast.unparse(node))}): {exc}; write its value"
        return None
    for side in (node.left, node.right):
        if (isinstance(side, (ast.List, ast.Tuple)) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
                or (isinstance(side, ast.Name) and side.id in text_columns)):
            return f"arithmetic on text or a list ({shown(ast.unparse(node))}) is not a condition"
    return None


def select_rows(frame: pd.DataFrame, expr: str) -> pd.DataFrame:
    """The rows of ``frame`` for which the pandas expression ``expr`` holds (``--where``), e.g.
    ``"collective == 'MPI_Bcast' and mpi == 'IntelMPI'"`` or ``"theta == 0.3"``; ``attrs["where"]``
    says the condition (with one the rows were already cut by: both), which
    :class:`~automodel.data.dataset.Dataset` and a fitted model's options keep.

    Raises
    ------
    DataError
        An expression pandas cannot evaluate on the columns, one that is not a condition, or one no
        row satisfies: one line naming the file and the expression.
    """
    src = frame.attrs.get("source", "<DataFrame>")
    plain, names = backquoted(expr)
    text = {str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c].dtype)}
    text |= {name for name, c in names.items() if c in text}
    if (why := condition_problem(expr, text)) is not None:
        raise DataError(f"{src}: --where {shown(expr)}: {why}; expected a condition on the columns "
                        f"({_listing([str(c) for c in frame.columns])})")
    missing = [c for c in names.values() if c not in frame.columns]
    if missing:
        raise DataError(f"{src}: --where {shown(expr)}: no column {shown(missing[0])}; expected a condition on "
                        f"the columns ({_listing([str(c) for c in frame.columns])})")
    try:
        keep = frame.eval(plain, engine="python", local_dict={}, global_dict={},
                          resolvers=({name: frame[c] for name, c in names.items()},))
    except Exception as exc:  # noqa: BLE001  (pandas raises many kinds for a bad expression)
        why = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{src}: --where {shown(expr)}: {why}; expected a condition on the columns "
                        f"({_listing([str(c) for c in frame.columns])})") from None
    if not isinstance(keep, pd.Series) or keep.dtype != bool:
        raise DataError(f"{src}: --where {shown(expr)}: expected a condition (true or false for each row)")
    if not keep.any():
        raise DataError(f"{src}: --where {shown(expr)}: no row of the {len(frame)} satisfies it")
    out = keep_rows(frame, keep.to_numpy())
    before = frame.attrs.get("where")  # the condition travels with the rows (a model file records it)
    out.attrs["where"] = f"({before}) and ({expr})" if before else expr
    return out
