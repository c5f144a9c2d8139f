#!/bin/bash
# bench_cuda.sh: psring-bench-allreduce --device cuda sums exactly on device buffers: 1 rank (ring,
# staged, mpi, and nccl where libnccl.so.2 loads) and 2 ranks sharing the GPU(s) (the ring on its
# IPC path, the staged ring with many small chunks, mpi), over odd sizes (counts 1, 7, 49, ...),
# with the CSV of the CPU benchmark and a header that names each path and the copy rate. Timings
# are not judged, only present and positive. SKIP without a usable GPU (bench_cuda_nodev.sh tests
# that path).
. "$(dirname "$0")/common.sh"
scratch
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
mpi 300 -np 1 "$BENCH" --device cuda --impl all -b 4 -e 4M -f 7 -n 3 -w 1 --csv "$SCRATCH/one.csv" >"$SCRATCH/out1.txt" 2>&1 \
    || { cat "$SCRATCH/out1.txt"; fail "bench --device cuda -np 1: status $?"; }
cat "$SCRATCH/out1.txt"
[ "$(head -1 "$SCRATCH/one.csv")" = "$HEADER" ] || fail "-np 1: CSV header"
grep -q "^# mpi: staged\|^# mpi: MPI_Allreduce on device pointers" "$SCRATCH/out1.txt" || fail "-np 1: the header does not say how mpi moves device data"
impls=3
if grep -q "^# nccl: ncclAllReduce" "$SCRATCH/out1.txt"; then impls=4
else grep -q "^# nccl: skipped: .*NCCL is not available" "$SCRATCH/out1.txt" || fail "-np 1: nccl neither timed nor skipped with a reason"; fi
# sizes 4, 28, ..., 3294172: 8 sizes
[ "$(tail -n +2 "$SCRATCH/one.csv" | wc -l)" -eq $((8 * impls)) ] || fail "-np 1: want $((8 * impls)) CSV rows"
rows_ok "$SCRATCH/one.csv" 1 || fail "-np 1: CSV rows"
# 2 ranks on the same GPU (or two GPUs): 4 KiB chunks, so each segment is many chunks
mpi 300 -np 2 "$BENCH" --device cuda --impl all --chunk-kb 4 -b 4 -e 4M -f 7 -n 3 -w 1 --csv "$SCRATCH/two.csv" >"$SCRATCH/out2.txt" 2>&1 \
    || { cat "$SCRATCH/out2.txt"; fail "bench --device cuda -np 2: status $?"; }
cat "$SCRATCH/out2.txt"
impls=3
grep -q "^# nccl: ncclAllReduce" "$SCRATCH/out2.txt" && impls=4
[ "$(tail -n +2 "$SCRATCH/two.csv" | wc -l)" -eq $((8 * impls)) ] || fail "-np 2: want $((8 * impls)) CSV rows"
grep -q "^# ring: ipc: " "$SCRATCH/out2.txt" || fail "-np 2: the ring did not take the IPC path on one host"
grep -q "^# staged: \(staged\|cuda-aware\): " "$SCRATCH/out2.txt" || fail "-np 2: no staged ring beside it"
grep -q "^# copy rate C = [0-9.]* GB/s" "$SCRATCH/out2.txt" || fail "-np 2: no copy rate in the header"
if [ "$(grep -c "^# GPUs: rank 0 -> \(.*\), rank 1 -> \1\$" "$SCRATCH/out2.txt")" = 1 ]; then
    grep -q "2 ranks per GPU: busbw <= 2(N-1)/(N R) x C = 0.500 C" "$SCRATCH/out2.txt" || fail "-np 2 on one GPU: no physical bound"
fi
rows_ok "$SCRATCH/two.csv" 2 || fail "-np 2: CSV rows"
grep -q "^# GPUs: rank 0 -> .*rank 1 -> " "$SCRATCH/out2.txt" || fail "-np 2: no GPU placement line"
echo "PASS: bench allreduce --device cuda exact with 1 and 2 ranks"
