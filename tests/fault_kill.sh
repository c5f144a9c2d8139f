#!/bin/bash
# fault_kill.sh: kill -9 of a worker or server (ring, ps bsp, ps async) mid-training: job ends in time naming the rank, exit status reflects lost work, resume from the last checkpoint is bit-exact (ring, bsp) or as accurate (async).
# A wrapper for make check around experiments/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set MNIST_DIR)"
out=$("$TOP_SRCDIR/experiments/faults" --builddir "$TOP_BUILDDIR" --data "$DATA" --only kill-ring-worker,kill-ring-rank0,kill-ps-bsp-worker,kill-ps-bsp-server,kill-ps-async-worker,kill-ps-async-server 2>&1)
rc=$?
echo "$out"
grep -q "^FAIL" <<<"$out" && fail "fault scenarios failed"
(( rc == 0 )) || fail "experiments/faults exited $rc"
grep -q "^PASS" <<<"$out" || skip "every scenario skipped"
pass "kill-ring-worker,kill-ring-rank0,kill-ps-bsp-worker,kill-ps-bsp-server,kill-ps-async-worker,kill-ps-async-server"
