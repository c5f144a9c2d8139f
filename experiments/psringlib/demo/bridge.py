"""bridge.py: what the scale model says about a real cluster. The demo's step moves n bytes a
worker over its links of L bits/s beside c seconds of compute; a real workload with n' bytes and
c' seconds a step spends the same share of its step moving bytes at L' = L (n' / n) (c / c'),
whatever the topology (every design's bytes scale with n). For each workload of the published
points (data/published-*.csv: its model, GPU, parameters, bytes a parameter, batch and one GPU's
rate) the link rate at which it shares the demo's ratio, and what differs there: a server's sum
against its link (gamma / beta) and a message against a gradient's bytes (alpha / (n beta))."""
import os

from .. import costmodel as cm
from .. import paths, results

FILES = ("published-scaling.csv", "published-horovod.csv")


def workloads(folder=None):
    """[(model, gpu, bytes a step, compute s a step)], one per model and GPU (its first row), in file order."""
    out, seen = [], set()
    for name in FILES:
        path = os.path.join(folder or paths.data_dir(), name)
        for r in results.read_rows(path, []) if os.path.exists(path) else []:   # [] takes the "#" lines
            key = (r["model"], r.get("gpu", ""))
            if key in seen or not r.get("gpu"):
                continue
            seen.add(key)
            out.append(key + (float(r["params"]) * float(r["bytes_per_param"]), float(r["batch_per_gpu"]) / float(r["single_gpu_rate"])))
    return out


def rates(n, c, link_bps, folder=None):
    """[(model, gpu, link bits/s)]: each workload's link rate at the demo's bytes-to-compute ratio."""
    return [x[:3] for x in at_ratio(workloads(folder), n, c, link_bps)]


def at_ratio(ws, n, c, link_bps):
    """[(model, gpu, link bits/s, its bytes a step)] of the workloads ws at the demo's ratio."""
    return [(m, g, link_bps * (nw / n) * (c / cw), nw) for m, g, nw, cw in ws]


def lines(n, c, cal, folder=None):
    """The summary's lines: the workloads at the demo's ratio, slowest link first; then, at the
    middle one's link, a server's sum (gamma_server) and a message (RDMA's alpha) against the
    bytes, beside the demo's own (its calibration)."""
    link = 8 / cal["beta_s_per_byte"]
    got = sorted(at_ratio(workloads(folder), n, c, link), key=lambda x: x[2])
    if not got:
        return []
    named = ", ".join("%s on %s at %.3g Gbit/s" % (m, g, L / 1e9) for m, g, L, _ in got)
    m, g, L, nw = got[len(got) // 2]
    beta = 8 / L
    return ["  A real cluster at this scale model's ratio of bytes to compute (%.2f MB a worker, %.1f ms of compute, %g Gbit/s"
            " links; every design's bytes scale with it): %s." % (n / 1e6, c * 1e3, link / 1e9, named),
            "    At %s on %s's link a server's sum takes %.2g of the bytes' time (here %.2g) and a message %.2g of a gradient's"
            " (here %.2g); for a cluster's own numbers: psring model --advise." % (
                m, g, cm.const("gamma_server") / (beta * 1e9), cal["gamma_s_per_byte"] / cal["beta_s_per_byte"],
                cm.const("alpha_rdma") * 1e-6 / (nw * beta), cal["alpha_s"] / (n * cal["beta_s_per_byte"]))]
