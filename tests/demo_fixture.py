"""demo_fixture.py: what the tests of psring demo (tests/exp_demo*.py) build their runs from: the CSV
columns, a plan.Run in short, one run's row, and the fixture sweep the verdict and the figures read.
Not a test itself."""
import os

from psringlib import results
from psringlib.demo import plan

CAL_HEAD = "format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\n"
COLS = results.TRAINER_COLUMNS + plan.EMU + results.EXTRA_COLUMNS
EP_COLS = ["sweep_id", "repeat", "command", "label", "workers", "sync", "straggler", "epoch", "elapsed_s", "test_accuracy", "loss"]
O = dict(rate="1gbit", dilation=8)


def Run(label, topo, N, servers=0, server_hosts=0, sync="bsp", straggler=1, tta=False):
    """a plan.Run, not colocated, with no scale-model or BytePS flags, in plan.Run's order of fields"""
    return plan.Run(label, topo, N, servers, server_hosts, 0, sync, straggler, tta)


def add(csv_path, label, topo, N, step, k=0, S=0, strag=1, sync="bsp", D=8, rep=1):
    """one run of the verdict's fixtures: exchange = step - 10 ms, 1024 samples a worker a step"""
    results.append_row(csv_path, COLS, dict(
        label=label, topology=topo, workers=N, dilation=D, servers=S, server_hosts=k, straggler=strag, sync=sync, step_ms=step,
        exchange_ms=step - 10, wait_ms=0, samples_per_s=N * 1024 / step * 1e3, params=200000, steps=10, bytes_sent_per_worker=1e6,
        bytes_recv_per_worker=1e6, bytes_per_server=4e6, sweep_id="demo", repeat=rep, command="%s %d %d %d %s %s" % (label, N, k, S, strag, sync),
        error=""))


def demo_fixture(out):
    """a fixture: ring scales (0.8 at N=8), PS with one server host flat, k server hosts beat the ring from k=3;
    its time-to-accuracy epochs. Its CSV's path."""
    csv_path = os.path.join(out, "demo.csv")
    for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5)):   # one worker on a real core (D = 1), as the demo runs it
        add(csv_path, "ring", "ring", N, t, D=1 if N == 1 else 8)
    for N, t in ((1, 14.0), (2, 26.0), (4, 50.0), (8, 98.0)):
        add(csv_path, "ps, 1 server host", "ps", N, t, k=1, S=1, D=1 if N == 1 else 8)
    add(csv_path, "ring", "ring", 1, 9.0)   # one worker on the scale model (D = 8): efficiency's reference, in no table
    for k, t in ((2, 26.0), (3, 11.5), (4, 11.0)):
        add(csv_path, "ps, k server hosts", "ps", 4, t, k=k, S=k)
    for N, t in ((4, 13.0), (8, 13.5)):   # in the winners' tables, not in the k-server sweep (its k = 1 holds x* only)
        add(csv_path, plan.BYTEPS, "ps", N, t, k=1, S=N + 1)
    add(csv_path, "ring", "ring", 4, 30.0, strag=0.5)
    add(csv_path, "ps, N colocated", "ps", 2, 11.4, S=2)   # within 5% of the ring at N=2: a tie, not a win
    add(csv_path, "step alone", "local", 1, 8.0, D=1)   # the same step on a full core: 128000 samples/s, in no table or label
    # time-to-accuracy runs (whole epochs, their own batch), the ring's and the PS's on 4 server
    # hosts (k = 4, bsp): in no throughput table (the PS's would win N = 4), nor the crossover (it
    # would end it: 60 ms at k = 4)
    for label, topo, S in (("ring", "ring", 0), (plan.TTA_PS, "ps", 4)):
        results.append_row(csv_path, COLS, dict(label=label, topology=topo, workers=4, dilation=8, servers=S, server_hosts=S, straggler=1,
                                                sync="bsp", step_ms=70.0, exchange_ms=60.0, wait_ms=0, samples_per_s=9e6, params=200000,
                                                steps=48, sweep_id="demo", repeat=1, command="train --batch 512 --epochs 2 --timing-skip 2",
                                                error=""))
    # their epochs, then each job's end: with the straggler BSP PS ends at 2.2 s, async at 1.2 (0.55
    # of it), SSP at 1.7 (0.77), medians of two repeats; async's epoch 3, in one repeat only, in none
    for label, sync, strag, last in (("ring", "bsp", 1, (1.0, 95.5)), (plan.TTA_PS, "bsp", 1, (1.6, 95.5)),
                                     (plan.TTA_PS, "bsp", 0.5, (2.0, 95.5)), (plan.TTA_PS, "async", 0.5, (1.0, 90.0)),
                                     (plan.TTA_PS, "ssp", 0.5, (1.5, 93.0))):
        for rep, d in ((1, 0.0), (2, 0.2)):
            pts = [(1, (last[0] / 2, last[1] - 3)), (2, (last[0] + d, last[1] + d)), ("end", (last[0] + 0.1 + d, last[1] + d))]
            if sync == "async" and rep == 1:
                pts.insert(2, (3, (last[0] + 0.05, 89.0)))
            for ep, (t, a) in pts:
                results.append_row(os.path.join(out, "demo.epochs.csv"), EP_COLS, dict(
                    sweep_id="demo", repeat=rep, command="x", label=label, workers=4, sync=sync, straggler=strag, epoch=ep, elapsed_s=t,
                    test_accuracy=a, loss=1))
    return csv_path
