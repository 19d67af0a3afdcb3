#!/usr/bin/env bash
# Regenerate the bundled datasets in examples/data/ (and the demo dataset automodel/demo/cg_fast.csv) by running the MPI workloads under SimGrid SMPI
# through `automodel run`. Needs smpicc/smpirun (apt-get install -y libsimgrid-dev) and automodel
# importable (run from the repository root or pip install -e .). Takes a few minutes on 2 cores.
#
#   examples/regenerate_data.sh            # all campaigns, from scratch
#   examples/regenerate_data.sh jacobi_loaded   # only the named campaign(s)
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
    if [ "${#SELECTED[@]}" -gt 0 ] && [[ ! " ${SELECTED[*]} " =~ " $name " ]]; then return; fi
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
