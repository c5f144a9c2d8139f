#!/usr/bin/env bash
# Resuming from a checkpoint gives the same final parameters, bit for bit, as an uninterrupted
# run: stopped mid-epoch and exactly on an epoch boundary, with momentum and weight decay on.
source "$(dirname "$0")/common.sh"
scratch
data=$(find_mnist) || skip "no MNIST (run experiments/get-mnist)"
common=(--data "$data" --layers 784,64,10 --train-limit 2000 --epochs 3 --batch 64 --weight-decay 1e-4 --quiet)
# 2000 samples / 64 = 32 steps per epoch (last batch partial), 96 in all
"$TRAIN" "${common[@]}" --dump-params "$SCRATCH/full.bin" >/dev/null || fail "uninterrupted run failed"
for stop in 50 64 1; do
  rm -f "$SCRATCH/ck"
  "$TRAIN" "${common[@]}" --steps "$stop" --checkpoint "$SCRATCH/ck" >/dev/null || fail "run to step $stop failed"
  "$TRAIN" "${common[@]}" --resume "$SCRATCH/ck" --dump-params "$SCRATCH/resumed.bin" >/dev/null || fail "resume from $stop failed"
  cmp -s "$SCRATCH/full.bin" "$SCRATCH/resumed.bin" || fail "resumed from step $stop: parameters differ from the uninterrupted run"
done
# and the parameters did change from the initial ones (the comparison is not vacuous)
"$TRAIN" "${common[@]}" --steps 1 --lr 1e-9 --dump-params "$SCRATCH/init.bin" >/dev/null
cmp -s "$SCRATCH/full.bin" "$SCRATCH/init.bin" && fail "training did not change the parameters"
# a mid-epoch checkpoint under another data layout would silently train on other samples: refused
rm -f "$SCRATCH/ck"
"$TRAIN" "${common[@]}" --steps 50 --checkpoint "$SCRATCH/ck" >/dev/null || fail "run to step 50 failed"
for other in "--batch 32" "--sampler shuffle-then-shard" "--train-limit 1999"; do
  # shellcheck disable=SC2086
  expect_bad "different data layout" "${common[@]}" $other --resume "$SCRATCH/ck"
done
# an end-of-epoch checkpoint may continue with another batch size (each epoch starts afresh)
rm -f "$SCRATCH/ck"
"$TRAIN" "${common[@]}" --steps 64 --checkpoint "$SCRATCH/ck" >/dev/null || fail "run to step 64 failed"
"$TRAIN" "${common[@]}" --batch 32 --resume "$SCRATCH/ck" >/dev/null || fail "resume at an epoch boundary with --batch 32 was refused"
pass "resume is bit-exact at steps 1, 50 (mid-epoch) and 64 (epoch boundary); other layouts refused mid-epoch"
