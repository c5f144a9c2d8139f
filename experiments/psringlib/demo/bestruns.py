"""bestruns.py: psring demo --best's runs: the clusters (hosts and kinds) each run needs, the
psring train command of each, the calibration and prediction made before the first run, one run
and its row (times / D, exposed_ms), the loop with the hosts always taken down. The regime and
the model: best.py; the report: bestreport.py."""
import collections
import os
import shutil
import statistics
import subprocess
import time

from .. import paths, results
from ..costmodel import calibration_load
from . import bad, best, hosts, say
from .bestreport import report
from .plan import PSRING, TRAIN, TTA_TEST, Run, run_shares
from .runs import correct, failure, mnist, subset_mnist, train
from .settings import PS_CHUNK_KB, RING_CHUNK_KB, WARM

# one run: a design of best.DESIGNS at N workers
BestRun = collections.namedtuple("BestRun", "design N")
ALONE = best.Design("step alone", "local", 0, False)
LR = 0.05   # timed steps only: the lesson here is time, and a deep MLP at plain SGD stays finite at it
TEST = best.TEST
EMU = ["label", "dilation", "link_rate", "kinds", "hosts_used", "server_hosts", "ps_chunk_kb", "ring_chunk_kb", "exposed_ms"]
# the trainer's PS columns that results.TRAINER_COLUMNS leaves out: which server mode, and the split of
# the parameters over the servers (BytePS' x* on the spare hosts)
COLUMNS = results.TRAINER_COLUMNS + ["ps_mode", "ps_split"] + EMU + results.EXTRA_COLUMNS


def clusters(Ns=best.Ns):
    """[(N, hosts, kinds, [BestRun])]: for each N, N GPU worker hosts and 2 CPU hosts (the ring
    on the first N, BytePS' k spare servers on the CPU hosts), then N + 1 GPU hosts for ps-lite,
    whose server is h0 and workers h1..hN: its cluster is all GPU hosts (the server uses only its
    host share, as on a CPU host)."""
    out = []
    for N in Ns:
        out.append((N, N + 2, "gpu:%d,cpu:2" % N, [BestRun(d, N) for d in best.DESIGNS if d.k is not None and best.runs_at(d, N)]))
        out.append((N, N + 1, "gpu:%d" % (N + 1), [BestRun(d, N) for d in best.DESIGNS if d.k is None]))
    return out


def dilation(run, Dmax, rate):
    return best.dilation(run.design, run.N, Dmax, rate)


def placement_problem(Dmax, rate):
    """'' when every run's CPU shares fit 1.25 cores at a dilation of at most Dmax, else why not
    (the run with the most shares named)."""
    most = max(((run_shares(Run(r.design.label, r.design.topology, r.N, 0, best.hosts_of(r.design, r.N) - r.N, 0, "bsp", 1.0, False),
                            r.N + 1 if r.design.k is None else r.N), r) for _, _, _, rs in clusters() for r in rs),
               key=lambda x: x[0])
    shares, r = most
    if shares / Dmax <= 1.25:
        return ""
    return ("--best --dilation %d: %s at N=%d takes %d CPU shares (a GPU host counts two), more than 1.25 cores at D=%d:"
            " give --dilation %d or more" % (Dmax, r.design.label, r.N, shares, Dmax, least_dilation(shares)))


def least_dilation(shares):
    """The smallest power of 2 at which SHARES CPU shares take at most 1.25 cores."""
    D = 2
    while shares / D > 1.25:
        D *= 2
    return D


def regime_args(regime, data, steps):
    return ["--layers", regime["layers"], "--batch", str(regime["batch"]), "--lr", "%g" % LR, "--lr-scale", "none", "--data", data,
            "--train-limit", str(TRAIN), "--test-limit", str(TEST), "--epochs", "100", "--seed", "42",
            "--steps", str(steps), "--timing-skip", str(WARM)]


def command(run, regime, data, steps=best.STEPS):
    """The psring train command of a run: --workers N on the emulated hosts, fp16 on the wire."""
    d = run.design
    if d is ALONE:   # one process on a full core, no emulated host, no traffic (fp16 is the wire's only)
        return [PSRING, "train", "--topology", "local"] + regime_args(regime, data, steps)
    cmd = [PSRING, "train", "--cluster", "--workers", str(run.N), "--topology", d.topology, "--fp16"] + regime_args(regime, data, steps)
    if d.topology == "ring":
        cmd += ["--chunk-kb", str(RING_CHUNK_KB)]
    elif d.k is None:
        cmd += ["--servers", "1", "--ps-mode", "optimizer", "--ps-chunk-kb", str(PS_CHUNK_KB)]
    else:
        cmd += ["--byteps", str(d.k), "--ps-mode", "sum", "--ps-chunk-kb", str(PS_CHUNK_KB)]
    return cmd + (["--overlap"] if d.overlap else [])


def predicted_regime(folder):
    """The regime ({layers, batch}) of the prediction a first pass wrote, or None."""
    pred = best.read_prediction(folder)
    if not pred:
        return None
    r = next(iter(pred.values()))
    return dict(layers=r["layers"], batch=int(r["batch_per_worker"]))


def regime_of(folder, cal_path):
    """The regime ({layers, batch}): calibrated on the hosts that are up, chosen by the model and
    written (prediction.txt, .csv) before any run."""
    if not os.path.exists(cal_path) and subprocess.run([paths.command("model"), "--calibrate", "--calibration", cal_path]).returncode != 0:
        raise RuntimeError("the cost model's calibration failed (above)")
    cal = calibration_load(cal_path)
    chosen, cands = best.choose_regime(cal)
    lines = best.write_prediction(folder, chosen, cands, cal)
    print("\n".join(lines), flush=True)
    if chosen is None:
        raise RuntimeError("no candidate regime fits the scenario's %d s budget (%s)" % (best.BUDGET_S, os.path.join(folder, "prediction.txt")))
    return dict(layers=chosen["layers"], batch=chosen["batch"])


def alone_step(rows):
    """The median step (ms) of the step-alone rows, or None."""
    xs = [float(r["step_ms"]) for r in rows if r.get("topology") == "local" and not r.get("error")]
    return statistics.median(xs) if xs else None


def one(run, cmd, rep, o, csv_path, D, alone_ms):
    """One run and its row in csv_path: the trainer's columns / D, the scenario's, and exposed_ms
    (step minus the step alone); a failed run's row says why."""
    d = run.design
    tmp = csv_path + ".run"
    if os.path.exists(tmp):
        os.remove(tmp)
    rc, _, err = train(cmd + ["--csv", tmp], D)
    got = results.read_rows(tmp) if rc == 0 and os.path.exists(tmp) else []
    row = {"sweep_id": "best", "repeat": rep, "command": " ".join(cmd[1:])}
    if got:
        row.update(correct(got[-1], D), error="")
        if alone_ms is not None and d is not ALONE:
            row["exposed_ms"] = "%.4f" % (float(row["step_ms"]) - alone_ms)
    else:
        row.update(topology=d.topology, workers=run.N, error=failure(err, rc))
        print("  failed: %s" % row["error"], flush=True)
    local = d is ALONE
    row.update(label=d.label, dilation=D, link_rate="" if local else o["rate"], kinds="" if local else kinds_of(run),
               hosts_used=0 if local else best.hosts_of(d, run.N), server_hosts=0 if d.topology != "ps" else (1 if d.k is None else d.k),
               ps_chunk_kb=PS_CHUNK_KB if d.topology == "ps" else "", ring_chunk_kb=RING_CHUNK_KB if d.topology == "ring" else "")
    results.append_row(csv_path, COLUMNS, row)
    if os.path.exists(tmp):
        os.remove(tmp)
    return row


def kinds_of(run):
    """The kinds of the hosts a run uses, as cluster up --kinds writes them."""
    d = run.design
    if d.topology == "ps" and d.k is None:
        return "gpu:%d" % (run.N + 1)
    return "gpu:%d" % run.N + (",cpu:%d" % d.k if d.topology == "ps" else "")


def start(o):
    """The results folder DIR/best (emptied by --fresh), the MNIST subset, the rows to resume."""
    folder = os.path.join(o["out"], "best")
    if o["fresh"]:
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    data = os.path.join(o["out"], "mnist-subset")   # the main demo's subset, made once for both
    subset_mnist(mnist(), data, TRAIN, TTA_TEST)
    csv_path = os.path.join(folder, "best.csv")
    try:
        rows = results.resume_rows(csv_path, COLUMNS, "written by another version of the scenario: use --fresh or another -o")
    except (results.CsvError, OSError) as e:
        bad(str(e) if isinstance(e, results.CsvError) else "%s: %s" % (csv_path, e.strerror))
    return folder, data, csv_path, rows


def demo_best(o):
    """psring demo --best: calibration, prediction, every run of clusters() not yet in best.csv,
    the report; the hosts down whatever happens (hosts.on_hosts)."""
    folder, data, csv_path, rows = start(o)
    t0 = time.time()
    say("best against best: ring --overlap, ps-lite, BytePS k=1 and k=2 (summation servers, with and without --overlap)"
        " at N = %s on emulated GPU hosts; the regime chosen by the cost model before the first run" % ", ".join(map(str, best.Ns)))
    hosts.on_hosts(lambda made: on_clusters(o, folder, data, csv_path, rows, made))
    say("runs done in %d:%02d; the hosts are down" % divmod(int(time.time() - t0), 60))
    report(folder, o)
    return 0


def on_clusters(o, folder, data, csv_path, rows, made):
    done = {results.run_key(r) for r in rows if not r.get("error")}
    regime, alone_ms, first = predicted_regime(folder), alone_step(rows), True   # resumed: the regime predicted then
    for N, nh, kinds, rs in clusters():
        todo = [(rep, r) for rep in range(1, o["repeats"] + 1) for r in rs]
        if regime and all(results.run_key(key_row(command(r, regime, data), rep)) in done for rep, r in todo):
            continue
        D = dilation(rs[0], o["dilation"], o["rate"])
        made.append(nh)
        hosts.cluster("up", nh, "--rate", o["rate"], "--dilation", D, "--kinds", kinds)
        if regime is None:
            regime = regime_of(folder, os.path.join(folder, "calibration.csv"))
        if first:
            alone_ms, first = alone_runs(o, regime, data, csv_path, done), False
        for rep, r in todo:
            cmd = command(r, regime, data)
            if results.run_key(key_row(cmd, rep)) in done:
                continue
            d = dilation(r, o["dilation"], o["rate"])
            if d != D:
                D = d
                hosts.cluster("dilate", D)
            say("%s, N=%d (hosts %s, D=%d, repeat %d)" % (r.design.label, N, kinds_of(r), D, rep))
            t = time.time()
            one(r, cmd, rep, o, csv_path, D, alone_ms)
            say("  %.0f s" % (time.time() - t))
        hosts.cluster("down", check=False)
        made.clear()


def alone_runs(o, regime, data, csv_path, done):
    """The step alone, once a repeat (those not done yet): the median step (ms) of them all."""
    for rep in range(1, o["repeats"] + 1):
        cmd = command(BestRun(ALONE, 1), regime, data)
        if results.run_key(key_row(cmd, rep)) not in done:
            say("the step alone (one process on a full core: the compute the exposed exchange is taken from)")
            one(BestRun(ALONE, 1), cmd, rep, o, csv_path, 1, None)
    return alone_step(results.read_rows(csv_path))


def key_row(cmd, rep):
    return {"sweep_id": "best", "repeat": rep, "command": " ".join(cmd[1:])}
