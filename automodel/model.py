"""A fitted model: predictions, the best process count, its sympy expression and its JSON file.

:class:`TermModel` is the mathematics (terms and coefficients). :class:`Model` wraps any fitted core
(a searched :class:`TermModel` or a seeded template) with what a user needs around it: the mapping
from parameter roles to the user's column names, the training ranges, the metrics, and a versioned
JSON form that is read back without executing anything from the file.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import sympy

from automodel.errors import DataError, ModelFileError
from automodel.space.terms import Term, term_from_dict

__all__ = ["TermModel", "Model", "load_model", "FORMAT", "VERSION", "MAX_FILE_BYTES"]

FORMAT = "automodel-model"
VERSION = 1
MAX_FILE_BYTES = 5_000_000

#: template name -> ``from_dict`` callable; filled by :mod:`automodel.templates` at import
TEMPLATE_LOADERS: dict[str, Callable[[dict], Any]] = {}


@dataclass(frozen=True)
class TermModel:
    """``T = sum_k coefficients[k] * terms[k]``."""

    terms: tuple[Term, ...]
    coefficients: tuple[float, ...]
    name: str = "searched"

    @property
    def n_coefficients(self) -> int:
        return len(self.terms)

    @property
    def expr(self) -> sympy.Expr:
        return sympy.Add(*[sympy.Float(c) * t.expr for c, t in zip(self.coefficients, self.terms)
                           if c != 0.0]) if any(self.coefficients) else sympy.Float(0.0)

    def predict(self, frame: Mapping[str, Any]) -> np.ndarray:
        n_rows = len(frame[next(iter(frame))]) if len(frame) else 1
        columns = {k: np.asarray(frame[k], float) for k in frame}
        out = np.zeros(n_rows)
        for c, t in zip(self.coefficients, self.terms):
            if c != 0.0:
                out = out + c * t.evaluate(columns, n_rows)
        return out

    @classmethod
    def from_fit(cls, terms: Sequence[Term], coefficients: Sequence[float]) -> "TermModel":
        """The fitted sum without the terms that non-negative least squares set to exactly zero (they
        are not part of the model); the first term with coefficient 0 when every one is zero."""
        kept = [(t, float(c)) for t, c in zip(terms, coefficients) if c != 0.0] or [(terms[0], 0.0)]
        return cls(tuple(t for t, _ in kept), tuple(c for _, c in kept))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "terms", "terms": [t.to_dict() for t in self.terms],
                "coefficients": [float(c) for c in self.coefficients]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], params: frozenset[str]) -> "TermModel":
        terms = d.get("terms")
        coefs = d.get("coefficients")
        if not isinstance(terms, list) or not isinstance(coefs, list) or len(terms) != len(coefs):
            raise ModelFileError("model body: 'terms' and 'coefficients' must be lists of equal length")
        if len(terms) > 64:
            raise ModelFileError(f"model body: {len(terms)} terms, at most 64 expected")
        for i, c in enumerate(coefs):
            if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c):
                raise ModelFileError(f"model body: coefficient {i} must be a finite number, got {c!r}")
        return cls(tuple(term_from_dict(t, params, f"term {i}") for i, t in enumerate(terms)),
                   tuple(float(c) for c in coefs))


@dataclass
class Model:
    """A fitted model with its context; what ``automodel.fit(...).best`` returns.

    Attributes
    ----------
    core : TermModel or a fitted template
        Has ``expr``, ``predict(columns)``, ``n_coefficients`` and ``to_dict()``.
    params : tuple of str
        Canonical parameter names the model was trained on.
    roles : dict
        Canonical name -> the user's column name (``time`` included).
    ranges : dict
        Training range ``[min, max]`` of each parameter.
    metrics : dict
        Scores on the training data (see :mod:`automodel.solve.metrics`).
    space : str
        Name of the search space that produced it.
    """

    core: Any
    params: tuple[str, ...]
    roles: dict[str, str]
    ranges: dict[str, list[float]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    space: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    # -- the mathematics ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return getattr(self.core, "name", "searched")

    @property
    def expr(self) -> sympy.Expr:
        """The model as a sympy expression in the canonical symbols ``n``, ``p``, ``cpu``, ``bw``, ..."""
        return self.core.expr

    @property
    def formula(self) -> str:
        from automodel.export import to_text
        return to_text(self.expr)

    def _columns(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>"
                 ) -> pd.DataFrame:
        """Canonical parameter columns from user data (user column names first, canonical names second)."""
        frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(
            {k: np.atleast_1d(np.asarray(v, float)) for k, v in data.items()})
        from automodel.data import numeric  # one place validates cells
        out = {}
        for q in self.params:
            col = self.roles.get(q, q)
            if col not in frame.columns:
                if q in frame.columns:
                    col = q
                elif q in ("cpu", "bw"):
                    out[q] = np.ones(len(frame))  # a dedicated machine
                    continue
                else:
                    raise DataError(f"{source}, column '{col}': missing; the model needs "
                                    f"{', '.join(self.roles.get(x, x) for x in self.params)}")
            out[q] = numeric(frame, col, q, source, 2 if source != "<DataFrame>" else 0)
        return pd.DataFrame(out, index=range(len(frame)))

    def predict(self, data: pd.DataFrame | Mapping[str, Any], source: str = "<DataFrame>") -> np.ndarray:
        """Predicted time for every row of ``data`` (columns named as in training, or canonically).

        Missing ``cpu``/``bw`` columns mean a dedicated machine (1.0).
        """
        return np.asarray(self.core.predict(self._columns(data, source)), float)

    def predict_interval(self, data: pd.DataFrame | Mapping[str, Any], level: float = 0.95
                         ) -> tuple[np.ndarray, np.ndarray] | None:
        """Prediction band when the core model has one (Bayesian templates), else ``None``."""
        fn = getattr(self.core, "predict_interval", None)
        return None if fn is None else fn(self._columns(data), level=level)

    def best_p(self, n: float | None = None, cpu: float = 1.0, bw: float = 1.0, p_max: int | None = None,
               p_min: int = 1, **extras: float) -> tuple[int, float]:
        """The integer process count in ``[p_min, p_max]`` with the least predicted time.

        Returns ``(p, predicted_time)``. ``p_max`` defaults to 4x the largest trained p (at least 64).
        """
        if "p" not in self.params:
            raise DataError("this model does not depend on p, so it has no best process count")
        if p_max is None:
            p_max = int(max(64, 4 * self.ranges.get("p", [1, 16])[1]))
        if p_max < p_min:
            raise DataError(f"p_max must be >= {p_min}, got {p_max}")
        ps = np.arange(p_min, p_max + 1, dtype=float)
        values = {"p": ps, "n": n, "cpu": cpu, "bw": bw, **extras}
        cols = {}
        for q in self.params:
            v = values.get(q)
            if v is None:
                raise DataError(f"best p needs a value for '{q}'")
            cols[q] = np.broadcast_to(np.asarray(v, float), ps.shape)
        t = np.asarray(self.core.predict(pd.DataFrame(cols)), float)
        t = np.where(np.isfinite(t), t, np.inf)
        i = int(np.argmin(t))
        return int(ps[i]), float(t[i])

    # -- files -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "space": self.space, "params": list(self.params),
                "roles": dict(self.roles), "ranges": self.ranges,
                "metrics": {k: (float(v) if np.isfinite(v) else None) for k, v in self.metrics.items()},
                "options": self.options, "formula": self.formula, "model": self.core.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def save(self, path: str | Path) -> None:
        """Write the JSON file atomically (a temporary file renamed into place)."""
        path = Path(path)
        text = self.to_json()
        fd, tmp = tempfile.mkstemp(prefix=".automodel-", suffix=".json", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def from_dict(cls, d: Any, source: str = "<dict>") -> "Model":
        """Rebuild from :meth:`to_dict` output, validating every field; nothing is evaluated."""
        def bad(msg: str) -> ModelFileError:
            return ModelFileError(f"{source}: {msg}")

        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise bad(f"not an automodel model file (expected \"format\": \"{FORMAT}\")")
        if d.get("version") != VERSION:
            raise bad(f"model file version {d.get('version')!r} is not supported (expected {VERSION})")
        params = d.get("params")
        if not isinstance(params, list) or not all(isinstance(q, str) and q.isidentifier() for q in params):
            raise bad("'params' must be a list of parameter names")
        roles = d.get("roles", {})
        if not isinstance(roles, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                  for k, v in roles.items()):
            raise bad("'roles' must map parameter names to column names")
        ranges = d.get("ranges", {})
        if not isinstance(ranges, dict) or not all(
                isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v)
                for v in ranges.values()):
            raise bad("'ranges' must map parameter names to [min, max]")
        metrics = d.get("metrics", {})
        if not isinstance(metrics, dict) or not all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in metrics.values()):
            raise bad("'metrics' must map names to numbers")
        body = d.get("model")
        if not isinstance(body, dict):
            raise bad("'model' must be an object")
        try:
            if body.get("kind") == "terms":
                core = TermModel.from_dict(body, frozenset(params))
            elif body.get("kind") == "template":
                loader = TEMPLATE_LOADERS.get(body.get("template"))
                if loader is None:
                    import automodel.templates  # noqa: F401  (registers the loaders)
                    loader = TEMPLATE_LOADERS.get(body.get("template"))
                if loader is None:
                    raise ModelFileError(f"unknown template {body.get('template')!r}")
                core = loader(body)
            else:
                raise ModelFileError(f"unknown model kind {body.get('kind')!r} (expected terms or template)")
        except ModelFileError as exc:
            raise bad(str(exc)) from None
        options = d.get("options", {})
        return cls(core, tuple(params), dict(roles), {k: list(map(float, v)) for k, v in ranges.items()},
                   {k: (float("nan") if v is None else float(v)) for k, v in metrics.items()},
                   str(d.get("space", "")), options if isinstance(options, dict) else {})


def load_model(path: str | Path) -> Model:
    """Read a model JSON file; a malformed or hostile file is a one-line :class:`ModelFileError`."""
    path = Path(path)
    src = str(path)
    try:
        size = path.stat().st_size
    except OSError:
        raise ModelFileError(f"{src}: no such model file") from None
    if size > MAX_FILE_BYTES:
        raise ModelFileError(f"{src}: {size} bytes, larger than a model file can be ({MAX_FILE_BYTES})")
    try:
        d = json.loads(path.read_text(encoding="utf-8"),
                       parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not allowed")))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{src}: not a valid model JSON file ({str(exc).splitlines()[0][:120]})") from None
    return Model.from_dict(d, src)
