#!/bin/bash
# ps_budget.sh: async and ssp end on a sample budget the workers share, not on epochs they all
# finish: the servers hand it out exactly (server 0's count equals the budget, and so does the sum
# of what the workers say they trained on, a last share shorter than a step included), and under
# async a worker slowed down by --slow-ms takes fewer steps than the others instead of holding
# them back. bsp keeps its epochs (tests/ps_bsp_equiv.sh).
. "$(dirname "$0")/common.sh"
need_mnist
scratch

# run SYNC OUT ARGS...: 2 servers, 3 workers; the budget is counted at server 0 only
run() {
  local sync=$1 out=$2; shift 2
  mpi 180 $MPIRUN_FLAGS -np 5 "$TRAIN" --topology ps --servers 2 --sync "$sync" --batch 32 \
    --layers 784,32,10 --lr-scale none --train-limit 3000 --data "$MNIST_DIR" --transport ipc "$@" >"$out" 2>&1 \
    || { cat "$out"; fail "$sync run failed"; }
}

# exact: server 0's count and the workers' sum both equal the budget (4001 = 125 steps of 32 + 1)
check_exact() { # out budget
  local line got sum
  line=$(grep "^ps server 0: samples=" "$1") || { cat "$1"; fail "no samples line from server 0"; }
  got=$(sed -n 's/.*samples=\([0-9]*\) budget=\([0-9]*\).*/\1 \2/p' <<<"$line")
  [[ $got == "$2 $2" ]] || { cat "$1"; fail "server 0 counted '$got', expected samples and budget $2"; }
  sum=$(awk '/^worker [0-9]+: [0-9]+ steps, [0-9]+ samples$/ { s += $5; n++ } END { if (n == 3) print s }' "$1")
  [[ $sum == "$2" ]] || { cat "$1"; fail "the workers trained on '$sum' samples in all, expected $2"; }
  grep -q "test accuracy" "$1" || { cat "$1"; fail "no summary"; }
}

run async "$SCRATCH/async.out" --samples 4001 --slow-rank 0 --slow-ms 15
check_exact "$SCRATCH/async.out" 4001
# the slow worker takes well under the others' steps (at most 2/3 of their mean), but some
steps() { sed -n "s/^worker $2: \([0-9]*\) steps.*/\1/p" "$1"; }
s0=$(steps "$SCRATCH/async.out" 0) s1=$(steps "$SCRATCH/async.out" 1) s2=$(steps "$SCRATCH/async.out" 2)
(( s0 > 0 && 3 * s0 <= (s1 + s2) )) || { cat "$SCRATCH/async.out"; fail "async: slow worker took $s0 steps, the others $s1 and $s2"; }
echo "async: steps $s0 (slowed) / $s1 / $s2, $(grep '^ps server 0: samples=' "$SCRATCH/async.out")"

run ssp "$SCRATCH/ssp.out" --samples 4001 --staleness 2 --slow-rank 0 --slow-ms 5
check_exact "$SCRATCH/ssp.out" 4001
echo "ssp: $(grep -c '^worker' "$SCRATCH/ssp.out") workers, $(grep '^ps server 0: samples=' "$SCRATCH/ssp.out")"

# the default budget is --epochs x an epoch's samples: 2 x 3000
run async "$SCRATCH/same.out" --epochs 2
check_exact "$SCRATCH/same.out" 6000
pass "the workers share the sample budget exactly; a slow one takes fewer steps"
