#!/bin/bash
# ring_bench.sh: psring-bench-allreduce checks every result (ring, ring fp16, MPI_Allreduce) over
# a sweep of odd sizes on 3 ranks, writes a CSV with one row per size and implementation, and
# rejects bad flags with one line and exit status 2. Timings are not judged here (a loaded 2-core
# machine); tests only that the figures are there and positive, and that with --compute (a real
# forward + backward before each call) the reported time leaves the compute out.
. "$(dirname "$0")/common.sh"
scratch
need_prog "$BENCH"
mpi 120 -np 3 "$BENCH" -b 4 -e 1M -f 7 -n 3 -w 1 -c 1 --impl both --chunk-kb 4 --csv "$SCRATCH/b.csv" > "$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "bench -np 3 float: status $?"; }
cat "$SCRATCH/out.txt"
grep -q "memcpy bandwidth" "$SCRATCH/out.txt" || fail "no memcpy bandwidth line"
# sizes 4, 28, 196, ..., 470596: 7 sizes x 2 implementations, all checked, none wrong
[ "$(head -1 "$SCRATCH/b.csv")" = "size,count,impl,time_us,algbw_GBps,busbw_GBps,wrong,nranks,chunk_kb" ] || fail "CSV header"
[ "$(tail -n +2 "$SCRATCH/b.csv" | wc -l)" -eq 14 ] || fail "CSV: want 14 rows"
awk -F, 'NR > 1 && ($7 != 0 || $4 <= 0 || $2 * 4 != $1) { bad = 1; print "bad row: " $0 } END { exit bad }' "$SCRATCH/b.csv" \
    || fail "CSV rows"
mpi 120 -np 2 "$BENCH" -b 1K -e 256K -f 4 -n 2 -w 1 --impl ring --fp16 > "$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "bench -np 2 fp16: status $?"; }
grep -q "ring-fp16" "$SCRATCH/out.txt" || fail "no ring-fp16 rows"
# --compute: a heavy step (MLP 784-256-10 at batch 16384, about 20 GFLOP of forward + backward,
# a tenth of a second or more) before each call; the reported time is the call alone, the size
# the model's gradient (203530 parameters = 814120 bytes), and the job really computed
t0=$(date +%s.%N)
mpi 120 -np 2 "$BENCH" -n 3 -w 1 -c 1 --impl ring --compute mlp:784,256,10:16384 --csv "$SCRATCH/c.csv" > "$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "bench --compute: status $?"; }
t1=$(date +%s.%N)
cat "$SCRATCH/out.txt"
[ "$(tail -n +2 "$SCRATCH/c.csv" | wc -l)" -eq 1 ] || fail "--compute: want 1 CSV row"
# the call alone: well under the step (a 0.8 MB allreduce on 2 ranks is about a millisecond; with
# the compute counted it would be 100 ms or more); checked: no wrong element
awk -F, 'NR > 1 && ($1 != 814120 || $7 != 0 || !($4 > 0) || $4 >= 30000) { bad = 1; print "bad row: " $0 } END { exit bad }' \
    "$SCRATCH/c.csv" || fail "--compute: the time includes the compute, or a bad row"
# 1 warm-up + 3 timed steps of 20 GFLOP per rank: at least 0.3 s even at 200 GFLOP/s
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 0.3) }' || fail "--compute: the job took $t0..$t1: the step did not run"
for bad in "-b 12Q" "-e" "--impl nccl" "-c 2" "-n 0" "-f 1" "--bogus" "-b 8M -e 4M" "extra" \
           "--compute" "--compute mlp:784,10" "--compute mlp:784,10:0" "--compute cnn:784,10:64" \
           "--compute mlp:784,x,10:64" "--compute mlp:784,300:64" "--compute mlp:784,10:64 -b 4K" \
           "--compute mlp:784,10:64 --compute-us 5"; do
    # a singleton (no mpirun), so that only the program speaks
    timeout 30 "$BENCH" $bad > "$SCRATCH/out.txt" 2>&1
    rc=$?
    [ $rc -eq 2 ] || { cat "$SCRATCH/out.txt"; fail "bench $bad: status $rc, want 2"; }
    [ "$(wc -l < "$SCRATCH/out.txt")" -eq 1 ] || { cat "$SCRATCH/out.txt"; fail "bench $bad: want one line of error"; }
done
echo "ring_bench: ok"
