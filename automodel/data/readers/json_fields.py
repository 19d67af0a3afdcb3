"""Fields of JSON documents, checked: every reader of a JSON format takes its values through these, so a
malformed document is one line naming the file, the record (a JSON path such as
``measurements["main"]["time"][2].values``) and what was expected."""

from __future__ import annotations

import json
from typing import Any

from automodel.data.tidy import number
from automodel.errors import DataError
from automodel.files import DuplicateKey, unique_keys

__all__ = ["parse", "child", "field", "numbers", "kind"]


def kind(value: object) -> str:
    """What a JSON value is, in a few words (``a list``, ``the string 'x'``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, str):
        return f"the string {json.dumps(value)[:40]}"
    return {dict: "an object", list: "a list"}.get(type(value), f"{value!r}"[:40])


def parse(text: str, at: str, expected: str) -> Any:
    """The JSON document ``text``; invalid JSON, or an object that gives a key twice (``{"main": ...,
    "main": ...}`` kept the second call path's values and dropped the first's), is a one-line
    :class:`DataError` that starts with ``at`` and gives the line (when ``text`` has several) and column
    json reports."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        raise DataError(f"{at}: {exc}; expected each key once in {expected}") from None
    except json.JSONDecodeError as exc:
        one_line = exc.lineno == 1 and "\n" not in text.strip()  # a record of one line: its column alone
        line = "" if one_line else f"line {exc.lineno}, "
        raise DataError(f"{at}: not valid JSON ({line}column {exc.colno}: {exc.msg}); expected {expected}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise DataError(f"{at}: not valid JSON ({str(exc).splitlines()[0][:80]}); expected {expected}") from None
    except RecursionError:
        raise DataError(f"{at}: JSON nested too deeply; expected {expected}") from None


def child(path: str, key: str | int) -> str:
    """The JSON path of ``key`` below ``path``.

    Examples
    --------
    >>> child("", "measurements"), child("measurements", "main->solve"), child("m.time", 2)
    ('measurements', 'measurements["main->solve"]', 'm.time[2]')
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def field(obj: object, key: str, source: str, path: str, expected: type | tuple[type, ...], what: str,
          default: Any = ...) -> Any:
    """``obj[key]``, checked to be of type ``expected`` (``what`` says it in words; a boolean is never a
    number); ``default`` when the field is missing and a default is given. ``path`` is the JSON path of
    ``obj`` in ``source`` ("" for a whole record)."""
    here = f"{source}, {path}" if path else source
    if not isinstance(obj, dict):
        raise DataError(f"{here}: expected an object with {json.dumps(key)}, got {kind(obj)}")
    if key not in obj:
        if default is not ...:
            return default
        raise DataError(f"{here}: no {json.dumps(key)} field; expected {what}")
    value = obj[key]
    if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
        raise DataError(f"{source}, {child(path, key)}: expected {what}, got {kind(value)}")
    return value


def numbers(value: object, at: str) -> list[float]:
    """A number or a non-empty list of numbers (the repetitions of one measurement) as floats; ``at``
    (file and JSON path) starts the message otherwise."""
    if isinstance(value, list):
        if not value:
            raise DataError(f"{at}: expected a number or a list of numbers, got an empty list")
        return [number(v, f"{at}[{i}]") for i, v in enumerate(value)]
    return [number(value, at, "a finite number or a list of numbers")]
