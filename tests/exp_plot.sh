#!/usr/bin/env bash
# exp_plot.sh: psring plot on the committed fixture CSV makes every figure as a non-empty PNG
# and SVG (PNG magic checked); bad input gets one line and exit 2.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
command -v gnuplot >/dev/null || skip "gnuplot missing"
scratch
cp "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" "$SCRATCH/r.csv"
"$TOP_SRCDIR/psring" plot "$SCRATCH/r.csv" -o "$SCRATCH/fig" --label "loopback: all ranks on this machine" || fail "psring plot failed"
for f in throughput efficiency breakdown accuracy bytes; do
  [[ -s $SCRATCH/fig/$f.png && -s $SCRATCH/fig/$f.svg ]] || fail "$f.png/.svg missing or empty"
  [[ $(head -c 4 "$SCRATCH/fig/$f.png" | od -An -c | tr -d ' ') == *PNG* ]] || fail "$f.png is not a PNG"
  grep -q "<svg" "$SCRATCH/fig/$f.svg" || fail "$f.svg is not SVG"
  grep -q "loopback: all ranks on this machine" "$SCRATCH/fig/$f.svg" || fail "$f.svg does not say how the runs were made"
  [[ $(grep -o "loopback: all ranks on this machine" "$SCRATCH/fig/$f.svg" | wc -l) == 1 ]] || fail "$f.svg says it more than once"
done
out=$("$TOP_SRCDIR/psring" plot "$SCRATCH/missing.csv" 2>&1); rc=$?
[[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 ]] || fail "missing file: rc $rc: $out"
echo "a,b" >"$SCRATCH/bad.csv"; echo "1,2" >>"$SCRATCH/bad.csv"
out=$("$TOP_SRCDIR/psring" plot "$SCRATCH/bad.csv" 2>&1); rc=$?
[[ $rc -eq 2 && $out == *"not a psring results file"* ]] || fail "foreign CSV: rc $rc: $out"
# cells that would crash a figure or the verdict, or draw nonsense: one line naming line and column
python3 - "$SCRATCH/r.csv" "$SCRATCH" <<'PY'
import csv, pslib, sys
rows = pslib.read_rows(sys.argv[1])
for name, change in (("zero", dict(samples_per_s="0")), ("workers", dict(workers="0")), ("neg", dict(exchange_ms="-2.5"))):
    with open("%s/%s.csv" % (sys.argv[2], name), "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows([dict(rows[0], **change)] + rows[1:])
PY
for c in "plot zero.csv|line 2|column samples_per_s" "summary zero.csv|line 2|column samples_per_s" "plot workers.csv|line 2|column workers" \
         "summary neg.csv|line 2|column exchange_ms" "plot r.csv -o /proc/x|-o /proc/x|No such file"; do
  IFS='|' read -r args _ want <<<"$c"
  out=$(cd "$SCRATCH" && "$TOP_SRCDIR/psring" $args 2>&1); rc=$?
  [[ $rc -eq 2 && $(wc -l <<<"$out") -eq 1 && $out == *"$want"* ]] || fail "psring $args: rc $rc: $out"
done
# the drawing pieces the demo's figures use: a subtitle under the title (enhanced-text markup in it
# escaped), labelled x tics, a key entry alone, a bar's min-max as error bars; each drawn by gnuplot
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH" <<'PY' || fail "plot's drawing pieces"
import importlib.machinery, importlib.util, os, sys
loader = importlib.machinery.SourceFileLoader("plot", os.path.join(sys.argv[1], "plot"))
plot = importlib.util.module_from_spec(importlib.util.spec_from_loader("plot", loader))
loader.exec_module(plot)
out = sys.argv[2]
line = plot.title_line("Question?", subtitle=["a_b regime", "second"])
assert line == "set title 'Question?' . \"\\n\" . '{/=9 a\\_b regime}' . \"\\n\" . '{/=9 second}'", line
d = plot.data_file(out, "b.dat", [("ring", 10.0, 2.5, 0.5, 13.0, 12.0, 14.0)])
body = plot.bars_figure("Q?", "ms", d, [("a", "#000000"), ("b", "#111111"), ("c", "#222222")], subtitle="r", total=("step", 5))
assert body[-1].endswith("'' using 0:5:6:7 with yerrorbars pt 0 lw 1.5 lc rgb '#000000' title 'step'"), body[-1]
plot.draw(out, out, "bars", body)
body = plot.lines_figure("Q?", "ms", [plot.curve("alone", "#000000", expr="NaN", style="points", pt=6),
                                      plot.curve("", "#000000", plot.data_file(out, "e.dat", [(2, 10.0, "0.80")]), "1:2:3", "labels")],
                         xtics=[("k=2 (6 hosts)", 2), 4])
assert "set xtics ('k=2 (6 hosts)' 2, '4' 4)" in body, body
plot.draw(out, out, "lines", body)
assert all(os.path.getsize(os.path.join(out, f)) > 1000 for f in ("bars.png", "lines.svg"))
svg = open(os.path.join(out, "lines.svg")).read()
assert "k=2 (6 hosts)" in svg and "alone" in svg and ">0.80<" in svg
PY
pass "plot"
