"""stats.py: what the tools compute from results rows: a row's configuration label, medians with
min and max by configuration (aggregate), the fastest-first verdict (ranking), the exchange
without the wait, and one worker's compute per step (what the cost model takes). Reads no file:
rows come from results.py."""
import statistics

from .units import fnum


def exchange_alone(r):
    """A row's exchange per step (ms) without the wait for the slowest: what the cost model predicts."""
    return float(r["exchange_ms"]) - float(r.get("wait_ms") or 0)


def step_alone(r):
    """A row of the step alone: one worker on one full core, no exchange (topology local)."""
    return r.get("topology") == "local"


def one_worker_compute(rows, key):
    """{key(r): (compute s, [step samples s])}: what the cost model takes compute from, one
    worker's step on one full core, as a real 1-core host computes it. That is the step alone
    (topology local: one process, no quota, no traffic) where the CSV has one, as the demo's
    does: on emulated hosts no one-worker run is that reference, for under a CPU quota a host
    that never waits (the ring rank alone) and one that waits every step (the PS worker) compute
    several ms apart, both off the real host (docs/cluster.md). Without it (a loopback sweep,
    nothing throttled) the one-worker runs are. The median of step - exchange; the samples: the
    steps one by one from each run's timeline (step_samples_ms), a list per run, for BSP's wait
    for the slowest (costmodel.slowest_of takes the median over the runs)."""
    runs = {}
    for r in rows:
        if r.get("error") or r.get("workers") != "1" or (r.get("straggler") or "1") not in ("1", "1.0"):
            continue
        runs.setdefault(key(r), []).append(r)
    out = {}
    for k, rs in runs.items():
        rs = [r for r in rs if step_alone(r)] or rs
        out[k] = (statistics.median((float(r["step_ms"]) - float(r["exchange_ms"])) / 1e3 for r in rs),
                  [s for s in ([float(x) / 1e3 for x in (r.get("step_samples_ms") or "").split(";") if x] for r in rs) if s])
    return out


def config_label(row):
    """ring, mpi-allreduce, ps S=2 (+ sync, fp16, overlap when not the default)."""
    topo = row.get("topology", "")
    if topo == "ring":
        label = "mpi-allreduce" if row.get("allreduce") == "mpi" else "ring"
        if row.get("overlap") == "1":
            label += " overlap"
    elif topo == "ps":
        label = "ps S=%s" % row.get("servers", "?")
        if row.get("sync") and row.get("sync") != "bsp":
            label += " " + row["sync"]
            if row.get("sync") == "ssp" and row.get("staleness"):
                label += "(%s)" % row["staleness"]
    else:
        label = topo
    if row.get("fp16") == "1":
        label += " fp16"
    return label


def aggregate(rows, value, by=("label", "workers"), where=None):
    """{key: (median, min, max, n)} of value over the successful rows (and where(r), if given).
    value: a column, or a function of the row (a number or None); by: columns (label: the
    config_label, the others as integers: (label, workers)), or a function of the row (the
    demo's own label column, a repeat)."""
    groups = {}
    for r in rows:
        if r.get("error") or (where is not None and not where(r)):
            continue
        v = value(r) if callable(value) else fnum(r.get(value))
        if v is None:
            continue
        k = by(r) if callable(by) else tuple(config_label(r) if b == "label" else int(fnum(r.get(b), 0)) for b in by)
        groups.setdefault(k, []).append(v)
    return {k: (statistics.median(v), min(v), max(v), len(v)) for k, v in groups.items()}


def ranking(table):
    """{N: [(median, label), ...] fastest first} of an aggregate keyed (label, N): at each worker
    count, who won (the verdicts of psring summary and psring demo)."""
    out = {}
    for (label, n), v in table.items():
        out.setdefault(n, []).append((v[0], label))
    return {n: sorted(at, reverse=True) for n, at in out.items()}

