"""verdict.py: what the demo shows, in a few lines (DIR/summary.txt): the winner at each N,
round by round, the ring's efficiency, the crossover in server hosts, the cost model's errors
against its targets, and time to accuracy."""
import os
import statistics

from .. import results, stats
from . import bridge, predict
from .. import costmodel as cm
from .figures import base_rows, by_label_n, dilations, k_sweep, k_sweep_row, load, one_worker, ring4_row, tta_curves
from .plan import BATCH, LAYERS, TTA_N, TTA_OPTS, TTA_PS, TTA_RUNS
from .settings import PS_CHUNK_KB, RING_CHUNK_KB


TIE = 0.05         # within 5% of the fastest, round by round (paired), a configuration shares the win


def rounds(rows, key, value, where=lambda r: True):
    """{key(r): {repeat: median of that repeat's values}} over the successful rows where(r). The
    demo makes every configuration once per round (repeat 1 of all, then repeat 2, ...), so two
    configurations' values of one round were measured minutes apart, on the same machine."""
    out = {}
    for (k, rep), (m, *_) in stats.aggregate(rows, value, lambda r: (key(r), str(r.get("repeat") or 1)), where).items():
        out.setdefault(k, {})[rep] = m
    return out


def paired(a, b):
    """a over b, round by round: the median over the rounds both have of a[round] / b[round]
    (None if they share none). Whatever the machine did in a round (another tenant, a slower
    spell) moves both values, and their ratio cancels it; the medians of each, taken apart,
    keep it (an example: docs/results/lab-notes-experiments.md)."""
    both = sorted(set(a) & set(b))
    return statistics.median(a[r] / b[r] for r in both) if both else None


def tta_lines(ep_path):
    """The summary's time to accuracy: each design's end (median time and accuracy over the
    repeats), async's and SSP's time as a fraction of BSP's with the same servers, and when BSP
    passed the accuracy async ended at (medians of each epoch)."""
    curves = tta_curves(ep_path)
    last = {name: pts[-1] for name, pts in curves.items() if pts}
    if not last:
        return []
    lines = ["  Time to accuracy (N=%d, MLP %s, %s; %s):" % (TTA_N, LAYERS, TTA_RUNS, TTA_OPTS)]
    for tag, what in (("", "without a straggler"), (", straggler", "with one host at half a core")):
        bsp, asy = last.get(TTA_PS + ", bsp" + tag), last.get(TTA_PS + ", async" + tag)
        parts = []
        for name, short in (("ring", "BSP ring"), (TTA_PS + ", bsp", "BSP PS"), (TTA_PS + ", async", "async PS"),
                            (TTA_PS + ", ssp", "SSP PS")):
            if name + tag in last:
                t, a = last[name + tag]
                ratio = " (%.2f of BSP PS's time)" % (t / bsp[0]) if bsp and "BSP" not in short else ""
                parts.append("%s %.2f s, %.1f%%%s" % (short, t, a, ratio))
        passed = next((t for t, a in curves.get(TTA_PS + ", bsp" + tag, []) if asy and a >= asy[1]), None)
        if passed is not None:
            parts.append("BSP PS passed async's %.1f%% by %.2f s" % (asy[1], passed))
        if parts:
            lines.append("    %s: %s." % (what, "; ".join(parts)))
    return lines


def summary(out, csv_path, cal_path, o):
    rows = load(csv_path)
    thr = stats.aggregate(rows, lambda r: float(r["samples_per_s"]), by_label_n, base_rows)
    per = rounds(rows, by_label_n, lambda r: float(r["samples_per_s"]), base_rows)
    alone = [float(r["samples_per_s"]) for r in rows if stats.step_alone(r) and not r.get("error")]
    Ns = sorted({k[1] for k in thr})
    cal, c1 = calibration(cal_path), stats.one_worker_compute(rows, lambda r: 0).get(0)   # the model's terms and the bridge
    lines = ["What the demo shows (1-core hosts at %s, %s, %s, batch %d per worker, fp16, %d KiB ring chunks, %d KiB PS slices):"
             % (o["rate"], dilations(rows), LAYERS, BATCH, RING_CHUNK_KB, PS_CHUNK_KB)]
    ok = {results.run_key(r) for r in rows if not r.get("error")}
    failed = [r for r in rows if r.get("error") and results.run_key(r) not in ok]   # not made good by a resume
    if failed:   # recorded in the CSV with their reason; every number below leaves them out
        lines.append("  %d run(s) failed and are left out: %s." % (len(failed), "; ".join(
            "%s (repeat %s): %s" % (point_name(r), r.get("repeat") or 1, r["error"]) for r in failed)))
    leader = {}
    ranked = stats.ranking(thr)
    for N in Ns:
        at = ranked.get(N)
        if not at:
            continue
        best, lab = at[0]
        # how much faster the fastest is than each, round by round (the medians' ratio where no
        # round has both)
        over = {l: paired(per[(lab, N)], per[(l, N)]) or best / v for v, l in at}
        tied = [l for v, l in at if over[l] <= 1 + TIE]
        rest = [l for v, l in at if l not in tied]
        leader[N] = set(tied)
        if len(tied) > 1:   # ring and PS with N colocated shards move the same bytes: a tie is the lesson
            txt = "  N=%d: %s tie (within %d%%), %.0f samples/s" % (N, " and ".join(tied), TIE * 100, best)
        else:
            txt = "  N=%d: %s wins, %.0f samples/s" % (N, lab, best)
        if rest:
            txt += ", %.2fx %s" % (over[rest[0]], rest[0])
        if "ring" in tied and "ps, 1 server host" in rest[1:]:
            txt += "; %.2fx PS with one server" % over["ps, 1 server host"]
        lines.append(txt + ".")
    one, where = one_worker(rows, thr)
    if one and Ns and ("ring", max(Ns)) in thr:   # like for like: one worker on the scale model the N workers ran on
        Nm = max(Ns)
        txt = "  Ring scaling efficiency at N=%d: %.2f (throughput(%d) / (%d x %s, %.0f samples/s))" % (
            Nm, thr[("ring", Nm)][0] / (Nm * one), Nm, Nm, where, one)
        if alone:   # a real core's step: what the scale model's host computes against it
            a = statistics.median(alone)
            txt += "; %.2f against the same step alone on a full core (%.0f samples/s, the scale model's host %.2fx that)" % (
                thr[("ring", Nm)][0] / (Nm * a), a, one / a)
        lines.append(txt + ".")
    cmp_path = os.path.join(out, "model_vs_measured.csv")
    cr = [r for r in results.read_rows(cmp_path) if int(r["workers"]) >= 2]
    ks, ring4 = k_sweep(rows)   # the crossover in server hosts: exchange time, as BytePS' formula
    if len(ks) > 1 and ring4:
        # decided round by round, as the winners: each k's exchange over the ring's
        kr = rounds(rows, lambda r: r["_k"], stats.exchange_alone, k_sweep_row)
        rr = rounds(rows, lambda r: r["_N"], stats.exchange_alone, ring4_row).get(4, {})
        rel = {k: paired(kr[k], rr) or ks[k][0] / ring4[0] for k in ks}
        beat = crossover(rel, 1.0)
        at4 = [r for r in cr if r["workers"] == "4" and r["straggler"] in ("1", "1.0")]   # the model, same points
        mring = next((float(r["model_exchange_ms"]) for r in at4 if r["label"] == "ring"), None)
        mk = {int(r["server_hosts"]): float(r["model_exchange_ms"]) for r in at4 if r["label"] == "ps, k server hosts"}
        mbeat = crossover(mk, mring) if mring is not None and len(mk) > 1 else None
        if beat:
            tie = rel[beat] * (1 + TIE) >= 1
            # what it costs: k hosts of their own beside the N = 4 worker hosts the ring needs alone
            measured = ("exchanges faster than the ring from k=%d on (%.2f vs %.2f ms, %.1f%% less round by round%s), "
                        "at the cost of %d server hosts: %d hosts in all against the ring's 4") % (
                beat, ks[beat][0], ring4[0], 100 * (1 - rel[beat]), ": within the %d%% the verdict calls a tie" % (TIE * 100) if tie else "",
                beat, 4 + beat)
        else:
            measured = "never exchanges faster than the ring up to k=%d" % max(ks)
        lines.append("  Crossover in server hosts (N=4): PS with k servers on their own hosts %s (model: %s; bytes-only"
                     " bound, BytePS' formula: k > N^2/(2(N-1)) = %.2f)."
                     % (measured, "from k=%d" % mbeat if mbeat else "none up to k=%d" % max(ks) if mk else "not compared", 16 / 6))
    if cr:
        lines += model_errors(cr, "the step alone on a full core" if alone else "the one-worker runs (no step alone)")
        lines += term_lines(rows, cal, c1)
        agree = sum(1 for N in Ns if N >= 2 and ((m := model_winner(cr, N)) is None or m & leader.get(N, set())))
        lines.append("  The model names the same winner at %d of %d worker counts." % (agree, sum(1 for N in Ns if N >= 2)))
    lines += predict.check_lines(out, rows, leader)
    lines += tta_lines(os.path.join(out, "demo.epochs.csv"))
    lines += bridge_lines(rows, cal, c1)
    lines.append("  Each design at its best (the ring with --overlap, BytePS' summation servers, GPU hosts), where bytes"
                 " dominate: psring demo --best (DIR/best/summary.txt).")
    lines += ["  What this shows: on links of %s, one server's link carries N gradients each way and saturates; the ring" % o["rate"],
              "  sends 2(N-1)/N of one per host, so it scales; servers on hosts of their own (what BytePS calls the",
              "  non-colocated PS) add link capacity and win once there are enough of them. What it does not: 1-core hosts,",
              "  one emulated switch with no contention in its fabric, an MNIST MLP, no GPU; latency is the stack's own",
              "  (netem is not in this kernel)."]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")


def calibration(cal_path):
    try:
        return cm.calibration_load(cal_path)
    except ValueError:
        return None


def term_lines(rows, cal, one):
    """What each term of the model's step predicted and what the runs measured, over the sweep's
    points at N >= 2 (medians of each point's repeats): compute (the step alone's; measured: the
    step less its exchange, whose exchange_ms holds the wait), the wait for the slowest, and the
    exchange without the wait (stats.exchange_alone); each term's agreement as it is.
    cal: the calibration (None: no lines); one: (compute s, step samples) of one worker."""
    pts = {}
    for r in rows:
        if base_rows(r) and r["_N"] >= 2 and not r.get("error"):
            pts.setdefault((r["label"], r["_N"], r["_k"]), []).append(r)
    if not (cal and one and pts):
        return []
    got = {"compute": [], "wait": [], "exchange": []}
    for reps in pts.values():
        med = lambda f: statistics.median(f(r) for r in reps) / 1e3   # noqa: E731  ms -> s
        _, ex, wait = cm.row_time(reps[0], cal, one[0], one[1])
        got["compute"].append((one[0], med(lambda r: float(r["step_ms"]) - float(r["exchange_ms"]))))   # exchange_ms holds the wait
        got["wait"].append((wait, med(lambda r: float(r["wait_ms"]))))
        got["exchange"].append((ex, med(stats.exchange_alone)))
    def span(t, i):
        lo, hi = (1e3 * f(p[i] for p in got[t]) for f in (min, max))
        return "%.1f" % lo if "%.1f" % lo == "%.1f" % hi else "%.1f-%.1f" % (lo, hi)
    return ["    its terms over those %d points, model against measured (ms): compute %s (the step alone) against %s, the wait"
            " for the slowest %s against %s, the exchange %s against %s" % (len(pts), span("compute", 0), span("compute", 1),
                                                                            span("wait", 0), span("wait", 1), span("exchange", 0), span("exchange", 1))]


def bridge_lines(rows, cal, one):
    """Which real workloads share this scale model's ratio of bytes to compute (bridge.py)."""
    params = next((float(r["params"]) for r in rows if not r.get("error") and r.get("params")), 0)
    return bridge.lines(params * 2, one[0], cal) if cal and one and params else []


# The model's targets, per group of points at N >= 2: the sweep's step and exchange within 10%;
# the k-server sweep, which the same model predicts unchanged, within 15%.
ERROR_GROUPS = (("sweep", "step", 10), ("sweep", "exchange", 10), ("k-server sweep", "step", 15))


def point_group(r):
    """Which of the model's targets a model_vs_measured.csv row counts for (None: none; the
    straggler's runs are the time-to-accuracy runs, whose batch has no step alone to compare)."""
    if float(r["straggler"] or 1) < 1:
        return None
    return "k-server sweep" if r["label"] == "ps, k server hosts" else "sweep"


def point_name(r):
    """A point in full: 'ps, 1 server host, async, straggler, N=4', 'ps, k server hosts, k=3, N=4'."""
    name = r["label"]
    if r["label"] == "ps, k server hosts":
        name += ", k=%s" % r["server_hosts"]
    if r.get("sync") not in ("bsp", "", None):
        name += ", " + r["sync"]
    if float(r["straggler"] or 1) < 1:
        name += ", straggler"
    return "%s, N=%s" % (name, r["workers"])


def model_errors(cr, compute_from):
    """The model's error as its targets count it: per group, how many points are within the
    bound and the worst one, named in full (rows of model_vs_measured.csv at N >= 2)."""
    lines = ["  Cost model at N >= 2, compute from %s (error = model / measured - 1, medians of the repeats):" % compute_from]
    for group, what, bound in ERROR_GROUPS:
        errs = [(float(r[what + "_err_pct"]), r) for r in cr if point_group(r) == group and r[what + "_err_pct"]]
        if not errs:
            continue
        within = sum(1 for e, _ in errs if abs(e) <= bound)
        e, r = max(errs, key=lambda x: abs(x[0]))
        lines.append("    %s, %s: %d of %d points within %d%%, worst %+.1f%% (%s)" % (group, what, within, len(errs), bound, e, point_name(r)))
    return lines


def crossover(ex, ring):
    """The smallest k from which every k' >= k exchanges faster than the ring (None: no such k)."""
    beat = [k for k in sorted(ex) if all(ex[j] < ring for j in ex if j >= k)]
    return beat[0] if beat else None


def model_winner(cr, N):
    """The configurations the model puts within TIE of its fastest at N (None: no prediction)."""
    at = [(float(r["model_samples_per_s"]), r["label"]) for r in cr if int(r["workers"]) == N and r["straggler"] in ("1", "1.0")
          and r["sync"] in ("bsp", "") and r["label"] != "ps, k server hosts"]
    return set(near_best(sorted(at, reverse=True))) if at else None


def near_best(at):
    """The labels of (samples/s, label) pairs, fastest first, within TIE of the fastest: a tie."""
    return [l for v, l in at if v * (1 + TIE) >= at[0][0]]
