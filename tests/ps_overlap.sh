#!/bin/bash
# ps_overlap.sh: --overlap on the PS (a communication thread pushes each layer's slices once
# backward has finished it, in one order every worker shares) changes when bytes move, not the
# math: with a warm-up (a new lr every step, sent with the early pushes) it follows the ring step
# by step within 1e-5 for 50 steps and equals the same PS without overlap, with the servers
# stepping (SGD, Adam) or only summing under BytePS' placement, with credit 1 and 2 and 16 KiB
# slices (many per layer); the pushes start while backward still runs; the CSV says overlap=1;
# async/ssp are refused in one line.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
common="--batch 32 --scaling weak --warmup-epochs 1 --steps 50 --train-limit 3200 --data $DATA --quiet --seed 7"
run() { # NAME NP ARGS...: its losses in NAME.log
  local name=$1 np=$2; shift 2
  timeout 120 $MPIRUN $MPIRUN_FLAGS -np "$np" "$TRAIN" $common --loss-log "$SCRATCH/$name.log" "$@" >"$SCRATCH/$name.out" 2>&1 \
    || { cat "$SCRATCH/$name.out"; fail "$name failed"; }
  [[ $(wc -l <"$SCRATCH/$name.log") -eq 50 ]] || fail "$name: not 50 steps in the loss log"
}
same() { compare_losses "$SCRATCH/$1.log" "$SCRATCH/$2.log" 1e-5 || fail "$2 diverges from $1"; }
run ring 2 --topology ring
run ring-adam 2 --topology ring --optimizer adam
ps2="--topology ps --servers 2 --ps-chunk-kb 16"
run ps 4 $ps2 --ps-credit 1
run ps-overlap 4 $ps2 --ps-credit 1 --overlap --csv "$SCRATCH/r.csv"
same ring ps-overlap
same ps ps-overlap
run adam-overlap 4 $ps2 --optimizer adam --overlap
same ring-adam adam-overlap
byteps="--topology ps --servers 3 --byteps 1 --ps-mode sum --ps-chunk-kb 16"
run byteps 5 $byteps
run byteps-overlap 5 $byteps --overlap
same ring byteps-overlap
same byteps byteps-overlap
python3 -c 'import sys; from psringlib import results
rows = results.read_rows(sys.argv[1]); assert [(r["topology"], r["overlap"]) for r in rows] == [("ps", "1")], rows' \
  "$SCRATCH/r.csv" || fail "the CSV's overlap column"
# the first push of a step leaves while that step's backward still runs (worker 0's timeline;
# at batch 1024 its backward takes tens of milliseconds). Without --overlap that never happens
# (the push starts in step(), after backward); with it, 19 of 20 steps on an idle machine, 9 of
# 20 at batch 256 beside make check's other tests: the communication thread must first get a
# core. At least 4 of 20.
timeout 120 $MPIRUN $MPIRUN_FLAGS -np 3 "$TRAIN" --topology ps --overlap --batch 1024 --steps 20 --train-limit 8192 \
  --data "$DATA" --quiet --seed 7 --timeline "$SCRATCH/tl.json" >"$SCRATCH/tl.out" 2>&1 || { cat "$SCRATCH/tl.out"; fail "timeline run failed"; }
early=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
w0 = [e for e in ev if e.get("ph") == "X" and e.get("pid") == 1]   # mpi rank 1: worker 0
bw = [(e["ts"], e["ts"] + e["dur"]) for e in w0 if e["name"] == "backward"]
pu = [e["ts"] for e in w0 if e["name"] == "push"]
assert len(bw) == 20 and len(pu) == 20, (len(bw), len(pu))
print(sum(any(a <= p < b for p in pu) for a, b in bw))' "$SCRATCH/tl.json") || fail "the timeline: $early"
(( early >= 4 )) || fail "pushes began during backward in $early of 20 steps only"
out=$("$TRAIN" --data "$DATA" --topology ps --overlap --sync ssp 2>&1); rc=$?
[[ $rc == 2 && $out == "psring-train: --overlap on the PS needs --sync bsp"* && $(wc -l <<<"$out") == 1 ]] || fail "overlap with ssp: rc $rc: $out"
pass "ps --overlap == ps == ring for 50 steps (SGD and Adam on the servers, BytePS sum, credit 1/2, 16 KiB slices); pushes during backward in $early of 20 steps"
