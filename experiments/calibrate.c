/* calibrate.c: psring-calibrate, the micro-benchmarks behind the alpha-beta-gamma cost model
 * (experiments/model). Run with two MPI ranks:
 *
 *   mpirun -np 2 psring-calibrate [--max-bytes N] [--agg-bytes N] [--ps-chunk-kb K] [--reps R]
 *                                 [--compute mlp:LAYERS:BATCH [--chunk-kb C] [--shm-reps R]]
 *
 * It measures, on this machine:
 *   alpha_mpi, beta_mpi   MPI ping-pong (what the ring uses): one-way time = alpha + bytes x beta,
 *                         least squares over message sizes 4 KiB .. max-bytes (doubling)
 *   alpha_ring, beta_ring both ranks send and receive at once (MPI_Sendrecv): one ring hop
 *   alpha_zmq, beta_zmq   the ping-pong over a ZeroMQ PAIR socket on tcp://127.0.0.1 (what the PS uses)
 *   beta_host_kK          K = 1, 2, 4 concurrent ZeroMQ clients (threads of rank 1, each with its own
 *                         context and I/O thread, as separate worker processes have) each push
 *                         --agg-bytes to a ROUTER on rank 0 and get as many back, in --ps-chunk-kb
 *                         slices pipelined as psring-train's bsp rounds (default 1024, its default):
 *                         round time / (2 K bytes), seconds per byte through the server.
 *                         On one host "the server's link" is the cores copying bytes: this
 *                         aggregate, not K x the single-stream beta, is what N workers get
 * (The time-slicing of more busy processes than cores is measured by experiments/model, with
 * psring-bench-allreduce on 4 ranks: this program runs on exactly 2.)
 *   gamma                 seconds per byte to add one float buffer into another (the reduction)
 *   delta                 seconds per byte of gradient for one SGD-momentum update (PS servers)
 * and, with --compute mlp:LAYERS:BATCH (the model the cost model is asked about, at psring-train's
 * per-worker batch), the ring's primitives under the real training step: before every timed
 * repetition each rank runs the project's forward + backward of that MLP on random real-shaped
 * data (src/bench/train_step.c), which writes the gradient that is then exchanged, in a
 * ring_buffer_alloc buffer as the trainer's; n = the gradient's bytes (4 x parameters):
 *   beta_ring_step        the hop (MPI_Sendrecv) fitted over 4 KiB .. n, sent from the gradient
 *   gamma_ring_step       ring_add of --chunk-kb chunks (the ring's receive slot) into the whole
 *                         gradient, seconds per byte of gradient
 *   alpha_shm_step,       ring_allreduce_scaled by 1/N on a ring_buffer_alloc buffer (the load/store
 *   beta_shm_step         path and the average the trainer's ring step takes on one host: a barrier,
 *                         as ring_exchange.c's step(), then the allreduce: two counter waits, then
 *                         each rank loads and stores 2 x bytes, multiplying by 1/N in between):
 *                         t = alpha + bytes x beta from 4 KiB and n; the call at n is timed over
 *                         --shm-reps steps (default --reps): its mean over as many steps as a
 *                         training run takes is the statistic psring-train's exchange_ms reports,
 *                         over as long a stretch of this shared machine's time;
 *                         omitted when the buffer is not shared (PSRING_RING_SHM=0)
 * Without it, the 16 MiB buffers above are larger than the caches: they price bytes that come
 * from memory, which is not where a 2 MB gradient comes from right after backward.
 * and prints them as CSV "param,value,unit" on rank 0's stdout. Each ping-pong point is the minimum
 * over repetitions (an uncontended link); the concurrent rounds take the mean over clients and
 * rounds, because contention between the clients is what they measure (and psring-train reports
 * means).
 * It deliberately does not model the ring's pipelining or MPI's internal algorithms. */
#include <mpi.h>
#include <zmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include "common/check.h"
#include "common/timer.h"
#include "common/mpi_check.h"
#include "model/optim.h"
#include "ring/ring_allreduce.h"
#include "model/blas.h"
#include "bench/train_step.h"

#define zmqCheck(call) do { \
    if ((call) == -1) die_at(__FILE__, __LINE__, 1, "%s: %s", #call, zmq_strerror(zmq_errno())); \
} while (0)

/* least-squares line t = a + b x over n points */
static void fit(const double *x, const double *t, int n, double *a, double *b) {
    double sx = 0, st = 0, sxx = 0, sxt = 0;
    for (int i = 0; i < n; i++) { sx += x[i]; st += t[i]; sxx += x[i] * x[i]; sxt += x[i] * t[i]; }
    double d = n * sxx - sx * sx;
    *b = d != 0 ? (n * sxt - sx * st) / d : 0;
    *a = (st - *b * sx) / n;
    if (*a < 0) *a = 0;   /* a tiny negative intercept is noise, not a faster-than-free message */
}

static double pingpong_mpi(int rank, char *buf, size_t bytes, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = timer_now();
        if (rank == 0) {
            mpiCheck(MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
            mpiCheck(MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            mpiCheck(MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            mpiCheck(MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
        }
        double dt = (timer_now() - t0) / 2;
        if (dt < best) best = dt;
    }
    return best;
}

static double pingpong_zmq(int rank, void *sock, char *buf, size_t bytes, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = timer_now();
        if (rank == 0) {
            zmqCheck(zmq_send(sock, buf, bytes, 0));
            zmqCheck(zmq_recv(sock, buf, bytes, 0));
        } else {
            zmqCheck(zmq_recv(sock, buf, bytes, 0));
            zmqCheck(zmq_send(sock, buf, bytes, 0));
        }
        double dt = (timer_now() - t0) / 2;
        if (dt < best) best = dt;
    }
    return best;
}

/* STEP_MEAN: a primitive timed after a training step predicts the trainer's exchange_ms, which is
 * a mean over steps (the CSV's per-step figure), so those points are means over repetitions, as
 * psring-bench-ps's rounds and the 4-rank benchmark's calls are; a minimum would leave out the
 * jitter every real step pays (it under-predicted the ring's 0.1 ms exchange at N = 2 by 9-18%).
 * The load/store allreduce (the trainer's ring on one host) and the reduction are means.
 * Back-to-back link points (alpha, beta for networks) stay minima: link physics, not a step; so
 * does the message ring's hop after a step, only the fallback on one host (exchange_step). */
/* the ring's hop: both ranks send and receive `bytes` of grad at once, as every rank does at
 * every hop of the ring; with ts, each repetition first runs the training step, whose backward
 * writes grad (ts NULL: back to back, the network-link point); the minimum over repetitions, like
 * the other link points: its fit over sizes prices the message ring, which on one host is only
 * the fallback (PSRING_RING_SHM=0), and minima keep that fit stable */
static double exchange_step(int rank, train_step_t *ts, float *grad, char *rbuf, size_t bytes, int reps) {
    double best = 1e30;
    int peer = 1 - rank;
    for (int r = 0; r < reps; r++) {
        if (ts) train_step_run(ts);
        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = timer_now();
        mpiCheck(MPI_Sendrecv(grad, (int)bytes, MPI_BYTE, peer, 9, rbuf, (int)bytes, MPI_BYTE, peer, 9,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double dt = timer_now() - t0;
        if (dt < best) best = dt;
    }
    return best;
}

/* the ring's reduction after the training step: chunk after chunk of a --chunk-kb receive slot
 * (just written by the receive, so hot) added into the step's gradient with the ring's own
 * ring_add, on both ranks at once as in an allreduce; seconds per byte of gradient, the ranks'
 * mean of their mean over repetitions (STEP_MEAN) */
static double reduce_step(train_step_t *ts, float *slot, size_t chunk_n, int reps) {
    double total = 0;
    float *grad = ts->m.grads;
    size_t grad_n = ts->m.nparams;
    for (int r = 0; r < reps; r++) {
        train_step_run(ts);
        for (size_t i = 0; i < chunk_n; i++) slot[i] = 1e-3f * (float)(i % 89);   /* the receive */
        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = timer_now();
        for (size_t lo = 0; lo < grad_n; lo += chunk_n)
            ring_add(grad + lo, slot, grad_n - lo < chunk_n ? grad_n - lo : chunk_n);
        total += timer_now() - t0;
    }
    double mean = total / reps, sum = 0;
    mpiCheck(MPI_Allreduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return sum / 2 / ((double)grad_n * sizeof(float));
}

/* the ring's load/store path after the training step: ring_allreduce on the first `count` floats
 * of the step's gradient, a ring_buffer_alloc buffer (an MPI-3 shared window on this host, as the
 * trainer's gradients), each repetition after both ranks ran forward + backward into it and met
 * at a barrier, as ring_exchange.c's step() does; *mean over repetitions (STEP_MEAN) and *min.
 * Returns 0 when the buffer is not in a shared window (PSRING_RING_SHM=0, or ranks on
 * several hosts): no load/store path to time. */
static int shm_step(ring_t *ring, train_step_t *ts, size_t count, int reps, double *mean, double *min) {
    float *grad = ts->m.grads;
    if (!ring_buffer_shared(ring, grad, count)) return 0;
    double total = 0, best = 1e30;
    for (int r = 0; r < reps; r++) {
        train_step_run(ts);
        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = timer_now();
        ring_allreduce_scaled(ring, grad, count, 1.0f / (float)ring->size);   /* the average, as psring-train's ring step */
        double dt = timer_now() - t0;
        total += dt;
        if (dt < best) best = dt;
    }
    /* the call ends when its slowest rank does, and every rank must reach the same verdict on
     * the fit below (one rank leaving alone would take the job down without its message) */
    double mine[2] = { total / reps, best }, worst[2];
    mpiCheck(MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    *mean = worst[0];
    *min = worst[1];
    return 1;
}

/* ---- concurrent clients: K DEALER threads on rank 1, one ROUTER on rank 0 ----
 * One round moves the gradient as psring-train's bsp does (src/ps/worker.c ps_worker_step): each
 * client posts every --ps-chunk-kb slice (zero-copy, as send_zero_copy) before it awaits any
 * reply, and the server answers slice k to all clients as soon as all of them sent slice k, while
 * later slices are still on the wire. The server echoes instead of summing and applying: the
 * model prices those (gamma, delta) apart. */
enum { AGG_MAXK = 4 };
typedef struct {
    const char *ep;
    int id;                     /* routing id "c<id>", so the server knows whose slice it got */
    size_t bytes, slice;
    int rounds;
    pthread_barrier_t *start;   /* every round starts with all clients released at once */
    double *round_s;            /* per round: this client's first push -> last reply */
} agg_client_t;

static size_t agg_slices(size_t bytes, size_t slice) { return slice ? (bytes + slice - 1) / slice : 1; }

static void *agg_client(void *arg) {
    agg_client_t *c = arg;
    void *ctx = zmq_ctx_new();
    if (!ctx) die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    if (!sock) die("zmq_socket: %s", zmq_strerror(zmq_errno()));
    char id[16];
    snprintf(id, sizeof id, "c%d", c->id);
    zmqCheck(zmq_setsockopt(sock, ZMQ_ROUTING_ID, id, strlen(id)));
    zmqCheck(zmq_connect(sock, c->ep));
    char *buf = xcalloc(c->bytes, 1);
    size_t ns = agg_slices(c->bytes, c->slice), sl = c->slice ? c->slice : c->bytes;
    for (int r = 0; r < c->rounds; r++) {
        int rc = pthread_barrier_wait(c->start);
        if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) die("pthread_barrier_wait: error %d", rc);
        double t0 = timer_now();
        for (size_t k = 0; k < ns; k++) {
            size_t off = k * sl, len = c->bytes - off < sl ? c->bytes - off : sl;
            zmq_msg_t m;
            zmqCheck(zmq_msg_init_data(&m, buf + off, len, NULL, NULL));   /* zero-copy: buf outlives the round */
            zmqCheck(zmq_msg_send(&m, sock, 0));
        }
        for (size_t k = 0; k < ns; k++) {   /* the replies; the trainer's copy out is the model's n gamma */
            zmq_msg_t m;
            zmqCheck(zmq_msg_init(&m));
            zmqCheck(zmq_msg_recv(&m, sock, 0));
            zmqCheck(zmq_msg_close(&m));
        }
        c->round_s[r] = timer_now() - t0;
    }
    zmqCheck(zmq_close(sock));
    zmqCheck(zmq_ctx_term(ctx));
    free(buf);
    return NULL;
}

/* mean time of one bsp-like round of K clients (sliced push, wait for all, sliced replies) */
static double aggregate_zmq(int rank, int K, size_t bytes, size_t slice, int rounds) {
    char ep[256] = "";
    void *ctx = NULL, *sock = NULL;
    if (rank == 0) {
        ctx = zmq_ctx_new();
        if (!ctx) die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        sock = zmq_socket(ctx, ZMQ_ROUTER);
        if (!sock) die("zmq_socket: %s", zmq_strerror(zmq_errno()));
        zmqCheck(zmq_bind(sock, "tcp://127.0.0.1:*"));
        size_t len = sizeof ep;
        zmqCheck(zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &len));
    }
    mpiCheck(MPI_Bcast(ep, sizeof ep, MPI_CHAR, 0, MPI_COMM_WORLD));
    double result = 0;
    size_t ns = agg_slices(bytes, slice), sl = slice ? slice : bytes;
    if (rank == 0) {
        /* the server: slice k of every client, then slice k back to every client */
        size_t *next = xcalloc(AGG_MAXK, sizeof(size_t));   /* per client: its next slice */
        int *cnt = xcalloc(ns, sizeof(int));                /* per slice: clients that sent it */
        for (int r = 0; r < rounds; r++) {
            memset(next, 0, AGG_MAXK * sizeof(size_t));
            memset(cnt, 0, ns * sizeof(int));
            for (size_t got = 0; got < (size_t)K * ns; got++) {
                zmq_msg_t idm, m;
                zmqCheck(zmq_msg_init(&idm));
                zmqCheck(zmq_msg_recv(&idm, sock, 0));
                zmqCheck(zmq_msg_init(&m));
                zmqCheck(zmq_msg_recv(&m, sock, 0));
                const char *idp = zmq_msg_data(&idm);
                int who = zmq_msg_size(&idm) == 2 && idp[0] == 'c' ? idp[1] - '0' : -1;
                if (who < 0 || who >= K) die("calibrate: a push from an unknown client");
                size_t k = next[who]++;
                size_t want = k < ns ? (bytes - k * sl < sl ? bytes - k * sl : sl) : 0;
                if (k >= ns || zmq_msg_size(&m) != want)
                    die("calibrate: client %d's slice %zu has %zu bytes, expected %zu", who, k, zmq_msg_size(&m), want);
                zmqCheck(zmq_msg_close(&idm));
                if (++cnt[k] < K) { zmqCheck(zmq_msg_close(&m)); continue; }
                /* slice k complete: echo the same bytes to everyone (zero-copy, as the server's replies) */
                for (int j = 0; j < K; j++) {
                    char id[16];
                    snprintf(id, sizeof id, "c%d", j);
                    zmq_msg_t c;
                    zmqCheck(zmq_msg_init(&c));
                    zmqCheck(zmq_msg_copy(&c, &m));
                    zmqCheck(zmq_send(sock, id, strlen(id), ZMQ_SNDMORE));
                    zmqCheck(zmq_msg_send(&c, sock, 0));
                }
                zmqCheck(zmq_msg_close(&m));
            }
        }
        free(next); free(cnt);
    } else {
        pthread_barrier_t start;
        if (pthread_barrier_init(&start, NULL, (unsigned)K)) die("pthread_barrier_init failed");
        pthread_t th[AGG_MAXK];
        agg_client_t c[AGG_MAXK];
        double *all = xcalloc((size_t)K * (size_t)rounds, sizeof(double));
        for (int k = 0; k < K; k++) {
            c[k] = (agg_client_t){ ep, k, bytes, slice, rounds, &start, all + (size_t)k * (size_t)rounds };
            int rc = pthread_create(&th[k], NULL, agg_client, &c[k]);
            if (rc) die("pthread_create: %s", strerror(rc));
        }
        for (int k = 0; k < K; k++) pthread_join(th[k], NULL);
        /* the mean over clients and rounds: psring-train reports a step's mean over its steps and
         * workers, and this is the same statistic of the same pattern */
        for (size_t i = 0; i < (size_t)K * (size_t)rounds; i++) result += all[i];
        result /= (double)K * rounds;
        free(all);
        pthread_barrier_destroy(&start);
    }
    if (rank == 0) {
        zmqCheck(zmq_close(sock));
        zmqCheck(zmq_ctx_term(ctx));
    }
    mpiCheck(MPI_Bcast(&result, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD));
    return result;
}

int main(int argc, char **argv) {
    size_t max_bytes = 16u << 20, agg_bytes = 2u << 20, step_bytes = 0, chunk_bytes = 256u << 10,
           ps_slice = 1024u << 10;   /* psring-train's --ps-chunk-kb default (PS_CHUNK_KB_DEFAULT) */
    int reps = 20, shm_reps = 0;   /* 0: --reps */
    train_step_spec_t spec;
    /* the --compute step runs OpenBLAS as psring-train does: the same kernels, one thread (may
     * re-exec this process, so before MPI starts) */
    blas_setup(argc, argv, 1, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[++i], &end, 10);
            if (*end || v < 65536 || v > (1ll << 30)) die_input("--max-bytes must be an integer in [65536, 2^30]: got '%s'", argv[i]);
            max_bytes = (size_t)v;
        } else if (!strcmp(argv[i], "--agg-bytes") && i + 1 < argc) {
            char *end;
            long long v = strtoll(argv[++i], &end, 10);
            if (*end || v < 4096 || v > (1ll << 30)) die_input("--agg-bytes must be an integer in [4096, 2^30]: got '%s'", argv[i]);
            agg_bytes = (size_t)v;
        } else if (!strcmp(argv[i], "--compute") && i + 1 < argc) {
            char err[512];
            if (train_step_parse(argv[++i], &spec, err, sizeof err)) die_input("psring-calibrate: %s", err);
            step_bytes = 4 * mlp_count_params(spec.sizes, spec.nsizes);
        } else if (!strcmp(argv[i], "--chunk-kb") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > (1l << 20)) die_input("--chunk-kb must be an integer in [1, 1048576]: got '%s'", argv[i]);
            chunk_bytes = (size_t)v << 10;
        } else if (!strcmp(argv[i], "--ps-chunk-kb") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > (1l << 20)) die_input("--ps-chunk-kb must be an integer in [0, 1048576] (0 = whole): got '%s'", argv[i]);
            ps_slice = (size_t)v << 10;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 10000) die_input("--reps must be an integer in [1, 10000]: got '%s'", argv[i]);
            reps = (int)v;
        } else if (!strcmp(argv[i], "--shm-reps") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 100000) die_input("--shm-reps must be an integer in [1, 100000]: got '%s'", argv[i]);
            shm_reps = (int)v;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: mpirun -np 2 psring-calibrate [--max-bytes N] [--agg-bytes N] [--ps-chunk-kb K] [--reps R]\n"
                   "                 [--compute mlp:LAYERS:BATCH [--chunk-kb C] [--shm-reps R]]\n"
                   "prints alpha/beta (MPI and ZeroMQ ping-pong), beta_host_k1/2/4 (K concurrent ZeroMQ clients\n"
                   "pushing and pulling --agg-bytes, default 2 MiB, in K KiB slices as psring-train's bsp, default\n"
                   "1024, 0 = whole), gamma (float add), delta (SGD update) as CSV;\n"
                   "with --compute mlp:LAYERS:BATCH (e.g. mlp:784,512,256,10:64) also beta_ring_step, gamma_ring_step\n"
                   "and alpha/beta_shm_step: the ring's hop, its reduction of C KiB chunks (default 256) and its\n"
                   "load/store allreduce at the gradient's size, each after that MLP's forward + backward at that\n"
                   "batch (the real training step), which writes the gradient that is then exchanged;\n"
                   "--shm-reps: steps timed for the load/store allreduce at the gradient's size (default --reps):\n"
                   "as many as a training run has averages it over as long a stretch of time as exchange_ms\n");
            return 0;
        } else {
            die_input("psring-calibrate: unknown or incomplete option '%s' (see --help)", argv[i]);
        }
    }
    if (!shm_reps) shm_reps = reps;
    mpiCheck(MPI_Init(&argc, &argv));
    int rank, size;
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "psring-calibrate: needs exactly 2 MPI ranks, got %d (mpirun -np 2)\n", size);
        MPI_Finalize();
        return EXIT_BADINPUT;
    }
    char *buf = xcalloc(max_bytes, 1);
    enum { MAXPTS = 32 };
    double x[MAXPTS], t[MAXPTS];
    int n = 0;
    for (size_t b = 4096; b <= max_bytes && n < MAXPTS; b *= 2) {
        pingpong_mpi(rank, buf, b, 2);   /* warm-up: first-touch, vader's single-copy setup */
        x[n] = (double)b;
        t[n++] = pingpong_mpi(rank, buf, b, reps);
    }
    double a_mpi, b_mpi;
    fit(x, t, n, &a_mpi, &b_mpi);
    /* alpha from the smallest message alone is the honest latency; the fit's intercept is pulled
     * by large messages, so report the min of both */
    double lat = pingpong_mpi(rank, buf, 8, reps * 5);
    if (lat < a_mpi || a_mpi == 0) a_mpi = lat;
    /* the ring's pattern: simultaneous send and receive on every rank */
    char *rbuf = xcalloc(max_bytes, 1);
    n = 0;
    for (size_t b = 4096; b <= max_bytes && n < MAXPTS; b *= 2) {
        exchange_step(rank, NULL, (float *)buf, rbuf, b, 2);
        x[n] = (double)b;
        t[n++] = exchange_step(rank, NULL, (float *)buf, rbuf, b, reps);
    }
    double a_ring, b_ring;
    fit(x, t, n, &a_ring, &b_ring);
    if (lat < a_ring || a_ring == 0) a_ring = lat;
    free(rbuf);

    /* the ring's primitives at the gradient's size, in the caches a training step leaves */
    double b_ring_step = 0, g_ring_step = 0, a_shm = 0, b_shm = 0;
    int have_shm = 0;
    if (step_bytes) {
        size_t chunk_n = chunk_bytes / sizeof(float);
        /* the gradient in the ring's shared window, as psring-train's ring on one host */
        ring_t ring;
        train_step_t ts;
        size_t grad_n = step_bytes / sizeof(float);
        ring_init(&ring, MPI_COMM_WORLD, grad_n, chunk_bytes);
        mlp_allocator_t ga = { ring_mlp_alloc, ring_mlp_free, &ring };
        train_step_init(&ts, &spec, &ga, 1 + (uint64_t)rank, 1);
        float *grad = ts.m.grads, *slot = xcalloc(chunk_n, sizeof(float));
        char *srbuf = xcalloc(step_bytes, 1);
        n = 0;
        for (size_t b = 4096; b <= step_bytes && n < MAXPTS; b *= 2) {
            exchange_step(rank, &ts, grad, srbuf, b, 2);
            x[n] = (double)b;
            t[n++] = exchange_step(rank, &ts, grad, srbuf, b, reps);
        }
        double a_unused;
        fit(x, t, n, &a_unused, &b_ring_step);
        reduce_step(&ts, slot, chunk_n, 2);
        g_ring_step = reduce_step(&ts, slot, chunk_n, reps);
        /* the load/store path (the trainer's ring on one host): per-call latency and seconds per
         * byte of gradient (each rank loads and stores 2 x bytes), fitted over 4 KiB .. n */
        n = 0;
        double tmean[MAXPTS + 1], warm_mean, warm_min;
        for (size_t b = 4096; b <= step_bytes && n < MAXPTS; b *= 2) {
            size_t cnt = b / sizeof(float);
            if (!shm_step(&ring, &ts, cnt, 2, &warm_mean, &warm_min)) break;
            x[n] = (double)(cnt * sizeof(float));
            shm_step(&ring, &ts, cnt, reps, &tmean[n], &t[n]);
            n++;
        }
        if (n >= 2) {
            /* the gradient's own size is the point the model is asked about: include it */
            x[n] = (double)(grad_n * sizeof(float));
            shm_step(&ring, &ts, grad_n, shm_reps, &tmean[n], &t[n]);
            n++;
            /* alpha: the smallest call (the two counter waits), beta: from the smallest call to
             * the gradient's size, both means (STEP_MEAN), so alpha + n beta is the mean call at
             * the size asked about; a least-squares line through means of a few repetitions
             * can tilt negative under load, so the minima's fit is the fallback */
            a_shm = tmean[0];
            b_shm = (tmean[n - 1] - tmean[0]) / (x[n - 1] - x[0]);
            if (!(b_shm > 0)) {   /* the same slope through the minima */
                a_shm = t[0];
                b_shm = (t[n - 1] - t[0]) / (x[n - 1] - x[0]);
            }
            if (!(b_shm > 0)) {
                if (rank == 0)
                    fprintf(stderr, "psring-calibrate: the load/store ring's cost per byte did not resolve "
                            "(%.3g us at %.0f B, %.3g us at %.0f B): use more --reps or a larger --compute model\n",
                            1e6 * tmean[0], x[0], 1e6 * tmean[n - 1], x[n - 1]);
                have_shm = -1;   /* every rank: the timings above are the same on all */
            } else {
                have_shm = 1;
            }
        }
        train_step_free(&ts);   /* gives the window back through ring_mlp_free */
        ring_free(&ring);
        free(slot); free(srbuf);
        if (have_shm < 0) {      /* a clean exit 1 on every rank, so the message above arrives */
            free(buf);
            mpiCheck(MPI_Finalize());
            return 1;
        }
    }

    /* ZeroMQ over TCP loopback: rank 0 binds an ephemeral port and tells rank 1 */
    void *ctx = zmq_ctx_new();
    if (!ctx) die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
    void *sock = zmq_socket(ctx, ZMQ_PAIR);
    if (!sock) die("zmq_socket: %s", zmq_strerror(zmq_errno()));
    char ep[256] = "";
    if (rank == 0) {
        zmqCheck(zmq_bind(sock, "tcp://127.0.0.1:*"));
        size_t len = sizeof ep;
        zmqCheck(zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &len));
    }
    mpiCheck(MPI_Bcast(ep, sizeof ep, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank == 1) zmqCheck(zmq_connect(sock, ep));
    n = 0;
    for (size_t b = 4096; b <= max_bytes && n < MAXPTS; b *= 2) {
        pingpong_zmq(rank, sock, buf, b, 2);
        x[n] = (double)b;
        t[n++] = pingpong_zmq(rank, sock, buf, b, reps);
    }
    double a_zmq, b_zmq;
    fit(x, t, n, &a_zmq, &b_zmq);
    double zlat = pingpong_zmq(rank, sock, buf, 8, reps * 5);
    if (zlat < a_zmq || a_zmq == 0) a_zmq = zlat;
    zmqCheck(zmq_close(sock));
    zmqCheck(zmq_ctx_term(ctx));

    /* K concurrent clients; a few untimed rounds first (connections, first touch) */
    double beta_host[AGG_MAXK + 1] = {0};
    for (int K = 1; K <= AGG_MAXK; K *= 2) {
        aggregate_zmq(rank, K, agg_bytes, ps_slice, 3);
        double t = aggregate_zmq(rank, K, agg_bytes, ps_slice, reps < 5 ? 5 : reps);
        /* the round's two message latencies are the model's 2 S alpha term, not bandwidth */
        if (t > 4 * a_zmq) t -= 2 * a_zmq;
        beta_host[K] = t / (2.0 * K * (double)agg_bytes);
    }

    if (rank == 0) {
        /* gamma and delta on one rank while the other idles at the barrier below */
        size_t cnt = max_bytes / sizeof(float);
        float *a = xcalloc(cnt, sizeof(float)), *g = xcalloc(cnt, sizeof(float)), *m = xcalloc(cnt, sizeof(float));
        for (size_t i = 0; i < cnt; i++) { a[i] = (float)(i % 97); g[i] = 1e-3f * (float)(i % 13); }
        double best_add = 1e30, best_opt = 1e30;
        optim_config_t oc = { .lr = 0.01f, .momentum = 0.9f, .weight_decay = 0.0f };   /* SGD-momentum, as the PS servers run */
        for (int r = 0; r < reps; r++) {
            double t0 = timer_now();
            for (size_t i = 0; i < cnt; i++) a[i] += g[i];
            double t1 = timer_now();
            optim_step(&oc, a, g, m, cnt, 0.01f);
            double t2 = timer_now();
            if (t1 - t0 < best_add) best_add = t1 - t0;
            if (t2 - t1 < best_opt) best_opt = t2 - t1;
        }
        volatile float sink = a[cnt / 2];
        (void)sink;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        printf("param,value,unit\n");
        printf("alpha_mpi,%.9g,s\n", a_mpi);
        printf("beta_mpi,%.9g,s/byte\n", b_mpi);
        printf("alpha_ring,%.9g,s\n", a_ring);
        printf("beta_ring,%.9g,s/byte\n", b_ring);
        printf("alpha_zmq,%.9g,s\n", a_zmq);
        printf("beta_zmq,%.9g,s/byte\n", b_zmq);
        for (int K = 1; K <= AGG_MAXK; K *= 2) printf("beta_host_k%d,%.9g,s/byte\n", K, beta_host[K]);
        printf("agg_bytes,%zu,byte\n", agg_bytes);
        printf("ps_slice_bytes,%zu,byte\n", ps_slice);
        printf("gamma,%.9g,s/byte\n", best_add / (double)(cnt * sizeof(float)));
        printf("delta,%.9g,s/byte\n", best_opt / (double)(cnt * sizeof(float)));
        printf("cores,%ld,count\n", cores);
        if (step_bytes) {
            printf("beta_ring_step,%.9g,s/byte\n", b_ring_step);
            printf("gamma_ring_step,%.9g,s/byte\n", g_ring_step);
            if (have_shm) {
                printf("alpha_shm_step,%.9g,s\n", a_shm);
                printf("beta_shm_step,%.9g,s/byte\n", b_shm);
                printf("shm_steps,%d,count\n", shm_reps);
            }
            printf("step_bytes,%zu,byte\n", step_bytes);
            printf("step_batch,%d,count\n", spec.batch);
        }
        free(a); free(g); free(m);
    }
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    free(buf);
    mpiCheck(MPI_Finalize());
    return 0;
}
