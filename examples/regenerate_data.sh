#!/usr/bin/env bash
# Regenerate the bundled datasets in examples/data/ (and the demo dataset automodel/demo/cg_fast.csv) by running the MPI workloads under SimGrid SMPI
# through `automodel run`. Needs smpicc/smpirun (apt-get install -y libsimgrid-dev) and automodel
# importable (run from the repository root or pip install -e .). Takes a few minutes on 2 cores.
#
#   examples/regenerate_data.sh            # all campaigns, from scratch
#   examples/regenerate_data.sh jacobi_loaded   # only the named campaign(s)
#   examples/regenerate_data.sh sweeps     # only the n x p sweeps (examples/data/sweeps/, benchmarks.workloads)
#   examples/regenerate_data.sh sweeps/cg_slow  # one sweep
#   RESUME=1 examples/regenerate_data.sh   # keep existing CSVs and finish interrupted campaigns
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
WL="$HERE/workloads"
PLAT="$HERE/platforms"
DATA="$HERE/data"
PYTHON="${PYTHON:-python3}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

command -v smpicc >/dev/null || { echo "smpicc not found: apt-get install -y libsimgrid-dev" >&2; exit 1; }
make -s -C "$WL" MPICC=smpicc >/dev/null
mkdir -p "$DATA"

# Computation is modelled (smpi_execute_flops), so simulated times do not depend on this machine.
SMPI="smpirun --cfg=smpi/simulate-computation:no --log=root.thres:critical"
COMMON=(--time-regex 'time=(\S+)' --capture 'comp=comp=(\S+)' --capture 'comm=comm=(\S+)'
        --timeout 300 --no-fit --no-cpu)
LOAD=(--capture 'cpu=cpu=(\S+)' --capture 'bw=bw=(\S+)')

campaign() {  # name, then `automodel run` arguments
    local name="$1"; shift
    local out="${DEST:-$DATA}/$name.csv"
    # selected by its name, or by its set (the part before '/': "sweeps")
    if [ "${#SELECTED[@]}" -gt 0 ] && [[ ! " ${SELECTED[*]} " =~ " $name " ]] \
        && [[ ! " ${SELECTED[*]} " =~ " ${name%%/*} " ]]; then return; fi
    mkdir -p "$(dirname "$out")"
    [ "${RESUME:-0}" = 1 ] || rm -f "$out"
    echo "== $name" >&2
    "$PYTHON" -m automodel run "$@" "${COMMON[@]}" -o "$out"
}
SELECTED=("$@")

campaign matmul_fast \
    --cmd "$SMPI -np {p} -platform $PLAT/fast_cluster.xml $WL/matmul {n}" \
    --n 64:384:6 --p 1:256:*2
campaign jacobi_slow \
    --cmd "$SMPI -np {p} -platform $PLAT/slow_cluster.xml $WL/jacobi {n} 20" \
    --n 256:1024:4 --p 1:256:*2
DEST="$HERE/../automodel/demo" campaign cg_fast \
    --cmd "$SMPI -np {p} -platform $PLAT/fast_cluster.xml $WL/cg {n} 50" \
    --n 50000:400000:4:log --p 1:256:*2
campaign bucketsort_slow \
    --cmd "$SMPI -np {p} -platform $PLAT/slow_cluster.xml $WL/bucketsort {n}" \
    --n 50000:200000:4 --p 1:64:*2
campaign kmeans_loaded "${LOAD[@]}" \
    --cmd "$SMPI -np {p} -platform $PLAT/loaded_cluster.xml $WL/kmeans {n} {k} 10 start={index}" \
    --n 50000:200000:4 --p 1:256:*2 --param k=4,16
campaign jacobi_loaded "${LOAD[@]}" \
    --cmd "$SMPI -np {p} -platform $PLAT/loaded_cluster.xml $WL/jacobi {n} 20 start={index}" \
    --n 256:1024:4 --p 1:256:*2 --reps 2

# The sweeps (benchmarks/workloads.py): every workload on the fast and slow platforms, 6 n x p = 1..256,
# one run per point (SMPI is deterministic: a point run twice gives the same times). n extends the
# campaigns above to 6 values (same spacing); kmeans with k = 16. bucketsort exchanges its keys with
# the pairwise MPI_Alltoallv (p - 1 steps of one message per rank): SMPI's default, every message at
# once, takes 6 s of simulation per run at p = 128 and over 10 minutes at p = 256.
sweep() {  # workload, n range, arguments after {n}, extra smpirun options
    local wl="$1" n="$2" args="$3" opts="${4:-}" plat
    for plat in fast slow; do
        campaign "sweeps/${wl}_$plat" \
            --cmd "$SMPI $opts -np {p} -platform $PLAT/${plat}_cluster.xml $WL/$wl {n}${args:+ $args}" \
            --n "$n" --p 1:256:*2
    done
}
sweep cg 50000:1600000:6:log 50
sweep jacobi 256:1536:6 20
sweep matmul 64:384:6 ""
sweep bucketsort 50000:300000:6 "" --cfg=smpi/alltoallv:pair
sweep kmeans 50000:300000:6 "16 10"
