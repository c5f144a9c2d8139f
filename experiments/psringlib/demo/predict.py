"""predict.py: the main demo's prediction, written before its first timed run (DIR/prediction.txt
and prediction.csv): the cost model, on the run's calibration and the first step alone's compute,
gives every throughput configuration at N >= 2 its exchange, step and samples/s, and names the
winner at each N and the crossover in server hosts; the summary then reads the runs against it
(check_lines). --best writes its own (best.py)."""
import csv
import os
import statistics

from .. import costmodel as cm
from .. import results, stats
from . import verdict   # its tie band, near_best and crossover (looked up at call time: verdict imports this)
from .plan import ALONE, BATCH
from .settings import PS_CHUNK_KB

COLUMNS = ["label", "workers", "server_hosts", "model_exchange_ms", "model_step_ms", "model_samples_per_s", "written_after_runs"]
K_SWEEP = "ps, k server hosts"   # its points share a label: the key holds k
BOUND = 0.10                     # the exchange's target at N = 4, 8


def key(label, N, k):
    return (label, int(N), int(k) if label == K_SWEEP else 0)


def planned(runs):
    """The runs the prediction covers: the throughput runs at N >= 2, no straggler (the verdict's)."""
    return [r for r in runs if r is not ALONE and not r.tta and r.N >= 2 and r.straggler == 1]


def point(run, params):
    """What the model reads of a run (the columns of its future CSV row)."""
    ps = run.topology == "ps"
    return dict(topology=run.topology, workers=str(run.N), servers=str(run.servers if ps else 0),
                server_hosts=str(run.server_hosts if ps else 0), params=params, fp16="1",
                ps_chunk_kb=str(PS_CHUNK_KB) if ps else "", sync=run.sync, straggler="1")


def predict(runs, cal, alone):
    """{key: (exchange s, step s, samples/s)} of the planned runs, compute from alone (the step
    alone's CSV row: its step and its steps one by one)."""
    compute = (float(alone["step_ms"]) - float(alone["exchange_ms"])) / 1e3
    samples = [float(x) / 1e3 for x in (alone.get("step_samples_ms") or "").split(";") if x]
    out = {}
    for run in planned(runs):
        step, ex, _ = cm.row_time(point(run, alone["params"]), cal, compute, [samples] if samples else ())
        out[key(run.label, run.N, run.server_hosts)] = (ex, step, run.N * BATCH / step)
    return out


def winners(pred, N):
    """The labels the prediction puts within the verdict's tie of its fastest at N (the k sweep is the crossover's)."""
    at = sorted(((v[2], k[0]) for k, v in pred.items() if k[1] == N and k[0] != K_SWEEP), reverse=True)
    return verdict.near_best(at) if at else []


def crossover(pred, N=4):
    """The smallest k from which every k' >= k of the k sweep exchanges under the ring at N (None: none)."""
    ring = pred.get(key("ring", N, 0))
    ks = {k[2]: v[0] for k, v in pred.items() if k[0] == K_SWEEP and k[1] == N}
    return verdict.crossover(ks, ring[0]) if ring and ks else None


def write(out, runs, cal_path, csv_path):
    """DIR/prediction.txt and .csv from the calibration and the first step alone in demo.csv,
    once: a resumed demo keeps the prediction it wrote before its runs. Returns its lines, or []
    where it was written before (or the step alone failed: no compute to predict from)."""
    txt = os.path.join(out, "prediction.txt")
    rows = results.read_rows(csv_path) if os.path.exists(csv_path) else []
    alone = next((r for r in rows if stats.step_alone(r) and not r.get("error")), None)
    if os.path.exists(txt) or alone is None:
        return []
    pred = predict(runs, cm.calibration_load(cal_path), alone)
    after = sum(1 for r in rows if not stats.step_alone(r))   # a demo resumed from an older version's runs
    lines = ["Prediction (cost model: %s; compute %.2f ms, the first step alone), written %s:"
             % (os.path.basename(cal_path), float(alone["step_ms"]) - float(alone["exchange_ms"]),
                "before any timed run" if not after else "after %d timed runs (a resumed demo)" % after)]
    for N in sorted({k[1] for k in pred}):
        pts = " | ".join("%s%s %.2f" % (k[0], " k=%d" % k[2] if k[0] == K_SWEEP else "", 1e3 * v[0])
                        for k, v in sorted(pred.items()) if k[1] == N)
        lines.append("  N=%d exchange ms: %s; winner: %s" % (N, pts, " | ".join(winners(pred, N)) or "-"))
    if any(k[0] == K_SWEEP for k in pred):
        c = crossover(pred)
        lines.append("  crossover in server hosts at N=4: %s" % ("from k=%d" % c if c else "none in the sweep"))
    with open(os.path.join(out, "prediction.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for k, (ex, step, sps) in sorted(pred.items()):
            w.writerow([k[0], k[1], k[2], "%.3f" % (1e3 * ex), "%.3f" % (1e3 * step), "%.1f" % sps, after])
    with open(txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def load(out):
    """{key: (exchange s, step s, samples/s)} of DIR/prediction.csv ({} where there is none), and
    whether it was written after timed runs."""
    path = os.path.join(out, "prediction.csv")
    rows = results.read_rows(path) if os.path.exists(path) else []
    pred = {key(r["label"], r["workers"], r["server_hosts"]): (float(r["model_exchange_ms"]) / 1e3, float(r["model_step_ms"]) / 1e3,
                                                              float(r["model_samples_per_s"])) for r in rows}
    return pred, any(r["written_after_runs"] not in ("", "0") for r in rows)


def check_lines(out, rows, leader):
    """The summary's reading of the runs against the prediction: the winner it named at each N
    against the measured leaders (leader: {N: labels within the tie}), and each exchange at
    N = 4, 8 against the measured median (exchange alone, without the wait). rows: figures.load's."""
    pred, late = load(out)
    if not pred:
        return []
    Ns = sorted(N for N in {k[1] for k in pred} if N in leader)
    right = [N for N in Ns if set(winners(pred, N)) & leader[N]]
    meas = {}
    for r in rows:   # figures.load's rows (_N, _k, _tta, _strag)
        k = key(r.get("label", ""), r["_N"], r["_k"])
        if not r.get("error") and not r["_tta"] and r["_strag"] == 1 and k in pred:
            meas.setdefault(k, []).append(stats.exchange_alone(r) / 1e3)
    errs = sorted(((pred[k][0] / statistics.median(v) - 1, k) for k, v in meas.items() if k[1] in (4, 8)),
                  key=lambda e: -abs(e[0]))
    within = sum(1 for e, _ in errs if abs(e) <= BOUND)
    lines = ["  The prediction written %s (prediction.txt) names the winner at %d of %d worker counts%s;"
             % ("before the runs" if not late else "after some runs (a resumed demo)", len(right), len(Ns),
                "" if len(right) == len(Ns) else " (wrong at N=%s)" % ",".join(str(N) for N in Ns if N not in right))]
    if errs:
        e, k = errs[0]
        lines.append("    its exchange is within %d%% of the measured at %d of %d points at N = 4, 8 (worst %+.1f%%: %s%s, N=%d)."
                     % (BOUND * 100, within, len(errs), 100 * e, k[0], " k=%d" % k[2] if k[0] == K_SWEEP else "", k[1]))
    return lines

