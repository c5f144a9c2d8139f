"""published.py: the cost model beside published scaling results (data/published-*.csv; its format:
docs/tradeoff.md, At scale): read a points file, predict each point through its transports'
assumptions, print the errors; and what those errors say of the model's own verdicts: a winner
whose margin is under the median error on the shipped points is too close to call. It prints
nothing of its own on bad input: PointsError carries the one line the command prints."""
import statistics

from . import costmodel as cm
from . import results
from .units import fnum


class PointsError(ValueError):
    pass


def bad(msg):
    raise PointsError(msg)


PUB_SETUP = ["params", "bytes_per_param", "gpus_per_host", "hosts", "link_gbps", "transport", "intra_gbps", "single_gpu_rate",
             "batch_per_gpu", "topology", "server_hosts", "baseline_gpus", "metric", "framework", "published"]
WORDS = ("transport", "topology", "metric", "framework")   # the setup's cells that are not numbers


def read(path, flag, notes):
    """The rows of a points file (its '#' lines into notes); one line and exit 2 for one that cannot be used."""
    try:
        open(path, "rb").close()
        rows = results.read_rows(path, notes)
    except OSError as e:
        bad("%s %s: %s" % (flag, path, e.strerror))
    except results.CsvError as e:
        bad("%s %s" % (flag, e))
    missing = [c for c in ["id", "source", "citation", "group"] + PUB_SETUP if c not in (rows[0] if rows else ())]
    if not rows or missing:
        bad("%s %s: %s" % (flag, path, "no column " + ", ".join(missing) if rows else "no rows"))
    return rows


def predict(path, flag, rows, assume, cores):
    """(row, model, error, server cores, accumulation) of every row: its setup through the transport's
    assumptions, its exchange under backward as its framework's buckets (costmodel.FRAMEWORKS)."""
    res = []
    for i, r in enumerate(rows, 1):
        who = "%s %s: row %s" % (flag, path, r["id"] or i)
        if not r["intra_gbps"].strip() and "intra_" + r["intra"] in cm.CONSTANTS:   # the intra path's constant
            r = dict(r, intra_gbps=str(cm.const("intra_" + r["intra"])))
        for c in ["citation"] + PUB_SETUP:
            if not r[c].strip() and c != "intra_gbps":
                bad("%s: no %s" % (who, c))
        x = {c: fnum(r[c]) for c in PUB_SETUP if c not in WORDS}
        x["tcp_streams"] = fnum((r.get("tcp_streams") or "").strip() or "%d" % cm.const("tcp_streams"))   # empty or none: NCCL's default
        fw = r["framework"].strip()
        # micro-batches per exchange, the row's and its baseline's: empty or no column, 1 (no accumulation)
        acc = [(r.get(c) or "").strip() or "1" for c in ("accumulation", "baseline_accumulation")]
        for c, v in zip(("accumulation", "baseline_accumulation"), acc):
            if fnum(v) is None or fnum(v) < 1 or fnum(v) % 1:
                bad("%s: %s '%s' is not a whole count >= 1" % (who, c, v))
        acc = [int(fnum(v)) for v in acc]
        for wrong, msg in ((r["topology"] not in cm.TOPOLOGIES, "unknown topology '%s' (%s)" % (r["topology"], ", ".join(cm.TOPOLOGIES))),
                           (r["transport"] not in assume, "transport '%s' is not %s and has no '# assume' line" % (r["transport"], " or ".join(cm.TRANSPORTS))),
                           (not r["intra_gbps"].strip() and "intra_" + r["intra"] not in cm.CONSTANTS,
                            "no intra_gbps, and intra '%s' is no constant (psring model --constants)" % r["intra"]),
                           (r["metric"] not in ("efficiency", "speedup"), "metric '%s' is not efficiency or speedup" % r["metric"]),
                           (fw not in cm.FRAMEWORKS, "framework '%s' has no bucket defaults (%s)" % (fw, ", ".join(cm.FRAMEWORKS))),
                           (not all(v is not None and (v >= 0 if c == "server_hosts" else v > 0) for c, v in x.items())
                            or any(x[c] % 1 for c in ("params", "gpus_per_host", "hosts", "server_hosts", "baseline_gpus", "tcp_streams")),
                            "a number is missing, not positive, or not a whole count")):
            if wrong:
                bad("%s: %s" % (who, msg))
        H, G, b, k = int(x["hosts"]), int(x["gpus_per_host"]), int(x["baseline_gpus"]), int(x["server_hosts"])
        if b > G * H or (b > G and b % G):
            bad("%s: baseline_gpus %d is not one host's share or whole hosts of %d GPUs" % (who, b, G))
        c = cores.get(r["source"], 0)   # a source that says nothing of its servers: one core, after the link

        def model(t, fw):   # the row's metric through transport t's assumptions and framework fw's buckets
            al, frac = assume[t][:2]
            frac = cm.line_at(t, frac, x["link_gbps"] * 1e9, x["tcp_streams"]) if len(assume[t]) > 2 else frac   # a '# assume' line's is as it says
            compute = x["batch_per_gpu"] / x["single_gpu_rate"]
            beta, beta_i = 8 / (x["link_gbps"] * 1e9 * frac), 8 / (x["intra_gbps"] * 1e9)
            per_gpu = lambda h, g, a: a * compute / cm.accumulated_step(a, r["topology"], h, g, x["params"] * x["bytes_per_param"], compute,
                                                                        al * 1e-6, beta, beta_i, cm.gamma_for(r["topology"]) * 1e-9, 0 if k else h, k,
                                                                        cm.slice_bytes(cm.const("ps_slice_kib"), x["bytes_per_param"]), fw, server_cores=c)[0]
            eff = per_gpu(H, G, acc[0]) / per_gpu(max(b // G, 1), min(b, G), acc[1])   # throughput per GPU against the baseline's
            return eff if r["metric"] == "efficiency" else eff * G * H / b
        if (r.get("bound") or "").strip():   # a setup its source does not state: the range over transports, overlap or none
            m = [model(t, f) for t in cm.TRANSPORTS for f in ("none", fw)]
            lo, hi, p = min(m), max(m), x["published"]
            res.append((r, (lo, hi), max(lo - p, p - hi, 0.0) / p, c, acc[0]))
        else:
            m = model(r["transport"], fw)
            res.append((r, m, abs(m - x["published"]) / x["published"], c, acc[0]))
    return res


def bounded(res):
    """(points, bounds) of predict's results: the rows whose setup is stated, and the bound rows."""
    return [t for t in res if not isinstance(t[1], tuple)], [t for t in res if isinstance(t[1], tuple)]


def setup(r, c, acc):
    return "%s H=%s G=%s %sG %s%s %s%s" % (r["topology"], r["hosts"], r["gpus_per_host"], r["link_gbps"], r["transport"],
                                          " k=%s%s" % (r["server_hosts"], " c=%d" % c if c else "") if r["topology"] in cm.SERVERS_SUM else "",
                                          r["framework"].strip(), " acc=%d" % acc if acc > 1 else "")


def show(res):
    points, bounds = bounded(res)
    print("%-18s %-38s %-10s %9s %7s %7s" % ("id", "setup", "metric", "published", "model", "error"))
    for r, model, err, c, acc in points:
        print("%-18s %-38s %-10s %9s %7.4f %6.2f%%" % (r["id"][:18], setup(r, c, acc)[:38], r["metric"], r["published"], model, 100 * err))
    if points:
        worst = max(points, key=lambda t: t[2])
        print("median error %.2f%%, worst %.2f%% (%s), over %d points"
              % (100 * statistics.median(t[2] for t in points), 100 * worst[2], worst[0]["id"], len(points)))
        for f, (med, worst, n, band) in families(points).items():
            print("%s: median signed error %+.2f%%, worst %+.2f%%, over %d points; band -%.2f%% +%.2f%%" % ((f, 100 * med, 100 * worst, n) + tuple(100 * x for x in band)))
    else:
        print("no point whose setup its source states: no error statistics")
    for r, (lo, hi), err, c, acc in bounds:   # apart: no error statistic can hold a setup nobody stated
        print("bound %s (%s; unstated: %s): model %.4f..%.4f over transports %s, no overlap or its framework's; published %s: %s"
              % (r["id"], setup(r, c, acc), r["bound"].strip(), lo, hi, "/".join(cm.TRANSPORTS), r["published"],
                 "inside" if err == 0 else "OUTSIDE by %.2f%%" % (100 * err)))
    groups = {}
    for r, model, *_ in res:   # a bound takes its best case: the winner must hold against it
        if r["group"]:
            groups.setdefault(r["group"], []).append((r, model[1] if isinstance(model, tuple) else model))
    for g, pts in groups.items():
        pub, mod = (max(pts, key=lambda t: f(t))[0]["topology"] for f in (lambda t: float(t[0]["published"]), lambda t: t[1]))
        print("winner %s: published %s, model %s: %s" % (g, pub, mod, "right" if pub == mod else "WRONG"))


def note_lines(notes):
    """(line, its stripped fields) of each '# assume' and '# server' line of a points file."""
    return [(line, [x.strip() for x in line[1:].split(",", 4 if kind == "assume" else 3)])
            for line in notes for kind in [line[1:].split(",", 1)[0].strip()] if kind in ("assume", "server")]


def compare(path, check=None):
    """(res, check's res or None): the model beside every published point of PATH; then, apart, the
    points of CHECK through PATH's assumptions (Horovod's own figures: they set nothing, so they test it)."""
    notes, cores = [], {}
    # alpha in us; a third item: the constants' line fraction, capped at a link rate by cm.line_at
    assume = {t: [v * 1e6 if i == 0 else v for i, v in enumerate(cm.transport(t))] + ["constants"] for t in cm.TRANSPORTS}
    rows = read(path, "--published", notes)
    for line, f in note_lines(notes):
        if f[0] == "assume":   # '# assume,TRANSPORT,ALPHA_US,LINE_FRACTION,WHERE', fixed before comparing
            v = [fnum(x) for x in f[2:4]] if len(f) == 5 else [None]
            if None in v or not (v[0] >= 0 and 0 < v[1] <= 1):
                bad("--published %s: '%s' is not '# assume,TRANSPORT,ALPHA_US,LINE_FRACTION (0..1],WHERE'" % (path, line))
            assume[f[1]] = v
        else:   # '# server,SOURCE,CORES,WHERE': that source's servers sum on CORES threads, pipelined
            c = fnum(f[2]) if len(f) == 4 else None
            if c is None or c < 1 or c % 1:
                bad("--published %s: '%s' is not '# server,SOURCE,CORES (a whole count >= 1),WHERE'" % (path, line))
            cores[f[1]] = int(c)
    res = predict(path, "--published", rows, assume, cores)
    if check is None:
        return res, None
    crows = read(check, "--check", notes := [])
    if note_lines(notes):
        bad("--check %s: sets nothing: its '# assume' and '# server' lines belong in the --published file" % check)
    return res, predict(check, "--check", crows, assume, cores)


family = lambda topology: "ps-like" if topology in cm.SERVERS_SUM else "ring-like"   # servers sum (ps-lite, BytePS, TF's PS), or a collective


def families(points):
    """{family: (median, worst signed error e = model / published - 1, points, band)} of stated points; band (down, up): the
    medians of max(e, 0) and max(-e, 0), the truth from 1 - down to 1 + up of the model: one sign of error moves it one way."""
    fam = {}
    for r, m, *_ in points:
        fam.setdefault(family(r["topology"]), []).append(m / fnum(r["published"]) - 1)
    return {f: (statistics.median(e), max(e, key=abs), len(e), tuple(statistics.median(max(s * x, 0) for x in e) for s in (1, -1))) for f, e in sorted(fam.items())}


def median_error(path):
    """(median error, points, {family: band}) of the model on the points of PATH: what --published prints, read afresh."""
    res = bounded(compare(path)[0])[0]
    if not res:
        bad("%s: no point whose setup its source states (every row is a bound)" % path)
    return statistics.median(t[2] for t in res), len(res), {f: v[3] for f, v in families(res).items()}


def verdict(steps, band):
    """(winner, runner-up, margin, too close, threshold) of {design: step seconds}: the margin is how much faster the winner
    runs (the runner-up's step over its own, less 1); band {design: (down, up)}: too close (a margin under threshold)
    where the winner's band reaches the runner-up's, (1 - down of the winner) / its step > (1 + up of the other) / its."""
    win, second = sorted(steps, key=steps.get)[:2]
    margin = steps[second] / steps[win] - 1
    return win, second, margin, margin < (t := (1 + band[second][1]) / (1 - band[win][0]) - 1), t


def cheapest_near(cost, names, error):
    """Of names in {design: (hosts, step s, samples/s a host)} within error of their fastest, the most samples/s a host."""
    return max((d for d in names if cost[d][1] <= min(cost[e][1] for e in names) * (1 + error)), key=lambda d: cost[d][2])


def recommend(cost, names, hosts, error):
    """(recommended, runner-up) of names as a buyer takes them: cheapest_near of all if on the workers' hosts or over error ahead a host of theirs."""
    quick, home = cheapest_near(cost, names, error), cheapest_near(cost, [d for d in names if cost[d][0] <= hosts], error)
    best = quick if cost[quick][0] <= hosts or cost[quick][2] > cost[home][2] * (1 + error) else home
    return best, quick if best != quick else cheapest_near(cost, [d for d in names if d != best], error)
