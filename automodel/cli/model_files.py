"""The model files a service answers from: read once, read again when a file changes in place."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from automodel.errors import DataError
from automodel.names import printable, shortened

__all__ = ["ModelFiles"]


class ModelFiles:
    """The models of every ``*.json`` file of a folder by name (:func:`automodel.model_file.load_models`),
    each file's modification time, and each model's formula printed once.

    Parameters
    ----------
    folder : str or Path, optional
        The folder (``automodel serve --models DIR``); None: no model.
    """

    def __init__(self, folder: str | Path | None) -> None:
        self.models: dict[str, Any] = {}
        #: model name -> its file; file -> (its modification time in ns, the names it holds)
        self.sources: dict[str, Path] = {}
        self.stamps: dict[Path, tuple[int, list[str]]] = {}
        self.formulas: dict[str, str] = {}
        self.lock = threading.Lock()
        if folder is not None:
            if not Path(folder).is_dir():
                raise DataError(f"--models {folder}: not a folder of model files")
            for path in sorted(Path(folder).glob("*.json")):
                self.read(path)

    def read(self, path: Path) -> None:
        """Load the models of the file ``path`` (in place of those it held) and keep its modification time."""
        from automodel.model_file import load_models

        try:
            stamp = path.stat().st_mtime_ns
        except OSError:  # a dangling link, a loop of links: load_models says so in one line
            stamp = 0
        found = load_models(path)
        gone = set(self.stamps.get(path, (0, []))[1])
        for name in gone:
            self.formulas.pop(name, None)
        # a new dictionary in place of the old, never the old one changed: a request thread that iterates
        # it (GET /models) or reads a model of it meanwhile sees the models before or after, whole (a
        # RuntimeError 'dictionary changed size during iteration' answered 500, or no model for a moment)
        self.models = {**{k: m for k, m in self.models.items() if k not in gone}, **found}
        self.sources.update({name: path for name in found})
        self.stamps[path] = (stamp, list(found))

    def fresh(self, name: str) -> Any:
        """The model ``name``, read again when its file changed since it was loaded (a model refitted in
        place); the loaded one while the file is unchanged, or gone."""
        path = self.sources.get(name)
        if path is not None:
            try:
                changed = path.stat().st_mtime_ns != self.stamps[path][0]
            except OSError:
                changed = False
            if changed:
                with self.lock:
                    self.read(path)
        model = self.models.get(name)
        if model is None:  # its file was rewritten without it (a KeyError: an answer of 500)
            raise DataError(f"no model {shortened(printable(repr(name)))}: {path} no longer holds it")
        return model

    def formula(self, name: str, model: Any) -> str:
        """The formula of ``model``, the model ``name`` of a file, printed once."""
        text = self.formulas.get(name)
        if text is None:
            text = self.formulas[name] = model.formula
        return text
