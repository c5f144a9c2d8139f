#!/usr/bin/env bash
# The single-process trainer learns MNIST: one epoch on 10k samples reaches > 90% test accuracy,
# and the CSV row is complete.
source "$(dirname "$0")/common.sh"
scratch
data=$(find_mnist) || skip "no MNIST (run experiments/get-mnist)"
"$TRAIN" --data "$data" --layers 784,128,10 --train-limit 10000 --epochs 1 --quiet --csv "$SCRATCH/r.csv" >/dev/null || fail "training failed"
python3 - "$SCRATCH/r.csv" <<'PY' || fail "see above"
import sys; from psringlib import results
row = results.read_rows(sys.argv[1])[0]
req = ["topology", "workers", "device", "layers", "params", "batch_per_worker", "global_batch", "epochs",
       "steps", "lr", "seed", "samples_per_s", "step_ms", "compute_ms", "exchange_ms", "optimizer_ms",
       "bytes_sent_per_worker", "bytes_recv_per_worker", "final_loss", "test_accuracy", "wall_s"]
missing = [c for c in req if row.get(c, "") == ""]
if missing:
    sys.exit("CSV row misses required columns: %s" % missing)
acc = float(row["test_accuracy"])
if not acc > 0.90:
    sys.exit("test accuracy %.4f <= 0.90" % acc)
print("test accuracy %.4f" % acc)
PY
pass "one epoch on 10k samples learns, CSV row complete"
