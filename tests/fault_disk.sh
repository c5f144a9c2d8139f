#!/bin/bash
# fault_disk.sh: checkpoints on a full or read-only file system: clear error, previous checkpoint intact (SKIP without mount rights).
# A wrapper for make check around experiments/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set MNIST_DIR)"
out=$("$TOP_SRCDIR/experiments/faults" --builddir "$TOP_BUILDDIR" --data "$DATA" --only disk-full,read-only 2>&1)
rc=$?
echo "$out"
grep -q "^FAIL" <<<"$out" && fail "fault scenarios failed"
(( rc == 0 )) || fail "experiments/faults exited $rc"
grep -q "^PASS" <<<"$out" || skip "every scenario skipped"
pass "disk-full,read-only"
