#!/usr/bin/env bash
# exp_wait.sh: wait_ms measures waiting for the slowest worker. With worker 1 sleeping 8 ms after
# every step (--slow-rank 1 --slow-ms 8), worker 0 waits about 8 ms per step for it: at the
# ring's barrier, and at the PS server (worker 1 says it is ready 8 ms after worker 0). The CSV
# reports the mean over the two workers, so about 4 ms; and never more than exchange_ms.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
command -v "$MPIRUN" >/dev/null || skip "mpirun missing"
DATA=$(find_mnist) || skip "MNIST not found (run experiments/get-mnist)"
scratch
common=(--data "$DATA" --train-limit 1280 --test-limit 500 --epochs 2 --batch 64 --quiet --slow-rank 1 --slow-ms 8)
timeout 120 "$MPIRUN" $MPIRUN_FLAGS -np 2 "$TRAIN" --topology ring "${common[@]}" --csv "$SCRATCH/ring.csv" >/dev/null \
  || fail "ring run failed"
timeout 120 "$MPIRUN" $MPIRUN_FLAGS -np 3 "$TRAIN" --topology ps --servers 1 "${common[@]}" --csv "$SCRATCH/ps.csv" >/dev/null \
  || fail "ps run failed"
python3 - "$SCRATCH/ring.csv" "$SCRATCH/ps.csv" <<'PY' || fail "wait_ms"
import sys; from psringlib import results
for path in sys.argv[1:]:
    (r,) = results.read_rows(path)
    ex, wait = float(r["exchange_ms"]), float(r["wait_ms"])
    # half of the 8 ms on average over the two workers, minus slack for a loaded machine
    assert 2.0 <= wait <= ex, (r["topology"], "exchange_ms", ex, "wait_ms", wait)
PY
pass "wait_ms"
