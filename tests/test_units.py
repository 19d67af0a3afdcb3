"""Units: times are not always seconds (``--unit``, a ``unit`` column); the model keeps its unit and
every printed time and plot axis uses it (issue 32: the OSU data are microseconds)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import automodel
from automodel.cli import main
from automodel.errors import DataError
from automodel.options import unit_in_name, unit_name

DATASETS = Path(os.environ.get("AUTOMODEL_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")
OSU = DATASETS / "osu_bcast_orfeo_mzampar.csv"


def _runs(unit: str | None = None) -> pd.DataFrame:
    p = np.array([1.0, 2, 4, 8, 16] * 2)
    frame = pd.DataFrame({"p": p, "time": 300 / p + 20 * np.log2(p) + np.repeat([0.0, 1.0], 5)})
    return frame if unit is None else frame.assign(unit=unit)


def test_unit_names():
    assert [unit_name(u) for u in ("s", "µs", "usec", "Seconds", "misses")] == ["s", "us", "us", "s", "misses"]
    for bad in ("", "x" * 25, "a\nb"):
        with pytest.raises(ValueError):
            unit_name(bad)


def test_the_unit_comes_from_the_option_or_the_data_and_is_kept(tmp_path):
    assert automodel.fit(_runs(), templates="none", progress=False).best.unit == "s"
    model = automodel.fit(_runs("us"), templates="none", progress=False).best
    assert model.unit == "us" and model.best_p(p_max=64).lines()[1].endswith(" us)")
    model.save(tmp_path / "m.json")
    assert automodel.load_model(tmp_path / "m.json").unit == "us"
    assert automodel.fit(_runs(), unit="ms", templates="none", progress=False).best.unit == "ms"
    with pytest.raises(DataError, match="the data say us, --unit says ms"):
        automodel.fit(_runs("us"), unit="ms", progress=False)
    mixed = _runs("us").assign(unit=["us"] * 5 + ["ms"] * 5)
    with pytest.raises(DataError, match=r"column 'unit': 2 units \(ms, us\); expected one"):
        automodel.fit(mixed, progress=False)


def test_a_100000_character_unit_is_cut_in_its_message():
    """``--unit`` of 100,000 characters was echoed whole: a 100 kB line of error."""
    with pytest.raises(DataError) as info:
        automodel.fit(_runs(), unit="x" * 100_000, progress=False)
    assert len(str(info.value)) < 300 and "(100002 chars)" in str(info.value)


def test_a_unit_at_the_end_of_the_time_columns_name_is_the_unit(tmp_path, capsys):
    assert [unit_in_name(c) for c in ("runtime_ms", "time (us)", "Time[s]", "wall_USEC", "time", "runs", "mass")] == \
        ["ms", "us", "s", "us", None, None, None]
    runs = _runs().rename(columns={"time": "runtime_ms"})
    assert automodel.fit(runs, time="runtime_ms", templates="none", progress=False).best.unit == "ms"
    assert automodel.fit(runs, time="runtime_ms", unit="us", templates="none", progress=False).best.unit == "us"
    assert automodel.fit(runs.assign(unit="ns"), time="runtime_ms", templates="none", progress=False).best.unit == "ns"
    csv = tmp_path / "runs.csv"
    runs.to_csv(csv, index=False)
    assert main(["fit", str(csv), "--templates", "none", "--quiet"]) == 2  # no column 'time': the hint names it
    assert capsys.readouterr().err.strip().endswith("the file has p, runtime_ms (--time runtime_ms, read in ms)")
    assert main(["fit", str(csv), "--time", "runtime_ms", "--templates", "none", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "time: column runtime_ms, in ms" in out.replace("\n    ", " ") and out.split("best process count")[1].split("\n")[1].endswith(" ms)")


def test_the_first_error_of_a_scientists_file_names_every_option_it_needs(tmp_path, capsys):
    """``procs, size, walltime_ms``: the missing 'time' named --time only, then the next attempt met the
    missing roles, one error per attempt; now the first one offers --p and --n as well."""
    csv = tmp_path / "runs.csv"
    _runs().rename(columns={"time": "walltime_ms", "p": "procs"}).assign(size=1000).to_csv(csv, index=False)
    assert main(["fit", str(csv), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith("(--time walltime_ms, read in ms; and perhaps --p procs --n size)")
    assert main(["fit", str(csv), "--time", "walltime_ms", "--p", "procs", "--n", "size", "--templates", "none",
                 "--quiet"]) == 0


def test_cli_prints_and_plots_the_unit(tmp_path, capsys):
    import matplotlib

    csv, model = tmp_path / "runs.csv", tmp_path / "m.json"
    _runs().to_csv(csv, index=False)
    assert main(["fit", str(csv), "--unit", "us", "--templates", "none", "--quiet", "-o", str(model)]) == 0
    out = capsys.readouterr().out
    assert "values in us" in out and "predicted" in out and " s " not in out.split("best process count")[1]
    assert main(["best-p", str(model), "--p-max", "64"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(" us)")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text, to read the axis label
    try:
        assert main(["plot", str(model), "-o", str(tmp_path / "m.svg")]) == 0
    finally:
        matplotlib.rcParams["svg.fonttype"] = "path"
    svg = (tmp_path / "m.svg").read_text()
    assert "time [us]" in svg and "time [s]" not in svg
    assert main(["fit", str(csv), "--unit", "a\tb"]) == 2
    assert "--unit" in capsys.readouterr().err


@pytest.mark.skipif(not OSU.is_file(), reason=f"no {OSU}")
def test_the_osu_microseconds_are_read_from_the_data(capsys):
    assert main(["fit", str(OSU), "--p", "P", "--where", "collective == 'bcast' and algorithm == 'Default' and "
                 "allocation == 'core' and msg_bytes == 1024", "--ignore", "source_file", "time_min", "time_max",
                 "--templates", "none", "--quiet", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["chosen"]["model"]["options"]["unit"] == "us"
    assert found["best_p"]["unit"] == "us"


def test_fit_models_counters_with_zeros_and_still_refuses_a_zero_time():
    p = np.array([1.0, 2, 4, 8, 16, 32])
    counts = pd.DataFrame({"p": p, "time": [0.0, 2, 3, 4, 5, 6], "metric": "PAPI_L3_TCM"})
    result = automodel.fit(counts, templates="none", progress=False)
    assert result.best.unit == "PAPI_L3_TCM"  # a profile's metric that is not a time is its unit
    assert "1 value(s) of 0 fitted as 1, half the smallest measured" in result.dataset.notes
    assert automodel.fit(counts.drop(columns="metric"), unit="misses", templates="none", progress=False).best.unit == "misses"
    with pytest.raises(DataError, match="every value is 0, so the model is T = 0"):
        automodel.fit(counts.assign(time=0.0), progress=False)
    with pytest.raises(DataError, match="expected a count of 0 or more, got -1"):
        automodel.fit(counts.assign(time=counts["time"].replace(3.0, -1.0)), progress=False)
    with pytest.raises(DataError, match="expected a positive time, got 0"):
        automodel.fit(counts.drop(columns="metric"), progress=False)


def test_a_best_p_in_ms_and_its_band_are_written_alike():
    """``predicted 3131 ms (90% band 2.1e+03 to 4.66e+03 ms)``: the band of a time in ms came in
    exponents beside a plain time."""
    from automodel import BestP

    found = BestP(7, 3131.08, 2104.49, 4658.45, 2, 64, 0.9, (), "ms")
    assert found.lines() == ["p = 7 (2 to 64 at 90%)", "predicted 3131 ms (90% band 2104 to 4658 ms)"]
    assert BestP(83, 0.005884, 0.005682, 0.006103, unit="s").lines()[1] == \
        "predicted 0.005884 s (90% band 0.00568 to 0.0061 s)"


def test_a_bad_time_in_ms_is_not_asked_for_in_seconds(tmp_path):
    """``walltime_ms`` holding ``abc``: "expected a positive time in seconds" told a newcomer to convert
    times that were fine as they were."""
    csv = tmp_path / "runs.csv"
    csv.write_text("p,walltime_ms\n1,abc\n2,5\n")
    with pytest.raises(DataError, match=r"column 'walltime_ms': expected a positive time, got 'abc'$"):
        automodel.fit(str(csv), time="walltime_ms", progress=False)
