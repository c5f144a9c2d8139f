#!/bin/bash
# bench_cuda_nodev.sh: --device cuda where it cannot run fails cleanly, in every build.
#   CUDA build, GPU hidden (CUDA_VISIBLE_DEVICES=-1; here there is no driver at all):
#     psring-bench-allreduce --device cuda, alone and under mpirun -np 2: exit 2, one line
#     naming the missing device, no CSV written
#   build without CUDA: exit 2 with one line saying this build has no CUDA
#   both: psring sweep --device cuda records every failed run with its error and device cuda in
#     the CSV and goes on to the next run
. "$(dirname "$0")/common.sh"
BENCH=$TOP_BUILDDIR/psring-bench-allreduce
[[ -x $BENCH ]] || skip "$BENCH not built"
scratch
export CUDA_VISIBLE_DEVICES=-1
if grep -q '^#define HAVE_CUDA 1' "$TOP_BUILDDIR/config.h"; then
  want="no usable CUDA device"
  sweep_want="no usable CUDA device"
else
  want="this build has no CUDA"
  sweep_want="built without CUDA"
fi
# alone: only the program speaks
rc=0; timeout 60 "$BENCH" --device cuda -e 64K --csv "$SCRATCH/b.csv" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
[[ $rc -eq 2 ]] || { cat "$SCRATCH/out" "$SCRATCH/err"; fail "bench --device cuda: exit $rc, want 2"; }
[[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || { cat "$SCRATCH/err"; fail "bench --device cuda: want one line on stderr"; }
grep -q "^psring-bench-allreduce: --device cuda: $want" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "bench --device cuda: message does not say '$want'"; }
[[ ! -s $SCRATCH/out ]] || { cat "$SCRATCH/out"; fail "bench --device cuda: printed rows"; }
[[ ! -e $SCRATCH/b.csv ]] || fail "bench --device cuda: wrote a CSV anyway"
# under mpirun: one line from the program (mpirun adds its own banner), exit 2, no hang
read -r -a mflags <<<"$MPIRUN_FLAGS"
rc=0; timeout -k 5 120 "$MPIRUN" "${mflags[@]}" -np 2 "$BENCH" --device cuda -e 64K >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
[[ $rc -eq 2 ]] || { cat "$SCRATCH/out" "$SCRATCH/err"; fail "mpirun -np 2 bench --device cuda: exit $rc, want 2"; }
[[ $(grep -c '^psring-bench-allreduce:' "$SCRATCH/err") -eq 1 ]] || { cat "$SCRATCH/err"; fail "mpirun -np 2: want exactly one line from the ranks"; }
grep -q "^psring-bench-allreduce: --device cuda: $want" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "mpirun -np 2: message does not say '$want'"; }
echo "ok: bench --device cuda refused with one line ($want)"
# the sweep goes on past failed GPU runs and records why
DATA=$(find_mnist) || { pass "bench refusals (no MNIST: sweep part not run)"; exit 0; }
rc=0
PSRING_BUILDDIR=$TOP_BUILDDIR timeout 300 "$TOP_SRCDIR/psring" sweep --topologies local,ring --workers 2 --repeats 1 \
  --csv "$SCRATCH/sweep.csv" --quiet --timeout 120 -- --data "$DATA" --steps 2 --train-limit 512 --test-limit 100 --device cuda \
  >"$SCRATCH/sweep.out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || { cat "$SCRATCH/sweep.out"; fail "sweep with every run failing: exit $rc, want 1"; }
python3 - "$SCRATCH/sweep.csv" "$sweep_want" <<'PY' || fail "sweep CSV"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
assert len(rows) == 2, "want 2 rows (local, ring), got %d" % len(rows)
for r in rows:
    assert r["device"] == "cuda", "device column %r" % r["device"]
    assert r["error"].startswith("exit 2: ") and sys.argv[2] in r["error"], "error column %r" % r["error"]
print("ok: sweep rows: " + "; ".join("%s N=%s: %s" % (r["topology"], r["workers"], r["error"]) for r in rows))
PY
pass "--device cuda without a usable GPU: one-line refusals, the sweep records them and goes on"
