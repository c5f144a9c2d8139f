#!/usr/bin/env bash
# exp_sweep_resume.sh: a tiny sweep writes one complete row per run; a failing configuration is
# recorded with its error while the sweep goes on; running the same sweep again skips every
# finished run and retries only the failed one; bad flags get one line and exit 2.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
data=$(find_mnist) || skip "no MNIST (run ./quickstart build)"
[[ -x $TRAIN ]] || fail "no $TRAIN"
export PSRING_BUILDDIR=$TOP_BUILDDIR
scratch
sweep=("$TOP_SRCDIR/psring" sweep --csv "$SCRATCH/r.csv" --sweep-id t --topologies ring,ps --servers 1
       --workers 1,2 --repeats 1 --train-limit 640 --steps 5 --test-limit 500 --data "$data")
"${sweep[@]}" >"$SCRATCH/out1" 2>&1 || { cat "$SCRATCH/out1"; fail "first sweep failed"; }
grep -q "run 4/4" "$SCRATCH/out1" || fail "no progress line 'run 4/4': $(cat "$SCRATCH/out1")"
grep -q "ETA" "$SCRATCH/out1" || fail "no ETA in progress"
python3 - "$SCRATCH/r.csv" <<'PY' || fail "rows incomplete"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
assert len(rows) == 4, len(rows)
required = ["topology", "workers", "layers", "params", "samples_per_s", "step_ms", "exchange_ms", "test_accuracy",
            "wall_s", "repeat", "sweep_id", "command", "bytes_sent_per_worker"]
for r in rows:
    assert not r["error"], r["error"]
    for c in required:
        assert r[c] != "", (c, r["command"])
    if r["topology"] == "ps":
        assert r["servers"] == "1" and r["sync"] == "bsp" and r["bytes_per_server"], r
    assert r["layers"] == "784,512,256,10"   # a quoted field survived the round trip
    assert r["command"].startswith("psring train -np ")
PY
before=$(wc -l <"$SCRATCH/r.csv")
"${sweep[@]}" >"$SCRATCH/out2" 2>&1 || fail "second sweep failed"
grep -q "4 already done" "$SCRATCH/out2" || fail "resume did not skip: $(cat "$SCRATCH/out2")"
[[ $(wc -l <"$SCRATCH/r.csv") -eq $before ]] || fail "resume appended rows"
# a failing run: 4 workers with --drop-last and 2 samples leaves nobody a sample (--batch 2: the
# one worker's run fits its shard of 2)
fsweep=("$TOP_SRCDIR/psring" sweep --csv "$SCRATCH/f.csv" --sweep-id f --topologies ring --workers 1,4 --repeats 1
        --train-limit 2 --batch 2 --steps 2 --test-limit 100 --data "$data" -- --drop-last)
"${fsweep[@]}" >"$SCRATCH/out3" 2>&1 || fail "the sweep stopped at the failed run: $(cat "$SCRATCH/out3")"
python3 - "$SCRATCH/f.csv" <<'PY' || fail "failed run not recorded"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
assert len(rows) == 2, rows
ok, bad = rows[0], rows[1]
assert not ok["error"] and ok["workers"] == "1", ok
assert bad["workers"] == "4" and "exit 2" in bad["error"] and "no sample" in bad["error"], bad["error"]
PY
"${fsweep[@]}" >"$SCRATCH/out4" 2>&1
grep -q "1 already done" "$SCRATCH/out4" || fail "failed run should be retried, finished one skipped: $(cat "$SCRATCH/out4")"
out=$("$TOP_SRCDIR/psring" sweep --workers 0,x 2>&1); rc=$?
[[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 ]] || fail "bad --workers: rc $rc: $out"
# refused before the first run: a timeout the run's timer cannot hold, a CSV that cannot take a row
for a in "--timeout inf" "--csv $SCRATCH" "--repeats 1,2" "-- --csv=x.csv"; do
  out=$("$TOP_SRCDIR/psring" sweep --workers 1 --topologies local $a 2>&1); rc=$?
  [[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 ]] || fail "sweep $a: rc $rc: $out"
done
out=$("$TOP_SRCDIR/psring" sweep --csv "$TOP_SRCDIR/tests/fixtures/sweep_small.epochs.csv" --dry-run 2>&1); rc=$?
[[ $rc -eq 0 ]] || fail "dry run: $out"
out=$("$TOP_SRCDIR/psring" sweep --csv "$TOP_SRCDIR/tests/fixtures/sweep_small.epochs.csv" --workers 1 --topologies local 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"different header"* ]] || fail "foreign CSV accepted: rc $rc: $out"
pass "sweep: complete rows, failures recorded, resume skips finished runs"
