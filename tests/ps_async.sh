#!/bin/bash
# ps_async.sh: async PS (1 server, 3 workers) finishes one epoch on 10k samples and learns
# (test accuracy above 85%), and reports its staleness. --lr-scale none: with the default linear
# scaling (lr 0.15 for 3 workers) and momentum 0.9, async diverges (staleness acts as extra momentum).
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
timeout 180 $MPIRUN $MPIRUN_FLAGS -np 4 "$TRAIN" --topology ps --servers 1 --sync async --batch 32 --epochs 1 --lr-scale none \
  --train-limit 10000 --data "$DATA" --quiet --transport ipc >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "async run failed"; }
acc=$(sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$SCRATCH/out" | tail -1)
[[ -n $acc ]] || { cat "$SCRATCH/out"; fail "no accuracy in the output"; }
awk -v a="$acc" 'BEGIN { exit !(a > 85) }' || fail "async accuracy $acc% <= 85%"
grep -q "^ps server 0: sync=async" "$SCRATCH/out" || fail "no server report"
grep -q "^ps server 0: staleness histogram" "$SCRATCH/out" || fail "no staleness histogram"
pass "async learns: $acc%"
