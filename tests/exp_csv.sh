#!/usr/bin/env bash
# exp_csv.sh: the results CSV round trip. Python's writer (pslib) and reader agree on fields with
# commas, quotes and newlines; the trainer's C writer (metrics.c) is read back by the same reader
# with the quoted layers field intact; a file with another header is refused by both.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH/x.csv" <<'PY' || fail "python round trip"
import sys
sys.path.insert(0, sys.argv[1])
import pslib
cols = ["a", "b", "c"]
rows = [{"a": "784,512,10", "b": 'say "hi"', "c": "two\nlines"}, {"a": "", "b": "plain", "c": ",\"\","}]
for r in rows:
    pslib.append_row(sys.argv[2], cols, r)
back = pslib.read_rows(sys.argv[2])
assert back == rows, back
try:
    pslib.append_row(sys.argv[2], ["a", "b"], {"a": 1})
    sys.exit("a different header was accepted")
except pslib.CsvError as e:
    assert "different header" in str(e)
with open(sys.argv[2], "a") as f:
    f.write("1,2,3,4\n")
try:
    pslib.read_rows(sys.argv[2])
    sys.exit("a row with too many fields was accepted")
except pslib.CsvError as e:
    assert "4 fields" in str(e), e
PY
data=$(find_mnist) || skip "no MNIST for the trainer half (run ./quickstart build)"
[[ -x $TRAIN ]] || fail "no $TRAIN"
"$TRAIN" --data "$data" --train-limit 256 --steps 2 --test-limit 100 --layers 784,32,10 --quiet --csv "$SCRATCH/t.csv" \
  >/dev/null || fail "trainer run failed"
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH/t.csv" <<'PY' || fail "trainer CSV not read back"
import sys
sys.path.insert(0, sys.argv[1])
import pslib
rows = pslib.read_rows(sys.argv[2])
assert len(rows) == 1 and rows[0]["layers"] == "784,32,10" and rows[0]["steps"] == "2", rows
assert pslib.config_label(rows[0]) == "local"
PY
pass "csv round trip"
