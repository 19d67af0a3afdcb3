"""Extra-P text input: the grammar, the tidy frame, one-line errors, and the real files of the datasets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import automodel

from automodel.errors import DataError
from automodel.data.readers.extrap_text import is_extrap_text, kernel_name, read_extrap_text

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "extrap-text"

ONE_PARAM = """# two kernels, two metrics
PARAMETER p
POINTS 2 4 8
METRIC time
REGION main
DATA 1.0 1.2
DATA 2.0
DATA 4.0 4.4 4.2
REGION main->solve  step
DATA 0.5
DATA 1
DATA 2e0
METRIC visits
REGION main
DATA 1
DATA 1
DATA 1
"""


def _write(tmp_path: Path, text: str, name: str = "in.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_one_parameter_frame(tmp_path):
    frame = read_extrap_text(_write(tmp_path, ONE_PARAM))
    assert frame.attrs["params"] == ["p"]
    assert list(frame.columns) == ["kernel", "callpath", "metric", "p", "time"]
    assert list(dict.fromkeys(frame["kernel"])) == ["main [time]", "main->solve step [time]", "main [visits]"]
    main = frame[frame["kernel"] == "main [time]"]
    assert main["p"].tolist() == [2, 2, 4, 8, 8, 8]  # one row per repetition
    assert main["time"].tolist() == [1.0, 1.2, 2.0, 4.0, 4.4, 4.2]
    assert frame[frame["metric"] == "visits"]["callpath"].unique().tolist() == ["main"]
    assert len(frame) == 6 + 3 + 3


def test_several_parameters_and_point_lines(tmp_path):
    text = """PARAMETER p
PARAMETER n
POINTS ( 2 10 ) ( 2 20 )
POINTS (4 10)
POINTS ( 4   20 )
REGION r
DATA 1
DATA 2
DATA 3
DATA 4
"""
    frame = read_extrap_text(_write(tmp_path, text))
    assert frame.attrs["params"] == ["p", "n"]
    assert frame[["p", "n"]].to_numpy().tolist() == [[2, 10], [2, 20], [4, 10], [4, 20]]
    assert frame["kernel"].unique().tolist() == ["r"]  # no METRIC line: the call path alone
    assert kernel_name("r", "") == "r"


def test_single_parameter_tuples(tmp_path):
    frame = read_extrap_text(_write(tmp_path, "PARAMETER x\nPOINTS ( 1 ) ( 10 ) ( 25 )\nMETRIC m\n"
                                               "REGION a\nDATA 1\nDATA 2\nDATA 3\n"))
    assert frame["x"].tolist() == [1, 10, 25]


@pytest.mark.parametrize("text, fragment", [
    ("", "line 1: no PARAMETER line"),
    ("PARAMETER p\nPOINTS 1 2 3\nMETRIC t\n", "line 1: no DATA lines"),
    ("PARAMETER p\nPOINTS 1 2\nFOO bar\n", "line 3: unknown keyword 'FOO'"),
    ("POINTS 1 2\n", "line 1: POINTS before PARAMETER"),
    ("PARAMETER p\nPOINTS 1 two 3\n", "line 2: expected a number, got 'two'"),
    ("PARAMETER p n\nPOINTS 1 2\n", "line 2: expected one ( ... ) tuple of 2 numbers"),
    ("PARAMETER p n\nPOINTS ( 1 2 ) ( 3 )\n", "line 2: expected 2 coordinate(s) per point"),
    ("PARAMETER p\nPOINTS 1 2 1\n", "line 2: point (1.0,) is given twice"),
    ("PARAMETER 2p\n", "line 1: expected a parameter name"),
    ("PARAMETER p p\n", "line 1: parameter 'p' is named twice"),
    ("PARAMETER p\nPOINTS 1 2\nDATA 1\n", "line 3: DATA before any REGION"),
    ("PARAMETER p\nREGION r\nDATA 1\n", "line 3: DATA before POINTS"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA nan\n", "line 5: expected a finite number, got 'nan'"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", "line 6: more DATA lines than the 2 POINTS"),
    ("PARAMETER p\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2\nREGION s\nDATA 1\nDATA 2\nDATA 3\n",
     "line 4: region 'r' has 2 DATA line(s) for 3 POINTS"),
    ("PARAMETER p\nPOINTS 1\nREGION r\nDATA 1\nREGION r\nDATA 2\n", "line 6: region 'r' is given again"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nPOINTS 3\n", "line 5: POINTS after DATA"),
    ("PARAMETER p\nPOINTS 1\nREGION r\nDATA\n", "line 4: DATA needs at least one value"),
    # float() read these: Arabic-Indic 3 as the point 3, '1_0' as the value 10
    ("PARAMETER p\nPOINTS 1 2 \u0663\n", "line 2: expected a number, got '\u0663'"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 1_0\n", "line 5: expected a finite number, got '1_0'"),
])
def test_bad_input_is_one_line_naming_the_line(tmp_path, text, fragment):
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as err:
        read_extrap_text(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(path)) and fragment in message


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_extrap_text(tmp_path / "absent.txt")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00PARAMETER")
    with pytest.raises(DataError, match="not UTF-8 text"):
        read_extrap_text(binary)


def test_detection(tmp_path):
    assert is_extrap_text(_write(tmp_path, "# c\n\nPARAMETER p\n"))
    assert not is_extrap_text(_write(tmp_path, "kernel,p,time\na,1,2\n", "k.csv"))
    assert not is_extrap_text(tmp_path / "absent.txt")


def test_round_trip_with_the_benchmark_writer(tmp_path):
    from benchmarks.extrap_text import format_text

    points = np.array([[1.0, 10.0], [2.0, 10.0], [4.0, 20.0]])
    regions = {"a": [[1.0, 1.5], [2.0], [3.0]], "b": [[5.0], [6.0], [7.0, 7.5]]}
    frame = read_extrap_text(_write(tmp_path, format_text(["p", "n"], points, regions, metric="time")))
    for region, values in regions.items():
        sub = frame[frame["callpath"] == region]
        assert sub["time"].tolist() == [v for reps in values for v in reps]
        assert sub[["p", "n"]].drop_duplicates().to_numpy().tolist() == points.tolist()


def _count(path: Path) -> tuple[int, int, int]:
    """(kernels, points, values) counted from the raw lines, independently of the reader."""
    kernels = points = values = 0
    for line in path.read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "POINTS":
            points += line.count("(") or len(words) - 1
        elif words[0] == "REGION":  # in these files each REGION line starts one kernel
            kernels += 1
        elif words[0] == "DATA":
            values += len(words) - 1
    return kernels, points, values


@pytest.mark.skipif(not DATASETS.is_dir(), reason="shared Extra-P text files not available")
@pytest.mark.parametrize("name", sorted(p.name for p in DATASETS.glob("*.txt")) if DATASETS.is_dir() else [])
def test_real_files(name):
    path = DATASETS / name
    frame = read_extrap_text(path)
    n_regions, n_points, n_values = _count(path)
    params = frame.attrs["params"]
    assert len(frame) == n_values
    assert len(frame[params].drop_duplicates()) == n_points
    assert frame["kernel"].nunique() == n_regions
    assert np.isfinite(frame["time"]).all()
    per_kernel = frame.groupby("kernel")[params].apply(lambda f: len(f.drop_duplicates()))
    assert (per_kernel == n_points).all()  # every kernel has one DATA line per point


def test_benchmark_reads_extrap_functions_without_evaluating_them():
    from benchmarks.kernels import extrap_terms

    assert extrap_terms("4.3+9.2*p**(1)*log2(p)**(1)") == [(4.3, 0.0, 0.0), (9.2, 1.0, 1.0)]
    assert extrap_terms("-6.5-1.5*p**(1/2)") == [(-6.5, 0.0, 0.0), (-1.5, 0.5, 0.0)]
    for hostile in ("__import__('os').system('true')", "p.__class__", "q**2"):
        with pytest.raises(ValueError):
            extrap_terms(hostile)


def test_cause12_errors_in_values_name_the_line_of_the_file(tmp_path):
    """Issue 17, cause 12: a bad value of an Extra-P file was reported at "row 0", not at its line."""
    path = tmp_path / "profile.txt"
    path.write_text("PARAMETER p\nPOINTS 0 2 4 8\n\nREGION main\nDATA 1.0\nDATA 2.0\nDATA 1e-300\nDATA 3\n")
    frame = read_extrap_text(path)
    assert frame.attrs["lines"] == [5, 6, 7, 8]
    with pytest.raises(automodel.DataError, match=rf"^{path}, line 5, column 'p': expected a positive process count, got 0"):
        automodel.fit_many(path)
    path.write_text(path.read_text().replace("POINTS 0", "POINTS 1"))
    with pytest.raises(automodel.DataError, match=rf"^{path}, line 7, column 'time': .* got 1e-300$"):
        automodel.fit_many(path)
