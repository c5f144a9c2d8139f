"""best.py: psring demo --best, "best against best": the regime chosen with the cost model before
any run, and the prediction written from it. Each design at its best: the ring with --overlap, and
the PS as BytePS places it (a summation server beside every worker plus k on hosts of their own,
--ps-mode sum, with and without --overlap), beside ps-lite's one server host; all workers on
emulated GPU hosts (docs/cluster.md, host kinds). Candidates are MLPs 784-W-W-W-10, whose first
layer is not nearly all of the parameters, at a per-worker batch that keeps one worker's compute
per step near the main demo's; the model (costmodel.ring_time, ps_time) predicts every design's
exchange at N = 2, 4, 8 under the scenario's calibration, and a scenario's wall time. Runs nothing."""
import collections
import csv
import os

from .. import costmodel as cm
from .. import results
from .plan import Run, run_dilation
from .settings import PS_CHUNK_KB

Ns = (2, 4, 8)
WIDTHS = (512, 768, 1024, 1536, 2048)   # W of 784-W-W-W-10: 0.93M .. 10M parameters
# One worker's compute per step estimated from its FLOPs (6 a parameter a sample: forward 2,
# backward 4) at this rate: psring train --topology local on one core of the 2-core machine,
# 784-W-W-W-10 at batch 64 and 128 (W 1024, 2048), measured 62-99 GFLOP/s, about 80 the middle
# (docs/results/demo-best-2026-11-29/README.md)
FLOP_RATE = 80e9
# and the optimizer's pass over every parameter (momentum SGD), 0.45-2.2 ns a parameter in the
# same runs, about 1.3 the middle: a step's compute beside the FLOPs (not in the batch's choice)
OPT_S_PER_PARAM = 1.3e-9
COMPUTE_S = 0.025   # the main demo's step alone is 25-28 ms on one core
TARGET = 0.15       # BytePS k=2's exchange this far under the ring's at N = 8
BUDGET_S = 600      # the scenario's wall time with set-up, on the 2-core machine
STEPS = 8           # steps a run: settings.WARM untimed, then 6 timed
# The wall-time estimate's costs, measured here (docs/results/demo-best-2026-11-29/README.md):
# cluster up of 10 hosts 5 s, down 1.3 s; psring model --calibrate 25-32 s; a run's start-up and
# shutdown beyond its trainer's wall 7.5 s (ring) to 15 s (PS) at 5.9M parameters; and the steps
# on emulated GPU hosts took 1.2x (ps-lite) to 2.1x (BytePS) the model's at N = 2: SLOWDOWN
CLUSTER_S, CALIBRATE_S, START_S, REPORT_S, SLOWDOWN = 7.0, 35.0, 12.0, 10.0, 2.0
TEST = 500          # test images scored at a run's end (host share, dilated)

# a design of the scenario: its label, topology, k (BytePS' spare server hosts; 0 for the ring,
# None for ps-lite's one server host), --overlap
Design = collections.namedtuple("Design", "label topology k overlap")
DESIGNS = (Design("ring, overlap", "ring", 0, True), Design("ps-lite, 1 server host", "ps", None, False),
           Design("BytePS k=1", "ps", 1, False), Design("BytePS k=1, overlap", "ps", 1, True),
           Design("BytePS k=2", "ps", 2, False), Design("BytePS k=2, overlap", "ps", 2, True))


def layers(W):
    return "784,%d,%d,%d,10" % (W, W, W)


def params(spec):
    """Parameters of an MLP 'a,b,c,...': weights and biases of each layer."""
    d = [int(x) for x in spec.split(",")]
    return sum(a * b + b for a, b in zip(d, d[1:]))


def batch_for(P):
    """The per-worker batch whose compute is about COMPUTE_S at FLOP_RATE (a multiple of 8)."""
    return max(8, int(round(COMPUTE_S * FLOP_RATE / (6 * P) / 8)) * 8)


def runs_at(d, N):
    """Whether design d runs at N: BytePS' k spare servers need k < N (x* = 2k(N-1)/(N^2+kN-2k) is
    1 from k = N on, and the servers beside the workers would hold nothing: the trainer refuses it)."""
    return d.topology != "ps" or d.k is None or d.k < N


def hosts_of(d, N):
    """Hosts a design takes at N workers: a spare server host is a host."""
    return N + (1 if d.k is None else d.k) if d.topology == "ps" else N


def exchange_s(d, N, n, cal):
    """The model's seconds of one exchange of n bytes (fp16 gradient) among N workers."""
    a, b, g = cal["alpha_s"], cal["beta_s_per_byte"], cal["gamma_s_per_byte"]
    sl = cm.slice_bytes(PS_CHUNK_KB, 2)
    if d.topology == "ring":
        return cm.ring_time(N, n, a, b, g)
    if d.k is None:   # ps-lite: one server host holds everything
        return cm.ps_time(N, n, a, b, g, S=1, k=1, x=1.0, slice_bytes=sl)
    return cm.ps_time(N, n, a, b, g, S=N + d.k, k=d.k, x=cm.byteps_x(N, d.k), slice_bytes=sl)


def exposed_s(d, ex, compute, spec):
    """What backward leaves of an exchange: all of it without --overlap; with it, the trainer's
    buckets of the layers spec (cm.release), each sent once backward has made it."""
    return cm.exposed(ex, cm.BACKWARD_SHARE * compute, cm.release(spec, d.topology)) if d.overlap else ex


def dilation(d, N, Dmax=16, rate="1gbit"):
    """The run's dilation: its CPU shares, two per GPU host (the workers' hosts; ps-lite's server
    host too, its cluster being all GPU hosts), within 1.25 cores (plan.run_dilation)."""
    run = Run(d.label, d.topology, N, 0, hosts_of(d, N) - N, 0, "bsp", 1.0, False)
    return run_dilation(run, Dmax, rate, gpu_hosts=N + 1 if d.k is None and d.topology == "ps" else N)


def predict(W, cal):
    """{(design label, N): point} for candidate W: exchange, exposed, step (s), samples/s, hosts,
    and the run's estimated wall time (s) on the emulated hosts."""
    spec = layers(W)
    P = params(spec)
    B = batch_for(P)
    n, c = 2.0 * P, 6.0 * P * B / FLOP_RATE + OPT_S_PER_PARAM * P
    out = {}
    for N in Ns:
        for d in (d for d in DESIGNS if runs_at(d, N)):
            ex = exchange_s(d, N, n, cal)
            ed = exposed_s(d, ex, c, spec)
            D = dilation(d, N)
            # start-up, the fp32 parameters' first sync (twice the fp16 exchange's bytes), the steps, the test images
            wall = START_S + D * (SLOWDOWN * (2 * ex + STEPS * (c + ed)) + 2.0 * P * TEST / FLOP_RATE)
            out[(d.label, N)] = dict(exchange=ex, exposed=ed, step=c + ed, sps=N * B / (c + ed), hosts=hosts_of(d, N),
                                     dilation=D, wall=wall)
    return dict(W=W, layers=spec, params=P, batch=B, n=n, compute=c, points=out)


def margin(p, N=8):
    """1 - BytePS k=2's exchange / the ring's at N."""
    return 1 - p["points"][("BytePS k=2", N)]["exchange"] / p["points"][("ring, overlap", N)]["exchange"]


def scenario_wall(p):
    """Estimated seconds of the whole scenario: calibration, two clusters a worker count
    (cluster_plan), the step alone, every run, the report."""
    return CALIBRATE_S + 2 * len(Ns) * CLUSTER_S + START_S + STEPS * p["compute"] + REPORT_S + \
        sum(v["wall"] for v in p["points"].values())


def choose_regime(cal, widths=WIDTHS, budget=BUDGET_S, target=TARGET):
    """The candidate (predict's dict, with margin, wall and reached) the scenario runs: the
    cheapest (by estimated wall time) whose predicted margin at N = 8 is at least target within
    budget; where none is, the best margin within budget, reached False. None: none fits."""
    cands = []
    for W in widths:
        p = predict(W, cal)
        p.update(margin=margin(p), wall=scenario_wall(p))
        cands.append(p)
    fits = [p for p in cands if p["wall"] <= budget]
    if not fits:
        return None, cands
    hit = [p for p in fits if p["margin"] >= target]
    best = min(hit, key=lambda p: p["wall"]) if hit else max(fits, key=lambda p: p["margin"])
    best.update(reached=bool(hit), target=target)
    return best, cands


def winner(p, N):
    """(label, its samples/s, the runner-up's label, its margin over it) predicted at N."""
    at = sorted(((v["sps"], lab) for (lab, n), v in p["points"].items() if n == N), reverse=True)
    return at[0][1], at[0][0], at[1][1], at[0][0] / at[1][0] - 1


def bound(N=8, k=2):
    """The bytes-only bound of BytePS k's margin over the ring: 1 - (its busiest link's bytes / the ring's)."""
    return 1 - cm.ps_bytes(N, 1.0, k=k, x=cm.byteps_x(N, k)) / (2 * (N - 1) / N)


def prediction_lines(best, cands, cal):
    """The prediction, in words (best/prediction.txt): the regime, why, every design's exchange
    and the winner at each N, the margin, and whether the target is within reach."""
    ms = lambda s: "%.2f" % (1e3 * s)   # noqa: E731
    L = ["Prediction, written before the first run (cost model: alpha %.2f us, beta %.3g s/B, gamma %.3g s/B; fp16; %d KiB wire slices)"
         % (cal["alpha_s"] * 1e6, cal["beta_s_per_byte"], cal["gamma_s_per_byte"], PS_CHUNK_KB // 2),
         "Candidates (784-W-W-W-10, batch for ~%d ms of compute at %.0f GFLOP/s, plus the optimizer's pass; margin: 1 - BytePS k=2 / ring exchange at N=8;"
         " wall: the scenario's estimate):" % (COMPUTE_S * 1e3, FLOP_RATE / 1e9)]
    for p in cands:
        L.append("  W=%-5d %5.2fM params, batch %4d, compute %5.1f ms, ring exchange N=8 %7s ms, margin %5.1f%%, wall %4.0f s%s"
                 % (p["W"], p["params"] / 1e6, p["batch"], 1e3 * p["compute"], ms(p["points"][("ring, overlap", 8)]["exchange"]),
                    100 * p["margin"], p["wall"], "" if p["wall"] <= BUDGET_S else " (over the %d s budget)" % BUDGET_S))
    if best is None:
        return L + ["No candidate fits the %d s budget." % BUDGET_S]
    L.append("Chosen: MLP %s, batch %d per worker (n = %.1f MB fp16), estimated wall %.0f s: %s"
             % (best["layers"], best["batch"], best["n"] / 1e6, best["wall"],
                "the cheapest with a margin >= %g%%" % (best["target"] * 100) if best["reached"] else "the best margin within the budget"))
    if not best["reached"]:
        L.append("The model says the %g%% target is out of reach within the budget: bytes alone bound the margin at %.1f%%"
                 " (busiest link 1.1875x under the ring's at N=8, k=2), and the per-message (2N alpha) and pipeline-fill"
                 " (N slices) terms take %.1f points off at this gradient; a bigger one costs more than %d s (the ring's"
                 " exchange grows with n, ps-lite's N times faster, each x D = 16 at N = 8)."
                 % (best["target"] * 100, 100 * bound(), 100 * (bound() - best["margin"]), BUDGET_S))
    for N in Ns:
        parts = ", ".join("%s %s (exposed %s)" % (d.label, ms(best["points"][(d.label, N)]["exchange"]),
                                                  ms(best["points"][(d.label, N)]["exposed"])) for d in DESIGNS if runs_at(d, N))
        w, sps, ru, m = winner(best, N)
        L.append("  N=%d exchange ms: %s; winner %s, %.0f samples/s, %.1f%% over %s" % (N, parts, w, sps, 100 * m, ru))
    L.append("  margin at N=8: BytePS k=2 exchanges %.1f%% under the ring (target %g%%, bytes-only bound %.1f%%)"
             % (100 * best["margin"], best["target"] * 100, 100 * bound()))
    return L


PRED_COLUMNS = ["layers", "batch_per_worker", "params", "label", "workers", "hosts", "dilation", "model_exchange_ms",
                "model_exposed_ms", "model_step_ms", "model_samples_per_s", "margin_k2_n8_pct", "target_reached"]


def write_prediction(folder, best, cands, cal):
    """folder/prediction.txt and prediction.csv (one row per design and N of the chosen regime)."""
    lines = prediction_lines(best, cands, cal)
    with open(os.path.join(folder, "prediction.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if best is not None:
        with open(os.path.join(folder, "prediction.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(PRED_COLUMNS)
            for (lab, N), v in sorted(best["points"].items(), key=lambda x: (x[0][1], x[0][0])):
                w.writerow([best["layers"], best["batch"], best["params"], lab, N, v["hosts"], v["dilation"],
                            "%.3f" % (1e3 * v["exchange"]), "%.3f" % (1e3 * v["exposed"]), "%.3f" % (1e3 * v["step"]),
                            "%.1f" % v["sps"], "%.2f" % (100 * best["margin"]), int(best["reached"])])
    return lines


def read_prediction(folder):
    """{(label, N): row} of folder/prediction.csv, {} where there is none."""
    return {(r["label"], int(r["workers"])): r for r in results.read_rows(os.path.join(folder, "prediction.csv"))}


