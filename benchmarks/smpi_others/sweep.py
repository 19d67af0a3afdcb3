"""Run the n x p sweeps of benchmarks/smpi_others/build_and_run.sh under SimGrid SMPI and write the CSVs and tasks.json.

Usage: python3 sweep.py --bindir DIR --outdir DIR --platform NAME=FILE ... [--only PROGRAM ...] [--jobs N]
       [--provenance-json FILE]

Every program is one of PROGRAMS below: its binary in --bindir, its sizes (the 4 smallest are for training, the
others are held out), its process counts and how its time is read. One CSV per program x platform,
<program>_<platform>.csv with columns n, p, time (seconds), split (train/test), source. Split rule: train when n is
one of the 4 smallest sizes and p <= 16 (LULESH: p <= 64), test otherwise. A run that fails (non-zero exit, no time printed, timeout)
is left out of the CSV and listed in failures.txt beside it.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

P_TRAIN = [1, 2, 4, 8, 16]
P_TEST = [32, 64, 128, 256]
SMPIRUN = ["smpirun", "--log=root.thres:critical", "--log=smpi.thres:info", "--cfg=smpi/display-timing:yes",
           "--cfg=smpi/privatization:1"]
# Compute bursts of the NAS kernels and gemm are timed on this machine's CPU and converted to flops at 1 Gflop/s
# (1 s of CPU here = 1e9 flops), then replayed at the platform's host speed.
BENCH = ["--cfg=smpi/host-speed:1Gf"]
# OSU programs only time MPI calls: computation is not simulated at all (deterministic times).
NOCOMP = ["--cfg=smpi/simulate-computation:no"]
SIM_TIME = re.compile(r"Simulated time: (\S+) seconds")


def osu_reader(size_bytes):
    """Time of one operation at this message size: the 'Avg Latency(us)' printed by the OSU benchmark, in s."""
    def read(out):
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == str(size_bytes):
                return float(f[1]) * 1e-6
        return None
    return read


def sim_time(out):
    m = SIM_TIME.search(out)
    return float(m.group(1)) if m else None


OSU_SIZES = [4096, 8192, 16384, 32768, 65536, 131072]
OSU_SMALL = [1024, 2048, 4096, 8192, 16384, 32768]  # alltoall, allgather: p x n bytes per rank


def osu(prog, sizes, iters=("10", "2"), cfg=()):
    """An OSU collective: one run per p over every size, `-i` timed iterations after `-x` warm-up ones."""
    return dict(sizes=sizes, procs=P_TRAIN[1:] + P_TEST, source=prog, runner="per_p", opts=NOCOMP + list(cfg),
                cmd=lambda b, lo, hi: [f"./{prog}", "-m", f"{lo}:{hi}", "-i", iters[0], "-x", iters[1]],
                read=osu_reader)


# CoMD's process grid (i, j, k) for each p: as cubic as powers of two allow, the larger factors first.
COMD_GRID = {1: (1, 1, 1), 2: (2, 1, 1), 4: (2, 2, 1), 8: (2, 2, 2), 16: (4, 2, 2), 32: (4, 4, 2), 64: (4, 4, 4),
             128: (8, 4, 4), 256: (8, 8, 4)}
COMD_STEPS = ["-N", "100", "-n", "10"]  # CoMD's defaults: 100 time steps, energies reduced every 10


def comd_side(n):
    """L of a CoMD box of n = 4 L^3 atoms (FCC: 4 atoms per unit cell)."""
    return round((n / 4) ** (1 / 3))


def comd_args(n, p):
    L, (i, j, k) = comd_side(n), COMD_GRID[p]
    return ["-x", str(L), "-y", str(L), "-z", str(L), "-i", str(i), "-j", str(j), "-k", str(k)] + COMD_STEPS


# name: sizes (n), the p to run, the runs (one per (n, p), or one per p covering every n for OSU), source key
PROGRAMS = {
    # NAS EP (SimGrid's C port), n = 2^m random pairs, m = 20..23 train, 24 (class S) and 25 (class W) test.
    # np = 2^(m-16) batches must be >= p: m = 20 runs up to p = 16, m = 21 to 32, ..., m >= 24 to 256.
    "nas_ep": dict(sizes=[2 ** m for m in range(20, 26)], procs=P_TRAIN + P_TEST, source="simgrid_nas_ep",
                   runner="per_point", opts=BENCH,
                   cmd=lambda b, n, p: (["./ep", str(p), "S"], {"NPB_EP_M": str(n.bit_length() - 1)}),
                   feasible=lambda n, p: n // 2 ** 16 >= p, read=lambda n: sim_time),
    # NAS IS (SimGrid's C port), n = 2^k keys, k = 18..21 train, 22 and 23 (class A) test; p a power of two.
    # p = 256 left out: the pairwise Alltoallv of 10 iterations takes about a minute of simulation per run.
    "nas_is": dict(sizes=[2 ** k for k in range(18, 24)], procs=P_TRAIN + [32, 64, 128], source="simgrid_nas_is",
                   runner="per_point", opts=BENCH + ["--cfg=smpi/alltoall:pair", "--cfg=smpi/alltoallv:pair"],
                   cmd=lambda b, n, p: (["./is", str(p), "W"], {"NPB_IS_LOG2": str(n.bit_length() - 1)}),
                   feasible=lambda n, p: True, read=lambda n: sim_time),
    # gemm (CodeVault, in SimGrid's examples): n x n float matrices, Bcast A, B, C, row blocks, Gather.
    "gemm": dict(sizes=[128, 192, 256, 320, 512, 640], procs=P_TRAIN + P_TEST, source="simgrid_gemm",
                 runner="per_point", opts=BENCH,
                 cmd=lambda b, n, p: (["./gemm", str(n), "native"], {}),
                 feasible=lambda n, p: True, read=lambda n: sim_time),
    # HPCCG (Mantevo): 150 CG iterations on a 27-point 3-D stencil, 1-D (slab) decomposition along z. Strong
    # scaling: n = the global number of rows (16 x 16 x nz grid points, nz = n / 256 a multiple of 256), each rank
    # gets nz / p planes (HPCCG takes the local sub-block nx ny nz on its command line).
    "hpccg": dict(sizes=[256 * 16 * 16 * k for k in (1, 2, 3, 4, 8, 16)], procs=P_TRAIN + P_TEST,
                  source="hpccg", runner="per_point", opts=BENCH,
                  cmd=lambda b, n, p: (["./hpccg", "16", "16", str(n // 256 // p)], {}),
                  feasible=lambda n, p: (n // 256) % p == 0, read=lambda n: sim_time),
    # CoMD (ECP proxy app): classical molecular dynamics, Lennard-Jones (its default potential), an FCC box of
    # L x L x L unit cells, n = 4 L^3 atoms, 3-D decomposition on a process grid i x j x k (COMD_GRID). Strong
    # scaling: L = 14..17 train, 21 and 26 test (1.9x and 3.6x the atoms of L = 17). CoMD refuses a subdomain
    # thinner than 2 cutoffs (L x 3.615 A >= 2 x 5.7875 A x procs per dimension): L <= 21 runs up to p = 64,
    # L = 26 to 256.
    "comd": dict(sizes=[4 * L ** 3 for L in (14, 15, 16, 17, 21, 26)], procs=P_TRAIN + P_TEST, source="comd",
                 runner="per_point", opts=BENCH,
                 cmd=lambda b, n, p: (["./comd"] + comd_args(n, p), {}),
                 feasible=lambda n, p: all(comd_side(n) * 3.615 >= 2 * 5.7875 * d for d in COMD_GRID[p]),
                 read=lambda n: sim_time),
    # miniFE (Mantevo, ref/src): implicit finite elements on an nx x nx x nx box of hexahedra (27-point stencil),
    # assembly then unpreconditioned CG (at most 200 iterations, tolerance machine epsilon: it may stop earlier),
    # the box split among the ranks by recursive coordinate bisection (miniFE's BoxPartition). Strong scaling:
    # n = nx^3 elements of the global box, nx = 16, 20, 24, 28 train, 36 and 44 test (2.1x and 3.9x the
    # elements of nx = 28). p = 128 and 256 left out: in trials a run at p = 128 (nx = 16, 32) or 256 (nx = 32, 56)
    # did not finish in 100-300 s of simulation (p = 64, nx = 32: 15 s), so the test p are 32 and 64 only.
    "minife": dict(sizes=[nx ** 3 for nx in (16, 20, 24, 28, 36, 44)], procs=P_TRAIN + [32, 64],
                   source="minife", runner="per_point", opts=BENCH,
                   cmd=lambda b, n, p: (["./miniFE.x", f"nx={round(n ** (1 / 3))}"], {}),
                   feasible=lambda n, p: True, read=lambda n: sim_time),
    # LULESH 2.0 (LLNL): Sedov blast wave, Lagrangian hydrodynamics on hexahedra, MPI only (-DUSE_MPI=1
    # -DUSE_OPENMP=0). It needs a cube number of ranks p = k^3 and takes the edge s of each rank's s x s x s
    # subdomain (weak scaling: the global mesh is (k s)^3). n = s^3 elements per rank, s = 6, 7, 8, 9 train,
    # 12 and 14 test (2.4x and 3.8x the elements of s = 9); p = 1, 8, 27, 64 train, 125 and 216 test (the largest
    # cubes that fit the 256 hosts). 10 cycles (-i 10), quiet (-q); otherwise its defaults (11 regions, -b 1 -c 1).
    "lulesh": dict(sizes=[s ** 3 for s in (6, 7, 8, 9, 12, 14)], procs=[k ** 3 for k in range(1, 7)],
                   train_p=64, source="lulesh", runner="per_point", opts=BENCH,
                   cmd=lambda b, n, p: (["./lulesh2.0", "-s", str(round(n ** (1 / 3))), "-i", "10", "-q"], {}),
                   feasible=lambda n, p: True, read=lambda n: sim_time),
    # OSU micro-benchmarks 5.3 collectives: n = message size in bytes, p >= 2 (they refuse one process).
    "osu_allreduce": osu("osu_allreduce", OSU_SIZES),
    "osu_bcast": osu("osu_bcast", OSU_SIZES),
    # Alltoall with SMPI's pairwise algorithm: the default one (all messages at once) takes minutes per run at p >= 128.
    "osu_alltoall": osu("osu_alltoall", OSU_SMALL, iters=("3", "1"), cfg=["--cfg=smpi/alltoall:pair"]),
    # Allgather with SMPI's recursive doubling (log2 p steps; every p here is a power of two): the default
    # algorithm, and ring, did not finish one run in 2-4 minutes of simulation at p = 256 on the torus.
    "osu_allgather": osu("osu_allgather", OSU_SMALL, cfg=["--cfg=smpi/allgather:rdb"]),
    # Reduce with SMPI's binomial tree: SMPI's default reduce is linear (every rank sends to the root), the same
    # communication as its default gather, and gave the very same latencies as osu_gather (no computation simulated).
    "osu_reduce": osu("osu_reduce", OSU_SIZES, cfg=["--cfg=smpi/reduce:binomial"]),
    "osu_gather": osu("osu_gather", OSU_SIZES),
    "osu_scatter": osu("osu_scatter", OSU_SIZES),
}


def run(cmd, env, cwd, timeout):
    t0 = time.time()
    try:
        r = subprocess.run(cmd, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", "timeout"
    return out, rc, time.time() - t0


def sweep(name, spec, plat, plat_file, bindir, timeout, jobs, log):
    sizes, procs = spec["sizes"], spec["procs"]
    train_n = set(sorted(sizes)[:4])
    train_p = spec.get("train_p", 16)  # the largest p of the training rows (16; LULESH's cubes: 64)
    base = SMPIRUN + spec["opts"]
    jobs_list = []  # (list of (n, p), cmd, env)
    if spec["runner"] == "per_point":
        for n in sizes:
            for p in procs:
                if not spec["feasible"](n, p):
                    log.append(f"{name}_{plat} n={n} p={p}: skipped (the program cannot run it)")
                    continue
                args, env = spec["cmd"](bindir, n, p)
                jobs_list.append(([(n, p)], base + ["-np", str(p), "-platform", plat_file] + args, env))
    else:
        for p in procs:
            args = spec["cmd"](bindir, min(sizes), max(sizes))
            jobs_list.append(([(n, p) for n in sizes], base + ["-np", str(p), "-platform", plat_file] + args, {}))

    def one(job):
        points, cmd, env = job
        out, rc, wall = run(cmd, env, bindir, timeout)
        res = []
        for n, p in points:
            t = spec["read"](n)(out) if rc == 0 else None
            res.append((n, p, t))
        return points, cmd, env, rc, wall, res, out

    rows = []
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for points, cmd, env, rc, wall, res, out in ex.map(one, jobs_list):
            envs = " ".join(f"{k}={v}" for k, v in env.items())
            print(f"{name}_{plat} {points[0] if len(points) == 1 else 'p=%d' % points[0][1]} rc={rc} "
                  f"wall={wall:.1f}s", file=sys.stderr, flush=True)
            for n, p, t in res:
                if t is None:
                    tail = " | ".join(out.strip().splitlines()[-3:])
                    log.append(f"{name}_{plat} n={n} p={p}: failed (rc={rc}) {envs} {' '.join(cmd)} :: {tail}")
                else:
                    split = "train" if n in train_n and p <= train_p else "test"
                    rows.append((n, p, t, split))
    rows.sort()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--platform", action="append", required=True, help="NAME=FILE")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--provenance-json", required=True, help="source key -> provenance string")
    a = ap.parse_args()
    prov = json.loads(Path(a.provenance_json).read_text())
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    tasks_path = out / "tasks.json"
    tasks = json.loads(tasks_path.read_text()) if tasks_path.exists() else {}
    log = []
    for name, spec in PROGRAMS.items():
        if a.only and name not in a.only:
            continue
        for pl in a.platform:
            plat, plat_file = pl.split("=", 1)
            t0 = time.time()
            rows = sweep(name, spec, plat, str(Path(plat_file).resolve()), a.bindir, a.timeout, a.jobs, log)
            task = f"{name}_{plat}"
            src = prov[spec["source"]]
            with open(out / f"{task}.csv", "w") as f:
                f.write("n,p,time,split,source\n")
                for n, p, t, split in rows:
                    f.write(f"{n},{p},{t:.9g},{split},{src['short']}\n")
            tasks[task] = {"file": f"{task}.csv", "roles": {"n": "n", "p": "p"}, "params": [], "groups": [],
                           "provenance": f"{src['long']}, built with {prov.get('cc_' + spec['source'], prov['smpicc'])}, "
                                         f"platform {Path(plat_file).name}"}
            print(f"== {task}: {len(rows)} rows in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
            tasks_path.write_text(json.dumps(dict(sorted(tasks.items())), indent=1) + "\n")
    with open(out / "failures.txt", "a") as f:
        for line in log:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
