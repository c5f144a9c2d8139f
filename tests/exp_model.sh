#!/usr/bin/env bash
# exp_model.sh: the cost model's formulas against values computed by hand, and psring model's
# command line (bad flags exit 2; --compare on the fixture names a worst point).
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
python3 - "$TOP_SRCDIR/experiments" <<'PY' || fail "cost model formulas"
import sys, math
sys.path.insert(0, sys.argv[1])
import pslib
def close(a, b, what):
    if not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15):
        sys.exit("%s: got %r, expected %r" % (what, a, b))
# ring: 2(N-1)a + 2(N-1)/N n b + (N-1)/N n g
# N=4, n=1e6 B, a=1e-5, b=1e-9, g=1e-10: 6e-5 + 1.5e-3 + 7.5e-5 = 1.635e-3
close(pslib.ring_time(4, 1e6, 1e-5, 1e-9, 1e-10), 1.635e-3, "ring N=4")
# N=2: 2e-5 + 1e-3 + 5e-5 = 1.07e-3; share 2 doubles it
close(pslib.ring_time(2, 1e6, 1e-5, 1e-9, 1e-10), 1.07e-3, "ring N=2")
close(pslib.ring_time(2, 1e6, 1e-5, 1e-9, 1e-10, share=2), 2.14e-3, "ring N=2 share 2")
close(pslib.ring_time(1, 1e6, 1e-5, 1e-9, 1e-10), 0.0, "ring N=1")
# hierarchical, H=2 hosts of L=4: 2 rounds of (2*1e-6 + 2*1e6*1e-10 + 1e6*1e-10) = 6.04e-4 inside the
# hosts, plus ring_time(2, ...) = 1.07e-3 across them -> 1.674e-3; L=1 is the plain ring over H
close(pslib.hier_time(2, 4, 1e6, 1e-5, 1e-9, 1e-10, 1e-6, 1e-10), 1.674e-3, "hierarchical H=2 L=4")
close(pslib.hier_time(4, 1, 1e6, 1e-5, 1e-9, 1e-10, 1e-6, 1e-10), 1.635e-3, "hierarchical L=1")
# ps bsp N=4 S=1 n=1e6: lat 2*1*1e-5=2e-5; xfer 2*max(1e6,4e6)*1e-9=8e-3; agg 4*1e6*1e-10=4e-4;
# apply 1e6*2e-10=2e-4 -> 8.62e-3
close(pslib.ps_time(4, 1, 1e6, 1e-5, 1e-9, 1e-10, 2e-10), 8.62e-3, "ps N=4 S=1")
# S=4: lat 8e-5; xfer 2*max(1e6,1e6)*1e-9 = 2e-3; agg 4*2.5e5*1e-10 = 1e-4; apply 5e-5 -> 2.23e-3
close(pslib.ps_time(4, 4, 1e6, 1e-5, 1e-9, 1e-10, 2e-10), 2.23e-3, "ps N=4 S=4")
# async N=4 S=2: worker 4e-5 + 2e-3 + 5e5*3e-10 = 2.19e-3; server 4*(2*5e5*1e-9 + 5e5*3e-10) = 4.6e-3
close(pslib.ps_time(4, 2, 1e6, 1e-5, 1e-9, 1e-10, 2e-10, sync="async"), 4.6e-3, "ps async N=4 S=2")
close(pslib.allreduce_bytes(4, 1e6), 1.5e6, "ring bytes")
close(pslib.ps_server_bytes(4, 2, 1e6), 4e6, "server bytes")
# ring exchange = allreduce + the averaging pass n gamma: 1.635e-3 + 1e6*1e-10 = 1.735e-3
close(pslib.ring_exchange_time(4, 1e6, 1e-5, 1e-9, 1e-10), 1.735e-3, "ring exchange N=4")
close(pslib.ring_exchange_time(4, 1e6, 1e-5, 1e-9, 1e-10, share=2), 3.47e-3, "ring exchange N=4 share 2")
close(pslib.ring_exchange_time(1, 1e6, 1e-5, 1e-9, 1e-10), 0.0, "ring exchange N=1")
# time-slicing: P <= cores -> 1; at the benchmark's P the benchmark's factor; P=8 on 2 cores with
# 3.0 measured at 4 ranks: 3.0 * 8*7 / (4*3) = 14.0; one core: 3.0 * 8/4 = 6.0
close(pslib.ring_share(2, 2, 3.0, 4), 1.0, "share P=2 on 2 cores")
close(pslib.ring_share(4, 2, 3.0, 4), 3.0, "share P=4 at the benchmark")
close(pslib.ring_share(8, 2, 3.0, 4), 14.0, "share P=8 by co-scheduling")
close(pslib.ring_share(8, 1, 3.0, 4), 6.0, "share P=8 on 1 core")
# host beta: calibrated at 1, 2, 4 clients; linear between, flat beyond
hb = {1: 4e-10, 2: 3e-10, 4: 2.5e-10}
close(pslib.host_beta(1, hb), 4e-10, "host beta K=1")
close(pslib.host_beta(3, hb), 2.75e-10, "host beta K=3")
close(pslib.host_beta(8, hb), 2.5e-10, "host beta K=8")
# ps on one host, N=4 S=2 n=1e6: 2*2*1e-5 = 4e-5; 2*4*1e6*2.5e-10 = 2e-3; 4*5e5*1e-10 = 2e-4;
# 5e5*2e-10 = 1e-4; the worker's copy 1e6*1e-10 = 1e-4 -> 2.44e-3 (S does not divide the host's bandwidth)
close(pslib.ps_host_time(4, 2, 1e6, 1e-5, 2.5e-10, 1e-10, 2e-10), 2.44e-3, "ps host N=4 S=2")
# N=1 S=1: 2e-5 + 2*1e6*4e-10 = 8e-4 + 1e-4 + 2e-4 + 1e-4 -> 1.22e-3
close(pslib.ps_host_time(1, 1, 1e6, 1e-5, 4e-10, 1e-10, 2e-10), 1.22e-3, "ps host N=1 S=1")
# sliced bsp (--ps-chunk-kb): only the last slice's sum and apply are exposed. last_slice of a
# 2.5e6-byte shard in 1e6 slices = 5e5; a shard of whole slices ends with a full one; unsliced or
# smaller than a slice: the shard
close(pslib.last_slice(2.5e6, 1e6), 5e5, "last slice 2.5e6 / 1e6")
close(pslib.last_slice(2e6, 1e6), 1e6, "last slice 2e6 / 1e6")
close(pslib.last_slice(5e5, 1e6), 5e5, "last slice of a small shard")
close(pslib.last_slice(2.5e6, 0), 2.5e6, "unsliced")
# N=4 S=1 n=2.5e6, slices 1e6 (s = 5e5): 2e-5 + 2*4*2.5e6*2.5e-10 = 5e-3 + 4*5e5*1e-10 = 2e-4
# + 5e5*2e-10 = 1e-4 + 2.5e6*1e-10 = 2.5e-4 -> 5.57e-3 (unsliced: N n/S gamma = 1e-3, n/S delta
# = 5e-4 instead -> 6.77e-3)
close(pslib.ps_host_time(4, 1, 2.5e6, 1e-5, 2.5e-10, 1e-10, 2e-10, 1e6), 5.57e-3, "ps host sliced N=4 S=1")
close(pslib.ps_host_time(4, 1, 2.5e6, 1e-5, 2.5e-10, 1e-10, 2e-10), 6.77e-3, "ps host unsliced N=4 S=1")
# load/store ring: share (alpha_shm + n beta_shm), nothing for one rank; PS from its own benchmark
close(pslib.ring_shm_time(4, 1e6, 1e-5, 2e-11, 2.0), 6e-5, "ring shm N=4 share 2")
assert pslib.ring_shm_time(1, 1e6, 1e-5, 2e-11) == 0.0
close(pslib.ps_bench_time(2, 1e6, 5e-10), 2e-3, "ps bench N=2")
# crossover: with S=N servers the PS moves the same bytes per link as ... 2n vs 2(N-1)/N n
assert pslib.ps_time(8, 8, 1e6, 0, 1e-9, 0, 0) > pslib.ring_time(8, 1e6, 0, 1e-9, 0)
PY
out=$("$TOP_SRCDIR/experiments/model" --bogus 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"unknown option '--bogus'"* && $(wc -l <<<"$out") -eq 1 ]] || fail "bad flag: rc $rc: $out"
scratch
cp "$TOP_SRCDIR/tests/fixtures/calibration.csv" "$SCRATCH/cal.csv"
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv" --compare "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" \
      --out "$SCRATCH/cmp.csv") || fail "model --compare failed: $out"
[[ $out == *"worst point:"* ]] || fail "no worst point in: $out"
[[ $(wc -l <"$SCRATCH/cmp.csv") -ge 7 ]] || fail "comparison CSV too short"
# calibrations interleaved with a sweep's repeats (the demo): --save writes each parameter's
# median over the files, units kept; beta_mpi 1e-10, 3e-10, 2e-10 -> 2e-10, the rest unchanged
sed 's/^beta_mpi,1e-10/beta_mpi,3e-10/' "$SCRATCH/cal.csv" >"$SCRATCH/cal_b.csv"
sed 's/^beta_mpi,1e-10/beta_mpi,2e-10/' "$SCRATCH/cal.csv" >"$SCRATCH/cal_c.csv"
"$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv,$SCRATCH/cal_b.csv,$SCRATCH/cal_c.csv" \
  --save "$SCRATCH/merged.csv" >/dev/null || fail "model --save failed"
[[ $(grep '^beta_mpi,' "$SCRATCH/merged.csv") == "beta_mpi,2e-10,s/byte" ]] || fail "--save: beta_mpi not the median: $(cat "$SCRATCH/merged.csv")"
[[ $(grep '^alpha_zmq,' "$SCRATCH/merged.csv") == "alpha_zmq,2e-05,s" ]] || fail "--save: alpha_zmq changed: $(cat "$SCRATCH/merged.csv")"
# --compare over several calibrations: model_ms from the medians, model_min/max_ms the range of
# each file's own prediction (cal_x2: every time per message and per byte doubled)
awk -F, 'BEGIN { OFS = "," } $3 == "s" || $3 == "s/byte" { $2 = 2 * $2 } { print }' "$SCRATCH/cal.csv" >"$SCRATCH/cal_x2.csv"
"$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv,$SCRATCH/cal_x2.csv" \
  --compare "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" --out "$SCRATCH/cmp2.csv" >/dev/null || fail "--compare over 2 files"
python3 - "$SCRATCH/cmp2.csv" "$SCRATCH/cmp.csv" <<'PY' || fail "model range over calibrations"
import csv, sys
two = list(csv.DictReader(open(sys.argv[1])))
one = {(r["config"], r["workers"]): r for r in csv.DictReader(open(sys.argv[2]))}
for r in two:
    lo, mid, hi = float(r["model_min_ms"]), float(r["model_ms"]), float(r["model_max_ms"])
    o = one[(r["config"], r["workers"])]
    assert o["model_min_ms"] == o["model_ms"] == o["model_max_ms"], o
    if r["error_pct"]:   # not the one-worker ring (no exchange)
        assert o["model_ms"] == r["model_min_ms"] and lo < mid < hi, (r, o)
PY
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv" --save /proc/no/such.csv 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"--save /proc/no/such.csv"* && $(wc -l <<<"$out") -eq 1 ]] || fail "--save to a bad path: rc $rc: $out"
# expect_compare CAL MEAS WHAT ROW...: psring model --compare CAL against MEAS; each ROW is
# "config|workers|measured_ms|model_ms|error_pct" as the comparison CSV must print it
expect_compare() {
  local cal=$1 meas=$2 what=$3
  shift 3
  "$TOP_SRCDIR/experiments/model" --calibration "$cal" --compare "$meas" --out "$SCRATCH/cmp_rows.csv" \
    >/dev/null || fail "model --compare with $what failed"
  python3 - "$SCRATCH/cmp_rows.csv" "$@" <<'PY' || fail "$what"
import csv, sys
rows = {(r["config"], r["workers"]): r for r in csv.DictReader(open(sys.argv[1]))}
for spec in sys.argv[2:]:
    config, workers, *want = spec.split("|")
    r = rows[(config, workers)]
    assert [r["measured_ms"], r["model_ms"], r["error_pct"]] == want, (spec, r)
PY
}
# host model and the wait split, by hand: ps S=1 N=2, n = 250000 floats = 1e6 bytes, exchange 3.0 ms
# of which wait 0.5 -> transfer 2.5 ms; model (alpha_zmq 2e-5, beta_host_k2 5e-10, gamma 4e-11,
# delta 6e-11) 2*2e-5 + 2*2*1e6*5e-10 + 2*1e6*4e-11 + 1e6*6e-11 + 1e6*4e-11 = 4e-5 + 2e-3 + 8e-5
# + 6e-5 + 4e-5 = 2.22 ms -> -11.2%. Ring N=2 on 2 cores (share 1): exchange 0.5, wait 0.3 -> 0.2 ms;
# model 2*1e-6 + 1e6*1e-10 + 0.5e6*4e-11 + 1e6*4e-11 = 2e-6 + 1e-4 + 2e-5 + 4e-5 = 0.162 ms -> -19.0%.
# Ring N=4 (the benchmark's 4 ranks measured share 2): exchange 1.0, wait 0.5 -> 0.5 ms; model
# 2*(6*1e-6 + 1.5*1e6*1e-10 + 0.75*1e6*4e-11 + 1e6*4e-11) = 2*(6e-6 + 1.5e-4 + 3e-5 + 4e-5)
# = 0.452 ms -> -9.6%
cp "$SCRATCH/cal.csv" "$SCRATCH/cal_host.csv"
printf 'beta_host_k1,6e-10,s/byte\nbeta_host_k2,5e-10,s/byte\nbeta_host_k4,4e-10,s/byte\nring_share_np4,2,factor\n' >>"$SCRATCH/cal_host.csv"
cat >"$SCRATCH/meas.csv" <<CSV
topology,allreduce,sync,servers,workers,fp16,params,exchange_ms,wait_ms,error
ps,,bsp,1,2,0,250000,3.0,0.5,
ring,ring,,,2,0,250000,0.5,0.3,
ring,ring,,,4,0,250000,1.0,0.5,
CSV
expect_compare "$SCRATCH/cal_host.csv" "$SCRATCH/meas.csv" "host keys (host model / wait split)" \
  "ps S=1|2|2.5000|2.2200|-11.2" "ring|2|0.2000|0.1620|-19.0" "ring|4|0.5000|0.4520|-9.6"
# the step-conditioned ring keys replace beta_ring and gamma for the ring on this host, and
# ps_slice_bytes prices the sliced bsp round; same rows, by hand (n = 1e6 bytes):
# ps S=1 N=2, slices of 6e5 (last 4e5): 4e-5 + 2e-3 + 2*4e5*4e-11 = 3.2e-5 + 4e5*6e-11 = 2.4e-5
#   + 1e6*4e-11 = 4e-5 -> 2.136 ms vs 2.5 -> -14.6%
# ring N=2 (beta_ring_step 5e-11, gamma_ring_step 2e-11): 2e-6 + 1e6*5e-11 + 0.5e6*2e-11 + 1e6*2e-11
#   = 2e-6 + 5e-5 + 1e-5 + 2e-5 = 0.082 ms vs 0.2 -> -59.0%
# ring N=4, share 2: 2*(6e-6 + 1.5e6*5e-11 + 0.75e6*2e-11 + 1e6*2e-11) = 2*(6e-6 + 7.5e-5 + 1.5e-5
#   + 2e-5) = 0.232 ms vs 0.5 -> -53.6%
cp "$SCRATCH/cal_host.csv" "$SCRATCH/cal_step.csv"
printf 'beta_ring_step,5e-11,s/byte\ngamma_ring_step,2e-11,s/byte\nps_slice_bytes,600000,byte\n' >>"$SCRATCH/cal_step.csv"
expect_compare "$SCRATCH/cal_step.csv" "$SCRATCH/meas.csv" "step keys (step-conditioned ring / sliced ps)" \
  "ps S=1|2|2.5000|2.1360|-14.6" "ring|2|0.2000|0.0820|-59.0" "ring|4|0.5000|0.2320|-53.6"
# the load/store ring (alpha_shm_step 1e-5, beta_shm_step 2e-11 per byte of gradient) and the PS
# through its own code (beta_ps_sS_kK) replace both on this host; by hand (n = 1e6 bytes):
# ring N=2: 1e-5 + 1e6*2e-11 = 3e-5 (the average is folded into the stores: no division pass)
#   -> 0.03 vs 0.2 -> -85.0%
# ring N=4, ring_share_np4 3: 3*(1e-5 + 2e-5) = 9e-5 -> 0.09 ms vs 0.5 -> -82.0%
# ps S=1 N=2: 2*2*1e6*5e-10 = 2.0 ms vs 2.5 -> -20.0%
# ps S=2 N=3 (between k2 2.5e-10 and k4 2e-10: 2.25e-10): 2*3*1e6*2.25e-10 = 1.35 ms vs 1.5 -> -10.0%
# ps S=3 N=4 (S=2 is the largest calibrated: 2e-10): 2*4*1e6*2e-10 = 1.6 ms vs 2.0 -> -20.0%
cp "$SCRATCH/cal_step.csv" "$SCRATCH/cal_shm.csv"
printf 'alpha_shm_step,1e-5,s\nbeta_shm_step,2e-11,s/byte\nring_share_np4,3,factor\n' >>"$SCRATCH/cal_shm.csv"
printf 'beta_ps_s1_k1,6e-10,s/byte\nbeta_ps_s1_k2,5e-10,s/byte\nbeta_ps_s1_k4,4e-10,s/byte\n' >>"$SCRATCH/cal_shm.csv"
printf 'beta_ps_s2_k1,3e-10,s/byte\nbeta_ps_s2_k2,2.5e-10,s/byte\nbeta_ps_s2_k4,2e-10,s/byte\n' >>"$SCRATCH/cal_shm.csv"
cp "$SCRATCH/meas.csv" "$SCRATCH/meas_shm.csv"
printf 'ps,,bsp,2,3,0,250000,1.5,0,\nps,,bsp,3,4,0,250000,2.5,0.5,\n' >>"$SCRATCH/meas_shm.csv"
expect_compare "$SCRATCH/cal_shm.csv" "$SCRATCH/meas_shm.csv" "load/store and PS benchmark keys" \
  "ring|2|0.2000|0.0300|-85.0" "ring|4|0.5000|0.0900|-82.0" "ps S=1|2|2.5000|2.0000|-20.0" \
  "ps S=2|3|1.5000|1.3500|-10.0" "ps S=3|4|2.0000|1.6000|-20.0"
# a network link still gets the message ring's formula, printed, and its numbers
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal_shm.csv" --link-gbps 10) || fail "model --link-gbps"
[[ $out == *"2(N-1) alpha + 2(N-1)/N n beta + (N-1)/N n gamma"* ]] || fail "no ring formula for network links: $out"
# the step the calibration runs before each primitive: the model's layers at psring-train's
# per-worker batch; calibrating needs the layers (a bare --params has no step to run): one line, 2
python3 - "$TOP_SRCDIR/experiments" <<'PY' || fail "compute spec, calibration samples"
import importlib.machinery, importlib.util, sys, os
sys.path.insert(0, sys.argv[1])
loader = importlib.machinery.SourceFileLoader("model", os.path.join(sys.argv[1], "model"))
spec = importlib.util.spec_from_loader("model", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
assert m.compute_spec("784,512,256,10") == "mlp:784,512,256,10:64", m.compute_spec("784,512,256,10")
assert m.compute_spec("784,10", 8) == "mlp:784,10:8"
# one calibration's launches per --calibrate-samples K (psring-calibrate K times, psring-bench-ps K
# times per workers x servers group, the 4-rank ring min(K, 3) times), each parameter the median of
# its runs: the mpiruns replaced by a stand-in that answers what each benchmark would write
import types
launches = []
def fake_run(cmd, **kw):
    exe = cmd[cmd.index("-np") + 2]
    launches.append(exe)
    k = launches.count(exe)
    if exe == "psring-calibrate":
        return types.SimpleNamespace(returncode=0, stderr="",
                                     stdout="param,value,unit\nalpha_shm_step,%g,s\nbeta_shm_step,%g,s/byte\n" % (k * 1e-6, 1e-11))
    path = cmd[cmd.index("--csv") + 1]
    with open(path, "w") as f:
        if exe == "psring-bench-ps":
            f.write("impl,time_s,iters,size\nps,%g,200,1000\n" % (0.2 * k))
        else:
            f.write("impl,size,time_us\nring,1000,%g\n" % (100.0 * k))
    return types.SimpleNamespace(returncode=0, stderr="", stdout="")
m.subprocess.run = fake_run
m.find_bin = lambda name: name
os.environ["MPIRUN"] = "mpirun"
for K, calls, shares in ((1, 1, 1), (3, 3, 3), (7, 7, 3)):
    launches.clear()
    cal = m.calibrate_once(1000, "784,10", K)
    assert launches.count("psring-calibrate") == calls, (K, launches)
    assert launches.count("psring-bench-ps") == K * len(m.PS_BENCH_WORKERS) * len(m.PS_BENCH_SERVERS), (K, launches)
    assert launches.count("psring-bench-allreduce") == shares, (K, launches)
    assert cal["ring_samples"][0] == calls, cal
    # medians: alpha_shm_step of runs 1..K us, the first group's rounds 0.2 ms x 1..K
    assert abs(cal["alpha_shm_step"][0] - (calls + 1) / 2 * 1e-6) < 1e-12, cal
    assert abs(cal["beta_ps_s1_k1"][0] - 0.2 * (K + 1) / 2 / 200 / 2000) < 1e-12, cal
    assert abs(cal["ring_bench_np4_s"][0] - (shares + 1) / 2 * 1e-4) < 1e-12, cal
PY
for flag in --calibrate-samples --calibrate-repeats; do
  for bad in 0 x 1,2 101; do
    out=$("$TOP_SRCDIR/experiments/model" $flag $bad --calibration "$SCRATCH/none.csv" 2>&1); rc=$?
    [[ $rc -eq 2 && $out == *"$flag must be an integer in [1, 100]"* && $(wc -l <<<"$out") -eq 1 && ! -e $SCRATCH/none.csv ]] \
      || fail "$flag $bad: rc $rc: $out"
  done
done
out=$("$TOP_SRCDIR/experiments/model" --calibrate --params 1000 --calibration "$SCRATCH/none.csv" 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"needs --layers"* && $(wc -l <<<"$out") -eq 1 && ! -e $SCRATCH/none.csv ]] \
  || fail "calibrate with --params: rc $rc: $out"
# psring-calibrate itself, tiny sizes: the step keys and the slice come out, bad flags exit 2
if [[ -x $TOP_BUILDDIR/psring-calibrate ]] && command -v "$MPIRUN" >/dev/null; then
  # Slopes over small sizes drown in the noise of a loaded machine (make check runs other tests
  # beside this one): up to 3 tries for every key to come out positive; a run that cannot resolve
  # the load/store ring's slope says so in one line and exits 1, which counts as a try.
  for try in 1 2 3; do
    out=$("$MPIRUN" $MPIRUN_FLAGS -np 2 "$TOP_BUILDDIR/psring-calibrate" --max-bytes 65536 --agg-bytes 100000 \
          --ps-chunk-kb 32 --compute mlp:784,128,10:8 --chunk-kb 16 --reps 5 --shm-reps 9 2>&1); rc=$?
    bad_key=
    if [[ $rc -ne 0 ]]; then
      [[ $out == *"did not resolve"* ]] || fail "psring-calibrate: rc $rc: $out"
      bad_key="(unresolved)"
    else
      for k in beta_ring_step gamma_ring_step beta_host_k4 alpha_shm_step beta_shm_step; do
        v=$(awk -F, -v k=$k '$1 == k { print $2 }' <<<"$out")
        awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || bad_key="$k=$v"
      done
    fi
    [[ -z $bad_key ]] && break
  done
  [[ -z $bad_key ]] || fail "psring-calibrate: $bad_key is not positive in 3 tries: $out"
  [[ $(awk -F, '$1 == "ps_slice_bytes" { print $2 }' <<<"$out") == 32768 ]] || fail "ps_slice_bytes not 32768: $out"
  # the step's gradient: 784*128 + 128 + 128*10 + 10 = 101770 parameters = 407080 bytes, at batch 8
  # (large enough that the load/store ring's cost per byte resolves over 4 KiB..n on a loaded machine)
  [[ $(awk -F, '$1 == "step_bytes" { print $2 }' <<<"$out") == 407080 ]] || fail "step_bytes not 407080: $out"
  [[ $(awk -F, '$1 == "step_batch" { print $2 }' <<<"$out") == 8 ]] || fail "step_batch not 8: $out"
  [[ $(awk -F, '$1 == "shm_steps" { print $2 }' <<<"$out") == 9 ]] || fail "shm_steps not 9 (--shm-reps): $out"
  for bad in 0 x 100001; do
    err=$("$TOP_BUILDDIR/psring-calibrate" --shm-reps $bad 2>&1); rc=$?
    [[ $rc -eq 2 && $err == *"--shm-reps"* && $(wc -l <<<"$err") -eq 1 ]] || fail "bad --shm-reps $bad: rc $rc: $err"
  done
  err=$("$TOP_BUILDDIR/psring-calibrate" --ps-chunk-kb -1 2>&1); rc=$?
  [[ $rc -eq 2 && $err == *"--ps-chunk-kb"* && $(wc -l <<<"$err") -eq 1 ]] || fail "bad --ps-chunk-kb: rc $rc: $err"
  for bad in "mlp:784,10" "mlp:784,10:0" "cnn:784,10:64" "mlp:784,x,10:64"; do
    err=$("$TOP_BUILDDIR/psring-calibrate" --compute "$bad" 2>&1); rc=$?
    [[ $rc -eq 2 && $err == *"--compute"* && $(wc -l <<<"$err") -eq 1 ]] || fail "bad --compute $bad: rc $rc: $err"
  done
fi
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv" --extrapolate) || fail "extrapolate"
[[ $(awk '$2 == 1024' <<<"$out" | wc -l) -eq 3 ]] || fail "no 1024-worker rows for 3 link speeds: $out"
pass "cost model"
