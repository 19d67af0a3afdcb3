"""automodel.read: every input format, read in place from Extra-P's own samples, one-line errors for
malformed files, and the commands (fit, kernels, observe) on them."""

from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.data import FORMATS, load, one_kernel, read
from automodel.data.readers import detect
from automodel.errors import DataError

DATASETS = Path(os.environ.get("AUTOMODEL_DATASETS")
                or Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
SAMPLES = DATASETS / "extrap-formats"
needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"no Extra-P samples at {SAMPLES}")
try:
    import pycubexr  # noqa: F401
    HAS_CUBE = True
except ImportError:
    HAS_CUBE = False
needs_cube = pytest.mark.skipif(not HAS_CUBE, reason="pycubexr is not installed (pip install 'automodel-hpc[cube]')")


def _points(frame: pd.DataFrame) -> list[tuple[float, ...]]:
    return sorted(set(frame[frame.attrs["params"]].itertuples(index=False, name=None)))


def _one_line_error(fn, *args, **kwargs) -> str:
    """The message of the DataError ``fn`` raises; it must be one line."""
    with pytest.raises(DataError) as caught:
        fn(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- the samples, read in place -----------------------------------------------------------------------
#: file -> (format, parameters, points, kernels, repetitions per point and kernel, rows)
EXPECTED = {
    "json/input_1.JSON": ("json", ["x"], 5, ["sweep [time]"], 5, 25),
    "json/new/input1.json": ("json", ["x"], 5, ["sweep [time]"], 5, 25),
    "json/new/input2.json": ("json", ["x", "y"], 5, ["sweep [time]", "sweep [visits]", "sweep2 [time]",
                                                     "sweep2 [visits]"], None, 60),
    "jsonlines/input_1.jsonl": ("jsonl", ["x", "y"], 25, ["<root> [metr]"], 5, 125),
    "jsonlines/matrix_3p.jsonl": ("jsonl", ["x", "y", "z"], 13, ["<root> [metr]"], None, 15),
    "jsonlines/incomplete_matrix_2p.jsonl": ("jsonl", ["x", "y"], 7, ["<root> [metr]"], 5, 35),
    "jsonlines/extended2.jsonl": ("jsonl", ["x", "y"], 9, ["test [metr]"], 5, 45),
    "talpas/talpas_1.txt": ("talpas", ["x"], 5, ["compute [time]"], 5, 25),
    "experiments/two_parameter3.txt.extra-p": ("experiment", ["x", "y"], 25, ["merge [time]", "merge [flops]",
                                                                              "sort [time]", "sort [flops]"], 1, 100),
}
#: call paths x metrics of the CUBE samples (Extra-P's tests list the same four call paths and seven metrics)
CUBE_KERNELS = {f"{c} [{m}]" for c in ("main", "main->init_mat", "main->zero_mat", "main->mat_mul")
                for m in ("visits", "time", "min_time", "max_time", "PAPI_FP_OPS", "PAPI_L3_TCM", "PAPI_L2_TCM")}


@needs_samples
@pytest.mark.parametrize("name", EXPECTED)
def test_every_sample_reads_in_place(name):
    fmt, params, n_points, kernels, reps, rows = EXPECTED[name]
    path = SAMPLES / name
    assert detect(path) == fmt
    frame = read(path)
    assert frame.attrs["format"] == fmt and frame.attrs["source"] == str(path)
    assert frame.attrs["params"] == params
    assert list(frame.columns) == ["kernel", "callpath", "metric", *params, "time"]
    assert len(_points(frame)) == n_points and list(pd.unique(frame["kernel"])) == kernels
    assert len(frame) == rows == len(frame.attrs["lines"])
    if reps is not None:
        assert (frame.groupby(["kernel", *params]).size() == reps).all()
    pd.testing.assert_frame_equal(read(path, format=fmt), frame)


@needs_samples
def test_sample_values_checked_by_hand():
    old = read(SAMPLES / "json/input_1.JSON")  # coordinate 1 (x = 4): five measurements of 3.5
    assert old.loc[old["x"] == 4, "time"].tolist() == [3.5] * 5
    assert old.loc[old["x"] == 64, "time"].tolist() == [33.5] * 5
    new2 = read(SAMPLES / "json/new/input2.json")
    visits = new2[new2["kernel"] == "sweep2 [visits]"]
    assert _points(visits)[0] == (4.0, 10.0) and visits["time"].tolist() == [5.0] * 5
    lines = read(SAMPLES / "jsonlines/input_1.jsonl")  # line 1: x 4, y 10, 48663.50675180765
    assert lines.iloc[0][["x", "y", "time"]].tolist() == [4.0, 10.0, 48663.50675180765]
    assert lines.attrs["lines"][:6] == [1, 2, 3, 4, 5, 6]
    ext = read(SAMPLES / "jsonlines/extended2.jsonl")  # a list of repetitions on each line
    assert ext.loc[(ext["x"] == 3) & (ext["y"] == 3), "time"].tolist() == [12.0] * 5
    m3 = read(SAMPLES / "jsonlines/matrix_3p.jsonl")  # (1, 1, 1) is on three lines
    assert (m3[["x", "y", "z"]] == 1).all(axis=1).sum() == 3
    talpas = read(SAMPLES / "talpas/talpas_1.txt")
    assert talpas.iloc[0][["x", "time"]].tolist() == [20.0, 82.00848518948744]
    assert talpas["callpath"].unique().tolist() == ["compute"] and talpas["metric"].unique().tolist() == ["time"]
    exp = read(SAMPLES / "experiments/two_parameter3.txt.extra-p")  # medians: values are not kept
    first = exp[exp["kernel"] == "merge [time]"].iloc[:2]
    assert first[["x", "y", "time"]].to_numpy().tolist() == [[20.0, 1.0, 1.0003031166379763],
                                                             [20.0, 2.0, 80.77055829825096]]
    assert "keeps no single repetitions" in exp.attrs["notes"][0] and "median of its repetitions (5)" in exp.attrs["notes"][0]


@needs_samples
def test_the_same_measurements_in_two_formats_give_the_same_frame():
    old, new = read(SAMPLES / "json/input_1.JSON"), read(SAMPLES / "json/new/input1.json")
    pd.testing.assert_frame_equal(old, new)  # values and dtypes; attrs differ only in where rows are
    assert old.attrs["lines"][0] == "measurements[0]" and new.attrs["lines"][0] == "measurements.sweep.time[0]"
    # the saved experiment holds the medians of incomplete_matrix_2p's first three points (x = 20)
    lines = read(SAMPLES / "jsonlines/incomplete_matrix_2p.jsonl")
    exp = read(SAMPLES / "experiments/two_parameter3.txt.extra-p")
    medians = lines.groupby(["x", "y"])["time"].median().loc[[(20.0, 1.0), (20.0, 2.0), (20.0, 3.0)]]
    saved = exp[exp["kernel"] == "merge [time]"].set_index(["x", "y"])["time"].loc[medians.index]
    np.testing.assert_array_equal(saved.to_numpy(), medians.to_numpy())


@needs_samples
def test_talpas_negative_example_is_refused_in_one_line():
    # Extra-P's talpas_10_neg.txt holds no negative value: its 'flops' metric lacks two of the five points,
    # which Extra-P refuses (InvalidExperimentError); so does automodel, naming the kernel's first line
    path = SAMPLES / "talpas/talpas_10_neg.txt"
    message = _one_line_error(read, path)
    assert message == (f"{path}, line 27: kernel 'compute [flops]' has values at 3 of the 5 points of the file "
                       "(none at x = 40; x = 50); expected every kernel at every point")


@needs_samples
@needs_cube
def test_cube_sets_read_in_place():
    single = read(SAMPLES / "cubeset/single_parameter")
    assert single.attrs["format"] == "cube" and single.attrs["params"] == ["x"]  # y = 1, z = 1 dropped
    assert [x for (x,) in _points(single)] == [1, 10, 25, 50, 100, 250, 500, 1000, 2000]
    assert set(single["kernel"]) == CUBE_KERNELS
    assert (single.groupby(["kernel", "x"]).size() == 1).all()  # one repetition, one location
    assert any("y = 1, z = 1 in every folder, dropped" in n for n in single.attrs["notes"])
    assert any("bytes_get, bytes_put" in n for n in single.attrs["notes"])  # metrics without data
    at = single[(single["x"] == 1000)].set_index("kernel")["time"]
    assert at["main [time]"] == pytest.approx(1.2488e-05)  # exclusive: main's own time, not its callees'
    assert at["main->init_mat [visits]"] == 2 and at["main [visits]"] == 1
    assert single.attrs["lines"][0].endswith("/profile.cubex")
    multi = read(SAMPLES / "cubeset/multi_parameter")
    assert multi.attrs["params"] == ["x", "y", "z"] and set(multi["kernel"]) == CUBE_KERNELS
    assert _points(multi) == [(x, y, z) for x in (1, 10, 25) for y in (1, 10, 25) for z in (1, 10, 25)]


@needs_samples
def test_cube_negative_example_is_refused_in_one_line():
    path = SAMPLES / "cubeset/negative_example"
    assert _one_line_error(read, path) == (
        f"{path}: folder 'x10y1z1' names the parameters x, y, z but 'mm.x1y1wrong1' names x, y, wrong; expected "
        "the same parameters in the same order in every folder name")


# -- the entry, detection, tables ---------------------------------------------------------------------
def test_the_entry_and_its_names():
    assert list(FORMATS) == ["csv", "tsv", "parquet", "text", "json", "jsonl", "talpas", "experiment", "cube"]
    assert automodel.read is read and automodel.data.read is read
    message = _one_line_error(read, "x.csv", format="yaml")
    assert message.startswith("format 'yaml' is not known; expected one of csv, tsv, parquet")


def test_detection_by_content(tmp_path):
    cases = {"runs.csv": "n,p,time\n1,1,2\n", "runs.txt": "n\tp\ttime\n1\t1\t2\n",
             "prof.dat": "# Extra-P\nPARAMETER p\n", "one.json": '{"parameters": ["x"], "measurements": {}}\n',
             "rec.txt": '\n{"params": {"x": 1}, "value": 2}\n', "tal.txt": '{"parameters":{"x":1};"value":2}\n',
             "odd.jsonl": '{"x": 1}\n', "empty.csv": "", "word.json": '"hello"\n'}
    found = {name: detect(_write(tmp_path, name, text)) for name, text in cases.items()}
    assert found == {"runs.csv": "csv", "runs.txt": "tsv", "prof.dat": "text", "one.json": "json",
                     "rec.txt": "jsonl", "tal.txt": "talpas", "odd.jsonl": "jsonl", "empty.csv": "csv",
                     "word.json": "json"}  # was read as a CSV "with a header but no rows"
    assert _one_line_error(read, tmp_path / "word.json").startswith(f"{tmp_path / 'word.json'}: expected an Extra-P JSON object")
    (tmp_path / "folder").mkdir()
    assert detect(tmp_path / "folder") == "cube"
    with zipfile.ZipFile(tmp_path / "e.bin", "w") as z:
        z.writestr("other.txt", "x")
    assert detect(tmp_path / "e.bin") == "experiment"
    assert _one_line_error(detect, tmp_path / "absent") == f"{tmp_path / 'absent'}: no such file, expected a file of measurements"


def test_tsv_and_csv_tables(tmp_path):
    tsv = read(_write(tmp_path, "runs.tsv", "n\tp\ttime\n10\t1\t2.5\n20\t2\t3.5\n"))
    assert tsv.attrs == {"source": str(tmp_path / "runs.tsv"), "first_row": 2, "format": "tsv"}
    assert tsv.to_dict("list") == {"n": [10, 20], "p": [1, 2], "time": [2.5, 3.5]}
    csv = read(_write(tmp_path, "runs.csv", "n,p,time\n10,1,2.5\n20,2,3.5\n"))
    pd.testing.assert_frame_equal(csv, tsv)
    bad = _write(tmp_path, "bad.tsv", "n\tp\ttime\n10\t1\tfast\n20\t2\t3\n30\t4\t2\n")
    assert _one_line_error(load, bad) == f"{bad}, row 2, column 'time': expected a positive time, got 'fast'"
    semi = _write(tmp_path, "semi.txt", "n;p;time\n1;1;2\n")
    assert "automodel reads tab-separated values and this file seems to use ';'" in _one_line_error(
        read, semi, format="tsv")


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "runs.parquet"
    text = "".join(f'{{"params": {{"x": {x}}}, "value": {2 * x}}}\n' for x in (1, 2, 4))
    frame = read(_write(tmp_path, "runs.jsonl", text))
    frame.to_parquet(path)  # a tidy frame's attrs are plain lists: its parameters are written too
    got = read(path)
    assert detect(path) == "parquet" and got.attrs == {"source": str(path), "first_row": 1, "params": ["x"],
                                                       "format": "parquet"}
    pd.testing.assert_frame_equal(got, frame, check_dtype=False)  # strings may come back as another dtype
    assert load(path).params == ("x",) and len(pd.concat([frame, frame])) == 6
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 and then nothing a Parquet reader understands")
    assert _one_line_error(read, broken).startswith(f"{broken}: not a readable Parquet file (")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "runs.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    assert _one_line_error(read, path) == f"{path}: reading Parquet needs pyarrow: pip install 'automodel-hpc[parquet]'"


# -- kept repetitions of a saved experiment -----------------------------------------------------------
def _experiment(tmp_path: Path, doc: object, arrays: list[np.ndarray] | None = None, name: str = "e.extra-p") -> Path:
    """A saved experiment as Extra-P writes it: experiment.json plus, for kept values, values/0.indx
    (magic, count, one offset per array) and values/0.vals (magic, numpy arrays back to back)."""
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("experiment.json", doc if isinstance(doc, str) else json.dumps(doc))
        if arrays is not None:
            vals, offsets = io.BytesIO(), []
            vals.write(b"Extra-P VALUES\0\0")
            for a in arrays:
                offsets.append(vals.tell())
                np.lib.format.write_array(vals, a)
            index = b"Extra-P INDEX\0\0\0" + np.array([len(arrays), *offsets], "<u8").tobytes()
            z.writestr("values/0.indx", index)
            z.writestr("values/0.vals", vals.getvalue())
    return path


def test_experiment_with_kept_repetitions(tmp_path):
    entry = {"median": 9.0, "repetitions": 2}
    doc = {"Extra-P": "4.2.0", "parameters": ["p"], "measurements": {"main": {"time": [
        {**entry, "coordinate": [2.0], "values": [0, 0]}, {**entry, "coordinate": [4.0], "values": [0, 1]}]}}}
    frame = read(_experiment(tmp_path, doc, [np.array([1.0, 1.5]), np.array([2.0, 2.5])]))
    assert frame[["p", "time"]].to_numpy().tolist() == [[2, 1.0], [2, 1.5], [4, 2.0], [4, 2.5]]
    assert frame.attrs["notes"] == [] and frame.attrs["lines"][2] == "measurements.main.time[1]"
    doc["measurements"]["main"]["time"][1]["values"] = [3, 0]
    message = _one_line_error(read, _experiment(tmp_path, doc, [np.array([1.0])], "f.extra-p"))
    assert message.endswith("measurements.main.time[1].values: the archive has no values/3.indx for these values")


@pytest.mark.parametrize("array, problem", [
    (np.zeros(0), "an array of shape (0,), no values; expected at least one repetition"),  # dropped the point
    (np.array([1 + 2j]), "an array of complex128 values; expected real numbers (the repetitions)"),  # 2j dropped
    (np.array([True]), "an array of bool values; expected real numbers (the repetitions)"),
])
def test_kept_repetitions_that_are_no_real_numbers_are_refused(tmp_path, array, problem):
    doc = {"parameters": ["p"], "measurements": {"main": {"time": [
        {"coordinate": [2.0], "median": 1.0, "values": [0, 0]}, {"coordinate": [4.0], "median": 2.0}]}}}
    message = _one_line_error(read, _experiment(tmp_path, doc, [array]))
    assert message.endswith(f"measurements.main.time[0].values: values/0.vals at offset 16: {problem}")


# -- malformed files: one line naming the file, the line or record, what was expected ------------------
MALFORMED = [
    ("a.jsonl", '{"params": {"x": 1}, "value": 2}\n{"params": {"x": 2}, "value": 3\n',
     "line 2: not valid JSON (column 32: Expecting ',' delimiter); expected one record per line"),
    ("b.jsonl", '{"params": {"x": 1}}\n', 'line 1: no "value" field; expected a record such as'),
    ("c.jsonl", '{"params": {"x": 1}, "value": [1, "fast"]}\n', "line 1, value[1]: expected a finite number, got 'fast'"),
    ("d.jsonl", '{"params": {"x": 1}, "value": NaN}\n', "line 1, value: expected a finite number or a list"),
    ("e.jsonl", '{"params": {"x": 1}, "value": 1}\n\n{"params": {"y": 1}, "value": 1}\n',
     "line 3, params: parameters y; expected those of line 1: x"),
    ("f.jsonl", '{"params": [1], "value": 1}\n', "line 1, params: expected the parameters as an object"),
    ("g.jsonl", '{"params": {"time": 1}, "value": 1}\n', "line 1, params: expected a parameter name made of"),
    ("h.jsonl", '{"params": {"x": true}, "value": 1}\n', "line 1, params.x: expected a finite number, got True"),
    ("i.jsonl", '{"params": {"x": 1}, "callpath": 7, "value": 1}\n', "line 1, callpath: expected a callpath name"),
    ("j.jsonl", '\n\n', "no records; expected one JSON Lines record per line"),
    ("k.jsonl", '[1, 2]\n', "line 1: expected a record such as"),
    ("a.talpas", '{"parameters":{"x":20};"metric":"time";"value":1.5}\n',
     'line 1: no "callpath" field; expected a callpath name'),
    ("b.talpas", '{"parameters":{"x":20};"metric":"time";"callpath":"c";"value":1.5}\n{"parameters":{"x":30};;}\n',
     "line 2: not valid JSON"),
    ("a.json", '{"parameters": ["x"], "measurements": {"main": {"time": [{"point": [1, 2], "values": [1]}]}}}',
     "measurements.main.time[0].point: 2 coordinate(s); expected one per parameter (x)"),
    ("b.json", '{"parameters": ["x"], "measurements": {"a->b": {"time": [{"point": [1], "values": 3}]}}}',
     'measurements["a->b"].time[0].values: expected a list of numbers (the repetitions), got 3'),
    ("c.json", '{"parameters": ["x"], "measurements": {"main": {"time": {"point": [1]}}}}',
     "measurements.main.time: expected a list of points with their values, got an object"),
    ("d.json", '{"parameters": "x", "measurements": {}}', "parameters: expected a list of parameter names, got the string"),
    ("e.json", '{"measurements": {"m": {}}\n\n', 'not valid JSON (line 3, column 1: Expecting'),
    ("f.json", '[1, 2]', 'expected an Extra-P JSON object with "parameters" and "measurements"'),
    ("g.json", '{"parameters": [{"id": 1, "name": "x"}], "callpaths": [{"id": 1, "name": "main"}], '
               '"metrics": [{"id": 1, "name": "time"}], "coordinates": [{"id": 1, "parameter_value_pairs": '
               '[{"parameter_id": 1, "parameter_value": 4}]}], "measurements": [{"callpath_id": 2, '
               '"coordinate_id": 1, "metric_id": 1, "value": 3.5}]}', "measurements[0].callpath_id: no callpath with id 2"),
    ("h.json", '{"parameters": [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}], "callpaths": [], "metrics": [], '
               '"coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}], '
               '"measurements": []}', "coordinates[0]: values for parameter ids [1]; expected one for each of [1, 2]"),
    ("i.json", '{"parameters": ["x"], "measurements": {"m": {"t": [{"point": [1], "values": [1]}], '
               '"u": [{"point": [2], "values": [1]}]}}}',
     "measurements.m.t[0]: kernel 'm [t]' has values at 1 of the 2 points of the file (none at x = 2)"),
    ("j.json", '{"parameters": [{"id": 1, "name": "x"}], "callpaths": [], "metrics": [], "coordinates": '
               '[{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}, {"id": 1, '
               '"parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 8}]}], "measurements": []}',
     "coordinates[1].id: id 1 is given twice in coordinates"),  # the second replaced the first
    ("k.json", '{"parameters": [{"id": 1, "name": "x"}], "callpaths": [], "metrics": [], "coordinates": '
               '[{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}, {"parameter_id": 1, '
               '"parameter_value": 8}]}], "measurements": []}',
     "coordinates[0].parameter_value_pairs[1].parameter_id: a second value for parameter id 1; expected one value "
     "per parameter"),  # 8 replaced 4
    ("a.txt", "PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA x\n", "line 5: expected a finite number, got 'x'"),
]


@pytest.mark.parametrize("name, text, fragment", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_give_one_line(tmp_path, name, text, fragment):
    path = _write(tmp_path, name, text)
    fmt = {"talpas": "talpas"}.get(path.suffix[1:])
    message = _one_line_error(read, path, fmt)
    assert message.startswith(str(path)) and fragment in message, message


def test_malformed_experiments(tmp_path):
    fake = tmp_path / "fake.extra-p"
    fake.write_bytes(b"PK\x03\x04 but no archive")
    assert _one_line_error(read, fake) == (f"{fake}: not a ZIP archive; expected a saved Extra-P experiment "
                                           "(.extra-p: a ZIP archive holding experiment.json)")
    with zipfile.ZipFile(tmp_path / "other.extra-p", "w") as z:
        z.writestr("data.json", "{}")
    assert "the archive holds no experiment.json" in _one_line_error(read, tmp_path / "other.extra-p")
    bad = _experiment(tmp_path, "{ nope", name="bad.extra-p")
    assert _one_line_error(read, bad).startswith(f"{bad}, experiment.json: not valid JSON (column 3: Expecting")
    crc = _experiment(tmp_path, '{"parameters": ["x"], "measurements": {}}', name="crc.extra-p")
    data = crc.read_bytes()
    crc.write_bytes(data.replace(b'"measurements"', b'"measurementz"', 1))  # stored, so its CRC no longer holds
    assert _one_line_error(read, crc) == f"{crc}, experiment.json: cannot be unpacked (Bad CRC-32 for file 'experiment.json')"
    doc = {"parameters": ["x"], "measurements": {"k": {"time": [{"coordinate": [1.0], "median": "high"}]}}}
    message = _one_line_error(read, _experiment(tmp_path, doc, name="median.extra-p"))
    assert message.endswith("measurements.k.time[0].median: expected the median of the point, got the string \"high\"")


def test_malformed_cube_sets(tmp_path, monkeypatch):
    root = tmp_path / "set"
    root.mkdir()
    assert "is a directory with no CUBE profiles in its folders" in _one_line_error(read, root)
    for name in ("mm.x1y1.r1", "mm.x2y1.r1"):
        (root / name).mkdir()
        (root / name / "profile.cubex").write_bytes(b"not a tar archive")
    monkeypatch.setitem(sys.modules, "pycubexr", None)
    assert _one_line_error(read, root) == f"{root}: reading CUBE profiles needs pycubexr: pip install 'automodel-hpc[cube]'"
    monkeypatch.undo()
    if HAS_CUBE:
        assert _one_line_error(read, root).startswith(f"{root}, mm.x1y1.r1/profile.cubex: not a readable CUBE profile (")
    (root / "run.x3y1.r1").mkdir()
    (root / "run.x3y1.r1" / "p.cubex").write_bytes(b"")
    (root / "mm.nothing").mkdir()
    (root / "mm.nothing" / "p.cubex").write_bytes(b"")
    assert _one_line_error(read, root) == (f"{root}: folder 'mm.nothing' does not name a point; expected "
                                           "<prefix>.<param><value>...[.r<repetition>]/<name>.cubex, e.g. mm.x10y1z1.r1")
    flat = tmp_path / "flat"
    for name in ("a.x1.r1", "a.x1.r2"):
        (flat / name).mkdir(parents=True)
        (flat / name / "p.cubex").write_bytes(b"")
    assert _one_line_error(read, flat) == (f"{flat}: every folder has x = 1; expected a parameter that varies "
                                           "between the folders")
    assert _one_line_error(read, tmp_path / "flat" / "a.x1.r1" / "p.cubex", "cube").endswith(
        "p.cubex: not a folder; expected a set of CUBE profiles (<prefix>.<param><value>...[.r<repetition>]/<name>.cubex)")


# -- values <= 0 and several kernels are the caller's to refuse -----------------------------------------
def test_negative_values_are_kept_and_refused_by_the_fit(tmp_path):
    text = "".join(f'{{"parameters":{{"x":{x}}};"metric":"time";"callpath":"c";"value":{v}}}\n'
                   for x, v in ((1, 1.0), (2, 2.0), (4, -4.0), (8, 8.0)))
    path = _write(tmp_path, "neg.txt", text)
    frame = read(path)
    assert frame.attrs["format"] == "talpas" and frame["time"].tolist() == [1.0, 2.0, -4.0, 8.0]
    assert _one_line_error(load, path) == f"{path}, line 3, column 'time': expected a positive time, got -4"
    many = automodel.fit_many(path, jobs=1)
    assert many.summary["note"].tolist() == ["value -4 at x = 4 is negative (expected 0 or more)"]


def test_one_kernel(tmp_path):
    text = "".join(f'{{"params": {{"x": {x}}}, "callpath": "{c}", "value": {x}}}\n' for c in ("a", "b") for x in (1, 2))
    frame = read(_write(tmp_path, "two.jsonl", text))
    b = one_kernel(frame, "b")
    assert b["time"].tolist() == [1.0, 2.0] and b.attrs["lines"] == [3, 4] and b.attrs["params"] == ["x"]
    assert _one_line_error(one_kernel, frame, "c").endswith("no kernel 'c'; expected one of 'a', 'b'")
    assert "2 kernels ('a', 'b'); a fit models one: name it (automodel fit --kernel NAME)" in _one_line_error(load, frame)
    runs = pd.DataFrame({"p": [1, 2], "time": [1.0, 2.0]})
    assert one_kernel(runs) is runs and "no 'kernel' column" in _one_line_error(one_kernel, runs, "a")


def test_a_kernel_is_named_by_its_call_path_when_it_has_one_metric(tmp_path):
    """The listing prints ``solve [time]``; ``--kernel solve`` was refused as no kernel."""
    text = "".join(f'{{"params": {{"x": {x}}}, "callpath": "{c}", "metric": "{m}", "value": {x}}}\n'
                   for c, m in (("solve", "time"), ("io", "time"), ("io", "visits")) for x in (1, 2))
    frame = read(_write(tmp_path, "three.jsonl", text))
    assert one_kernel(frame, "solve")["kernel"].unique().tolist() == ["solve [time]"]
    assert one_kernel(frame, "io [visits]")["kernel"].unique().tolist() == ["io [visits]"]
    assert _one_line_error(one_kernel, frame, "io").endswith(
        "kernel 'io' is measured in 2 metrics ('io [time]', 'io [visits]'); name one")
    assert _one_line_error(one_kernel, frame, "sol").endswith(
        "no kernel 'sol'; expected one of 'solve [time]', 'io [time]', 'io [visits]'")


# -- the commands -------------------------------------------------------------------------------------
@needs_samples
def test_fit_and_kernels_on_json_lines(tmp_path, capsys):
    path = SAMPLES / "jsonlines/input_1.jsonl"
    assert main(["fit", str(path), "--quiet", "--top", "2", "--templates", "none", "-o", str(tmp_path / "m.json")]) == 0
    out = capsys.readouterr().out
    shown = " ".join(out.split())  # the data line is wrapped at 80 columns
    assert f"data: {path}: 125 runs, 25 distinct configurations; parameters x, y" in shown and "chosen model: T = " in out
    assert main(["kernels", str(path), "--format", "jsonl", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert f"data: {path}: 1 kernel; values in metr <root> [metr]" in " ".join(out.split())  # the unit first
    assert main(["fit", str(path), "--format", "talpas", "--quiet"]) == 2
    assert "line 1: no \"parameters\" field" in capsys.readouterr().err


@needs_samples
@needs_cube
def test_fit_and_kernels_on_a_cube_set(tmp_path, capsys):
    path = SAMPLES / "cubeset/single_parameter"
    assert main(["fit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "28 kernels (" in err and "automodel fit --kernel NAME" in err
    assert main(["fit", str(path), "--kernel", "main->init_mat [PAPI_FP_OPS]", "--quiet", "--top", "2",
                 "--templates", "none"]) == 0
    out = capsys.readouterr().out
    assert "note: " in out and "y = 1, z = 1 in every folder, dropped" in out and "parameters x" in out
    assert main(["kernels", str(path), "--jobs", "1", "--out", str(tmp_path / "s.csv")]) == 0
    out = capsys.readouterr().out
    assert "main->mat_mul [PAPI_FP_OPS]" in out and "summary of 28 kernels written" in out


@needs_samples
def test_observe_reads_every_format(tmp_path, capsys):
    store = tmp_path / "s.db"
    path = SAMPLES / "talpas/talpas_1.txt"
    assert main(["observe", "--store", str(store), "--app", "a", str(path), "--format", "talpas"]) == 0
    assert "25" in capsys.readouterr().out
    assert main(["observe", "--store", str(store), "--app", "b", str(SAMPLES / "json/new/input2.json"),
                 "--kernel", "nope"]) == 2
    assert "no kernel 'nope'; expected one of 'sweep [time]'" in capsys.readouterr().err
