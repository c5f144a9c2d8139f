#!/bin/bash
# ps_byteps.sh: BytePS' placement (--byteps K: a server beside every worker, K more of their own
# holding x* of the keys) changes where keys live, not the math: 2 workers x 32 with 2 colocated
# servers and 1 of its own follow local training at batch 64 within 1e-5 for 50 steps, the
# servers stepping (ps-lite) or only summing (BytePS); the split is said once and written to the
# CSV; a placement the processes cannot hold is refused in one line, by the launcher and by
# mpirun alone.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
export PSRING_BUILDDIR=$TOP_BUILDDIR   # the launcher's programs (make distcheck builds outside the tree)
scratch
common="--batch 64 --steps 50 --train-limit 3200 --data $DATA --seed 7 --layers 784,64,10"
timeout 120 "$TRAIN" --topology local $common --quiet --loss-log "$SCRATCH/local.log" >/dev/null 2>&1 || fail "local run failed"
for mode in optimizer sum; do
  timeout 120 $MPIRUN $MPIRUN_FLAGS -np 5 "$TRAIN" --topology ps --servers 3 --byteps 1 --ps-mode $mode --scaling strong \
    $common --loss-log "$SCRATCH/$mode.log" --csv "$SCRATCH/r.csv" >"$SCRATCH/$mode.out" 2>&1 \
    || { cat "$SCRATCH/$mode.out"; fail "ps --byteps 1 --ps-mode $mode failed"; }
  [[ $(wc -l <"$SCRATCH/$mode.log") -eq 50 ]] || fail "$mode: not 50 steps"
  compare_losses "$SCRATCH/local.log" "$SCRATCH/$mode.log" 1e-5 || fail "ps --byteps 1 --ps-mode $mode diverges from local"
  # 784,64,10 has 50890 parameters; x* = 2(2-1)/(4+2-2) = 1/2: 25445 on the server of its own,
  # 12722 and 12723 beside the workers
  [[ $(grep -c '^ps: BytePS placement' "$SCRATCH/$mode.out") == 1 ]] || fail "$mode: the placement is not said once"
  grep -q '^ps: BytePS placement over 2 worker hosts and 1 of their own: servers 0..1 hold 12722 parameters each (+-1), 2..2 25445 (x\* = 0.5000)$' \
    "$SCRATCH/$mode.out" || fail "$mode: the placement line: $(grep 'BytePS' "$SCRATCH/$mode.out")"
done
python3 -c 'import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
assert [(r["ps_mode"], r["ps_split"], r["servers"]) for r in rows] == [("optimizer", "12722/12723/25445", "3"), ("sum", "12722/12723/25445", "3")], rows' \
  "$SCRATCH/r.csv" || fail "the CSV's ps_split"
once() { # WANT CMD...: exit 2 and the one line WANT
  local want=$1 out rc=0; shift
  out=$(timeout 60 "$@" 2>&1) || rc=$?
  [[ $rc == 2 && $out == "$want" ]] || fail "$*: rc $rc: $out"
}
once "psring-train: --byteps 1: -np 6 with --servers 3 makes 3 workers, but the placement puts a server on every worker host plus 1: --servers 4" \
  "$TOP_SRCDIR/psring" train -np 6 --topology ps --servers 3 --byteps 1 --data "$DATA"
once "psring-train: --byteps 2 needs --servers above it: a server on every worker host plus 2 (got --servers 2)" \
  "$TOP_SRCDIR/psring" train -np 4 --topology ps --servers 2 --byteps 2 --data "$DATA"
once "psring-train: --byteps with --optimizer lars needs --ps-mode sum (LARS on the servers needs whole tensors on each)" \
  "$TOP_SRCDIR/psring" train -np 5 --topology ps --servers 3 --byteps 1 --optimizer lars --data "$DATA"
once "psring-train: --byteps must be a count of spare server hosts >= 0: got '-1'" \
  "$TOP_SRCDIR/psring" train -np 5 --topology ps --servers 3 --byteps -1 --data "$DATA"
# started by mpirun alone, the processes' count is checked where it is known: once, exit 2
out=$(timeout 60 $MPIRUN $MPIRUN_FLAGS -np 6 "$TRAIN" --topology ps --servers 3 --byteps 1 --data "$DATA" 2>&1)
[[ $(grep -c -- '--byteps 1: -np 6 with --servers 3 makes 3 workers' <<<"$out") == 1 ]] || fail "mpirun -np 6: $out"
pass "ps --byteps 1 == local for 50 steps (servers stepping or summing); the split said and in the CSV; bad placements refused"
