"""Read Extra-P's JSON input, in its new and its old ("legacy") form, into a tidy frame.

New form (Extra-P 4, ``extrap/fileio/file_reader/json_file_reader.py``): the parameter names, then per
call path and metric a list of points with their repetitions::

    {"parameters": ["x", "y"],
     "measurements": {"main": {"time": [{"point": [4, 10], "values": [3.5, 3.6]}, ...]}}}

Old form: parameters, call paths, metrics and coordinates listed with ids, one measurement (one
repetition) per entry::

    {"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "main"}],
     "metrics": [{"id": 1, "name": "time"}],
     "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}],
     "measurements": [{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 3.5}]}

Ids are looked up, not taken as positions (Extra-P takes ``id - 1``). Every kernel has values at every
point (Extra-P's rule). ``attrs["lines"]`` holds the JSON path of each row (``measurements[3]``); a
malformed document is one line naming the file, that path and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.data.readers.json_fields import child, field, numbers, parse
from automodel.data.tidy import check_params, every_point, number, tidy
from automodel.errors import DataError
from automodel.files import read_text

__all__ = ["read_extrap_json", "nested"]

EXPECTED = ('an Extra-P JSON object with "parameters" and "measurements" (and "callpaths", "metrics", '
            '"coordinates" in the old form)')


def nested(doc: dict, source: str, point_key: str, values: Callable[[dict, str], list[float]],
           notes: Sequence[str] = ()) -> pd.DataFrame:
    """The tidy frame of ``{"parameters": [names], "measurements": {call path: {metric: [entry]}}}``:
    each entry holds a point (``entry[point_key]``, one number per parameter) and its repetitions
    (``values(entry, json path)``). The new JSON form and saved experiments share it."""
    params = check_params(field(doc, "parameters", source, "", list, "a list of parameter names"),
                          f"{source}, parameters")
    tree = field(doc, "measurements", source, "", dict, "an object: call path -> metric -> list of points")
    kernels: dict[tuple[str, str], int] = {}
    kernel: list[int] = []
    points: list[list[float]] = []
    reps: list[float] = []
    where: list[str] = []
    for callpath in tree:
        path = child("measurements", callpath)
        metrics = field(tree, callpath, source, "measurements", dict, "an object: metric -> list of points")
        for metric in metrics:
            at = child(path, metric)
            entries = field(metrics, metric, source, path, list, "a list of points with their values")
            k = kernels.setdefault((callpath, metric), len(kernels))
            for i, entry in enumerate(entries):
                here = child(at, i)
                coords = field(entry, point_key, source, here, list, f"a list of {len(params)} number(s)")
                if len(coords) != len(params):
                    raise DataError(f"{source}, {child(here, point_key)}: {len(coords)} coordinate(s); expected "
                                    f"one per parameter ({', '.join(params)})")
                point = [number(v, f"{source}, {child(child(here, point_key), j)}") for j, v in enumerate(coords)]
                got = values(entry, here)
                kernel += [k] * len(got)
                points += [point] * len(got)
                reps += got
                where += [here] * len(got)
    return every_point(tidy(source, params, list(kernels), np.asarray(kernel), np.asarray(points, float),
                            np.asarray(reps, float), np.asarray(where, dtype=object), notes))


def _new(doc: dict, source: str) -> pd.DataFrame:
    def values(entry: dict, here: str) -> list[float]:
        got = field(entry, "values", source, here, list, "a list of numbers (the repetitions)")
        return numbers(got, f"{source}, {child(here, 'values')}")

    return nested(doc, source, "point", values)


def _by_id(doc: dict, key: str, source: str) -> dict[int, object]:
    """``{id: name}`` of the old form's list ``key`` (parameters, callpaths, metrics)."""
    out: dict[int, object] = {}
    for i, item in enumerate(field(doc, key, source, "", list, 'a list of {"id", "name"} objects')):
        here = child(key, i)
        ident = field(item, "id", source, here, int, "an integer id")
        if ident in out:
            raise DataError(f"{source}, {child(here, 'id')}: id {ident} is given twice in {key}")
        out[ident] = field(item, "name", source, here, str, "a name (a string)")
    return out


def _legacy(doc: dict, source: str) -> pd.DataFrame:
    params_by_id = _by_id(doc, "parameters", source)
    order = sorted(params_by_id)
    params = check_params([params_by_id[i] for i in order], f"{source}, parameters")
    callpaths, metrics = _by_id(doc, "callpaths", source), _by_id(doc, "metrics", source)
    coordinates: dict[int, list[float]] = {}
    for i, item in enumerate(field(doc, "coordinates", source, "", list, "a list of coordinates")):
        here = child("coordinates", i)
        ident = field(item, "id", source, here, int, "an integer id")
        if ident in coordinates:
            raise DataError(f"{source}, {child(here, 'id')}: id {ident} is given twice in coordinates")
        pairs = field(item, "parameter_value_pairs", source, here, list, "a list of parameter values")
        value = {}
        for j, pair in enumerate(pairs):
            at = child(child(here, "parameter_value_pairs"), j)
            pid = field(pair, "parameter_id", source, at, int, "an integer parameter id")
            if pid not in params_by_id:
                raise DataError(f"{source}, {child(at, 'parameter_id')}: no parameter with id {pid}")
            if pid in value:
                raise DataError(f"{source}, {child(at, 'parameter_id')}: a second value for parameter id {pid}; "
                                "expected one value per parameter")
            value[pid] = number(field(pair, "parameter_value", source, at, (int, float), "a number"),
                                f"{source}, {child(at, 'parameter_value')}")
        if sorted(value) != order:
            raise DataError(f"{source}, {here}: values for parameter ids {sorted(value)}; expected one for each "
                            f"of {order}")
        coordinates[ident] = [value[pid] for pid in order]
    kernels: dict[tuple[str, str], int] = {}
    kernel, points, values, where = [], [], [], []
    for i, item in enumerate(field(doc, "measurements", source, "", list, "a list of measurements")):
        here = child("measurements", i)
        ids = []
        for key, table in (("callpath_id", callpaths), ("metric_id", metrics), ("coordinate_id", coordinates)):
            ident = field(item, key, source, here, int, "an integer id")
            if ident not in table:
                raise DataError(f"{source}, {child(here, key)}: no {key[:-3]} with id {ident}")
            ids.append(ident)
        if "value" not in item:
            raise DataError(f"{source}, {here}: no \"value\" field; expected the measured value")
        got = numbers(item["value"], f"{source}, {child(here, 'value')}")
        k = kernels.setdefault((callpaths[ids[0]], metrics[ids[1]]), len(kernels))  # type: ignore[arg-type]
        kernel += [k] * len(got)
        points += [coordinates[ids[2]]] * len(got)
        values += got
        where += [here] * len(got)
    return every_point(tidy(source, params, list(kernels), np.asarray(kernel), np.asarray(points, float),
                            np.asarray(values, float), np.asarray(where, dtype=object)))


def read_extrap_json(path: str | Path) -> pd.DataFrame:
    """Read an Extra-P JSON input file, new or old form (see the module docstring).

    Returns
    -------
    DataFrame
        The tidy frame of :mod:`automodel.data.tidy`: one row per repetition.

    Raises
    ------
    DataError
        A missing, unreadable or malformed file: the file, the JSON path and what was expected.
    """
    src = str(path)
    doc = parse(read_text(path, "an Extra-P JSON file", DataError), src, EXPECTED)
    if not isinstance(doc, dict) or "measurements" not in doc:
        raise DataError(f"{src}: expected {EXPECTED}")
    return _legacy(doc, src) if "callpaths" in doc else _new(doc, src)
