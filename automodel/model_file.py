"""Model files: read a model JSON file back into a :class:`~automodel.model.core.Model`, executing nothing.

:meth:`Model.to_dict <automodel.model.core.Model.to_dict>` writes the envelope (format, version, parameters,
roles, ranges, metrics, options) around the core's own body. This module validates the envelope and
dispatches the body on its ``kind``: ``"terms"`` to :class:`~automodel.model.core.TermModel`,
``"template"`` to the ``from_dict`` of the template of that name in :mod:`automodel.templates`. It sits
above both (the templates build on :mod:`automodel.model.core`), so neither imports the other. A malformed or hostile file is a
one-line :class:`~automodel.errors.ModelFileError` naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from automodel.data.cells import finite_number, ranges_problem, shown
from automodel.errors import DataError, ModelFileError
from automodel.files import check_input, read_text, unique_keys, write_text
from automodel.model.interval import Interval
from automodel.names import kernel_label, label_problem, parameter_problem, printable, space_problem
from automodel.model.core import FORMAT, VERSION, Core, Model, TermModel
from automodel.templates import MODULE_OF, template as find_template

__all__ = ["load_model", "load_models", "read_models", "save_models", "models_body", "model_from_dict", "core_from_dict", "MAX_FILE_BYTES",
           "MODELS_FORMAT"]

#: larger files are refused before they are parsed
MAX_FILE_BYTES = 5_000_000


def core_from_dict(body: Any, params: frozenset[str]) -> Core:
    """The fitted core of a model body (``{"kind": "terms" | "template", ...}``).

    Raises
    ------
    ModelFileError
        On an unknown kind or template, or a field the core's own ``from_dict`` refuses.
    """
    if not isinstance(body, dict):
        raise ModelFileError("'model' must be an object")
    kind = body.get("kind")
    if kind == "terms":
        return TermModel.from_dict(body, params)
    if kind == "template":
        name = body.get("template")
        template = find_template(name) if isinstance(name, str) else None
        if template is None:
            raise ModelFileError(f"unknown template {shown(name)}; known: {', '.join(MODULE_OF)}")
        core = template.from_dict(body)
        absent = _absent_parameter(core, params)
        if absent is not None:
            have = ", ".join(sorted(params)) or "none"
            raise ModelFileError(f"'model': template {name!r} reads parameter {printable(repr(absent))[:80]}, which "
                                 f"is not in the file's 'params' ({have}); expected the parameters it was fitted on")
        return core
    raise ModelFileError(f"unknown model kind {shown(kind)} (expected terms or template)")


def _absent_parameter(core: Core, params: frozenset[str]) -> str | None:
    """The column a template's ``core`` reads that is none of ``params`` (None: it reads only those), as
    :meth:`TermModel.from_dict` checks each term's: found by predicting one row of every parameter, so
    that the error names the model file, not each file of rows it is given later ('data: missing
    column 'p'')."""
    import pandas as pd

    from automodel.templates.base import MissingColumn

    probe = pd.DataFrame({q: [1.0] for q in sorted(params)}, index=[0])
    try:
        core.predict(probe)
    except MissingColumn as exc:
        return exc.name
    except KeyError as exc:  # a template that indexes the frame itself
        return str(exc.args[0]) if exc.args and str(exc.args[0]) not in params else None
    except Exception:  # noqa: BLE001  (values of 1 a template may refuse: only a missing column is the file's)
        return None
    return None


def model_from_dict(d: Any, source: str = "<dict>") -> Model:
    """Rebuild a :class:`Model` from :meth:`Model.to_dict` output, validating every field.

    Examples
    --------
    >>> model_from_dict({"format": "pickle"})
    Traceback (most recent call last):
    automodel.errors.ModelFileError: <dict>: not an automodel model file (expected "format": "automodel-model")
    """
    def bad(msg: str) -> ModelFileError:
        return ModelFileError(f"{source}: {msg}")

    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise bad(f"not an automodel model file (expected \"format\": \"{FORMAT}\")")
    if not _is_version(d.get("version")):
        raise bad(f"model file version {shown(d.get('version'))} is not supported (expected {VERSION})")
    params = d.get("params")
    if not isinstance(params, list) or not all(isinstance(q, str) and q.isidentifier() for q in params):
        raise bad("'params' must be a list of parameter names")
    for q in params:
        problem = parameter_problem(q)
        if problem is not None:
            raise bad(f"'params': {problem}")
    if len(set(params)) != len(params):
        raise bad("'params': a parameter is named twice")
    space = d.get("space", "")
    problem = space_problem(space) if space != "" else None
    if problem is not None:
        raise bad(f"'space': {problem}")
    roles = d.get("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in roles.items()):
        raise bad("'roles' must map parameter names to column names")
    for k, v in roles.items():
        if k not in params and k != "time":
            raise bad(f"'roles': {printable(repr(k))[:80]} is not a parameter of the model nor 'time'")
        problem = label_problem(v)
        if problem is not None:
            raise bad(f"'roles', {k!r}: the column name must be printable text: {problem}")
    problem = _roles_problem(params, roles)
    if problem is not None:
        raise bad(f"'roles': {problem}")
    ranges = d.get("ranges", {})
    problem = ranges_problem(ranges, params)
    if problem is not None:
        raise bad(f"'ranges': {problem}")
    metrics = d.get("metrics", {})
    if not isinstance(metrics, dict) or not all(v is None or finite_number(v) for v in metrics.values()):
        raise bad("'metrics' must map names to finite numbers or null")
    for k in metrics:
        problem = label_problem(k)
        if problem is not None:
            raise bad(f"'metrics': a metric name must be printable text: {problem}")
    try:
        core = core_from_dict(d.get("model"), frozenset(params))
    except ModelFileError as exc:
        raise bad(str(exc)) from None
    options = d.get("options", {})
    problem = _options_problem(options)
    if problem is not None:
        raise bad(f"'options': {problem}")
    interval = None
    if d.get("interval") is not None:
        try:
            interval = Interval.from_dict(d["interval"], params, len(core.terms) if isinstance(core, TermModel)
                                          else None, lambda body: core_from_dict(body, frozenset(params)))
        except ModelFileError as exc:
            raise bad(str(exc)) from None
    return Model(core, tuple(params), dict(roles), {k: list(map(float, v)) for k, v in ranges.items()},
                 {k: (float("nan") if v is None else float(v)) for k, v in metrics.items()},
                 space, options, interval)


def _roles_problem(params: list[str], roles: dict[str, str]) -> str | None:
    """Why a model file's ``roles`` cannot be read (None when they can): each parameter and the time read
    from a column of their own (a name a role does not map is its own column), as ``fit`` requires of
    the runs. Two read from one column (``{"n": "x", "p": "x"}``) were a pandas ValueError traceback in
    ``evaluate`` and ``report``, and one parameter's values taken for the other's in ``predict``."""
    column_of = [(q, roles.get(q, q)) for q in ("time", *params)]  # a parameter 'time' is the time's column
    for i, (name, column) in enumerate(column_of):
        other = next((q for q, c in column_of[i + 1:] if c == column), None)
        if other is not None:
            return (f"the column {printable(repr(column))[:80]} is mapped to {name!r} and {other!r}; "
                    "expected one column for each parameter and the time")
    return None


def _options_problem(options: Any) -> str | None:
    """Why a model file's ``options`` cannot be read (None when they can): an object, its ``unit`` one
    :func:`~automodel.options.unit_name` takes (the commands print it: an escape sequence in it reached
    the terminal), its ``ignore`` (the columns the fit pooled over) a list of column names, its
    ``where`` (the condition that selected the rows fitted, ``fit --where``; absent in files written
    before it was recorded, and when every row was fitted) a string."""
    from automodel.names import label_problem
    from automodel.options import unit_name

    if not isinstance(options, dict):
        return f"expected an object, got {type(options).__name__}"
    ignore = options.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(c, str) and label_problem(c) is None for c in ignore):
        return "'ignore': expected a list of column names"
    if not isinstance(options.get("where", ""), str):
        return f"'where': expected the condition of fit --where (a string), got {type(options['where']).__name__}"
    if "unit" in options:
        if not isinstance(options["unit"], str):
            return f"'unit': expected a string such as 's' or 'misses', got {type(options['unit']).__name__}"
        try:
            unit_name(options["unit"])
        except ValueError as exc:
            return f"'unit': {exc}"
    return None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed")


def load_model(path: str | Path) -> Model:
    """Read a model JSON file (written by :meth:`Model.save <automodel.model.core.Model.save>`).

    Raises
    ------
    ModelFileError
        A missing, oversized, malformed or hostile file, in one line naming the file.
    """
    src, d = _json_document(path, "model", MAX_FILE_BYTES)
    return model_from_dict(d, src)


def _json_document(path: str | Path, what: str, max_bytes: int) -> tuple[str, Any]:
    """The JSON document of the file ``path`` (a ``what`` file: ``model`` or ``models``) and its name;
    NaN and infinities refused; every failure a :class:`ModelFileError` in one line."""
    path = check_input(path, f"a {what} JSON file", ModelFileError)
    src = str(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise ModelFileError(f"{src}: {size} bytes, larger than a {what} file can be ({max_bytes})")
    text = read_text(path, f"a {what} JSON file", ModelFileError)
    try:
        return src, json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"{src}: not a valid {what} JSON file ({str(exc).splitlines()[0][:120]})") from None


# -- model sets (automodel kernels --out) ---------------------------------------------------------
#: the ``format`` of a file holding one model per kernel
MODELS_FORMAT = "automodel-models"


def save_models(models: dict[str, Model], path: str | Path) -> None:
    """Write models as one JSON file: ``{"format": "automodel-models", "version": 1, "models": {kernel:
    model}}``, each model in the form of :meth:`automodel.Model.to_dict`."""
    write_text(path, json.dumps(models_body(models), indent=1, allow_nan=False))


def models_body(models: dict[str, Model]) -> dict:
    """The JSON document of a models file (:func:`save_models`)."""
    return {"format": MODELS_FORMAT, "version": 1, "models": {k: m.to_dict() for k, m in models.items()}}


def load_models(path: str | Path, kernel: str | None = None) -> dict[str, Model]:
    """The models of a file of :func:`save_models` by kernel, or of a model file (one model, under its
    file's stem); every model is validated as :func:`load_model` does.

    Parameters
    ----------
    path
        The file.
    kernel
        Only this kernel's model (its label, or its call path alone when it has one metric:
        :func:`automodel.names.kernel_label`); the others are not built (a file of 20,000 kernels).

    Raises
    ------
    ModelFileError
        A file that is neither, in one line naming it.
    DataError
        No kernel ``kernel`` in the file, in one line listing the first it has.
    """
    return read_models(path, kernel)[0]


def read_models(path: str | Path, kernel: str | None = None) -> tuple[dict[str, Model], bool]:
    """The models of :func:`load_models`, and whether the file is a models file (of ``automodel
    kernels``, which reads values of 0 as counters) rather than a model file (of ``automodel fit``)."""
    src, body = _json_document(path, "model", MAX_FILE_BYTES * 64)
    if isinstance(body, dict) and body.get("format") != MODELS_FORMAT and "models" not in body:
        stem = Path(src).stem
        if kernel is not None:
            kernel_label(kernel, [stem], DataError, src)
        return {stem: model_from_dict(body, src)}, False
    if not isinstance(body, dict) or body.get("format") != MODELS_FORMAT or not _is_version(body.get("version")):
        raise ModelFileError(f"{src}: not an automodel models file (expected \"format\": \"{MODELS_FORMAT}\", "
                             "\"version\": 1)")
    models = body.get("models")
    if not isinstance(models, dict) or not models:
        raise ModelFileError(f"{src}: 'models' must map kernel names to models")
    for k in models:
        problem = label_problem(k)
        if problem is not None:
            raise ModelFileError(f"{src}: 'models': a kernel name must be printable text: {problem}")
    if kernel is not None:
        name = kernel_label(kernel, map(str, models), DataError, src)
        models = {name: models[name]}
    return {str(k): model_from_dict(d, f"{src}, kernel {k!r}") for k, d in models.items()}, True


def _is_version(value: object) -> bool:
    """Whether ``value`` is the file version this module reads: the number :data:`VERSION` (``true`` is
    a JSON boolean, not 1, though Python's ``True == 1`` held)."""
    return not isinstance(value, bool) and value == VERSION
