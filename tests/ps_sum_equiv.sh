#!/bin/bash
# ps_sum_equiv.sh: the PS as a summation service (--ps-mode sum: the servers answer the mean
# gradient, every worker runs the optimizer, as in BytePS and in the ring) follows the ring and
# local training step by step: the same loss at each of the first 50 steps within 1e-5 relative,
# with whole shards and with slices, with SGD and with Adam (whose state then lives on the
# workers); a run stopped and resumed from a checkpoint ends on the same parameters, bit for bit;
# the CSV says which mode ran; the mode the servers cannot serve is refused in one line.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
common="--batch 64 --steps 50 --train-limit 3200 --data $DATA --quiet --seed 7"
psum() { # LOG ARGS...: ps, 2 servers and 2 workers x 32, as a summation service, its losses in LOG.log
  local name=$1; shift
  timeout 120 $MPIRUN $MPIRUN_FLAGS -np 4 "$TRAIN" --topology ps --servers 2 --ps-mode sum --scaling strong \
    $common --loss-log "$SCRATCH/$name.log" "$@" >"$SCRATCH/$name.out" 2>&1 || { cat "$SCRATCH/$name.out"; fail "ps --ps-mode sum ($name) failed"; }
}
steps50() { [[ $(wc -l <"$SCRATCH/$1.log") -eq 50 ]] || fail "$1: not 50 steps in the loss log"; }
timeout 120 $MPIRUN $MPIRUN_FLAGS -np 2 "$TRAIN" --topology ring --scaling strong $common --loss-log "$SCRATCH/ring.log" \
  >"$SCRATCH/ring.out" 2>&1 || { cat "$SCRATCH/ring.out"; fail "ring run failed"; }
timeout 120 "$TRAIN" --topology local $common --loss-log "$SCRATCH/local.log" >"$SCRATCH/local.out" 2>&1 \
  || { cat "$SCRATCH/local.out"; fail "local run failed"; }
psum sum --csv "$SCRATCH/r.csv"
steps50 sum
compare_losses "$SCRATCH/ring.log" "$SCRATCH/sum.log" 1e-5 || fail "ps --ps-mode sum diverges from the ring"
compare_losses "$SCRATCH/local.log" "$SCRATCH/sum.log" 1e-5 || fail "ps --ps-mode sum diverges from local"
# 64 KiB slices: each shard is summed and answered slice by slice; the math must not change
psum sliced --ps-chunk-kb 64
steps50 sliced
compare_losses "$SCRATCH/local.log" "$SCRATCH/sliced.log" 1e-5 || fail "ps --ps-mode sum with 64 KiB slices diverges from local"
# Adam: its moments and step count live on each worker now, not on the servers
timeout 120 "$TRAIN" --topology local $common --optimizer adam --loss-log "$SCRATCH/ladam.log" >/dev/null 2>&1 || fail "local adam failed"
psum adam --optimizer adam
steps50 adam
compare_losses "$SCRATCH/ladam.log" "$SCRATCH/adam.log" 1e-5 || fail "ps --ps-mode sum with adam diverges from local"
# the CSV row names the mode
python3 -c 'import sys; from psringlib import results
rows = results.read_rows(sys.argv[1]); assert [(r["topology"], r["ps_mode"], r["sync"]) for r in rows] == [("ps", "sum", "bsp")], rows' \
  "$SCRATCH/r.csv" || fail "the CSV's ps_mode column"
# stopped at step 30 (a checkpoint every 15 steps, Adam's state in it) and resumed to 50: the
# same final parameters as the run that never stopped (two workers: the servers' sums are exact)
ck="--optimizer adam --checkpoint $SCRATCH/ck --checkpoint-every 15"
psum whole --optimizer adam --dump-params "$SCRATCH/whole.params"
psum split $ck --steps 30
psum split --optimizer adam --resume "$SCRATCH/ck" --dump-params "$SCRATCH/resumed.params"
steps50 split
cmp -s "$SCRATCH/whole.params" "$SCRATCH/resumed.params" || fail "a resumed --ps-mode sum run ends elsewhere than the whole run"
cmp -s "$SCRATCH/whole.log" "$SCRATCH/split.log" || fail "a resumed --ps-mode sum run's losses differ from the whole run's"
out=$("$TRAIN" --data "$DATA" --topology ps --ps-mode sum --sync async 2>&1); rc=$?
[[ $rc == 2 && $out == "psring-train: --ps-mode sum needs --sync bsp"* && $(wc -l <<<"$out") == 1 ]] || fail "sum with async: rc $rc: $out"
pass "ps --ps-mode sum == ring == local for 50 steps (SGD, Adam, slices within 1e-5); resumed bit for bit"
