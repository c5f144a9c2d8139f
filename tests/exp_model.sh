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
# ps bsp N=4 S=1 n=1e6: lat 2*1*1e-5=2e-5; xfer 2*max(1e6,4e6)*1e-9=8e-3; agg 4*1e6*1e-10=4e-4;
# apply 1e6*2e-10=2e-4 -> 8.62e-3
close(pslib.ps_time(4, 1, 1e6, 1e-5, 1e-9, 1e-10, 2e-10), 8.62e-3, "ps N=4 S=1")
# S=4: lat 8e-5; xfer 2*max(1e6,1e6)*1e-9 = 2e-3; agg 4*2.5e5*1e-10 = 1e-4; apply 5e-5 -> 2.23e-3
close(pslib.ps_time(4, 4, 1e6, 1e-5, 1e-9, 1e-10, 2e-10), 2.23e-3, "ps N=4 S=4")
# async N=4 S=2: worker 4e-5 + 2e-3 + 5e5*3e-10 = 2.19e-3; server 4*(2*5e5*1e-9 + 5e5*3e-10) = 4.6e-3
close(pslib.ps_time(4, 2, 1e6, 1e-5, 1e-9, 1e-10, 2e-10, sync="async"), 4.6e-3, "ps async N=4 S=2")
close(pslib.allreduce_bytes(4, 1e6), 1.5e6, "ring bytes")
close(pslib.ps_server_bytes(4, 2, 1e6), 4e6, "server bytes")
# crossover: with S=N servers the PS moves the same bytes per link as ... 2n vs 2(N-1)/N n
assert pslib.ps_time(8, 8, 1e6, 0, 1e-9, 0, 0) > pslib.ring_time(8, 1e6, 0, 1e-9, 0)
PY
out=$("$TOP_SRCDIR/experiments/model" --bogus 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"unknown option '--bogus'"* && $(wc -l <<<"$out") -eq 1 ]] || fail "bad flag: rc $rc: $out"
scratch
cat >"$SCRATCH/cal.csv" <<CAL
param,value,unit
alpha_mpi,1e-6,s
beta_mpi,1e-10,s/byte
alpha_ring,1e-6,s
beta_ring,1e-10,s/byte
alpha_zmq,2e-5,s
beta_zmq,5e-10,s/byte
gamma,4e-11,s/byte
delta,6e-11,s/byte
cores,2,count
CAL
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv" --compare "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" \
      --out "$SCRATCH/cmp.csv") || fail "model --compare failed: $out"
[[ $out == *"worst point:"* ]] || fail "no worst point in: $out"
[[ $(wc -l <"$SCRATCH/cmp.csv") -ge 7 ]] || fail "comparison CSV too short"
out=$("$TOP_SRCDIR/experiments/model" --calibration "$SCRATCH/cal.csv" --extrapolate) || fail "extrapolate"
[[ $(awk '$2 == 1024' <<<"$out" | wc -l) -eq 3 ]] || fail "no 1024-worker rows for 3 link speeds: $out"
pass "cost model"
