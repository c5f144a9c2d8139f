#!/bin/bash
# gpu_check.sh: tools/gpu-check (the one-command GPU measurement run) where it cannot measure.
# With the GPU hidden (CUDA_VISIBLE_DEVICES=-1; here there is no driver at all) it runs its CPU steps,
# reaches the first CUDA call, exits 77 with one line on stderr naming why, and leaves exactly its
# archive and summary in --out: the CPU step done, every GPU step "skipped" with the reason.
# --resume of that archive keeps the CPU step and asks the GPU again. A build without CUDA and
# bad flags exit 2 with one line. Also: every Python script in experiments/ and tools/ starts with
# /usr/bin/env python3 (the GPU machine's Python is not /usr/bin/python3). The measuring path
# itself needs a GPU (docs/gpu.md).
. "$(dirname "$0")/common.sh"
GC=$TOP_SRCDIR/tools/gpu-check
for f in "$TOP_SRCDIR"/experiments/* "$TOP_SRCDIR"/tools/*; do
  [[ -f $f ]] || continue
  first=$(head -1 "$f")
  [[ $first == "#!"*python* ]] || continue
  [[ $first == "#!/usr/bin/env python3" ]] || fail "$(basename "$f") starts with '$first', want '#!/usr/bin/env python3'"
done
DATA=$(find_mnist) || skip "no MNIST"
scratch
one_line() { # rc-wanted needle args...: exit status, one line on stderr naming the problem
  local want=$1 needle=$2; shift 2
  local rc=0
  CUDA_VISIBLE_DEVICES=-1 timeout 300 "$GC" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  [[ $rc -eq $want ]] || { cat "$SCRATCH/out" "$SCRATCH/err"; fail "gpu-check $*: exit $rc, want $want"; }
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || { cat "$SCRATCH/err"; fail "gpu-check $*: want one line on stderr"; }
  grep -q -- "$needle" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "gpu-check $*: message lacks '$needle'"; }
}
bad_flags() { # like one_line, and nothing else was printed
  one_line "$@"
  [[ ! -s $SCRATCH/out ]] || { cat "$SCRATCH/out"; fail "gpu-check $*: printed more than the error"; }
}
bad_flags 2 "unknown argument '--bogus'" --bogus
bad_flags 2 "--out DIR is required" --builddir "$TOP_BUILDDIR"
bad_flags 2 "no MNIST there" --out "$SCRATCH/r0" --builddir "$TOP_BUILDDIR" --data "$SCRATCH"
bad_flags 2 "--budget must be a whole number" --out "$SCRATCH/r0" --budget 5 --builddir "$TOP_BUILDDIR" --data "$DATA"
if ! grep -q '^#define HAVE_CUDA 1' "$TOP_BUILDDIR/config.h"; then
  bad_flags 2 "was built without CUDA" --out "$SCRATCH/r" --builddir "$TOP_BUILDDIR" --data "$DATA"
  pass "gpu-check with a build without CUDA: exit 2, one line"
  exit 0
fi
bad_flags 2 "--resume $SCRATCH/none: no such file" --out "$SCRATCH/r0" --resume "$SCRATCH/none" --builddir "$TOP_BUILDDIR" --data "$DATA"

# step_status STEPS.CSV STEP: the step's last status
step_status() { python3 -c 'import sys; from psringlib import results
print([r["status"] for r in results.read_rows(sys.argv[1]) if r["step"] == sys.argv[2]][-1])' "$1" "$2"; }
# check_no_gpu DIR: the no-GPU outcome in DIR (unpacked into DIR.x)
check_no_gpu() {
  local d=$1 x=$1.x
  [[ $(ls -A "$d" | sort | tr '\n' ' ') == "gpu-check.tar.gz summary.txt " ]] || { ls -A "$d"; fail "--out holds more or less than the archive and summary.txt"; }
  mkdir -p "$x" && tar xzf "$d/gpu-check.tar.gz" -C "$x" || fail "the archive does not unpack"
  for f in report.txt summary.csv steps.csv logs/cpu.log logs/probe.log; do [[ -s $x/$f ]] || fail "the archive lacks $f"; done
  grep -q "^gpu-check: no usable GPU here" "$x/report.txt" || fail "report.txt lacks the verdict"
  [[ $(step_status "$x/steps.csv" cpu) == done ]] || fail "the CPU step did not pass: $(cat "$x/logs/cpu.log")"
  local s n=0
  for s in probe test_mlp_cuda test_train_device test_ring_cuda test_train_cuda test_bench_cuda reduce_kernel \
           allreduce_np2 allreduce_np4 allreduce_np1 allreduce_mps_np2 allreduce_mps_np4 pytorch accuracy sweep; do
    [[ $(step_status "$x/steps.csv" $s) == skipped ]] || fail "step $s: $(step_status "$x/steps.csv" $s), want skipped"
    grep -qE "^  $s +skipped .*no usable GPU \(.+\)" "$d/summary.txt" || { cat "$d/summary.txt"; fail "summary.txt: $s not skipped with a reason"; }
    n=$((n + 1))
  done
  echo "ok: $d: cpu done, $n GPU steps skipped with the reason"
}
one_line 77 "^gpu-check: no usable GPU here (.*): the CPU steps passed, every GPU step skipped" \
  --out "$SCRATCH/r" --builddir "$TOP_BUILDDIR" --data "$DATA"
check_no_gpu "$SCRATCH/r"
# a second run from the first's archive: the CPU step is kept, the GPU asked again
one_line 77 "^gpu-check: no usable GPU here" --out "$SCRATCH/r2" --resume "$SCRATCH/r/gpu-check.tar.gz" \
  --builddir "$TOP_BUILDDIR" --data "$DATA"
check_no_gpu "$SCRATCH/r2"
grep -q "^  \[cpu\] done in an earlier run: kept" "$SCRATCH/r2.x/report.txt" || fail "--resume ran the CPU step again"
[[ $(grep -c '^cpu,' "$SCRATCH/r2.x/steps.csv") == 1 ]] || fail "--resume: the CPU step recorded twice"
pass "gpu-check without a usable GPU: exit 77, one line, archive + summary, GPU steps skipped with the reason; --resume"
# the same from the packed runtime with the system's copies hidden (tools/gpu-rehearse), where
# there is a prefix (tools/pack-runtime .rt; CI has none) and root for the namespace
rt=$TOP_SRCDIR/.rt/prefix.tar.xz
if [[ -f $rt && $(id -u) -eq 0 ]] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  rc=0
  CUDA_VISIBLE_DEVICES=-1 timeout 300 "$TOP_SRCDIR/tools/gpu-rehearse" --runtime "$rt" -- --out "$SCRATCH/h2" \
    --builddir "$TOP_BUILDDIR" --data "$DATA" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  [[ $rc == 77 && $(wc -l <"$SCRATCH/err") == 1 ]] || { cat "$SCRATCH/out" "$SCRATCH/err"; fail "gpu-rehearse: exit $rc, want 77 and one line"; }
  grep -q "^gpu-rehearse: [1-9][0-9]* files and [0-9]* folders of the system hidden" "$SCRATCH/out" || fail "gpu-rehearse hid nothing"
  check_no_gpu "$SCRATCH/h2"
  grep -q "^mpirun: .*/psring-rt\.[^/]*/usr/bin/mpirun" "$SCRATCH/h2.x/report.txt" || fail "gpu-rehearse: mpirun not from the prefix"
  pass "the same from the packed runtime with the system's Open MPI, ZeroMQ, OpenBLAS, Check and ssh hidden"
else
  echo "gpu-rehearse not tried: needs $rt (tools/pack-runtime .rt) and root for unshare -m"
fi
