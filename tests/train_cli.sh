#!/usr/bin/env bash
# Bad input to psring-train: each case exits 2 with one line naming what was wrong.
source "$(dirname "$0")/common.sh"
scratch
data=$(find_mnist) || skip "no MNIST (run experiments/get-mnist)"


expect_bad "--bogus" --bogus
expect_bad "--batch" --data "$data" --batch -3
expect_bad "784" --data "$data" --layers 100,10
expect_bad "/no/such/dir" --data /no/such/dir
# a corrupted data file is named
mkdir -p "$SCRATCH/bad"
cp "$data"/* "$SCRATCH/bad/"
rm -f "$SCRATCH"/bad/train-labels-idx1-ubyte*
printf '\x00\x00\x08\x02\x00\x00\x00\x01\x05' > "$SCRATCH/bad/train-labels-idx1-ubyte"
expect_bad "train-labels-idx1-ubyte" --data "$SCRATCH/bad" --epochs 1
# a corrupted checkpoint is refused
echo "not a checkpoint" > "$SCRATCH/ck"
expect_bad "magic" --data "$data" --resume "$SCRATCH/ck"
# a checkpoint of another model is refused
"$TRAIN" --data "$data" --layers 784,32,10 --train-limit 256 --epochs 1 --quiet --checkpoint "$SCRATCH/ck2" >/dev/null || fail "training for the checkpoint failed"
expect_bad "do not match" --data "$data" --layers 784,64,10 --resume "$SCRATCH/ck2"
# an unwritable CSV path is a clear error, not a crash
out=$("$TRAIN" --data "$data" --layers 784,32,10 --train-limit 256 --epochs 1 --quiet --csv /no/such/dir/x.csv 2>&1 >/dev/null); rc=$?
[[ $rc -ne 0 && $out == *"/no/such/dir/x.csv"* ]] || fail "unwritable --csv: rc $rc, '$out'"
"$TRAIN" --help | grep -q -- "--topology" || fail "--help does not list --topology"
# where OpenBLAS picks the wrong kernels the trainer re-executes itself: still named psring-train
# (ps, pgrep and tools/faults find ranks by that name), not "exe" after /proc/self/exe
env -u OPENBLAS_CORETYPE "$TRAIN" --data "$data" --layers 784,32,10 --train-limit 256 --epochs 100000 >"$SCRATCH/re.out" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "^psring-train: topology" "$SCRATCH/re.out" && break; sleep 0.1; done
name=$(ps -o comm= -p "$pid")
kill "$pid"; wait "$pid" 2>/dev/null
if grep -q "re-executed with OPENBLAS_CORETYPE" "$SCRATCH/re.out"; then
  [[ $name == psring-train ]] || fail "after its OpenBLAS re-exec the trainer is named '$name', not psring-train"
fi
pass "bad input rejected with exit 2 and one line; the trainer keeps its name across its re-exec"
