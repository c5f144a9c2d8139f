#!/bin/bash
# ps_ssp.sh: with worker 0 slowed down, SSP lets the fast worker run ahead by at most K clocks
# (and it does run ahead: the bound is reached, so the test can tell a barrier from SSP). The
# server prints "ps server 0: sync=ssp staleness_bound=K ... staleness_max=X max_clock_gap=Y".
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
for K in 1 3; do
  timeout 120 $MPIRUN $MPIRUN_FLAGS -np 3 "$TRAIN" --topology ps --servers 1 --sync ssp --staleness $K \
    --slow-rank 0 --slow-ms 20 --batch 32 --steps 40 --train-limit 3200 --data "$DATA" --quiet \
    >"$SCRATCH/ssp.out" 2>&1 || { cat "$SCRATCH/ssp.out"; fail "ssp run (K=$K) failed"; }
  line=$(grep "^ps server 0: sync=ssp" "$SCRATCH/ssp.out") || { cat "$SCRATCH/ssp.out"; fail "no ssp report line"; }
  gap=$(sed -n 's/.*max_clock_gap=\([0-9]*\).*/\1/p' <<<"$line")
  smax=$(sed -n 's/.*staleness_max=\([0-9]*\).*/\1/p' <<<"$line")
  [[ -n $gap && -n $smax ]] || fail "cannot parse: $line"
  (( gap <= K )) || fail "K=$K: a worker ran $gap clocks ahead of the slowest"
  (( smax <= K )) || fail "K=$K: staleness $smax > bound"
  (( gap == K )) || fail "K=$K: the fast worker never reached the bound (gap $gap): is the slow worker slow?"
  echo "K=$K: $line"
done
pass "ssp keeps workers within K clocks"
