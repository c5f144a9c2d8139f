#!/bin/bash
# ring_cuda.sh: the GPU ring, on its IPC path (one kernel per GPU, and one per rank) and its staged
# path, equals the CPU ring bit for bit with 2 and 4 ranks sharing the GPUs there are
# (tests/test_ring_cuda.c); a buffer IPC cannot share moves the ring to the staged path with one
# line, once; NCCL sums or refuses as it should. SKIP without a GPU.
. "$(dirname "$0")/common.sh"
scratch
PROG=$TOP_BUILDDIR/tests/test_ring_cuda
need_prog "$PROG"
"$PROG" --probe || { echo "SKIP: no usable CUDA device" >&2; exit 77; }
# 2 and 4 ranks with one IPC kernel per GPU (the default), then 4 with one per rank
for run in 2 4 4:rank; do
    np=${run%%:*}
    if [[ $run == *:rank ]]; then export PSRING_RING_IPC_KERNELS=rank; else unset PSRING_RING_IPC_KERNELS; fi
    mpi 300 -np "$np" "$PROG" >"$SCRATCH/out.$np" 2>&1 || { cat "$SCRATCH/out.$np"; fail "test_ring_cuda -np $np ($run)"; }
    grep -q "ring_cuda vs ring, $np ranks: 0 elements differ" "$SCRATCH/out.$np" || { cat "$SCRATCH/out.$np"; fail "no verdict from -np $np"; }
    n=$(grep -c "device ring: no CUDA IPC (rank [0-9]*'s buffer" "$SCRATCH/out.$np" || true)
    [ "$n" = 1 ] || { cat "$SCRATCH/out.$np"; fail "-np $np: the move to the staged path said $n times, not once"; }
    cat "$SCRATCH/out.$np"
done
unset PSRING_RING_IPC_KERNELS
echo "PASS: GPU ring (ipc, one kernel per GPU or per rank, and staged) == CPU ring with 2 and 4 ranks"
