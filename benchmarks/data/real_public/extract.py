"""Rebuild every CSV in this folder from bare git mirrors of the source repositories.

Usage:
    python extract.py --e3sm <E3SM-Project/perf-data git dir> \
                      --excalibur <ukri-excalibur/excalibur-tests git dir> \
                      --hecbiosim <HECBioSim/benchmark-results git dir> \
                      --legion <StanfordLegion/perf-data git dir> \
                      [--out <folder, default: this script's folder>]

Each of the four sources is optional: only the CSVs of the sources given are rebuilt.

Each source is read at the commit pinned below (git show <commit>:<path>), so the
CSVs are reproducible whatever the mirrors' HEAD is.  Only the standard library is used.

The split rule of every task (train = small configurations, test = larger ones) was
fixed from the parameter ranges alone, before anything was fitted; see README.md.
"""
import argparse
import csv
import json
import os
import re
import subprocess

E3SM_COMMIT = "3b5f3ec8036db41852699ff903241e029a92ef0c"
# excalibur-tests deleted its perflogs in f9bb8c3 ("Delete old perflogs (#99)"); read its parent.
EXCALIBUR_COMMIT = "bbd9aefafe13a1d07302a7b0414deb5723232540"
HECBIOSIM_COMMIT = "64f6b3b2bd6472673c862947331e4602a0fc8a02"
LEGION_COMMIT = "eeb3a4e99f0bb9541f09a5e69d4d5da5a48fcff5"


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True,
                          text=True, check=True).stdout


def ls(gitdir, commit, path):
    return git(gitdir, "ls-tree", "-r", "--name-only", commit, "--", path).split("\n")[:-1]


def show(gitdir, commit, path):
    return git(gitdir, "show", f"{commit}:{path}")


def write(out, name, columns, rows):
    rows = sorted(rows, key=lambda r: tuple((0, r[c]) if isinstance(r[c], (int, float))
                                            else (1, str(r[c])) for c in columns))
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([r[c] for c in columns])
    print(f"{name}: {len(rows)} rows, "
          f"{sum(r['split'] == 'train' for r in rows)} train / {sum(r['split'] == 'test' for r in rows)} test")


# --------------------------------------------------------------------------- E3SM
def e3sm_fcase(g, out):
    """E3SM atmosphere-only F cases on Chrysalis (64 MPI ranks per node), v1 and v2 physics.
    time = wallmax of CPL:RUN_LOOP (s).  Two series: fcase-timers0.txt (first run, no 29-node
    case) and fcase-timers1.txt (second run, the paper's).  Split: train nodes <= 29."""
    rows = []
    for run, fname in ((0, "fcase-timers0.txt"), (1, "fcase-timers1.txt")):
        path = f"v2-overview/chrysalis-perf-study/{fname}"
        case = None
        for line in show(g, E3SM_COMMIT, path).splitlines():
            m = re.match(r"^(?:v2-overview-fcase-chrysalis-r0\.)?(FC5AV1C-L|F2010-CICE)\.(\S+)\.(\d+)$", line)
            if m:
                case = (m.group(1), m.group(2), int(m.group(3)))
                continue
            if case and line.startswith('"CPL:RUN_LOOP"'):
                f = line.split()
                # name [on-flag] processes threads count walltotal wallmax (proc thrd) wallmin ...
                nums = [x for x in f[1:] if x != "-"]
                procs, wallmax = int(nums[0]), float(nums[4])
                compset, grid, nodes = case
                assert procs == 64 * nodes, (procs, nodes)
                rows.append(dict(compset=compset, nodes=nodes, run=run, time=wallmax,
                                 split="train" if nodes <= 29 else "test", source=path))
                case = None
    write(out, "e3sm_fcase_chrysalis.csv",
          ["compset", "nodes", "run", "time", "split", "source"], rows)


def e3sm_theta_ne(g, out):
    """HOMME theta-l (nlev 128, Kokkos build) dycore, 500 steps, problem-size sweep ne = 2..24
    (nelem = 6 ne^2) at fixed rank count, on five machines.  time = wallmax of prim_main_loop (s).
    Split: train ne <= 10 (nelem <= 600), test ne >= 15."""
    rows = []
    dirs = {"blake": "RS-theta/blake/july2024/run1",
            "frontier": "RS-theta/frontier/july2024/run1",
            "frontier-1rank": "RS-theta/frontier/july2024/run1/1rank",
            "pm-gpu": "RS-theta/pm-gpu/july2024/run1",
            "weaver": "RS-theta/weaver/july2024/run1"}
    for machine, d in dirs.items():
        for path in ls(g, E3SM_COMMIT, d):
            m = re.match(re.escape(d) + r"/time-thetaxx-ne(\d+)-nmax(\d+)\.\d+$", path)
            if not m:
                continue
            ne, nmax = int(m.group(1)), int(m.group(2))
            for line in show(g, E3SM_COMMIT, path).splitlines():
                if line.startswith('"prim_main_loop"'):
                    nums = [x for x in line.split()[1:] if x != "-"]
                    assert nmax == 500
                    rows.append(dict(machine=machine.replace("-1rank", ""), ranks=int(nums[0]),
                                     nelem=6 * ne * ne, time=float(nums[4]),
                                     split="train" if ne <= 10 else "test", source=path))
                    break
    write(out, "e3sm_theta_ne.csv",
          ["machine", "ranks", "nelem", "time", "split", "source"], rows)


def gptl_timer(text, timer):
    """(processes, count, wallmax) of one timer of a GPTL model_timing_stats / grep summary line."""
    for line in text.splitlines():
        if line.startswith(f'"{timer}"'):
            nums = [x for x in line.split()[1:] if x != "-"]
            return int(nums[0]), float(nums[2]), float(nums[4])
    raise ValueError(f"no {timer} timer")


def e3sm_scream_frontier(g, out):
    """SCREAM v1 (F2010-SCREAMv1, ne1024pg2, 3.25 km global), 432 atmosphere steps, strong scaling on
    Frontier (OLCF, 8 MPI ranks per node = one per MI250X GCD), nnodes 512..8192.
    time = wallmax of CPL:RUN_LOOP (s); every run has 432 RUN_LOOP calls per rank (checked).
    Series (group `build`), from the file names: `rocm51` (the figures' scaling1 runs, ROCm 5.1 /
    CCE 14), `rocm54-eul` (ROCm 5.4, Eulerian tracer transport), `gb-o3` (the later re-runs of
    the rocm51 configuration, branch sarats/frontier-gb).  Left out, by the structure of the series
    alone: `rocm54` (no 2048-node run, so only two training node counts), `rocm51-hostmpi` and
    `rocm54-nothrd` (one or two node counts, no test configuration).
    Split: train nnodes <= 2048 (1/4 of the largest, 8192), test 4096 and 8192."""
    d = "screamv1-frontier-feb2023/data"
    keep = {"scaling1-rocm51": "rocm51", "scaling1-rocm54-eul": "rocm54-eul", "scream-gb-o3-ne1024": "gb-o3"}
    rows = []
    for path in ls(g, E3SM_COMMIT, d):
        m = re.match(re.escape(d) + r"/frontier-v1-(.+)-nnodes(\d+)\.ne1024pg2_ne1024pg2\.F2010-SCREAMv1-"
                     r"(?:timing\.)?(\d+)\.[\d-]+-model_timing_stats$", path)
        if not m or m.group(1) not in keep:
            continue
        nnodes = int(m.group(2))
        procs, count, wallmax = gptl_timer(show(g, E3SM_COMMIT, path), "CPL:RUN_LOOP")
        assert procs == 8 * nnodes and abs(count / (432 * procs) - 1) < 1e-5, (path, procs, count)
        rows.append(dict(build=keep[m.group(1)], nnodes=nnodes, jobid=int(m.group(3)), time=wallmax,
                         split="train" if nnodes <= 2048 else "test", source=path))
    write(out, "e3sm_scream_frontier.csv", ["build", "nnodes", "jobid", "time", "split", "source"], rows)


def e3sm_wccase_chrysalis(g, out):
    """E3SM fully coupled water-cycle cases on Chrysalis (64 MPI ranks per node), v1
    (A_WCYCL1850S_CMIP6, ne30_oECv3) and v2 (WCYCL1850, ne30pg2_EC30to60E2r2), processor layouts
    5 and 10 nodes, XS (v2 only), S, M, L.  time = wallmax of CPL:RUN_LOOP (s); every run has 4320
    RUN_LOOP calls per rank (checked).  `ranks` = the RUN_LOOP timer's process count (all ranks).
    Split: train ranks <= 1920 (30 nodes, about 1/4 of the largest 7360), test 3392..7360."""
    path = "v2-overview/chrysalis-perf-study/wccase-timers1.txt"
    rows, case = [], None
    for line in show(g, E3SM_COMMIT, path).splitlines():
        m = re.match(r"^v2-overview-wccase-chrysalis-r0\.(A_WCYCL1850S_CMIP6|WCYCL1850)\.\S+\.(\w+)$", line)
        if m:
            case = (m.group(1), m.group(2))
            continue
        if case and line.startswith('"CPL:RUN_LOOP"'):
            procs, count, wallmax = gptl_timer(line, "CPL:RUN_LOOP")
            assert abs(count / (4320 * procs) - 1) < 1e-5 and procs % 64 == 0, (case, procs, count)
            rows.append(dict(compset=case[0], layout=case[1], ranks=procs, time=wallmax,
                             split="train" if procs <= 1920 else "test", source=path))
            case = None
    write(out, "e3sm_wccase_chrysalis.csv", ["compset", "layout", "ranks", "time", "split", "source"], rows)


# ------------------------------------------------------------------ excalibur-tests
RECORD = re.compile(r"(?=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d\|reframe)")


def excalibur_records(g):
    """Yield one dict per ReFrame perflog record (some files lack newlines between records)."""
    for path in ls(g, EXCALIBUR_COMMIT, "perflogs"):
        if not path.endswith(".log") or path.split("/")[3] not in ("gromacs", "castep", "wrf", "openfoam", "cp2k"):
            continue
        if "Castep_TiN" in path:  # a single-configuration test, no num_nodes tag
            continue
        for rec in RECORD.split(show(g, EXCALIBUR_COMMIT, path).replace("\n", "")):
            if not rec:
                continue
            p = rec.split("|")
            test, rest = p[2].split(" on ")
            partition, app = rest.split(" using ")
            metric, value = p[4].split("=")
            tags = dict(t.split("=") for t in p[7].split(",") if "=" in t)
            yield dict(date=p[0], test=test, system=partition.split(":")[0],
                       partition=partition.split(":")[1], app=app, jobid=p[3].split("=")[1],
                       metric=metric, value=float(value), unit=p[5],
                       num_nodes=int(tags["num_nodes"]), num_procs=int(tags["num_procs"]), path=path)


def excalibur(g, out):
    recs = list(excalibur_records(g))

    def pick(system, app, metric):
        return [r for r in recs if r["system"] == system and r["app"] == app and r["metric"] == metric]

    def interconnect(r):
        return r["partition"].split("-")[0].replace("cclake", r["partition"].split("-")[1])

    # CSD3 Cascade Lake, 56 ranks per node, nodes 1..56; Alaska (StackHPC test cluster), 32 ranks per
    # node, nodes 1..16, InfiniBand and RoCE.  Per file: system, app, metric (time in s), the largest
    # training num_nodes, and the extra columns of each record.
    #   GROMACS: GROMACS's own wall time (wall_t); three HECBioSim benchmark systems (atoms).
    #   CASTEP Al3x3: CASTEP's total_time.
    #   WRF 12 km and 2.5 km CONUS: runtime_real (job-script wall clock of the run).
    #   OpenFOAM motorbike: OpenFOAM's ExecutionTime; CSD3 nodes 1,2,8,16,32,56 (no 4).
    #   Alaska: test 16 nodes.
    def atoms(pattern):
        return "atoms", lambda r: int(re.search(pattern, r["test"] + "_").group(1)) * 1000

    case = "case", lambda r: "12km" if r["test"].startswith("WRF_12km") else "2.5km"

    files = (("csd3", "gromacs", "wall_t", "excalibur_gromacs_csd3.csv", 8, atoms(r"_(\d+)k_atoms")),
             ("csd3", "castep", "total_time", "excalibur_castep_csd3.csv", 8, None),
             ("csd3", "wrf", "runtime_real", "excalibur_wrf_csd3.csv", 8, case),
             ("csd3", "openfoam", "ExecutionTime", "excalibur_openfoam_csd3.csv", 16, None),
             ("alaska", "gromacs", "wall_t", "excalibur_gromacs_alaska.csv", 8, atoms(r"_(\d+)k_")),
             ("alaska", "cp2k", "cp2k_time", "excalibur_cp2k_alaska.csv", 8, None),
             ("alaska", "openfoam", "ExecutionTime", "excalibur_openfoam_alaska.csv", 8, None))
    for system, app, metric, name, train_nodes, extra in files:
        column, value = extra or (None, None)
        rows = [dict(interconnect=interconnect(r), **({column: value(r)} if extra else {}),
                     num_procs=r["num_procs"], jobid=r["jobid"], time=r["value"],
                     split="train" if r["num_nodes"] <= train_nodes else "test", source=r["path"])
                for r in pick(system, app, metric)]
        write(out, name, ["interconnect", *([column] if extra else []), "num_procs", "jobid", "time", "split",
                          "source"], rows)


# -------------------------------------------------------------------- HECBioSim
def hecbiosim(g, out):
    """HECBioSim benchmark suite on ARCHER2 (2x AMD EPYC 7742, 128 cores per node), pure-MPI
    layout (128 ranks x 1 thread per node; AMBER has no layout folder), nodes 1..16, five
    systems (20k..3000k atoms).  The small systems run 50000 MD steps, the large ones 10000, so
    time = run.Totals['Wall Clock Time (s)'] (as reported by the application) / steps, i.e. seconds
    per MD step; `steps` is kept so the reported wall time is time * steps.  ranks = 128 * nodes.
    Split: train nodes <= 4 (ranks <= 512)."""
    for app, folder in (("gromacs", "archer/gromacs/1threads-128tasks"),
                        ("lammps", "archer/lammps/1threads-128tasks"),
                        ("namd", "archer/namd/1threads-128tasks"),
                        ("amber", "archer/amber")):
        rows = []
        for path in ls(g, HECBIOSIM_COMMIT, folder):
            if not path.endswith(".json"):
                continue
            d = json.loads(show(g, HECBIOSIM_COMMIT, path))
            tot = d["run"]["Totals"]
            nodes = int(d["slurm"]["slurm"]["nodes"])
            tpn = d["slurm"]["slurm"].get("ntasks-per-node") or d["slurm"]["slurm"].get("tasks-per-node")
            steps = int(float(tot["Number of steps"]))
            assert int(tpn) == 128
            rows.append(dict(atoms=int(float(tot["Number of atoms"])),
                             ranks=nodes * int(tpn), steps=steps,
                             time=float(tot["Wall Clock Time (s)"]) / steps,
                             split="train" if nodes <= 4 else "test", source=path))
        write(out, f"hecbiosim_{app}_archer2.csv",
              ["atoms", "ranks", "steps", "time", "split", "source"], rows)


# Files too large for the snapshot mirror the extraction was made from (listed there, contents absent;
# 3-5 MB each): skipped, so that the CSVs do not depend on the mirror's size limit.
HECBIOSIM_ABSENT = {f"archer/lammps/16threads-8tasks/3000k-atoms/{n}/archerlammps3000katoms16threads.json"
                    for n in (1, 2, 3)}


def hecbiosim_hybrid(g, out):
    """The same ARCHER2 runs in the hybrid MPI + OpenMP layout with one rank per NUMA region
    (8 ranks x 16 OpenMP threads per node; folder 16threads-8tasks), nodes 1..16, for GROMACS,
    LAMMPS and NAMD.  time = seconds per MD step as in hecbiosim(); `nodes` is the process-count
    column (cores = 128 * nodes).  LAMMPS has no 3000k-atom runs on 1-3 nodes (HECBIOSIM_ABSENT).  Split: train nodes <= 4, test 5..16 (as the pure-MPI tasks)."""
    for app in ("gromacs", "lammps", "namd"):
        rows = []
        for path in ls(g, HECBIOSIM_COMMIT, f"archer/{app}/16threads-8tasks"):
            if not path.endswith(".json") or path in HECBIOSIM_ABSENT:
                continue
            d = json.loads(show(g, HECBIOSIM_COMMIT, path))
            tot, sl = d["run"]["Totals"], d["slurm"]["slurm"]
            nodes = int(sl["nodes"])
            tpn = sl.get("ntasks-per-node") or sl.get("tasks-per-node")
            assert int(tpn) == 8 and int(sl["cpus-per-task"]) == 16, path
            steps = int(float(tot["Number of steps"]))
            rows.append(dict(atoms=int(float(tot["Number of atoms"])), nodes=nodes, steps=steps,
                             time=float(tot["Wall Clock Time (s)"]) / steps,
                             split="train" if nodes <= 4 else "test", source=path))
        write(out, f"hecbiosim_{app}_archer2_hybrid.csv",
              ["atoms", "nodes", "steps", "time", "split", "source"], rows)


HECBIOSIM_GPU = {"jade2": "JADE2 (NVIDIA V100-SXM2-32GB)", "bede": "Bede Grace Hopper (NVIDIA GH200)",
                 "lumi": "LUMI-G (AMD MI250X, one GCD)"}


def hecbiosim_gpu(g, out):
    """The HECBioSim systems (20k..3000k atoms) on one GPU, a problem-size sweep per machine
    (group `machine`: jade2, bede, lumi), one file per application (AMBER pmemd.cuda, GROMACS,
    LAMMPS, NAMD, OpenMM).  time = seconds per MD step (wall clock / steps, as in hecbiosim()).
    Bede's LAMMPS runs are left out: their OpenMP thread count changes with the system size (folder
    names `*-atoms-<threads>-threads`), so size and thread count are confounded.
    Split: train atoms <= 750000 (1/4 of the largest system; the 20k, 61k and 465k systems), test
    the 1400k and 3000k systems."""
    for app in ("amber", "gromacs", "lammps", "namd", "openmm"):
        rows = []
        for machine in HECBIOSIM_GPU:
            for path in ls(g, HECBIOSIM_COMMIT, f"{machine}/{app}"):
                if not path.endswith(".json") or (machine, app) == ("bede", "lammps"):
                    continue
                d = json.loads(show(g, HECBIOSIM_COMMIT, path))
                tot = d["run"]["Totals"]
                steps = int(float(tot["Number of steps"]))
                atoms = int(float(tot["Number of atoms"]))
                folder = int(re.search(r"/(\d+)k-atoms", path).group(1))
                assert abs(atoms / 1000 - folder) / folder < 0.2, (path, atoms)
                rows.append(dict(machine=machine, atoms=atoms, steps=steps,
                                 time=float(tot["Wall Clock Time (s)"]) / steps,
                                 split="train" if atoms <= 750000 else "test", source=path))
        write(out, f"hecbiosim_{app}_1gpu.csv", ["machine", "atoms", "steps", "time", "split", "source"], rows)


# -------------------------------------------------------------------- Legion
def legion_records(g):
    """Yield (path, measurement dict) for every measurement JSON of StanfordLegion/perf-data
    (read in one `git cat-file --batch` process: the repository holds about 16000 small files)."""
    paths = [p for p in ls(g, LEGION_COMMIT, "measurements") if p.endswith(".json")]
    data = subprocess.run(["git", "--git-dir", g, "cat-file", "--batch"], capture_output=True, check=True,
                          input="".join(f"{LEGION_COMMIT}:{p}\n" for p in paths).encode()).stdout
    pos = 0
    for path in paths:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        body = data[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1
        yield path, json.loads(body)


def legion(g, out):
    """Legion's nightly multi-node runs on Titan (OLCF Cray XK7, host titan.ccs.ornl.gov), nodes
    1, 2, 4, 8, each configuration repeated on 13-14 days between 2018-05-16 and 2018-05-28.
    time = the benchmark's reported run time (`time_seconds`, s).  Only the runs of one code version
    are kept: Legion commit 249655b (branch master), which all the repeated runs used (a single
    earlier run per configuration, 2017-10-27, used another commit and is left out).  Runs
    without a node count (the single-node series of other hosts) are not used.
      circuit (C++ Legion) and circuit_sparse.rg (Regent; its records name the benchmark "-l", a
      quirk of the logging: the argv starts at "10"), 10 loops:
        weak: `pieces` = 12 x nodes, 2500 nodes and 10000 wires per piece, 12 CPUs per node;
        strong: 100 pieces, 2 nodes and 4 wires per piece (a tiny fixed problem), 2 CPUs per node.
      pennant_fast.rg on sedovbig (Regent PENNANT), weak: `pieces` = 12 x nodes, 12 CPUs per node.
    Split: train nodes <= 4, test nodes = 8 (so three training node counts)."""
    rows = {"weak": [], "strong": [], "pennant": []}
    for path, d in legion_records(g):
        m = d["metadata"]
        if m.get("host") != "titan.ccs.ornl.gov" or m.get("nodes") is None or not m["commit"].startswith("249655b"):
            continue
        argv, nodes = m["argv"], int(m["nodes"])
        time = float(d["measurements"]["time_seconds"])
        base = dict(nodes=nodes, date=m["date"][:10], time=time, split="train" if nodes <= 4 else "test",
                    source=path)
        if m["benchmark"] == "sedovbig.pnt":
            pieces = int(argv[argv.index("-npieces") + 1])
            assert pieces == 12 * nodes
            rows["pennant"].append(dict(benchmark="pennant_fast.rg", pieces=pieces, **base))
            continue
        if m["benchmark"] == "-l":
            benchmark, argv = "circuit_sparse.rg", ["-l", *argv]
        elif m["benchmark"] == "circuit":
            benchmark = "circuit"
        else:
            continue
        pieces = int(argv[argv.index("-p") + 1])
        npp, wpp = int(argv[argv.index("-npp") + 1]), int(argv[argv.index("-wpp") + 1])
        if (npp, wpp) == (2500, 10000):
            assert pieces == 12 * nodes
            rows["weak"].append(dict(benchmark=benchmark, pieces=pieces, **base))
        else:
            assert (npp, wpp, pieces) == (2, 4, 100)
            rows["strong"].append(dict(benchmark=benchmark, pieces=pieces, **base))
    cols = ["benchmark", "nodes", "pieces", "date", "time", "split", "source"]
    write(out, "legion_circuit_weak_titan.csv", cols, rows["weak"])
    write(out, "legion_circuit_strong_titan.csv", cols, rows["strong"])
    write(out, "legion_pennant_titan.csv", cols, rows["pennant"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--e3sm")
    ap.add_argument("--excalibur")
    ap.add_argument("--hecbiosim")
    ap.add_argument("--legion")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    if a.e3sm:
        e3sm_fcase(a.e3sm, a.out)
        e3sm_theta_ne(a.e3sm, a.out)
        e3sm_scream_frontier(a.e3sm, a.out)
        e3sm_wccase_chrysalis(a.e3sm, a.out)
    if a.excalibur:
        excalibur(a.excalibur, a.out)
    if a.hecbiosim:
        hecbiosim(a.hecbiosim, a.out)
        hecbiosim_hybrid(a.hecbiosim, a.out)
        hecbiosim_gpu(a.hecbiosim, a.out)
    if a.legion:
        legion(a.legion, a.out)


if __name__ == "__main__":
    main()
