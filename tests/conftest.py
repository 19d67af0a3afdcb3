"""Shared fixtures: synthetic runs of known formulas with a little noise, a fitted model, a small
least-squares problem."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

#: what automodel.text.printing learns about terms is kept in a folder of this test session, not the user's
os.environ["AUTOMODEL_CACHE_DIR"] = tempfile.mkdtemp(prefix="automodel-tests-cache-")
atexit.register(shutil.rmtree, os.environ["AUTOMODEL_CACHE_DIR"], ignore_errors=True)


def make_runs(formula, ns, ps, reps=1, noise=0.02, seed=0, load=False):
    """One row per (n, p, repetition) with time = formula(n, p, cpu, bw) * (1 + noise * N(0, 1))."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in ps:
        for n in ns:
            for _ in range(reps):
                cpu = rng.uniform(0.4, 1.0) if load else 1.0
                bw = rng.uniform(0.4, 1.0) if load else 1.0
                t = formula(n, p, cpu, bw) * (1 + noise * rng.standard_normal())
                row = {"n": n, "p": p, "time": t}
                if load:
                    row.update(cpu=cpu, bw=bw)
                rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture
def runs_loaded():
    """c n^3/(p cpu) + d n^2 log2 p / bw + e on p in 1..8, n in 1000..8000 (issue 2's example)."""
    return make_runs(lambda n, p, c, b: 2e-10 * n ** 3 / (p * c) + 3e-8 * n ** 2 * np.log2(p) / b + 0.5,
                     np.linspace(1000, 8000, 8), [1, 2, 4, 8], reps=2, noise=0.02, seed=1, load=True)


@pytest.fixture(scope="session")
def fitted():
    """automodel.fit on loaded runs with renamed columns (size, secs), and the runs (one fit per worker: no
    test changes them)."""
    import automodel

    runs = make_runs(lambda n, p, c, b: 2e-10 * n ** 3 / (p * c) + 3e-8 * n ** 2 * np.log2(p) / b + 0.5,
                     np.linspace(1000, 8000, 6), [1, 2, 4, 8], noise=0.02, seed=2, load=True)
    return automodel.fit(runs.rename(columns={"n": "size", "time": "secs"}), time="secs", n="size",
                         progress=False), runs


@pytest.fixture
def problem():
    """30 rows of 9 positive columns; y uses three of them, one with a negative coefficient."""
    rng = np.random.default_rng(3)
    A = rng.uniform(0.1, 2.0, size=(30, 9))
    y = A[:, [0, 3]] @ [2.0, 0.5] - 0.3 * A[:, 5] + 0.01 * rng.standard_normal(30)
    return A, y


#: ``app N P [print|sleep]``: takes 0.002*N/P + 0.01 s, prints comp= and time=; N=666 fails, N=999 hangs.
FAKE_APP = textwrap.dedent(
    """
    import sys, time
    n, p = float(sys.argv[1]), float(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "sleep"
    if n == 666:
        sys.stderr.write("line one\\nboom: bad n\\n")
        sys.exit(3)
    if n == 999:
        time.sleep(30)
    t = 0.002 * n / p + 0.01
    if mode == "sleep":
        time.sleep(t)
    print(f"comp={0.002 * n / p:.6f} time={t:.6f}")
    """
)


@pytest.fixture()
def app(tmp_path: Path) -> str:
    """The command that starts :data:`FAKE_APP` (a template prefix: add ``{n} {p}``)."""
    path = tmp_path / "fake_app.py"
    path.write_text(FAKE_APP)
    return f"{sys.executable} {path}"


@pytest.fixture(scope="session")
def runs_csv(tmp_path_factory):
    """A CSV of runs of 1e-9 n^3/p + 2e-7 n^2 log2 p + 0.1 (7 n x 4 p x 2 repetitions)."""
    path = tmp_path_factory.mktemp("cli") / "runs.csv"
    make_runs(lambda n, p, c, b: 1e-9 * n ** 3 / p + 2e-7 * n ** 2 * np.log2(p) + 0.1,
              np.linspace(200, 1400, 7), [1, 2, 4, 8], reps=2, noise=0.02).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def model_json(runs_csv):
    """The model automodel fit writes for :func:`runs_csv` (one fit per worker: no test changes the files)."""
    from automodel.cli import main

    out = runs_csv.parent / "model.json"
    assert main(["fit", str(runs_csv), "--quiet", "-o", str(out)]) == 0
    return out


#: the store tests' PostgreSQL server and ``store_url``, a store on every backend (tests/postgres_server.py)
pytest_plugins = ["postgres_server"]

#: the files of few but long tests, longest first (seconds of a two-worker run on a loaded machine: 190,
#: 140, 130, 100, 60, 55, 50, 50, 45, 40, 38, 35, 34, 33, 19). pytest-xdist's ``--dist loadfile`` sends
#: the files with the most tests first, which put these last: one worker ran the README's blocks and the
#: property tests alone for the last minutes while the other stood idle. Sent first, they leave the many
#: short files to even out the end.
LONGEST_FILES = ("test_properties.py", "test_readme.py", "test_store_conformance.py", "test_kernels_fit_many.py",
                 "test_benchmarks_runner.py", "test_sklearn.py", "test_scale_out.py", "test_hostile_inputs.py",
                 "test_hostile_names.py", "test_text_printing.py", "test_output_report.py",
                 "test_templates_kohashi.py", "test_store_observe.py", "test_cli_width.py",
                 "test_output_report_browser.py")


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order of the items below
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    """The files of :data:`LONGEST_FILES` first, in that order, then the others by number of tests (most
    first, as pytest-xdist orders them); each file's tests stay together and in their order."""
    first, count = {}, {}
    for at, item in enumerate(items):
        first.setdefault(item.path, at)
        count[item.path] = count.get(item.path, 0) + 1
    rank = {name: at for at, name in enumerate(LONGEST_FILES)}

    def key(item):
        return rank.get(item.path.name, len(rank)), -count[item.path], first[item.path]

    items.sort(key=key)
