#!/bin/bash
# fault_stall.sh: --stall-warn names a slow rank (ring: rank 0, ps: server 0).
# A wrapper for make check around experiments/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set MNIST_DIR)"
out=$("$TOP_SRCDIR/experiments/faults" --builddir "$TOP_BUILDDIR" --data "$DATA" --only stall-ring,stall-ps 2>&1)
rc=$?
echo "$out"
grep -q "^FAIL" <<<"$out" && fail "fault scenarios failed"
(( rc == 0 )) || fail "experiments/faults exited $rc"
grep -q "^PASS" <<<"$out" || skip "every scenario skipped"
pass "stall-ring,stall-ps"
