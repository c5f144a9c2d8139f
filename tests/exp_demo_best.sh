#!/usr/bin/env bash
# exp_demo_best.sh: psring demo --best's pieces that need no emulated hosts: the regime the cost
# model chooses (one candidate's numbers checked by hand; no claim of the 15% target where the
# model says it is out of reach), the plan of runs and their commands and host kinds, the
# report's winner, margin and per-host arithmetic and the figure's data on a fixture CSV, and
# the options --best cannot take (one line, exit 2, nothing started).
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
DEMO="$TOP_SRCDIR/experiments/demo"
once() { # WANT ARGS...: exit 2 and the one line WANT
  local want=$1 out rc=0; shift
  out=$("$DEMO" "$@" -o "$SCRATCH/no" 2>&1) || rc=$?
  [[ $rc == 2 && $out == "$want" ]] || fail "demo $*: rc $rc: $out"
}
for flag in --loopback --quick --validate "--steps 4"; do
  once "psring demo: --best runs its own scenario: drop ${flag%% *}" --best $flag
done
once "psring demo: --best --dilation 8: BytePS k=2 at N=8 takes 18 CPU shares (a GPU host counts two), more than 1.25 cores at D=8: give --dilation 16 or more" \
  --best --dilation 8
[[ ! -e $SCRATCH/no ]] || fail "a refused --best made its results folder"
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH" <<'PY' || fail "demo --best"
import io, contextlib, os, sys
sys.path.insert(0, sys.argv[1])
from psringlib import results
from psringlib.demo import best, bestreport, bestruns
out = sys.argv[2]
# the main demo's calibration (docs/results/demo-lesson-2026-11-27/run1/calibration.csv)
cal = dict(alpha_s=34.75e-6, beta_s_per_byte=8e-9, gamma_s_per_byte=3.624e-11)
# one candidate by hand: 784-1024-1024-1024-10 has 784*1024+1024 + 2*(1024*1024+1024) + 1024*10+10
# = 2,913,290 parameters, n = 5,826,580 bytes in fp16. Ring at N=8: 14 alpha + 1.75 n beta +
# 0.875 n gamma = 0.4865 + 81.5721 + 0.1848 = 82.2434 ms. BytePS k=2 at N=8: x* = 28/76; the
# busiest link (worker's = server's) 1.473684 n = 8,586,539 B, plus a fill of 8 slices of 32 KiB
# (262,144 B); the busiest server sums 8 x* n / 2 = 8,586,539 B: 16 alpha + (8,586,539 + 262,144)
# beta + 8,586,539 gamma = 0.556 + 70.7895 + 0.3112 = 71.6567 ms; margin 1 - 71.6567 / 82.2434 = 12.87%
assert best.params(best.layers(1024)) == 2913290
p = best.predict(1024, cal)
ring, k2 = p["points"][("ring, overlap", 8)]["exchange"], p["points"][("BytePS k=2", 8)]["exchange"]
assert abs(ring * 1e3 - 82.2434) < 1e-3 and abs(k2 * 1e3 - 71.6567) < 1e-3, (ring, k2)
assert abs(best.margin(p) - 0.12873) < 1e-4, best.margin(p)
assert p["batch"] == 112 and p["points"][("BytePS k=2", 8)]["hosts"] == 10 and p["points"][("ps-lite, 1 server host", 8)]["hosts"] == 9
pl = p["points"][("ps-lite, 1 server host", 8)]["exchange"]   # 16 alpha + (8 n + 8 slices) beta + 8 n gamma
assert abs(pl - (16 * 34.75e-6 + (8 * 5826580 + 8 * 32768) * 8e-9 + 8 * 5826580 * 3.624e-11)) < 1e-12, pl
assert ("BytePS k=2", 2) not in p["points"] and ("BytePS k=1", 2) in p["points"]   # k < N only
assert abs(best.bound() - (1 - 1 / 1.1875)) < 1e-12
# the choice: no candidate reaches 15% within the budget, so the best margin within it, and the
# prediction says plainly that the target is out of reach
chosen, cands = best.choose_regime(cal)
assert chosen and not chosen["reached"] and chosen["wall"] <= best.BUDGET_S
assert chosen["margin"] == max(c["margin"] for c in cands if c["wall"] <= best.BUDGET_S) < best.TARGET
lines = best.write_prediction(out, chosen, cands, cal)
text = open(os.path.join(out, "prediction.txt")).read()
assert "the 15% target is out of reach within the budget" in text and "the best margin within the budget" in text, text
assert "cheapest" not in text.split("Chosen:")[1].splitlines()[0]
pred = best.read_prediction(out)
assert sorted({N for _, N in pred}) == [2, 4, 8] and all(r["target_reached"] == "0" for r in pred.values())
assert len(pred) == 4 + 6 + 6 and pred[("ring, overlap", 8)]["layers"] == chosen["layers"]
# a lower target that two candidates reach: the cheaper of them, and no 'out of reach'
low, _ = best.choose_regime(cal, target=0.11)
assert low["reached"] and low["W"] == 768 and 0.11 <= low["margin"] < 0.12, (low["W"], low["margin"])
assert not any("out of reach" in l for l in best.prediction_lines(low, cands, cal))
big, _ = best.choose_regime(cal, budget=10 ** 5, target=0.14)   # two reach 14% (W = 1536, 2048): the cheaper
assert big["reached"] and big["W"] == 1536 and "the cheapest with a margin >= 14%" in "\n".join(best.prediction_lines(big, cands, cal))
none, _ = best.choose_regime(cal, budget=10)
assert none is None and "No candidate fits" in best.prediction_lines(None, cands, cal)[-1]
# the plan: per N a cluster of N GPU hosts and 2 CPU hosts (ring, BytePS k < N), then N + 1 GPU
# hosts for ps-lite (its server on h0); every command as intended
plan = bestruns.clusters()
assert [(N, h, k, [r.design.label for r in rs]) for N, h, k, rs in plan][:2] == [
    (2, 4, "gpu:2,cpu:2", ["ring, overlap", "BytePS k=1", "BytePS k=1, overlap"]), (2, 3, "gpu:3", ["ps-lite, 1 server host"])]
assert [(N, h, k, len(rs)) for N, h, k, rs in plan][2:] == [(4, 6, "gpu:4,cpu:2", 5), (4, 5, "gpu:5", 1), (8, 10, "gpu:8,cpu:2", 5),
                                                         (8, 9, "gpu:9", 1)]
regime = dict(layers="784,1024,1024,1024,10", batch=112)
want = {"ring, overlap": (["--topology", "ring", "--overlap", "--chunk-kb"], ["--byteps", "--ps-mode", "--servers"], "gpu:8"),
        "ps-lite, 1 server host": (["--topology", "ps", "--servers", "--ps-mode", "optimizer"], ["--overlap", "--byteps"], "gpu:9"),
        "BytePS k=1": (["--byteps", "1", "--ps-mode", "sum"], ["--overlap", "--servers"], "gpu:8,cpu:1"),
        "BytePS k=1, overlap": (["--byteps", "1", "--ps-mode", "sum", "--overlap"], ["--servers"], "gpu:8,cpu:1"),
        "BytePS k=2": (["--byteps", "2", "--ps-mode", "sum"], ["--overlap", "--servers"], "gpu:8,cpu:2"),
        "BytePS k=2, overlap": (["--byteps", "2", "--ps-mode", "sum", "--overlap"], ["--servers"], "gpu:8,cpu:2")}
for r in [r for N, _, _, rs in plan if N == 8 for r in rs]:
    c = bestruns.command(r, regime, "d")
    has, hasnt, kinds = want[r.design.label]
    assert c[1:5] == ["train", "--cluster", "--workers", "8"] and "-np" not in c and "--fp16" in c, c
    assert all(f in c for f in has) and not any(f in c for f in hasnt), (r.design.label, c)
    if "--byteps" in c or "--servers" in c:
        assert c[c.index("--ps-mode") - 1] in ("1", "2") and c[c.index("--ps-chunk-kb") + 1] == "64", c
    assert c[c.index("--layers") + 1] == regime["layers"] and c[c.index("--batch") + 1] == "112", c
    assert bestruns.kinds_of(r) == kinds and bestruns.dilation(r, 16, "1gbit") == 16, (r, bestruns.kinds_of(r))
assert [bestruns.dilation(r, 16, "1gbit") for N, _, _, rs in plan if N < 8 for r in rs] == [8] * 10
alone = bestruns.command(bestruns.BestRun(bestruns.ALONE, 1), regime, "d")
assert "--cluster" not in alone and "--fp16" not in alone and alone[2:4] == ["--topology", "local"], alone
assert bestruns.placement_problem(16, "1gbit") == "" and "give --dilation 16" in bestruns.placement_problem(8, "1gbit")
# the runs on fake hosts: each cluster up with its hosts, kinds and the first run's dilation, the
# dilation changed where a run needs another, down after its runs; the step alone first; every row
# with exposed_ms = step - the step alone's; resumed, nothing is run or brought up again
calls, ran = [], []
bestruns.hosts.cluster = lambda *a, check=True: calls.append(a)
def fake_train(cmd, D, links=None):
    ran.append(cmd)
    step = 40.0 if "local" in cmd else 100.0 * D   # / D: 100 ms a step on the hosts
    with open(cmd[cmd.index("--csv") + 1], "w") as f:
        f.write("topology,workers,step_ms,data_ms,compute_ms,exchange_ms,wait_ms,optimizer_ms,wall_s,samples_per_s\n"
                "%s,%s,%g,0,%g,%g,0,0,1,100\n" % ("local" if "local" in cmd else "x", cmd[cmd.index("--workers") + 1] if "--workers" in cmd
                                                  else 1, step, step / 2, step / 2))
    return 0, "", ""
bestruns.train = fake_train
fake = os.path.join(out, "fake")
os.makedirs(fake)
best.write_prediction(fake, chosen, cands, cal)
o = dict(out=out, fresh=False, rate="1gbit", dilation=16, repeats=1)
made = []
with contextlib.redirect_stdout(io.StringIO()):
    bestruns.on_clusters(o, fake, "d", os.path.join(fake, "best.csv"), [], made)
ups = [c for c in calls if c[0] == "up"]
assert ups == [("up", h, "--rate", "1gbit", "--dilation", D, "--kinds", k) for h, k, D in
               ((4, "gpu:2,cpu:2", 8), (3, "gpu:3", 8), (6, "gpu:4,cpu:2", 8), (5, "gpu:5", 8), (10, "gpu:8,cpu:2", 16), (9, "gpu:9", 16))], ups
assert [c[0] for c in calls].count("down") == 6 and not [c for c in calls if c[0] == "dilate"] and made == [], calls
assert "--topology" in ran[0] and ran[0][ran[0].index("--topology") + 1] == "local" and len(ran) == 1 + 16, len(ran)
rows = results.read_rows(os.path.join(fake, "best.csv"))
assert len(rows) == 17 and all(float(r["exposed_ms"]) == 60.0 for r in rows[1:]) and rows[0]["exposed_ms"] == "", rows[:2]
assert {(r["label"], r["workers"], r["kinds"], r["hosts_used"]) for r in rows if r["label"] == "BytePS k=2"} == \
    {("BytePS k=2", "4", "gpu:4,cpu:2", "6"), ("BytePS k=2", "8", "gpu:8,cpu:2", "10")}
calls.clear(); ran.clear()
bestruns.on_clusters(o, fake, "d", os.path.join(fake, "best.csv"), rows, made)
assert calls == [] and ran == [], (calls, ran)
# the report on a fixture: N = 4 and 8, two repeats a run (medians), exposed = step - step alone
csv_path = os.path.join(out, "best.csv")
def add(label, N, hosts, sps, ex, step, rep):
    results.append_row(csv_path, bestruns.COLUMNS, dict(label=label, topology="ps" if "ps" in label.lower() else "ring", workers=N,
                       layers="784,1024,1024,1024,10", batch_per_worker=112, samples_per_s=sps, exchange_ms=ex, wait_ms=0,
                       step_ms=step, exposed_ms=step - 30, hosts_used=hosts, sweep_id="best", repeat=rep, command=label + str(N), error=""))
for rep, d in ((1, 0.0), (2, 20.0)):   # repeat 2 a little faster: medians halfway
    for N, ring_sps, k2_sps in ((4, 3000, 3300), (8, 5000, 6000)):
        add("ring, overlap", N, N, ring_sps + d, 100.0, 130.0, rep)
        add("BytePS k=2", N, N + 2, k2_sps + d, 90.0, 120.0, rep)
        add("ps-lite, 1 server host", N, N + 1, 1000 + d, 400.0, 430.0, rep)
results.append_row(csv_path, bestruns.COLUMNS, dict(label="step alone", topology="local", workers=1, step_ms=30, samples_per_s=3733,
                   sweep_id="best", repeat=1, command="alone", error=""))
tab = bestreport.tables(results.read_rows(csv_path))
assert tab[("BytePS k=2", 8)]["per_host"][:3] == (6010 / 10, 6000 / 10, 6020 / 10) and tab[("ring, overlap", 8)]["per_host"][0] == 5010 / 8
assert tab[("ring, overlap", 4)]["exposed"][0] == 100.0 and tab[("BytePS k=2", 4)]["hosts"] == 6
w = bestreport.winner(tab, 8)
assert w[0] == "BytePS k=2" and w[2] == "ring, overlap" and abs(w[3] - (6010 / 5010 - 1)) < 1e-12 and w[4] == 10, w
fix = {("ring, overlap", 8): dict(model_exchange_ms="120", model_exposed_ms="95", margin_k2_n8_pct="12.87"),
       ("BytePS k=2", 8): dict(model_exchange_ms="82", model_exposed_ms="82", margin_k2_n8_pct="12.87"),
       ("ring, overlap", 4): dict(model_exchange_ms="130", model_exposed_ms="120", margin_k2_n8_pct="12.87")}
text = "\n".join(bestreport.summary_lines(results.read_rows(csv_path), fix, dict(rate="1gbit")))
for want in ("winner: BytePS k=2, 6010 samples/s, 20.0% over ring, overlap, on 10 hosts (the runner-up takes 8)",
             "winner: BytePS k=2, 3310 samples/s, 10.0% over ring, overlap, on 6 hosts (the runner-up takes 4)",
             "The model's exchange within 10% of the measured at N = 4, 8: 2 of 3",
             "BytePS k=2's exchange at N=8: 10.0% under the ring's (predicted 12.9% under"):
    assert want in text, "summary lacks '%s':\n%s" % (want, text)
row = next(l for l in text.splitlines() if l.strip().startswith("BytePS k=2") and "601" in l)
assert row.split()[2:] == ["90.00", "90.00", "6010", "10", "601", "82.00", "yes"], row
# the figure draws samples/s per host used: N, median, min, max per design
with contextlib.redirect_stdout(io.StringIO()):
    bestreport.figure(out, results.read_rows(csv_path))
dat = lambda i: [[float(x) for x in l.split()] for l in open(os.path.join(out, "best-data", "perhost%d.dat" % i))]   # noqa: E731
assert dat(0) == [[4, 3010 / 4, 3000 / 4, 3020 / 4], [8, 5010 / 8, 5000 / 8, 5020 / 8]], dat(0)
near = lambda got, want: len(got) == len(want) and all(abs(a - b) < 1e-3 for g, w in zip(got, want) for a, b in zip(g, w))   # noqa: E731  (%g: 6 digits)
assert near(dat(4), [[4, 3310 / 6, 3300 / 6, 3320 / 6], [8, 601, 600, 602]]), dat(4)
assert near(dat(1), [[4, 1010 / 5, 200, 204], [8, 1010 / 9, 1000 / 9, 1020 / 9]]), dat(1)
assert not os.path.exists(os.path.join(out, "best-data", "perhost2.dat"))   # no BytePS k=1 in the fixture
PY
pass "demo --best: the model's regime (hand-checked, 15% not claimed), the plan and commands, the report and figure data, bad options"
