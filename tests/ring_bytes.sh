#!/bin/bash
# ring_bytes.sh: the bytes a ring run reports (bytes_sent/recv_per_worker) are the ring's cost,
# 2(N-1)/N x n floats per rank and step, on each of the CPU ring's paths: messages
# (PSRING_RING_SHM=0) and the load/store ring on one host (the default), with 2 and 3 workers.
# The two paths count differently (ring_bytes_check in common.sh says how), so a check that wants
# one run's bytes_sent equal to another's must compare runs on the same path: tests/train_cuda.sh
# compares the GPU ring (messages) with the formula, not with the CPU ring's shared window.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "no MNIST"
scratch
common=(--topology ring --data "$DATA" --layers 784,64,10 --batch 32 --steps 12 --epochs 1 --train-limit 2048
        --test-limit 200 --seed 3 --quiet)
for np in 2 3; do
  for shm in 1 0; do
    csv=$SCRATCH/np$np-shm$shm.csv
    PSRING_RING_SHM=$shm timeout -k 5 120 "$MPIRUN" $MPIRUN_FLAGS -x PSRING_RING_SHM -np $np "$TRAIN" "${common[@]}" \
      --csv "$csv" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ring -np $np PSRING_RING_SHM=$shm"; }
    mode=$([[ $shm == 1 ]] && echo shm || echo msg)
    ring_bytes_check "$csv" $mode || fail "ring -np $np PSRING_RING_SHM=$shm: bytes are not the ring's cost"
  done
  # the paths really differ: the load/store ring's bytes_sent is half the messages' (which is why
  # comparing the GPU ring's bytes with the default CPU run's could never hold)
  a=$(csv_col "$SCRATCH/np$np-shm1.csv" bytes_sent_per_worker) b=$(csv_col "$SCRATCH/np$np-shm0.csv" bytes_sent_per_worker)
  awk -v a="$a" -v b="$b" -v s="$(csv_col "$SCRATCH/np$np-shm0.csv" steps)" -v N=$np \
    'BEGIN { d = 2 * a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 2 * (N - 1) * 4 * s) }' \
    || fail "ring -np $np: bytes_sent load/store $a, messages $b: want messages = 2 x load/store"
  echo "ok: -np $np: messages $b B sent, load/store $a B stored into peers"
done
pass "ring bytes = 2(N-1)/N n per step on both CPU paths (PSRING_RING_SHM on and off)"
