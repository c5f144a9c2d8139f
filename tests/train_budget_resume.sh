#!/bin/bash
# train_budget_resume.sh: a run that ends on a sample budget (PS async: the budget driver, where
# each worker draws its share across epochs) resumes from a checkpoint to the same final
# parameters, bit for bit, as an uninterrupted run: stopped mid-epoch after crossing an epoch's
# end, and exactly at an epoch's end. One worker, so the order of updates is fixed; 640 samples
# in batches of 32, so every stop falls on a batch boundary (the resume point counts batches).
. "$(dirname "$0")/common.sh"
need_mnist
scratch

# run OUT ARGS...: 1 server, 1 worker, a budget of 2000 samples (62 steps of 32 and one of 16)
run() {
  local out=$1; shift
  mpi 120 $MPIRUN_FLAGS -np 2 "$TRAIN" --topology ps --servers 1 --sync async --batch 32 --samples 2000 \
    --layers 784,32,10 --lr-scale none --train-limit 640 --test-limit 200 --data "$MNIST_DIR" --transport ipc \
    "$@" >"$out" 2>&1 || { cat "$out"; fail "run $* failed"; }
}

run "$SCRATCH/full.out" --quiet --dump-params "$SCRATCH/full.bin"
# 20 steps per epoch: 25 stops in the second epoch, 20 exactly at the end of the first
for stop in 25 20; do
  rm -f "$SCRATCH/ck"
  run "$SCRATCH/stop.out" --quiet --steps "$stop" --checkpoint "$SCRATCH/ck"
  run "$SCRATCH/resumed.out" --resume "$SCRATCH/ck" --dump-params "$SCRATCH/resumed.bin"
  grep -q "^resumed from .* at step $stop " "$SCRATCH/resumed.out" || { cat "$SCRATCH/resumed.out"; fail "no resumed line at step $stop"; }
  # the budget left is what worker 0 had not drawn yet
  grep -q "^ps server 0: samples=$((2000 - 32 * stop)) budget=$((2000 - 32 * stop))\$" "$SCRATCH/resumed.out" \
    || { cat "$SCRATCH/resumed.out"; fail "resumed from step $stop: server 0 did not hand out the $((2000 - 32 * stop)) samples left"; }
  cmp -s "$SCRATCH/full.bin" "$SCRATCH/resumed.bin" || fail "resumed from step $stop: parameters differ from the uninterrupted run"
done
pass "a budget run resumed mid-epoch and at an epoch's end ends bit for bit as an uninterrupted one"
