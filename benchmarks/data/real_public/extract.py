"""Rebuild every CSV in this folder from bare git mirrors of the source repositories.

Usage:
    python extract.py --e3sm <E3SM-Project/perf-data git dir> \
                      --excalibur <ukri-excalibur/excalibur-tests git dir> \
                      --hecbiosim <HECBioSim/benchmark-results git dir> \
                      [--out <folder, default: this script's folder>]

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--e3sm", required=True)
    ap.add_argument("--excalibur", required=True)
    ap.add_argument("--hecbiosim", required=True)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    e3sm_fcase(a.e3sm, a.out)
    e3sm_theta_ne(a.e3sm, a.out)
    excalibur(a.excalibur, a.out)
    hecbiosim(a.hecbiosim, a.out)


if __name__ == "__main__":
    main()
