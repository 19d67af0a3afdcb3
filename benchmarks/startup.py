"""Command-line start-up time: ``automodel --help`` and ``--version`` against ``extrap --version``.

Run ``python -m benchmarks.startup [--repeats N]``. Each command runs in a new process; the best of
``N`` wall times is reported (the least disturbed by other load on the machine). ``automodel`` is the
console script installed beside this Python (not a shell shim such as pyenv's, which adds its own
start-up); ``extrap`` is the one in Extra-P's virtual environment (``benchmarks.extrap_tool``), never
installed here.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.extrap_tool import time_cli

TARGET_SECONDS = 0.3


def automodel_command() -> list[str]:
    """The ``automodel`` console script of this Python, else the one on PATH, else ``python -m automodel``."""
    script = Path(sys.executable).parent / "automodel"
    if script.exists():
        return [str(script)]
    found = shutil.which("automodel")
    return [found] if found else [sys.executable, "-m", "automodel"]


def _best(command: list[str], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def startup_times(repeats: int = 5) -> dict:
    """Best-of-``repeats`` wall times of the start-up commands, each in a new process.

    Returns
    -------
    dict
        ``automodel_help_seconds``, ``automodel_version_seconds``, ``python_seconds`` (a bare
        ``python -c pass``, the floor), ``extrap_version_seconds`` (NaN when Extra-P is unavailable),
        ``extrap_status`` (``"ok"`` or why not), ``ratio`` (``extrap_version_seconds /
        automodel_help_seconds``), ``repeats``, ``automodel_command``, ``target`` and ``target_met``
        (``"yes"``/``"no"``: ``automodel --help`` and ``--version`` under ``TARGET_SECONDS``).
    """
    command = automodel_command()
    out: dict = {"repeats": repeats, "automodel_command": " ".join(command),
                 "automodel_help_seconds": _best(command + ["--help"], repeats),
                 "automodel_version_seconds": _best(command + ["--version"], repeats),
                 "python_seconds": _best([sys.executable, "-c", "pass"], repeats)}
    timings = [time_cli(["--version"]) for _ in range(repeats)]
    ok = [t.seconds for t in timings if t.status == "ok"]
    out["extrap_status"] = "ok" if ok else timings[0].status
    out["extrap_version_seconds"] = min(ok) if ok else float("nan")
    out["ratio"] = out["extrap_version_seconds"] / out["automodel_help_seconds"]
    out["target"] = f"automodel --help and --version < {TARGET_SECONDS:g} s"
    slowest = max(out["automodel_help_seconds"], out["automodel_version_seconds"])
    out["target_met"] = "yes" if slowest < TARGET_SECONDS else "no"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per command; the best is kept (default 5)")
    r = startup_times(ap.parse_args(argv).repeats)
    print(f"best of {r['repeats']} wall times, new process each ({r['automodel_command']})")
    print(f"  automodel --help     {r['automodel_help_seconds']:.3f} s")
    print(f"  automodel --version  {r['automodel_version_seconds']:.3f} s")
    print(f"  python -c pass       {r['python_seconds']:.3f} s (floor)")
    extrap = (f"{r['extrap_version_seconds']:.3f} s" if r["extrap_status"] == "ok" else r["extrap_status"])
    print(f"  extrap --version     {extrap}")
    if r["extrap_status"] == "ok":
        print(f"  extrap --version / automodel --help: {r['ratio']:.1f}x")
    print(f"target: {r['target']}: {r['target_met']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
