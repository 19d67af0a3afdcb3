"""The wheel carries what an installed automodel needs: every module, the search spaces, the demo data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {done.stderr.strip().splitlines()[-1:]}")
    (wheel,) = out.glob("automodel-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_has_every_module_and_the_package_data(wheel_names: set[str]) -> None:
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "automodel").rglob("*.py")}
    assert sources - wheel_names == set()
    data = {p.relative_to(ROOT).as_posix() for pattern in ("spaces/*.toml", "demo/*.csv")
            for p in (ROOT / "automodel").glob(pattern)}
    assert {"automodel/spaces/default.toml", "automodel/spaces/pmnf.toml", "automodel/demo/cg_fast.csv"} <= data
    assert data - wheel_names == set()
    assert not [n for n in wheel_names if n.startswith(("tests/", "benchmarks/", "examples/"))]


def test_shipped_spaces_and_demo_data_are_found_through_the_package() -> None:
    from automodel.cli.demo import DEMO_DATA
    from automodel.space.config import SPACES_DIR, space_path

    assert DEMO_DATA.is_file() and DEMO_DATA.parent.parent == SPACES_DIR.parent
    assert space_path("pmnf") == SPACES_DIR / "pmnf.toml"
