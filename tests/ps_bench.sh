#!/bin/bash
# ps_bench.sh: psring-bench-ps --compute-us and --compute (the real step). Bad values get one line and exit status 2. With a
# large U (0.2 s of CPU work per round) the reported round time must be the round alone: far
# below U in both implementations (the compute is not counted), with the bsp wait reported apart
# (wait_s column) and not negative; and the run must really have worked U before each round
# (the job takes at least that long). Timings themselves are not judged (a shared machine).
. "$(dirname "$0")/common.sh"
BENCH="$TOP_BUILDDIR/psring-bench-ps"
[[ -x $BENCH ]] || skip "$BENCH not built"
command -v "$MPIRUN" >/dev/null || skip "mpirun not found"
scratch

for bad in "--compute-us" "--compute-us -1" "--compute-us abc" "--compute-us 1.5" "--compute-us 10000001" \
           "--compute-us 5x" "--compute-us="; do
  # a singleton (no mpirun), so that only the program speaks
  out=$(timeout 30 "$BENCH" --servers 1 -b 64K -e 64K $bad 2>&1 >/dev/null); rc=$?
  [[ $rc -eq 2 ]] || fail "psring-bench-ps $bad: status $rc, want 2 ($out)"
  [[ $(printf '%s\n' "$out" | wc -l) -eq 1 ]] || fail "psring-bench-ps $bad: want one line of error, got: $out"
  [[ $out == *compute-us* ]] || fail "psring-bench-ps $bad: the message does not name --compute-us: $out"
done

U=200000   # us of CPU time per round: 200 ms, far above a 64 KiB round on loopback (well under 10 ms)
t0=$(date +%s.%N)
timeout -k 5 120 "$MPIRUN" $MPIRUN_FLAGS -np 3 "$BENCH" --servers 1 -b 64K -e 64K -n 3 -w 1 --compute-us $U \
    --csv "$SCRATCH/b.csv" >"$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "bench --compute-us $U: status $?"; }
t1=$(date +%s.%N)
cat "$SCRATCH/out.txt"
[[ $(head -1 "$SCRATCH/b.csv") == "size,impl,workers,servers,transport,sync,iters,time_s,per_worker_GBps,goodput_GBps,ratio_vs_raw,compute_us,wait_s" ]] \
  || fail "CSV header: $(head -1 "$SCRATCH/b.csv")"
[[ $(tail -n +2 "$SCRATCH/b.csv" | wc -l) -eq 2 ]] || fail "CSV: want 2 rows (zmq-raw, ps)"
# per round: time_s / iters must be positive and below U / 4 (with the compute counted it would be
# at least U); wait_s not negative; compute_us recorded
awk -F, -v u=$U 'NR > 1 { r = $8 / $7
    if (!(r > 0) || r >= u / 4 * 1e-6 || $13 < 0 || $12 != u) { bad = 1; print "bad row: " $0 " (round " r " s)" } }
    END { exit bad }' "$SCRATCH/b.csv" || fail "the round time includes the compute, or a bad row"
grep -q "^ *65536 *ps " "$SCRATCH/out.txt" || fail "no ps row in the table"
# 2 implementations x (1 warm-up + 3 timed) rounds x 0.2 s of work each: at least 1.6 s; 1 s is generous
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.0) }' || fail "the job took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s: the compute did not run"
# --compute mlp:LAYERS:BATCH: bad values one line, exit 2
for bad in "--compute" "--compute mlp" "--compute mlp:784,10" "--compute mlp:784,10:0" "--compute mlp:784,10:65537" \
           "--compute cnn:784,10:64" "--compute mlp:784,x,10:64" "--compute mlp:784,300:64" "--compute mlp:784,10:64 -b 64K" \
           "--compute mlp:784,10:64 --compute-us 5"; do
  out=$(timeout 30 "$BENCH" --servers 1 $bad 2>&1 >/dev/null); rc=$?
  [[ $rc -eq 2 ]] || fail "psring-bench-ps $bad: status $rc, want 2 ($out)"
  [[ $(printf '%s\n' "$out" | wc -l) -eq 1 ]] || fail "psring-bench-ps $bad: want one line of error, got: $out"
  [[ $out == *compute* ]] || fail "psring-bench-ps $bad: the message does not name --compute: $out"
done
# a heavy real step (MLP 784-256-10 at batch 16384: about 20 GFLOP of forward + backward, a tenth
# of a second or more) before each round: the round time must leave it out (a 0.8 MB round on
# loopback is a few ms), the size is the model's gradient (203530 parameters = 814120 bytes)
t0=$(date +%s.%N)
timeout -k 5 120 "$MPIRUN" $MPIRUN_FLAGS -np 3 "$BENCH" --servers 1 -n 3 -w 1 --compute mlp:784,256,10:16384 \
    --csv "$SCRATCH/c.csv" >"$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "bench --compute: status $?"; }
t1=$(date +%s.%N)
cat "$SCRATCH/out.txt"
[[ $(tail -n +2 "$SCRATCH/c.csv" | wc -l) -eq 2 ]] || fail "--compute CSV: want 2 rows (zmq-raw, ps)"
awk -F, 'NR > 1 { r = $8 / $7
    if ($1 != 814120 || !(r > 0) || r >= 0.03 || $13 < 0) { bad = 1; print "bad row: " $0 " (round " r " s)" } }
    END { exit bad }' "$SCRATCH/c.csv" || fail "--compute: the round time includes the compute, or a bad row"
# 2 implementations x 4 rounds x 2 workers of 20 GFLOP on this machine's cores: 0.5 s is generous
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 0.5) }' || fail "--compute: the job took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s: the step did not run"
pass "psring-bench-ps --compute-us and --compute: bad values refused, the round time excludes the compute"
