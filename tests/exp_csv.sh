#!/usr/bin/env bash
# exp_csv.sh: the results CSV round trip. Python's writer (psringlib.results) and reader agree on fields with
# commas, quotes and newlines; the trainer's C writer (metrics.c) is read back by the same reader
# with the quoted layers field intact; a file with another header is refused by both; no script or
# test reads a CSV beside psringlib's reader.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH/x.csv" <<'PY' || fail "python round trip"
import sys
sys.path.insert(0, sys.argv[1])
from psringlib import results
cols = ["a", "b", "c"]
rows = [{"a": "784,512,10", "b": 'say "hi"', "c": "two\nlines"}, {"a": "", "b": "plain", "c": ",\"\","}]
for r in rows:
    results.append_row(sys.argv[2], cols, r)
back = results.read_rows(sys.argv[2])
assert back == rows, back


def refused(what, call, want):
    """call() must raise CsvError saying want"""
    try:
        call()
    except results.CsvError as e:
        assert want in str(e), (what, e)
        return
    sys.exit(what + " was accepted")


def write(text):
    with open(sys.argv[2], "w") as f:
        f.write(text)


refused("a different header", lambda: results.append_row(sys.argv[2], ["a", "b"], {"a": 1}), "different header")
with open(sys.argv[2], "a") as f:
    f.write("1,2,3,4\n")
refused("a row with too many fields", lambda: results.read_rows(sys.argv[2]), "4 fields")
# a write cut off: a line with too few fields is refused, and so is appending to a file whose last
# line has no newline (the new row would join it and vanish into its last field)
write("a,b,c\n1,2,3\n4,5\n")
refused("a row with too few fields", lambda: results.read_rows(sys.argv[2]), "2 fields, the header has 3")
write('a,b,c\n1,2,"cut')
refused("a line cut inside a quote", lambda: results.read_rows(sys.argv[2]), "not a CSV")
refused("a row appended to a cut-off line", lambda: results.append_row(sys.argv[2], cols, rows[0]), "cut off")
# a spreadsheet's byte-order mark is not part of the first column's name
with open(sys.argv[2], "w", encoding="utf-8-sig") as f:
    f.write("a,b,c\n1,2,3\n")
assert results.read_rows(sys.argv[2]) == [{"a": "1", "b": "2", "c": "3"}], results.read_rows(sys.argv[2])
results.append_row(sys.argv[2], cols, {"a": "4", "b": "5", "c": "6"})   # and a row goes after it
assert [r["a"] for r in results.read_rows(sys.argv[2])] == ["1", "4"], results.read_rows(sys.argv[2])
PY
data=$(find_mnist) || skip "no MNIST for the trainer half (run ./quickstart build)"
[[ -x $TRAIN ]] || fail "no $TRAIN"
"$TRAIN" --data "$data" --train-limit 256 --steps 2 --test-limit 100 --layers 784,32,10 --quiet --csv "$SCRATCH/t.csv" \
  >/dev/null || fail "trainer run failed"
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH/t.csv" <<'PY' || fail "trainer CSV not read back"
import sys
sys.path.insert(0, sys.argv[1])
from psringlib import results, stats
rows = results.read_rows(sys.argv[2])
assert len(rows) == 1 and rows[0]["layers"] == "784,32,10" and rows[0]["steps"] == "2", rows
assert stats.config_label(rows[0]) == "local"
PY
# one reader: every script and test reads CSVs through psringlib's results.read_rows, so a byte-order mark, a
# cut-off last line or a row of the wrong width is handled once (psringlib/results.py holds the only DictReader)
readers=$(cd "$TOP_SRCDIR" && grep -rlE --exclude="*.log" --exclude="*.trs" "csv[.]DictReader" experiments tests | grep -v "^experiments/psringlib/results[.]py$")
[[ -z $readers ]] || fail "a CSV read beside psringlib's reader in: $(echo $readers)"
pass "csv round trip"
