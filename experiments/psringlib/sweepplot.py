"""sweepplot.py: psring plot's figures of a sweep's results CSV (experiments/plot says what each
shows): medians with min-max over repeats into small data files, drawn by gnuplot.py. GPU sweeps
get their series by the ring's path and MPS, and references by how the ranks shared the GPUs.
It runs no training; failed rows (error column set) are left out."""
import os
import shutil

from . import results, stats
from .cli import complaint
from .gnuplot import PlotError, bars_figure, curve, data_file, draw, lines_figure
from .units import fnum

bad = complaint("plot")


def figures(csv_path, out, label):
    """The figures of the results CSV csv_path in out (None: the CSV's folder), their data in
    out/plotdata; label: ' (how the runs were made)' for every title, or ''. 0, or bad()."""
    if not os.path.isfile(csv_path):
        bad("%s: %s" % (csv_path, "a folder, not a results CSV" if os.path.isdir(csv_path) else "no such file"))
    need = ["topology", "workers", "samples_per_s", "step_ms", "exchange_ms"]
    try:   # the cells it reads checked by name, as the cost model checks them
        rows = results.read_rows(csv_path)
        if rows:
            results.check_columns(csv_path, list(rows[0]), need)
            results.check_cells(rows, csv_path)
    except (results.CsvError, OSError) as e:
        bad(str(e) if isinstance(e, results.CsvError) else "%s: %s" % (csv_path, e))
    ok = [r for r in rows if not r.get("error") and fnum(r.get("samples_per_s")) is not None]
    if not ok:
        bad("%s: no successful run to plot" % csv_path)
    check_accuracy(rows, ok, csv_path)   # before plotdata/ exists: a refusal leaves nothing
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        bad("gnuplot not found: install gnuplot-nox (./quickstart does)", 1)
    out = out or os.path.dirname(os.path.abspath(csv_path))
    data = os.path.join(out, "plotdata")
    try:
        os.makedirs(data, exist_ok=True)
    except OSError as e:
        bad("-o %s: %s" % (out, e.strerror))

    gpu = gpu_rows(ok)
    ok = series_of(ok, gpu)   # r["_series"]: the label of its curve (one-rank rows may be in several)
    labels = sorted({r["_series"] for r in ok})
    workers = sorted({int(fnum(r["workers"], 0)) for r in ok})
    key = lambda r: (r["_series"], int(fnum(r.get("workers"), 0)))   # noqa: E731
    agg = {c: stats.aggregate(ok, c, key) for c in ("samples_per_s", "step_ms", "data_ms", "compute_ms", "exchange_ms",
                                                   "optimizer_ms", "test_accuracy", "wall_s")}
    # the exchange split: wait for the slowest worker (wait_ms, absent in older files: 0) and the
    # transfer, exchange_ms - wait_ms, which is what the cost model predicts
    for r in ok:
        ex_ms, w_ms = fnum(r.get("exchange_ms")), fnum(r.get("wait_ms"), 0.0)
        r["_transfer"] = None if ex_ms is None else max(0.0, ex_ms - w_ms)
        r["_wait"] = w_ms if ex_ms is not None else None
    agg["_transfer"] = stats.aggregate([r for r in ok if r["_transfer"] is not None], "_transfer", key)
    agg["_wait"] = stats.aggregate([r for r in ok if r["_wait"] is not None], "_wait", key)
    # bytes per step: the counters are per run
    for r in ok:
        st = fnum(r.get("steps"), 0) or 1
        r["_wbytes"] = ((fnum(r.get("bytes_sent_per_worker"), 0) + fnum(r.get("bytes_recv_per_worker"), 0))
                        / st / 1e6)
        r["_sbytes"] = fnum(r.get("bytes_per_server"), 0) / st / 1e6 if r.get("topology") == "ps" else None
    agg["_wbytes"] = stats.aggregate(ok, "_wbytes", key)
    agg["_sbytes"] = stats.aggregate([r for r in ok if r["_sbytes"] is not None], "_sbytes", key)

    def series(col, label, fn=None):
        pts = sorted((k[1], v) for k, v in agg[col].items() if k[0] == label)
        return [(n, fn(n, v) if fn else v) for n, v in pts]

    files = {}
    write = lambda name, rows: data_file(data, name, rows)   # noqa: E731
    base = {}
    for lab in labels:
        s = series("samples_per_s", lab)
        files[("thr", lab)] = write("thr_%d.dat" % labels.index(lab), [(n,) + v[:3] for n, v in s])
        one = [v for n, v in s if n == 1]
        base[lab] = one[0][0] if one else None
        if base[lab]:
            files[("eff", lab)] = write("eff_%d.dat" % labels.index(lab),
                                        [(n,) + tuple(x / (n * base[lab]) for x in v[:3]) for n, v in s])
        wb = series("_wbytes", lab)
        files[("wb", lab)] = write("wb_%d.dat" % labels.index(lab), [(n,) + v[:3] for n, v in wb])
        sb = series("_sbytes", lab)
        if sb:
            files[("sb", lab)] = write("sb_%d.dat" % labels.index(lab), [(n,) + v[:3] for n, v in sb])
    ones = [b for b in base.values() if b]
    ideal1 = max(ones) if ones else max(v[0] for k, v in agg["samples_per_s"].items() if k[1] == min(workers)) / min(workers)

    # breakdown: one bar per (config, N), medians of the parts; "other" = step - parts
    bars = []
    for lab in labels:
        for n in workers:
            k = (lab, n)
            if k not in agg["step_ms"]:
                continue
            parts = [agg[c][k][0] if k in agg[c] else 0.0 for c in ("data_ms", "compute_ms", "_transfer", "_wait", "optimizer_ms")]
            other = max(0.0, agg["step_ms"][k][0] - sum(parts))
            bars.append(("%s N=%d" % (lab, n),) + tuple(parts + [other]))
    files["bars"] = write("breakdown.dat", bars)  # columns: label data compute transfer wait optimizer other

    # accuracy vs time: per-epoch points (from the sweep's side file) or final points
    ep_path = csv_path[:-4] + ".epochs.csv" if csv_path.endswith(".csv") else csv_path + ".epochs.csv"
    acc_series = {}
    # the side file names a curve by its configuration alone: where GPU series are told apart by
    # path or MPS, it cannot say whose an epoch is, and the final points are drawn instead
    if os.path.isfile(ep_path) and all(r["_series"] == stats.config_label(r) for r in ok):
        try:
            for r in results.read_rows(ep_path):
                if int(fnum(r.get("workers"), 0)) != max(workers) and len(workers) > 1:
                    continue
                if r.get("repeat") not in ("0", 0):
                    continue
                acc_series.setdefault(r["label"], []).append((fnum(r["elapsed_s"], 0), fnum(r["test_accuracy"], 0)))
        except (results.CsvError, OSError, KeyError):
            acc_series = {}
    acc_kind = "per epoch, N=%d, repeat 0" % max(workers)
    if not acc_series:
        acc_kind = "final accuracy, every N"
        for lab in labels:
            acc_series[lab] = sorted((agg["wall_s"][k][0], agg["test_accuracy"][k][0]) for k in agg["wall_s"] if k[0] == lab)
    for lab, pts in acc_series.items():
        files[("acc", lab)] = write("acc_%d.dat" % (labels.index(lab) if lab in labels else 99 + len(files)),
                                    [(t, 100 * a) for t, a in sorted(pts)])

    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

    def color(lab):
        return colors[labels.index(lab) % len(colors)] if lab in labels else "#7f7f7f"

    xs = dict(xlabel="ranks N" if gpu else "workers (N)", xtics=workers,
              xrange=(0.5, max(workers) + 0.5 if max(workers) > 1 else 1.5))
    figs = {}
    if gpu:   # headroom above the highest curve or reference for the key, which would hide the flat line
        plots, subtitle, top = gpu_references(ok, labels, base, ideal1, workers, lambda name, rows: write(name, rows))
        yrange = "[0:%g]" % (1.45 * max([top] + [v[2] for v in agg["samples_per_s"].values()]))
    else:
        plots, subtitle, yrange = [curve("ideal linear (N x best N=1)", "#555555", expr="x*%g" % ideal1, dt=2)], None, "[0:*]"
    for lab in labels:
        plots.append(curve(lab, color(lab), files[("thr", lab)], "1:2:3:4", "yerrorlines"))
    figs["throughput"] = lines_figure("Training throughput vs %s (median, min-max bars)" % ("ranks" if gpu else "workers") + label,
                                      "samples/s (all workers)", plots, subtitle=subtitle, yrange=yrange, **xs)

    effs = [lab for lab in labels if ("eff", lab) in files]
    if effs:
        plots = [curve("ideal", "#555555", expr="1", dt=2)]
        for lab in effs:
            plots.append(curve(lab, color(lab), files[("eff", lab)], "1:2:3:4", "yerrorlines"))
        figs["efficiency"] = lines_figure("Scaling efficiency: throughput(N) / (N x throughput(1))" + label,
                                          "efficiency (1 = linear)", plots, yrange="[0:1.2]", **xs)

    figs["breakdown"] = bars_figure("Where a step goes (median per configuration)" + label, "ms per optimizer step", files["bars"],
                                    [("data", "#bbbbbb"), ("compute (fwd+bwd)", "#1f77b4"), ("exchange: transfer", "#d62728"),
                                     ("exchange: wait for slowest", "#f4a6a6"), ("optimizer", "#2ca02c"), ("other", "#ff7f0e")],
                                    rotate=True)

    plots = [curve(lab, color(lab), files[("acc", lab)], style="linespoints") for lab in acc_series]
    figs["accuracy"] = lines_figure("Time to accuracy (%s)" % acc_kind + label, "test accuracy (%)", plots, xlabel="wall time (s)",
                                    xrange=(0, None), yrange=None, key="bottom right")

    plots = []
    for lab in labels:
        plots.append(curve(lab + ": per worker", color(lab), files[("wb", lab)], "1:2:3:4", "yerrorlines"))
        if ("sb", lab) in files:
            plots.append(curve(lab + ": busiest server", color(lab), files[("sb", lab)], "1:2:3:4", "yerrorlines", dt=2, pt=5))
    figs["bytes"] = lines_figure("Traffic per optimizer step" + label, "MB per step (sent + received)", plots, **xs)

    for name, body in figs.items():
        try:
            draw(out, data, name, body, size=(1000, 650))
        except PlotError as e:
            bad(str(e), 1)
    print("psring plot: %d figures (PNG and SVG) in %s: %s" % (len(figs), out, ", ".join(sorted(figs))))
    return 0



# ---- GPU sweeps: series by path and MPS, references by how the ranks shared the GPUs ------------
def check_accuracy(rows, ok, csv_path):
    """bad() for the first plotted row (line numbers as read, from 2) whose test_accuracy is not a
    fraction in 0..1, as psring-train writes it: inf, text or 1.5 would be drawn as a point off the
    figure (150%%) or end in a traceback, a percentage (93.4) as 9340%%."""
    plotted = {id(r) for r in ok}
    for line, r in enumerate(rows, start=2):
        v = (r.get("test_accuracy") or "").strip()
        x = fnum(v)
        if id(r) in plotted and (x is None or not 0 <= x <= 1):
            bad("%s:%d: column test_accuracy: '%s' is not a fraction in 0..1%s" % (
                csv_path, line, v, " (a percentage? psring writes 0.934 for 93.4%)" if x is not None and 1 < x <= 100 else ""))


def gpu_rows(rows):
    """The rows of GPU runs that say how their ranks sat on the GPUs (device cuda, gpus >= 1);
    none in a CPU sweep or a file from before those columns."""
    return [r for r in rows if r.get("device") == "cuda" and (fnum(r.get("gpus"), 0) or 0) >= 1]


def series_of(rows, gpu):
    """rows, each with r["_series"], the curve it belongs to: its config_label, and for a GPU row
    also the ring's path (ipc, staged, ...) and MPS when the file holds runs with and without it:
    'ring (ipc, MPS)'. A configuration measured over two paths gets a curve per path; its
    one-rank rows (no exchange) and rows without a path start each of them."""
    ids = {id(r) for r in gpu}
    both_mps = {"0", "1"} <= {r.get("mps") for r in gpu}
    groups = {}
    for r in gpu:
        groups.setdefault((stats.config_label(r), r.get("mps") if both_mps else ""), []).append(r)
    out = [dict(r, _series=stats.config_label(r)) for r in rows if id(r) not in ids]
    for (lab, mps), rs in groups.items():
        paths = sorted({r.get("ring_path") for r in rs if r.get("ring_path") and fnum(r.get("workers"), 0) >= 2}) \
            or sorted({r.get("ring_path") for r in rs if r.get("ring_path")})
        for r in rs:
            own = r.get("ring_path") if len(paths) > 1 and r.get("ring_path") in paths and fnum(r.get("workers"), 0) >= 2 else None
            for path in [own] if own else paths or [""]:
                tags = [t for t in (path, "MPS" if mps == "1" else "") if t]
                out.append(dict(r, _series=lab + (" (%s)" % ", ".join(tags) if tags else "")))
    return out


def gpu_references(rows, labels, base, ideal1, workers, write):
    """The throughput figure's reference curves, subtitle and highest reference value for a GPU
    sweep. Series whose ranks
    each had a GPU of their own (ranks_per_gpu <= 1 at every point) get the ideal linear line, N x
    their best one rank; series whose ranks shared G GPUs get min(N, G) x their best one rank
    (compute grows with the GPUs, not the ranks: flat for one GPU), from a data file ref_G.dat."""
    share = {}   # label -> G when its ranks shared G GPUs somewhere, else 0
    for r in rows:
        if r.get("device") == "cuda" and (fnum(r.get("ranks_per_gpu"), 0) or 0) > 1:
            share[r["_series"]] = max(share.get(r["_series"], 0), int(fnum(r.get("gpus"), 1)))
    groups = {}
    for lab in labels:
        groups.setdefault(share.get(lab, 0), []).append(lab)
    plots, top = [], 0.0
    for g, labs in sorted(groups.items()):
        one = max([base[lab] for lab in labs if base.get(lab)] or [ideal1])
        top = max(top, min(max(workers), g or max(workers)) * one)
        if g == 0:
            plots.append(curve("ideal linear (N x best one rank: a GPU each)", "#555555", expr="x*%g" % one, dt=2))
            continue
        title = ("one rank (ranks share 1 GPU: its compute does not grow with the ranks)" if g == 1 else
                 "min(N, %d) x one rank (ranks share %d GPUs: compute grows up to %d ranks only)" % (g, g, g))
        plots.append(curve(title, "#555555", write("ref_%d.dat" % g, [(n, min(n, g) * one) for n in workers]), dt=2))
    gpu = [r for r in rows if r.get("device") == "cuda" and fnum(r.get("gpus")) is not None]
    most = max(int(fnum(r["gpus"], 0)) for r in gpu)
    per = max(int(fnum(r.get("ranks_per_gpu"), 0) or 0) for r in gpu)
    mps = {r.get("mps") or "0" for r in gpu}
    where = ("ranks share %d GPU%s (up to %d ranks on one)" % (most, "s" if most > 1 else "", per) if per > 1 else
             "each rank has a GPU of its own (%d GPU%s)" % (most, "s" if most > 1 else ""))
    how = ("under MPS" if mps == {"1"} else "with and without MPS (series marked MPS ran under it)" if mps == {"0", "1"}
           else "without MPS")
    return plots, "%s, %s" % (where, how), top

