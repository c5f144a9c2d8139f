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
tree and the PS, the exchange under backward in a framework's buckets; G = 1, none hidden and a
server that sums after its link give the above."""
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


def exchange_time(topology, N, n, cal, S=0, k=0, x=None):
    a, b, g = cal["alpha_s"], cal["beta_s_per_byte"], cal["gamma_s_per_byte"]
    if topology == "ring":
        return ring_time(N, n, a, b, g)
    if topology == "ps":
        return ps_time(N, n, a, b, g, S=S, k=k, x=x, slice_bytes=cal.get("slice_bytes", 0))
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
              buckets=1, samples=(), sync_every=0, x=None):
    """Seconds of one step: compute of the host everybody waits for + the exposed exchange.
    slow_share < 1: one worker host has that fraction of the others' CPU (a straggler); buckets:
    the exchange's under backward (exposed; --overlap: one a layer); samples: one host's compute times;
    sync_every: ssp, steps between the workers' synchronizations (0: none); x: the share of the
    gradient on the k server hosts (BytePS' placement; None: all of it). A fast worker's view
    under async and ssp. Returns (step, exchange, wait)."""
    ex = exposed(exchange_time(topology, N, n, cal, S, k, x), BACKWARD_SHARE * compute_s, buckets)
    slow = compute_s / slow_share
    if topology == "ps" and sync == "async":
        wait = 0.0                              # the fast workers' own pace
    elif topology == "ps" and sync == "ssp":
        a, b, E = compute_s + ex, slow + ex, sync_every
        wait = max((b if E <= 0 else (E - staleness) * b / E) - a, 0.0) if N > 1 else 0.0
    else:
        wait = slow - compute_s + slowest_of(samples, N) if N > 1 else 0.0
    return compute_s + wait + ex, ex, wait


def row_time(r, cal, compute_s, samples=()):
    """(step, exchange, wait) seconds of a demo CSV row's configuration (its columns topology,
    workers, servers, server_hosts, params, fp16, ps_chunk_kb, sync, staleness, straggler) on
    compute_s, one worker's step alone. BytePS' placement (--byteps k: --servers N + k, k server
    hosts) puts x* on the k; under ssp the workers never meet (a sample budget): the slowest's pace.
    --overlap (overlap 1): its buckets (release) under backward."""
    N, k = int(r["workers"]), int(r.get("server_hosts") or 0)
    per = 2 if r.get("fp16") == "1" else 4
    n = float(r["params"]) * per
    c = dict(cal, slice_bytes=slice_bytes(float(r.get("ps_chunk_kb") or 1024), per))   # 1024: the trainer's default
    x = byteps_x(N, k) if k > 0 and int(r.get("servers") or 0) == N + k else None
    return step_time(r["topology"], N, n, c, compute_s, 0 if k > 0 else int(r.get("servers") or 0), k, r.get("sync") or "bsp",
                     int(r.get("staleness") or 0), float(r.get("straggler") or 1) or 1, samples=samples, sync_every=0, x=x,
                     buckets=release(r["layers"], r["topology"]) if r.get("overlap") == "1" else 1)


# ---- at cluster scale: H hosts of G GPUs each (N = G H), beta_i one GPU's intra-host link -------
# Every message costs alpha, inside a host too; with G = 1 each formula is the flat one above.
TOPOLOGIES = ("ring", "hier", "hier-host", "tree", "innet", "ps", "byteps")
SERVERS_SUM = ("ps", "byteps")   # a CPU sums: gamma_server, not the GPUs' gamma_gpu


def gamma_for(topo):
    """ns a byte summed in a topology's exchange: a server's CPU (the PS designs), the hosts' CPUs on
    fp16 (hier-host: Horovod's float16_sum), else the GPUs (inside the copy)."""
    if topo in SERVERS_SUM:
        return const("gamma_server")
    return const("gamma_cpu_fp16") if topo == "hier-host" else const("gamma_gpu")


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
    hier-host  the same as Horovod 0.16.2 ran it with HOROVOD_HIERARCHICAL_ALLREDUCE=1
          (horovod/common/ops/nccl_operations.cc): ncclReduceScatter, each GPU's n/G copied to host
          memory over PCIe (intra_pcie3) and back, MPI_Allreduce between the hosts on the CPUs, fp16
          summed by float16_sum (half.cc: gamma_cpu_fp16, the G local ranks in parallel), ncclAllGather:
          hier's terms + 2 n/G beta_pcie + (H-1)/H n/G gamma_cpu_fp16 instead of the GPUs' sum
    tree  NCCL's double binary tree (Sanders, Speck, Traeff 2009; NCCL 2.4, Jeaugey 2019): two trees
          over the hosts take n/2 each; a host is inner in one (1.5 n in and out) and a leaf in
          the other (0.5 n): 2n each way through its NIC, pipelined in chunks, so the depth, up and
          down log2 H plus a chain of G inside the host, is paid once:
          2(log2 H + G-1) alpha + 2 n max(beta, beta_i) + n gamma
    innet in-network aggregation (NVIDIA SHARP; SwitchML, Sapio et al., NSDI 2021; ATP, Lao et al., NSDI 2021): hier's reduce
          in the host, its copy up to the switch, which sums, and the sum back: n each way through the NIC at once, one message
          and a pass through the switch each way: 2(G-1 + 1) alpha + 2 switch_pass + 2(G-1)/G n beta_i + n beta + (G-1)/G n gamma
    ps    BytePS' setting (Jiang et al., OSDI 2020): the host's G GPUs reduce into one copy, which
          its NIC pushes and pulls, pipelined by partitions: ps_time over H hosts, or the intra-host
          reduce and broadcast 2(G-1)/G n beta_i where longer. server_cores c = 0: a server sums on
          its link's core, after it (ps_time; the demo's 1-core hosts). c > 0: BytePS' server
          (bytedance/byteps c1b20f8, 2019-11-29, byteps/server/server.cc: a push answered at once,
          its sum queued to one of BYTEPS_SERVER_ENGINE_THREAD threads, 4 by default) sums while
          the link carries the next slices: latency + max(link, summed gamma / c) + one slice
          through the faster stage
    byteps  the ps with BytePS' placement (Jiang et al., section 3.2): a server on every worker host, and
          the k spare hosts hold the share x* = byteps_x(H, k) of the gradient (k = 0: the colocated
          servers alone; k >= H: x* = 1, the ps on k server hosts)"""
    N = G * H
    if N <= 1:
        return (0.0, 0.0, 0.0)
    edge = max((beta,) * (H > 1) + (beta_i,) * (G > 1))   # the slowest link a pipelined edge crosses
    if topo == "ring":
        return (2 * (N - 1) * alpha, 2 * (N - 1) / N * n * edge, (N - 1) / N * n * gamma)
    if topo == "hier":
        return (2 * (G - 1 + H - 1) * alpha, 2 * (G - 1) / G * n * beta_i + 2 * (H - 1) / H * n * beta, (N - 1) / N * n * gamma)
    if topo == "hier-host":
        s = n / G   # one local rank's share, through its PCIe link both ways
        return (2 * (G - 1 + H - 1) * alpha, 2 * (G - 1) / G * n * beta_i + 2 * s * 8 / (const("intra_pcie3") * 1e9)
                + 2 * (H - 1) / H * n * beta, (H - 1) / H * s * gamma)
    if topo == "innet":   # one host: hier's reduce and broadcast inside it alone
        return (2 * (G - 1 + (H > 1)) * alpha + 2 * (H > 1) * const("switch_pass") * 1e-6, 2 * (G - 1) / G * n * beta_i + (H > 1) * n * beta,
                (G - 1) / G * n * gamma)
    if topo == "tree":
        return (2 * (math.log2(H) + G - 1) * alpha, 2 * n * edge, n * gamma)
    if topo in SERVERS_SUM:   # BytePS' placement: servers on every worker host, and x* on the k spare ones
        x = byteps_x(H, k) if topo == "byteps" and k > 0 else None
        return ps_parts(H, G, n, alpha, beta, beta_i, gamma, H if topo == "byteps" else S, k, slice_bytes, server_cores, x)
    raise ValueError("unknown topology '%s' (%s)" % (topo, ", ".join(TOPOLOGIES)))


def ps_parts(H, G, n, alpha, beta, beta_i, gamma, S=0, k=0, slice_bytes=0, server_cores=0, x=None):
    """cluster_parts' ps, the share x (None: all) of the gradient on the k server hosts (ps_time's x)."""
    intra = 2 * (G - 1) / G * n * beta_i
    lat, b, g = (ps_time(H, n, *t, S, k, x, slice_bytes) for t in ((alpha, 0.0, 0.0), (0.0, beta, 0.0), (0.0, 0.0, gamma)))   # one term each
    if server_cores > 0:   # the sums pipelined with the link: the slower stage, and one slice of the other
        shard = (1.0 if x is None else x) * n / k if k > 0 else n / S
        piece = min(slice_bytes, shard) if slice_bytes > 0 else shard
        g /= server_cores
        b, g = (b, piece * gamma / server_cores) if b >= g else (piece * beta, g)
    return (lat, b, g) if lat + b + g >= intra else (0.0, intra, 0.0)


def exposed(total, backward, buckets=1):
    """Seconds of a total-second exchange that backward leaves exposed, gradients appearing evenly: m equal buckets (closed form:
    the first's start then all back to back, or the last one alone) or each one's share in release order, each sent once backward
    has made it, in its share of total, back to back; unbounded m (pieces too small to count): what outlasts backward."""
    if buckets == math.inf or isinstance(buckets, int):
        return max(total - backward, 0.0) if buckets == math.inf else max(backward / buckets + total, backward + total / buckets) - backward
    end, made = 0.0, 0.0
    for share in buckets:
        made += share
        end = max(end, backward * made) + total * share
    return max(end - backward, 0.0)


def release(layers, topology):
    """Each bucket's share of the gradient as this trainer's --overlap sends them, the --layers last first:
    the PS a layer at a time, the ring fusing layers until a bucket holds --bucket-mb (ring_overlap.c)."""
    dims = [int(x) for x in str(layers).split(",")]
    sizes = [a * b + b for a, b in zip(dims, dims[1:])][::-1]
    if topology == "ps":
        return [x / sum(sizes) for x in sizes]
    cap, out, open_ = const("bucket_ring_mib") * 2 ** 20 / 4, [], 0
    for x in sizes:
        open_ += x
        if open_ >= cap:
            out, open_ = out + [open_], 0
    return [x / sum(sizes) for x in out + [open_] * (open_ > 0)]


# ---- when the exchange starts: one overlap model, a framework's buckets (name: its bucket's constant
# or None, pieces too small to count; release) -------------------------------------------------------
#   backward |===================================|       fused: filled buckets, one collective at a time,
#   fused    |     [b1] [b2] [b3] ...  [bm]|            each its own messages (Horovod, DDP); streamed:
#   streamed |  >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>|>>    pieces pipeline as one exchange (BytePS, TF's PS)
FRAMEWORKS = {"none": (None, "after"), "ddp": ("bucket_mib", "fused"), "horovod": ("fusion_horovod", "fused"),
              "byteps": ("partition_byteps", "streamed"), "tf-ps": (None, "streamed")}


def buckets(framework, n, bucket_bytes=0):
    """(m buckets, each paying its own messages?) of a framework's n bytes (bucket_bytes > 0: its size)."""
    if framework not in FRAMEWORKS:
        raise ValueError("framework '%s' has no bucket defaults (%s)" % (framework, ", ".join(FRAMEWORKS)))
    name, release = FRAMEWORKS[framework]
    if release == "after":
        return 1, False
    size = bucket_bytes if bucket_bytes > 0 else const(name) * 2 ** 20 if name else 0
    return (max(1, math.ceil(n / size)) if size > 0 else math.inf), release == "fused"


def cluster_step(topo, H, G, n, compute_s, alpha, beta, beta_i, gamma, S=0, k=0, slice_bytes=0, framework="none", bucket_bytes=0,
                 server_cores=0):
    """(step, exchange, exposed, parts) seconds of one synchronous step on G x H GPUs: compute plus what backward leaves of the
    exchange in the framework's buckets (fused: m x one bucket's; BytePS streams them into one pipeline: its fill once)."""
    m, fused = buckets(framework, n, bucket_bytes)
    fused = fused and topo != "byteps"
    whole = cluster_parts(topo, H, G, n / m if fused else n, alpha, beta, beta_i, gamma, S, k, slice_bytes, server_cores)
    parts = [m * p for p in whole] if fused else list(whole)
    total = sum(parts)
    ex = exposed(total, BACKWARD_SHARE * compute_s, m)
    return compute_s + ex, total, ex, parts


def accumulated_step(accumulation, topo, H, G, n, compute_s, *args, **kw):
    """cluster_step when each exchange follows `accumulation` micro-batches of compute_s (gradient accumulation):
    only the last one's backward can hide the exchange; the step is accumulation micro-batches long."""
    step, total, ex, parts = cluster_step(topo, H, G, n, compute_s, *args, **kw)
    return step + (accumulation - 1) * compute_s, total, ex, parts


# ---- every constant the model at scale uses, with where it comes from --------------------------------
# name: (value, unit, source). A source opens with "measured:" (the command, on this testbed), "cited:"
# (file and commit, or page) or "assumed:" (and why); constants_check refuses an entry without a unit or
# source. psring model --constants prints this table; the code reads it through const(name) only.
CONSTANTS = {
    "alpha_rdma": (6.6, "us a message", "cited: NCCL 2.5.6-1 (NVIDIA/nccl 299c554, 2019-11-19) src/graph/tuning.cc, "
                   "hwLat[NET][Ring][Simple]: each of a ring allreduce's 2(N-1) steps between hosts (plus baseLat 8.4 us once, "
                   "left out)"),
    "alpha_tcp": (30.1, "us a message", "measured: psring model --calibrate (half a ring ping-pong of Open MPI over kernel "
                  "TCP between two emulated hosts, over the dilation), median of docs/results/demo-lesson-2026-11-27/"
                  "run*/calibration.csv (20.7-44.8 us): two kernel stacks and a bridge, no NIC"),
    "line_rdma": (0.88, "of the link rate", "cited: fridayswithfaraday.com/posts/nvidia-dynamo-network-optimization, tuned "
                  "NCCL (Tree, Simple, GPUDirect RDMA) at 44.1 GB/s on 400 Gb/s InfiniBand (a secondary page)"),
    "line_tcp": (1448 / 1538, "of the link rate", "cited: TCP's payload over Ethernet at MTU 1500, 1448 of 1538 bytes on the "
                 "wire a frame (IEEE 802.3: preamble 8, header 14, FCS 4, gap 12; IPv4 20, TCP 20, RFC 7323 timestamps 12): "
                 "a ceiling; measured: Open MPI's TCP at 1.06x the link time at 125 Mbit/s on this testbed "
                 "(docs/results/dilation-history-2026-11.md), 1.59x at 500 where the host's CPU fell behind: the kernel's CPU "
                 "cost at 10-40 Gbit/s is not measured here"),
    "gamma_server": (0.030, "ns/B summed", "measured: psring model --measure-gamma 4096000 (--calibrate's y += x, one "
                     "OpenBLAS thread, at BytePS' BYTEPS_PARTITION_BYTES, ymjiang/gluon-nlp 0b605ed run_bps.sh) on this "
                     "testbed's AMD EPYC guest, median of 7 runs (0.022-0.051; 0.021 at 256 KiB): a 2019 server's core is "
                     "not measured"),
    "gamma_cpu_fp16": (0.060, "ns/B summed", "assumed: Horovod 0.16.2's float16_sum (horovod/common/half.cc) converts "
                       "8 halves to floats with F16C, adds and converts back: a float's y += x per element on half the "
                       "bytes, twice gamma_server per byte (not measured here; the bound's range varies the transport, "
                       "not this: at 0.060 the sum is 2% of hier-host's exchange at 256 GPUs)"),
    "stream_tcp": (14.8, "Gbit/s one stream", "cited: what one TCP stream of NCCL's socket transport carried over kernel "
                   "TCP: github.com/NVIDIA/nccl/issues/209 (2019-04, 32 Gbit/s network, one ring: busbw 2.06 GB/s NCCL "
                   "2.3.7, 1.85 GB/s 2.4.2; 'not more than 60% of wire speed'), github.com/NVIDIA/nccl-tests/issues/83 "
                   "(2021-05, Azure 25 Gbit/s: 1.7 GB/s where ntttcp gets 25): 16.5, 14.8, 13.6 Gbit/s, the median; "
                   "the tcp line fraction at a link rate L and S streams is min(line_tcp, S stream_tcp / L)"),
    "tcp_streams": (1, "streams a connection", "cited: NCCL's socket transport's auto-detection (NVIDIA/nccl src/transport/"
                    "net_socket.cc, ncclSocketGetNsockNthread): one socket; NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD set it"),
    "tcp_streams_aws": (16, "streams a connection", "cited: the same auto-detection on AWS' NIC: 2 threads x 8 sockets (--aws)"),
    "server_cores_byteps": (4, "threads a server", "cited: BYTEPS_SERVER_ENGINE_THREAD's default, 4 (bytedance/byteps "
                            "c1b20f8, 2019-11-29, byteps/server/server.cc): --advise's and --predict's byteps servers"),
    "switch_pass": (1.0, "us a pass", "assumed: what a switch's aggregation adds to a message's alpha, once up and once "
                    "down; a round figure above a switch ASIC's sub-microsecond port-to-port latency (not measured here; "
                    "the two passes are 0.02% of ResNet-50's n beta, 9.3 ms, at 100 Gbit/s and rdma's line)"),
    "gamma_gpu": (0.0, "ns/B summed", "assumed: a GPU adds inside the kernel that copies (NCCL reduces as it copies), at "
                  "memory speed, under the link's time"),
    "backward_share": (2 / 3, "of a step's compute", "cited: Kaplan et al., Scaling Laws for Neural Language Models, 2020, "
                       "section 2.1: 6 flops per parameter, 4 of them backward"),
    "bucket_mib": (25.0, "MiB", "cited: PyTorch DistributedDataParallel's bucket_cap_mb default, 25 "
                   "(torch/nn/parallel/distributed.py)"),
    "fusion_horovod": (64.0, "MiB", "cited: tensor_fusion_threshold = 64 * 1024 * 1024 (horovod/horovod 0972bb8, 2017-08-25, "
                       "horovod/tensorflow/mpi_ops.cc); its loop slept 100 ns a cycle: HOROVOD_CYCLE_TIME's 5 ms came in 92454da (2018-06-02)"),
    "partition_byteps": (4096000 / 2 ** 20, "MiB", "cited: BytePS' partition, BytePSGlobal::_partition_bytes = 4096000 "
                         "(bytedance/byteps byteps/common/global.cc, 2019; BYTEPS_PARTITION_BYTES overrides it)"),
    "bucket_ring_mib": (4.0, "MiB of float32", "cited: this trainer's ring --bucket-mb default (src/ring/ring_topology.c)"),
    "ps_slice_kib": (1024, "KiB of float32", "cited: this trainer's --ps-chunk-kb default, PS_CHUNK_KB_DEFAULT "
                     "(src/ps/ps_topology.c); every published PS row takes it (BytePS' run used 4096000 B partitions)"),
    "intra_default": (1000.0, "Gbit/s a direction", "assumed: --predict's NVLink-class intra-host link, a round figure "
                      "below intra_nvlink-v100"),
    "intra_pcie3": (16 * 8 * 128 / 130, "Gbit/s a direction", "cited: PCI Express Base 3.0 (PCI-SIG, 2010): 8 GT/s a lane, "
                    "128b/130b encoding, x16"),
    "intra_pcie4": (16 * 16 * 128 / 130, "Gbit/s a direction", "cited: PCI Express Base 4.0 (PCI-SIG, 2017): 16 GT/s a "
                    "lane, 128b/130b encoding, x16"),
    "intra_nvlink-v100": (1200.0, "Gbit/s a direction", "cited: NVIDIA, DGX-1 With Tesla V100 System Architecture "
                          "(whitepaper, 2017): six NVLink 2.0 links of 25 GB/s each way (300 GB/s both ways together); "
                          "Dell EMC Ready Solutions for AI, Deep Learning with NVIDIA v1.0, p. 17: V100-SXM2 NVLink "
                          "uni-direction 150 GB/s"),
    "params_resnet50": (25.6e6, "parameters", "cited: torchvision's ResNet-50 (ResNet50_Weights.IMAGENET1K_V1, "
                        "25,557,032)"),
    "params_vgg16": (138e6, "parameters", "cited: Simonyan, Zisserman, ICLR 2015, Table 2 (VGG-16: 138 M)"),
    "params_bert-large": (340e6, "parameters", "cited: Devlin et al., BERT, NAACL 2019, section 3 (BERT-large: 340 M)"),
    "params_mnist-mlp": (535818, "parameters", "cited: this trainer's default --layers 784,512,256,10 (src/train/options.c), "
                         "counted: 784x512+512 + 512x256+256 + 256x10+10"),
}
TRANSPORTS = ("tcp", "rdma")


def constants_check(table):
    """The names of entries without a number, a unit, or a source that says measured, cited or assumed."""
    ok = lambda v: isinstance(v, tuple) and len(v) == 3 and isinstance(v[0], (int, float)) and str(v[1]).strip() \
        and str(v[2]).startswith(("measured:", "cited:", "assumed:")) and len(str(v[2])) > len("assumed: ")
    return [name for name, v in table.items() if not ok(v)]


def const(name):
    return CONSTANTS[name][0]


BACKWARD_SHARE = const("backward_share")   # backward's share of compute: the overlap model's


def transport(name):
    """(alpha seconds, line fraction) of a transport, tcp or rdma, from CONSTANTS (the line fraction
    before line_at caps it at a link rate)."""
    return const("alpha_" + name) * 1e-6, const("line_" + name)


def line_at(name, frac, link_bps, streams=1):
    """A transport's line fraction at link_bps: tcp's at most its streams' (stream_tcp each) of the link."""
    return min(frac, streams * const("stream_tcp") * 1e9 / link_bps) if name == "tcp" else frac


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
