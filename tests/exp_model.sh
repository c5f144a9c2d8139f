#!/usr/bin/env bash
# exp_model.sh: the cost model (experiments/psringlib/costmodel.py) against values computed by hand, the
# BytePS identity and its special cases, psring model --compare on a fixture with its errors
# computed by hand, --explain and --extrapolate, and bad input: one line, exit 2.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
MODEL="$TOP_SRCDIR/experiments/model"
python3 - "$TOP_SRCDIR/experiments" <<'PY' || fail "formulas"
import sys
sys.path.insert(0, sys.argv[1])
from psringlib import costmodel as cm
def close(a, b, what, rel=1e-9):
    assert abs(a - b) <= rel * max(abs(b), 1e-30), "%s: %.9g, want %.9g" % (what, a, b)
# ring: 2(N-1) alpha + 2(N-1)/N n beta + (N-1)/N n gamma
close(cm.ring_time(4, 1e6, 1e-5, 1e-9, 1e-10), 6e-5 + 1.5e-3 + 7.5e-5, "ring N=4")
close(cm.ring_time(2, 1e6, 1e-5, 1e-9, 0), 2e-5 + 1e-3, "ring N=2")
close(cm.ring_time(8, 4e5, 1e-4, 8e-9, 0), 14e-4 + 1.75 * 4e5 * 8e-9, "ring N=8")
close(cm.ring_time(1, 1e6, 1e-5, 1e-9, 1e-10), 0.0, "ring N=1")
# PS, k server hosts: 2N alpha + (max(n, N n/k) + max(N, k) slice) beta + N n/k gamma: a server
# host's link idles until the first slice is in from every worker
close(cm.ps_time(4, 1e6, 1e-5, 1e-9, 1e-10, k=1), 8e-5 + 2 * 4e6 * 1e-9 + 4e6 * 1e-10, "ps k=1 N=4 whole shards")
close(cm.ps_time(4, 1e6, 1e-5, 1e-9, 0, k=1, slice_bytes=65536), 8e-5 + (4e6 + 4 * 65536) * 1e-9, "ps k=1 N=4 sliced: N slices of fill")
close(cm.ps_time(4, 1e6, 0, 1e-9, 0, k=8, slice_bytes=1e5), (1e6 + 8e5) * 1e-9, "ps k=8 N=4: the worker link, k slices of fill")
close(cm.ps_time(8, 1e6, 0, 1e-9, 0, k=2, slice_bytes=1 << 30), (4e6 + 4e6) * 1e-9, "whole shards: push, then pull")
close(cm.ps_time(4, 1e6, 0, 1e-9, 0, S=4, slice_bytes=1e5), (1.5e6 + 1e5) * 1e-9, "colocated: one slice of fill")
close(cm.slice_bytes(64, 2), 32768, "a 64 KiB slice of floats is 32 KiB on the wire in fp16")
close(cm.slice_bytes(64, 4), 65536, "and 64 KiB in float32")
# PS, S colocated shards: (N+S-2) n/S on a shard holder, n on a host without one
close(cm.ps_bytes(4, 1e6, S=2), 2e6, "ps S=2 N=4 bytes")
close(cm.ps_bytes(8, 1e6, S=2), 4e6, "ps S=2 N=8 bytes")
close(cm.ps_bytes(4, 1e6, S=1), 3e6, "ps S=1 colocated N=4 bytes")
close(cm.ps_bytes(2, 1e6, S=1), 1e6, "ps S=1 N=2: the host without a shard pulls n")
# special cases: S = N colocated sends the ring's bytes; one server on its own host carries N n
for N in (2, 3, 4, 8, 64):
    close(cm.ps_bytes(N, 1e6, S=N), 2 * (N - 1) / N * 1e6, "S=N is the ring's bytes, N=%d" % N)
    close(cm.ps_bytes(N, 1e6, k=1), N * 1e6, "k=1 is N n, N=%d" % N)
# BytePS: t_opt = 2N(N-1)n/((N^2+kN-2k)B) falls out of ps_bytes at the best split x*
for N in (2, 4, 8, 16, 100):
    for k in range(1, N + 1):
        x = cm.byteps_x(N, k)
        close(cm.ps_bytes(N, 1e6, k=k, x=x) / 1.25e8, cm.byteps_optimum(N, k, 1e6, 1.25e8), "BytePS N=%d k=%d" % (N, k), 1e-9)
        close(cm.byteps_optimum(N, k, 1e6, 1.25e8), 2 * N * (N - 1) * 1e6 / ((N * N + k * N - 2 * k) * 1.25e8), "t_opt formula", 1e-12)
        # and no other split does better
        assert all(cm.ps_bytes(N, 1e6, k=k, x=i / 50) >= cm.ps_bytes(N, 1e6, k=k, x=x) * (1 - 1e-9) for i in range(51))
    close(cm.byteps_optimum(N, 0 + 1e-300, 1e6, 1.25e8), 2 * (N - 1) / N * 1e6 / 1.25e8, "k=0: the ring", 1e-9)
    close(cm.byteps_optimum(N, N, 1e6, 1.25e8), 1e6 / 1.25e8, "k=N: n/B", 1e-9)
# the step: BSP waits for a straggler at half a core, async does not
cal = {"alpha_s": 0.0, "beta_s_per_byte": 1e-9, "gamma_s_per_byte": 0.0}
close(cm.step_time("ring", 4, 1e6, cal, 0.01)[0], 0.01 + 1.5e-3, "ring step")
close(cm.step_time("ring", 4, 1e6, cal, 0.01, slow_share=0.5)[0], 0.02 + 1.5e-3, "ring step, straggler")
close(cm.step_time("ps", 4, 1e6, cal, 0.01, k=1, sync="async", slow_share=0.5)[0], 0.01 + 8e-3, "async: no wait")
# ssp, staleness 2, the straggler at half a core: a fast worker's step a = 10 + 8 ms, the
# straggler's b = 20 + 8; without synchronization the straggler's pace (wait b - a = 10 ms); with
# one every 4 steps max(4a, 2b) / 4 = a (no wait); every 8, max(8a, 6b) / 8 = 21 ms (wait 3 ms)
ssp = lambda **kw: cm.step_time("ps", 4, 1e6, cal, 0.01, k=1, sync="ssp", slow_share=0.5, **kw)[2]
close(ssp(staleness=2), 0.01, "ssp wait, no sync")
close(ssp(staleness=2, sync_every=4), 0.0, "ssp wait, sync every 4")
close(ssp(staleness=2, sync_every=8), 0.003, "ssp wait, sync every 8")
close(ssp(staleness=9, sync_every=8), 0.0, "ssp, s >= E: async")
close(cm.step_time("ring", 4, 1e6, cal, 0.01, buckets=2)[1], 0.75e-3, "two buckets under backward (6.7 ms): the last one shows")
# BSP waits for the slowest of N hosts: E[max of N draws] - mean of one host's steps
close(cm.slowest_of([1.0, 2.0], 2), 0.25, "slowest of 2 draws from {1, 2}: 1/4 x 1 + 3/4 x 2 - 1.5")
close(cm.slowest_of([1.0, 2.0, 3.0], 3), (1 / 27 + 2 * 7 / 27 + 3 * 19 / 27) - 2.0, "slowest of 3")
close(cm.slowest_of([5.0] * 10, 8), 0.0, "no spread, no wait")
close(cm.slowest_of([[1.0, 2.0], [1.0, 2.0], [1.0, 10.0]], 2), 0.25, "three runs: the median of 0.25, 0.25 and 2.25")
close(cm.slowest_of([[1.0, 2.0], [1.0, 10.0]], 2), (0.25 + 2.25) / 2, "two runs: the mean of the middle two")
close(cm.step_time("ring", 2, 0, cal, 1.5, samples=[1.0, 2.0])[2], 0.25, "the ring's step waits for it")
assert cm.step_time("ring", 1, 0, cal, 1.5, samples=[1.0, 2.0])[2] == 0.0
PY

printf 'format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-4,8e-9,0,1000000000,8\n' >"$SCRATCH/cal.csv"
# --compare on the fixture: hand-computed (fixture rows: n = 200000 params x 2 B; compute 14 ms from N=1;
# a 64 KiB PS slice of float32 parameters is 32 KiB on the wire in fp16)
"$MODEL" --calibration "$SCRATCH/cal.csv" --compare "$TOP_SRCDIR/tests/fixtures/demo_small.csv" --out "$SCRATCH/cmp.csv" >"$SCRATCH/out" \
  || { cat "$SCRATCH/out"; fail "--compare failed"; }
python3 - "$SCRATCH/cmp.csv" <<'PY' || fail "--compare values"
import sys; from psringlib import results
rows = {(r["label"], r["workers"]): r for r in results.read_rows(sys.argv[1])}
assert ("ring", "8") not in rows, "a failed run was compared"
want = {  # (model step ms, step err %, model exchange ms, exchange err %)
    ("ring", "4"): (19.4, -3.0, 5.4, -10.0),                                   # 6e-4 + 1.5 x 4e5 x 8e-9
    ("ps, 1 server host", "4"): (28.648576, -4.5, 14.648576, 1.0),             # 8e-4 + (1.6e6 + 4 x 32768) x 8e-9
    ("ps, N colocated", "4"): (19.862144, -5.4, 5.862144, -16.3),              # 8e-4 + (6e5 + 32768) x 8e-9
}
for k, (ms, err, ex, exerr) in want.items():
    r = rows[k]
    assert abs(float(r["model_step_ms"]) - ms) < 1e-3, (k, r["model_step_ms"], ms)
    assert abs(float(r["step_err_pct"]) - err) < 0.051, (k, r["step_err_pct"], err)
    assert abs(float(r["model_exchange_ms"]) - ex) < 1e-3, (k, r["model_exchange_ms"], ex)
    assert abs(float(r["exchange_err_pct"]) - exerr) < 0.051, (k, r["exchange_err_pct"], exerr)
PY
grep -q "ps, 1 server host" "$SCRATCH/out" || fail "--compare printed no table"
# two one-worker runs of the configuration: compute is their median (12 and 16 ms: 14 again)
python3 - "$TOP_SRCDIR/tests/fixtures/demo_small.csv" "$SCRATCH/two.csv" <<'PY'
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
one = dict(rows[0], step_ms="12.0")
ps1 = dict(rows[0], label="ps, 1 server host", topology="ps", servers="1", server_hosts="1", step_ms="20.0", exchange_ms="4.0")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0]))
    w.writeheader()
    w.writerows([one, ps1] + rows[1:])
PY
"$MODEL" --calibration "$SCRATCH/cal.csv" --compare "$SCRATCH/two.csv" --out "$SCRATCH/cmp2.csv" >/dev/null 2>&1 || fail "--compare on two one-worker runs failed"
grep -q '^ring,4,.*,19.400,' "$SCRATCH/cmp2.csv" || fail "compute is not the median of the one-worker runs: $(grep '^ring,4' "$SCRATCH/cmp2.csv")"
# with a step alone on one full core (topology local, 10 ms) compute is that, not the one-worker
# runs, and the step alone is the reference, not a compared point: ring N=4 at 19.4 - 14 + 10 ms
python3 - "$SCRATCH/two.csv" "$SCRATCH/alone.csv" <<'PY'
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
alone = dict(rows[0], label="step alone", topology="local", fp16="0", step_ms="10.0", exchange_ms="0", wait_ms="0")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0]))
    w.writeheader()
    w.writerows(rows + [alone])
PY
"$MODEL" --calibration "$SCRATCH/cal.csv" --compare "$SCRATCH/alone.csv" --out "$SCRATCH/cmp4.csv" >/dev/null 2>&1 || fail "--compare with a step alone failed"
grep -q '^ring,4,.*,15.400,' "$SCRATCH/cmp4.csv" || fail "compute is not the step alone: $(grep '^ring,4' "$SCRATCH/cmp4.csv")"
! grep -q "step alone" "$SCRATCH/cmp4.csv" || fail "the step alone is compared as a point: $(cat "$SCRATCH/cmp4.csv")"
# ssp with a straggler at half a core: the workers never meet (a sample budget), so whatever
# steps_per_epoch a row records, a fast worker keeps the straggler's pace: compute (14 ms) later
# than async's fast worker, who waits for nobody
python3 - "$TOP_SRCDIR/tests/fixtures/demo_small.csv" "$SCRATCH/ssp.csv" <<'PY'
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
ps1 = next(r for r in rows if r["label"] == "ps, 1 server host")
cols = list(rows[0]) + ["steps_per_epoch"]
ssp = [dict(ps1, sync="ssp", staleness="2", straggler="0.5", steps_per_epoch=e, command="ssp %s" % e) for e in ("4", "")]
ssp.append(dict(ps1, sync="async", straggler="0.5", steps_per_epoch="4", command="async"))
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, cols)
    w.writeheader()
    w.writerows(rows[:1] + ssp)
PY
"$MODEL" --calibration "$SCRATCH/cal.csv" --compare "$SCRATCH/ssp.csv" --out "$SCRATCH/cmp5.csv" >/dev/null 2>&1 || fail "--compare on ssp rows failed"
python3 - "$SCRATCH/cmp5.csv" <<'PY' || fail "ssp: the straggler's pace, whatever steps_per_epoch says"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
m = sorted(float(r["model_step_ms"]) for r in rows if r["sync"] == "ssp")
a = [float(r["model_step_ms"]) for r in rows if r["sync"] == "async"]
assert len(m) == 2 and len(a) == 1 and m[0] == m[1] and abs(m[0] - a[0] - 14.0) < 1e-3, (m, a)
PY
# repeats of one configuration: one line, on their median (ring N=4 at 20, 30 and 22 ms: 22 ms)
python3 - "$TOP_SRCDIR/tests/fixtures/demo_small.csv" "$SCRATCH/rep.csv" <<'PY'
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
ring4 = [r for r in rows if r["label"] == "ring" and r["workers"] == "4"][0]
reps = [dict(ring4, step_ms=ms, exchange_ms=ex, wait_ms="0", repeat=str(i + 1))
        for i, (ms, ex) in enumerate((("20.0", "5.0"), ("30.0", "9.0"), ("22.0", "6.0")))]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0]))
    w.writeheader()
    w.writerows([r for r in rows if r is not ring4] + reps)
PY
"$MODEL" --calibration "$SCRATCH/cal.csv" --compare "$SCRATCH/rep.csv" --out "$SCRATCH/cmp3.csv" >/dev/null 2>&1 || fail "--compare on repeats failed"
python3 - "$SCRATCH/cmp3.csv" <<'PY' || fail "--compare on repeats: not one line on the medians"
import sys; from psringlib import results
ring4 = [r for r in results.read_rows(sys.argv[1]) if r["label"] == "ring" and r["workers"] == "4"]
assert len(ring4) == 1, "%d lines for one configuration" % len(ring4)
r = ring4[0]
assert r["runs"] == "3" and r["step_ms"] == "22.000" and r["exchange_ms"] == "6.000", r
assert abs(float(r["step_err_pct"]) - 100 * (19.4 - 22) / 22) < 0.051, r   # the model's 19.4 ms against the median
PY
# compute: one worker's step on one full core. Without a step alone, the one-worker runs pooled
# (ring at 24, 24.5 and 23.8 ms, PS worker at 19.5, 28 and 19.2: median 23.9); with one
# (topology local, 22 and 23 ms), only those runs and their samples
python3 - "$TOP_SRCDIR/experiments" <<'PY' || fail "one-worker compute"
import sys
sys.path.insert(0, sys.argv[1])
from psringlib import stats
rows = [dict(topology=t, workers="1", straggler="1", step_ms=str(s), exchange_ms=str(e), step_samples_ms="1;2")
        for t, s, e in (("ring", 24, 0), ("ring", 24.5, 0), ("ring", 23.8, 0), ("ps", 24.5, 5), ("ps", 30, 2), ("ps", 23.2, 4))]
rows += [dict(topology="ring", workers="2", straggler="1", step_ms="99", exchange_ms="0"),
         dict(topology="ring", workers="1", straggler="0.5", step_ms="99", exchange_ms="0"),
         dict(topology="ring", workers="1", straggler="1", step_ms="99", exchange_ms="0", error="died")]
c, samples = stats.one_worker_compute(rows, lambda r: 0)[0]
assert abs(c - 0.0239) < 1e-12, c
assert samples == [[0.001, 0.002]] * 6, samples
rows += [dict(topology="local", workers="1", straggler="1", step_ms=str(s), exchange_ms="0", step_samples_ms="3;4")
         for s in (22, 23)]
rows += [dict(topology="local", workers="1", straggler="1", step_ms="5", exchange_ms="0", error="killed")]
c, samples = stats.one_worker_compute(rows, lambda r: 0)[0]
assert abs(c - 0.0225) < 1e-12, c
assert samples == [[0.003, 0.004]] * 2, samples
PY
# --explain: the formula with the numbers in
out=$("$MODEL" --calibration "$SCRATCH/cal.csv" --explain --topology ring -N 8 --params 200000 --fp16 --compute-ms 14) || fail "--explain: $out"
[[ $out == *"14 x 100.0 us"*"1.75 x 0.40 MB / 125 MB/s"* ]] || fail "--explain ring: $out"
out=$("$MODEL" --calibration "$SCRATCH/cal.csv" --explain --topology ps -N 4 --server-hosts 2 --params 200000 --compute-ms 14) || fail "--explain ps: $out"
[[ $out == *"BytePS"* && $out == *"8 x 100.0 us"* && $out == *"+ 4 x 0.400) MB"* ]] || fail "--explain ps: $out"
# ssp with a straggler at half a core: the wait falls as the synchronizations come closer
w0=$("$MODEL" --calibration "$SCRATCH/cal.csv" --explain --topology ps -N 4 --server-hosts 1 --params 200000 --compute-ms 14 \
     --straggler 0.5 --sync ssp) || fail "--explain ssp: $w0"
w4=$("$MODEL" --calibration "$SCRATCH/cal.csv" --explain --topology ps -N 4 --server-hosts 1 --params 200000 --compute-ms 14 \
     --straggler 0.5 --sync ssp --sync-every 4) || fail "--explain ssp: $w4"
[[ $w0 == *"wait 14.00 ms"* && $w4 == *"wait 0.00 ms"* ]] || fail "--explain ssp, no sync / every 4 steps: $w0 / $w4"
# --extrapolate: one named model on hosts of G GPUs, 8 to 1024 GPUs (its values: exp_model_scale.sh)
"$MODEL" --extrapolate --compute-ms 50 --model vgg16 >"$SCRATCH/ex" || fail "--extrapolate failed"
[[ $(head -1 "$SCRATCH/ex") == "vgg16: 138 M params x 4 B; 8 GPUs per host"* && $(grep -c '^ *[0-9]' "$SCRATCH/ex") == 8 ]] \
  && grep -q "^winner changes: " "$SCRATCH/ex" || fail "--extrapolate: $(cat "$SCRATCH/ex")"
# PS slices (the trainer's 1 MiB) pipeline pulls behind pushes: N server hosts of their own move n
# per link each way against the ring's 2(N-1)/N n, and beat it from N=4 (as whole shards they never did)
for N in 2 4; do
  t=$(for topo in ps ring; do "$MODEL" --predict --topology $topo --hosts $N --gpus-per-host 1 --server-hosts $N --model resnet50 \
      --link-rate 10g --framework none --gamma-ns-per-byte 0 --compute-ms 50 | tail -1 | cut -d, -f8; done)
  python3 -c "import sys; ps, ring = map(float, sys.argv[1].split()); sys.exit((ps < ring) != ($N == 4))" "$t" \
    || fail "resnet50 at 10 Gbit, N=$N: PS with N server hosts against the ring: $t"
done

# bad input: one line, exit 2
printf 'key,value\nalpha_mpi,1e-5\n' >"$SCRATCH/old.csv"
printf 'topology,workers\nring,2\n' >"$SCRATCH/cols.csv"
printf 'format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-4,0,0,1000000000,8\n' >"$SCRATCH/beta0.csv"
python3 - "$TOP_SRCDIR/tests/fixtures/demo_small.csv" "$SCRATCH" <<'PY'
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
for name, i, change in (("badcell", 1, dict(step_ms="nan")), ("noshard", [r["label"] for r in rows].index("ps, N colocated"), dict(servers="0"))):
    with open("%s/%s.csv" % (sys.argv[2], name), "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(rows[:i] + [dict(rows[i], **change)] + rows[i + 1:])
PY
while IFS='|' read -r args want; do
  out=$("$MODEL" $args 2>&1); rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == *"$want"* ]] || fail "model $args: rc $rc, want 2 and one line with '$want': $out"
done <<EOF2
--calibration $SCRATCH/cal.csv --explain --topology star -N 4 --compute-ms 1|unknown topology 'star'
--calibration $SCRATCH/cal.csv --explain --topology ring -N 0 --compute-ms 1|-N must be at least 1
--calibration $SCRATCH/cal.csv --explain --topology ps -N 4 --servers 5 --compute-ms 1|--servers must be in 1..N=4
--calibration $SCRATCH/cal.csv --explain --topology ps -N 4 --server-hosts -1 --compute-ms 1|--server-hosts must be >= 0
--calibration $SCRATCH/cal.csv --explain --topology ring -N 4|needs --compute-ms
--calibration $SCRATCH/cal.csv --explain --topology ps -N 4 --sync ssp --sync-every -1 --compute-ms 1|--sync-every and --staleness must be at least 0
--calibration $SCRATCH/cal.csv --compare $SCRATCH/cols.csv|no column
--calibration $SCRATCH/old.csv --compare $TOP_SRCDIR/tests/fixtures/demo_small.csv|an older format
--calibration $SCRATCH/none.csv --compare $TOP_SRCDIR/tests/fixtures/demo_small.csv|No such file
--bogus|unrecognized arguments
--calibration $SCRATCH/cal.csv --compare $SCRATCH/badcell.csv|badcell.csv:3: column step_ms: 'nan' is not a number > 0
--calibration $SCRATCH/cal.csv --compare $SCRATCH/noshard.csv|a PS row needs servers or server hosts
--calibration $SCRATCH/beta0.csv --explain --topology ring -N 4 --compute-ms 1|beta > 0
--calibration $SCRATCH/cal.csv --explain --topology ring -N 4 --compute-ms nan|--compute-ms must be a number > 0
--calibration $SCRATCH/cal.csv --explain --topology ps -N 4 --servers 2 --server-hosts 2 --compute-ms 1|are alternatives
--extrapolate --alpha-us -1|--alpha-us must be a number >= 0
--predict --server-hosts 1 --topology ring --servers 2|are alternatives
--extrapolate --explain|goes alone
--calibration $SCRATCH/cal.csv --compare $TOP_SRCDIR/tests/fixtures/demo_small.csv --out $SCRATCH|Is a directory
--calibration $SCRATCH/cal.csv|nothing to do
EOF2
# --help is the docstring: one usage line, no argparse listing after it
"$MODEL" --help >"$SCRATCH/help" 2>&1 || fail "model --help failed"
[[ $(grep -c '^usage:' "$SCRATCH/help") == 1 ]] && ! grep -q '^options:' "$SCRATCH/help" \
  || fail "model --help: want one usage line and no argparse listing: $(cat "$SCRATCH/help")"
pass "cost model: formulas, BytePS identity, --compare, --explain, --extrapolate, bad input"
