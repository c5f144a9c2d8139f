"""pslib.py: what sweep, plot and model share: the results CSV (RFC 4180, read and appended under
an flock, a different header refused), the run key used to resume, median/min/max aggregation and
the alpha-beta-gamma cost model. Python 3 standard library only. It does not run anything."""
import csv
import fcntl
import io
import math
import os
import statistics

# the trainer's columns (src/train/metrics.c) plus what the sweep adds
EXTRA_COLUMNS = ["repeat", "sweep_id", "error", "command"]
KEY_COLUMNS = ["sweep_id", "repeat", "command"]


class CsvError(Exception):
    pass


def read_rows(path):
    """All rows of a results CSV as dicts (empty list when the file is missing or empty)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames is None:
            return []
        rows = []
        for i, row in enumerate(r, start=2):
            if None in row:  # more fields than the header: a corrupted line
                raise CsvError("%s:%d: %d fields, the header has %d" % (path, i, len(r.fieldnames) + len(row[None]), len(r.fieldnames)))
            rows.append(row)
        return rows


def header_of(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path, newline="") as f:
        return next(csv.reader(f), None)


def format_row(columns, row):
    """One CSV line (with newline) of row's values in column order; missing values are empty."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["" if row.get(c) is None else str(row.get(c)) for c in columns])
    return buf.getvalue()


def append_row(path, columns, row):
    """Appends row, writing the header if the file is new; refuses a file with another header."""
    with open(path, "a+", newline="") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            f.write(format_row(columns, dict(zip(columns, columns))))
        else:
            f.seek(0)
            have = next(csv.reader([f.readline()]), [])
            if have != list(columns):
                raise CsvError("%s: existing file has a different header; use a new file" % path)
            f.seek(0, os.SEEK_END)
        f.write(format_row(columns, row))
        f.flush()
        os.fsync(f.fileno())


def run_key(row):
    return tuple(row.get(c, "") for c in KEY_COLUMNS)


def fnum(v, default=None):
    try:
        x = float(v)
        return x if math.isfinite(x) else default
    except (TypeError, ValueError):
        return default


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


def aggregate(rows, value, by=("label", "workers")):
    """{(label, workers): (median, min, max, n)} of column value over successful rows."""
    groups = {}
    for r in rows:
        if r.get("error"):
            continue
        v = fnum(r.get(value))
        if v is None:
            continue
        k = tuple(config_label(r) if b == "label" else int(fnum(r.get(b), 0)) for b in by)
        groups.setdefault(k, []).append(v)
    return {k: (statistics.median(v), min(v), max(v), len(v)) for k, v in groups.items()}


# ---- the cost model -----------------------------------------------------------------------------
# All times in seconds, sizes in bytes. n is the gradient size in bytes on the wire (params x 4,
# or x 2 with fp16); N workers; S servers. alpha: per-message latency; beta: seconds per byte on a
# link; gamma: seconds per byte to reduce (add); delta: seconds per byte for the optimizer update.
# share: CPU oversubscription factor max(1, processes / cores): on one host every process's
# copies and additions compete for the cores, so each term stretches by it.

def ring_time(N, n, alpha, beta, gamma, share=1.0):
    """Ring allreduce: 2(N-1) alpha + 2(N-1)/N n beta + (N-1)/N n gamma."""
    if N <= 1:
        return 0.0
    return share * (2 * (N - 1) * alpha + 2.0 * (N - 1) / N * n * beta + (N - 1.0) / N * n * gamma)


def hier_time(H, L, n, alpha, beta, gamma, alpha_intra, beta_intra):
    """--hierarchical on H hosts of L ranks: MPI_Reduce to the host root (binomial tree:
    ceil(log2 L) rounds of alpha_i + n beta_i + n gamma), psring's ring between the H roots over
    the host links (ring_time(H, ...)), MPI_Bcast inside the host (ceil(log2 L) (alpha_i +
    n beta_i)). Against the flat ring over all H L ranks, which crosses every host link at each of
    its 2(HL-1) steps and so runs at the link's beta: ring_time(H L, ...) = 2(HL-1) alpha +
    2(HL-1)/(HL) n beta + ...; the hierarchical one moves 2(H-1)/H n over each link instead and
    pays 2(H-1) link latencies instead of 2(HL-1), for two intra-host passes of n."""
    rounds = math.ceil(math.log2(L)) if L > 1 else 0
    intra = rounds * (2 * alpha_intra + 2 * n * beta_intra + n * gamma)
    return intra + ring_time(H, n, alpha, beta, gamma)


def ps_time(N, S, n, alpha, beta, gamma, delta, sync="bsp", share=1.0):
    """Parameter server, S servers each holding n/S bytes, N workers, per worker step.

    bsp: push then pull, each limited by the busier end of a link: the worker's own link carries
    n each way, each server's link N n / S each way, so transfer = 2 max(n, N n / S) beta; plus
    the latency of S messages each way (2 S alpha, sent back to back by the worker), the server's
    aggregation of N shards (N n/S gamma) and its optimizer on n/S bytes (n/S delta).
    async/ssp: no barrier, so no aggregation wait: a step costs the larger of the worker's own path
    (latency, n each way, the apply of its shard) and its turn at a server that serves N workers
    one after the other: N (2 n/S beta + n/S (gamma + delta)).
    """
    if N < 1 or S < 1:
        raise ValueError("N and S must be >= 1")
    shard = float(n) / S
    lat = 2 * S * alpha
    if sync == "bsp":
        xfer = 2 * max(n, N * shard) * beta
        return share * (lat + xfer + N * shard * gamma + shard * delta)
    worker_path = lat + 2 * n * beta + shard * (gamma + delta)
    server_load = N * (2 * shard * beta + shard * (gamma + delta))
    return share * max(worker_path, server_load)


def ring_exchange_time(N, n, alpha, beta, gamma, share=1.0):
    """What psring's ring exchange does per step: the allreduce plus one pass over the n bytes to
    divide the sum by N (the average), priced like the reduction: ring_time + share n gamma."""
    if N <= 1:
        return 0.0
    return ring_time(N, n, alpha, beta, gamma, share) + share * n * gamma


def ring_share(P, cores, f_bench, p_bench):
    """Time-slicing factor of a ring collective on P busy-polling ranks sharing `cores` cores.
    P <= cores: 1 (every rank has a core). Above, f_bench is the factor measured on p_bench ranks
    (a micro-benchmark: the collective's time / its model time without slicing), carried to P
    with the co-scheduling argument: a hop moves data only while both its ends hold a core, which
    with P ranks on c cores is a fraction (c/P)((c-1)/(P-1)) of the time, so
      share(P) = f_bench x [P (P-1)] / [p_bench (p_bench-1)]   (for one core: f_bench x P/p_bench)"""
    if P <= cores:
        return 1.0
    if cores <= 1:
        return f_bench * float(P) / p_bench
    return f_bench * (P * (P - 1.0)) / (p_bench * (p_bench - 1.0))


def host_beta(K, betas):
    """Seconds per byte through a server on one host with K concurrent clients. betas maps the
    calibrated client counts (1, 2, 4) to beta_host_kK; in between it interpolates linearly in K,
    beyond the largest it keeps the largest's (the cores are saturated by then)."""
    ks = sorted(betas)
    if K <= ks[0]:
        return betas[ks[0]]
    for lo, hi in zip(ks, ks[1:]):
        if K <= hi:
            return betas[lo] + (betas[hi] - betas[lo]) * (K - lo) / float(hi - lo)
    return betas[ks[-1]]


def last_slice(shard, slice_bytes):
    """Bytes of a shard's last bsp slice (--ps-chunk-kb): the shard itself when unsliced (0) or
    not larger than a slice, else what is left after the full slices."""
    if not slice_bytes or shard <= slice_bytes:
        return float(shard)
    rest = math.fmod(shard, slice_bytes)
    return float(rest if rest > 0 else slice_bytes)


def ps_host_time(N, S, n, alpha, beta_host, gamma, delta, slice_bytes=0):
    """Parameter server, bsp, every process on one host: the N pushes and N pulls (2 N n bytes)
    go through the host's cores, which copy concurrent ZeroMQ streams at an aggregate
    1/beta_host (calibrated with N concurrent clients moving the same slices), whatever S is: S
    server processes split the bytes but not the cores. Plus 2 S alpha for the messages, the
    aggregation of the N shards (N gamma) and the apply (delta), servers working in parallel, and
    the worker's copy of the pulled parameters into its own buffer (n gamma, priced like one pass
    of the sum). With slices the server sums, applies and answers slice k while slice k+1 is on
    the wire, so only the last slice's work is exposed (s = last_slice(n/S, slice_bytes); the
    whole shard n/S when unsliced):
      2 S alpha + 2 N n beta_host + N s gamma + s delta + n gamma"""
    if N < 1 or S < 1:
        raise ValueError("N and S must be >= 1")
    s = last_slice(float(n) / S, slice_bytes)
    return 2 * S * alpha + 2.0 * N * n * beta_host + N * s * gamma + s * delta + n * gamma


def ring_shm_time(N, n, alpha_shm, beta_shm, share=1.0):
    """psring's ring on one host, gradients in a shared window (the load/store path, ring_shm.c):
    two counter waits per call (alpha_shm) and each rank loading its segment's N partials and
    storing the sum into all N buffers, 2 x n bytes of memory traffic for any N, priced per byte of
    gradient (beta_shm, both calibrated at N = 2 after the real forward + backward, on the
    averaging call psring-train makes, whose owner multiplies by 1/N while the sum is in L1, so no
    pass of its own divides); no messages:
      share (alpha_shm + n beta_shm)"""
    if N <= 1:
        return 0.0
    return share * (alpha_shm + n * beta_shm)


def ps_bench_time(N, n, beta_ps):
    """Parameter server, bsp, every process on one host, priced from the project's own PS code
    (psring-bench-ps: N workers and S servers as processes, worker.c's sliced push and pull,
    server.c's framing, sum and SGD apply): beta_ps is that benchmark's round time per byte moved
    (2 N n bytes per round with N workers) at this N and S, so the copies, framing, apply and the
    N + S processes sharing the cores are all inside it:  2 N n beta_ps"""
    if N < 1:
        raise ValueError("N must be >= 1")
    return 2.0 * N * n * beta_ps


def allreduce_bytes(N, n):
    """Bytes one ring worker sends per step (and receives): 2(N-1)/N n."""
    return 0.0 if N <= 1 else 2.0 * (N - 1) / N * n


def ps_server_bytes(N, S, n):
    """Bytes in + out of one server per step (bsp): N workers push and pull n/S each."""
    return 2.0 * N * n / S
