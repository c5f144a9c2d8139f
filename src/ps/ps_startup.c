/* ps_startup.c: the parameter server's start-up, on the one process start-up of every topology
 * (startup.h: MPI, fingerprints, local rank, the deadline). What is the PS's own: the verdicts on
 * --servers, --byteps and LARS that every rank reaches alike, --ps-auth's keys, and the roles.
 * MPI carries only the endpoints; from then on everything travels over ZeroMQ:
 *
 *   rank:       0 .. S-1 (servers)              S .. P-1 (workers)
 *               bind an endpoint (ipc, tcp)     -
 *               PSRING_PS_ENDPOINT_FILE.s       -
 *   all ranks:  MPI_Allgather of the endpoints (EP_LEN bytes each; workers give "")
 *   all ranks:  the start-up deadline is over
 *               serve (ps_exchange.c)           connect to the S servers, train
 *
 * Deliberately not here: the exchange ops and teardown (ps_exchange.c). */
#include "ps_exchange_impl.h"
#include "ps/placement.h"
#include "common/check.h"
#include "common/mpi_check.h"
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EP_LEN 256

/* a server's or worker's fatal error (on_fatal): one line, and the whole job ends */
static void abort_job(const char *line) {
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

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

/* Under --enable-recovery (async) a process that dies in start-up would leave the others
 * waiting forever, and one that hangs would everywhere, so start-up has a deadline of 3 peer
 * timeouts, at least 30 s (MPI start-up of many ranks, or on a loaded machine, takes seconds). */
static int startup_deadline(double timeout) {
    int deadline = (int)(3 * timeout + 0.5);
    return deadline < 30 ? 30 : deadline;
}

/* the verdicts every rank reaches alike: servers against processes, LARS against layers */
static void check_servers(const ps_config_t *c, size_t count, const startup_t *st) {
    char msg[512];
    int S = c->servers, size = st->size;
    if (S < 1 || S >= size) {
        snprintf(msg, sizeof msg, "--topology ps needs 1 <= --servers < number of processes (got --servers %d with %d processes)", S, size);
        startup_refuse(st, msg);
    }
    if (c->byteps >= 0 && !ps_byteps_fits(c->byteps, S, size, msg, sizeof msg)) startup_refuse(st, msg);
    for (int s = 0; c->byteps > 0 && s < S; s++) {
        size_t lo, len;
        ps_key_range(&c->optim, count, S, c->byteps, s, &lo, &len);
        if (len == 0) {
            snprintf(msg, sizeof msg, "--byteps %d: the placement leaves server %d none of the %zu parameters (x* = %.3f)",
                     c->byteps, s, count, ps_byteps_share(S - c->byteps, c->byteps));
            startup_refuse(st, msg);
        }
    }
    /* LARS: each server holds whole layers (optim_shard_range), so S <= weight/bias segments */
    const optim_config_t oc = c->optim;
    size_t lo, len;
    if (optim_shard_range(&oc, count, S, 0, &lo, &len) == -2) {
        snprintf(msg, sizeof msg, "--optimizer lars on the PS puts whole layers on each server: --servers %d is more than "
                 "the %d weight and bias tensors of --layers %s", S, oc.nseg, c->layers ? c->layers : "?");
        startup_refuse(st, msg);
    }
}

/* every rank reads the keyfile; a bad one is the same verdict everywhere */
static void auth_load(ps_impl_t *p, const ps_config_t *c) {
    p->auth_on = c->auth && c->auth[0];
    if (!p->auth_on) return;
    char msg[512];
    if (!ps_auth_available()) startup_refuse(&p->startup, "--ps-auth: this libzmq was built without CURVE (zmq_has(\"curve\") is 0)");
    if (ps_auth_load(c->auth, &p->auth, msg, sizeof msg) != 0) startup_refuse(&p->startup, msg);
}

/* a server rank: bind (ipc, or tcp on --ps-bind), start serving; its endpoint into mine */
static void start_server(exchange_t *ex, const ps_config_t *c, size_t count, long jobid, double timeout,
                         char mine[EP_LEN]) {
    ps_impl_t *p = ex->impl;
    int rank = ex->process_rank, S = c->servers;
    char want[EP_LEN + 32];
    /* ipc: a name in Linux's abstract socket namespace ('@'), which goes with the last socket
     * that holds it, so no run, clean or killed, leaves a file in /tmp */
    if (c->transport == PS_TRANSPORT_IPC) snprintf(want, sizeof want, "ipc://@psring-%ld-%d", jobid, rank);
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
    if (ps_sum_only(p)) {
        p->mean = xcalloc(count ? count : 1, sizeof(float));
        p->state = xcalloc(count * optim_state_per_param(&ex->optim) + 1, sizeof(float));
    }
    free(eps);
}

exchange_t *exchange_ps_create(const ps_config_t *c, size_t count) {
    const double timeout = c->peer_timeout > 0 ? c->peer_timeout : PS_PEER_TIMEOUT_DEFAULT;
    const startup_spec_t spec = {
        .who = "ps", .fingerprint = c->fingerprint, .count = count, .thread_want = MPI_THREAD_FUNNELED,
        .thread_need = MPI_THREAD_SINGLE, .deadline_s = startup_deadline(timeout),
    };
    startup_t st;
    startup_begin(&st, &spec);
    check_servers(c, count, &st);
    /* local_rank picks the GPU (local_rank % GPUs): count the workers on this host only, so a
     * server sharing the host does not shift them (worker 0 on GPU 1, two workers on one GPU) */
    startup_local(&st, st.rank >= c->servers);
    exchange_t *ex = ps_exchange_new(c, count, &st);
    ps_impl_t *p = ex->impl;
    auth_load(p, c);

    /* servers bind an ephemeral endpoint; everyone learns all of them */
    long jobid = (long)getpid();
    mpiCheck(MPI_Bcast(&jobid, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    char mine[EP_LEN] = "";
    if (!ex->is_worker) start_server(ex, c, count, jobid, timeout, mine);
    char *all = xcalloc((size_t)st.size, EP_LEN);
    mpiCheck(MPI_Allgather(mine, EP_LEN, MPI_CHAR, all, EP_LEN, MPI_CHAR, MPI_COMM_WORLD));
    startup_complete(&p->startup);   /* from here every wait on a peer has --peer-timeout */
    if (ex->is_worker) start_worker(ex, c, count, all, timeout);
    free(all);
    return ex;
}
