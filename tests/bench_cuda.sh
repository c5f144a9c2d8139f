#!/bin/bash
# bench_cuda.sh: psring-bench-allreduce --device cuda sums exactly on device buffers: 1 rank (ring,
# mpi, and nccl where libnccl.so.2 loads) and 2 ranks sharing the GPU(s) (ring with many small
# chunks, mpi), over odd sizes (counts 1, 7, 49, ...), with the CSV of the CPU benchmark. Timings
# are not judged, only present and positive. SKIP without a usable GPU (bench_cuda_nodev.sh tests
# that path).
. "$(dirname "$0")/ring_common.sh"
need_prog "$BENCH"
PROBE=$TOP_BUILDDIR/tests/test_ring_cuda
need_prog "$PROBE"
"$PROBE" --probe || { echo "SKIP: no usable CUDA device" >&2; exit 77; }
HEADER="size,count,impl,time_us,algbw_GBps,busbw_GBps,wrong,nranks,chunk_kb"
# rows: every one checked (wrong 0), count x 4 = size, a positive time, nranks as run
rows_ok() { # csv nranks
    awk -F, -v n="$2" 'NR > 1 && ($7 != 0 || $4 <= 0 || $2 * 4 != $1 || $8 != n) { bad = 1; print "bad row: " $0 } END { exit bad }' "$1"
}
# 1 rank: all three implementations (nccl skipped with its reason where NCCL cannot load)
mpi 300 -np 1 "$BENCH" --device cuda --impl all -b 4 -e 4M -f 7 -n 3 -w 1 --csv "$TMP/one.csv" >"$TMP/out1.txt" 2>&1 \
    || { cat "$TMP/out1.txt"; fail "bench --device cuda -np 1: status $?"; }
cat "$TMP/out1.txt"
[ "$(head -1 "$TMP/one.csv")" = "$HEADER" ] || fail "-np 1: CSV header"
grep -q "^# mpi: staged\|^# mpi: MPI_Allreduce on device pointers" "$TMP/out1.txt" || fail "-np 1: the header does not say how mpi moves device data"
impls=2
if grep -q "^# nccl: ncclAllReduce" "$TMP/out1.txt"; then impls=3
else grep -q "^# nccl: skipped: .*NCCL is not available" "$TMP/out1.txt" || fail "-np 1: nccl neither timed nor skipped with a reason"; fi
# sizes 4, 28, ..., 3294172: 8 sizes
[ "$(tail -n +2 "$TMP/one.csv" | wc -l)" -eq $((8 * impls)) ] || fail "-np 1: want $((8 * impls)) CSV rows"
rows_ok "$TMP/one.csv" 1 || fail "-np 1: CSV rows"
# 2 ranks on the same GPU (or two GPUs): 4 KiB chunks, so each segment is many chunks
mpi 300 -np 2 "$BENCH" --device cuda --impl both --chunk-kb 4 -b 4 -e 4M -f 7 -n 3 -w 1 --csv "$TMP/two.csv" >"$TMP/out2.txt" 2>&1 \
    || { cat "$TMP/out2.txt"; fail "bench --device cuda -np 2: status $?"; }
cat "$TMP/out2.txt"
[ "$(tail -n +2 "$TMP/two.csv" | wc -l)" -eq 16 ] || fail "-np 2: want 16 CSV rows"
rows_ok "$TMP/two.csv" 2 || fail "-np 2: CSV rows"
grep -q "^# GPUs: rank 0 -> .*rank 1 -> " "$TMP/out2.txt" || fail "-np 2: no GPU placement line"
echo "PASS: bench allreduce --device cuda exact with 1 and 2 ranks"
