#!/bin/bash
# train_snapshots.sh: --snapshot-every K --snapshots FILE: worker 0 copies its parameters at step 0
# and every K steps, and --eval-snapshots tests the copies afterwards: the first point is measured
# (about 10% before any step), the steps are 0, K, 2K, ..., the time axis grows and leaves the
# copies out, the last copy scores what the run's own final test says, the ring and the BSP PS
# score the same at every step (one model), and no epoch line tests (no test on the timed path).
# Bad input: one line, exit 2.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
common="--layers 784,64,10 --lr-scale none --batch 128 --epochs 2 --train-limit 3072 --test-limit 2000 --data $DATA --seed 3"
snap() { # NAME NP ARGS...: the run's output in NAME.out, its copies tested in NAME.csv
  local name=$1 np=$2; shift 2
  timeout 120 $MPIRUN $MPIRUN_FLAGS -np "$np" "$TRAIN" $common --snapshot-every 4 --snapshots "$SCRATCH/$name.bin" "$@" \
    >"$SCRATCH/$name.out" 2>&1 || { cat "$SCRATCH/$name.out"; fail "$name failed"; }
  "$TRAIN" --layers 784,64,10 --test-limit 2000 --data "$DATA" --eval-snapshots "$SCRATCH/$name.bin" >"$SCRATCH/$name.csv" 2>/dev/null \
    || fail "$name: --eval-snapshots"
}
snap local 1 --topology local --batch 256
snap ring 2 --topology ring
snap ps 3 --topology ps --servers 1
python3 - "$SCRATCH" <<'PY' || fail "the copies"
import re, sys
from psringlib import results
d = sys.argv[1]
rows = {n: results.read_rows("%s/%s.csv" % (d, n)) for n in ("local", "ring", "ps")}
for n, rs in rows.items():
    steps, t, acc = [int(r["step"]) for r in rs], [float(r["elapsed_s"]) for r in rs], [float(r["test_accuracy"]) for r in rs]
    assert steps == list(range(0, 25, 4)), (n, steps)                 # 2 epochs of 12 steps: 0, 4, ..., 24
    assert acc[0] < 0.2 and acc[-1] > 0.7, (n, acc)                   # measured before any step; trained at the end
    assert t[0] < 1e-3 and all(b > a for a, b in zip(t, t[1:])), (n, t)
    out = open("%s/%s.out" % (d, n)).read()
    final = float(re.search(r"test accuracy ([0-9.]+)%", out).group(1))
    assert abs(100 * acc[-1] - final) < 0.01, (n, acc[-1], final)    # step 24 is the last: the run's own test
    assert not re.search(r"^epoch .* test ", out, re.M), (n, out)    # no test at the epochs' ends
assert [r["test_accuracy"] for r in rows["ring"]] == [r["test_accuracy"] for r in rows["ps"]], rows
assert [r["test_accuracy"] for r in rows["ring"]] == [r["test_accuracy"] for r in rows["local"]], rows
PY
expect_bad "--snapshot-every and --snapshots go together" --data "$DATA" --snapshot-every 3
expect_bad "--snapshot-every and --snapshots go together" --data "$DATA" --snapshots "$SCRATCH/x.bin"
expect_bad "--snapshot-every must be an integer >= 1" --data "$DATA" --snapshot-every 0 --snapshots "$SCRATCH/x.bin"
expect_bad "--eval-snapshots $SCRATCH/none.bin: no such file" --data "$DATA" --eval-snapshots "$SCRATCH/none.bin"
expect_bad "--eval-snapshots tests copies on one process" --data "$DATA" --snapshot-every 2 --snapshots "$SCRATCH/y.bin" --eval-snapshots "$SCRATCH/local.bin"
out=$(timeout 60 $MPIRUN $MPIRUN_FLAGS -np 2 "$TRAIN" --data "$DATA" --topology ring --eval-snapshots "$SCRATCH/local.bin" 2>&1); rc=$?
[[ $rc != 0 && $(grep -c "psring-train: --eval-snapshots tests copies on one process" <<<"$out") == 1 ]] || fail "eval under mpirun: rc $rc: $out"
expect_bad "copies of 50890 parameters, --layers 784,32,10 has 25450" --data "$DATA" --layers 784,32,10 --eval-snapshots "$SCRATCH/local.bin"
head -c 100 "$SCRATCH/local.bin" >"$SCRATCH/cut.bin"
expect_bad "cut short at step 0" --data "$DATA" --layers 784,64,10 --eval-snapshots "$SCRATCH/cut.bin"
printf 'not a snapshot file' >"$SCRATCH/junk.bin"
expect_bad "not a --snapshots file" --data "$DATA" --eval-snapshots "$SCRATCH/junk.bin"
expect_bad "--snapshots $SCRATCH: is a directory" --data "$DATA" --snapshot-every 2 --snapshots "$SCRATCH"
pass "copies at steps 0, 4, ..., 24, tested afterwards: measured from ~10%, the run's final test at the last, ring == PS == local"
