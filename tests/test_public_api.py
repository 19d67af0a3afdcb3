"""Issue 31: the public API is written down (README, "Public API") and this test holds the code to it:
every documented Python name imports, the documented names are ``automodel.__all__``, the documented
commands are the CLI's, and the documented file formats and environment variables are the code's."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import automodel

README = Path(__file__).resolve().parents[1] / "README.md"


def _section() -> dict[str, str]:
    """The bullets of the README's "Public API" section, by their bold title."""
    text = README.read_text(encoding="utf-8")
    body = text.split("\n## Public API\n", 1)[1].split("\n## ", 1)[0]
    bullets = re.findall(r"^- \*\*(.+?)\*\*:(.*?)(?=^- |\Z)", body, flags=re.S | re.M)
    return {title: " ".join(rest.split()) for title, rest in bullets}


def _names(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_the_documented_python_names_are_all_and_import() -> None:
    python = _section()["Python"]
    top, _, store = python.partition("and `automodel.store`'s")
    assert _names(top)[1:] == list(automodel.__all__)  # the first is `automodel.__all__` itself
    for name in automodel.__all__:
        assert getattr(automodel, name) is not None, name
    store_module = importlib.import_module("automodel.store")
    for name in _names(store):
        assert callable(getattr(store_module, name)) and name in store_module.__all__, name


def test_the_documented_commands_are_the_cli() -> None:
    from automodel.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    documented = _section()["Command line"].split(", their documented options")[0]
    assert _names(documented) == list(commands)


def test_the_documented_formats_and_variables_are_the_code() -> None:
    from automodel.files import LIMIT_VARIABLE
    from automodel.model.core import FORMAT, VERSION
    from automodel.model_file import MODELS_FORMAT
    from automodel.store.db import RETRY_VARIABLE
    from automodel.store.schema import SCHEMA_VERSION

    files = _section()["Files"]
    assert f'`"format": "{FORMAT}"`, `"version": {VERSION}`' in files
    assert f'`"format": "{MODELS_FORMAT}"`' in files and f"schema version {SCHEMA_VERSION}" in files
    assert _names(_section()["Environment"]) == [LIMIT_VARIABLE, RETRY_VARIABLE]
