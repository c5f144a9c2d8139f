"""costmodel.py: the textbook alpha-beta-gamma cost model of one data-parallel training step, for
the ring allreduce and the parameter server, and the loader of its calibration (alpha, beta,
gamma: psring model --calibrate writes it). Python 3 standard library only; no fitting.

    alpha  seconds per message (latency)          from one ping-pong between two hosts
    beta   seconds per byte on a host's link       8 / link rate (bits/s), each direction
    gamma  seconds per byte reduced (a + b)        from one reduce pass on one host
    n      bytes of the gradient (params x 4, or x 2 with fp16)
    N      workers, one per host

Links are full duplex: a host sends and receives at the full rate at once, so an exchange takes
as long as the busiest direction of the busiest link (BytePS, Jiang et al., OSDI 2020, section 3).

  ring allreduce      2(N-1) alpha + 2(N-1)/N n beta + (N-1)/N n gamma
  PS, k servers on    worker link: n out, n in;  server link: N n / k in and out
    their own hosts   -> 2N alpha + (max(n, N n / k) + max(N, k) slice) beta + N n / k gamma
  PS, S shards        a host with a shard receives the other N-1 workers' pushes of it, (N-1) n/S,
    colocated with      and, as a worker, pulls the S-1 shards it does not hold: (N+S-2) n/S
    the workers       -> 2N alpha + (max(n, (N+S-2) n / S) + slice) beta + N n / S gamma
                         (S = N: 2(N-1)/N n, the ring's bytes; S = 1 on its own host: N n)
                      Every server takes a message from each of the N workers and answers it:
                      2N messages through the busiest server, as 2(N-1) through every ring host.

The step (BSP): compute of the slowest host + the exchange that is not hidden. Compute is one
worker's step on one full core (what a real 1-core host computes), measured step by step: equal
hosts differ from step to step, and BSP waits for the slowest of N draws, E[max of N] - mean. A
straggler's compute stretches by 1/(its CPU share). Async PS: a worker waits for nobody. SSP
with staleness s: over E steps between the workers' synchronizations a fast worker takes
max(E a, (E - s) b), a and b the fast and the slow worker's steps; with none, b.

At cluster scale (cluster_parts, below): H hosts of G GPUs, the ring, the hierarchical ring, a
tree and the PS, the exchange under backward in buckets; G = 1, no overlap and a server that sums
after its link give the above."""
import math
import statistics

from . import results


def ring_time(N, n, alpha, beta, gamma):
    """Seconds of one ring allreduce of n bytes over N hosts (0 for one host)."""
    if N <= 1:
        return 0.0
    return 2 * (N - 1) * alpha + 2 * (N - 1) / N * n * beta + (N - 1) / N * n * gamma


def ps_bytes(N, n, S=0, k=0, x=None):
    """Bytes on the busiest direction of the busiest link in one BSP push + pull.
    k > 0: k server hosts take the share x of the gradient (default all of it); the worker hosts
    sum the rest among themselves, one colocated shard each (BytePS' placement).
    k = 0: S shards colocated with the first S workers."""
    if k > 0:
        x = 1.0 if x is None else x
        worker = x * n + 2 * (N - 1) * (1 - x) * n / N
        return max(worker, N * x * n / k)
    holder = (N + S - 2) * n / S          # pushes of its shard in, pulls of the other shards in
    return holder if S == N else max(holder, n)   # a host without a shard pulls all n


def ps_time(N, n, alpha, beta, gamma, S=0, k=0, x=None, slice_bytes=0):
    """Seconds of one BSP push + pull of n bytes. The server answers each slice once it has it from
    every worker, so pulls overlap later pushes: the busiest direction's bytes plus the pipeline's
    fill, while no answer can leave. A server host's link idles until the first slice is in from
    every worker: N slices through its link, or k through a worker's (one to each server). A
    colocated server's link carries its worker's pushes meanwhile: one slice. Whole shards
    (slice_bytes 0, or as big) make the fill the whole push: twice the busiest direction."""
    x = 1.0 if x is None else x
    shard = x * n / k if k > 0 else n / S
    summed = N * shard                               # bytes the busiest server adds up
    busiest = ps_bytes(N, n, S, k, x)
    piece = min(slice_bytes, shard) if slice_bytes > 0 else shard
    fill = min(piece * (max(N, k) if k > 0 else 1), busiest) if slice_bytes > 0 else busiest
    return 2 * N * alpha + (busiest + fill) * beta + summed * gamma


def slice_bytes(chunk_kb, wire_bytes_per_param):
    """Bytes on the wire of one PS slice: the trainer's --ps-chunk-kb counts KiB of float32
    parameters, so with fp16 on the wire (2 bytes a parameter) a 64 KiB slice is 32 KiB."""
    return chunk_kb * 1024 / 4 * wire_bytes_per_param


def byteps_optimum(N, k, n, B):
    """BytePS' t_opt = 2 N (N-1) n / ((N^2 + k N - 2k) B): the best x for N workers and k server
    hosts (B bytes/s). ps_bytes at x* = 2k(N-1) / (N^2 + kN - 2k) gives the same (tested)."""
    return 2 * N * (N - 1) * n / ((N * N + k * N - 2 * k) * B)


def byteps_x(N, k):
    """The share of the gradient BytePS sends to the k server hosts (k <= N; more is never needed)."""
    return min(1.0, 2 * k * (N - 1) / (N * N + k * N - 2 * k))


def exchange_time(topology, N, n, cal, S=0, k=0):
    a, b, g = cal["alpha_s"], cal["beta_s_per_byte"], cal["gamma_s_per_byte"]
    if topology == "ring":
        return ring_time(N, n, a, b, g)
    if topology == "ps":
        return ps_time(N, n, a, b, g, S=S, k=k, slice_bytes=cal.get("slice_bytes", 0))
    raise ValueError("unknown topology '%s' (ring or ps)" % topology)


def slowest_of(samples, N):
    """E[max of N independent draws] - mean, over one host's per-step compute times (seconds).
    Several runs' samples (a list of lists): the median of the runs' estimates, as every time is
    the median of its repeats; a step that something else on the machine slowed 2x is not the
    hosts' own noise, and one such sample in 42 added 5.8 ms at N=8."""
    if samples and isinstance(samples[0], (list, tuple)):
        runs = [slowest_of(s, N) for s in samples if s]
        return statistics.median(runs) if runs else 0.0
    if N <= 1 or not samples:
        return 0.0
    xs, m = sorted(samples), len(samples)
    emax = sum(x * (((i + 1) / m) ** N - (i / m) ** N) for i, x in enumerate(xs))
    return emax - sum(xs) / m


def step_time(topology, N, n, cal, compute_s, S=0, k=0, sync="bsp", staleness=0, slow_share=1.0,
              hidden_s=0.0, samples=(), sync_every=0):
    """Seconds of one step: compute of the host everybody waits for + the exposed exchange.
    slow_share < 1: one worker host has that fraction of the others' CPU (a straggler); hidden_s:
    exchange hidden behind backward (--overlap); samples: one host's per-step compute times;
    sync_every: ssp, steps between the workers' synchronizations (0: none). A fast worker's view
    under async and ssp. Returns (step, exchange, wait)."""
    ex = max(exchange_time(topology, N, n, cal, S, k) - hidden_s, 0.0)
    slow = compute_s / slow_share
    if topology == "ps" and sync == "async":
        wait = 0.0                              # the fast workers' own pace
    elif topology == "ps" and sync == "ssp":
        a, b, E = compute_s + ex, slow + ex, sync_every
        wait = max((b if E <= 0 else (E - staleness) * b / E) - a, 0.0) if N > 1 else 0.0
    else:
        wait = slow - compute_s + slowest_of(samples, N) if N > 1 else 0.0
    return compute_s + wait + ex, ex, wait



# ---- at cluster scale: H hosts of G GPUs each (N = G H), beta_i one GPU's intra-host link -------
# Every message costs alpha, inside a host too; with G = 1 each formula is the flat one above.
BACKWARD_SHARE = 2 / 3   # of a step's compute: backward costs twice the forward (Kaplan et al., Scaling
                         # Laws for Neural Language Models, 2020, section 2.1: 6 flops per parameter, 4 backward)
TOPOLOGIES = ("ring", "hier", "tree", "ps")


def cluster_parts(topo, H, G, n, alpha, beta, beta_i, gamma, S=0, k=0, slice_bytes=0, server_cores=0):
    """(latency, bytes, summing) seconds of one exchange of n bytes among G x H GPUs; the sum is its time.
    ring  flat over all N GPUs, ranked host by host (NCCL's order): every edge carries 2(N-1)/N n at
          once; a host's NIC carries one edge each way (a ring in any other order would cross it
          up to G times), the other G-1 edges are intra-host, so the slowest edge sets the pace:
          2(N-1) alpha + 2(N-1)/N n max(beta, beta_i) + (N-1)/N n gamma
    hier  Horovod's hierarchical allreduce (Sergeev, Del Balso 2018): reduce-scatter inside the host,
          G rings of n/G between the hosts sharing the NIC (2(H-1)/H n through it), allgather
          inside, one after the other: 2(G-1 + H-1) alpha + 2(G-1)/G n beta_i + 2(H-1)/H n beta
          + (N-1)/N n gamma (the adds of n/G over H hosts and of n over G GPUs)
    tree  NCCL's double binary tree (Sanders, Speck, Traeff 2009; NCCL 2.4, Jeaugey 2019): two trees
          over the hosts take n/2 each; a host is inner in one (1.5 n in and out) and a leaf in
          the other (0.5 n): 2n each way through its NIC, pipelined in chunks, so the depth, up and
          down log2 H plus a chain of G inside the host, is paid once:
          2(log2 H + G-1) alpha + 2 n max(beta, beta_i) + n gamma
    ps    BytePS' setting (Jiang et al., OSDI 2020): the host's G GPUs reduce into one copy, which
          its NIC pushes and pulls, pipelined with the push by partitions: ps_time over H hosts,
          or the intra-host reduce and broadcast 2(G-1)/G n beta_i where that is longer.
          server_cores c = 0: a server sums on the core that also runs its link, after it (ps_time,
          as the demo's 1-core hosts do). c > 0: BytePS' server (Jiang et al. sum on CPUs with AVX;
          github.com/bytedance/byteps byteps/server/server.cc, as of c1b20f8, 2019-11-29, the commit
          that published its BERT-large point, answers a push at once and queues its sum, a slice
          of at most BYTEPS_PARTITION_BYTES, to one of BYTEPS_SERVER_ENGINE_THREAD engine threads,
          4 by default, docs/env.md), so the sums run while the link carries the next slices:
          latency + max(link, summed gamma / c) + one slice through the faster stage (the last
          slice's sum, or the first slice's arrival)"""
    N = G * H
    if N <= 1:
        return (0.0, 0.0, 0.0)
    edge = max((beta,) * (H > 1) + (beta_i,) * (G > 1))   # the slowest link a pipelined edge crosses
    if topo == "ring":
        return (2 * (N - 1) * alpha, 2 * (N - 1) / N * n * edge, (N - 1) / N * n * gamma)
    if topo == "hier":
        return (2 * (G - 1 + H - 1) * alpha, 2 * (G - 1) / G * n * beta_i + 2 * (H - 1) / H * n * beta, (N - 1) / N * n * gamma)
    if topo == "tree":
        return (2 * (math.log2(H) + G - 1) * alpha, 2 * n * edge, n * gamma)
    if topo == "ps":
        intra = 2 * (G - 1) / G * n * beta_i
        x = ps_time(H, n, alpha, 0.0, 0.0, S, k, slice_bytes=slice_bytes)   # its three terms one by one
        b = ps_time(H, n, 0.0, beta, 0.0, S, k, slice_bytes=slice_bytes)
        g = ps_time(H, n, 0.0, 0.0, gamma, S, k, slice_bytes=slice_bytes)
        if server_cores > 0:   # the sums pipelined with the link: the slower stage, and one slice of the other
            shard = n / k if k > 0 else n / S
            piece = min(slice_bytes, shard) if slice_bytes > 0 else shard
            g /= server_cores
            b, g = (b, piece * gamma / server_cores) if b >= g else (piece * beta, g)
        return (x, b, g) if x + b + g >= intra else (0.0, intra, 0.0)
    raise ValueError("unknown topology '%s' (%s)" % (topo, ", ".join(TOPOLOGIES)))


def exposed(total, backward, overlap=0.0, buckets=1):
    """Seconds of an exchange of total seconds that backward (seconds) leaves exposed. Buckets: m
    equal buckets, bucket j ready at j backward / m (gradients appear evenly), each exchanged in
    total / m, back to back; the last one ends at the latest of backward + total / m (the last
    bucket) and backward / m + total (the queue never drained). Else the fraction overlap of the
    exchange is hidden, at most backward."""
    if buckets > 1:
        return max(total / buckets, total - backward * (buckets - 1) / buckets)
    return total - min(overlap * total, backward)


def cluster_step(topo, H, G, n, compute_s, alpha, beta, beta_i, gamma, S=0, k=0, slice_bytes=0, overlap=0.0, bucket_bytes=0,
                 server_cores=0):
    """(step, exchange, exposed, parts) seconds of one synchronous step on G x H GPUs: compute plus
    the exposed exchange; in buckets each pays its own messages (parts: m x one bucket's)."""
    m = max(1, math.ceil(n / bucket_bytes)) if bucket_bytes > 0 else 1
    parts = [m * p for p in cluster_parts(topo, H, G, n / m, alpha, beta, beta_i, gamma, S, k, slice_bytes, server_cores)]
    total = sum(parts)
    ex = exposed(total, BACKWARD_SHARE * compute_s, overlap, m)
    return compute_s + ex, total, ex, parts


def accumulated_step(accumulation, topo, H, G, n, compute_s, *args, **kw):
    """cluster_step when each exchange follows `accumulation` micro-batches of compute_s each (gradient
    accumulation): the first accumulation - 1 only add into the gradients, so only the last one's backward can
    hide the exchange. (step, exchange, exposed, parts) seconds; the step is accumulation micro-batches long."""
    step, total, ex, parts = cluster_step(topo, H, G, n, compute_s, *args, **kw)
    return step + (accumulation - 1) * compute_s, total, ex, parts


# The calibration file (psring model --calibrate writes it): one row of these columns.
CAL_FORMAT = "psring-model-2"
CAL_COLUMNS = ["format", "alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "link_rate_bps", "dilation"]


def calibration_load(path):
    """{alpha_s, beta_s_per_byte, gamma_s_per_byte, link_rate_bps, dilation} of a calibration
    file, read by results.py's CSV reader: the one loader (psring model, the demo's figures).
    ValueError '--calibration PATH: what is wrong' for a file that cannot be used."""
    again = "(make one with psring model --calibrate)"
    try:
        open(path, "rb").close()   # missing, a folder, unreadable: read_rows would say nothing
        rows = results.read_rows(path)
    except OSError as e:
        raise ValueError("--calibration %s: %s %s" % (path, e.strerror, again))
    except results.CsvError:
        raise ValueError("--calibration %s: not a CSV text file %s" % (path, again))
    if len(rows) != 1 or rows[0].get("format") != CAL_FORMAT:
        raise ValueError("--calibration %s: not a %s calibration (an older format?): run psring model --calibrate" % (path, CAL_FORMAT))
    try:
        cal = {c: float(rows[0][c]) for c in CAL_COLUMNS[1:]}
    except (KeyError, TypeError, ValueError):
        raise ValueError("--calibration %s: a value is missing or not a number" % path)
    if not (all(map(math.isfinite, cal.values())) and cal["beta_s_per_byte"] > 0 and min(cal["alpha_s"], cal["gamma_s_per_byte"]) >= 0):
        raise ValueError("--calibration %s: alpha and gamma must be >= 0 and beta > 0, all finite" % path)
    return cal
