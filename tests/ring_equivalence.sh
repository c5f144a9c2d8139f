#!/bin/bash
# ring_equivalence.sh: data-parallel training on the ring must follow the single-process run
# step for step. Same seed and global batch: `local --batch 64` against `ring -np 2 --scaling
# strong --batch 64` (2 workers x 32) and -np 4 (4 x 16); every one of the 50 per-step losses
# (averaged over workers) within 1e-5 relative. Also with --overlap (--bucket-mb 0.005 puts the
# last layer in a bucket of its own, sent while the first layer's backward runs), with
# --allreduce mpi, and with --accumulate 2: K micro-batches of b
# samples per worker per step, so ring 2 workers x 32 x accumulate 2 == local --batch 128.
# fp16 cannot match to 1e-5; it must stay within 2% of the float loss at every step.
. "$(dirname "$0")/common.sh"
scratch
need_prog "$TRAIN"
need_mnist
COMMON="--data $MNIST_DIR --layers 784,256,10 --train-limit 3200 --steps 50 --seed 11 --quiet --test-limit 500"

run_local() {   # run_local BATCH OUT
    timeout 120 "$TRAIN" $COMMON --batch "$1" --loss-log "$2" > "$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "local --batch $1"; }
}

run_local 64 "$SCRATCH/local64.csv"
run_local 128 "$SCRATCH/local128.csv"
run_ring 2 "$SCRATCH/r2.csv" --batch 64
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r2.csv" 1e-5 "ring -np 2 (2x32) vs local 64"
run_ring 4 "$SCRATCH/r4.csv" --batch 64
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r4.csv" 1e-5 "ring -np 4 (4x16) vs local 64"
run_ring 2 "$SCRATCH/r2o.csv" --batch 64 --overlap --bucket-mb 0.005
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r2o.csv" 1e-5 "ring -np 2 --overlap --bucket-mb 0.005 vs local 64"
run_ring 4 "$SCRATCH/r4o.csv" --batch 64 --overlap --bucket-mb 0.005
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r4o.csv" 1e-5 "ring -np 4 --overlap --bucket-mb 0.005 vs local 64"
run_ring 2 "$SCRATCH/r2m.csv" --batch 64 --allreduce mpi
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r2m.csv" 1e-5 "ring -np 2 --allreduce mpi vs local 64"
run_ring 2 "$SCRATCH/r2a.csv" --batch 64 --accumulate 2
compare_steps "$SCRATCH/local128.csv" "$SCRATCH/r2a.csv" 1e-5 "ring -np 2 (2x32, accumulate 2) vs local 128"
run_ring 2 "$SCRATCH/r2ao.csv" --batch 64 --accumulate 2 --overlap --bucket-mb 0.005
compare_steps "$SCRATCH/local128.csv" "$SCRATCH/r2ao.csv" 1e-5 "ring -np 2 (2x32, accumulate 2, overlap) vs local 128"
run_ring 2 "$SCRATCH/r2h.csv" --batch 64 --fp16
compare_steps "$SCRATCH/local64.csv" "$SCRATCH/r2h.csv" 2e-2 "ring -np 2 --fp16 vs local 64 (2%)"
# fp16 must really change the numbers (else halves never went on the wire)
if cmp -s "$SCRATCH/r2.csv" "$SCRATCH/r2h.csv"; then fail "--fp16 gave bit-identical losses to float"; fi
echo "ring_equivalence: ok"
