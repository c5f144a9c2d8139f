#!/bin/bash
# gpu_check.sh: experiments/gpu-check (the one-command GPU measurement run) where it cannot measure:
# with the GPU hidden (CUDA_VISIBLE_DEVICES=-1; here there is no driver at all) it exits 77 with one
# line naming the problem and writes that line as its report; a build without CUDA and bad flags
# exit 2 with one line. The measuring path itself needs a GPU (docs/gpu.md).
. "$(dirname "$0")/common.sh"
GC=$TOP_SRCDIR/experiments/gpu-check
DATA=$(find_mnist) || skip "no MNIST"
scratch
one_line() { # rc-wanted needle args...
  local want=$1 needle=$2; shift 2
  local rc=0
  CUDA_VISIBLE_DEVICES=-1 timeout 120 "$GC" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
  [[ $rc -eq $want ]] || { cat "$SCRATCH/out" "$SCRATCH/err"; fail "gpu-check $*: exit $rc, want $want"; }
  [[ $(wc -l <"$SCRATCH/err") -eq 1 ]] || { cat "$SCRATCH/err"; fail "gpu-check $*: want one line on stderr"; }
  grep -q -- "$needle" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "gpu-check $*: message lacks '$needle'"; }
  [[ ! -s $SCRATCH/out ]] || { cat "$SCRATCH/out"; fail "gpu-check $*: printed more than the error"; }
}
one_line 2 "unknown argument '--bogus'" --bogus
one_line 2 "--out DIR is required" --builddir "$TOP_BUILDDIR"
one_line 2 "no MNIST there" --out "$SCRATCH/r0" --builddir "$TOP_BUILDDIR" --data "$SCRATCH"
if grep -q '^#define HAVE_CUDA 1' "$TOP_BUILDDIR/config.h"; then
  one_line 77 "^gpu-check: no usable GPU here (.*), nothing measured" --out "$SCRATCH/r" --builddir "$TOP_BUILDDIR" --data "$DATA"
  [[ $(cat "$SCRATCH/r/report.txt") == "$(cat "$SCRATCH/err")" ]] || fail "report.txt is not the one line"
  pass "gpu-check without a usable GPU: exit 77, one line, the same line as its report"
else
  one_line 2 "was built without CUDA" --out "$SCRATCH/r" --builddir "$TOP_BUILDDIR" --data "$DATA"
  pass "gpu-check with a build without CUDA: exit 2, one line"
fi
