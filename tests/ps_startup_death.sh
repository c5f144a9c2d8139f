#!/bin/bash
# ps_startup_death.sh: a process that dies while the job starts, under mpirun --enable-recovery
# (what the launcher uses for the async PS, so that a dead worker does not end the job). mpirun
# then does not end the job either, and the others wait in MPI start-up, which has no timeout of
# its own: before the start-up watchdog they waited forever. Now they give up after 3 peer
# timeouts (at least 30 s), one line says why, and nothing is left running.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
out=$SCRATCH/out
t0=$SECONDS
# rank 3 is a process that exits at once, before MPI_Init: a worker lost at launch
timeout -k 5 120 $MPIRUN $MPIRUN_FLAGS --enable-recovery -np 3 "$TRAIN" --topology ps --servers 1 --sync async \
  --batch 32 --epochs 1 --train-limit 3200 --data "$DATA" --peer-timeout 2 --csv "$SCRATCH/run.csv" \
  : -np 1 sh -c 'exit 1' >"$out" 2>&1
rc=$?
elapsed=$((SECONDS - t0))
(( rc != 124 && rc != 137 )) || { cat "$out"; fail "the job hung: killed after ${elapsed}s"; }
(( elapsed <= 60 )) || { cat "$out"; fail "the job took ${elapsed}s to give up (deadline 30 s)"; }
n=$(grep -c "psring: ps start-up: not every process arrived within 30 s" "$out")
[[ $n == 1 ]] || { cat "$out"; fail "want the start-up line once, got it $n times"; }
! grep -q "test accuracy" "$out" || { cat "$out"; fail "training completed without a worker"; }
sleep 1
# this job's processes carry the scratch CSV path on their command line
pgrep -f "$SCRATCH/run.csv" >/dev/null && { pkill -9 -f "$SCRATCH/run.csv"; fail "psring-train processes left behind"; }
echo "ended in ${elapsed}s: $(grep -m1 'ps start-up' "$out")"
pass "a process lost at start-up ends the job within the deadline, said once"
