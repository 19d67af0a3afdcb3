"""Many kernels: ``automodel.fit_many`` against Extra-P's command line on one file of kernels.

Run ``python -m benchmarks.kernels [--quick] [--kernels N] [--params 1|2]``. With ``--params 2`` the race
is :func:`race_two_parameters` (kernels of ``p`` and ``n``, searched by the multi-stage search, CPU
seconds compared); the rest of this text is the one-parameter race, :func:`race`.  The file (``benchmarks.extrap_text.
synthetic_kernels``) holds ``N`` kernels ``a + b p^e log2(p)^l`` measured at ``p = 2, 4, ..., 2^5``
with 2 % noise; both tools model every kernel of the same file:

* automodel in-process, after importing the modules it uses and collecting the garbage of those
  imports (so imports are not counted; automodel's caches are cold): reading the file, modelling
  every kernel, the summary with every formula. The best of a few more runs is reported too, and the
  command line ``automodel kernels FILE`` in a new process (imports included), for comparison with
  Extra-P's, which always starts cold;
* Extra-P 4 (``extrap --text FILE``, default modeler), timed by ``benchmarks.extrap_tool.time_cli``.

Accuracy: each kernel's prediction at the held-out ``p = 2^(points + 2)`` (4x the largest measured
p) against the true, noise-free function, as a relative error (median, mean, worst over kernels), and
how often the model's leading term (its asymptotically fastest-growing term) is the true ``p^e
log2(p)^l``. Extra-P's functions are read from its printed Python form with a small ``ast`` reader
(nothing is evaluated). On a sample of kernels, :func:`automodel.fit` (full leaderboard with the
seeded templates) is run too, and it is checked that ``fit_many`` picks the model
``automodel.fit`` chooses among the searched candidates (``templates=()``).
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.extrap_text import format_text, synthetic_kernels
from benchmarks.extrap_tool import ensure_extrap, time_cli

TARGET_SECONDS = 1.0
TARGET_RATIO = 35.0
#: the two-parameter race: automodel's CPU seconds at least this many times fewer than Extra-P's
TARGET_RATIO_TWO = 5.0
#: building blocks (exponent, log exponent) of the two-parameter kernels, from Extra-P's hypothesis family
#: (x^(i/j) log2^h x, non-negative exponents); (0, 0): the parameter has no effect
P_BLOCKS = ((0.0, 0), (0.0, 1), (0.5, 0), (1.0, 0))
N_BLOCKS = ((0.5, 0), (1.0, 0), (1.0, 1), (1.5, 0), (2.0, 0), (0.0, 1))
#: the measured grid (5 p x 5 n, as Extra-P's multi-parameter modeler wants) and the held-out points beyond it
TRAIN_P, TRAIN_N = 2.0 ** np.arange(1, 6), 2.0 ** np.arange(10, 15)
TEST_P, TEST_N = (64.0, 128.0), (2.0 ** 15, 2.0 ** 16)
#: what fit_many uses, imported before timing so that the measurement is the modelling, not imports
_MODULES = ("automodel.kernels.fit_many", "automodel.data.readers.extrap_text", "automodel.fitting", "automodel.search.engine",
            "automodel.search.score", "automodel.output.export", "sympy", "mpmath.libmp",
            "sympy.combinatorics", "sympy.sets.setexpr")  # the last two: sympy imports them on first use


# -- Extra-P's functions -----------------------------------------------------------------------------
def _constant(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return -_constant(node.operand) if isinstance(node.op, ast.USub) else _constant(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _constant(node.left) / _constant(node.right)
    raise ValueError(f"expected a number, got {ast.dump(node)}")


def _factors(node: ast.AST, params: tuple[str, ...]) -> tuple[float, tuple[tuple[float, float], ...]]:
    """(coefficient, (exponent of ``x``, exponent of ``log2(x)``) for each ``x`` of ``params``) of a product."""
    none = ((0.0, 0.0),) * len(params)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        (ca, a), (cb, b) = _factors(node.left, params), _factors(node.right, params)
        return ca * cb, tuple((ea + eb, la + lb) for (ea, la), (eb, lb) in zip(a, b))
    if isinstance(node, ast.Name) and node.id in params:
        return 1.0, tuple((1.0, 0.0) if q == node.id else (0.0, 0.0) for q in params)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "log2"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in params):
        return 1.0, tuple((0.0, 1.0) if q == node.args[0].id else (0.0, 0.0) for q in params)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        c, exps = _factors(node.left, params)
        k = _constant(node.right)
        if c != 1.0:
            raise ValueError("a power of a coefficient")
        return 1.0, tuple((e * k, l * k) for e, l in exps)
    return _constant(node), none


def extrap_function(text: str, params: tuple[str, ...] = ("p",)) -> list[tuple[float, tuple[tuple[float, float], ...]]]:
    """Terms of an Extra-P function printed as Python (``{model:python}``): each ``(coefficient, ((e, l)
    per parameter))`` for ``coefficient * prod_x x^e * log2(x)^l``; read with :mod:`ast`, nothing evaluated.

    >>> extrap_function("1.5+2*p**(1/2)*log2(n)**(1)", ("p", "n"))
    [(1.5, ((0.0, 0.0), (0.0, 0.0))), (2.0, ((0.5, 0.0), (0.0, 1.0)))]
    """
    terms: list[tuple[float, tuple[tuple[float, float], ...]]] = []

    def walk(node: ast.AST, sign: float) -> None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            walk(node.left, sign)
            walk(node.right, -sign if isinstance(node.op, ast.Sub) else sign)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            walk(node.operand, -sign)
        else:
            c, exps = _factors(node, params)
            terms.append((sign * c, exps))

    walk(ast.parse(text.strip(), mode="eval").body, 1.0)
    return terms


def extrap_terms(text: str, param: str = "p") -> list[tuple[float, float, float]]:
    """Terms ``(coefficient, e, l)`` of a one-parameter Extra-P function (:func:`extrap_function`), each
    ``coefficient * param^e * log2(param)^l``.

    >>> extrap_terms("-68.29+11.77*p**(7/3)")
    [(-68.29, 0.0, 0.0), (11.77, 2.3333333333333335, 0.0)]
    """
    return [(c, *exps[0]) for c, exps in extrap_function(text, (param,))]


def _value(terms: list[tuple[float, float, float]], p: float) -> float:
    return float(sum(c * p ** e * math.log2(p) ** l for c, e, l in terms))


def _function_values(terms: list[tuple[float, tuple[tuple[float, float], ...]]], points: np.ndarray) -> np.ndarray:
    """An :func:`extrap_function` at ``points`` (B, parameters)."""
    out = np.zeros(len(points))
    for c, exps in terms:
        out += c * np.prod([points[:, j] ** e * np.log2(points[:, j]) ** l for j, (e, l) in enumerate(exps)], axis=0)
    return out


def _leading(orders: list[tuple[float, float]]) -> tuple[float, float] | None:
    return max(orders) if orders else None


# -- automodel's models ------------------------------------------------------------------------------
def _term_order(term) -> tuple[float, float]:
    """Asymptotic order (e, l) of a term in p: powers and logs add up; sigmoid(p) grows like p,
    ceil(log2 p) like log2 p, over1(p) is a constant."""
    e = l = 0.0
    for f in term.factors:
        kind = type(f).__name__
        if kind == "PowerLog":
            e, l = e + float(f.exponent), l + f.log_exponent
        elif kind == "Sigmoid":
            e += 1.0
        elif kind == "CeilLog2":
            l += 1.0
    return e, l


def _model_leading(model) -> tuple[float, float] | None:
    core = model.core
    return _leading([_term_order(t) for t, c in zip(core.terms, core.coefficients) if c != 0.0])


def _errors(pred: np.ndarray, true: np.ndarray) -> dict:
    err = np.abs(pred - true) / true
    err = np.where(np.isfinite(err), err, np.inf)
    return {"median": float(np.median(err)), "mean": float(np.mean(err)), "worst": float(np.max(err))}


def _recovered(found: list, truths: list[dict]) -> float:
    hits = [f is not None and math.isclose(f[0], t["e"], abs_tol=1e-9) and math.isclose(f[1], t["l"], abs_tol=1e-9)
            for f, t in zip(found, truths)]
    return float(np.mean(hits))


def _automodel(path: Path, names: list[str], test_p: float, space: str, repeats: int) -> dict:
    from automodel.kernels.fit_many import fit_many

    cpu, start = time.process_time(), time.perf_counter()
    result = fit_many(path, space=space)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    best = seconds
    for _ in range(repeats):
        start = time.perf_counter()
        fit_many(path, space=space)
        best = min(best, time.perf_counter() - start)
    pred = np.array([result.models[n].predict({"p": [test_p]})[0] if n in result.models else np.nan
                     for n in names])
    leading = [_model_leading(result.models[n]) if n in result.models else None for n in names]
    return {"seconds": seconds, "best": best, "cpu": cpu, "pred": pred, "leading": leading,
            "how": result.notes[0], "result": result}


def _extrap(path: Path, names: list[str], test_p: float, install: bool) -> dict:
    python, status = ensure_extrap(install=install)
    if python is None:
        return {"status": status}
    with tempfile.TemporaryDirectory(prefix="extrap-kernels-") as tmp:
        out = Path(tmp) / "functions.txt"
        timing = time_cli(["--text", str(path), "--print", "{callpath};{metric};{model:python}",
                           "--disable-progress", "--out", str(out)])
        lines = out.read_text().splitlines() if out.exists() else []
    if timing.status != "ok":
        return {"status": timing.status}
    functions = {}
    for line in lines:
        callpath, metric, text = (line.split(";", 2) + ["", ""])[:3]
        if text:
            functions[f"{callpath} [{metric}]"] = text
    pred, leading = [], []
    for n in names:
        try:
            terms = extrap_terms(functions[n])
        except (KeyError, ValueError, SyntaxError):
            pred.append(np.nan)
            leading.append(None)
            continue
        pred.append(_value(terms, test_p))
        leading.append(_leading([(e, l) for c, e, l in terms if c != 0.0]))
    return {"status": "ok", "seconds": timing.seconds, "cpu": timing.cpu_seconds, "pred": np.array(pred),
            "leading": leading}


def _cli_seconds(path: Path) -> float:
    """Wall time of ``automodel kernels FILE`` in a new process (imports included)."""
    script = Path(sys.executable).parent / "automodel"
    command = [str(script)] if script.exists() else (
        [shutil.which("automodel")] if shutil.which("automodel") else [sys.executable, "-m", "automodel"])
    start = time.perf_counter()
    subprocess.run(command + ["kernels", str(path)], capture_output=True, check=True)
    return time.perf_counter() - start


def _sample(frame_path: Path, result, names: list[str], truths: list[dict], test_p: float,
            size: int) -> dict:
    """automodel.fit on a sample of kernels: its error, and whether fit_many chose the model
    ``automodel.fit(..., templates=())`` chooses."""
    import automodel
    from automodel.data.readers.extrap_text import read_extrap_text

    frame = read_extrap_text(frame_path)
    picks = np.unique(np.linspace(0, len(names) - 1, size).round().astype(int))
    same, fit_pred, many_pred, true = [], [], [], []
    for i in picks:
        sub = frame[frame["kernel"] == names[i]][["p", "time"]]
        full = automodel.fit(sub, progress=False)
        searched = automodel.fit(sub, templates=(), progress=False).best
        same.append(result.models[names[i]].formula == searched.formula)
        fit_pred.append(full.best.predict({"p": [test_p]})[0])
        many_pred.append(result.models[names[i]].predict({"p": [test_p]})[0])
        t = truths[i]
        true.append(t["a"] + t["b"] * test_p ** t["e"] * math.log2(test_p) ** t["l"])
    true_a = np.array(true)
    return {"sample_kernels": len(picks), "sample_same_as_fit_searched": float(np.mean(same)),
            "sample_fit_error_median": _errors(np.array(fit_pred), true_a)["median"],
            "sample_many_error_median": _errors(np.array(many_pred), true_a)["median"]}


def race(n_kernels: int = 1000, n_points: int = 5, quick: bool = False) -> dict:
    """Time and score automodel and Extra-P on one file of ``n_kernels`` kernels of ``n_points`` points.

    ``quick`` (CI): at most 200 kernels, one timed automodel run, a 5-kernel sample, and Extra-P only
    when its virtual environment exists (never installed).

    Returns
    -------
    dict
        Plain numbers and strings. Times in seconds, errors as fractions (0.05 = 5 %):

        ``n_kernels``, ``n_points``, ``train_p`` (the measured p), ``test_p`` (the held-out p);
        ``automodel_seconds`` (read + model + summary, in-process, first run after the imports),
        ``automodel_best_seconds`` (best of that and the repeats), ``automodel_cpu_seconds``,
        ``automodel_cli_seconds`` (``automodel kernels FILE`` in a new process), ``automodel_how``
        (how the kernels were grouped and solved, parallel or not);
        ``automodel_error_median|mean|worst``, ``automodel_leading_term_recovered`` (fraction);
        the same ``automodel_pmnf_*`` keys for ``fit_many(space="pmnf")`` (Extra-P's hypothesis space);
        ``extrap_status`` (``"ok"`` or why not), ``extrap_seconds``, ``extrap_cpu_seconds``,
        ``extrap_error_median|mean|worst``, ``extrap_leading_term_recovered``;
        ``ratio`` (``extrap_seconds / automodel_seconds``), ``ratio_cli`` (``extrap_seconds /
        automodel_cli_seconds``); ``sample_kernels``, ``sample_same_as_fit_searched`` (fraction of
        sampled kernels where fit_many's model is the one ``automodel.fit(..., templates=())`` chooses),
        ``sample_fit_error_median`` (automodel.fit's chosen model, templates included),
        ``sample_many_error_median``; ``target`` and ``target_met`` (``"yes"``, ``"no"`` or
        ``"unknown: ..."``).
    """
    if quick:
        n_kernels = min(n_kernels, 200)
    for module in _MODULES:
        importlib.import_module(module)
    gc.collect()  # the imports' garbage, not the modelling's
    text, truths = synthetic_kernels(n_kernels=n_kernels, n_points=n_points)
    names = [f"{t['region']} [time]" for t in truths]
    test_p = 2.0 ** (n_points + 2)
    true = np.array([t["a"] + t["b"] * test_p ** t["e"] * math.log2(test_p) ** t["l"] for t in truths])
    out: dict = {"n_kernels": n_kernels, "n_points": n_points,
                 "train_p": ", ".join(f"{2 ** k:g}" for k in range(1, n_points + 1)), "test_p": test_p}
    with tempfile.TemporaryDirectory(prefix="kernels-race-") as tmp:
        path = Path(tmp) / "kernels.txt"
        path.write_text(text)
        am = _automodel(path, names, test_p, "default", 0 if quick else 3)
        pmnf = _automodel(path, names, test_p, "pmnf", 0)
        out.update(automodel_seconds=am["seconds"], automodel_best_seconds=am["best"],
                   automodel_cpu_seconds=am["cpu"], automodel_cli_seconds=_cli_seconds(path),
                   automodel_how=am["how"])
        for prefix, run in (("automodel", am), ("automodel_pmnf", pmnf)):
            out.update({f"{prefix}_error_{k}": v for k, v in _errors(run["pred"], true).items()})
            out[f"{prefix}_leading_term_recovered"] = _recovered(run["leading"], truths)
        out["automodel_pmnf_seconds"] = pmnf["seconds"]
        ex = _extrap(path, names, test_p, install=not quick)
        out["extrap_status"] = ex["status"]
        if ex["status"] == "ok":
            out.update(extrap_seconds=ex["seconds"], extrap_cpu_seconds=ex["cpu"])
            out.update({f"extrap_error_{k}": v for k, v in _errors(ex["pred"], true).items()})
            out["extrap_leading_term_recovered"] = _recovered(ex["leading"], truths)
            out["ratio"] = ex["seconds"] / am["seconds"]
            out["ratio_cli"] = ex["seconds"] / out["automodel_cli_seconds"]
        out.update(_sample(path, am["result"], names, truths, test_p, 5 if quick else 20))
    out["target"] = f"automodel < {TARGET_SECONDS:g} s and >= {TARGET_RATIO:g}x faster than Extra-P ({n_kernels} kernels)"
    if "ratio" not in out:
        out["target_met"] = f"unknown: {out['extrap_status']}"
    else:
        out["target_met"] = "yes" if out["automodel_seconds"] < TARGET_SECONDS and out["ratio"] >= TARGET_RATIO else "no"
    return out


def two_parameter_kernels(n_kernels: int = 1000, seed: int = 0) -> tuple[str, list[dict]]:
    """Kernels of ``p`` and ``n`` in one Extra-P text file, and the true function of each.

    Kernel ``k`` is ``a + b f(p) g(n) / 1000`` or ``a + b f(p) + c g(n) / 1000`` (each half the time), ``f``
    and ``g`` blocks of Extra-P's hypothesis family (:data:`P_BLOCKS`, :data:`N_BLOCKS`), a, b, c in
    [0.1, 10), measured once at every point of the 5 x 5 grid :data:`TRAIN_P` x :data:`TRAIN_N` with
    multiplicative noise of 1-5 % (drawn per kernel).

    Returns
    -------
    text : str
        The Extra-P text file (regions ``kernel_0000``, ..., metric ``time``).
    truths : list of dict
        Per kernel: ``region``, ``a``, ``b``, ``c``, ``p`` and ``n`` (the blocks' (e, l)), ``product``.
    """
    rng = np.random.default_rng(seed)
    P, N = (g.reshape(-1) for g in np.meshgrid(TRAIN_P, TRAIN_N, indexing="ij"))
    regions: dict[str, list[list[float]]] = {}
    truths: list[dict] = []
    for k in range(n_kernels):
        truth = {"region": f"kernel_{k:04d}", "p": P_BLOCKS[rng.integers(len(P_BLOCKS))],
                 "n": N_BLOCKS[rng.integers(len(N_BLOCKS))], "product": bool(rng.integers(2))}
        truth["a"], truth["b"], truth["c"] = (float(v) for v in rng.uniform(0.1, 10.0, 3))
        noise = rng.uniform(0.01, 0.05)
        values = _two_parameter_value(truth, P, N) * (1 + noise * rng.standard_normal(len(P)))
        regions[truth["region"]] = values[:, None].tolist()
        truths.append(truth)
    return format_text(["p", "n"], np.column_stack([P, N]), regions,
                       comment=f"{n_kernels} synthetic kernels of p and n"), truths


def _two_parameter_value(truth: dict, p: np.ndarray, n: np.ndarray) -> np.ndarray:
    (ep, lp), (en, ln) = truth["p"], truth["n"]
    f, g = p ** ep * np.log2(p) ** lp, n ** en * np.log2(n) ** ln / 1000.0
    return truth["a"] + (truth["b"] * f * g if truth["product"] else truth["b"] * f + truth["c"] * g)


def race_two_parameters(n_kernels: int = 1000, quick: bool = False) -> dict:
    """Time and score automodel and Extra-P on one file of ``n_kernels`` kernels of ``p`` and ``n``
    (:func:`two_parameter_kernels`); automodel's search of them is multi-stage.

    automodel runs in-process, after its imports (``fit_many(path, jobs=1)``: one process, so its
    process time is all the CPU it used: reading, the searches, the models, their bands and formulas);
    Extra-P 4 runs its command line (``extrap --text FILE``, default modeler: the multi-parameter modeler)
    in its own virtual environment (:func:`benchmarks.extrap_tool.ensure_extrap`), its CPU time that of
    the child process. Accuracy: each model's prediction at the held-out points :data:`TEST_P` x
    :data:`TEST_N` (beyond the measured p and n) against the true, noise-free function, as a relative
    error; median and mean over all (kernel, point) pairs.

    ``quick`` (CI): at most 100 kernels, and Extra-P only when its virtual environment exists.

    Returns
    -------
    dict
        ``n_kernels``, ``n_points``, ``train_p``, ``train_n``, ``test_points``; ``automodel_cpu_seconds``,
        ``automodel_seconds`` (wall), ``automodel_how``, ``automodel_error_median|mean``;
        ``extrap_status`` (``"ok"`` or why not), ``extrap_cpu_seconds``, ``extrap_seconds``,
        ``extrap_error_median|mean``; ``ratio`` (Extra-P's CPU seconds / automodel's); ``target`` and
        ``target_met`` (``"yes"``, ``"no"`` or ``"unknown: ..."``).
    """
    from automodel.kernels.fit_many import fit_many

    if quick:
        n_kernels = min(n_kernels, 100)
    for module in _MODULES:
        importlib.import_module(module)
    gc.collect()
    text, truths = two_parameter_kernels(n_kernels)
    names = [f"{t['region']} [time]" for t in truths]
    test = np.array([(p, n) for p in TEST_P for n in TEST_N])
    true = np.array([_two_parameter_value(t, test[:, 0], test[:, 1]) for t in truths])
    out: dict = {"n_kernels": n_kernels, "n_points": len(TRAIN_P) * len(TRAIN_N),
                 "train_p": ", ".join(f"{v:g}" for v in TRAIN_P), "train_n": ", ".join(f"{v:g}" for v in TRAIN_N),
                 "test_points": "; ".join(f"p = {p:g}, n = {n:g}" for p, n in test)}
    with tempfile.TemporaryDirectory(prefix="kernels-race-two-") as tmp:
        path = Path(tmp) / "kernels.txt"
        path.write_text(text)
        cpu, start = time.process_time(), time.perf_counter()
        result = fit_many(path, jobs=1)
        out.update(automodel_seconds=time.perf_counter() - start, automodel_cpu_seconds=time.process_time() - cpu,
                   automodel_how=result.notes[0])
        pred = np.array([result.models[n].predict({"p": test[:, 0], "n": test[:, 1]}) if n in result.models
                         else np.full(len(test), np.nan) for n in names])
        out.update({f"automodel_error_{k}": v for k, v in _errors(pred.reshape(-1), true.reshape(-1)).items()
                    if k != "worst"})
        python, status = ensure_extrap(install=not quick)
        out["extrap_status"] = status
        if python is not None:
            functions = Path(tmp) / "functions.txt"
            timing = time_cli(["--text", str(path), "--print", "{callpath};{metric};{model:python}",
                               "--disable-progress", "--out", str(functions)])
            out["extrap_status"] = timing.status
            if timing.status == "ok":
                found = dict(line.split(";", 2)[0::2] for line in functions.read_text().splitlines() if line.count(";") >= 2)
                pred = []
                for t in truths:
                    try:
                        pred.append(_function_values(extrap_function(found[t["region"]], ("p", "n")), test))
                    except (KeyError, ValueError, SyntaxError):
                        pred.append(np.full(len(test), np.nan))
                out.update(extrap_seconds=timing.seconds, extrap_cpu_seconds=timing.cpu_seconds,
                           ratio=timing.cpu_seconds / out["automodel_cpu_seconds"])
                out.update({f"extrap_error_{k}": v for k, v in _errors(np.array(pred).reshape(-1), true.reshape(-1)).items()
                            if k != "worst"})
    out["target"] = (f"automodel >= {TARGET_RATIO_TWO:g}x fewer CPU seconds than Extra-P with an equal or smaller "
                     f"median held-out error ({n_kernels} kernels of p and n)")
    if "ratio" not in out:
        out["target_met"] = f"unknown: {out['extrap_status']}"
    else:
        met = out["ratio"] >= TARGET_RATIO_TWO and out["automodel_error_median"] <= out["extrap_error_median"]
        out["target_met"] = "yes" if met else "no"
    return out


def _main_two(args: argparse.Namespace) -> int:
    r = race_two_parameters(args.kernels, quick=args.quick)
    print(f"{r['n_kernels']} kernels of p and n, {r['n_points']} points (p = {r['train_p']}; n = {r['train_n']});\n"
          f"accuracy at the held-out {r['test_points']} against the true function\n")
    print(f"{'tool':34} {'cpu s':>8} {'wall s':>8} {'median':>8} {'mean':>9}")
    print(f"{'automodel fit_many (default space)':34} {r['automodel_cpu_seconds']:8.2f} {r['automodel_seconds']:8.2f} "
          f"{_pct(r['automodel_error_median']):>8} {_pct(r['automodel_error_mean']):>9}")
    if "ratio" in r:
        print(f"{'Extra-P 4 CLI (default modeler)':34} {r['extrap_cpu_seconds']:8.2f} {r['extrap_seconds']:8.2f} "
              f"{_pct(r['extrap_error_median']):>8} {_pct(r['extrap_error_mean']):>9}")
        print(f"\nCPU-time ratio Extra-P / automodel: {r['ratio']:.1f}x")
    else:
        print(f"{'Extra-P 4 CLI (default modeler)':34} {r['extrap_status']}")
    print(f"automodel: {r['automodel_how']}")
    print(f"target: {r['target']}: {r['target_met']}")
    return 0


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="at most 200 kernels, no Extra-P installation")
    ap.add_argument("--kernels", type=int, default=1000, help="number of kernels (default 1000)")
    ap.add_argument("--params", type=int, choices=(1, 2), default=1,
                    help="parameters per kernel: 1 (p, the default) or 2 (p and n, a multi-stage search)")
    args = ap.parse_args(argv)
    if args.params == 2:
        return _main_two(args)
    r = race(args.kernels, quick=args.quick)
    print(f"{r['n_kernels']} one-parameter kernels, p = {r['train_p']}; accuracy at the held-out p = "
          f"{r['test_p']:g} against the true function\n")
    rows = [("automodel fit_many (default space)", r["automodel_seconds"], "automodel"),
            ("automodel fit_many (pmnf space)", r["automodel_pmnf_seconds"], "automodel_pmnf"),
            ("Extra-P 4 CLI (default modeler)", r.get("extrap_seconds"), "extrap")]
    print(f"{'tool':38} {'wall s':>8} {'median':>8} {'mean':>8} {'worst':>9} {'leading term':>13}")
    for label, seconds, key in rows:
        if seconds is None:
            print(f"{label:38} {r['extrap_status']}")
            continue
        print(f"{label:38} {seconds:8.3f} {_pct(r[key + '_error_median']):>8} {_pct(r[key + '_error_mean']):>8} "
              f"{_pct(r[key + '_error_worst']):>9} {_pct(r[key + '_leading_term_recovered']):>13}")
    print(f"\nautomodel: best of repeats {r['automodel_best_seconds']:.3f} s, cpu {r['automodel_cpu_seconds']:.3f} s, "
          f"command line (new process, imports included) {r['automodel_cli_seconds']:.2f} s; {r['automodel_how']}")
    if "ratio" in r:
        print(f"wall-time ratio Extra-P / automodel: {r['ratio']:.1f}x in-process, {r['ratio_cli']:.1f}x command "
              f"line against command line; Extra-P cpu {r['extrap_cpu_seconds']:.2f} s")
    print(f"sample of {r['sample_kernels']} kernels: fit_many = automodel.fit(templates=()).best in "
          f"{_pct(r['sample_same_as_fit_searched'])}; median error automodel.fit (templates included) "
          f"{_pct(r['sample_fit_error_median'])}, fit_many {_pct(r['sample_many_error_median'])}")
    print(f"target: {r['target']}: {r['target_met']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
