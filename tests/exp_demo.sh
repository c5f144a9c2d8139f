#!/usr/bin/env bash
# exp_demo.sh: psring demo's pieces that need no emulated hosts: the dilation correction (every
# time / D, throughput x D), a step's compute from a timeline, when a run's hosts get their CPU
# quota, its verdict on a fixture CSV (winners, ring over PS, scaling, the crossover in server
# hosts, the model's errors), the figures drawn from it, and bad flags (one line, exit 2).
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
DEMO="$TOP_SRCDIR/experiments/demo"
for bad in "--dilation 0" "--dilation x" "--repeats 0" "--rate fast" "--bogus" "--steps"; do
  out=$("$DEMO" $bad 2>&1); rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 ]] || fail "demo $bad: rc $rc, want 2 and one line: $out"
done
python3 - "$TOP_SRCDIR/experiments" "$SCRATCH" <<'PY' || fail "demo verdict"
import io, contextlib, os, re, shlex, signal, sys
sys.path.insert(0, sys.argv[1])
from psringlib import results
from psringlib.demo import figures, hosts, plan, runs, verdict
# the trainer's summary line the time-to-accuracy figure ends each curve with; an epoch line is not one
got = [runs.END_RE.match(l) for l in (
    "summary: ps, 4 workers, global batch 4096: test accuracy 90.50%, final loss 0.3753, 134799 samples/s, step 30.458 ms = "
    "data 0.353 + compute 25.688 + exchange 4.353 (wait 0.000) + optimizer 0.188 (+ other), wall 1.2s",
    "epoch   2/4  step      64  loss 0.2961  samples/s     19179  elapsed 0.8s")]
assert got[0].group("acc", "loss", "elapsed") == ("90.50", "0.3753", "1.2") and got[1] is None, got
# the dilation correction
raw = {c: "80" for c in runs.TIMES}
raw.update(wall_s="16", samples_per_s="1000", topology="ring")
fixed = runs.correct(raw, 8)
assert all(float(fixed[c]) == 10.0 for c in runs.TIMES), fixed
assert float(fixed["wall_s"]) == 2.0 and float(fixed["samples_per_s"]) == 8000.0, fixed
assert raw["step_ms"] == "80", "correct() changed its input"
# a run on the emulated hosts: quotas off for the start-up, on from the trainer's header to its
# summary line, on again when the run ends, also when it fails before training
calls = []
hosts.cluster = lambda *a, check=True: calls.append(a)
job = ["sh", "-c", "echo starting; echo 'psring-train: topology ring'; echo step; echo 'summary: ring'; echo bye; exit 0", "--cluster"]
rc, out, err = runs.train(job, 8)
assert rc == 0 and out.splitlines()[-1] == "bye", (rc, out)
assert calls == [("quota", "off"), ("quota", "on"), ("quota", "off"), ("quota", "on")], calls
calls.clear()
rc, out, err = runs.train(["sh", "-c", "echo oops >&2; exit 3", "--cluster"], 8)
assert rc == 3 and err.strip() == "oops" and calls == [("quota", "off"), ("quota", "on")], (rc, err, calls)
calls.clear()
rc, out, err = runs.train(["sh", "-c", "echo 'psring-train: topology ring'"], 1)   # not on the cluster: no quota
assert rc == 0 and calls == [], calls
# Ctrl-C in a straggler's run: what the run undoes on the hosts (the quotas on, the straggler's
# share back to 1) reaches them before they go down; then exit 130 with one line, not the
# complaint of a cluster command run after the hosts were gone
up = []
def fake_cluster(*a, check=True):
    calls.append(a)
    if a[0] in ("up", "down"):
        up[:] = [1] if a[0] == "up" else []
    elif not up and check:
        raise RuntimeError("psring cluster %s: no cluster is up" % " ".join(map(str, a)))
hosts.cluster = fake_cluster
calls.clear()
def work(made):
    hosts.cluster("up", 4)
    made.append(4)
    runs.one(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 0.5, False), ["sh", "-c", "kill -INT $PPID; sleep 5", "--cluster", "--steps", "1"],
             {"sweep_id": "demo", "repeat": 1, "command": "x"}, dict(rate="1gbit"), os.path.join(sys.argv[2], "int.csv"),
             os.path.join(sys.argv[2], "int.epochs.csv"), 8)
err = io.StringIO()
try:
    with contextlib.redirect_stderr(err):
        hosts.on_hosts(work)
    code = None
except SystemExit as e:
    code = e.code
assert code == 130 and err.getvalue() == "psring demo: interrupted; the emulated hosts are down\n", (code, err.getvalue())
assert calls == [("up", 4), ("share", "h3", 0.5), ("quota", "off"), ("quota", "on"), ("share", "h3", 1), ("down",)], calls
assert signal.getsignal(signal.SIGINT) == signal.SIG_DFL
# a step's compute from a timeline: the first worker's data + forward + backward between two
# exchange calls, / D, the WARM first steps left out; a PS server's phases do not count
import json
tl = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "rank 0: server 0"}},
      {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "rank 1: worker 0, local rank 0"}}]
t = 0.0
for step in range(5):
    for name, dur in (("data", 800.0), ("forward", 4000.0 + 800 * step), ("backward", 8000.0), ("exchange", 5000.0)):
        tl.append({"name": name, "ph": "X", "pid": 1, "tid": 0, "ts": t, "dur": dur})
        if name == "exchange":
            tl.append({"name": "push", "ph": "X", "pid": 1, "tid": 0, "ts": t, "dur": 1000.0})
            tl.append({"name": "server-apply", "ph": "X", "pid": 0, "tid": 0, "ts": t + 100, "dur": 3000.0})
        t += dur
with open(os.path.join(sys.argv[2], "tl.json"), "w") as f:
    json.dump({"traceEvents": tl}, f)
got = runs.step_samples(os.path.join(sys.argv[2], "tl.json"), 8)
want = [(800 + 4000 + 800 * s + 8000) / 1e3 / 8 for s in range(plan.WARM, 5)]
assert len(got) == len(want) and all(abs(a - b) < 1e-9 for a, b in zip(got, want)), (got, want)
# a run planned (repeat 1, an int) is the run read back from the CSV (repeat "1"): resume skips it
assert results.run_key({"sweep_id": "demo", "repeat": 1, "command": "train x"}) == \
       results.run_key({"sweep_id": "demo", "repeat": "1", "command": "train x"})
# each run's dilation: 1 where its workers fit the CPUs (a core each, one server host sharing), else hosts within 1.25 cores
# and links at most 125 Mbit/s, capped by --dilation
ring2, ps8 = plan.Run("ring", "ring", 2, 0, 0, 0, "bsp", 1, False), plan.Run("ps", "ps", 8, 1, 1, 0, "bsp", 1, False)
assert plan.run_dilation(ring2, 8, "1gbit", cpus=2) == 1 and plan.run_dilation(ps8, 8, "1gbit", cpus=2) == 8
assert plan.run_dilation(plan.Run("ps", "ps", 1, 1, 1, 0, "bsp", 1, False), 8, "1gbit", cpus=2) == 1   # a worker host and a server host
assert plan.run_dilation(plan.Run("ps", "ps", 2, 1, 1, 0, "bsp", 1, False), 8, "1gbit", cpus=2) == 1   # a server host shares a worker's core
assert plan.run_dilation(plan.Run("ps", "ps", 2, 2, 2, 0, "bsp", 1, False), 8, "1gbit", cpus=2) == 8   # two would share both
assert plan.run_dilation(plan.Run("ring", "ring", 2, 0, 0, 0, "bsp", 0.5, False), 8, "1gbit", cpus=2) == 8   # a straggler needs a quota
assert plan.run_dilation(ring2, 8, "1gbit", cpus=1) == 8 and plan.run_dilation(ring2, 8, "200mbit", cpus=1) == 2
assert plan.run_dilation(ring2, 4, "1gbit", cpus=1) == 4 and plan.run_dilation(ps8, 8, "100mbit", cpus=1) == 8
assert plan.run_dilation(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 1, False), 16, "100mbit", cpus=2) == 4
assert plan.run_dilation(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 1, False), 8, "1gbit", cpus=16) == 8   # D=1: 2 hosts at most
# GPU hosts count two CPU shares: 8 GPU worker hosts + 2 server hosts are 18 shares, D = 16; no D = 1 for them
ps8k2 = plan.Run("ps", "ps", 8, 2, 2, 0, "bsp", 1, False)
assert plan.run_shares(ps8k2, 8) == 18 and plan.run_dilation(ps8k2, 16, "1gbit", cpus=2, gpu_hosts=8) == 16
assert plan.run_dilation(ps8k2, 16, "1gbit", cpus=2) == 8 and plan.run_dilation(ring2, 8, "1gbit", cpus=2, gpu_hosts=2) == 8
assert plan.run_shares(ring2, 5) == 4 and plan.run_dilation(ring2, 8, "100mbit", cpus=2, gpu_hosts=1) == 4
# every throughput run as often as --repeats says
o3, o1 = dict(repeats=3), dict(repeats=1)
assert plan.repeats_of(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 1, False), o3) == 3
assert plan.repeats_of(plan.Run("ps, k server hosts", "ps", 4, 3, 3, 0, "bsp", 1, False), o3) == 3
assert plan.repeats_of(ring2, o3) == 3 and plan.repeats_of(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 1, False), o1) == 1
# the time-to-accuracy runs: ring, PS bsp, async, ssp at N = 4, with and without the straggler,
# whole epochs at their own batch on the full test set, at most TTA_REPEATS times
tta = [r for r in plan.plan(dict(quick=False)) if r[8]]
assert sorted((r[1], r[6], r[7]) for r in tta) == sorted((t, s, f) for f in (1.0, 0.5) for t, s in
                                                          (("ring", "bsp"), ("ps", "bsp"), ("ps", "async"), ("ps", "ssp"))), tta
assert all(r[2] == 4 and r[3] == r[4] == (plan.TTA_SERVERS if r[1] == "ps" else 0) and r[5] == 0 for r in tta), tta
assert not any(r[8] for r in plan.plan(dict(quick=True)))
# BytePS' placement with one spare host at N = 4 and 8, summing servers, on the hosts the runs
# with one server host take (N + 1), the launcher deriving the processes from --workers
bp = [r for r in plan.plan(dict(quick=False)) if r.byteps]
assert [(r.label, r.N, r.servers, r.server_hosts, plan.run_hosts(r)) for r in bp] == [(plan.BYTEPS, 4, 5, 1, 5), (plan.BYTEPS, 8, 9, 1, 9)], bp
c = plan.command(bp[1], dict(steps=16), "d")
assert c[c.index("--workers") + 1] == "8" and c[c.index("--byteps") + 1] == "1" and c[c.index("--ps-mode") + 1] == "sum", c
assert "-np" not in c and "--servers" not in c and "--overlap" not in c and "--fp16" in c, c
assert not any(r.byteps for r in plan.plan(dict(quick=True)))
assert figures.busiest(plan.BYTEPS, 8, 1.0)[2] == figures.cm.ps_bytes(8, 1.0, k=1, x=0.2) and abs(0.2 - figures.cm.byteps_x(8, 1)) < 1e-12
assert plan.repeats_of(tta[0], o3) == plan.TTA_REPEATS == 2 and plan.repeats_of(tta[0], o1) == 1
c = plan.command(tta[0], dict(steps=16), "d")
assert "--steps" not in c and c[c.index("--batch") + 1] == str(plan.TTA_BATCH) and c[c.index("--test-limit") + 1] == "10000" \
    and c[c.index("--epochs") + 1] == str(plan.TTA_EPOCHS), c
# each sync with its own lr and momentum (its best of the grid), as plan.TTA_OPT and the figure say
for sync in ("bsp", "async", "ssp"):
    c = plan.command(next(r for r in tta if r[6] == sync and r[1] == "ps"), dict(steps=16), "d")
    assert (c[c.index("--lr") + 1], c[c.index("--momentum") + 1]) == tuple("%g" % x for x in plan.TTA_OPT[sync]), (sync, c)
    assert c[c.index("--servers") + 1] == str(plan.TTA_SERVERS) and ("--staleness" in c) == (sync == "ssp"), c
    assert "%s lr %g, momentum %g" % (sync.upper() if sync != "async" else "async", *plan.TTA_OPT[sync]) in plan.TTA_OPTS, plan.TTA_OPTS
assert c[c.index("--staleness") + 1] == str(plan.TTA_SSP_STALENESS), c
# a results CSV of another regime is not resumed (its rows would mix with these): named in the refusal
assert plan.other_regime([{"layers": "784,256,10", "batch_per_worker": "3072"}]) == "MLP 784,256,10, batch 3072"
assert plan.other_regime([{"layers": plan.LAYERS, "batch_per_worker": str(plan.BATCH)},
                          {"layers": plan.LAYERS, "batch_per_worker": str(plan.TTA_BATCH)}, {"layers": ""}]) == ""
# the MNIST subset: made once, made again when it holds another count (--validate's test set is
# smaller) or a file cut short
import struct
src, dst = os.path.join(sys.argv[2], "mn"), os.path.join(sys.argv[2], "mn-sub")
os.makedirs(src)
for split in ("train", "t10k"):
    with open(os.path.join(src, split + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, 6, 28, 28) + bytes(range(6)) * 784)
    with open(os.path.join(src, split + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, 6) + bytes(range(6)))
count = lambda name: struct.unpack(">I", open(os.path.join(dst, name), "rb").read(8)[4:8])[0]   # noqa: E731
runs.subset_mnist(src, dst, 5, 2)
assert (count("train-images-idx3-ubyte"), count("t10k-labels-idx1-ubyte")) == (5, 2)
runs.subset_mnist(src, dst, 5, 4)
assert count("t10k-images-idx3-ubyte") == count("t10k-labels-idx1-ubyte") == 4 and os.path.getsize(os.path.join(dst, "t10k-images-idx3-ubyte")) == 16 + 4 * 784
open(os.path.join(dst, "train-labels-idx1-ubyte"), "wb").write(b"\0\0")
runs.subset_mnist(src, dst, 5, 4)
assert count("train-labels-idx1-ubyte") == 5
# a time-to-accuracy run's points as the figure reads them: worker 0's copies (the job is asked for them
# every TTA_EVERY steps), tested after the job by psring train --eval-snapshots (here a stand-in that
# prints their CSV), accuracy in %, then the budget's end (the summary line: the final parameters'
# accuracy at the job's wall time), times / D; the copies' file is gone afterwards
hosts.cluster = lambda *a, check=True: None
line = ("for a; do [ \"${prev:-}\" = --snapshots ] && echo copies > \"$a\"; [ \"${prev:-}\" = --csv ] && csv=$a; prev=$a; done; "
        "echo 'summary: ps, 4 workers, global batch 4096: test accuracy 90.50%, final loss 0.3753, 134799 samples/s, "
        "step 30.458 ms = data 0.353 + compute 25.688 + exchange 4.353 (wait 0.000) + optimizer 0.188 (+ other), wall 1.2s'; "
        "printf 'topology,workers,steps,step_ms,data_ms,compute_ms,exchange_ms,wait_ms,optimizer_ms,wall_s,samples_per_s\\n"
        "ps,4,36,30,0.4,25,4,0,0.2,1.2,130000\\n' > \"$csv\"")
evals = []
ev = os.path.join(sys.argv[2], "eval.sh")
open(ev, "w").write("#!/bin/sh\necho \"$@\" >> %s.args\nprintf 'step,elapsed_s,test_accuracy\\n0,0.000001,0.0825\\n3,0.4,0.6150\\n6,0.8,0.8012\\n'\n" % ev)
os.chmod(ev, 0o755)
runs.PSRING = ev
for sync in ("async", "bsp"):
    runs.one(plan.Run("ps, 4 server hosts", "ps", 4, 4, 4, 0, sync, 1.0, True), ["sh", "-c", line, "job", "--data", "d"],
             {"sweep_id": "demo", "repeat": 1, "command": sync}, dict(rate="1gbit"), os.path.join(sys.argv[2], "e.csv"),
             os.path.join(sys.argv[2], "e.epochs.csv"), 4)
eps = [(e["sync"], e["epoch"], e["step"], e["elapsed_s"], e["test_accuracy"], e["loss"]) for e in results.read_rows(os.path.join(sys.argv[2], "e.epochs.csv"))]
want = [("", "0", "0.000", "8.25", ""), ("", "3", "0.100", "61.50", ""), ("", "6", "0.200", "80.12", ""), ("end", "", "0.300", "90.50", "0.3753")]
assert eps == [(s,) + w for s in ("async", "bsp") for w in want], eps
args = open(ev + ".args").read().split()
assert args[:2] == ["train", "--topology"] and args[args.index("--eval-snapshots") + 1] == os.path.join(sys.argv[2], "e.csv.snapshots") \
    and args[args.index("--data") + 1] == "d" and args[args.index("--layers") + 1] == plan.LAYERS, args
assert not os.path.exists(os.path.join(sys.argv[2], "e.csv.snapshots"))
runs.PSRING = plan.PSRING
# one worker on the scale model: the demo's largest dilation, where one worker's other runs have a core
sc = [r for r in plan.plan(dict(quick=False)) if r.scale]
assert [(r.label, r.N) for r in sc] == [("ring", 1)] and plan.run_dilation(sc[0], 8, "1gbit") == 8, sc
assert plan.run_dilation(plan.Run("ring", "ring", 1, 0, 0, 0, "bsp", 1.0, False), 8, "1gbit") == 1
c = plan.command(plan.Run("ring", "ring", 4, 0, 0, 0, "bsp", 1.0, False), dict(steps=16), "d")
assert c[c.index("--steps") + 1] == "16" and c[c.index("--batch") + 1] == str(plan.BATCH), c
# a fixture: ring scales (0.8 at N=8), PS with one server host flat, k server hosts beat the ring from k=3
out = sys.argv[2]
cols = results.TRAINER_COLUMNS + plan.EMU + results.EXTRA_COLUMNS
csv_path = os.path.join(out, "demo.csv")
def add(label, topo, N, step, k=0, S=0, strag=1, sync="bsp", D=8, rep=1):
    r = dict(label=label, topology=topo, workers=N, dilation=D, servers=S, server_hosts=k, straggler=strag, sync=sync,
             step_ms=step, exchange_ms=step - 10, wait_ms=0, samples_per_s=N * 1024 / step * 1e3, params=200000,
             steps=10, bytes_sent_per_worker=1e6, bytes_recv_per_worker=1e6, bytes_per_server=4e6, sweep_id="demo",
             repeat=rep, command="%s %d %d %d %s %s" % (label, N, k, S, strag, sync), error="")
    results.append_row(csv_path, cols, r)
for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5)):   # one worker on a real core (D = 1), as the demo runs it
    add("ring", "ring", N, t, D=1 if N == 1 else 8)
for N, t in ((1, 14.0), (2, 26.0), (4, 50.0), (8, 98.0)):
    add("ps, 1 server host", "ps", N, t, k=1, S=1, D=1 if N == 1 else 8)
add("ring", "ring", 1, 9.0)   # one worker on the scale model (D = 8): efficiency's reference, in no table
for k, t in ((2, 26.0), (3, 11.5), (4, 11.0)):
    add("ps, k server hosts", "ps", 4, t, k=k, S=k)
for N, t in ((4, 13.0), (8, 13.5)):   # in the winners' tables, not in the k-server sweep (its k = 1 holds x* only)
    add(plan.BYTEPS, "ps", N, t, k=1, S=N + 1)
add("ring", "ring", 4, 30.0, strag=0.5)
add("ps, N colocated", "ps", 2, 11.4, S=2)   # within 5% of the ring at N=2: a tie, not a win
add("step alone", "local", 1, 8.0, D=1)   # the same step on a full core: 128000 samples/s, in no table or label
# time-to-accuracy runs (whole epochs, their own batch), the ring's and the PS's on 4 server
# hosts (k = 4, bsp): in no throughput table (the PS's would win N = 4), nor the crossover (it
# would end it: 60 ms at k = 4)
for label, topo, S in (("ring", "ring", 0), (plan.TTA_PS, "ps", 4)):
    results.append_row(csv_path, cols, dict(label=label, topology=topo, workers=4, dilation=8, servers=S, server_hosts=S, straggler=1,
                                          sync="bsp", step_ms=70.0, exchange_ms=60.0, wait_ms=0, samples_per_s=9e6, params=200000,
                                          steps=48, sweep_id="demo", repeat=1, command="train --batch 512 --epochs 2 --timing-skip 2",
                                          error=""))
# their epochs, then each job's end: with the straggler BSP PS ends at 2.2 s, async at 1.2 (0.55
# of it), SSP at 1.7 (0.77), medians of two repeats; async's epoch 3, in one repeat only, in none
ep_cols = ["sweep_id", "repeat", "command", "label", "workers", "sync", "straggler", "epoch", "elapsed_s", "test_accuracy", "loss"]
for label, sync, strag, last in (("ring", "bsp", 1, (1.0, 95.5)), (plan.TTA_PS, "bsp", 1, (1.6, 95.5)),
                                 (plan.TTA_PS, "bsp", 0.5, (2.0, 95.5)), (plan.TTA_PS, "async", 0.5, (1.0, 90.0)),
                                 (plan.TTA_PS, "ssp", 0.5, (1.5, 93.0))):
    for rep, d in ((1, 0.0), (2, 0.2)):
        pts = [(1, (last[0] / 2, last[1] - 3)), (2, (last[0] + d, last[1] + d)), ("end", (last[0] + 0.1 + d, last[1] + d))]
        if sync == "async" and rep == 1:
            pts.insert(2, (3, (last[0] + 0.05, 89.0)))
        for ep, (t, a) in pts:
            results.append_row(os.path.join(out, "demo.epochs.csv"), ep_cols, dict(sweep_id="demo", repeat=rep, command="x",
                             label=label, workers=4, sync=sync, straggler=strag, epoch=ep, elapsed_s=t, test_accuracy=a, loss=1))
o = dict(rate="1gbit", dilation=8)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
text = buf.getvalue()
for want in ("1-core hosts at 1gbit, dilation 1..8,", "N=8: ring wins", "N=2: ring and ps, N colocated tie (within 5%)", "N=1: ring wins", "efficiency at N=8: 0.72 (throughput(8) / (8 x one worker on the same scale model, 113778 samples/s)); 0.64 against"
             " the same step alone on a full core (128000 samples/s, the scale model's host 0.89x that)",
             "exchanges faster than the ring from k=3 on (1.50 vs 1.90 ms, 21.1% less round by round), at the cost of 3"
             " server hosts: 7 hosts in all against the ring's 4", "What it does not",
             "without a straggler: BSP ring 1.20 s, 95.6%; BSP PS 1.80 s, 95.6%.",
             "with one host at half a core: BSP PS 2.20 s, 95.6%; async PS 1.20 s, 90.1% (0.55 of BSP PS's time);"
             " SSP PS 1.70 s, 93.1% (0.77 of BSP PS's time); BSP PS passed async's 90.1% by 1.00 s.", "N=4: ring wins",
             "N=8: ring wins, 655360 samples/s, 1.08x ps, BytePS k=1; 7.84x PS with one server", "psring demo --best (DIR/best/summary.txt)"):
    assert want in text, "summary lacks '%s':\n%s" % (want, text)
assert open(os.path.join(out, "summary.txt")).read().strip() == text.strip()
# the model's terms beside the measured ones over the sweep's points at N >= 2: compute from the step alone (10 ms:
# its step less its exchange), no wait without step samples, each point's exchange (measured: step - 10 ms)
cal_fix = os.path.join(out, "cal-terms.csv")
open(cal_fix, "w").write("format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-05,8e-09,0,1e9,8\n")
rows_fix = figures.load(csv_path)
tl = verdict.term_lines(rows_fix, verdict.calibration(cal_fix), verdict.stats.one_worker_compute(rows_fix, lambda r: 0).get(0))
assert len(tl) == 1 and tl[0].startswith("    its terms over those 9 points, model against measured (ms): compute 10.0 (the step alone) against"
                                          " 10.0, the wait for the slowest 0.0 against 0.0, the exchange ") and tl[0].endswith(" against 1.0-88.0"), tl
# the bridge: a workload of 1e8 B and 0.5 s a step shares a step of 1e6 B and 10 ms at 1 Gbit/s at 1e9 x 100 x 0.02 = 2 Gbit/s
pub = os.path.join(out, "pub")
os.makedirs(pub)
head = "id,model,gpu,params,bytes_per_param,batch_per_gpu,single_gpu_rate\n"
open(os.path.join(pub, "published-scaling.csv"), "w").write("# a comment\n" + head + "a,m1,G1,25000000,4,64,128\nb,m1,G1,1,1,1,1\n")
open(os.path.join(pub, "published-horovod.csv"), "w").write(head + "c,m2,G2,5000000,2,10,10\n")
from psringlib.demo import bridge
got = bridge.rates(1e6, 0.01, 1e9, pub)
assert [(m, g) for m, g, _ in got] == [("m1", "G1"), ("m2", "G2")] and abs(got[0][2] - 2e9) < 1 and abs(got[1][2] - 1e8) < 1e-3, got
bl = bridge.lines(1e6, 0.01, dict(alpha_s=1e-5, beta_s_per_byte=8e-9, gamma_s_per_byte=8e-11), pub)
assert "m2 on G2 at 0.1 Gbit/s, m1 on G1 at 2 Gbit/s." in bl[0] and "(here 0.01)" in bl[1] and "psring model --advise" in bl[1], bl
n2 = next(l for l in text.splitlines() if "N=2:" in l)
assert "PS with one server" not in n2, "the runner-up named twice: " + n2
with contextlib.redirect_stdout(io.StringIO()):
    figures.figures(out, csv_path, os.path.join(out, "demo.epochs.csv"), os.path.join(out, "none.csv"), dict(o, rate="1gbit"))
for f in ("throughput", "exchange", "breakdown", "bytes", "accuracy"):
    for ext in ("png", "svg"):
        p = os.path.join(out, "%s.%s" % (f, ext))
        assert os.path.getsize(p) > 1000, p
    assert ("1-core hosts, 1gbit links, dilation 1..8" if f != "accuracy" else plan.TTA_REGIME % (plan.LAYERS, "1gbit")) \
        in open(os.path.join(out, f + ".svg")).read(), f
# efficiency over one worker on the same scale model: the ideal line N x its 113778 samples/s, the ring's N=8 at 0.72
thr_gp = open(os.path.join(out, "demo-data", "throughput.png.gp")).read()
assert "x * 113778" in thr_gp and "N x one worker on the same scale model" in thr_gp, thr_gp
assert [l.split()[2].strip("\"") for l in open(os.path.join(out, "demo-data", "eff.dat")).read().splitlines()][-1] == "0.72"
# time to accuracy: one curve a design, each epoch's medians over the repeats, no point invented before them
acc = [[float(x) for x in l.split()] for l in open(os.path.join(out, "demo-data", "tta0.dat")).read().splitlines()]
assert acc == [[0.5, 87.0], [1.1, 90.1], [1.2, 90.1]], acc
svg = open(os.path.join(out, "accuracy.svg")).read()
assert all(t in svg for t in ("ps, 4 server hosts, async, straggler", "all 10,000 test images", "with and without a straggler")), "accuracy.svg"
# worker 0's copies (the step column): a point a copy from step 0, measured, then the job's end; the axis from 0%
cp_dir = os.path.join(out, "copies")
os.makedirs(cp_dir)
cp_cols = ep_cols[:-3] + ["step"] + ep_cols[-3:]
for rep in (1, 2):
    for step, t, a in ((0, 0.0, 9.8), (3, 0.1, 60.0), (6, 0.2 + 0.01 * rep, 80.0), ("end", 0.3, 85.0)):
        results.append_row(os.path.join(cp_dir, "demo.epochs.csv"), cp_cols, dict(
            sweep_id="demo", repeat=rep, command="x", label=plan.TTA_PS, workers=4, sync="async", straggler=1,
            epoch="end" if step == "end" else "", step="" if step == "end" else step, elapsed_s=t, test_accuracy=a, loss=1))
with contextlib.redirect_stdout(io.StringIO()):
    figures.figures(cp_dir, csv_path, os.path.join(cp_dir, "demo.epochs.csv"), os.path.join(out, "none.csv"), dict(o, rate="1gbit"))
pts = [[float(x) for x in l.split()] for l in open(os.path.join(cp_dir, "demo-data", "tta0.dat")).read().splitlines()]
assert pts == [[0.0, 9.8], [0.1, 60.0], [0.215, 80.0], [0.3, 85.0]], pts
acc_gp = open(os.path.join(cp_dir, "demo-data", "accuracy.png.gp")).read()
assert "set yrange [0:100]" in acc_gp and plan.TTA_OPTS in acc_gp and "copies every 3 steps from step 0" in acc_gp, acc_gp
# what the figures draw: the breakdown at N=8, compute + exchange + wait = the step, one bar per
# configuration under its whole label (double quotes: gnuplot splits a data line at blanks
# outside them), and the throughput's medians
bars = [shlex.split(l) for l in open(os.path.join(out, "demo-data", "bars.dat")).read().splitlines()]
assert [b[0] for b in bars] == ["ring", "ps, 1 server host", plan.BYTEPS], bars
assert [[float(x) for x in b[1:]] for b in bars] == [[10.0, 2.5, 0.0, 12.5, 12.5, 12.5], [10.0, 88.0, 0.0, 98.0, 98.0, 98.0],
                                                     [10.0, 3.5, 0.0, 13.5, 13.5, 13.5]], bars
svg = open(os.path.join(out, "breakdown.svg")).read()
assert all(">%s<" % lab in svg for lab in ("ring", "ps, 1 server host", plan.BYTEPS)), "breakdown.svg lacks a whole bar label"
thr = [[float(x) for x in l.split()] for l in open(os.path.join(out, "demo-data", "thr0.dat")).read().splitlines()]
assert [(t[0], round(t[1])) for t in thr] == [(1, 102400), (2, 186182), (4, 344202), (8, 655360)], thr
# the figures on a fuller fixture, with a calibration (the model's lines): three repeats a point
# (steps t, t - 0.5, t + 2: median t), the ring and one server host at N = 1, 2 on real cores
# (D = 1), every other point dilated; waits; the colocated PS at N = 2, 4, 8; the k-server sweep
fig_dir = os.path.join(out, "figs")
os.makedirs(fig_dir)
csv_path = os.path.join(fig_dir, "demo.csv")
def add_fig(label, topo, N, t, k=0, S=0, wait=0.0):
    for rep, d in enumerate((0.0, -0.5, 2.0), 1):
        r = dict(label=label, topology=topo, workers=N, dilation=1 if N <= 2 and "colocated" not in label else 8, servers=S,
                 server_hosts=k, straggler=1, sync="bsp", step_ms=t + d, exchange_ms=t + d - 10, wait_ms=wait,
                 samples_per_s=N * 1024 / (t + d) * 1e3, params=200000, steps=10, bytes_sent_per_worker=N * 1e6,
                 bytes_recv_per_worker=N * 1e6, bytes_per_server=4e6, sweep_id="demo", repeat=rep,
                 command="%s %d %d %d" % (label, N, k, S), error="")
        results.append_row(csv_path, cols, r)
for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5)):
    add_fig("ring", "ring", N, t, wait=0.1 * N)
for N, t in ((1, 14.0), (2, 26.0), (4, 50.0), (8, 98.0)):
    add_fig("ps, 1 server host", "ps", N, t, k=1, S=1, wait=0.5)
for N, t in ((2, 12.0), (4, 13.0), (8, 14.0)):
    add_fig("ps, N/2 colocated", "ps", N, t, S=N // 2, wait=1.0)
    add_fig("ps, N colocated", "ps", N, t - 0.5, S=N)
for k, t in ((2, 26.0), (3, 11.5), (4, 11.0)):
    add_fig("ps, k server hosts", "ps", 4, t, k=k, S=k)
add_fig("step alone", "local", 1, 8.0)
with open(os.path.join(fig_dir, "calibration.csv"), "w") as f:
    f.write("format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-4,8e-9,0,1000000000,8\n")
with contextlib.redirect_stdout(io.StringIO()):
    figures.figures(fig_dir, csv_path, os.path.join(fig_dir, "none.epochs.csv"), os.path.join(fig_dir, "calibration.csv"), o)
D = lambda name: [shlex.split(l) for l in open(os.path.join(fig_dir, "demo-data", name)).read().splitlines()]   # noqa: E731
num = lambda name: [[float(x) for x in l] for l in D(name)]   # noqa: E731
regime = "MLP %s, batch %d/worker, fp16; 1-core hosts, 1gbit links, dilation 1..8" % (plan.LAYERS, plan.BATCH)
for name, question in figures.FIGURES:
    if name == "accuracy":
        continue
    if name == "bytes":   # no link counters in this fixture: the payload figure (the loopback sweep's)
        question = "How many bytes does each process move per step?"
    svg = open(os.path.join(fig_dir, name + ".svg")).read()
    assert question.replace("the largest N", "N = 8") in svg, (name, question)
    assert regime in svg, name
# throughput: medians with min-max, the points on real cores (D = 1) apart from the dilated ones,
# the ring's efficiency at its points, and the ring drawn last, over every other curve
steps = {1: 10.0, 2: 11.0, 4: 11.9, 8: 12.5}
want = {N: N * 1024 / t * 1e3 for N, t in steps.items()}
for f, Ns in (("thr0.dat", (1, 2, 4, 8)), ("thr0_real.dat", (1, 2)), ("thr0_dil.dat", (4, 8))):
    got = num(f)   # N, median, min (the slowest repeat, t + 2), max (t - 0.5)
    assert [g[0] for g in got] == list(Ns), (f, got)
    assert all(max(abs(g[1] - want[g[0]]), abs(g[2] - g[0] * 1024 / (steps[g[0]] + 2) * 1e3), abs(g[3] - g[0] * 1024 / (steps[g[0]] - 0.5) * 1e3)) < 1
               for g in got), (f, got)
assert [g[0] for g in num("thr2_dil.dat")] == [2, 4, 8] and not os.path.exists(os.path.join(fig_dir, "demo-data", "thr2_real.dat"))
assert [(e[0], e[2]) for e in D("eff.dat")] == [("2", "%.2f" % (want[2] / 2 / want[1])), ("4", "%.2f" % (want[4] / 4 / want[1])),
                                              ("8", "%.2f" % (want[8] / 8 / want[1]))], D("eff.dat")
body = open(os.path.join(fig_dir, "demo-data", "throughput.png.gp")).read()
clauses = body[body.index("\nplot ") + 6:].split(", \\\n")
files = [m.group(1) if (m := re.match(r"\s*'([^']*)' using", c)) else "" for c in clauses]
ring_at = [i for i, f in enumerate(files) if f in ("thr0.dat", "thr0_real.dat", "thr0_dil.dat", "mod0.dat", "eff.dat")]
other_at = [i for i, f in enumerate(files) if f and f not in ("thr0.dat", "thr0_real.dat", "thr0_dil.dat", "mod0.dat", "eff.dat")]
assert other_at and ring_at and max(other_at) < min(ring_at) and ring_at[-1] == len(clauses) - 1, files
assert "pt 7" in clauses[files.index("thr0_real.dat")] and "pt 6" in clauses[files.index("thr0_dil.dat")], clauses
assert "ran on real cores (D = 1)" in body and "time-dilated (D > 1)" in body, body
# exchange: the model and the bytes alone only at the N each configuration measured (the colocated
# PS: 2, 4, 8, never 3, 5, 6, 7), bytes alone = the busiest link's bytes x beta (n = 400000 bytes)
n, beta = 400000.0, 8e-9
alone = {0: lambda N: 2 * (N - 1) / N * n, 1: lambda N: max(n, N * n), 2: lambda N: (N + N // 2 - 2) * n / (N // 2),
         3: lambda N: 2 * (N - 1) / N * n}
for i, Ns in ((0, [1, 2, 4, 8]), (1, [1, 2, 4, 8]), (2, [2, 4, 8]), (3, [2, 4, 8])):
    assert [m[0] for m in num("mod%d.dat" % i)] == Ns and [m[0] for m in num("ex%d.dat" % i)] == Ns, (i, num("mod%d.dat" % i))
    bw = num("bw%d.dat" % i)
    assert [b[0] for b in bw] == Ns and all(abs(b[1] - alone[i](int(b[0])) * beta * 1e3) < 1e-5 for b in bw), (i, bw)
assert [round(e[1], 4) for e in num("ex0.dat")] == [round(t - 10 - 0.1 * N, 4) for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5))]
# breakdown at N = 8: the repeat with the median step, its compute + exchange + wait = that step,
# the step's min-max over the repeats beside it
bars = D("bars.dat")
assert [b[0] for b in bars] == ["ring", "ps, 1 server host", "ps, N/2 colocated", "ps, N colocated"], bars
for b, (t, w) in zip(bars, ((12.5, 0.8), (98.0, 0.5), (14.0, 1.0), (13.5, 0.0))):
    c, e, wt, s, lo, hi = (float(x) for x in b[1:])
    assert abs(c + e + wt - s) < 1e-9 and (s, lo, hi) == (t, t - 0.5, t + 2) and c == 10.0 and abs(wt - w) < 1e-9, b
# servers: the hosts each configuration takes, BytePS' formula as the bytes-only bound
body = open(os.path.join(fig_dir, "demo-data", "servers.png.gp")).read()
assert "'k=1 (5 hosts)' 1, 'k=2 (6 hosts)' 2, 'k=3 (7 hosts)' 3, 'k=4 (8 hosts)' 4" in body, body
assert "bytes alone, BytePS'' placement" in body and "optimum" not in body and "non-colocated" in body, body
k = num("k.dat")
assert [r[:2] for r in k] == [[1, 39.5], [2, 16.0], [3, 1.5], [4, 1.0]], k   # k = 1: the one server host's runs
assert all(abs(r[5] / (1e3 * 2 * 4 * 3 * n * beta / (16 + 4 * r[0] - 2 * r[0])) - 1) < 1e-5 for r in k), k
# the bytes-alone crossover the lesson quotes: these servers' max(n, 4n/k) against the ring's 1.5 n, level in the figure
assert all(abs(r[6] / (1e3 * max(n, 4 * n / r[0]) * beta) - 1) < 1e-5 for r in k), k
assert "%g" % (1e3 * 1.5 * n * beta) in body and "bytes alone, the ring" in body, body
# bytes: what the trainer counts, labelled so; the link formulas (x 2: a process alone on its host
# sends and receives its link's bytes each way) for the ring and the server host, not the colocated
body = open(os.path.join(fig_dir, "demo-data", "bytes.png.gp")).read()
assert "set ylabel 'payload per process, sent + received (MB per step)'" in body, body
assert [w[:2] for w in num("wb0.dat")] == [[N, 2 * N * 1e6 / 10 / 1e6] for N in (1, 2, 4, 8)], num("wb0.dat")
assert [[round(x, 6) for x in l] for l in num("link0.dat")] == [[N, round(2 * 2 * (N - 1) / N * n / 1e6, 6)] for N in (1, 2, 4, 8)]
assert [[round(x, 6) for x in l] for l in num("link1.dat")] == [[N, 2 * n / 1e6, round(2 * N * n / 1e6, 6)] for N in (1, 2, 4, 8)]
assert not [f for f in os.listdir(os.path.join(fig_dir, "demo-data")) if f in ("link2.dat", "link3.dat")]
# bytes on emulated hosts: the veths' counters before and after a run, per step (link_columns),
# and the figure of the busiest link against each design's formula
cols_link = hosts.link_columns({0: (100, 50), 1: (0, 0), 2: (7, 7)}, {0: (1100, 4050), 1: (2000, 1000), 2: (7, 7), 3: (9, 9)}, 10)
assert cols_link == dict(link_bytes="h0:100/400;h1:200/100", link_busiest_bytes="400"), cols_link
assert hosts.link_columns({0: (0, 0)}, {0: (5, 5)}, 0) == {} and hosts.link_columns({}, {}, 10) == {}
link_dir = os.path.join(out, "links")
os.makedirs(link_dir)
busy = {"ring": lambda N: 2 * (N - 1) / N * n, "ps, 1 server host": lambda N: N * n,
        "ps, N/2 colocated": lambda N: (N + N // 2 - 2) * n / (N // 2), "ps, N colocated": lambda N: 2 * (N - 1) / N * n}
busy_k = lambda k: max(n, 4 * n / k)   # noqa: E731  k server hosts at N = 4
for r in results.read_rows(csv_path):   # the fixture, its links measured 4-6% over the formula
    if r["label"] in busy and int(r["workers"]) > 1:
        r["link_busiest_bytes"] = "%.0f" % (busy[r["label"]](int(r["workers"])) * (1.03 + 0.01 * int(r["repeat"])))
    if r["label"] == "ps, k server hosts":
        r["link_busiest_bytes"] = "%.0f" % (busy_k(int(r["server_hosts"])) * (1.03 + 0.01 * int(r["repeat"])))
    results.append_row(os.path.join(link_dir, "demo.csv"), cols, r)
with contextlib.redirect_stdout(io.StringIO()):
    figures.figures(link_dir, os.path.join(link_dir, "demo.csv"), os.path.join(link_dir, "none.epochs.csv"),
                 os.path.join(fig_dir, "calibration.csv"), o)
L = lambda name: [[float(x) for x in l.split()] for l in open(os.path.join(link_dir, "demo-data", name)).read().splitlines()]   # noqa: E731
for i, lab in enumerate(["ring", "ps, 1 server host", "ps, N/2 colocated", "ps, N colocated"]):
    got, form = L("lb%d.dat" % i), L("lf%d.dat" % i)
    Ns = [2, 4, 8]
    assert [g[0] for g in got] == Ns and [f[0] for f in form] == Ns, (lab, got, form)
    for g, f in zip(got, form):   # median 1.05 x, min 1.04 x, max 1.06 x the formula, which is drawn as is
        want = busy[lab](int(g[0])) / 1e6
        assert abs(f[1] - want) < 1e-9 and abs(g[1] / want - 1.05) < 1e-3 and abs(g[2] / want - 1.04) < 1e-3 \
            and abs(g[3] / want - 1.06) < 1e-3, (lab, g, f)
# at each N the designs side by side (the ring and N colocated shards carry the same bytes: not one on the
# other), each point on its formula's dashed line; the k-server sweep at N = 4 beside them, each k on max(n, 4n/k)
for N in (2, 4, 8):
    xs_at = sorted(l[4] for i in range(4) for l in L("lb%d.dat" % i) if l[0] == N)
    assert len(xs_at) == 4 and all(b - a > 0.2 for a, b in zip(xs_at, xs_at[1:])) and abs(sum(xs_at) / 4 - N) < 0.6, (N, xs_at)
    for i in range(4):
        assert [l[2] for l in L("lf%d.dat" % i) if l[0] == N] == [l[4] for l in L("lb%d.dat" % i) if l[0] == N], (i, N)
kb, kf = L("lbk.dat"), L("lfk.dat")
assert [l[0] for l in kb] == [4, 4, 4] and all(abs(l[1] - busy_k(k) / 1e6) < 1e-6 for l, k in zip(kf, (2, 3, 4))), (kb, kf)
assert all(abs(g[1] / f[1] - 1.05) < 1e-3 for g, f in zip(kb, kf)), (kb, kf)
body = open(os.path.join(link_dir, "demo-data", "bytes.png.gp")).read()
assert "set xtics ('2' 2, '4' 4, '8' 8)" in body and "k=2" in open(os.path.join(link_dir, "demo-data", "lk.dat")).read(), body
svg = open(os.path.join(link_dir, "bytes.svg")).read()
assert figures.QUESTION["bytes"] in svg and "busiest link, busier direction (MB per step)" in svg and "headers included" in svg
# the crossover is the k from which every larger k also exchanges faster than the ring
csv_path = os.path.join(out, "k.csv")   # add() writes here from now on
add("ring", "ring", 4, 11.9)
for k, t in ((2, 11.5), (3, 12.5), (4, 11.0)):   # k=2 under the ring's 1.9 ms, k=3 over it: from k=4
    add("ps, k server hosts", "ps", 4, t, k=k, S=k)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
assert "exchanges faster than the ring from k=4 on" in buf.getvalue(), buf.getvalue()
assert "from k=4 on (1.00 vs 1.90 ms, 47.4% less round by round), at the cost of 4 server hosts: 8 hosts in all" \
    " against the ring's 4 (model" in buf.getvalue(), buf.getvalue()   # no tie note, the cost in hosts
assert "(model: not compared;" in buf.getvalue(), buf.getvalue()
# a crossover by less than the verdict's tie band (5%) says so
k_path, csv_path = csv_path, os.path.join(out, "k-tie.csv")
add("ring", "ring", 4, 11.9)
for k, t in ((2, 12.5), (3, 12.0), (4, 11.85)):   # k=4: 1.85 vs 1.90 ms, 2.6% faster
    add("ps, k server hosts", "ps", 4, t, k=k, S=k)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
assert "from k=4 on (1.85 vs 1.90 ms, 2.6% less round by round: within the 5% the verdict calls a tie)" in buf.getvalue(), buf.getvalue()
csv_path = k_path
# a failed run is named once in the summary with its reason; one that a resume made good is not
csv_path = os.path.join(out, "failed.csv")
add("ring", "ring", 1, 10.0)
add("ring", "ring", 2, 11.0)
for label, N, why in (("ps, 1 server host", 2, "mpirun noticed that process rank 1 exited on signal 9 (Killed)."),
                      ("ps, 1 server host", 1, "timed out")):
    results.append_row(csv_path, cols, dict(label=label, topology="ps", workers=N, servers=1, server_hosts=1, straggler=1,
                                          sync="bsp", sweep_id="demo", repeat=1, command="%s %d 1 1 1 bsp" % (label, N), error=why))
add("ps, 1 server host", "ps", 1, 14.0, k=1, S=1)   # the second one's resume: the same command and repeat
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
assert "  1 run(s) failed and are left out: ps, 1 server host, N=2 (repeat 1): mpirun noticed that process rank 1 exited on signal 9" \
    " (Killed)." in buf.getvalue(), buf.getvalue()
assert "timed out" not in buf.getvalue() and "N=2: ring wins" in buf.getvalue(), buf.getvalue()
# the reason is the line that says why, not mpirun's rules of dashes or its generic notice
dashes = "-" * 74
assert runs.failure("%s\nPrimary job terminated normally\n%s\nmpirun noticed that process rank 2 with PID 0 on node h2"
                    " exited on signal 9 (Killed).\n%s\n" % (dashes, dashes, dashes), 137).startswith("mpirun noticed that process rank 2")
assert runs.failure("psring-train: ps: worker 2 silent for 3 s\n%s\nmpirun detected that one or more processes exited"
                    " with non-zero status\n%s" % (dashes, dashes), 1) == "psring-train: ps: worker 2 silent for 3 s"
assert runs.failure("", 137) == "killed by signal 9 (SIGKILL)" and runs.failure("", -15) == "killed by signal 15 (SIGTERM)"
assert runs.failure(dashes, 3) == "exit 3"
assert runs.failure("mpirun noticed that process rank 0 with PID 1 on node h1 exited on signal 15 (Terminated).\ntimed out\n", 124) == "timed out"
csv_path = k_path
# winners and the crossover are decided round by round (repeat 1 of everything, then 2, ...): a
# slow round moves every configuration in it. The medians of each (ring 26.32, PS 28.03 ms a
# step: 1.065x) would split these two; their rounds (1.022, 1.028, 1.065) tie them.
assert verdict.paired({"1": 2.0, "2": 4.0}, {"1": 1.0, "2": 4.0, "3": 9.0}) == 1.5 and verdict.paired({"1": 1.0}, {"2": 1.0}) is None
r_path, csv_path = csv_path, os.path.join(out, "rounds.csv")
for rep, (tr, tp) in enumerate(((27.90, 28.51), (25.80, 26.52), (26.32, 28.03)), 1):
    add("ring", "ring", 2, tr, rep=rep)
    add("ps, N colocated", "ps", 2, tp, S=2, rep=rep)
# the crossover: k=4's exchange is 0.95, 1.12 and 0.98 of the ring's in the three rounds (median
# 0.98: faster), though the medians of each (5.1 against 5.0 ms) would say slower
for rep, (tr, t4) in enumerate(((14.0, 13.8), (15.0, 15.6), (15.2, 15.1)), 1):
    add("ring", "ring", 4, tr, rep=rep)
    add("ps, k server hosts", "ps", 4, t4, k=4, S=4, rep=rep)
    add("ps, k server hosts", "ps", 4, 20.0, k=2, S=2, rep=rep)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
assert "N=2: ring and ps, N colocated tie (within 5%)" in buf.getvalue(), buf.getvalue()
assert "from k=4 on (5.10 vs 5.00 ms, 1.9% less round by round: within" in buf.getvalue(), buf.getvalue()
csv_path = r_path
# the model's crossover comes from its exchange for the same points (model_vs_measured.csv)
cols = ["label", "workers", "servers", "server_hosts", "sync", "straggler", "step_err_pct", "exchange_err_pct",
        "model_exchange_ms", "model_samples_per_s"]
with open(os.path.join(out, "model_vs_measured.csv"), "w") as f:
    f.write(",".join(cols) + "\n")
    f.write("ring,4,,0,,1.0,1.0,2.0,1.80,400000\n")
    for k, ex in ((2, 2.5), (3, 1.79), (4, 1.2)):   # under the ring's 1.80 from k=3
        f.write('"ps, k server hosts",4,%d,%d,bsp,1.0,1.0,2.0,%.2f,400000\n' % (k, k, ex))
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
assert "from k=4 on (1.00 vs 1.90 ms, 47.4% less round by round), at the cost of 4 server hosts: 8 hosts in all against the ring's 4 (model: from k=3; bytes-only bound, BytePS' formula: k > N^2/(2(N-1)) = 2.67)" in buf.getvalue(), buf.getvalue()
# the model's errors as its targets count them: per group (the sweep's step and exchange within
# 10%, the k-server sweep within 15%), the worst point named in full; the straggler's points in none
with open(os.path.join(out, "model_vs_measured.csv"), "a") as f:
    f.write('"ps, N/2 colocated",2,1,0,bsp,1.0,4.0,-28.0,3.0,200000\n')
    f.write('"ps, 1 server host",4,1,1,async,0.5,-16.3,,3.0,200000\n')
    f.write('ring,4,,0,,0.5,9.0,1.0,3.0,200000\n')
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    verdict.summary(out, csv_path, os.path.join(out, "none.csv"), o)
for want in ("Cost model at N >= 2, compute from the one-worker runs (no step alone) (",   # this CSV has none
             "sweep, step: 2 of 2 points within 10%, worst +4.0% (ps, N/2 colocated, N=2)",
             "sweep, exchange: 1 of 2 points within 10%, worst -28.0% (ps, N/2 colocated, N=2)",
             "k-server sweep, step: 3 of 3 points within 15%, worst +1.0% (ps, k server hosts, k=2, N=4)"):
    assert want in buf.getvalue(), "summary lacks '%s':\n%s" % (want, buf.getvalue())
assert "-16.3" not in buf.getvalue() and "straggler runs" not in buf.getvalue(), buf.getvalue()
# the prediction, written once before the first timed run from the calibration and the step
# alone: hand values (alpha 10 us, 1 Gbit/s, no gamma; 100000 parameters, 200000 bytes in fp16)
from psringlib.demo import predict
pd = os.path.join(out, "pred")
os.makedirs(pd)
with open(os.path.join(pd, "cal.csv"), "w") as f:
    f.write("format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-05,8e-09,0,1e9,8\n")
p_csv, cols = os.path.join(pd, "demo.csv"), results.TRAINER_COLUMNS + plan.EMU + results.EXTRA_COLUMNS
results.append_row(p_csv, cols, dict(label="step alone", topology="local", workers=1, step_ms=8.0, exchange_ms=0.0, wait_ms=0,
                                      params=100000, sweep_id="demo", repeat=1, error=""))
quick = plan.plan(dict(quick=True))
lines = predict.write(pd, quick, os.path.join(pd, "cal.csv"), p_csv)
assert lines[0].endswith("written before any timed run:") and "compute 8.00 ms" in lines[0], lines
pr = {(r["label"], r["workers"]): r for r in results.read_rows(os.path.join(pd, "prediction.csv"))}
assert sorted(pr) == [("ps, 1 server host", "2"), ("ps, 1 server host", "4"), ("ring", "2"), ("ring", "4")], sorted(pr)
# ring N=4: 6 alpha + 1.5 n beta = 2.460 ms, step 10.46 ms; PS N=2, one server host: 4 alpha +
# (2n + 2 slices of 32 KiB) beta = 3.764 ms
assert (pr[("ring", "4")]["model_exchange_ms"], pr[("ring", "4")]["model_step_ms"], pr[("ring", "4")]["model_samples_per_s"]) == \
    ("2.460", "10.460", "783174.0"), pr[("ring", "4")]
assert pr[("ps, 1 server host", "2")]["model_exchange_ms"] == "3.764", pr
assert "N=4 exchange ms: ps, 1 server host " in "\n".join(lines) and "winner: ring" in lines[2], lines
assert predict.write(pd, quick, os.path.join(pd, "cal.csv"), p_csv) == [], "a prediction written twice"
# read against the runs: the ring wins as predicted; its exchange at N=4 is 2.0 ms measured (+23%)
for N, ex in ((2, 1.0), (4, 2.0)):
    results.append_row(p_csv, cols, dict(label="ring", topology="ring", workers=N, step_ms=8 + ex, exchange_ms=ex, wait_ms=0,
                                          server_hosts=0, straggler=1, sweep_id="demo", repeat=1, error=""))
got = predict.check_lines(pd, figures.load(p_csv), {2: {"ring"}, 4: {"ps, 1 server host"}})
assert got == ["  The prediction written before the runs (prediction.txt) names the winner at 1 of 2 worker counts (wrong at N=4);",
               "    its exchange is within 10% of the measured at 0 of 1 points at N = 4, 8 (worst +23.0%: ring, N=4)."], got
PY
# --loopback (also what runs without root): the sweep (a stub launcher hands back the fixture
# sweep), then plot and summary, every figure and the verdict labelled loopback
if command -v gnuplot >/dev/null; then
  cat >"$SCRATCH/stub" <<STUB
#!/bin/bash
case \$1 in
  sweep) while [[ \$# -gt 0 ]]; do [[ \$1 == --csv ]] && cp "$TOP_SRCDIR/tests/fixtures/sweep_small.csv" "\$2"; shift; done ;;
  plot) shift; exec "$TOP_SRCDIR/experiments/plot" "\$@" ;;
  *) exit 9 ;;
esac
STUB
  chmod +x "$SCRATCH/stub"
  PSRING_LAUNCHER="$SCRATCH/stub" "$DEMO" --loopback -o "$SCRATCH/lb" >"$SCRATCH/lb.out" 2>&1 || { cat "$SCRATCH/lb.out"; fail "demo --loopback failed"; }
  grep -q "loopback: all ranks on this machine" "$SCRATCH/lb/loopback/throughput.svg" || { cat "$SCRATCH/lb.out"; fail "loopback figures not labelled"; }
  grep -q "Note (loopback)" "$SCRATCH/lb.out" || fail "the loopback verdict is not labelled: $(cat "$SCRATCH/lb.out")"
fi
pass "demo: dilation correction, quota gating of a run, verdict and model errors on a fixture, figures, --loopback, bad flags"
