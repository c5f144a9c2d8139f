#!/usr/bin/env bash
# exp_plot.sh: psring plot on the committed fixture CSV makes every figure as a non-empty PNG
# and SVG (PNG magic checked); bad input gets one line and exit 2; a GPU sweep's throughput
# figure draws the reference its ranks' sharing of the GPUs allows (checked through its data).
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
import csv, sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
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
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH" <<'PY' || fail "the drawing pieces (psringlib.gnuplot)"
import os, sys
from psringlib import gnuplot as plot
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
# GPU sweeps (psring sweep --device cuda; tests/fixtures/sweep_gpu.csv: ring and ps with 1-8 ranks
# on one GPU, with and without MPS, samples/s shaped like an H200's): the figure's data. Where ranks
# share the GPU the reference is one rank's throughput, flat, not N x it; where each has its own,
# the ideal linear line; the subtitle says which and whether MPS ran; series tell MPS and the path
# apart; the CPU fixture's figure keeps its ideal line and axis
python3 - "$TOP_SRCDIR" "$SCRATCH" <<'PY' || fail "the GPU sweep's throughput figure"
import os, re, subprocess, sys
from psringlib import results
top, out = sys.argv[1], sys.argv[2]


def plot(rows, name):
    """psring plot of rows; {title: data rows or expression} of its throughput curves, and the script"""
    csv_path = os.path.join(out, name + ".csv")
    cols = list(rows[0])
    for r in rows:
        results.append_row(csv_path, cols, r)
    subprocess.run([os.path.join(top, "psring"), "plot", csv_path, "-o", os.path.join(out, name)], check=True,
                   stdout=subprocess.DEVNULL)
    data = os.path.join(out, name, "plotdata")
    gp = open(os.path.join(data, "throughput.png.gp")).read()
    curves = {}
    for src, title in re.findall(r"^(?:plot |  )(.*?) title '(.*?)'(?:, \\)?$", gp, re.M):
        m = re.match(r"'(.*?)' using", src)
        curves[title] = [[float(x) for x in l.split()] for l in open(os.path.join(data, m.group(1)))] if m else src.split()[0]
    return curves, gp


gpu = results.read_rows(os.path.join(top, "tests/fixtures/sweep_gpu.csv"))
curves, gp = plot(gpu, "shared")
flat = "one rank (ranks share 1 GPU: its compute does not grow with the ranks)"
assert sorted(curves) == sorted([flat, "ring (ipc)", "ring (ipc, MPS)", "ps S=1", "ps S=1 (MPS)"]), sorted(curves)
best_one = max(float(r["samples_per_s"]) for r in gpu if r["workers"] == "1")
assert curves[flat] == [[n, best_one] for n in (1, 2, 4, 8)], curves[flat]
assert "ideal linear" not in gp, gp
assert "ranks share 1 GPU (up to 8 ranks on one), with and without MPS" in gp, gp
assert "set xlabel 'ranks N'" in gp
# each series holds its own runs (the one-rank ring row, no path, starts the ipc curve): median, min, max
for title, topo, mps in (("ring (ipc)", "ring", "0"), ("ring (ipc, MPS)", "ring", "1"), ("ps S=1 (MPS)", "ps", "1")):
    want = sorted([int(r["workers"])] + [float(r["samples_per_s"])] * 3 for r in gpu if r["topology"] == topo and r["mps"] == mps)
    assert curves[title] == want, (title, curves[title], want)
# every rank with a GPU of its own, no MPS: the ideal linear line, no flat one, no MPS in the names
own = [dict(r, gpus=r["workers"], ranks_per_gpu="1", mps="0") for r in gpu if r["mps"] == "1"]
curves, gp = plot(own, "own")
assert sorted(curves) == sorted(["ideal linear (N x best one rank: a GPU each)", "ring (ipc)", "ps S=1"]), sorted(curves)
assert curves["ideal linear (N x best one rank: a GPU each)"] == "x*%g" % best_one, curves
assert "each rank has a GPU of its own (8 GPUs), without MPS" in gp and "share" not in gp, gp
# two GPUs shared by up to 4 ranks each under MPS: min(N, 2) x one rank
two = [dict(r, gpus=str(min(int(r["workers"]), 2)), ranks_per_gpu=str(max(1, int(r["workers"]) // 2))) for r in gpu if r["mps"] == "1"]
curves, gp = plot(two, "two")
ref = "min(N, 2) x one rank (ranks share 2 GPUs: compute grows up to 2 ranks only)"
assert curves[ref] == [[1, best_one], [2, 2 * best_one], [4, 2 * best_one], [8, 2 * best_one]], curves
assert "ranks share 2 GPUs (up to 4 ranks on one), under MPS" in gp and "ring (ipc)" in curves, (gp, sorted(curves))
# the CPU sweep's figure as it was
cpu = open(os.path.join(out, "fig/plotdata/throughput.png.gp")).read()
assert "title 'ideal linear (N x best N=1)'" in cpu and "set xlabel 'workers (N)'" in cpu and "GPU" not in cpu, cpu
PY
pass "plot"
