#!/usr/bin/env bash
# Build MPI programs written by others with SimGrid's smpicc and run their n x p sweeps under SMPI on three
# platforms; writes benchmarks/data/smpi_others/<program>_<platform>.csv, tasks.json and failures.txt.
# No source is kept in this repository: the programs are extracted from bare git mirrors of their public
# repositories into a temporary directory, at the pinned commits below.
#
#   SIMGRID_MIRROR=/path/to/simgrid.git OSU_MIRROR=/path/to/osu.git benchmarks/smpi_others/build_and_run.sh
#   benchmarks/smpi_others/build_and_run.sh nas_ep gemm      # only these programs (others' CSVs kept)
#   JOBS=1 benchmarks/smpi_others/build_and_run.sh hpccg comd   # only these two (the others are built, not run)
#   JOBS=1 benchmarks/smpi_others/build_and_run.sh minife lulesh
#
# SIMGRID_MIRROR: a clone (bare or not) of github.com/simgrid/simgrid holding commit $SIMGRID_COMMIT;
# OSU_MIRROR: of github.com/forresti/osu-micro-benchmarks holding $OSU_COMMIT (OSU Micro-Benchmarks 5.3);
# HPCCG_MIRROR: of github.com/Mantevo/HPCCG holding $HPCCG_COMMIT (needed only when hpccg is run);
# COMD_MIRROR: of github.com/ECP-copa/CoMD holding $COMD_COMMIT (needed only when comd is run).
# MINIFE_MIRROR: of github.com/Mantevo/miniFE holding $MINIFE_COMMIT (needed only when minife is run);
# LULESH_MIRROR: of github.com/LLNL/LULESH holding $LULESH_COMMIT (needed only when lulesh is run).
# Needs smpicc/smpirun (apt-get install -y libsimgrid-dev simgrid; SimGrid 3.32 here) and python3.
# JOBS (default 2) runs at once; about 11 minutes on 2 cores (nas_is 5, osu_alltoall 2.3, osu_allgather 1.1)
# without the proxy applications; alone (JOBS=1) hpccg about 17 minutes, comd about 24, minife about 7,
# lulesh about 13 (minife and lulesh run at the same time).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${OUT:-$ROOT/benchmarks/data/smpi_others}"
SIMGRID_MIRROR="${SIMGRID_MIRROR:-/work/.mirror/simgrid+simgrid/repo}"
OSU_MIRROR="${OSU_MIRROR:-/work/.mirror/forresti+osu-micro-benchmarks/repo}"
SIMGRID_COMMIT=12a63c78cdaa56b78836c95c6a18484f367dca38
OSU_COMMIT=993f966d750386dd813a3d970b83c7c4938bb926
HPCCG_MIRROR="${HPCCG_MIRROR:-/work/.mirror/Mantevo+HPCCG/repo}"
HPCCG_COMMIT=80dd2f12a4e8aa70c330a5686cdda3fd187c2545
COMD_MIRROR="${COMD_MIRROR:-/work/.mirror/ECP-copa+CoMD/repo}"
COMD_COMMIT=3d48396b77ca8caa3124bc2391f9139c3ffb556c
MINIFE_MIRROR="${MINIFE_MIRROR:-/work/.mirror/Mantevo+miniFE/repo}"
MINIFE_COMMIT=c79e0f7f7afdd6c8191936efce7a668316159cc3
LULESH_MIRROR="${LULESH_MIRROR:-/work/.mirror/LLNL+LULESH/repo}"
LULESH_COMMIT=3e01c40b3281aadb7f996525cdd4a3354f6d3801
JOBS="${JOBS:-2}"

command -v smpicc >/dev/null || { echo "smpicc not found: apt-get install -y libsimgrid-dev simgrid" >&2; exit 1; }
gitdir() { if [ -d "$1/.git" ]; then echo "$1/.git"; else echo "$1"; fi; }
SG="$(gitdir "$SIMGRID_MIRROR")"; OSU="$(gitdir "$OSU_MIRROR")"
want() {  # is program $1 among the ones to run (all when no argument was given)?
    [ "${#PROGS[@]}" -eq 0 ] && return 0
    local q; for q in "${PROGS[@]}"; do [ "$q" = "$1" ] && return 0; done; return 1
}
PROGS=("$@")

WORK="$(mktemp -d "${TMPDIR:-/tmp}/smpi_others.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
BIN="$WORK/bin"; mkdir -p "$BIN" "$WORK/nas" "$WORK/gemm" "$WORK/osu"

extract() {  # git dir, commit, path in repo, destination dir
    git --git-dir="$1" show "$2:$3" > "$4/$(basename "$3")"
}
for f in ep.c is.c nas_common.c nas_common.h; do
    extract "$SG" "$SIMGRID_COMMIT" "examples/smpi/NAS/$f" "$WORK/nas"
done
extract "$SG" "$SIMGRID_COMMIT" examples/smpi/gemm/gemm.c "$WORK/gemm"
for f in osu_coll.c osu_coll.h osu_allreduce.c osu_bcast.c osu_alltoall.c \
         osu_allgather.c osu_reduce.c osu_gather.c osu_scatter.c; do
    extract "$OSU" "$OSU_COMMIT" "mpi/collective/$f" "$WORK/osu"
done

# The NAS kernels pick their size from a class letter; give EP and IS a numeric size knob (see patch_sizes.py).
python3 "$HERE/patch_sizes.py" "$WORK/nas"
CC="smpicc -O2"
( cd "$WORK/nas" && $CC -o "$BIN/ep" ep.c nas_common.c -lm && $CC -o "$BIN/is" is.c nas_common.c -lm )
( cd "$WORK/gemm" && $CC -o "$BIN/gemm" gemm.c )
( cd "$WORK/osu" && for b in allreduce bcast alltoall allgather reduce gather scatter; do $CC -o "$BIN/osu_$b" "osu_$b.c" osu_coll.c -lm; done )
# HPCCG (C++, Mantevo): the 14 .cpp of its Makefile's TEST_CPP, built with its USE_MPI = -DUSING_MPI.
if want hpccg; then
    HG="$(gitdir "$HPCCG_MIRROR")"; mkdir -p "$WORK/hpccg"
    for f in $(git --git-dir="$HG" ls-tree --name-only "$HPCCG_COMMIT" | grep -E '\.(cpp|hpp)$'); do
        extract "$HG" "$HPCCG_COMMIT" "$f" "$WORK/hpccg"
    done
    ( cd "$WORK/hpccg" && smpicxx -O2 -DUSING_MPI -o "$BIN/hpccg" main.cpp generate_matrix.cpp read_HPC_row.cpp \
        compute_residual.cpp mytimer.cpp dump_matlab_matrix.cpp HPC_sparsemv.cpp HPCCG.cpp waxpby.cpp ddot.cpp \
        make_local_matrix.cpp exchange_externals.cpp YAML_Element.cpp YAML_Doc.cpp )
fi
# CoMD (C, ECP proxy app): every file of src-mpi/, built as its Makefile.vanilla does (DOUBLE_PRECISION = ON,
# DO_MPI = ON: -std=c99 -DDOUBLE -DDO_MPI; -O2 here instead of its -g -O5), CoMD_info.h made by its own script.
if want comd; then
    CG="$(gitdir "$COMD_MIRROR")"; mkdir -p "$WORK/comd"
    for f in $(git --git-dir="$CG" ls-tree --name-only "$COMD_COMMIT" src-mpi/); do
        extract "$CG" "$COMD_COMMIT" "$f" "$WORK/comd"
    done
    ( cd "$WORK/comd" && CFL="-std=c99 -DDOUBLE -DDO_MPI -O2" \
        && bash ./generate_info_header CoMD-mpi smpicc "$CFL" "-lm" >/dev/null \
        && smpicc $CFL -o "$BIN/comd" *.c -lm )
fi
# miniFE (Mantevo): its reference MPI version ref/src (+ ref/utils, ref/fem), built as ref/src/Makefile and its
# make_targets do (CSR matrix, double/int/int, -DHAVE_MPI -DMINIFE_REPORT_RUSAGE, MINIFE_INFO=1 MINIFE_KERNELS=0;
# -O2 here instead of its -O3 -g), miniFE_info.hpp made by its own generate_info_header.
if want minife; then
    MG="$(gitdir "$MINIFE_MIRROR")"; mkdir -p "$WORK/minife"
    git --git-dir="$MG" archive "$MINIFE_COMMIT" ref/src ref/utils ref/fem | tar -x -C "$WORK/minife"
    ( cd "$WORK/minife/ref/src" && bash ./generate_info_header smpicxx "-O2" miniFE MINIFE >/dev/null \
        && smpicxx -O2 -I. -I../utils -I../fem -DMINIFE_SCALAR=double -DMINIFE_LOCAL_ORDINAL=int \
           -DMINIFE_GLOBAL_ORDINAL=int -DMINIFE_CSR_MATRIX -DHAVE_MPI -DMPICH_IGNORE_CXX_SEEK -DMINIFE_REPORT_RUSAGE \
           -DMINIFE_INFO=1 -DMINIFE_KERNELS=0 -o "$BIN/miniFE.x" main.cpp ../utils/BoxPartition.cpp YAML_Doc.cpp \
           YAML_Element.cpp ../utils/param_utils.cpp ../utils/utils.cpp ../utils/mytimer.cpp )
fi
# LULESH 2.0 (LLNL): the 5 .cc of its Makefile, MPI without OpenMP (-DUSE_MPI=1 -DUSE_OPENMP=0; -O2 instead of
# its -g -O3 -fopenmp).
if want lulesh; then
    LG="$(gitdir "$LULESH_MIRROR")"; mkdir -p "$WORK/lulesh"
    for f in lulesh.cc lulesh-comm.cc lulesh-viz.cc lulesh-util.cc lulesh-init.cc lulesh.h lulesh_tuple.h; do
        extract "$LG" "$LULESH_COMMIT" "$f" "$WORK/lulesh"
    done
    ( cd "$WORK/lulesh" && smpicxx -O2 -DUSE_MPI=1 -DUSE_OPENMP=0 -I. -o "$BIN/lulesh2.0" lulesh.cc lulesh-comm.cc \
        lulesh-viz.cc lulesh-util.cc lulesh-init.cc -lm )
fi
SMPI_VERSION="$(smpicc --version 2>&1 | head -1)"   # "SimGrid version 3.32"

python3 - "$WORK/prov.json" "$SIMGRID_COMMIT" "$OSU_COMMIT" "$SMPI_VERSION" "$HPCCG_COMMIT" "$COMD_COMMIT" \
    "$MINIFE_COMMIT" "$LULESH_COMMIT" <<'EOF'
import json, sys
path, sg, osu, ver, hpccg, comd, minife, lulesh = sys.argv[1:]
def p(repo, commit, path, extra=""):
    return {"short": f"{repo}@{commit[:12]}:{path}", "long": f"{repo}@{commit}:{path}{extra}"}
nas = "examples/smpi/NAS"
json.dump({
    "simgrid_nas_ep": p("simgrid/simgrid", sg, f"{nas}/ep.c", f" (+ {nas}/nas_common.c; size knob NPB_EP_M added by patch_sizes.py)"),
    "simgrid_nas_is": p("simgrid/simgrid", sg, f"{nas}/is.c", f" (+ {nas}/nas_common.c; size knob NPB_IS_LOG2 added by patch_sizes.py)"),
    "simgrid_gemm": p("simgrid/simgrid", sg, "examples/smpi/gemm/gemm.c"),
    "osu_allreduce": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_allreduce.c", " (+ osu_coll.c)"),
    "osu_bcast": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_bcast.c", " (+ osu_coll.c)"),
    "osu_alltoall": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_alltoall.c", " (+ osu_coll.c)"),
    "osu_allgather": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_allgather.c", " (+ osu_coll.c)"),
    "osu_reduce": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_reduce.c", " (+ osu_coll.c)"),
    "osu_gather": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_gather.c", " (+ osu_coll.c)"),
    "osu_scatter": p("forresti/osu-micro-benchmarks", osu, "mpi/collective/osu_scatter.c", " (+ osu_coll.c)"),
    "hpccg": p("Mantevo/HPCCG", hpccg, "main.cpp", " (+ the 13 other .cpp of its Makefile, built with -DUSING_MPI)"),
    "comd": p("ECP-copa/CoMD", comd, "src-mpi/CoMD.c", " (+ the other .c of src-mpi, built with -std=c99 -DDOUBLE -DDO_MPI)"),
    "minife": p("Mantevo/miniFE", minife, "ref/src/main.cpp", " (+ the rest of ref/src, ref/utils and ref/fem, built with "
                "-DHAVE_MPI -DMINIFE_CSR_MATRIX -DMINIFE_SCALAR=double -DMINIFE_LOCAL_ORDINAL=int -DMINIFE_GLOBAL_ORDINAL=int)"),
    "lulesh": p("LLNL/LULESH", lulesh, "lulesh.cc", " (+ lulesh-comm/-viz/-util/-init.cc, built with -DUSE_MPI=1 -DUSE_OPENMP=0)"),
    "smpicc": f"smpicc -O2 ({ver}, Debian libsimgrid-dev 3.32-2+b2)",
    "cc_hpccg": f"smpicxx -O2 ({ver}, Debian libsimgrid-dev 3.32-2+b2)",
    "cc_minife": f"smpicxx -O2 ({ver}, Debian libsimgrid-dev 3.32-2+b2)",
    "cc_lulesh": f"smpicxx -O2 ({ver}, Debian libsimgrid-dev 3.32-2+b2)",
}, open(path, "w"), indent=1)
EOF

mkdir -p "$OUT"
ONLY=()
if [ "$#" -gt 0 ]; then ONLY=(--only "$@"); else rm -f "$OUT/failures.txt"; fi
python3 "$HERE/sweep.py" --bindir "$BIN" --outdir "$OUT" --jobs "$JOBS" --provenance-json "$WORK/prov.json" \
    --platform "fast=$ROOT/examples/platforms/fast_cluster.xml" \
    --platform "slow=$ROOT/examples/platforms/slow_cluster.xml" \
    --platform "torus=$HERE/torus_cluster.xml" \
    "${ONLY[@]}"
