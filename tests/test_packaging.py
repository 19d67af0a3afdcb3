"""The wheel carries what an installed automodel needs: every module, the search spaces, the demo data, the
reports' scripts and styles."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what the wheel is built from; copied so that a stale ``build/lib`` of the checkout (setuptools
#: packs whatever it finds there) or another build running in the checkout cannot leak into the test
BUILD_INPUTS = ("pyproject.toml", "README.md", "automodel")


def source_files(pattern: str) -> set[str]:
    """Paths (relative to the checkout) of the files of ``automodel/`` matching ``pattern``."""
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / "automodel").glob(pattern)
            if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The member names of a wheel built (``pip wheel --no-deps``) from a clean copy of the checkout."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
                           str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"pip wheel failed:\n{done.stderr}"
    (wheel,) = out.glob("automodel_hpc-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_holds_exactly_the_modules_of_the_source_tree(wheel_names: set[str]) -> None:
    modules = source_files("**/*.py")
    assert {"automodel/__init__.py", "automodel/cli/demo.py", "automodel/space/config.py"} <= modules
    assert {n for n in wheel_names if n.endswith(".py")} == modules


def test_wheel_holds_the_search_spaces_and_the_demo_data(wheel_names: set[str]) -> None:
    data = source_files("spaces/*.toml") | source_files("demo/*") | source_files("output/report/static/*")
    assert {"automodel/spaces/default.toml", "automodel/spaces/pmnf.toml", "automodel/demo/cg_fast.csv",
            "automodel/demo/README.md", "automodel/output/report/static/profile.js", "automodel/output/report/static/report.css"
            } <= data
    assert data <= wheel_names
    assert not [n for n in wheel_names if n.startswith(("tests/", "benchmarks/", "examples/"))]


def test_shipped_spaces_and_demo_data_are_found_through_the_package() -> None:
    from automodel.cli.demo import DEMO_DATA
    from automodel.space.config import SPACES_DIR, space_path

    assert DEMO_DATA.is_file() and DEMO_DATA.parent.parent == SPACES_DIR.parent
    assert space_path("pmnf") == SPACES_DIR / "pmnf.toml"


def test_every_install_hint_names_the_distribution_of_this_project() -> None:
    """``automodel`` on the package index is an unrelated project: no hint may install it."""
    import re
    import tomllib

    from automodel.errors import DISTRIBUTION, install_hint

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == DISTRIBUTION
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    files = [p for p in ROOT.rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".toml", ".sh", ""}
             and not {".git", "__pycache__", ".extrap-venv", "out"} & set(p.relative_to(ROOT).parts)]
    hints = []
    for path in files:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hints += [(path.name, m.group(1)) for m in re.finditer(r"pip install\s+['\"]?([\w.-]+)\[", text)]
    assert hints and all(name == DISTRIBUTION for _, name in hints), [h for h in hints if h[1] != DISTRIBUTION]
    assert install_hint("cube") == f"pip install '{DISTRIBUTION}[cube]'" and "cube" in extras
    from automodel.data.readers.cube import INSTALL
    from automodel.data.readers.tables import PARQUET_INSTALL
    from automodel.search.workers import DASK_INSTALL

    assert {INSTALL, PARQUET_INSTALL, DASK_INSTALL} == {install_hint(e) for e in ("cube", "parquet", "dask")}
    assert not re.search(r"automodel-\*\.whl", (ROOT / ".ci" / "run").read_text())
