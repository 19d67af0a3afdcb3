"""Designed experiments on SMPI simulated on the fly: the adaptive campaign runs SimGrid for each configuration it asks for.

Run ``python -m benchmarks.adaptive_smpi [--program nas_ep gemm] [--platform fast slow] [--out DIR]``.

Programs written by others (SimGrid's ``examples/smpi``: NAS EP, with the size knob of
``benchmarks/smpi_others/patch_sizes.py``, and the CodeVault gemm) are extracted from the SimGrid mirror at
the commit of ``benchmarks/smpi_others/build_and_run.sh`` and built with ``smpicc`` (Debian's
``libsimgrid-dev``). Each (program, platform: fast, slow, torus) is a case: the sizes and process counts of
``benchmarks/smpi_others/sweep.py``, the target its largest ``n`` at its largest ``p``, and every other
configuration the program can run may be run. No time is known in advance: every design asks the runner
(:func:`automodel.runner.run_campaign`, one CSV per case, resumed: a configuration already simulated is
read back, never simulated twice) and ``smpirun`` simulates it (the simulated time, ``Simulated time: T
seconds``). The NAS EP and gemm compute bursts are timed on this machine and replayed at the platform's
speed, so a configuration simulated twice would differ by this machine's noise; the designs of a case share
the simulations.

Designs, scored as in :mod:`benchmarks.adaptive` (the error at the target against the simulated truth, the
band's width, whether it holds the truth, core-hours):

adaptive
    :func:`automodel.runner.adaptive.adaptive` from the seed (3 smallest n x 4 smallest p), 3 runs a step,
    until the 90 % band is within +-15 % on two successive fits (:data:`benchmarks.adaptive.UNTIL`) or
    :data:`MAX_STEPS` steps;
grid
    the ladder ``automodel run`` would be given (:func:`benchmarks.adaptive.ladder`), simulated rung by rung up
    to the first rung that reaches +-15 % beyond the adaptive's spend (or the whole grid);
random
    :data:`RANDOM_DESIGNS` random orders of the allowed configurations within the adaptive's spend (each new
    configuration simulated, so its cost is known only once run: a configuration that would overshoot the
    spend is dropped afterwards).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

import automodel
from automodel.runner import Campaign, run_campaign
from automodel.runner.adaptive import adaptive, core_hours, seed_design
from benchmarks.adaptive import (LEVEL, PER_STEP, UNTIL, campaign_score, case_lines, grid_designs, random_designs,
                                 summary_lines)

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "out" / "adaptive_smpi"
HERE = ROOT / "benchmarks" / "smpi_others"
SIMGRID_MIRROR = Path("/work/.mirror/simgrid+simgrid/repo")
SIMGRID_COMMIT = "12a63c78cdaa56b78836c95c6a18484f367dca38"
MAX_STEPS = 12
RANDOM_DESIGNS = 3
PROCS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
SMPIRUN = ("smpirun --log=root.thres:critical --log=smpi.thres:info --cfg=smpi/display-timing:yes "
           "--cfg=smpi/privatization:1 --cfg=smpi/host-speed:1Gf")
TIME_REGEX = r"Simulated time: (\S+) seconds"
PLATFORMS = {"fast": ROOT / "examples/platforms/fast_cluster.xml", "slow": ROOT / "examples/platforms/slow_cluster.xml",
             "torus": HERE / "torus_cluster.xml"}
#: name: sizes, the command (placeholders {n} {p}, PLATFORM), which (n, p) the program can run
PROGRAMS: dict[str, dict[str, Any]] = {
    "nas_ep": {"sizes": [2 ** m for m in range(20, 26)], "command": "./ep_run.sh {n} {p} PLATFORM",
               "feasible": lambda n, p: n // 2 ** 16 >= p},
    "gemm": {"sizes": [128, 192, 256, 320, 512, 640], "command": "./gemm_run.sh {n} {p} PLATFORM",
             "feasible": lambda n, p: True},
}
#: the wrappers the runner calls (SMPI prints the simulated time on standard error: both are read)
SCRIPTS = {"ep_run.sh": f"""#!/bin/sh
# ep_run.sh N P PLATFORM: NAS EP generating N = 2^m pairs on P processes under SMPI
m=$(awk -v n="$1" 'BEGIN {{ printf "%d", log(n) / log(2) + 0.5 }}')
NPB_EP_M=$m exec {SMPIRUN} -np "$2" -platform "$3" ./ep "$2" S 2>&1
""", "gemm_run.sh": f"""#!/bin/sh
# gemm_run.sh N P PLATFORM: gemm of N x N matrices on P processes under SMPI
exec {SMPIRUN} -np "$2" -platform "$3" ./gemm "$1" native 2>&1
"""}


def build(bindir: Path) -> Path:
    """Extract NAS EP and gemm from the SimGrid mirror, patch EP's size knob, build them with ``smpicc -O2``."""
    bindir.mkdir(parents=True, exist_ok=True)
    for name, text in SCRIPTS.items():
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    if (bindir / "ep").exists() and (bindir / "gemm").exists():
        return bindir
    git = SIMGRID_MIRROR / ".git" if (SIMGRID_MIRROR / ".git").is_dir() else SIMGRID_MIRROR
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp)
        for path in ("NAS/ep.c", "NAS/is.c", "NAS/nas_common.c", "NAS/nas_common.h", "gemm/gemm.c"):
            text = subprocess.run(["git", f"--git-dir={git}", "show", f"{SIMGRID_COMMIT}:examples/smpi/{path}"],
                                  check=True, capture_output=True).stdout
            (src / Path(path).name).write_bytes(text)
        subprocess.run(["python3", str(HERE / "patch_sizes.py"), str(src)], check=True)
        subprocess.run(["smpicc", "-O2", "-o", str(bindir / "ep"), "ep.c", "nas_common.c", "-lm"], cwd=src, check=True)
        subprocess.run(["smpicc", "-O2", "-o", str(bindir / "gemm"), "gemm.c"], cwd=src, check=True)
    return bindir


class Simulator:
    """Simulate configurations of one (program, platform) on demand through the runner, resumably.

    Parameters
    ----------
    command : str
        The command template (placeholders ``{n}``, ``{p}``) that prints ``Simulated time: T seconds``.
    bindir : Path
        Where the runs start (:func:`build` put the programs there).
    csv : Path
        The runs of this case (appended to; a configuration already in it is read back).
    """

    def __init__(self, command: str, bindir: Path, csv: Path) -> None:
        self.command, self.bindir, self.csv, self.simulated = command, bindir, csv, 0

    def __call__(self, configs: pd.DataFrame) -> pd.DataFrame:
        """The runs of ``configs`` (columns n, p): each simulated unless already in the CSV; failed ones left out."""
        for n, p in configs[["n", "p"]].itertuples(index=False):
            campaign = Campaign(command=self.command, axes={"n": [int(n)], "p": [int(p)]}, timeout=300,
                                time_regex=TIME_REGEX, sample_cpu=False, cwd=str(self.bindir))
            self.simulated += run_campaign(campaign, self.csv, progress=False)["ran"]
        runs = pd.read_csv(self.csv)
        runs = runs[runs["status"] == 0].astype({"n": float, "p": float}).groupby(["n", "p"], as_index=False)["time"].first()
        return configs[["n", "p"]].astype(float).merge(runs, on=["n", "p"])


def case(program: str, platform: str, bindir: Path, out: Path) -> dict[str, Any]:
    """One (program, platform): the adaptive campaign, the grid ladder and random designs, scored at the target."""
    t0 = time.perf_counter()
    feasible = PROGRAMS[program]["feasible"]
    sizes = PROGRAMS[program]["sizes"]
    configs = pd.DataFrame([(float(n), float(p)) for n in sizes for p in PROCS if feasible(n, p)], columns=["n", "p"])
    target = {"n": float(max(sizes)), "p": float(max(PROCS))}
    allowed = configs[~((configs["n"] == target["n"]) & (configs["p"] == target["p"]))].reset_index(drop=True)
    command = PROGRAMS[program]["command"].replace("PLATFORM", str(PLATFORMS[platform]))
    sim = Simulator(command, bindir, out / f"{program}_{platform}.csv")
    record: dict[str, Any] = {"suite": "smpi-live", "name": f"{program}_{platform}", "scenario": "all",
                              "target": target, "allowed": len(allowed)}
    seed = sim(seed_design({"n": allowed["n"].unique(), "p": allowed["p"].unique()}).merge(allowed, on=["n", "p"]))
    try:
        run = adaptive(seed, sim, target, until=UNTIL, count=PER_STEP, max_p=target["p"], configurations=allowed,
                       level=LEVEL, max_steps=MAX_STEPS)
    except automodel.AutomodelError as exc:  # e.g. no run of the seed gave a time
        return {**record, "skipped": f"adaptive: {exc}"}
    record["adaptive_simulated"] = sim.simulated
    truth = float(sim(pd.DataFrame([target]))["time"].iloc[0])
    record["truth"] = truth
    record["adaptive"] = campaign_score(run, target, truth)
    spent = record["adaptive"]["core_hours"]
    record.update(grid_designs(allowed, target, truth, spent, sim))
    record["random"] = random_designs(seed, allowed, spent, target, truth, measure=sim, designs=RANDOM_DESIGNS,
                                      enough=0.98)  # each new configuration is a simulation: stop when spent
    record["full_core_hours"] = core_hours(sim(allowed))  # the whole grid, simulated (shares of it are reported)
    record["simulated"] = sim.simulated
    record["seconds"] = time.perf_counter() - t0
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.adaptive_smpi", description=__doc__.splitlines()[0])
    ap.add_argument("--program", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    ap.add_argument("--platform", nargs="+", default=list(PLATFORMS), choices=list(PLATFORMS))
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="runs, records and programs (resumed)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bindir = build(args.out / "bin")
    t0 = time.perf_counter()
    records = [case(program, platform, bindir, args.out) for program in args.program for platform in args.platform]
    (args.out / "results.json").write_text(json.dumps(records, indent=1, default=float))
    print("\n".join(summary_lines(records) + case_lines(records)))
    print(f"\n{len(records)} cases in {time.perf_counter() - t0:.0f} s, "
          f"{sum(r['simulated'] for r in records)} simulations; records in {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
