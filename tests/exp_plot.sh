#!/usr/bin/env bash
# exp_plot.sh: psring plot on the committed fixture CSV makes every figure as a non-empty PNG
# and SVG (PNG magic checked); bad input gets one line and exit 2.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
command -v gnuplot >/dev/null || skip "gnuplot missing"
scratch
cp "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" "$SCRATCH/r.csv"
cp "$TOP_SRCDIR/tests/fixtures/calibration.csv" "$SCRATCH/cal.csv"
"$TOP_SRCDIR/psring" plot "$SCRATCH/r.csv" -o "$SCRATCH/fig" --calibration "$SCRATCH/cal.csv" || fail "psring plot failed"
for f in throughput efficiency breakdown accuracy bytes model; do
  [[ -s $SCRATCH/fig/$f.png && -s $SCRATCH/fig/$f.svg ]] || fail "$f.png/.svg missing or empty"
  [[ $(head -c 4 "$SCRATCH/fig/$f.png" | od -An -c | tr -d ' ') == *PNG* ]] || fail "$f.png is not a PNG"
  grep -q "<svg" "$SCRATCH/fig/$f.svg" || fail "$f.svg is not SVG"
done
# several calibrations (the demo's samples): the model figure shades the model's range over them
sed 's/^beta_zmq,\([0-9.e-]*\)/beta_zmq,9e-9/' "$SCRATCH/cal.csv" >"$SCRATCH/cal_b.csv"
cmp -s "$SCRATCH/cal.csv" "$SCRATCH/cal_b.csv" && fail "fixture has no beta_zmq to change"
"$TOP_SRCDIR/psring" plot "$SCRATCH/r.csv" -o "$SCRATCH/fig2" --calibration "$SCRATCH/cal.csv,$SCRATCH/cal_b.csv" \
  || fail "psring plot with two calibrations failed"
grep -q "range over 2 calibrations" "$SCRATCH/fig2/model.svg" || fail "model.svg has no band over the 2 calibrations"
grep -q "range over" "$SCRATCH/fig/model.svg" && fail "model.svg has a band with one calibration"
out=$("$TOP_SRCDIR/psring" plot "$SCRATCH/missing.csv" 2>&1); rc=$?
[[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 ]] || fail "missing file: rc $rc: $out"
echo "a,b" >"$SCRATCH/bad.csv"; echo "1,2" >>"$SCRATCH/bad.csv"
out=$("$TOP_SRCDIR/psring" plot "$SCRATCH/bad.csv" 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"not a psring results file"* ]] || fail "foreign CSV: rc $rc: $out"
pass "plot"
