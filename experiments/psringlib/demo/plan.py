"""plan.py: what psring demo runs: the regime (model, batch, rates, the time-to-accuracy runs'
settings), each run (Run) and its psring train command, how often it is repeated, and the
dilation of the emulated hosts each run gets. Runs nothing."""
import collections
import os

from .. import paths, units
from .settings import PS_CHUNK_KB, RING_CHUNK_KB, WARM


PSRING = paths.launcher()   # installed: psring sets PSRING_LAUNCHER
# the regime (stated on every figure): compute about 3x the ring's exchange at N=8, so the ring
# scales while one server's link saturates, and k = 4 server hosts beat the ring clearly at N = 4
# (how it was chosen: docs/results/lab-notes-experiments.md)
LAYERS, BATCH, LR = "784,384,10", 2048, 0.1
TRAIN, TEST = 49152, 2000
# The time-to-accuracy runs: a batch small enough that BSP passes 95% on the full test set in
# three epochs; the PS on TTA_SERVERS hosts of their own, so that no one link sets every design's
# pace; one sample budget for all (how each was found: docs/results/lab-notes-experiments.md)
TTA_BATCH, TTA_EPOCHS, TTA_TEST, TTA_REPEATS, TTA_SERVERS = 1024, 3, 10000, 2, 4
# each sync's (lr, momentum): its best final accuracy over one grid, run on these hosts without a
# straggler (lr 0.05..0.4 x momentum 0..0.9; every point: docs/results/tta-grid-2026-11-29)
TTA_OPT = {"bsp": (0.4, 0.9), "async": (0.1, 0.5), "ssp": (0.1, 0.5)}
# SSP's bound in clocks (steps): beside a host at half speed SSP gains only the bound's steps over
# BSP, and at the trainer's default 2 it kept BSP's pace
# (measured: docs/results/lab-notes-experiments.md)
TTA_SSP_STALENESS = 8
TTA_PS = "ps, %d server hosts" % TTA_SERVERS
# worker 0 copies its parameters every TTA_EVERY steps (and before the first), tested after the job
# off its clock (psring train --snapshot-every): 13 points over BSP's 36 steps
TTA_EVERY = 3
TTA_N = 4   # workers
EMU = ["label", "dilation", "link_rate", "cpu_share", "server_hosts", "straggler", "placement", "ps_chunk_kb",
       "ring_chunk_kb", "step_samples_ms", "link_busiest_bytes", "link_bytes"]

TTA_RUNS = "batch %d/worker, %d epochs of %d samples" % (TTA_BATCH, TTA_EPOCHS, TRAIN)   # the summary's and the figure's
TTA_REGIME = "MLP %%s, %s, fp16, %%s links" % TTA_RUNS
TTA_OPTS = "each at its best of one grid: BSP lr %g, momentum %g; async lr %g, momentum %g; SSP lr %g, momentum %g (%d clocks)" % (
    TTA_OPT["bsp"] + TTA_OPT["async"] + TTA_OPT["ssp"] + (TTA_SSP_STALENESS,))


# one configuration the demo runs: N workers; servers (S) and server hosts (k, 0: colocated or none);
# colocated: the hosts the shards share with the workers, or 0; straggler: one host's CPU share;
# tta: time to accuracy, whole epochs at TTA_BATCH instead of timed steps at BATCH; byteps: K of
# BytePS' placement (a summation server beside each worker plus K on hosts of their own), or 0;
# scale: one worker on the scale model's host (the largest dilation), the reference for efficiency
Run = collections.namedtuple("Run", "label topology N servers server_hosts colocated sync straggler tta byteps scale",
                             defaults=(0, False))
SCALE_ONE = " # scale model"   # the scale run's command ends so: its key differs from the real core's
BYTEPS = "ps, BytePS k=1"   # its label: BytePS' placement with one spare host, --ps-mode sum


def plan(o):
    """The demo's runs (Run), in the order the tables list them."""
    runs = []
    Ns = [1, 2, 4] if o["quick"] else [1, 2, 4, 8]
    for N in Ns:
        runs.append(Run("ring", "ring", N, 0, 0, 0, "bsp", 1.0, False))
        runs.append(Run("ps, 1 server host", "ps", N, 1, 1, 0, "bsp", 1.0, False))
    if not o["quick"]:
        for N in (2, 4, 8):
            runs.append(Run("ps, N/2 colocated", "ps", N, N // 2, 0, N, "bsp", 1.0, False))
            runs.append(Run("ps, N colocated", "ps", N, N, 0, N, "bsp", 1.0, False))
        for k in (2, 3, 4):
            runs.append(Run("ps, k server hosts", "ps", 4, k, k, 0, "bsp", 1.0, False))
        # one worker on the same scale model as the runs it is compared with: efficiency and x over one worker
        runs.append(Run("ring", "ring", 1, 0, 0, 0, "bsp", 1.0, False, 0, True))
        for N in (4, 8):   # BytePS' own placement beside them: N + 1 hosts, as one server host takes
            runs.append(Run(BYTEPS, "ps", N, N + 1, 1, 0, "bsp", 1.0, False, 1))
        for strag in (1.0, 0.5):
            for label, topo, sync in (("ring", "ring", "bsp"), (TTA_PS, "ps", "bsp"), (TTA_PS, "ps", "async"), (TTA_PS, "ps", "ssp")):
                S = TTA_SERVERS if topo == "ps" else 0
                runs.append(Run(label, topo, TTA_N, S, S, 0, sync, strag, True))
    return runs


def command(run, o, data):
    label, topo, N, S, k, colo, sync, strag, tta, byteps = run[:10]
    if run is ALONE:
        return alone_command(data, o["steps"])
    np_ = N + (S if topo == "ps" else 0)
    batch, lr, test = (TTA_BATCH, TTA_OPT[sync][0], TTA_TEST) if tta else (BATCH, LR, TEST)
    # BytePS: --workers N, the launcher derives -np 2N+K, --servers N+K and the hosts
    procs = ["--workers", str(N)] if byteps else ["-np", str(np_)]
    cmd = [PSRING, "train", "--cluster"] + procs + ["--topology", topo, "--layers", LAYERS, "--batch", str(batch),
           "--lr", "%g" % lr, "--lr-scale", "none", "--fp16", "--data", data, "--test-limit", str(test), "--seed", "42"]
    if colo:
        cmd += ["--cluster-hosts", str(colo)]
    if byteps:
        cmd += ["--byteps", str(byteps), "--ps-mode", "sum", "--sync", sync, "--ps-chunk-kb", str(PS_CHUNK_KB)]
    elif topo == "ps":
        cmd += ["--servers", str(S), "--sync", sync, "--ps-chunk-kb", str(PS_CHUNK_KB)]
    else:
        cmd += ["--chunk-kb", str(RING_CHUNK_KB)]
    if tta:   # whole epochs over the demo's training set
        cmd += ["--train-limit", str(TRAIN), "--epochs", str(TTA_EPOCHS), "--timing-skip", str(WARM)]
        cmd += ["--momentum", "%g" % TTA_OPT[sync][1]]
        cmd += ["--staleness", str(TTA_SSP_STALENESS)] if sync == "ssp" else []
    else:
        cmd += ["--train-limit", str(TRAIN), "--epochs", "100"] + timed_steps(o["steps"])
    return cmd


def repeats_of(run, o):
    """How many times the demo makes run: --repeats; the time-to-accuracy runs at most
    TTA_REPEATS (why the crossover's runs need no more: docs/results/lab-notes-experiments.md)."""
    return min(o["repeats"], TTA_REPEATS) if run.tta else o["repeats"]


def timed_steps(steps):
    """The trainer's flags for a throughput run of STEPS steps, the first WARM of them untimed."""
    return ["--steps", str(steps), "--timing-skip", str(min(WARM, steps - 1))]


def run_hosts(run):
    """The emulated hosts a run takes: its workers, and the PS's server hosts before them (h0..)."""
    return run.N + (run.server_hosts if run.topology == "ps" else 0)


def run_shares(run, gpu_hosts=0):
    """The CPU shares a run's hosts take: one per CPU host, two per GPU host (psring cluster up
    --kinds gpu:G: its compute on one share, what communicates and sums on the other), the first
    gpu_hosts of the cluster's hosts being GPU hosts."""
    hosts = run_hosts(run)
    return hosts + min(gpu_hosts, hosts)


def run_dilation(run, Dmax, rate, cpus=None, gpu_hosts=0):
    """1 where the run has at most 2 workers, no more than this machine's CPUs, at most one server
    host, no straggler and no GPU host: each worker host then has a core of its own (pinned, Open
    MPI's TCP transport keeps up with a 1 Gbit link), and a server host shares one, as it works
    while the workers wait for its answer and idles while they compute (a GPU host's two shares
    need quotas: cluster dilate 1 refuses them). Otherwise the smallest of 2, 4, 8, ... that keeps
    the run's CPU shares (run_shares: a GPU host counts two) within 1.25 of the 2 cores (the rest
    is the kernel's packet work: veth, bridge, tbf, which no cgroup is charged for) and every link
    at most 125 Mbit/s of real time. Above that Open MPI's TCP transport falls behind the link,
    and a dilated run would show that slowness, not the cluster's (measured:
    docs/results/lab-notes-experiments.md)."""
    N, hosts, shares = run.N, run_hosts(run), run_shares(run, gpu_hosts)
    if run.scale:
        return Dmax
    if N <= min(cpus or len(os.sched_getaffinity(0)), 2) and hosts <= N + 1 and run.straggler == 1 \
            and shares == hosts:   # 2: what --validate checks
        # real 1-core hosts on links at the nominal rate, no quota (cluster dilate 1 pins host hI
        # to the I-th CPU, modulo their number: one server host h0 shares a core with the last
        # worker). A quota stops a host for the rest of a 2 ms period whenever the exchange's CPU
        # work finds it spent; and all of N=2 at one D compares like with like (measured:
        # docs/results/lab-notes-experiments.md)
        return 1
    D = 2
    while (shares / D > 1.25 or units.rate_bps(rate) / D > 125e6) and D < Dmax:
        D *= 2
    return min(D, Dmax)


def step_args(data, steps):
    """The trainer's flags for STEPS timed steps of the demo's model and batch (one worker's step)."""
    return ["--layers", LAYERS, "--batch", str(BATCH), "--lr", str(LR), "--lr-scale", "none", "--fp16", "--data", data,
            "--train-limit", str(TRAIN), "--test-limit", str(TEST), "--epochs", "100"] + timed_steps(steps)


ALONE = Run("step alone", "local", 1, 0, 0, 0, "bsp", 1.0, False)   # one worker, no exchange


def alone_command(data, steps):
    """The same step in one process, no emulated host, no quota, no traffic (fp16 is only the
    exchange's): the reference a dilated host's compute is checked against."""
    return [PSRING, "train", "--topology", "local"] + [a for a in step_args(data, steps) if a != "--fp16"]


def straggler_host(run):
    return "h%d" % (run_hosts(run) - 1)   # the last worker's host


def other_regime(rows):
    """'' when every row of a demo CSV being resumed ran this demo's model at one of its batches,
    else the first other one ('MLP 784,256,10, batch 3072'): a demo of another version wrote it."""
    for r in rows:
        if r.get("layers") and (r["layers"] != LAYERS or r.get("batch_per_worker") not in (str(BATCH), str(TTA_BATCH))):
            return "MLP %s, batch %s" % (r["layers"], r.get("batch_per_worker") or "?")
    return ""
