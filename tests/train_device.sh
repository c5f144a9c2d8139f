#!/bin/bash
# train_device.sh: --device on any machine. Without CUDA in the build, --device cuda exits 2 with
# "psring was built without CUDA"; with CUDA but no usable GPU (CI, this VM), exit 2 with "no usable
# CUDA device"; with a GPU, a 3-step run works. A bad value and nccl without cuda exit 2 everywhere.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "no MNIST"
scratch
out=$SCRATCH/out
expect2() { # pattern args...
  local pat=$1; shift
  "$TRAIN" "$@" >"$out" 2>&1; local rc=$?
  [[ $rc == 2 ]] || { cat "$out"; fail "$* exited $rc, want 2"; }
  [[ $(wc -l <"$out") == 1 ]] || { cat "$out"; fail "$*: want one line"; }
  grep -q -- "$pat" "$out" || { cat "$out"; fail "$*: message lacks '$pat'"; }
}
expect2 "--device must be cpu or cuda" --device gpu --data "$DATA"
expect2 "--allreduce nccl needs --device cuda" --topology ring --allreduce nccl --data "$DATA"
if ! grep -q '^#define HAVE_CUDA 1' "$TOP_BUILDDIR/config.h"; then
  expect2 "psring was built without CUDA (configure --with-cuda)" --device cuda --data "$DATA"
  pass "built without CUDA: --device cuda refused"
elif ! "$TOP_BUILDDIR/tests/test_ring_cuda" --probe; then
  expect2 "--device cuda: no usable CUDA device" --device cuda --data "$DATA" --steps 1
  pass "no GPU: --device cuda refused in one line"
else
  "$TRAIN" --device cuda --data "$DATA" --steps 3 --epochs 1 --train-limit 512 --test-limit 256 >"$out" 2>&1 \
    || { cat "$out"; fail "--device cuda on a GPU machine"; }
  grep -q "^summary:" "$out" || { cat "$out"; fail "no summary"; }
  pass "GPU present: --device cuda trains"
fi
