"""Build and run the bundled workloads through the runner (the SMPI ones need SimGrid's smpicc)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from automodel.runner import Campaign, iter_rows, run_campaign

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WORKLOADS = EXAMPLES / "workloads"
PLATFORMS = EXAMPLES / "platforms"
needs_smpi = pytest.mark.skipif(
    shutil.which("smpicc") is None or shutil.which("smpirun") is None,
    reason="SimGrid SMPI not installed (apt-get install -y libsimgrid-dev gives smpicc, smpirun)",
)
SMPIRUN = "smpirun --cfg=smpi/simulate-computation:no --log=root.thres:critical"
CAPTURES = {"comp": r"comp=(\S+)", "comm": r"comm=(\S+)", "cpu": r"cpu=(\S+)", "bw": r"bw=(\S+)"}


def _build(name: str, out: Path) -> Path:
    binary = out / name
    subprocess.run(["smpicc", "-O2", "-o", str(binary), str(WORKLOADS / f"{name}.c"), "-lm"],
                   check=True, capture_output=True, timeout=120)
    return binary


@needs_smpi
def test_cg_under_smpi_on_fast_cluster(tmp_path: Path) -> None:
    binary = _build("cg", tmp_path)
    campaign = Campaign(
        command=f"{SMPIRUN} -np {{p}} -platform {PLATFORMS / 'fast_cluster.xml'} {binary} {{n}} 20",
        axes={"n": [20000, 80000], "p": [1, 4]}, time_regex=r"time=(\S+)", captures=CAPTURES,
        sample_cpu=False, timeout=120,
    )
    counts = run_campaign(campaign, tmp_path / "cg.csv", progress=False)
    rows = {(int(r["n"]), int(r["p"])): r for r in iter_rows(tmp_path / "cg.csv")}
    assert counts["failed"] == 0, [r["error"] for r in rows.values()]
    comp = {k: float(r["comp"]) for k, r in rows.items()}
    # modelled computation: 13 flops per unknown and iteration on 4 Gflop/s hosts
    assert comp[(80000, 1)] == pytest.approx(13 * 80000 * 20 / 4e9, rel=0.05)
    assert comp[(80000, 1)] == pytest.approx(4 * comp[(20000, 1)], rel=0.05)
    assert comp[(80000, 4)] == pytest.approx(comp[(80000, 1)] / 4, rel=0.05)
    assert float(rows[(20000, 1)]["comm"]) < 1e-6 < float(rows[(20000, 4)]["comm"])
    for r in rows.values():
        assert float(r["time"]) == pytest.approx(float(r["comp"]) + float(r["comm"]), rel=1e-3)
        assert float(r["cpu"]) == 1.0 and float(r["bw"]) == 1.0  # dedicated platform


@needs_smpi
def test_kmeans_sees_load_traces(tmp_path: Path) -> None:
    binary = _build("kmeans", tmp_path)
    campaign = Campaign(
        command=f"{SMPIRUN} -np {{p}} -platform {PLATFORMS / 'loaded_cluster.xml'} {binary} {{n}} {{k}} 5 "
        "start={index}",
        axes={"n": [20000], "p": [2], "k": [4]}, reps=3, time_regex=r"time=(\S+)", captures=CAPTURES,
        sample_cpu=False, timeout=120,
    )
    run_campaign(campaign, tmp_path / "km.csv", progress=False)
    rows = list(iter_rows(tmp_path / "km.csv"))
    assert [r["status"] for r in rows] == ["0"] * 3
    cpu = [float(r["cpu"]) for r in rows]
    assert all(0 < c <= 1 for c in cpu) and len(set(cpu)) > 1  # different start times, different load
    assert all(0 < float(r["bw"]) <= 1 for r in rows)


def test_numpy_matmul_runs_without_simgrid(tmp_path: Path) -> None:
    campaign = Campaign(
        command=f"{sys.executable} {WORKLOADS / 'numpy_matmul.py'} {{n}} {{p}}", axes={"n": [40, 80], "p": [1]},
        time_regex=r"time=(\S+)", captures={"comp": r"comp=(\S+)"}, sample_cpu=False, timeout=60,
    )
    assert run_campaign(campaign, tmp_path / "np.csv", progress=False)["failed"] == 0
    for r in iter_rows(tmp_path / "np.csv"):
        assert 0 < float(r["comp"]) <= float(r["time"])
