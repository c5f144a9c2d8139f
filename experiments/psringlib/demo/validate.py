"""validate.py: psring demo --validate, the scale model's checks side by side: a dilated host's
compute vs the same step alone, the ring's exchange vs the allreduce micro-benchmark, D vs 2D,
and D = 1 on pinned cores vs D."""
import csv
import os
import subprocess
import tempfile

from .. import results
from . import bad, hosts, say
from .hosts import emulation_possible
from .plan import PSRING, TEST, TRAIN, alone_command, step_args
from .runs import mnist, subset_mnist, train_row
from .settings import RING_CHUNK_KB


def validate(o):
    """The scale model's checks, side by side in one run: (a) compute, (b) exchange, (c) D vs 2D,
    (d) D=1 on pinned cores vs D (the demo mixes the two)."""
    out, D = o["out"], o["dilation"]   # 4 hosts at 8: 1.25 cores at most, links of 125 Mbit/s
    why = emulation_possible()
    if why:
        bad("--validate needs emulated hosts: %s" % why, 1)
    data = os.path.join(out, "mnist-subset")
    subset_mnist(mnist(), data, TRAIN, TEST)
    base = step_args(data, 2 * o["steps"])
    res = []
    try:
        hosts.cluster("up", 4, "--rate", o["rate"], "--dilation", D)
        say("(a) compute per step: one worker on a host at 1/%d core vs the same process alone" % D)
        alone = train_row(alone_command(data, 2 * o["steps"]), 1)
        host = train_row([PSRING, "train", "--cluster", "-np", "1", "--topology", "ring"] + base, D)
        comp = lambda r: float(r["step_ms"]) - float(r["exchange_ms"])
        res.append(("a", "compute ms per step, dilated host / alone", comp(host), comp(alone)))
        say("(b) the ring's exchange in training (4 hosts) vs the allreduce micro-benchmark")
        ring = train_row([PSRING, "train", "--cluster", "-np", "4", "--topology", "ring", "--chunk-kb", str(RING_CHUNK_KB)] + base, D)
        # the benchmark reduces floats: as many bytes as the trainer's fp16 gradient, in chunks as big on the wire
        nbytes = int(float(ring["params"]) * 4)
        with tempfile.TemporaryDirectory() as t:
            subprocess.run([PSRING, "bench", "allreduce", "--cluster", "-np", "4", "-b", str(nbytes // 2), "-e", str(nbytes // 2),
                            "--iters", "20", "-w", "2", "--impl", "ring", "--chunk-kb", str(RING_CHUNK_KB // 2), "--csv", os.path.join(t, "b.csv")], capture_output=True, check=True)
            bench = next(r for r in results.read_rows(os.path.join(t, "b.csv")) if r["impl"] == "ring")
        res.append(("b", "ring exchange ms per step, training / micro-benchmark",
                    float(ring["exchange_ms"]) - float(ring["wait_ms"]), float(bench["time_us"]) / 1e3 / D))
        say("(c) the same ring run (2 hosts) at D=%d and D=%d" % (D, 2 * D))
        two = [PSRING, "train", "--cluster", "-np", "2", "--topology", "ring", "--chunk-kb", str(RING_CHUNK_KB)] + base
        at_d = train_row(two, D)
        hosts.cluster("dilate", 2 * D)
        at_2d = train_row(two, 2 * D)
        res.append(("c", "step ms, D=%d / D=%d" % (2 * D, D), float(at_2d["step_ms"]), float(at_d["step_ms"])))
        if len(os.sched_getaffinity(0)) >= 2:   # with one CPU the demo runs no 2-worker run at D=1
            say("(d) the same ring run at D=1 (a core each, pinned, real links), as the demo runs N=2")
            hosts.cluster("dilate", 1)
            at_1 = train_row(two, 1)
            res.append(("d", "step ms, D=1 / D=%d" % D, float(at_1["step_ms"]), float(at_d["step_ms"])))
    except (RuntimeError, subprocess.CalledProcessError, StopIteration, results.CsvError) as e:
        bad("--validate: %s" % e, 1)
    finally:
        hosts.cluster("down", check=False)
    with open(os.path.join(out, "validation.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["check", "what", "measured", "reference", "ratio"])
        for c, what, a, b in res:
            w.writerow([c, what, "%.3f" % a, "%.3f" % b, "%.3f" % (a / b)])
    ok = True
    for c, what, a, b in res:
        good = abs(a / b - 1) <= 0.10
        ok &= good
        print("  (%s) %-52s %8.3f / %8.3f = %.3f  %s" % (c, what, a, b, a / b, "within 10%" if good else "OFF by more than 10%"))
    return 0 if ok else 1
