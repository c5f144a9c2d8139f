"""bestreport.py: psring demo --best's report from best/best.csv and the prediction: a table per N
(each design's exchange, exposed exchange, samples/s, hosts and samples/s per host), the winner
at each N with its margin over the runner-up and the hosts it costs, the measurement beside the
model (N = 4, 8), in best/summary.txt; and the figure of samples/s per host against N."""
import os
import sys

from .. import gnuplot, results, stats
from . import best, say
from .settings import PS_CHUNK_KB

WITHIN = 0.10   # the model's exchange within 10% of the measured one
COLORS = {"ring, overlap": "#2471a3", "ps-lite, 1 server host": "#c0392b", "BytePS k=1": "#7dcea0",
          "BytePS k=1, overlap": "#27ae60", "BytePS k=2": "#f0b27a", "BytePS k=2, overlap": "#d35400"}
QUESTION = "Which design gives the most samples/s per host, each at its best?"


def key(r):
    return (r["label"], int(r["workers"]))


def measured(r):
    return r.get("topology") != "local" and not r.get("error")


def tables(rows):
    """{(label, N): {exchange, exposed, sps, per_host: (median, min, max, n), hosts}} of the runs."""
    out = {}
    for name, f in (("exchange", stats.exchange_alone), ("exposed", lambda r: float(r["exposed_ms"]) if r.get("exposed_ms") else None),
                    ("sps", lambda r: float(r["samples_per_s"])),
                    ("per_host", lambda r: float(r["samples_per_s"]) / int(r["hosts_used"]))):
        for k, v in stats.aggregate(rows, f, key, measured).items():
            out.setdefault(k, {})[name] = v
    for r in rows:
        if measured(r) and key(r) in out:
            out[key(r)]["hosts"] = int(r["hosts_used"])
    return out


def winner(tab, N):
    """(label, samples/s, runner-up, margin over it, hosts) at N by median samples/s, or None."""
    at = sorted(((v["sps"][0], lab) for (lab, n), v in tab.items() if n == N and "sps" in v), reverse=True)
    if not at:
        return None
    ru = at[1] if len(at) > 1 else (None, None)
    return at[0][1], at[0][0], ru[1], at[0][0] / ru[0] - 1 if ru[0] else None, tab[(at[0][1], N)]["hosts"]


def model_check(pred, tab, lab, N):
    """(model ms, measured ms, within WITHIN?) of a design's exchange at N: the model's exchange
    beside the trainer's; with --overlap the trainer's exchange is what backward left, so the
    model's exposed part. None where either is missing."""
    p, m = pred.get((lab, N)), tab.get((lab, N), {}).get("exchange")
    if not p or not m:
        return None
    model = float(p["model_exposed_ms" if "overlap" in lab else "model_exchange_ms"])
    return model, m[0], abs(model / m[0] - 1) <= WITHIN if m[0] > 0 else False


def table_lines(tab, pred, N):
    fmt = "    %-24s %9s %9s %10s %6s %12s %22s"
    lines = ["  N=%d (ms per step; medians of the repeats)" % N,
             fmt % ("design", "exchange", "exposed", "samples/s", "hosts", "per host", "model (within 10%?)")]
    for d in best.DESIGNS:
        v = tab.get((d.label, N))
        if not v:
            continue
        mc = model_check(pred, tab, d.label, N) if N >= 4 else None
        ex = v.get("exposed")
        lines.append(fmt % (d.label, "%.2f" % v["exchange"][0], "%.2f" % ex[0] if ex else "-", "%.0f" % v["sps"][0], v["hosts"],
                            "%.0f" % v["per_host"][0], "%.2f %s" % (mc[0], "yes" if mc[2] else "no") if mc else "-"))
    w = winner(tab, N)
    if w:
        lab, sps, ru, m, h = w
        lines.append("    winner: %s, %.0f samples/s%s, on %d hosts%s" % (
            lab, sps, ", %.1f%% over %s" % (100 * m, ru) if ru else "", h,
            " (the runner-up takes %d)" % tab[(ru, N)]["hosts"] if ru else ""))
    return lines


def summary_lines(rows, pred, o):
    tab = tables(rows)
    regime = next(((r["layers"], r["batch_per_worker"]) for r in rows if measured(r)), ("?", "?"))
    Ns = sorted({n for _, n in tab})
    lines = ["Best against best (MLP %s, batch %s per worker, fp16, %d KiB PS slices; workers on GPU hosts, %s links;"
             " exposed = step - the step alone on a full core):" % (regime[0], regime[1], PS_CHUNK_KB, o["rate"])]
    failed = [r for r in rows if r.get("error")]
    if failed:
        lines.append("  %d run(s) failed and are left out: %s." % (len(failed), "; ".join(
            "%s N=%s: %s" % (r["label"], r["workers"], r["error"]) for r in failed)))
    for N in Ns:
        lines += table_lines(tab, pred, N)
    checks = [c for N in (4, 8) for d in best.DESIGNS if (c := model_check(pred, tab, d.label, N))]
    if checks:
        lines.append("  The model's exchange within 10%% of the measured at N = 4, 8: %d of %d" % (sum(c[2] for c in checks), len(checks)))
    k2, ring = tab.get(("BytePS k=2", 8), {}).get("exchange"), tab.get(("ring, overlap", 8), {}).get("exchange")
    if k2 and ring:
        pm = next((float(p["margin_k2_n8_pct"]) for p in pred.values()), None)
        m = 1 - k2[0] / ring[0]
        lines.append("  BytePS k=2's exchange at N=8: %.1f%% %s the ring's (predicted %s under; the ring's with --overlap is"
                     " what backward left of it)" % (100 * abs(m), "under" if m >= 0 else "over", "%.1f%%" % pm if pm is not None else "-"))
    return lines


def figure(folder, rows):
    """folder/best.png and .svg: samples/s per host used against N, a curve per design; the data in
    folder/best-data/perhost<i>.dat (N, median, min, max)."""
    tab = tables(rows)
    dat = os.path.join(folder, "best-data")
    os.makedirs(dat, exist_ok=True)
    Ns = sorted({n for _, n in tab})
    curves = []
    for i, d in enumerate(best.DESIGNS):
        pts = [(N,) + tab[(d.label, N)]["per_host"][:3] for N in Ns if (d.label, N) in tab]
        if pts:
            f = gnuplot.data_file(dat, "perhost%d.dat" % i, pts)
            curves.append(gnuplot.curve(d.label, COLORS[d.label], f, "1:2:3:4", "yerrorlines", dt=2 if "overlap" not in d.label and d.k else 1))
    if not curves:
        return
    regime = next(("MLP %s, batch %s/worker, fp16" % (r["layers"], r["batch_per_worker"]) for r in rows if measured(r)), "")
    body = gnuplot.lines_figure(QUESTION, "samples/s per host used (a spare server host is a host)", curves,
                                xtics=Ns, xrange=(min(Ns) - 0.5, max(Ns) + 0.5), key="top right",
                                subtitle=[regime + "; workers on GPU hosts", "median and min-max over the repeats"])
    try:
        gnuplot.draw(folder, dat, "best", body, size=(1000, 620))
        say("figure: %s (PNG and SVG)" % os.path.join(folder, "best.png"))
    except gnuplot.PlotError as e:
        print("psring demo: %s" % e, file=sys.stderr)


def report(folder, o):
    """best/summary.txt (printed) and the figure, from best/best.csv and best/prediction.csv."""
    path = os.path.join(folder, "best.csv")
    rows = results.read_rows(path) if os.path.exists(path) else []
    figure(folder, rows)
    text = "\n".join(summary_lines(rows, best.read_prediction(folder), o))
    print(text)
    with open(os.path.join(folder, "summary.txt"), "w") as f:
        f.write(text + "\n")
