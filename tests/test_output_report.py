"""The HTML reports without a browser: escaping, safe JSON, MathML, the profile's data, the commands.

The pages in a real browser (rendering, sorting, plots, no network) are tests/test_output_report_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automodel.cli import main
from automodel.output.report.page import json_script, table
from automodel.output.report.profile import default_target, profile_data, profile_page, split_kernel
from benchmarks.report_page import synthetic_profile

EVIL = "</script><script>alert(1)</script>"


@pytest.fixture(scope="module")
def profile():
    """A small profile with a call tree and a kernel named to break out of a script element."""
    frame = synthetic_profile(12, seed=3)
    evil = frame[frame["callpath"] == frame["callpath"].iloc[-1]].assign(kernel=EVIL, callpath=EVIL, metric="")
    return pd.concat([frame, evil], ignore_index=True)


@pytest.fixture(scope="module")
def many(profile):
    from automodel.kernels.fit_many import fit_many

    return fit_many(profile, progress=False)


@pytest.fixture(scope="module")
def demo_fit():
    """The fit of the demo's runs (conjugate gradient under SimGrid SMPI)."""
    import automodel
    from automodel.cli.demo import DEMO_DATA

    return automodel.fit(str(DEMO_DATA), progress=False)


def _data(page: str) -> dict:
    text = re.search(r'<script type="application/json" id="profile-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text)


def test_json_script_cannot_be_closed_by_the_data():
    out = json_script("d", {"name": EVIL, "x": float("nan"), "y": np.float64(2.5), "sep": "a\u2028b"})
    assert out.count("</script>") == 1 and out.endswith("</script>") and "<script>alert" not in out
    body = out[out.index(">") + 1:-len("</script>")]
    assert json.loads(body) == {"name": EVIL, "x": None, "y": 2.5, "sep": "a\u2028b"}


def test_table_escapes_cells_and_keeps_sort_keys():
    html = table(["name", "value"], [[EVIL, 0.5], ["b", float("inf")]], ["chosen", ""])
    assert "<script>" not in html and "&lt;/script&gt;" in html
    assert 'data-v="0.5"' in html and 'data-v="Infinity"' in html and '<tr class="chosen">' in html


def test_split_kernel_and_default_target():
    assert split_kernel("main->solve [time]") == ("main->solve", "time")
    assert split_kernel("a [b] [visits]") == ("a [b]", "visits")
    assert split_kernel(EVIL) == (EVIL, "")

    class M:
        ranges = {"p": [2.0, 32.0], "cpu": [0.5, 1.0]}

    assert default_target([M()]) == {"p": 128.0, "cpu": 1.0}


def test_profile_data_has_every_kernel_its_growth_band_and_points(profile, many):
    data = profile_data(many, profile, {"p": 4096.0})
    assert data["params"] == ["p"] and data["at"] == [4096.0] and len(data["kernels"]) == 13
    records = {r["path"]: r for r in data["kernels"]}
    assert records[EVIL]["metric"] == "" and "name" not in records[EVIL]
    first = records["main"]
    model = many.models["main [time]"]
    assert first["at"] == pytest.approx(float(model.predict({"p": [4096.0]})[0]), rel=1e-3)
    lo, hi = model.predict_interval({"p": [4096.0]}, 0.9)
    assert first["band"] == pytest.approx(np.sqrt(hi[0] / lo[0]), rel=1e-3)
    assert len(first["lo"]) == len(first["hi"]) == data["samples"] and len(first["y"]) == 5
    assert all(a <= 1 <= b for a, b in zip(first["lo"], first["hi"]))
    assert first["growth"][0][0] >= -1 and len(first["model"]) == 2 * len(model.core.terms)


def test_profile_page_escapes_the_kernel_names(profile, many):
    page = profile_page(many, profile, source=EVIL, title=EVIL)
    assert "<script>alert" not in page and page.count("<script") == 2  # the data and the code
    assert _data(page)["kernels"][-1]["path"] == EVIL


def test_fit_report_has_every_section(tmp_path, demo_fit):
    path = demo_fit.report(tmp_path / "fit.html", title="runs & <more>")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "runs &amp; &lt;more&gt;" in page
    for anchor in ("model", "best-p", "plot", "why", "leaderboard", "anomalies", "data"):
        assert f'<section id="{anchor}">' in page, anchor
    assert "<math" in page and "<svg" in page and demo_fit.selection.reason.split(";")[0] in page
    assert 'class="chosen"' in page and "http://" not in page.split("<svg", 1)[0]
    assert "Templates without a model" in page  # the space's templates that do not apply, with reasons


def test_report_command_on_runs_and_on_a_model(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n, p = np.meshgrid([1e3, 2e3, 4e3, 8e3, 16e3], [1.0, 2, 4, 8])
    runs = pd.DataFrame({"size": n.ravel(), "ranks": p.ravel()})
    runs["secs"] = (2e-4 * runs["size"] / runs["ranks"] + 0.01 * runs["ranks"]) * (1 + 0.01 * rng.standard_normal(20))
    csv = tmp_path / "runs.csv"
    runs.to_csv(csv, index=False)
    roles = ["--n", "size", "--p", "ranks", "--time", "secs", "--templates", "none", "--quiet"]
    assert main(["report", str(csv), "-o", str(tmp_path / "r.html"), *roles]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<mi>ranks</mi>" in page and "<th title=\"sort by size\">size</th>" in page  # the user's names
    assert main(["fit", str(csv), "-o", str(tmp_path / "m.json"), *roles]) == 0
    assert main(["report", str(tmp_path / "m.json"), str(csv), "-o", str(tmp_path / "m.html")]) == 0
    page = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert "carries no leaderboard" in page and 'id="data"' in page and "<svg" in page
    capsys.readouterr()
    assert main(["report", str(csv), str(csv), "-o", str(tmp_path / "x.html")]) == 2
    assert "not a model file" in capsys.readouterr().err and not (tmp_path / "x.html").exists()


def test_kernels_report_options(tmp_path, profile, capsys):
    csv = tmp_path / "profile.csv"
    profile.to_csv(csv, index=False)
    out = tmp_path / "k.html"
    assert main(["kernels", str(csv), "--report", str(out), "--report-at", "q=8"]) == 2
    assert "--report-at q: not a parameter" in capsys.readouterr().err and not out.exists()
    assert main(["kernels", str(csv), "--report", str(out), "--report-at", "p"]) == 2
    assert "--report-at 'p': expected NAME=NUMBER" in capsys.readouterr().err
    for value, message in (("0", "p must be a positive process count, got 0"),  # a page drawn at p = 0,
                           ("-4", "p must be a positive process count, got -4"),  # -4 and nan
                           ("nan", "p must be a finite number, got nan")):
        assert main(["kernels", str(csv), "--report", str(out), "--report-at", f"p={value}"]) == 2
        assert f"--report-at {message}" in capsys.readouterr().err and not out.exists()
    assert main(["kernels", str(csv), "--report", str(out), "--report-at", "p=1024"]) == 0
    assert f"report of 13 kernels written to {out}" in " ".join(capsys.readouterr().out.split())  # (wrapped)
    assert _data(out.read_text(encoding="utf-8"))["at"] == [1024.0]
    out.unlink()
    assert main(["kernels", str(csv), "--out", "-", "--report", str(out)]) == 0  # models on stdout, page too
    assert json.loads(capsys.readouterr().out)["format"] == "automodel-models" and out.exists()


def test_the_examples_of_the_report_modules_hold():
    import doctest

    from automodel.output.report import mathml, page, profile, terms

    for module in (page, mathml, terms, profile):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_report_of_a_fifo_or_a_broken_model_file_says_what_is_wrong(tmp_path, capsys, model_json):
    """``report X.json`` opened a FIFO to look at its first bytes and waited for ever; a model file with a
    byte-order mark was "not a model file", and so was any bad model file given with its runs."""
    import os

    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    assert main(["report", str(fifo), "-o", str(tmp_path / "r.html")]) == 2
    assert "is a FIFO (named pipe)" in capsys.readouterr().err
    runs = str(Path(model_json).parent / "runs.csv")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + Path(model_json).read_bytes())
    assert main(["report", str(bom), "-o", str(tmp_path / "b.html")]) == 0
    (tmp_path / "bad.json").write_text('{"format": "automodel-model", "version": 99}')
    assert main(["report", str(tmp_path / "bad.json"), runs, "-o", str(tmp_path / "x.html")]) == 2
    assert "model file version 99 is not supported" in capsys.readouterr().err


def test_the_report_of_a_model_reads_its_runs_pooled_as_the_fit_pooled_them(tmp_path, capsys):
    """``fit runs.csv --ignore host -o m.json`` then ``report m.json runs.csv``: the report refused the
    runs the model was fitted on (rows differ in 'host') until --ignore was given again."""
    from tests.conftest import make_runs

    runs = make_runs(lambda n, p, c, b: 1e-3 * n / p + 2.0, [1000.0, 2000, 4000, 8000], [1, 2, 4, 8], noise=0.0)
    runs = pd.concat([runs.assign(host="a"), runs.assign(host="b")])[["n", "p", "time", "host"]]
    runs.to_csv(tmp_path / "runs.csv", index=False)
    model = tmp_path / "m.json"
    assert main(["fit", str(tmp_path / "runs.csv"), "--ignore", "host", "-o", str(model), "--quiet",
                 "--templates", "none"]) == 0
    assert json.loads(model.read_text())["options"]["ignore"] == ["host"]
    assert main(["report", str(model), str(tmp_path / "runs.csv"), "-o", str(tmp_path / "m.html")]) == 0
    assert main(["report", str(model), str(tmp_path / "runs.csv"), "--ignore", "hostname", "-o",
                 str(tmp_path / "x.html")]) == 2  # given, --ignore is read as given
    assert "column 'hostname': no such column to pool over" in capsys.readouterr().err
