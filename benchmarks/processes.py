"""Whole-process CPU of the commands users run most, this tree against a baseline revision, paired.

Run ``python -m benchmarks.processes [--baseline REV] [--repeats N]``. The baseline revision is
unpacked with ``git archive`` into a temporary folder; every command then runs ``N`` times in a new
process for each tree, the two trees in turn (A B A B ...), after one warm-up run each. The CPU time of
a run is its user + system time as the operating system accounts it (``resource.getrusage`` of the
finished children). Reported: the median of each tree and the median of the pairwise ratios
baseline / this tree (pairing keeps a ratio meaningful while the machine's speed drifts).

Byte code is cached as an installed package caches it (``PYTHONPYCACHEPREFIX``, one folder per tree,
filled by the warm-up), even where ``PYTHONDONTWRITEBYTECODE`` is set: otherwise every run would
compile automodel's sources again, a cost no installed copy pays. So is what :mod:`automodel.text.printing`
learns about terms (``AUTOMODEL_CACHE_DIR``, the same folder): the warm-up is the first run of a user.

The inputs (issue 35): a model file fitted on the bundled ``cg_fast.csv`` and two rows to predict; the
4-parameter, 64-run data of :func:`benchmarks.speed.fit_seconds`; a store holding 32 runs of
``cg_fast.csv`` (copied afresh before every run) and the 33rd run to observe into it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: the revision before issue 35
BASELINE = "a4cefdc"
ROOT = Path(__file__).resolve().parents[1]
#: command name -> (arguments after ``python -m automodel``, the issue's target in CPU seconds)
COMMANDS: dict[str, tuple[list[str], float]] = {
    "predict": (["predict", "{dir}/model.json", "{dir}/rows.csv"], 0.3),
    "fit": (["fit", "{dir}/four.csv", "--quiet"], 0.8),
    "observe": (["observe", "--store", "{dir}/run.db", "--app", "cg", "{dir}/one.csv"], 0.4),
}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def unpack(revision: str, into: Path) -> Path:
    """The files of ``revision`` of this repository, in ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def prepare(folder: Path) -> None:
    """The inputs of :data:`COMMANDS` in ``folder``, made with this tree."""
    import pandas as pd

    from benchmarks.speed import _four_parameter_runs

    demo = pd.read_csv(ROOT / "automodel" / "demo" / "cg_fast.csv")
    demo.to_csv(folder / "cg.csv", index=False)
    demo.iloc[:32].to_csv(folder / "base.csv", index=False)
    demo.iloc[32:33].to_csv(folder / "one.csv", index=False)
    pd.DataFrame({"n": [400000, 800000], "p": [16, 32]}).to_csv(folder / "rows.csv", index=False)
    _four_parameter_runs().to_csv(folder / "four.csv", index=False)
    tool = [sys.executable, "-m", "automodel"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AUTOMODEL_CACHE_DIR": "off"}
    subprocess.run(tool + ["fit", str(folder / "cg.csv"), "--quiet", "-o", str(folder / "model.json")],
                   env=env, check=True, capture_output=True)
    subprocess.run(tool + ["observe", "--store", str(folder / "base.db"), "--app", "cg", str(folder / "base.csv")],
                   env=env, check=True, capture_output=True)


def run_once(tree: Path, arguments: list[str], folder: Path, cache: Path) -> float:
    """CPU seconds of one ``python -m automodel ARGUMENTS`` with the code of ``tree``."""
    shutil.copy(folder / "base.db", folder / "run.db")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(cache), AUTOMODEL_CACHE_DIR=str(cache))
    command = [sys.executable, "-m", "automodel", *[a.format(dir=folder) for a in arguments]]
    before = _children_cpu()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=folder)
    seconds = _children_cpu() - before
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}")
    return seconds


def measure(baseline: Path, repeats: int, folder: Path) -> list[dict]:
    """For every command: the CPU seconds of each tree and the pairwise ratios, ``repeats`` pairs."""
    trees = {"baseline": baseline, "this tree": ROOT}
    caches = {name: folder / f"pycache-{i}" for i, name in enumerate(trees)}
    rows = []
    for name, (arguments, target) in COMMANDS.items():
        for tree in trees:  # warm-up: fills the byte-code cache, the file system cache
            run_once(trees[tree], arguments, folder, caches[tree])
        times: dict[str, list[float]] = {tree: [] for tree in trees}
        for _ in range(repeats):
            for tree in trees:
                times[tree].append(run_once(trees[tree], arguments, folder, caches[tree]))
        ratios = [b / a for b, a in zip(times["baseline"], times["this tree"])]
        rows.append({"command": name, "baseline": statistics.median(times["baseline"]),
                     "this tree": statistics.median(times["this tree"]), "ratio": statistics.median(ratios),
                     "target": target, "runs": repeats})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help=f"the revision to compare with (default {BASELINE})")
    ap.add_argument("--repeats", type=int, default=5, help="pairs of runs per command (default 5)")
    args = ap.parse_args(argv)
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="automodel-processes-") as tmp:
        folder = Path(tmp)
        prepare(folder)
        rows = measure(unpack(args.baseline, folder / "baseline"), args.repeats, folder)
    print(f"whole-process CPU seconds, median of {args.repeats} paired runs; baseline {args.baseline}, "
          f"this tree {revision or '?'} (with its uncommitted changes)")
    print(f"{'command':<9} {'baseline':>9} {'this tree':>10} {'ratio':>7} {'target':>7}  met")
    for r in rows:
        print(f"{r['command']:<9} {r['baseline']:>9.3f} {r['this tree']:>10.3f} {r['ratio']:>6.2f}x "
              f"{r['target']:>7.2f}  {'yes' if r['this tree'] <= r['target'] else 'no'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
