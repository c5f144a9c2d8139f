#!/bin/bash
# ring_allreduce.sh: tests/test_ring under mpirun for N = 1, 2, 3, 4 (counts 0, 1, N-1, N, N+1,
# 2N+1, 97, 4099 and 1000003, chunks of 1, 3, 1024 and 65536 elements, float and fp16, and the
# ring against MPI_Allreduce; the load/store path on ring_buffer_alloc buffers, and a rank that
# passes a heap buffer while the others pass window buffers). Each N under a time limit: a hang
# fails instead of stalling.
. "$(dirname "$0")/common.sh"
scratch
need_prog "$TOP_BUILDDIR/tests/test_ring"
for n in 1 2 3 4; do
    mpi 240 -np $n "$TOP_BUILDDIR/tests/test_ring" || fail "test_ring with N=$n (status $?)"
done
# a heap buffer on one rank and shared-window buffers on the others: one clear line, no hang
for n in 2 3; do
    if mpi 60 -np $n "$TOP_BUILDDIR/tests/test_ring" --mixed >"$SCRATCH/mixed.log" 2>&1; then
        cat "$SCRATCH/mixed.log"; fail "test_ring --mixed with N=$n returned 0"
    fi
    grep -q "every rank must use the same kind of buffer" "$SCRATCH/mixed.log" || { cat "$SCRATCH/mixed.log"; fail "test_ring --mixed with N=$n: no clear error"; }
done
echo "ring_allreduce: ok"
