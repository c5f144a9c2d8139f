#!/bin/bash
# train_cuda.sh: training with --device cuda follows --device cpu step by step: the same seed,
# 40 steps, every step's loss within 1e-3 relative, for local (SGD and Adam), the ring (2 ranks
# sharing the GPU, psring's ring and MPI_Allreduce) and the PS (1 server, 2 GPU workers), and the
# final test accuracy within 0.5 points; the ring's bytes are its cost 2(N-1)/N n per step on either
# CPU path (PSRING_RING_SHM on or off) and on the GPU. SKIP without a GPU.
. "$(dirname "$0")/common.sh"
PROBE=$TOP_BUILDDIR/tests/test_ring_cuda
[[ -x $PROBE ]] || skip "tests/test_ring_cuda not built (no CUDA)"
"$PROBE" --probe || skip "no usable CUDA device"
DATA=$(find_mnist) || skip "no MNIST"
scratch
common=(--data "$DATA" --layers 784,256,128,10 --batch 64 --steps 40 --epochs 1 --train-limit 4096 --test-limit 2000 --seed 7)
run() { # name launcher... -- trainer args
  local name=$1; shift
  timeout -k 5 300 "$@" "${common[@]}" --loss-log "$SCRATCH/$name.loss" --csv "$SCRATCH/$name.csv" >"$SCRATCH/$name.out" 2>&1 \
    || { cat "$SCRATCH/$name.out"; fail "$name"; }
}
acc() { csv_col "$1" test_accuracy; }
check_pair() { # name
  compare_losses "$SCRATCH/$1-cpu.loss" "$SCRATCH/$1-cuda.loss" 1e-3 || fail "$1: cuda losses differ from cpu"
  grep -q "device" "$SCRATCH/$1-cuda.csv" && grep -q ",cuda," "$SCRATCH/$1-cuda.csv" || fail "$1: csv has no device cuda"
  awk -v a="$(acc "$SCRATCH/$1-cpu.csv")" -v b="$(acc "$SCRATCH/$1-cuda.csv")" 'BEGIN { d=a-b; if (d<0) d=-d; exit !(d <= 0.005) }' \
    || fail "$1: test accuracy cpu $(acc "$SCRATCH/$1-cpu.csv") vs cuda $(acc "$SCRATCH/$1-cuda.csv")"
  echo "ok: $1 (accuracy $(acc "$SCRATCH/$1-cuda.csv"))"
}
export PSRING_RING_SHM=${PSRING_RING_SHM:-1}   # the CPU ring's path, the same on every rank
MPI=("$MPIRUN" $MPIRUN_FLAGS -x PSRING_RING_SHM -np 2)
MPI3=("$MPIRUN" $MPIRUN_FLAGS -np 3)
for dev in cpu cuda; do
  run local-$dev "$TRAIN" --device $dev
  run adam-$dev "$TRAIN" --device $dev --optimizer adam --lr 0.001
  run ring-$dev "${MPI[@]}" "$TRAIN" --topology ring --device $dev
  run mpi-$dev "${MPI[@]}" "$TRAIN" --topology ring --allreduce mpi --device $dev
  run ps-$dev "${MPI3[@]}" "$TRAIN" --topology ps --servers 1 --device $dev
done
for name in local adam ring mpi ps; do check_pair $name; done
# the ring's bytes against its cost 2(N-1)/N n per step (ring_bytes_check): the GPU ring on one
# host loads and stores through CUDA IPC (counted as the CPU's load/store window), and must have
# taken that path; --allreduce mpi counts the messages' payload; the CPU ring counts its path's
# way, the load/store window on one host unless PSRING_RING_SHM=0 (then messages too)
cpu_mode=$([[ ${PSRING_RING_SHM:-1} == 0 ]] && echo msg || echo shm)
ring_bytes_check "$SCRATCH/ring-cpu.csv" "$cpu_mode" || fail "ring --device cpu: bytes are not the ring's cost"
[[ $(csv_col "$SCRATCH/ring-cuda.csv" ring_path) == ipc ]] || fail "ring --device cuda: ring_path $(csv_col "$SCRATCH/ring-cuda.csv" ring_path), not ipc"
ring_bytes_check "$SCRATCH/ring-cuda.csv" auto || fail "ring-cuda: bytes are not the ring's cost"
for name in mpi-cuda mpi-cpu; do
  ring_bytes_check "$SCRATCH/$name.csv" msg || fail "$name: bytes are not the ring's cost"
done
pass "--device cuda matches --device cpu (local sgd/adam, ring, mpi, ps)"
