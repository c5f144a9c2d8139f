/* ps.c: psring-bench-ps, push+pull goodput of the parameter server against raw ZeroMQ.
 *
 *   mpirun -np N psring-bench-ps --servers S -b 64K -e 64M -f 2 [-n 20] [-w 3]
 *          [--transport tcp|ipc] [--bind ADDR|CIDR|IFACE|auto] [--sync bsp|async] [--ps-chunk-kb K]
 *          [--compute-us U | --compute mlp:LAYERS:BATCH] [--csv FILE]
 *
 * Ranks 0..S-1 serve, the rest are workers. For each model size B (bytes of float32 parameters)
 * two implementations run back to back in the same processes, same transport, same sizes:
 *   zmq-raw  each worker sends B/S bytes to each of S ROUTER sockets (zero-copy) and receives
 *            B/S bytes back into its buffer (zmq_recv); the server echoes at once.
 *   ps       the real PS code paths (server.c/worker.c): push the B-byte gradient in S shards,
 *            servers apply real SGD with momentum (optim_step) under --sync, pull B bytes back;
 *            bsp sends each shard in --ps-chunk-kb slices that the server applies and answers
 *            one by one (0 = whole shards, as before).
 * Goodput per worker = 2 B / (time per iteration) (push + pull payload); aggregate = sum over
 * workers. The clock starts after -w warm-up iterations and a barrier of the workers.
 * --compute-us U: a training step's rhythm. Back to back, the servers' and ZeroMQ's I/O threads
 * never sleep and the gradient stays in cache; in training each worker computes between rounds.
 * So before each round every worker is busy for U us of its own CPU time (no barrier: a PS
 * worker pushes when its backward ends), and only the round itself is timed. As psring-train's
 * CSV does, the time is each worker's mean over workers, and for the PS the bsp wait at the
 * servers for the round's last push (ps_worker_last_wait, the trainer's wait_ms) is reported apart
 * and taken out: time_s = exchange - wait, the transfer (wait_s column).
 * --compute mlp:LAYERS:BATCH: the real step instead of a busy loop. Before each round every
 * worker runs the project's forward + backward of that MLP at that per-worker batch on random
 * real-shaped data (train_step.c), and the round pushes that very gradient and pulls into that
 * model's parameters, as psring-train does; the size is the model's gradient (no -b/-e), and the
 * timing is as with --compute-us (the rounds alone, less the bsp wait). psring model calibrates
 * with it.
 * The shared flags, the sweep and the --csv file are bench_driver.c's.
 * Deliberately not here: correctness checks of the PS math (tests/test_ps.c does them). */
#include "ps/server.h"
#include "ps/worker.h"
#include "ps/wire.h"
#include "ps/zcheck.h"
#include "common/mpi_check.h"
#include "common/timer.h"
#include "train_step.h"
#include "bench_driver.h"
#include "common/parse.h"
#include <mpi.h>
#include <getopt.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <stdatomic.h>

#define EP_LEN 256

/* what is this benchmark's own; -b -e -f -n -w --csv --compute-us --compute are the driver's */
typedef struct {
    int servers;
    char transport[8];
    sync_mode_t sync;
    char bind[256];          /* tcp: address, subnet, interface or auto (ps_server_bind_endpoint) */
    int chunk_kb;            /* --ps-chunk-kb: bsp slice (psring-train's default), 0 = whole shards */
    int credit;              /* --ps-credit: bsp slices on the way per shard (psring-train's default) */
} ps_opts_t;

static const struct option ps_longopts[] = {
    { "servers", required_argument, 0, 'S' }, { "transport", required_argument, 0, 'T' },
    { "sync", required_argument, 0, 'Y' }, { "bind", required_argument, 0, 'B' },
    { "ps-chunk-kb", required_argument, 0, 'K' }, { "ps-credit", required_argument, 0, 'R' },
    { 0, 0, 0, 0 },
};

static void ps_flag(void *own, int c, const char *arg) {
    ps_opts_t *p = own;
    switch (c) {
    case 'S': if (parse_int(arg, 1, 1 << 20, &p->servers)) bench_refuse("--servers wants a positive integer, got '%s'", arg); break;
    case 'T':
        if (strcmp(arg, "tcp") && strcmp(arg, "ipc")) bench_refuse("--transport must be tcp or ipc, got '%s'", arg);
        strcpy(p->transport, arg);
        break;
    case 'Y':
        if (!strcmp(arg, "bsp")) p->sync = SYNC_BSP;
        else if (!strcmp(arg, "async")) p->sync = SYNC_ASYNC;
        else bench_refuse("--sync must be bsp or async, got '%s'", arg);
        break;
    case 'K': if (parse_int(arg, 0, 1 << 20, &p->chunk_kb)) bench_refuse("--ps-chunk-kb wants an integer in 0..1048576 (0 = whole shards), got '%s'", arg); break;
    case 'R': if (parse_int(arg, 0, 1 << 20, &p->credit)) bench_refuse("--ps-credit wants an integer in 0..1048576 (0 = every slice at once), got '%s'", arg); break;
    case 'B':
        if (!arg[0] || strlen(arg) >= sizeof p->bind) bench_refuse("--bind wants an address, subnet or interface, got '%s'", arg);
        strcpy(p->bind, arg);
        break;
    }
}

static void ps_check(void *own, const bench_opts_t *o, int nranks) {
    ps_opts_t *p = own;
    (void)o;
    /* the number of processes is unknown without MPI: psring checks -np against --servers itself */
    if (nranks && p->servers >= nranks) bench_refuse("--servers must be below the number of processes%s", "");
}

#define PS_SYNOPSIS "psring-bench-ps --servers S -b MIN -e MAX -f FACTOR [-n ITERS] [-w WARMUP] " \
    "[--transport tcp|ipc] [--bind ADDR|CIDR|IFACE|auto] [--sync bsp|async] [--ps-chunk-kb K] [--ps-credit C] " \
    "[--compute-us U | --compute mlp:LAYERS:BATCH] [--csv FILE]"
static ps_opts_t ps = { .servers = 1, .transport = "tcp", .sync = SYNC_BSP, .bind = "127.0.0.1",
                        .chunk_kb = PS_CHUNK_KB_DEFAULT, .credit = PS_CREDIT_DEFAULT };
static const bench_spec_t ps_spec = {
    .prog = "psring-bench-ps",
    .synopsis = PS_SYNOPSIS,
    .help =
"      --servers S       ranks 0..S-1 serve, the rest are workers (default 1)\n"
"      --transport tcp|ipc  the sockets between workers and servers (default tcp)\n"
"      --bind ADDR|CIDR|IFACE|auto  where tcp servers listen (default 127.0.0.1)\n"
"      --sync bsp|async  the PS's rounds (default bsp)\n"
"      --ps-chunk-kb K   bsp: each shard in slices of K KiB, applied and answered one by one\n"
"                        (0 = whole shards; default psring-train's)\n"
"      --ps-credit C     bsp: slices on the way per shard (0 = every slice at once; default psring-train's)\n",
    .help_csv = "the first worker; appended, the header only in a new file",
    .help_pacing =
"      --compute-us U    before each round every worker works U us of CPU time (a training step's rhythm,\n"
"                        no barrier); time is the rounds alone, mean over workers, ps less its bsp wait (0)\n"
"      --compute mlp:LAYERS:BATCH  the same, but the work is that MLP's forward + backward at that\n"
"                        batch, whose gradient the round pushes (size = the gradient: no -b/-e)\n",
    .unknown_fmt = "unknown flag '%s'",
    .missing_fmt = "%s needs a value",
    .extra_fmt = "unexpected argument '%s'",
    .tail = " (usage: " PS_SYNOPSIS ")",
    .longopts = ps_longopts,
    .flag = ps_flag,
    .check = ps_check,
    .own = &ps,
};

static int rank, nprocs;

/* servers bind, everyone learns the endpoints (endpoints: S x EP_LEN) */
static void exchange_endpoints(const char *mine, char *all) {
    char buf[EP_LEN] = "";
    if (mine) snprintf(buf, sizeof buf, "%s", mine);
    mpiCheck(MPI_Allgather(buf, EP_LEN, MPI_CHAR, all, EP_LEN, MPI_CHAR, MPI_COMM_WORLD));
}

static void endpoint_for(const bench_opts_t *o, long jobid, int phase, char *out, size_t n) {
    /* the abstract socket namespace ('@'): nothing is left in /tmp, however the run ends */
    if (!strcmp(ps.transport, "ipc")) snprintf(out, n, "ipc://@psring-bench-%ld-%d-%d", jobid, rank, phase);
    else {
        char err[320];
        if (ps_server_bind_endpoint(ps.bind, out, n, err, sizeof err)) {
            fprintf(stderr, "psring-bench-ps: rank %d: %s\n", rank, err);
            MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
        }
    }
}

static void noop_free(void *d, void *h) { (void)d; (void)h; }
/* counts zero-copy messages ZeroMQ still holds, so a buffer is freed only after its last send */
static void count_free(void *d, void *h) { (void)d; atomic_fetch_sub((atomic_long *)h, 1); }

/* ---- raw ZeroMQ ---------------------------------------------------------------------------- */
static void raw_server(void *ctx, const char *want, char *all, size_t chunk, int nworkers, int total_iters) {
    void *r;
    zmqCheckPtr(r, zmq_socket(ctx, ZMQ_ROUTER));
    int hwm = 0;
    zmqCheck(zmq_setsockopt(r, ZMQ_SNDHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(r, ZMQ_RCVHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_bind(r, want));
    char bound[EP_LEN];
    size_t n = sizeof bound;
    zmqCheck(zmq_getsockopt(r, ZMQ_LAST_ENDPOINT, bound, &n));
    exchange_endpoints(bound, all);
    char *reply = xcalloc(chunk, 1);
    atomic_long held;
    atomic_init(&held, 0);
    long expect = (long)nworkers * total_iters;
    for (long k = 0; k < expect; k++) {
        zmq_msg_t id, m, out;
        zmqCheck(zmq_msg_init(&id));
        zmqCheck(zmq_msg_init(&m));
        zmqCheck(zmq_msg_recv(&id, r, 0));
        zmqCheck(zmq_msg_recv(&m, r, 0));
        if (zmq_msg_size(&m) != chunk) die("raw server: got %zu bytes, want %zu", zmq_msg_size(&m), chunk);
        atomic_fetch_add(&held, 1);
        zmqCheck(zmq_msg_init_data(&out, reply, chunk, count_free, &held));
        zmqCheck(zmq_msg_send(&id, r, ZMQ_SNDMORE));
        zmqCheck(zmq_msg_send(&out, r, 0));
        zmqCheck(zmq_msg_close(&m));
    }
    int linger = 5000;
    zmqCheck(zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof linger));
    zmqCheck(zmq_close(r));
    while (atomic_load(&held) > 0) /* the I/O thread may still be writing the last replies */
        timer_sleep_us(100);
    free(reply);
}

static double raw_worker(void *ctx, const bench_opts_t *o, char *all, size_t bytes, MPI_Comm wcomm, train_step_t *ts) {
    int S = ps.servers;
    void **d = xcalloc(S, sizeof(void *));
    size_t *lo = xcalloc(S, sizeof(size_t)), *len = xcalloc(S, sizeof(size_t));
    char *own = ts ? NULL : xcalloc(bytes, 1), *recv = xcalloc(bytes, 1);
    if (own) memset(own, 1, bytes);
    char *send = ts ? (char *)ts->m.grads : own;   /* --compute: the step's gradient */
    exchange_endpoints(NULL, all);
    for (int s = 0; s < S; s++) {
        ps_shard_range(bytes / 4, S, s, &lo[s], &len[s]);
        lo[s] *= 4; len[s] *= 4;
        zmqCheckPtr(d[s], zmq_socket(ctx, ZMQ_DEALER));
        int hwm = 0;
        zmqCheck(zmq_setsockopt(d[s], ZMQ_SNDHWM, &hwm, sizeof hwm));
        zmqCheck(zmq_setsockopt(d[s], ZMQ_RCVHWM, &hwm, sizeof hwm));
        zmqCheck(zmq_connect(d[s], all + (size_t)s * EP_LEN));
    }
    double t0 = 0, tsum = 0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        if (it == o->warmup) { mpiCheck(MPI_Barrier(wcomm)); t0 = timer_now(); }
        train_step_pace(ts, o->compute_us);
        double r0 = timer_now();
        for (int s = 0; s < S; s++) {
            zmq_msg_t m;
            zmqCheck(zmq_msg_init_data(&m, send + lo[s], len[s], noop_free, NULL));
            zmqCheck(zmq_msg_send(&m, d[s], 0));
        }
        for (int s = 0; s < S; s++) {
            int n = zmq_recv(d[s], recv + lo[s], len[s], 0);
            if (n == -1) die("raw worker: zmq_recv: %s", zmq_strerror(zmq_errno()));
            if ((size_t)n != len[s]) die("raw worker: got %d bytes, want %zu", n, len[s]);
        }
        if (it >= o->warmup) tsum += timer_now() - r0;
    }
    /* with --compute-us only the rounds count, else the whole timed loop */
    double t = bench_paced(o) ? tsum : timer_now() - t0;
    for (int s = 0; s < S; s++) zmqCheck(zmq_close(d[s]));
    free(d); free(lo); free(len); free(own); free(recv);
    return t;
}

/* ---- the PS -------------------------------------------------------------------------------- */
static void ps_serve(void *ctx, const bench_opts_t *o, const char *want, char *all, size_t count, int nworkers) {
    ps_server_config_t c = { .index = rank, .nservers = ps.servers, .nworkers = nworkers, .total = count,
                             .sync = ps.sync, .staleness = 0, .peer_timeout = 30,
                             .optim = { 1e-6f, 0.9f, 0.0f }, .worker_rank_base = ps.servers, .quiet = 1,
                             .chunk = (size_t)ps.chunk_kb * 1024 / 4 };
    char bound[EP_LEN];
    ps_server_t *s = ps_server_create(ctx, &c, want, bound, sizeof bound);
    exchange_endpoints(bound, all);
    ps_server_run(s);
    ps_server_free(s);
}

/* returns the timed rounds' seconds; *wait_s: with --compute-us or --compute, their seconds of bsp
 * wait at the servers (ps_worker_last_wait), already taken out of the return value. ts: the
 * --compute step, whose gradient is pushed and whose parameters are pulled (else own buffers) */
static double ps_work(void *ctx, const bench_opts_t *o, char *all, size_t count, MPI_Comm wcomm, int wrank, int nworkers,
                      double *wait_s, train_step_t *ts) {
    exchange_endpoints(NULL, all);
    char **eps = xcalloc(ps.servers, sizeof(char *));
    for (int s = 0; s < ps.servers; s++) eps[s] = all + (size_t)s * EP_LEN;
    ps_worker_config_t c = { .rank = wrank, .nworkers = nworkers, .nservers = ps.servers, .total = count,
                             .state_per_param = 1, .peer_timeout = 30, .mpi_rank = rank,
                             .chunk = ps.sync == SYNC_BSP ? (size_t)ps.chunk_kb * 1024 / 4 : 0, .credit = ps.credit,
                             .bsp = ps.sync == SYNC_BSP };
    ps_worker_t *w = ps_worker_create(ctx, &c, eps);
    float *own_p = ts ? NULL : xcalloc(count, sizeof(float)), *own_g = ts ? NULL : xcalloc(count, sizeof(float));
    float *params = ts ? ts->m.params : own_p, *grads = ts ? ts->m.grads : own_g;
    if (own_g) for (size_t i = 0; i < count; i++) own_g[i] = (float)((wrank + 1) * (i % 97 + 1)) * 1e-3f;
    if (wrank == 0) ps_worker_init_params(w, params);
    ps_worker_pull(w, params);
    double t0 = 0, tsum = 0, wsum = 0;
    for (int it = 0; it < o->warmup + o->iters; it++) {
        if (it == o->warmup) { mpiCheck(MPI_Barrier(wcomm)); t0 = timer_now(); }
        train_step_pace(ts, o->compute_us);
        double r0 = timer_now();
        if (ps_worker_step(w, params, grads, 1e-6f) != 0) die("ps worker %d: step %d failed", wrank, it);
        if (it >= o->warmup) {
            tsum += timer_now() - r0;
            wsum += ps_worker_last_wait(w);
        }
    }
    /* with --compute-us: the rounds alone, less the wait for the round's last push (the
     * trainer's exchange_ms - wait_ms); else the whole timed loop, as before */
    double t = bench_paced(o) ? tsum - wsum : timer_now() - t0;
    *wait_s = bench_paced(o) ? wsum : 0;
    size_t rl = PS_ST_FIELDS + PS_HIST + nworkers;
    double **rep = xcalloc(ps.servers, sizeof(double *));
    for (int s = 0; s < ps.servers; s++) rep[s] = xcalloc(rl, sizeof(double));
    ps_worker_done(w, rep, rl);
    for (int s = 0; s < ps.servers; s++) free(rep[s]);
    free(rep);
    ps_worker_free(w);
    free(own_p); free(own_g); free(eps);
    return t;
}

/* the worker that writes (rank S): the CSV opened, the run's settings and the table's columns */
static FILE *ps_header(const bench_opts_t *o, int N, int S) {
    FILE *csv = bench_csv_open(o, "size,impl,workers,servers,transport,sync,iters,time_s,per_worker_GBps,goodput_GBps,"
                                  "ratio_vs_raw,compute_us,wait_s", 1);
    printf("# psring-bench-ps: %d workers, %d servers, transport %s, ps sync %s, server apply = SGD momentum "
           "(optim_step), %d iterations after %d warm-up, ps slices %d KiB, credit %d (bsp; 0 = whole shards, all at once)\n", N, S,
           ps.transport, ps_sync_name(ps.sync), o->iters, o->warmup, ps.sync == SYNC_BSP ? ps.chunk_kb : 0, ps.credit);
    printf("# goodput = push + pull payload bytes / time; aggregate = sum over workers\n");
    if (o->compute_mlp)
        printf("# --compute: each worker runs forward + backward of its MLP (%zu parameters, batch %d) before each "
               "round and pushes that gradient; time = the rounds alone, mean over workers, ps less its bsp wait "
               "(wait(ms) column)\n", mlp_count_params(o->step.sizes, o->step.nsizes), o->step.batch);
    if (o->compute_us > 0)
        printf("# --compute-us %d: each worker works %d us of CPU time before each round; time = the rounds alone, "
               "mean over workers, ps less its bsp wait (wait(ms) column)\n", o->compute_us, o->compute_us);
    printf("%12s %8s %14s %14s %8s %10s %10s\n", "size(B)", "impl", "worker(GB/s)", "aggr(GB/s)", "ps/raw",
           "round(ms)", "wait(ms)");
    fflush(stdout);
    return csv;
}

/* what every size's rounds share: this process's role and the job's sockets */
typedef struct {
    const bench_opts_t *o;
    void *ctx;
    long jobid;
    char *all;               /* the endpoints, nprocs x EP_LEN */
    MPI_Comm wcomm;          /* the workers (or the servers) among themselves */
    int S, N, is_worker, wrank;
    train_step_t *ts;        /* --compute, on workers */
    FILE *csv;               /* rank S */
    int phase;               /* endpoints used so far (each phase binds anew) */
} ps_run_t;

/* one implementation (0: zmq-raw, 1: ps) at one size on this rank: seconds timed, *wait: bsp wait */
static double ps_impl_run(ps_run_t *x, int impl, size_t count, size_t bytes, double *wait) {
    char want[EP_LEN];
    endpoint_for(x->o, x->jobid, x->phase++, want, sizeof want);
    *wait = 0;
    if (x->is_worker)
        return impl == 0 ? raw_worker(x->ctx, x->o, x->all, bytes, x->wcomm, x->ts)
                         : ps_work(x->ctx, x->o, x->all, count, x->wcomm, x->wrank, x->N, wait, x->ts);
    if (impl == 0) {
        size_t lo, len;
        ps_shard_range(count, x->S, rank, &lo, &len);
        raw_server(x->ctx, want, x->all, len * 4, x->N, x->o->warmup + x->o->iters);
    } else {
        ps_serve(x->ctx, x->o, want, x->all, count, x->N);
    }
    return 0;
}

/* one size: zmq-raw then ps, their rows on rank S */
static void ps_size(ps_run_t *x, size_t count, size_t bytes) {
    const bench_opts_t *o = x->o;
    int S = x->S, N = x->N;
    double raw_agg = 0;
    for (int impl = 0; impl < 2; impl++) {
        double wait = 0, t = ps_impl_run(x, impl, count, bytes, &wait);
        /* per-worker goodput averaged, aggregate = sum */
        double gp = x->is_worker && t > 0 ? 2.0 * bytes * o->iters / t / 1e9 : 0, sum = 0;
        mpiCheck(MPI_Reduce(&gp, &sum, 1, MPI_DOUBLE, MPI_SUM, S, MPI_COMM_WORLD));
        /* paced (--compute-us, --compute) each worker timed its own rounds: their mean over
         * workers, as psring-train's CSV reports; else the slowest worker's loop */
        double tmax = 0, wmean = 0;
        mpiCheck(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, bench_paced(o) ? MPI_SUM : MPI_MAX, S, MPI_COMM_WORLD));
        mpiCheck(MPI_Reduce(&wait, &wmean, 1, MPI_DOUBLE, MPI_SUM, S, MPI_COMM_WORLD));
        if (bench_paced(o)) tmax /= N;
        wmean /= N;
        if (rank != S) continue;
        if (impl == 0) raw_agg = sum;
        double ratio = raw_agg > 0 ? sum / raw_agg : 0;
        const char *name = impl == 0 ? "zmq-raw" : "ps";
        printf("%12zu %8s %14.3f %14.3f %8.3f %10.4f %10.4f\n", bytes, name, sum / N, sum, ratio,
               1e3 * tmax / o->iters, 1e3 * wmean / o->iters);
        fflush(stdout);
        if (x->csv) fprintf(x->csv, "%zu,%s,%d,%d,%s,%s,%d,%.6f,%.4f,%.4f,%.4f,%d,%.6f\n", bytes, name, N, S, ps.transport,
                            impl == 0 ? "none" : ps_sync_name(ps.sync), o->iters, tmax, sum / N, sum, ratio,
                            o->compute_us, wmean);
    }
}

int main(int argc, char **argv) {
    bench_opts_t o = { .min_bytes = 64 * 1024, .max_bytes = 64 * 1024 * 1024, .factor = 2, .iters = 20, .warmup = 3 };
    bench_init(&o, &ps_spec, argc, argv, &rank, &nprocs);
    ps_run_t x = { .o = &o, .S = ps.servers, .N = nprocs - ps.servers, .is_worker = rank >= ps.servers,
                   .wrank = rank - ps.servers };
    mpiCheck(MPI_Comm_split(MPI_COMM_WORLD, x.is_worker, rank, &x.wcomm));
    x.jobid = (long)getpid();
    mpiCheck(MPI_Bcast(&x.jobid, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    zmqCheckPtr(x.ctx, zmq_ctx_new());
    x.all = xcalloc((size_t)nprocs, EP_LEN);
    train_step_t step;
    if (o.compute_mlp && x.is_worker) {   /* each worker its own data, as the trainer's shards */
        train_step_init(&step, &o.step, NULL, 1 + (uint64_t)x.wrank, 0);
        x.ts = &step;
    }
    if (rank == x.S) x.csv = ps_header(&o, x.N, x.S);
    for (bench_size_t sz = {0}; bench_size_next(&o, &sz);)
        if (sz.count >= (size_t)x.S) ps_size(&x, sz.count, sz.bytes);
    int bad_csv = bench_csv_close(&o, x.csv);
    if (x.ts) train_step_free(x.ts);
    free(x.all);
    zmqCheck(zmq_ctx_term(x.ctx));
    mpiCheck(MPI_Comm_free(&x.wcomm));
    mpiCheck(MPI_Finalize());
    return bad_csv ? 1 : 0;
}
