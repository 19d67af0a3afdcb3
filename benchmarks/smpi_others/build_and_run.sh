#!/usr/bin/env bash
# Build MPI programs written by others with SimGrid's smpicc and run their n x p sweeps under SMPI on three
# platforms; writes benchmarks/data/smpi_others/<program>_<platform>.csv, tasks.json and failures.txt.
# No source is kept in this repository: the programs are extracted from bare git mirrors of their public
# repositories into a temporary directory, at the pinned commits below.
#
#   SIMGRID_MIRROR=/path/to/simgrid.git OSU_MIRROR=/path/to/osu.git benchmarks/smpi_others/build_and_run.sh
#   benchmarks/smpi_others/build_and_run.sh nas_ep gemm      # only these programs (others' CSVs kept)
#
# SIMGRID_MIRROR: a clone (bare or not) of github.com/simgrid/simgrid holding commit $SIMGRID_COMMIT;
# OSU_MIRROR: of github.com/forresti/osu-micro-benchmarks holding $OSU_COMMIT (OSU Micro-Benchmarks 5.3).
# Needs smpicc/smpirun (apt-get install -y libsimgrid-dev simgrid; SimGrid 3.32 here) and python3.
# JOBS (default 2) runs at once; about 11 minutes on 2 cores (nas_is 5, osu_alltoall 2.3, osu_allgather 1.1).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${OUT:-$ROOT/benchmarks/data/smpi_others}"
SIMGRID_MIRROR="${SIMGRID_MIRROR:-/work/.mirror/simgrid+simgrid/repo}"
OSU_MIRROR="${OSU_MIRROR:-/work/.mirror/forresti+osu-micro-benchmarks/repo}"
SIMGRID_COMMIT=12a63c78cdaa56b78836c95c6a18484f367dca38
OSU_COMMIT=993f966d750386dd813a3d970b83c7c4938bb926
JOBS="${JOBS:-2}"

command -v smpicc >/dev/null || { echo "smpicc not found: apt-get install -y libsimgrid-dev simgrid" >&2; exit 1; }
gitdir() { if [ -d "$1/.git" ]; then echo "$1/.git"; else echo "$1"; fi; }
SG="$(gitdir "$SIMGRID_MIRROR")"; OSU="$(gitdir "$OSU_MIRROR")"

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
SMPI_VERSION="$(smpicc --version 2>&1 | head -1)"   # "SimGrid version 3.32"

python3 - "$WORK/prov.json" "$SIMGRID_COMMIT" "$OSU_COMMIT" "$SMPI_VERSION" <<'EOF'
import json, sys
path, sg, osu, ver = sys.argv[1:]
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
    "smpicc": f"smpicc -O2 ({ver}, Debian libsimgrid-dev 3.32-2+b2)",
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
