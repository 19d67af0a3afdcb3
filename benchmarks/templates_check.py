"""Print the extrapolation errors of the seeded templates (Hockney, Kohashi, ...) on the shared datasets.

Usage: ``python benchmarks/templates_check.py [--datasets DIR] [--only hockney|kohashi]``. The datasets are
read in place (never copied); splits follow the "Canonical extrapolation tasks" of the datasets README.
"""

from __future__ import annotations

import argparse
import time as clock
from pathlib import Path

import numpy as np
import pandas as pd

from automodel.templates.hockney import HOCKNEY, HOCKNEY_COLLECTIVE
from automodel.templates.kohashi import KOHASHI

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def _summary(errors: list[float]) -> str:
    e = np.asarray(errors)
    return f"rows {e.size:4d}  median {np.median(e):7.3f}  mean {np.mean(e):7.3f}  worst {np.max(e):8.3f}"


def _rel(pred: np.ndarray, actual: np.ndarray) -> list[float]:
    return list(np.abs(pred - actual) / actual)


def _osu(path: Path, keys: list[str], split: int, label: str) -> None:
    raw = pd.read_csv(path)
    raw = raw[(raw["collective"] == "bcast") | (raw["collective"] == "reduce")]
    raw = raw[raw["msg_bytes"] > 0]
    frame = (raw.groupby(keys + ["P", "msg_bytes"], as_index=False)["time"].median()
             .rename(columns={"P": "p", "msg_bytes": "n"}))
    frame["time"] = frame["time"] * 1e-6
    for bps in (None, "paper", "search"):
        errs: list[float] = []
        chosen: dict[str, int] = {}
        for _, g in frame.groupby(keys):
            train, test = g[g["p"] <= 32], g[g["p"] >= split]
            if test.empty or train["p"].nunique() < 2:
                continue
            model = HOCKNEY_COLLECTIVE.fit(train.reset_index(drop=True), breakpoints=bps)
            chosen[model.schedule] = chosen.get(model.schedule, 0) + 1
            errs += _rel(model.predict(test), test["time"].to_numpy())
        print(f"  {label} breakpoints={bps!s:7}: {_summary(errs)}  schedules {chosen}")


def hockney(root: Path) -> None:
    print("osu-p (Hockney collective, schedule auto by standard error; train P <= 32)")
    _osu(root / "osu_coll_orfeo_tanjaderin.csv", ["collective", "algorithm"], 64, "tanjaderin test P>=64")
    _osu(root / "osu_bcast_orfeo_mzampar.csv", ["collective", "algorithm", "allocation"], 33,
         "mzampar test P>32 (no P>=64)")
    raw = pd.read_csv(root / "mpi_contention_iitk.csv")
    frame = (raw.groupby(["collective", "contention", "msg_bytes"], as_index=False)["time"].median()
             .rename(columns={"msg_bytes": "n"}))
    frame["p"] = 8.0  # README: host list had 8 hosts; process count not recorded
    schedules = {"bcast": "auto", "allgather": "auto", "alltoall": "pairwise_alltoall"}
    print("contention-m (train msg_bytes <= 256 KiB, test larger; p taken as 8)")
    for bps in (None, "paper", "search"):
        for how in ("p2p", "collective"):
            errs: list[float] = []
            for (coll, _), g in frame.groupby(["collective", "contention"]):
                train, test = g[g["n"] <= 262144].reset_index(drop=True), g[g["n"] > 262144]
                if how == "p2p":
                    model = HOCKNEY.fit(train, breakpoints=bps)
                else:
                    model = HOCKNEY_COLLECTIVE.fit(train, schedule=schedules[coll], breakpoints=bps)
                errs += _rel(model.predict(test), test["time"].to_numpy())
            print(f"  {how:10} breakpoints={bps!s:7}: {_summary(errs)}")


def kohashi(root: Path) -> None:
    raw = pd.read_csv(root / "mandelbrot_orfeo.csv")
    raw = raw[(raw["source"] == "tanjaderin") & (raw["study"] == "mpi_strong")]
    frame = raw.groupby("P", as_index=False)["time"].median().rename(columns={"P": "p"})
    train, test = frame[frame["p"] <= 64].reset_index(drop=True), frame[frame["p"] > 64]
    best_measured = float(frame.loc[frame["time"].idxmin(), "p"])
    print(f"mandelbrot-strong (train P <= 64: {len(train)} rows, test P > 64: {len(test)} rows; "
          f"measured best P {best_measured:g})")
    grid = np.arange(1, 257, dtype=float)
    for n_terms in (3, 4, 5, 6):
        start = clock.perf_counter()
        model = KOHASHI.fit(train, n_terms=n_terms, bayesian=True, n_steps=20000, seed=1)
        took = clock.perf_counter() - start
        point = _rel(model.predict(test), test["time"].to_numpy())
        med = _rel(model.predict_median(test), test["time"].to_numpy())
        lo, hi = model.predict_interval(test)
        inside = np.mean((test["time"].to_numpy() >= lo) & (test["time"].to_numpy() <= hi))
        bp = model.best_p_interval(grid)
        print(f"  {n_terms}-term point : {_summary(point)}  best P {model.best_p(grid):g}")
        print(f"  {n_terms}-term median: {_summary(med)}  best P median {bp[0]:g} HDI [{bp[1]:g}, {bp[2]:g}]"
              f"  HDI covers {inside:.2f} of test rows  ({took:.1f} s)")
    start = clock.perf_counter()
    model = KOHASHI.fit(train, n_terms=3, bayesian=True, n_steps=100_000, seed=1)
    print(f"  REMC wall time, 10^5 steps x 4 replicas, 3-term, {len(train)} rows: "
          f"{clock.perf_counter() - start:.2f} s (sampler {model.diagnostics['remc_seconds']:.2f} s)")
    raw = pd.read_csv(root / "extrap_mpi_collectives.csv").rename(columns={"P": "p"})
    print("extrap-mpi (per mpi, collective; train P <= 256, test P = 512)")
    for n_terms in (3, 4, 5, 6):
        errs, med = [], []
        for _, g in raw.groupby(["mpi", "collective"]):
            train, test = g[g["p"] <= 256].reset_index(drop=True), g[g["p"] == 512]
            model = KOHASHI.fit(train[["p", "time"]], n_terms=n_terms, bayesian=True, n_steps=20000, seed=1)
            errs += _rel(model.predict(test), test["time"].to_numpy())
            med += _rel(model.predict_median(test), test["time"].to_numpy())
        print(f"  {n_terms}-term point : {_summary(errs)}")
        print(f"  {n_terms}-term median: {_summary(med)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--only", choices=("hockney", "kohashi"))
    args = parser.parse_args()
    if args.only in (None, "hockney"):
        hockney(args.datasets)
    if args.only in (None, "kohashi"):
        kohashi(args.datasets)


if __name__ == "__main__":
    main()
