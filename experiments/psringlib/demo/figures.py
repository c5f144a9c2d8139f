"""figures.py: the demo's figures, each titled with the question it answers (FIGURES), drawn by
psringlib.gnuplot from the demo's CSVs with the cost model's lines; the tables they and the verdict
read (load, the rows of each table, the k-server sweep, the time-to-accuracy curves)."""
import os
import statistics
import sys

from .. import costmodel as cm
from .. import gnuplot, results, stats
from . import say
from .plan import BATCH, BYTEPS, LAYERS, TTA_EVERY, TTA_N, TTA_OPTS, TTA_REGIME, TTA_SERVERS
from .settings import PS_CHUNK_KB


# each configuration's color in every figure (the demo's labels)
COLORS = {"ring": "#2471a3", "ps, 1 server host": "#c0392b", "ps, N/2 colocated": "#8e44ad",
          "ps, N colocated": "#d68910", "ps, k server hosts": "#27ae60", BYTEPS: "#117a65"}


def by_label_n(r):
    """The key of the demo's tables: its own label (ring, ps, 1 server host, ...) and N."""
    return (r["label"], r["_N"])


def load(csv_path):
    rows = results.read_rows(csv_path)
    for r in rows:
        r["_N"] = int(r.get("workers") or 0)
        r["_strag"] = float(r.get("straggler") or 1)
        r["_k"] = int(r.get("server_hosts") or 0)
        cmd = r.get("command") or ""   # a time-to-accuracy run: whole epochs, no timed steps
        r["_tta"] = "--epochs " in cmd and "--steps " not in cmd
    return rows


def k_sweep(rows):
    """The k-server sweep at N=4 and the ring at N=4 beside it, as exchange per step without the
    wait: what BytePS' formula predicts (compute, the same in both, only adds its noise to a
    step's time). ({k: (median, min, max, n)}, the ring's (median, min, max, n) or None)."""
    ks = stats.aggregate(rows, stats.exchange_alone, lambda r: r["_k"], k_sweep_row)
    ring = stats.aggregate(rows, stats.exchange_alone, lambda r: r["_N"], ring4_row)
    return ks, ring.get(4)


def k_sweep_row(r):
    return r["_N"] == 4 and r["_strag"] == 1 and r.get("topology") == "ps" and r["_k"] > 0 and r.get("sync") == "bsp" and not r["_tta"] \
        and r["label"] != BYTEPS   # its k = 1 spare host holds only x* of the gradient


def ring4_row(r):
    return r["_N"] == 4 and r["_strag"] == 1 and r.get("topology") == "ring" and not r["_tta"]


def base_rows(r):
    return (r["_strag"] == 1 and r.get("sync", "bsp") in ("bsp", "") and r["label"] != "ps, k server hosts" and not r["_tta"]
            and not stats.step_alone(r) and not scale_one(r))


def scale_one(r):
    """A row of one worker on the scale model (dilated, where other one-worker runs have a real core)."""
    return r["_N"] == 1 and float(r.get("dilation") or 1) > 1


def one_worker(rows, thr):
    """(samples/s, where) of one worker as efficiency divides by it: on the same scale model as the
    runs it is compared with (the median of its repeats) where the CSV has it, else the ring's N = 1."""
    scale = [float(r["samples_per_s"]) for r in rows if scale_one(r) and not r.get("error") and r.get("topology") == "ring"]
    if scale:
        return statistics.median(scale), "one worker on the same scale model"
    return thr.get(("ring", 1), (0,))[0], "the ring's one worker"


def dilations(rows):
    """'dilation 8', or 'dilation 2..8' where runs used several (as the figures state it)."""
    ds = sorted({int(float(r["dilation"])) for r in rows if not r.get("error") and r.get("dilation") and not stats.step_alone(r)})
    return "dilation %s" % ("%d..%d" % (ds[0], ds[-1]) if len(ds) > 1 else ds[0] if ds else "-")


# The demo's figures and the question each answers (psring demo --help lists them; each title is its question)
FIGURES = (("throughput", "How does throughput grow with workers?"),
           ("exchange", "What does the exchange cost, and what do bytes alone predict?"),
           ("breakdown", "Where does a step's time go at the largest N?"),
           ("servers", "How many server hosts does the PS need to beat the ring?"),
           ("accuracy", "How soon does each design reach accuracy, with and without a straggler?"),
           ("bytes", "How many bytes cross the busiest link per step?"))
QUESTION = dict(FIGURES)


def median_run(rows, key, where, median):
    """The successful row, where(r) and key(r) == KEY, whose step is nearest MEDIAN, the median of
    theirs (with an even count, the lower of the two nearest): a bar of its parts adds up to a step
    that was measured."""
    runs = [r for r in rows if not r.get("error") and where(r) and by_label_n(r) == key]
    return min(runs, key=lambda r: (abs(float(r["step_ms"]) - median), float(r["step_ms"]))) if runs else None


def busiest(lab, N, n):
    """(topology, its keywords, bytes each way on the busiest link per step) of configuration LAB
    at N (ring 2(N-1)/N n; PS, k server hosts max(n, N n / k); S shards colocated (N+S-2) n / S,
    at least n; BytePS with one spare host ps_bytes at x*); None where there is no such configuration."""
    if lab == "ring":
        return "ring", {}, 2 * (N - 1) / N * n
    if lab == "ps, 1 server host":
        return "ps", dict(k=1), cm.ps_bytes(N, n, k=1)
    if lab == BYTEPS:   # x* of the gradient on the spare host, the rest summed beside the workers
        x = cm.byteps_x(N, 1)
        return "ps", dict(k=1, x=x), cm.ps_bytes(N, n, k=1, x=x)
    S = N // 2 if "N/2" in lab else N
    if N < 2 or S < 1:
        return None
    return "ps", dict(S=S), cm.ps_bytes(N, n, S=S)


def model_lines(lab, N, n, cal, c1, samples):
    """(samples/s, exchange ms, bytes-only exchange ms) of configuration LAB at N: the cost model's,
    and the busiest link's bytes (busiest) at the calibrated link rate alone; None where the model
    has no point."""
    b = busiest(lab, N, n)
    if not b:
        return None
    topo, kw, nbytes = b
    s, e, _ = cm.step_time(topo, N, n, cal, c1, samples=samples, **kw)
    return N * BATCH / s, e * 1e3, nbytes * cal["beta_s_per_byte"] * 1e3


def payload_figure(rows, drawn, labels, Ns, n, write, key_only, regime, xs):
    """bytes where no link was measured (the loopback sweep): what the trainer counts, a process's
    payload sent + received (a colocated worker's pushes to and pulls from its own host's shard
    included); the per-link formulas beside it only where a process is alone on its host, so that
    its payload is its link's in + out"""
    wb = stats.aggregate(rows, lambda r: (float(r["bytes_sent_per_worker"]) + float(r["bytes_recv_per_worker"])) / max(float(r["steps"]), 1) / 1e6,
                         by_label_n, base_rows)
    sb = stats.aggregate(rows, lambda r: float(r["bytes_per_server"]) / max(float(r["steps"]), 1) / 1e6, by_label_n,
                         lambda r: base_rows(r) and r.get("topology") == "ps")
    each_way = {"ring": lambda N: [busiest("ring", N, n)[2]],   # worker's link, and the server's
                "ps, 1 server host": lambda N: [n, busiest("ps, 1 server host", N, n)[2]]}
    pl = [key_only("dotted: 2 x the link's bytes each way (process alone on its host)", dt=3)] if n else []
    for i, lab in enumerate(drawn):
        at = [N for N in Ns if (lab, N) in wb]
        p = write("wb%d.dat" % labels.index(lab), [(N,) + wb[(lab, N)][:3] for N in at])
        pl.append(gnuplot.curve(lab + ": worker", COLORS[lab], p, "1:2:3:4", "yerrorlines"))
        if any((lab, N) in sb for N in Ns):
            p = write("sb%d.dat" % labels.index(lab), [(N,) + sb[(lab, N)][:3] for N in Ns if (lab, N) in sb])
            pl.append(gnuplot.curve(lab + ": busiest server", COLORS[lab], p, "1:2:3:4", "yerrorlines", dt=2, pt=5))
        if lab in each_way and n:
            p = write("link%d.dat" % labels.index(lab), [(N,) + tuple(2 * b / 1e6 for b in each_way[lab](N)) for N in at])
            for col in range(len(each_way[lab](1))):
                pl.append(gnuplot.curve("", COLORS[lab], p, "1:%d" % (col + 2), dt=3, lw=1.5))
    top = max([v[2] for v in wb.values()] + [v[2] for v in sb.values()] + [0])   # room above the curves for the key
    return gnuplot.lines_figure("How many bytes does each process move per step?", "payload per process, sent + received (MB per step)",
                             pl, yrange="[0:%g]" % (1.7 * top) if top else "[0:*]",
                             subtitle=[regime, "a colocated process's payload includes its own host's shard (loopback):"
                                       " no link formula there"], **xs)


def links_figure(rows, drawn, labels, Ns, n, write, key_only, regime, xs):
    """bytes on emulated hosts: what crossed the busiest host's link per step in its busier
    direction (link_busiest_bytes: the veths' counters over the steps, TCP/IP headers included),
    each design's points beside its formula (busiest: ring 2(N-1)/N n, one server N n, S colocated
    (N+S-2) n / S, k server hosts max(n, N n / k)), a dashed line the points do not cover. Only the
    N whose links were counted; at each the designs a little apart, as the ring and N colocated
    shards send the same bytes; the k-server sweep at N = 4, a point for each k."""
    link = lambda r: float(r["link_busiest_bytes"]) / 1e6   # noqa: E731
    lb = stats.aggregate(rows, link, by_label_n, lambda r: base_rows(r) and bool(r.get("link_busiest_bytes")))
    ks = stats.aggregate(rows, link, lambda r: r["_k"], lambda r: k_sweep_row(r) and r["_k"] > 1 and bool(r.get("link_busiest_bytes")))
    series = [(lab, [(N, lb[(lab, N)], busiest(lab, N, n)) for N in Ns if (lab, N) in lb]) for lab in drawn]
    series = [x for x in series if x[1]]
    if ks:   # N = 4, one point a k: its formula max(n, N n / k)
        series.insert(0, ("ps, k server hosts", [(4, ks[k], ("ps", dict(k=k), cm.ps_bytes(4, n, k=k)), k) for k in sorted(ks)]))
    at = sorted({p[0] for _, pts in series for p in pts})
    slots = [(lab, p) for lab, pts in series for p in pts]
    pl = [key_only("dashed: the formula's bytes on the busiest link, each way", dt=2)] if n else []
    for lab, pts in series:
        i = labels.index(lab) if lab in labels else "k"   # lb0.dat: the first label's; lbk.dat: the k sweep's
        xy = []
        for p in pts:   # apart at its N: the j-th of the m points there
            there = [q for q in slots if q[1][0] == p[0]]
            j = there.index((lab, p))
            xy.append((p[0],) + p[1][:3] + (p[0] + 0.25 * (j - (len(there) - 1) / 2),) + ((p[3],) if len(p) > 3 else ()))
        title = lab + (" (N = 4; k = %s)" % ", ".join(str(p[3]) for p in pts) if lab == "ps, k server hosts" else "")
        pl.append(gnuplot.curve(title, COLORS[lab], write("lb%s.dat" % i, [x[:5] for x in xy]), "5:2:3:4", "yerrorbars"))
        form = [(x[0], p[2][2] / 1e6, x[4]) for x, p in zip(xy, pts) if n and p[2] and x[0] > 1]
        if form:
            pl.append(gnuplot.curve("", COLORS[lab], write("lf%s.dat" % i, form), "3:2", dt=2, lw=2))
        if lab == "ps, k server hosts":
            pl.append(gnuplot.curve("", COLORS[lab], write("lk.dat", [(x[4], x[1], "k=%d" % x[5]) for x in xy]), "1:2:3", "labels"))
    top = max([v[2] for v in lb.values()] + [v[2] for v in ks.values()] + [0])
    return gnuplot.lines_figure(QUESTION["bytes"], "busiest link, busier direction (MB per step)", pl,
                             yrange="[0:%g]" % (1.5 * top) if top else "[0:*]", xtics=at, xrange=(min(at) - 1.5, max(at) + 1.5) if at else None,
                             xlabel=xs["xlabel"], subtitle=[regime, "measured at the hosts' links over the training steps, TCP/IP"
                                                            " headers included; at each N the designs side by side"])


def figures(out, csv_path, ep_path, cal_path, o):
    """The demo's figures (experiments/plot draws them) from its CSVs and the calibration: the
    data they draw in DIR/demo-data. Each title is the figure's question (FIGURES), the regime
    under it; medians with min-max over the repeats; model lines only at the N measured."""
    rows = load(csv_path)
    cal = None
    if os.path.exists(cal_path):
        try:
            cal = cm.calibration_load(cal_path)
            cal["slice_bytes"] = cm.slice_bytes(PS_CHUNK_KB, 2)   # fp16 on the wire, as n below
        except ValueError as e:
            print("psring demo: %s: the figures have no model lines" % e, file=sys.stderr)
    dat = os.path.join(out, "demo-data")
    os.makedirs(dat, exist_ok=True)
    regime = "MLP %s, batch %d/worker, fp16; 1-core hosts, %s links, %s" % (LAYERS, BATCH, o["rate"], dilations(rows))
    thr = stats.aggregate(rows, lambda r: float(r["samples_per_s"]), by_label_n, base_rows)
    exch = stats.aggregate(rows, stats.exchange_alone, by_label_n, base_rows)
    dil = stats.aggregate(rows, lambda r: float(r.get("dilation") or 0), by_label_n, base_rows)
    params = next((float(r["params"]) for r in rows if not r.get("error") and r.get("params")), 0)
    n = params * 2
    c1, samples = stats.one_worker_compute(rows, lambda r: 0).get(0, (0, []))   # as psring model --compare takes it
    labels = [l for l in COLORS if any(k[0] == l for k in thr) and l != "ps, k server hosts"]
    drawn = [l for l in labels if l != "ring"] + [l for l in labels if l == "ring"]   # the ring last: on top
    write = lambda name, pts: gnuplot.data_file(dat, name, pts)   # noqa: E731
    files = {}
    Ns = sorted({k[1] for k in thr})
    key_only = lambda title, **kw: gnuplot.curve(title, "#000000", expr="NaN", **kw)   # noqa: E731  a key entry alone
    for i, lab in enumerate(labels):
        at = [N for N in Ns if (lab, N) in thr]
        files[("thr", lab)] = write("thr%d.dat" % i, [(N,) + thr[(lab, N)][:3] for N in at])
        for kind, real in (("real", True), ("dil", False)):   # the points on real cores (D = 1) and the dilated ones
            pts = [(N,) + thr[(lab, N)][:3] for N in at if (dil[(lab, N)][2] <= 1) == real]
            if pts:
                files[(kind, lab)] = write("thr%d_%s.dat" % (i, kind), pts)
        files[("ex", lab)] = write("ex%d.dat" % i, [(N,) + exch[(lab, N)][:3] for N in Ns if (lab, N) in exch])
        if cal and c1:   # only at the N measured: no line through N that nothing ran at
            pts = [(N,) + m for N in at if (m := model_lines(lab, N, n, cal, c1, samples))]
            files[("mod", lab)] = write("mod%d.dat" % i, [p[:3] for p in pts])
            files[("bw", lab)] = write("bw%d.dat" % i, [(p[0], p[3]) for p in pts])
    figs = {}
    xs = dict(xtics=Ns, xrange=(0.5, max(Ns) + 0.5), xlabel="workers N (one host each)")

    # throughput: the ring's efficiency written at its points, over one worker on the same scale model
    one, where = one_worker(rows, thr)
    pl = [gnuplot.curve("ideal (linear): N x %s" % where, "#555555", expr="x * %g" % one, dt=3),
          key_only("filled: ran on real cores (D = 1)", style="points", pt=7),
          key_only("open: time-dilated (D > 1)", style="points", pt=6)]
    if any(("mod", lab) in files for lab in labels):
        pl.append(key_only("dashed: cost model", dt=2, lw=1.5))
    for lab in drawn:
        title = lab + ("; numbers: efficiency, its samples/s over the dotted line" if lab == "ring" and one else "")
        pl.append(gnuplot.curve(title, COLORS[lab], files[("thr", lab)], "1:2"))
        for kind, pt in (("real", 7), ("dil", 6)):
            if (kind, lab) in files:
                pl.append(gnuplot.curve("", COLORS[lab], files[(kind, lab)], "1:2:3:4", "yerrorbars", pt=pt))
        if ("mod", lab) in files:
            pl.append(gnuplot.curve("", COLORS[lab], files[("mod", lab)], "1:2", dt=2, lw=1.5))
    if one:
        files["eff"] = write("eff.dat", [(N, thr[("ring", N)][0], "%.2f" % (thr[("ring", N)][0] / (N * one)))
                                         for N in Ns if N > 1 and ("ring", N) in thr])
        pl.append(gnuplot.curve("", COLORS["ring"], files["eff"], "1:2:3", "labels"))
    figs["throughput"] = gnuplot.lines_figure(QUESTION["throughput"], "throughput (samples/s, all workers)", pl,
                                           subtitle=[regime, "median and min-max over the repeats"], **xs)

    # exchange: measured, the model and bytes alone, each at the N measured
    pl = []
    if any(("mod", lab) in files for lab in labels):
        pl += [key_only("dashed: cost model (alpha, beta, gamma)", dt=2),
               key_only("dotted: bytes alone (busiest link's bytes / link rate)", dt=3)]
    for lab in drawn:
        pl.append(gnuplot.curve(lab, COLORS[lab], files[("ex", lab)], "1:2:3:4", "yerrorbars"))
        if ("mod", lab) in files:
            pl.append(gnuplot.curve("", COLORS[lab], files[("mod", lab)], "1:3", dt=2))
            pl.append(gnuplot.curve("", COLORS[lab], files[("bw", lab)], "1:2", dt=3, lw=1.5))
    figs["exchange"] = gnuplot.lines_figure(QUESTION["exchange"], "exchange per step, without the wait (ms)", pl,
                                         subtitle=[regime, "bytes alone: ring 2(N-1)/N n, PS max(n, N n/k), S colocated shards"
                                                   " (N+S-2) n/S; n: the fp16 gradient"], **xs)

    # breakdown at the largest N: the run with the median step, its compute, exchange and wait add up to it
    Nb = max(Ns)
    step = stats.aggregate(rows, "step_ms", by_label_n, base_rows)
    bars = []
    for lab in labels:
        r = median_run(rows, (lab, Nb), base_rows, step[(lab, Nb)][0]) if (lab, Nb) in step else None
        if r:
            s, ex, w = float(r["step_ms"]), float(r["exchange_ms"]), float(r.get("wait_ms") or 0)
            bars.append((lab, s - ex, ex - w, w, s) + step[(lab, Nb)][1:3])
    files["bars"] = write("bars.dat", bars)   # label, compute, exchange, wait, step, step min, step max
    figs["breakdown"] = gnuplot.bars_figure(QUESTION["breakdown"].replace("the largest N", "N = %d" % Nb), "ms per step", files["bars"],
                                         [("compute (data, fwd, bwd, optimizer)", "#2471a3"), ("exchange", "#c0392b"),
                                          ("wait for the slowest", "#f5b7b1")],
                                         subtitle=[regime, "each bar: the repeat with the median step"],
                                         total=("step: min-max over the repeats", 5), key="top right")

    # k-server sweep at N=4: the hosts each configuration takes in its tic label
    ks, ring4 = k_sweep(rows)
    if ks and cal:
        # k, measured (median, min, max), the model, BytePS' mixed placement's bytes alone, these servers' bytes alone
        b = 1e3 * cal["beta_s_per_byte"]
        kpts = [(k,) + ks[k][:3] + (1e3 * cm.exchange_time("ps", 4, n, cal, k=k), 1e3 * cm.byteps_optimum(4, k, n, 1 / cal["beta_s_per_byte"]),
                                    cm.ps_bytes(4, n, k=k) * b) for k in sorted(ks)]
        files["k"] = write("k.dat", kpts)
        pl = [gnuplot.curve("PS, k servers on their own hosts (non-colocated): measured", "#27ae60", files["k"], "1:2:3:4", "yerrorbars"),
              gnuplot.curve("cost model (all of the gradient on the servers)", "#27ae60", files["k"], "1:5", dt=2),
              gnuplot.curve("bytes alone, these servers: max(n, N n/k)/B; below the ring's from k > N^2/(2(N-1)) = 2.67",
                            "#27ae60", files["k"], "1:7", dt=3, lw=1.5),
              gnuplot.curve("bytes alone, the ring: 2(N-1)/N n/B", COLORS["ring"], expr="%g" % (busiest("ring", 4, n)[2] * b), dt=3, lw=1.5),
              gnuplot.curve("bytes alone, BytePS' placement (servers beside the workers too): 2N(N-1)n/((N^2+kN-2k)B)", "#1e8449",
                            files["k"], "1:6", dt=4)]
        if ring4:
            pl.append(gnuplot.curve("ring, N = 4 (4 hosts): measured median", COLORS["ring"], expr="%g" % ring4[0]))
        figs["servers"] = gnuplot.lines_figure(
            QUESTION["servers"], "exchange per step, without the wait (ms)", pl, xlabel="server hosts k, beside the 4 worker hosts",
            xtics=[("k=%d (%d hosts)" % (k, 4 + k), k) for k in sorted(ks)], xrange=(0.5, max(ks) + 0.5), key="top right",
            yrange="[0:%g]" % (1.8 * max(max(p[3], p[4]) for p in kpts)),   # room above the points for the key
            subtitle=[regime, "N = 4 workers; median and min-max over the repeats"])
    # time to accuracy, with and without the straggler
    curves = tta_curves(ep_path)
    if curves:
        pl = []
        for i, (name, pts) in enumerate(sorted(curves.items())):
            p = write("tta%d.dat" % i, pts)   # measured points only: the first a copy before any step
            sync = next((s for s in ("async", "ssp") if s in name), "bsp")
            col = {"async": "#e67e22", "ssp": "#8e44ad"}.get(sync) or COLORS["ring" if name.startswith("ring") else "ps, k server hosts"]
            pl.append(gnuplot.curve(name, col, p, style="linespoints", dt=2 if "straggler" in name else 1,
                                 pt={"bsp": 7, "async": 5, "ssp": 9}[sync]))
        figs["accuracy"] = gnuplot.lines_figure(QUESTION["accuracy"], "test accuracy (%, all 10,000 test images)", pl,
                                             xlabel="wall time (s, dilation-corrected)", xrange=(0, None), yrange="[0:100]",
                                             key="bottom right", subtitle=[TTA_REGIME % (LAYERS, o["rate"]), TTA_OPTS,
                                             "N = %d, PS on %d server hosts; dashed: one host at half a core; worker 0's copies every"
                                             " %d steps from step 0, tested after the job (medians)" % (TTA_N, TTA_SERVERS, TTA_EVERY)])
    if any(r.get("link_busiest_bytes") for r in rows if base_rows(r) and not r.get("error")):
        figs["bytes"] = links_figure(rows, drawn, labels, Ns, n, write, key_only, regime, xs)
    else:
        figs["bytes"] = payload_figure(rows, drawn, labels, Ns, n, write, key_only, regime, xs)
    made = []
    for name, body in figs.items():
        try:
            gnuplot.draw(out, dat, name, body, size=(1000, 620))
            made.append(name)
        except gnuplot.PlotError as e:
            print("psring demo: %s" % e, file=sys.stderr)
    say("figures in %s: %s (PNG and SVG)" % (out, ", ".join(sorted(made))))


def tta_curves(ep_path):
    """The time-to-accuracy runs at N = TTA_N from the epochs CSV: {name: [(elapsed s, test
    accuracy %) of each point, medians over the repeats]}, names as 'ring', 'ps, 4 server hosts,
    async, straggler'; a point is worker 0's copy at a step (or, in older files, an epoch's end),
    the job's end (epoch 'end') last. A point that not every repeat reached (under async worker 0's
    count of steps varies) is left out: its median would mix other moments."""
    series, reps = {}, {}
    for e in results.read_rows(ep_path) if os.path.exists(ep_path) else []:
        if int(e["workers"]) != TTA_N:
            continue
        name = "%s%s%s" % (e["label"], ", " + e["sync"] if e["label"].startswith("ps") else "", ", straggler" if float(e["straggler"]) < 1 else "")
        epoch = int(e.get("step") or e["epoch"]) if e["epoch"] != "end" else 10 ** 6   # the job's end: after every point
        series.setdefault(name, {}).setdefault(epoch, []).append((float(e["elapsed_s"]), float(e["test_accuracy"])))
        reps.setdefault(name, set()).add(e["repeat"])
    return {name: [(statistics.median(t for t, _ in v), statistics.median(a for _, a in v))
                   for ep, v in sorted(epochs.items()) if len(v) == len(reps[name])] for name, epochs in series.items()}
