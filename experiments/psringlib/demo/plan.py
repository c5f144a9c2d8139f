"""plan.py: what psring demo runs: the regime (model, batch, rates, the time-to-accuracy runs'
settings), each run (Run) and its psring train command, how often it is repeated, and the
dilation of the emulated hosts each run gets. Runs nothing."""
import collections
import os

from .. import paths, units


PSRING = paths.launcher()   # installed: psring sets PSRING_LAUNCHER
# the regime (stated on every figure): compute about 3x the ring's exchange at N=8, so the ring
# scales while one server's link saturates, and a model wide enough that k = 4 server hosts beat
# the ring's exchange at N = 4 clearly. 784,256,10 at 3072, the regime before: 5.1 / 4.8 ms, ring /
# PS with 4 server hosts, exchange without the wait (1-10% less over the demo's runs: the PS took
# 1.47x its bytes' time, the ring 1.04x). Measured side by side since (D = 8, three rounds, compute
# per step held at about 27 ms by the batch; docs/results/demo-lesson-2026-11-27/probes.txt):
# 784,384,10 at 2048: 7.49 / 6.37 (11-16% less, the PS 1.30x its bytes); 784,448,10 at 1756:
# 8.75 / 7.33 (16%); 784,512,10 at 1536: 10.0 / 8.6 (15%), but the ring's efficiency at N = 8
# against the step alone falls from 0.75 (384) to 0.68 (512). Slices of 128 KiB (8.1 ms) or a
# credit of 0 or 4 slices (7.4) were slower than 64 KiB and 2 (6.5).
LAYERS, BATCH, LR = "784,384,10", 2048, 0.1
TRAIN, TEST = 49152, 2000
# The time-to-accuracy runs: a smaller batch, so that BSP takes enough steps to pass 95% on the
# full test set (one process, MLP 784,384,10, global batch 4096 at lr 0.4: 93.8% after two epochs,
# 95.6% after three, 36 steps; the throughput runs' 8192 at lr 0.1 would need about 8 epochs), and
# the PS on TTA_SERVERS server hosts of their own. With one server its link sets every design's
# pace: at batch 512 a worker and lr 0.2 (48 steps) async took as long as BSP, 1.29 s against 1.28,
# a 21 ms exchange for 4 ms of compute, with or without the straggler (1.42 against 1.55 s). Async
# and SSP apply each worker's gradient of TTA_BATCH samples as it comes, at lr / N: as far a step
# per sample as BSP's mean of N gradients at lr (at lr they reached 26-53%: N times the step, and
# stale), and with momentum TTA_ASYNC_MOMENTUM: staleness acts as momentum of its own (Mitliagkas
# et al., "Asynchrony begets momentum", 2016): at 0.9 async's loss rose from 2.4 to 3.2 over its
# epochs (48-64% in the demo); on loopback, 4 workers and 4 servers, 63% at 0.9, 90.5% at 0.5, 88.9%
# at 0. They spend the same sample budget (--samples' default: epochs x an epoch's samples),
# counted at the servers. Two repeats: BSP's accuracy is the same in each (one seed, one order of
# sums).
TTA_BATCH, TTA_LR, TTA_EPOCHS, TTA_TEST, TTA_REPEATS, TTA_SERVERS = 1024, 0.4, 3, 10000, 2, 4
TTA_MOMENTUM, TTA_ASYNC_MOMENTUM = 0.9, 0.5   # BSP's: the trainer's default, stated
# SSP's bound in clocks (steps): a fast worker waits once it is this far ahead of the slowest, so
# beside a host at half speed SSP gains only the bound's steps over BSP. Measured side by side
# with the straggler (seconds of the run, D = 8): BSP 9.6, async 7.3, SSP at 2 / 4 / 8 clocks
# 10.5 / 10.2 / 8.8: at the trainer's default 2 SSP was BSP's pace, not between BSP and async.
TTA_SSP_STALENESS = 8
TTA_PS = "ps, %d server hosts" % TTA_SERVERS
TTA_N = 4   # workers
EMU = ["label", "dilation", "link_rate", "cpu_share", "server_hosts", "straggler", "placement", "ps_chunk_kb",
       "ring_chunk_kb", "step_samples_ms", "link_busiest_bytes", "link_bytes"]
WARM = 2           # steps left out of every time (--timing-skip): page faults, cold caches
PS_CHUNK_KB = 64   # PS slices: pulls overlap later pushes (one slice of pipeline fill)
# The ring's pipeline chunk, the same 64 KiB of parameters as a PS slice (32 KiB on the wire in
# fp16): within Open MPI's TCP eager limit (64 KiB), so a send needs no answer from its receiver.
# With the trainer's 256 KiB a chunk took a rendezvous, and under a CPU quota the receiver is
# often throttled when it should answer: measured side by side (D=8, three runs each), the ring's
# exchange at N=2 took 3.9-4.0 ms with 256 KiB and 3.0-3.1 with 64 (the link time: 3.26 ms), at
# N=4 5.6-6.2 and 4.9; at N=8 (51 KiB chunks, eager either way) 6.1 both.
RING_CHUNK_KB = 64


TTA_RUNS = "batch %d/worker, %d epochs of %d samples" % (TTA_BATCH, TTA_EPOCHS, TRAIN)   # the summary's and the figure's
TTA_REGIME = ("MLP %%s, %s, fp16, %%s links; BSP lr %g, momentum %g; async, SSP lr %g, momentum %g (SSP: %d clocks)"
              % (TTA_RUNS, TTA_LR, TTA_MOMENTUM, TTA_LR / TTA_N, TTA_ASYNC_MOMENTUM, TTA_SSP_STALENESS))


# one configuration the demo runs: N workers; servers (S) and server hosts (k, 0: colocated or none);
# colocated: the hosts the shards share with the workers, or 0; straggler: one host's CPU share;
# tta: time to accuracy, whole epochs at TTA_BATCH instead of timed steps at BATCH
Run = collections.namedtuple("Run", "label topology N servers server_hosts colocated sync straggler tta")


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
        for strag in (1.0, 0.5):
            for label, topo, sync in (("ring", "ring", "bsp"), (TTA_PS, "ps", "bsp"), (TTA_PS, "ps", "async"), (TTA_PS, "ps", "ssp")):
                S = TTA_SERVERS if topo == "ps" else 0
                runs.append(Run(label, topo, TTA_N, S, S, 0, sync, strag, True))
    return runs


def command(run, o, data):
    label, topo, N, S, k, colo, sync, strag, tta = run
    if run is ALONE:
        return alone_command(data, o["steps"])
    np_ = N + (S if topo == "ps" else 0)
    batch, lr, test = (TTA_BATCH, TTA_LR if sync == "bsp" else TTA_LR / N, TTA_TEST) if tta else (BATCH, LR, TEST)
    cmd = [PSRING, "train", "--cluster", "-np", str(np_), "--topology", topo, "--layers", LAYERS, "--batch", str(batch),
           "--lr", "%g" % lr, "--lr-scale", "none", "--fp16", "--data", data, "--test-limit", str(test), "--seed", "42"]
    if colo:
        cmd += ["--cluster-hosts", str(colo)]
    if topo == "ps":
        cmd += ["--servers", str(S), "--sync", sync, "--ps-chunk-kb", str(PS_CHUNK_KB)]
    else:
        cmd += ["--chunk-kb", str(RING_CHUNK_KB)]
    if tta:   # whole epochs over the demo's training set
        cmd += ["--train-limit", str(TRAIN), "--epochs", str(TTA_EPOCHS), "--timing-skip", str(WARM)]
        cmd += ["--momentum", "%g" % (TTA_MOMENTUM if sync == "bsp" else TTA_ASYNC_MOMENTUM)]
        cmd += ["--staleness", str(TTA_SSP_STALENESS)] if sync == "ssp" else []
    else:
        cmd += ["--train-limit", str(TRAIN), "--epochs", "100"] + timed_steps(o["steps"])
    return cmd


def repeats_of(run, o):
    """How many times the demo makes run: --repeats; the time-to-accuracy runs at most
    TTA_REPEATS. (The crossover's runs had two more while four server hosts beat the ring by
    2-12%; in the regime above its rounds gave 12-22%, the medians of three 14-17%.)"""
    return min(o["repeats"], TTA_REPEATS) if run.tta else o["repeats"]


def timed_steps(steps):
    """The trainer's flags for a throughput run of STEPS steps, the first WARM of them untimed."""
    return ["--steps", str(steps), "--timing-skip", str(min(WARM, steps - 1))]


def run_hosts(run):
    """The emulated hosts a run takes: its workers, and the PS's server hosts before them (h0..)."""
    return run.N + (run.server_hosts if run.topology == "ps" else 0)


def run_dilation(run, Dmax, rate, cpus=None):
    """1 where the run has at most 2 workers, no more than this machine's CPUs, at most one server
    host, and no straggler: each worker host then has a core of its own (pinned, Open MPI's TCP
    transport kept up with a 1 Gbit link: a 2-host ring exchanged 3.16-3.23 ms in training for
    3.26 ms of bytes), and a server host shares one, as it works while the workers wait for its
    answer and idles while they compute. Otherwise
    the smallest of 2, 4, 8, ... that keeps the run's hosts within 1.25 of the 2 cores (the rest
    is the kernel's packet work: veth, bridge, tbf, which no cgroup is charged for) and every link
    at most 125 Mbit/s of real time. Above that Open MPI's TCP transport falls behind the link
    (measured, 2 hosts, 407 KB ring allreduce, no CPU quota at all: 1.59x the link time at
    500 Mbit/s, 1.06x at 125 Mbit/s; a plain socket 1.09x at 500), and a dilated run would
    show that slowness, not the cluster's."""
    N, hosts = run.N, run_hosts(run)
    if N <= min(cpus or len(os.sched_getaffinity(0)), 2) and hosts <= N + 1 and run.straggler == 1:   # 2: what --validate checks
        # real 1-core hosts on links at the nominal rate, no quota (cluster dilate 1 pins host hI
        # to the I-th CPU, modulo their number: one server host h0 shares a core with the last
        # worker). A quota stops a host for the rest of a 2 ms period whenever the exchange's CPU
        # work finds it spent: the colocated PS at N=2 exchanged 4.2-5.9 ms at D=8 against
        # 3.4-3.7 on two pinned cores (model 3.65). And all of N=2 at one D compares like with
        # like: hosts at D=8 computed 20.0-21.0 ms a step against 22.8-23.2 on pinned cores, which
        # put one server host's step 1.04-1.08x the ring's at N=2 (model 1.14x); on pinned cores,
        # 1.09-1.12x, its exchange 6.6-6.8 ms (model 7.14)
        return 1
    D = 2
    while (hosts / D > 1.25 or units.rate_bps(rate) / D > 125e6) and D < Dmax:
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
