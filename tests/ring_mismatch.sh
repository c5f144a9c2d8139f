#!/bin/bash
# ring_mismatch.sh: ranks started with different options (here --layers, via mpirun MPMD) must
# fail fast: one clear line naming the disagreeing rank, exit status 2, no hang (the whole run is
# under a 60 s timeout; it takes well under a second).
. "$(dirname "$0")/common.sh"
scratch
need_prog "$TRAIN"
need_mnist
C="--topology ring --data $MNIST_DIR --train-limit 640 --steps 5 --quiet"
mpi 60 -np 2 "$TRAIN" $C --layers 784,64,10 : -np 1 "$TRAIN" $C --layers 784,32,10 > "$SCRATCH/out.txt" 2>&1
rc=$?
cat "$SCRATCH/out.txt"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "mismatched --layers: the job hung (killed by timeout)"
[ $rc -eq 2 ] || fail "mismatched --layers: exit status $rc, want 2"
grep -q "options differ across ranks: rank 2 disagrees with rank 0" "$SCRATCH/out.txt" \
    || fail "mismatched --layers: no line naming rank 2"
# and the same flags everywhere still start
mpi 60 -np 2 "$TRAIN" $C --layers 784,32,10 > "$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "matching options failed"; }
echo "ring_mismatch: ok"
