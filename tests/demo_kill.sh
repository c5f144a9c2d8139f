#!/bin/bash
# demo_kill.sh: a training process killed (SIGKILL) while `psring demo` runs: that run is recorded
# as failed with the reason (the CSV's error column, one "failed:" line, the summary), the demo
# goes on through the rest of its plan and exits 0, and the hosts still come down.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"
start_quick_demo
# a rank of the ring at N=2, the fourth run of --quick's plan (the third, PS at N=1, may still be
# shutting down when the fourth is announced: not that one), killed as soon as it is there, long
# before its run could end
killed=""
for _ in $(seq 1200); do
  kill -0 "$pid" 2>/dev/null || break
  if grep -q '\[4/7\] ring, N=2' "$SCRATCH/out"; then
    # a rank: psring-train under Open MPI's daemon (the launcher's own check of the options runs
    # psring-train too, before mpirun)
    for p in $(pgrep -f -- "--topology ring .*--csv $SCRATCH/r/"); do
      [[ $(cat "/proc/$p/comm" 2>/dev/null) == psring-train ]] || continue
      parent=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
      [[ $(cat "/proc/$parent/comm" 2>/dev/null) =~ ^(orted|prted|mpirun)$ ]] && kill -KILL "$p" 2>/dev/null && { killed=$p; break 2; }
    done
  fi
  sleep 0.05
done
[[ -n $killed ]] || { cat "$SCRATCH/out"; fail "no rank of the demo's ring at N=2 to kill"; }
for _ in $(seq 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { cat "$SCRATCH/out"; fail "the demo was still running 120 s after the kill"; }
wait "$pid"; rc=$?
[[ $rc == 0 ]] || { cat "$SCRATCH/out"; fail "the demo exited $rc after one failed run, want 0 (it goes on)"; }
n=$(grep -c "^  failed: " "$SCRATCH/out")
[[ $n == 1 ]] || { cat "$SCRATCH/out"; fail "'failed:' printed $n times, want once"; }
grep -q "^  failed: .*exited on signal 9" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "the failed line does not say the process was killed"; }
grep -q '\[7/7\]' "$SCRATCH/out" && grep -q "runs done" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "the demo did not go on after the failed run"; }
python3 - "$SCRATCH/r/demo.csv" <<'PY' || fail "demo.csv"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
bad = [r for r in rows if r["error"]]
assert len(bad) == 1 and "exited on signal 9" in bad[0]["error"], [r["error"] for r in rows]
assert sum(1 for r in rows if not r["error"] and r["samples_per_s"]) == len(rows) - 1, "a run after the kill has no result"
PY
grep -q "1 run(s) failed and are left out: .*exited on signal 9" "$SCRATCH/r/summary.txt" \
  || { cat "$SCRATCH/r/summary.txt"; fail "the summary does not name the failed run"; }
assert_clean "a demo with a killed run"
pass "a rank killed in the demo: '$(grep -m1 '^  failed: ' "$SCRATCH/out" | sed 's/^  failed: //' | cut -c1-100)'; the demo went on, nothing left"
