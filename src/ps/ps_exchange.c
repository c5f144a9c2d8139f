/* ps_exchange.c: the "ps" topology for the shared trainer. MPI only starts the processes,
 * checks that every rank got the same options, and tells the workers where the servers listen
 * (MPI_Allgather of endpoint strings); every parameter, gradient, metric and report byte then
 * travels over ZeroMQ (server.c, worker.c), which is also what lets an async job outlive a dead
 * worker (MPI collectives would hang on it).
 *
 * Ranks 0..S-1 are servers, S..P-1 workers (worker rank = mpi rank - S).
 * Deliberately not here: the optimizer math (src/model/optim.c, run by the servers), option
 * parsing (the trainer fills a ps_config_t, ps_config.h). */
#include "ps_exchange.h"
#include "server.h"
#include "worker.h"
#include "auth.h"
#include "zcheck.h"
#include "ps/placement.h"
#include "common/fingerprint.h"
#include "common/watchdog.h"
#include "common/mpi_check.h"
#include "common/timer.h"
#include "common/timeline.h"
#include "common/parse.h"
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EP_LEN 256


typedef struct {
    void *zctx;
    ps_server_t *server;
    ps_worker_t *worker;
    int started_mpi;
    int quiet;
    sync_mode_t sync;
    uint64_t samples;            /* the sample budget asked for (--samples), 0 = the trainer's */
    int nservers, staleness;
    ps_transport_t transport;
    int fp16;
    size_t count;
    /* --ps-mode sum: the servers answer the mean gradient (into mean) and this worker steps its
     * own copy of the optimizer (state: count x optim_state_per_param), as a ring worker does */
    int sum_only;
    float *mean, *state;
    int spare;                   /* --byteps K, -1 without */
    int overlap;                 /* --overlap: layers pushed as backward finishes them */
    float *params;               /* the trainer's parameters (sync_params'): where answers land */
    /* folded in from the servers' reports at finish, for report() and the result file */
    uint64_t bytes_per_server;   /* bytes in+out of the busiest server */
    double staleness_mean;       /* async/ssp: observed staleness (clocks), -1 where none */
    int staleness_max;
    int lost_workers;            /* async: workers that died and were dropped */
    int auth_on;              /* --ps-auth given */
    ps_auth_keys_t auth;      /* --ps-auth keys (the configs point here) */
    char lost_list[256];      /* "rank 2 (mpi rank 3) ..." of the workers lost, for the result file */
    int restored;             /* worker 0: state_set (resume) already gave the servers params + state */
    int peers_lost;           /* async: a worker died; MPI_Finalize would wait for it for ever */
} ps_impl_t;

static void abort_job(const char *line) {
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* the parameters each server holds, "A/B/..." (the CSV's ps_split) */
static void ps_split(exchange_t *ex, char *out, size_t outlen) {
    ps_impl_t *p = ex->impl;
    out[0] = 0;
    for (int s = 0; s < p->nservers; s++) {
        size_t lo, len, u = strlen(out);
        ps_key_range(&ex->optim, p->count, p->nservers, p->spare, s, &lo, &len);
        snprintf(out + u, outlen - u, "%s%zu", s ? "/" : "", len);
    }
}

/* --byteps: the split, once, by worker 0 */
static void say_placement(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    if (p->spare < 0 || ex->rank != 0 || p->quiet) return;
    int N = p->nservers - p->spare;
    size_t lo, a, b = 0;
    ps_key_range(&ex->optim, p->count, p->nservers, p->spare, 0, &lo, &a);
    if (p->spare > 0) ps_key_range(&ex->optim, p->count, p->nservers, p->spare, N, &lo, &b);
    printf("ps: BytePS placement over %d worker hosts and %d of their own: servers 0..%d hold %zu parameters each "
           "(+-1), %d..%d %zu (x* = %.4f)\n", N, p->spare, N - 1, a, N, p->nservers - 1, b, ps_byteps_share(N, p->spare));
    fflush(stdout);
}

static int ps_sync_params_only(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    /* after a resume, INIT would zero the servers' optimizer state that STATE_SET just restored
     * (docs/results/lab-notes-src.md); worker 0 already holds the restored parameters and
     * pulled that generation, the others pull it here */
    if (ex->rank == 0 && p->restored) return 0;
    if (ex->rank == 0) ps_worker_init_params(p->worker, params);
    ps_worker_pull(p->worker, params);
    return 0;
}

/* --ps-mode sum: the optimizer state lives on the workers. A fresh run's is zero everywhere; on
 * a resume worker 0's STATE_SET left the checkpoint's on the servers, and every other worker
 * takes it from there once. Only worker 0 knows which it is: it says so through the workers'
 * average (a few bytes), so a fresh run moves no state at all. */
static void sum_sync_state(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    if (!p->sum_only) return;
    double resumed = ex->rank == 0 && p->restored;
    ps_worker_average(p->worker, &resumed, 1);
    if (resumed > 0 && !(ex->rank == 0 && p->restored)) ps_worker_state_get(p->worker, p->mean, p->state);
}

static int ps_sync_params(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    p->params = params;   /* --overlap's answers may land before step() names the buffer again */
    say_placement(ex);
    int rc = ps_sync_params_only(ex, params, count);
    if (rc == 0) sum_sync_state(ex);
    return rc;
}

/* --overlap: the slices lying wholly in grads[offset, count) may go (last layer first) */
static void ps_grad_ready(exchange_t *ex, float *grads, size_t offset, size_t count, float lr) {
    ps_impl_t *p = ex->impl;
    if (count == 0) return;
    if (offset + count > p->count)
        die("ps exchange: grad_ready range [%zu, %zu) beyond the %zu parameters", offset, offset + count, p->count);
    ps_worker_ready(p->worker, p->sum_only ? p->mean : p->params, grads, offset, lr);
}

static int ps_step(exchange_t *ex, float *params, float *grads, size_t count, float lr) {
    ps_impl_t *p = ex->impl;
    if (p->overlap && params != p->params)
        die("ps exchange: step() got other parameters than sync_params() (--overlap writes answers there)");
    double t0 = timer_now();
    int rc = ps_worker_step(p->worker, p->sum_only ? p->mean : params, grads, lr);
    double t1 = timer_now();
    ex->stats.exchange_s += t1 - t0;
    if (p->sum_only && rc == 0) {   /* the mean gradient is in: this worker's own optimizer step */
        optim_step(&ex->optim, params, p->mean, p->state, count, lr);
        ex->stats.optimizer_s += timer_now() - t1;
        timeline_event("optimizer", t1, timer_now());
    }
    ex->stats.wait_s += ps_worker_last_wait(p->worker);
    ex->stats.steps++;
    ps_worker_counters(p->worker, &ex->stats.bytes_sent, &ex->stats.bytes_recv, NULL);
    return rc;
}

/* async/ssp end on the sample budget, handed out by server 0 (wire.h); bsp keeps its epochs,
 * whose rounds make it the same, step by step, as the ring and local */
static uint64_t ps_budget(exchange_t *ex, uint64_t epochs_samples, uint64_t done, uint64_t step_samples) {
    ps_impl_t *p = ex->impl;
    if (p->sync == SYNC_BSP) return 0;
    uint64_t total = p->samples ? p->samples : epochs_samples;
    total = total > done ? total - done : 1;
    ps_worker_set_budget(p->worker, total, step_samples);
    return total;
}

static long ps_share(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    return ps_worker_share(p->worker);
}

static int ps_stop(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    return ps_worker_stop(p->worker);
}

static int ps_average(exchange_t *ex, double *vals, int n) {
    ps_impl_t *p = ex->impl;
    return ps_worker_average(p->worker, vals, n);
}

static int ps_serve(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    int rc = ps_server_run(p->server);
    double *rep = xcalloc(ps_server_report_len(p->server), sizeof(double));
    ps_server_report(p->server, rep);
    p->peers_lost = rep[PS_ST_NLOST] > 0;
    free(rep);
    if (ex->process_rank == 0) ps_server_print_report(p->server, stdout);
    else if (ps_server_rejected(p->server)) ps_server_print_report(p->server, stderr);
    return rc;
}

static int ps_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    ps_impl_t *p = ex->impl;
    if (p->sum_only) {   /* the workers hold the parameters and the optimizer state */
        memcpy(state, p->state, count * optim_state_per_param(&ex->optim) * sizeof(float));
        return 0;
    }
    return ps_worker_state_get(p->worker, params, state);
}

static int ps_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    ps_impl_t *p = ex->impl;
    if (ex->rank == 0) p->restored = 1;
    if (p->sum_only) memcpy(p->state, state, count * optim_state_per_param(&ex->optim) * sizeof(float));
    return ps_worker_state_set(p->worker, params, state, ex->rank == 0);
}

static int ps_finish(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    if (p->sync != SYNC_BSP) ps_worker_fetch(p->worker, params); /* bsp: already final */
    int S = p->nservers;
    size_t len = PS_ST_FIELDS + PS_HIST + ex->world_size;
    double **rep = xcalloc(S, sizeof(double *));
    for (int s = 0; s < S; s++) rep[s] = xcalloc(len, sizeof(double));
    ps_worker_done(p->worker, rep, len);
    double apply = 0, n = 0, sum = 0, mx = 0, busiest = 0;
    int lost = 0;
    for (int s = 0; s < S; s++) {
        double *r = rep[s];
        apply += r[PS_ST_APPLY_S];
        if (r[PS_ST_BYTES_IN] + r[PS_ST_BYTES_OUT] > busiest) busiest = r[PS_ST_BYTES_IN] + r[PS_ST_BYTES_OUT];
        n += r[PS_ST_STALE_N];
        sum += r[PS_ST_STALE_SUM];
        if (r[PS_ST_STALE_MAX] > mx) mx = r[PS_ST_STALE_MAX];
        if ((int)r[PS_ST_NLOST] > lost) lost = (int)r[PS_ST_NLOST];
    }
    if (!p->sum_only) ex->stats.optimizer_s = apply / S;   /* sum: the workers' own */
    p->bytes_per_server = (uint64_t)busiest;
    p->staleness_mean = n > 0 ? sum / n : -1;
    p->staleness_max = n > 0 ? (int)mx : -1;
    p->lost_workers = lost;
    p->peers_lost = lost > 0;
    ps_worker_counters(p->worker, &ex->stats.bytes_sent, &ex->stats.bytes_recv, NULL);
    if (lost && ex->rank == 0) {
        printf("ps: %d worker(s) lost during training:", lost);
        for (int w = 0; w < ex->world_size; w++) {
            int gone = 0;
            for (int s = 0; s < S; s++) gone |= rep[s][PS_ST_FIELDS + PS_HIST + w] != 0;
            if (gone) printf(" rank %d (mpi rank %d)", w, w + S);
            size_t u = strlen(p->lost_list);
            if (gone && u < sizeof p->lost_list - 32)
                snprintf(p->lost_list + u, sizeof p->lost_list - u, "%srank %d (mpi rank %d)", u ? ", " : "", w, w + S);
        }
        printf("\n");
        fflush(stdout);
    }
    for (int s = 0; s < S; s++) free(rep[s]);
    free(rep);
    return 0;
}

/* PSRING_RESULT_FILE (set by the psring launcher for async jobs, where mpirun --enable-recovery
 * exits 0 whatever happened): worker 0 records that training finished and who was lost */
static void write_result(exchange_t *ex) {
    const char *path = getenv("PSRING_RESULT_FILE");
    if (!path || !path[0] || ex->rank != 0) return;
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "psring: PSRING_RESULT_FILE %s: cannot write\n", path); return; }
    ps_impl_t *p = ex->impl;
    fprintf(f, "finished lost_workers=%d lost=%s\n", p->lost_workers, p->lost_list[0] ? p->lost_list : "none");
    fclose(f);
}

static void ps_free(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    if (p && p->worker) write_result(ex);   /* ps_free runs only when training ended normally */
    if (p) {
        if (p->worker) ps_worker_free(p->worker);
        if (p->server) ps_server_free(p->server);
        free(p->mean);
        free(p->state);
        if (p->zctx) zmqCheck(zmq_ctx_term(p->zctx));
        /* MPI_Finalize synchronises with every rank, the dead one too: under mpirun
         * --enable-recovery it then hangs (seen 1 run in 3 in experiments/faults). Nothing is
         * left to say over MPI, so a job that lost a worker just exits. */
        if (p->started_mpi && !p->peers_lost) mpiCheck(MPI_Finalize());
        free(p);
    }
    free(ex);
}

static void ps_report(exchange_t *ex, exchange_report_t *r) {
    ps_impl_t *p = ex->impl;
    exchange_report_set(r, "sync", "%s", ps_sync_name(p->sync));
    if (p->sync == SYNC_SSP) exchange_report_set(r, "staleness", "%d", p->staleness);
    exchange_report_set(r, "servers", "%d", p->nservers);
    exchange_report_set(r, "transport", "%s", ps_transport_name(p->transport));
    exchange_report_set(r, "ps_mode", "%s", p->sum_only ? "sum" : "optimizer");
    char split[256];
    ps_split(ex, split, sizeof split);
    exchange_report_set(r, "ps_split", "%s", split);
    exchange_report_set(r, "bytes_per_server", "%llu", (unsigned long long)p->bytes_per_server);
    if (p->staleness_mean >= 0) {
        exchange_report_set(r, "staleness_mean", "%.3f", p->staleness_mean);
        exchange_report_set(r, "staleness_max", "%d", p->staleness_max);
    }
    exchange_report_set(r, "lost_workers", "%d", p->lost_workers);
    exchange_report_set(r, "fp16", "%d", p->fp16);
    exchange_report_set(r, "overlap", "%d", p->overlap);
}

/* the exchange ops (exchange.h); without --overlap no grad_ready: the trainer hands over the
 * gradient whole */
static const exchange_ops_t ps_ops = { .name = "ps", EXCHANGE_OPS_REQUIRED(ps), .report = ps_report,
                                       .budget = ps_budget, .share = ps_share, .stop = ps_stop };
static const exchange_ops_t ps_overlap_ops = { .name = "ps", EXCHANGE_OPS_REQUIRED(ps), .report = ps_report,
                                               .budget = ps_budget, .share = ps_share, .stop = ps_stop,
                                               .grad_ready = ps_grad_ready };

/* PSRING_PS_ENDPOINT_FILE=F: server s writes the endpoint it bound to F.s (atomically: temp file,
 * rename), for tools that talk to a running server (tests/ps_hostile.sh, monitoring). */
static void write_endpoint(int index, const char *ep) {
    const char *base = getenv("PSRING_PS_ENDPOINT_FILE");
    if (!base || !base[0]) return;
    char path[1100], tmp[1200];
    snprintf(path, sizeof path, "%s.%d", base, index);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", ep) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        die("PSRING_PS_ENDPOINT_FILE: cannot write %s", path);
}

/* --ps-chunk-kb in elements for both sides; slices are a bsp feature (async/ssp apply each
 * push on arrival, whole), and the server ignores them for LARS as the worker does */
static size_t ps_chunk_elems(const ps_config_t *c) {
    return c->sync == SYNC_BSP ? (size_t)c->chunk_kb * 1024 / sizeof(float) : 0;
}

/* every rank reaches this with the same verdict, so all exit 2 together (no hang) */
static void bad_start(int rank, int started, const char *msg) {
    if (rank == 0) { fprintf(stderr, "psring: %s\n", msg); fflush(stderr); }
    if (started) MPI_Finalize();
    exit(EXIT_BADINPUT);
}

/* Start-up waits on every process (MPI_Init's fence, the collectives below) with no timeout:
 * under --enable-recovery (async) a process that dies here would leave the others waiting
 * forever, and one that hangs would everywhere, so start-up has a deadline of 3 peer timeouts,
 * at least 30 s (MPI start-up of many ranks, or on a loaded machine, takes seconds). Rank 0 says
 * it; before MPI_Init Open MPI's environment tells the rank. */
static void startup_deadline_arm(double timeout) {
    const char *wr = getenv("OMPI_COMM_WORLD_RANK");
    int deadline = (int)(3 * timeout + 0.5);
    if (deadline < 30) deadline = 30;
    char wmsg[160];
    snprintf(wmsg, sizeof wmsg, "psring: ps start-up: not every process arrived within %d s (one died or hung while the job "
             "started)", deadline);
    int wrank = 0;
    watchdog_arm(deadline, wmsg, !wr || (parse_int(wr, 0, INT_MAX, &wrank) == 0 && wrank == 0));
}

/* MPI_Init unless the caller did; 1 when this module started MPI (and so finalizes it) */
static int mpi_start(int *rank, int *size) {
    int inited = 0, started = 0, prov = 0;
    mpiCheck(MPI_Initialized(&inited));
    if (!inited) {
        mpiCheck(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov));
        started = 1;
    }
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, size));
    return started;
}

/* the verdicts every rank reaches alike: servers against processes, LARS against layers */
static void check_servers(const ps_config_t *c, size_t count, int rank, int size, int started) {
    char msg[512];
    int S = c->servers;
    if (S < 1 || S >= size) {
        snprintf(msg, sizeof msg, "--topology ps needs 1 <= --servers < number of processes (got --servers %d with %d processes)", S, size);
        bad_start(rank, started, msg);
    }
    if (c->byteps >= 0 && !ps_byteps_fits(c->byteps, S, size, msg, sizeof msg)) bad_start(rank, started, msg);
    for (int s = 0; c->byteps > 0 && s < S; s++) {
        size_t lo, len;
        ps_key_range(&c->optim, count, S, c->byteps, s, &lo, &len);
        if (len == 0) {
            snprintf(msg, sizeof msg, "--byteps %d: the placement leaves server %d none of the %zu parameters (x* = %.3f)",
                     c->byteps, s, count, ps_byteps_share(S - c->byteps, c->byteps));
            bad_start(rank, started, msg);
        }
    }
    /* LARS: each server holds whole layers (optim_shard_range), so S <= weight/bias segments */
    const optim_config_t oc = c->optim;
    size_t lo, len;
    if (optim_shard_range(&oc, count, S, 0, &lo, &len) == -2) {
        snprintf(msg, sizeof msg, "--optimizer lars on the PS puts whole layers on each server: --servers %d is more than "
                 "the %d weight and bias tensors of --layers %s", S, oc.nseg, c->layers ? c->layers : "?");
        bad_start(rank, started, msg);
    }
}

/* the exchange and its state: roles, ranks, the configuration this module keeps */
static exchange_t *ps_exchange_new(const ps_config_t *c, size_t count, int rank, int size, int started) {
    int S = c->servers;
    exchange_t *ex = xcalloc(1, sizeof *ex);
    ps_impl_t *p = xcalloc(1, sizeof *p);
    ex->ops = c->overlap ? &ps_overlap_ops : &ps_ops;
    ex->impl = p;
    ex->process_rank = rank;
    ex->process_count = size;
    ex->is_worker = rank >= S;
    ex->rank = ex->is_worker ? rank - S : -1;
    ex->world_size = size - S;
    ex->optim = c->optim;
    /* local_rank picks the GPU (local_rank % GPUs): count the workers on this host only, so a
     * server sharing the host does not shift them (worker 0 on GPU 1, two workers on one GPU) */
    MPI_Comm local, role;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
    mpiCheck(MPI_Comm_split(local, ex->is_worker, rank, &role));
    mpiCheck(MPI_Comm_rank(role, &ex->local_rank));
    mpiCheck(MPI_Comm_size(role, &ex->local_size));
    mpiCheck(MPI_Comm_free(&role));
    mpiCheck(MPI_Comm_free(&local));
    p->started_mpi = started;
    p->quiet = c->quiet;
    p->sync = c->sync;
    p->samples = c->samples;
    p->nservers = S;
    p->staleness = c->staleness;
    p->transport = c->transport;
    p->fp16 = c->fp16;
    p->sum_only = c->mode == PS_MODE_SUM;
    p->spare = c->byteps;
    p->overlap = c->overlap;
    p->staleness_mean = -1;
    p->staleness_max = -1;
    p->count = count;
    zmqCheckPtr(p->zctx, zmq_ctx_new());
    return ex;
}

/* a server rank: bind (ipc, or tcp on --ps-bind), start serving; its endpoint into mine */
static void start_server(exchange_t *ex, const ps_config_t *c, size_t count, long jobid, double timeout,
                         char mine[EP_LEN]) {
    ps_impl_t *p = ex->impl;
    int rank = ex->process_rank, S = c->servers;
    char want[EP_LEN + 32];
    if (c->transport == PS_TRANSPORT_IPC) snprintf(want, sizeof want, "ipc:///tmp/psring-%ld-%d", jobid, rank);
    else {
        char berr[320];
        if (ps_server_bind_endpoint(c->bind && c->bind[0] ? c->bind : "127.0.0.1", want, sizeof want, berr, sizeof berr)) {
            fprintf(stderr, "psring: ps server %d: %s\n", rank, berr);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
        }
    }
    ps_server_config_t sc = {
        .index = rank, .nservers = S, .nworkers = ex->process_count - S, .total = count, .sync = c->sync,
        .staleness = c->staleness, .peer_timeout = timeout, .optim = ex->optim,
        .worker_rank_base = S, .quiet = c->quiet, .on_fatal = abort_job,
        .stall_warn = c->stall_warn, .auth = p->auth_on ? &p->auth : NULL,
        .chunk = ps_chunk_elems(c), .sum_only = c->mode == PS_MODE_SUM, .spare = c->byteps,
    };
    p->server = ps_server_create(p->zctx, &sc, want, mine, EP_LEN);
    write_endpoint(rank, mine);
}

/* a worker rank: connect to the S servers whose endpoints are the first S of all */
static void start_worker(exchange_t *ex, const ps_config_t *c, size_t count, char *all, double timeout) {
    ps_impl_t *p = ex->impl;
    int S = c->servers;
    char **eps = xcalloc(S, sizeof(char *));
    for (int s = 0; s < S; s++) eps[s] = all + (size_t)s * EP_LEN;
    ps_worker_config_t wc = {
        .rank = ex->rank, .nworkers = ex->world_size, .nservers = S, .total = count,
        .state_per_param = optim_state_per_param(&ex->optim), .fp16 = c->fp16,
        .peer_timeout = timeout, .mpi_rank = ex->process_rank, .server_rank_base = 0, .on_fatal = abort_job,
        .auth = p->auth_on ? &p->auth : NULL, .optim = &ex->optim,
        .chunk = ps_chunk_elems(c), .credit = c->credit, .bsp = c->sync == SYNC_BSP, .spare = c->byteps,
        .overlap = c->overlap,
    };
    p->worker = ps_worker_create(p->zctx, &wc, eps);
    if (p->sum_only) {
        p->mean = xcalloc(count ? count : 1, sizeof(float));
        p->state = xcalloc(count * optim_state_per_param(&ex->optim) + 1, sizeof(float));
    }
    free(eps);
}

exchange_t *exchange_ps_create(const ps_config_t *c, size_t count) {
    int rank = 0, size = 1;
    const double timeout = c->peer_timeout > 0 ? c->peer_timeout : 10;
    startup_deadline_arm(timeout);
    int started = mpi_start(&rank, &size);

    /* same options everywhere, or a clear error naming the ranks that differ */
    fingerprint_check("ps", c->fingerprint, count, started);
    check_servers(c, count, rank, size, started);

    exchange_t *ex = ps_exchange_new(c, count, rank, size, started);
    ps_impl_t *p = ex->impl;
    p->auth_on = c->auth && c->auth[0];
    if (p->auth_on) {   /* every rank reads the keyfile; a bad one is the same verdict everywhere */
        char msg[512];
        if (!ps_auth_available()) bad_start(rank, started, "--ps-auth: this libzmq was built without CURVE (zmq_has(\"curve\") is 0)");
        if (ps_auth_load(c->auth, &p->auth, msg, sizeof msg) != 0) bad_start(rank, started, msg);
    }

    /* servers bind an ephemeral endpoint; everyone learns all of them */
    long jobid = (long)getpid();
    mpiCheck(MPI_Bcast(&jobid, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    char mine[EP_LEN] = "";
    if (!ex->is_worker) start_server(ex, c, count, jobid, timeout, mine);
    char *all = xcalloc((size_t)size, EP_LEN);
    mpiCheck(MPI_Allgather(mine, EP_LEN, MPI_CHAR, all, EP_LEN, MPI_CHAR, MPI_COMM_WORLD));
    watchdog_disarm();   /* from here every wait on a peer has --peer-timeout */
    if (ex->is_worker) start_worker(ex, c, count, all, timeout);
    free(all);
    return ex;
}
