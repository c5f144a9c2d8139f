"""runs.py: the demo's runs: the MNIST subset, the emulated demo from plan to verdict, one run
(its row, corrected by the dilation, with its links' bytes and its epochs), a psring train job
with the hosts' quotas gated around its start-up, why a run failed, and the loopback sweep."""
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time

from .. import paths, results
from . import bad, hosts, predict, say
from .figures import figures
from .hosts import Interrupted, JOB, link_columns, link_counters, on_hosts, stop
from .plan import (ALONE, EMU, LAYERS, PSRING, SCALE_ONE, TRAIN, TTA_EVERY, TTA_TEST, command, other_regime, plan, repeats_of,
                   run_dilation, run_hosts, straggler_host)
from .settings import PS_CHUNK_KB, RING_CHUNK_KB, WARM
from .verdict import summary


TIMES = ["step_ms", "data_ms", "compute_ms", "exchange_ms", "wait_ms", "optimizer_ms"]
# the trainer's summary line: the final parameters' accuracy and loss, and its wall time (the
# copies' clock, which leaves them out)
END_RE = re.compile(r"^summary:\s.*test accuracy (?P<acc>[\d.]+)%, final loss (?P<loss>\S+),.*wall (?P<elapsed>[\d.]+)s$")
EPOCH_COLUMNS = ["sweep_id", "repeat", "command", "label", "workers", "sync", "straggler", "epoch", "step", "elapsed_s",
                 "test_accuracy", "loss"]


def mnist():
    """The MNIST folder (paths.mnist_dir), or one line saying what to set or run."""
    return paths.mnist_dir() or bad(paths.MNIST_MISSING, 1)


def subset_mnist(src, dst, train, test):
    """The first TRAIN/TEST samples as plain IDX files: a dilated host reads 1/D of a core's worth
    of data per second, and the full gzipped set took most of a run's start-up."""
    import gzip
    os.makedirs(dst, exist_ok=True)
    for split, count in (("train", train), ("t10k", test)):
        for kind, hdr, per in (("images-idx3-ubyte", 16, 784), ("labels-idx1-ubyte", 8, 1)):
            name = "%s-%s" % (split, kind)
            out = os.path.join(dst, name)
            if os.path.exists(out):   # made before: kept if it holds just as many samples
                with open(out, "rb") as f:
                    head = f.read(8)
                if len(head) == 8 and struct.unpack(">I", head[4:8])[0] == count:
                    continue
            path = os.path.join(src, name)
            f = open(path, "rb") if os.path.exists(path) else gzip.open(path + ".gz", "rb")
            with f:
                head = bytearray(f.read(hdr))
                have = struct.unpack(">I", head[4:8])[0]
                if have < count:
                    bad("%s has %d samples, the demo needs %d" % (path, have, count))
                head[4:8] = struct.pack(">I", count)
                body = f.read(count * per)
            with open(out + ".tmp", "wb") as g:
                g.write(head + body)
            os.replace(out + ".tmp", out)


def demo(o):
    """The demo on emulated hosts (psring demo without --loopback or --validate, where hosts can
    be emulated): the runs of plan(o) not yet in DIR/demo.csv, then the model, figures, verdict."""
    out = o["out"]
    csv_path = os.path.join(out, "demo.csv")
    ep_path = os.path.join(out, "demo.epochs.csv")
    if o["fresh"]:
        for f in os.listdir(out):
            p = os.path.join(out, f)
            if f.startswith(("demo", "calibration", "model_vs", "summary", "prediction")) and os.path.isfile(p):
                os.remove(p)
        shutil.rmtree(os.path.join(out, "demo-data"), ignore_errors=True)
    data = os.path.join(out, "mnist-subset")
    subset_mnist(mnist(), data, TRAIN, TTA_TEST)
    runs = plan(o)
    nhosts = max(run_hosts(run) for run in runs)
    D = o["dilation"]
    say("%d emulated hosts, each 1/D of a core with links of %s/D: a scale model of 1-core hosts at %s, D times slower"
        " (D up to %d: a run's hosts within 1.25 cores, its links at most 125 Mbit/s; D=1, a core per worker, for runs of 2 workers and a server host at most)"
        % (nhosts, o["rate"], o["rate"], D))
    try:   # resuming: a CSV this demo cannot append to is refused now, not after the hosts are up
        rows = results.resume_rows(csv_path, results.TRAINER_COLUMNS + EMU + results.EXTRA_COLUMNS,
                                 "written by another version of the demo (its columns differ): use --fresh or another -o")
    except (results.CsvError, OSError) as e:
        bad(str(e) if isinstance(e, results.CsvError) else "%s: %s" % (csv_path, e.strerror))
    other = other_regime(rows)
    if other:   # this demo's columns, another model's runs: resumed, the tables would mix the two
        bad("%s holds runs of another regime (%s): remove it, or use --fresh or another -o" % (csv_path, other))
    done = {results.run_key(r): True for r in rows if not r.get("error")}

    t0 = time.time()
    return on_hosts(lambda made: emulated(o, runs, nhosts, D, out, data, csv_path, ep_path, done, t0, made))


def emulated(o, runs, nhosts, D, out, data, csv_path, ep_path, done, t0, made):
    try:
        hosts.cluster("up", nhosts, "--rate", o["rate"], "--dilation", D)
    except Interrupted:   # cut short halfway, its own clean-up killed with it: what it made is ours
        made.append(nhosts)
        raise
    made.append(nhosts)
    cal_path = os.path.join(out, "calibration.csv")
    if subprocess.run([paths.command("model"), "--calibrate", "--calibration", cal_path]).returncode != 0:
        raise RuntimeError("the cost model's calibration failed (above)")
    # each repeat starts with the step alone (one process on a full core, no quota, no traffic: the
    # cost model's compute), so the model takes the median of as many of them as of every run
    todo = sorted(((rep, run) for run in [ALONE] + runs for rep in range(1, repeats_of(run, o) + 1)),
                  key=lambda x: (x[0], x[1] is not ALONE, run_dilation(x[1], D, o["rate"])))
    now = D
    for i, (rep, run) in enumerate(todo):
        cmd = command(run, o, data)
        row = {"sweep_id": "demo", "repeat": rep,
               "command": " ".join(cmd[1:]) + (" # straggler" if run.straggler < 1 else "") + (SCALE_ONE if run.scale else "")}
        if results.run_key(row) in done:
            continue
        if run is not ALONE and not os.path.exists(os.path.join(out, "prediction.txt")):   # once, before the first timed run
            for line in predict.write(out, runs, cal_path, csv_path):
                print(line, flush=True)
        eta = (time.time() - t0) / max(i, 1) * (len(todo) - i) if i else 0
        ps = run.topology == "ps"
        say("[%d/%d] %s, N=%d%s%s%s%s  (ETA %s)" % (i + 1, len(todo), run.label, run.N, ", S=%d" % run.servers if ps else "",
            ", %s" % run.sync if ps and run.sync != "bsp" else "", ", straggler" if run.straggler < 1 else "",
            ", to accuracy" if run.tta else "", "%d:%02d" % divmod(int(eta), 60) if eta else "-"))
        if run is ALONE:   # not on an emulated host: nothing to correct
            one(run, cmd, row, o, csv_path, ep_path, 1)
            continue
        d = run_dilation(run, D, o["rate"])
        if d != now:
            now = d
            hosts.cluster("dilate", now)
        one(run, cmd, row, o, csv_path, ep_path, now)
    hosts.cluster("down", check=False)
    made.clear()
    say("runs done in %d:%02d; the hosts are down" % divmod(int(time.time() - t0), 60))
    subprocess.run([paths.command("model"), "--calibration", cal_path, "--compare", csv_path,
                    "--out", os.path.join(out, "model_vs_measured.csv")], check=False)
    figures(out, csv_path, ep_path, cal_path, o)
    print()
    summary(out, csv_path, cal_path, o)
    return 0


def one(run, cmd, row, o, csv_path, ep_path, D):
    label, topo, N, S, k, colo, sync, strag, tta, byteps = run[:10]
    tmp = csv_path + ".run"
    if os.path.exists(tmp):
        os.remove(tmp)
    if strag < 1:
        hosts.cluster("share", straggler_host(run), strag)
    timeline, snaps = csv_path + ".timeline.json", csv_path + ".snapshots"
    if N == 1 and strag == 1:   # the compute the model takes, step by step (BSP waits for the slowest)
        cmd = cmd + ["--timeline", timeline]
    if tta:   # worker 0's copies, tested after the job (accuracy_points)
        cmd = cmd + ["--snapshot-every", str(TTA_EVERY), "--snapshots", snaps]
    links = []
    try:
        rc, out, err = train(cmd + ["--csv", tmp], D, links)
    except BaseException:   # unwinding (Ctrl-C, an error): the reset must not replace what is unwinding
        if strag < 1:
            hosts.cluster("share", straggler_host(run), 1, check=False)
        raise
    if strag < 1:
        hosts.cluster("share", straggler_host(run), 1)
    trainer = results.read_rows(tmp) if rc == 0 and os.path.exists(tmp) else []
    if trainer:
        row.update(correct(trainer[-1], D))
        if len(links) == 2 and D > 1:   # the header, then the summary: the steps' traffic (on real
            # cores a step takes 30 ms, and the header reaches this through mpirun steps late)
            row.update(link_columns(links[0], links[1], int(float(trainer[-1].get("steps") or 0))))
        row["error"] = ""
        if os.path.exists(timeline):
            row["step_samples_ms"] = ";".join("%.3f" % x for x in step_samples(timeline, D))
            os.remove(timeline)
    else:
        row["error"] = failure(err, rc)
        row.update(topology=topo, workers=N, servers=S if topo == "ps" else 0, sync=sync)
        print("  failed: %s" % row["error"], flush=True)
    row.update(label=label, dilation=D, link_rate=o["rate"] if topo != "local" else "", cpu_share=1, server_hosts=k,
               straggler=strag, placement="byteps" if byteps else "colocated" if colo else ("own hosts" if topo == "ps" else "-"),
               ps_chunk_kb=PS_CHUNK_KB if topo == "ps" else "", ring_chunk_kb=RING_CHUNK_KB if topo == "ring" else "")
    cols = results.TRAINER_COLUMNS + EMU + results.EXTRA_COLUMNS
    results.append_row(csv_path, cols, row)
    if tta and not row["error"]:
        base = dict(sweep_id="demo", repeat=row["repeat"], command=row["command"], label=label, workers=N, sync=sync, straggler=strag)
        for pt in accuracy_points(cmd, snaps, out, D):
            results.append_row(ep_path, EPOCH_COLUMNS, dict(base, **pt))
    for path in (tmp, snaps):
        if os.path.exists(path):
            os.remove(path)


def accuracy_points(cmd, snaps, out, D):
    """A time-to-accuracy job's points: worker 0's copies (every TTA_EVERY steps from step 0),
    tested here after the job on a core of this machine (psring train --eval-snapshots: no host's
    quota, nothing on the job's clock), then the end: the final parameters' accuracy at the job's
    wall time (under async and SSP the budget runs out between copies), so that every design's
    curve ends at the same moment of its job. Times over the dilation; accuracy in %."""
    data, table, ev = cmd[cmd.index("--data") + 1], snaps + ".csv", None
    if os.path.exists(snaps):
        with open(table, "w") as f:
            ev = subprocess.run([PSRING, "train", "--topology", "local", "--layers", LAYERS, "--data", data, "--test-limit",
                                 str(TTA_TEST), "--eval-snapshots", snaps], stdout=f, stderr=subprocess.PIPE, text=True)
    pts = [dict(epoch="", step=r["step"], elapsed_s="%.3f" % (float(r["elapsed_s"]) / D),
                test_accuracy="%.2f" % (100 * float(r["test_accuracy"])), loss="")
           for r in (results.read_rows(table) if ev and ev.returncode == 0 else [])]
    if os.path.exists(table):
        os.remove(table)
    if ev is None or ev.returncode != 0:
        print("  its copies could not be tested: %s" % ((ev.stderr.strip() if ev else "") or "no copies written"), flush=True)
    m = next((m for m in map(END_RE.match, (x.strip() for x in (out or "").splitlines())) if m), None)
    return pts + ([dict(epoch="end", step="", elapsed_s="%.3f" % (float(m["elapsed"]) / D), test_accuracy=m["acc"], loss=m["loss"])]
                  if m else [])


def train(cmd, D, links=None):
    """(exit status, stdout, stderr) of one psring train command (124: it ran past 20 D + 120 s).
    links, a list: the hosts' link counters (link_counters) are appended to it at the trainer's
    header and at its summary line, so that their difference is the training steps' traffic alone
    (not the start-up's parameter and optimizer-state broadcasts, nor the shutdown).
    On emulated hosts (--cluster) the hosts' CPU quotas are off while the job starts: MPI's
    wire-up and the data loading, which nothing times, took most of a run at 1/8 of a core
    (docs/results/lab-notes-experiments.md). They come on when the trainer prints its header
    (after the initial parameter sync: every worker has its data), while the WARM untimed steps
    run; and go off again at its summary line (what is left is shutdown). They are on when this
    returns. At D = 1 there are no quotas to gate (`cluster dilate 1` gives each host a core) and
    the gate's own calls, running during the run's few timed steps, slowed its compute by a third."""
    gate = "--cluster" in cmd and D > 1
    with tempfile.TemporaryFile("w+") as errf:
        if gate:
            hosts.cluster("quota", "off")
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, process_group=0)
            JOB.append(p)
            expired = []
            late = threading.Timer(20 * D + 120, lambda: (expired.append(1), stop(p, signal.SIGTERM)))
            late.daemon = True   # on Ctrl-C the demo exits now, not when this would have fired (280 s)
            late.start()
            out = []
            for line in p.stdout:
                out.append(line)
                if line.startswith(("psring-train: topology", "summary:")):
                    if links is not None:
                        links.append(link_counters())
                    if gate:
                        hosts.cluster("quota", "on" if line.startswith("psring-train") else "off")
            rc = p.wait()
            late.cancel()
            if expired:
                rc = 124
                errf.write("timed out\n")
        finally:
            JOB.clear()
            if gate:
                hosts.cluster("quota", "on", check=False)
        errf.seek(0)
        return rc, "".join(out), errf.read()


def failure(err, rc):
    """The line of a failed run's stderr that says why: the demo's own time-out (its SIGTERM
    makes mpirun report signals too), a process killed (mpirun's 'exited on signal' line), else
    the trainer's last message, else the last line that is not one of mpirun's rules of dashes."""
    lines = [l.strip() for l in (err or "").splitlines() if l.strip().strip("-")]
    for hit in (lambda l: l == "timed out", lambda l: "exited on signal" in l, lambda l: l.startswith("psring")):
        found = [l for l in lines if hit(l)]
        if found:
            return found[-1][:300]
    if lines:
        return lines[-1][:300]
    sig = -rc if rc < 0 else rc - 128 if 128 < rc < 160 else 0   # Popen's -N, a shell's 128 + N
    return "killed by signal %d (%s)" % (sig, signal.Signals(sig).name) if sig in signal.valid_signals() else "exit %d" % rc


def train_row(cmd, D):
    """One run of cmd (a psring train command), its CSV row corrected by D, or RuntimeError."""
    with tempfile.TemporaryDirectory() as t:
        rc, _, err = train(cmd + ["--csv", os.path.join(t, "r.csv")], D)
        rows = results.read_rows(os.path.join(t, "r.csv"))
        if rc != 0 or not rows:
            raise RuntimeError("%s: %s" % (" ".join(cmd[1:4]), (err.strip().splitlines() or ["exit %d" % rc])[-1]))
        return correct(rows[-1], D)


def step_samples(path, D):
    """The first worker's compute per step (ms, / D) from a run's timeline: its data, forward and
    backward between one exchange call and the next, the WARM first steps left out, as in the
    trainer's times. Only that worker's process counts: a PS run's timeline also holds its
    servers (server-apply), and a PS worker has no optimizer phase to end a step with."""
    import json
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    pid = next((p for p, n in sorted(names.items()) if re.search(r"\bworker 0\b", n)), None)
    steps, cur = [], 0.0
    for e in sorted((e for e in ev if e.get("ph") == "X" and e.get("pid") == pid), key=lambda e: e["ts"]):
        if e["name"] in ("data", "forward", "backward"):
            cur += e["dur"] / 1e3 / D
        elif e["name"] == "exchange":
            steps.append(cur)
            cur = 0.0
    return steps[WARM:]


def correct(row, D):
    """The trainer's row as a real cluster D times faster would report it: times / D, rates x D."""
    row = dict(row)
    for c in TIMES:
        row[c] = "%.4f" % (float(row[c]) / D)
    row["wall_s"] = "%.3f" % (float(row["wall_s"]) / D)
    row["samples_per_s"] = "%.1f" % (float(row["samples_per_s"]) * D)
    return row


def loopback(o):
    """The loopback sweep: every rank on this machine, exchanges over shared memory and loopback."""
    out = o["out"]
    cmd = [PSRING, "sweep", "--sweep-id", "loopback", "--csv", os.path.join(out, "loopback.csv"), "--topologies", "ring,ps",
           "--servers", "1,2", "--workers", "1,2,4", "--repeats", str(o["repeats"]), "--train-limit", "20000",
           "--epochs", "3", "--test-limit", "5000", "--data", mnist()]
    rc = subprocess.run(cmd).returncode
    if rc != 0:
        return rc
    subprocess.run([PSRING, "plot", os.path.join(out, "loopback.csv"), "-o", os.path.join(out, "loopback"),
                    "--label", "loopback: all ranks on this machine, no emulation"], check=False)
    subprocess.run([paths.command("summary"), os.path.join(out, "loopback.csv"), "--label", "loopback"], check=False)
    return 0
