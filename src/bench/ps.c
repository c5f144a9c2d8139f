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
 * Deliberately not here: correctness checks of the PS math (tests/test_ps.c does them). */
#include "../ps/server.h"
#include "../ps/worker.h"
#include "../ps/wire.h"
#include "../ps/zcheck.h"
#include "../common/mpi_check.h"
#include "../common/timer.h"
#include "../model/blas.h"
#include "train_step.h"
#include "../common/parse.h"
#include <mpi.h>
#include <getopt.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <stdatomic.h>

#define EP_LEN 256

typedef struct {
    int servers, iters, warmup;
    size_t min_bytes, max_bytes;
    double factor;
    char transport[8];
    sync_mode_t sync;
    char csv[1024];
    char bind[256];          /* tcp: address, subnet, interface or auto (ps_server_bind_endpoint) */
    int chunk_kb;            /* --ps-chunk-kb: bsp slice (psring-train's default), 0 = whole shards */
    int credit;              /* --ps-credit: bsp slices on the way per shard (psring-train's default) */
    int compute_us;          /* --compute-us: each worker's CPU work before each round (0 = back to back) */
    int compute_mlp;         /* --compute mlp:...: the real forward + backward before each round */
    train_step_spec_t step;  /* its model and batch */
} bench_opts_t;

/* either pacing: only the rounds are timed, mean over workers, less the bsp wait */
static int paced(const bench_opts_t *o) { return o->compute_us > 0 || o->compute_mlp; }

static int rank, nprocs;
static int check_only;   /* --check-options: parse and validate in one process, MPI never started */

static void bad_flag(const char *fmt, const char *arg) {
    if (rank == 0) {
        fprintf(stderr, "psring-bench-ps: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, " (usage: psring-bench-ps --servers S -b MIN -e MAX -f FACTOR [-n ITERS] [-w WARMUP] "
                "[--transport tcp|ipc] [--bind ADDR|CIDR|IFACE|auto] [--sync bsp|async] [--ps-chunk-kb K] [--ps-credit C] [--compute-us U | --compute mlp:LAYERS:BATCH] [--csv FILE])\n");
    }
    if (!check_only) MPI_Finalize();
    exit(EXIT_BADINPUT);
}

static void parse(bench_opts_t *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->servers = 1; o->iters = 20; o->warmup = 3;
    o->min_bytes = 64 * 1024; o->max_bytes = 64 * 1024 * 1024; o->factor = 2;
    strcpy(o->transport, "tcp");
    strcpy(o->bind, "127.0.0.1");
    o->sync = SYNC_BSP;
    o->chunk_kb = PS_CHUNK_KB_DEFAULT;
    o->credit = PS_CREDIT_DEFAULT;
    static struct option lo[] = {
        { "servers", required_argument, 0, 'S' }, { "minbytes", required_argument, 0, 'b' },
        { "maxbytes", required_argument, 0, 'e' }, { "stepfactor", required_argument, 0, 'f' },
        { "iters", required_argument, 0, 'n' }, { "warmup", required_argument, 0, 'w' },
        { "transport", required_argument, 0, 'T' }, { "sync", required_argument, 0, 'Y' },
        { "csv", required_argument, 0, 'C' }, { "bind", required_argument, 0, 'B' },
        { "ps-chunk-kb", required_argument, 0, 'K' }, { "ps-credit", required_argument, 0, 'R' },
        { "compute-us", required_argument, 0, 'U' },
        { "compute", required_argument, 0, 'M' }, { "check-options", no_argument, 0, 'X' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    opterr = 0;
    int c, li, sizes_set = 0;
    while ((li = -1, c = getopt_long(argc, argv, ":b:e:f:n:w:h", lo, &li)) != -1) {
        if (parse_long_exact(argv, lo, li)) bad_flag("write --%s out in full (an abbreviation of it was given)", lo[li].name);
        switch (c) {
        case 'S': if (parse_int(optarg, 1, 1 << 20, &o->servers)) bad_flag("--servers wants a positive integer, got '%s'", optarg); break;
        case 'b': sizes_set = 1; if (parse_size(optarg, 4, (size_t)4 << 30, &o->min_bytes)) bad_flag("-b wants a size like 64K, got '%s'", optarg); break;
        case 'e': sizes_set = 1; if (parse_size(optarg, 4, (size_t)4 << 30, &o->max_bytes)) bad_flag("-e wants a size like 64M, got '%s'", optarg); break;
        case 'f': {
            char *end; o->factor = strtod(optarg, &end);
            if (end == optarg || *end || !(o->factor > 1) || o->factor > 1024) bad_flag("-f wants a factor in (1, 1024], got '%s'", optarg);
            break;
        }
        case 'n': if (parse_int(optarg, 1, 1000000, &o->iters)) bad_flag("-n wants a positive integer, got '%s'", optarg); break;
        case 'w': if (parse_int(optarg, 0, 1000000, &o->warmup)) bad_flag("-w wants a non-negative integer, got '%s'", optarg); break;
        case 'T':
            if (strcmp(optarg, "tcp") && strcmp(optarg, "ipc")) bad_flag("--transport must be tcp or ipc, got '%s'", optarg);
            strcpy(o->transport, optarg);
            break;
        case 'Y':
            if (!strcmp(optarg, "bsp")) o->sync = SYNC_BSP;
            else if (!strcmp(optarg, "async")) o->sync = SYNC_ASYNC;
            else bad_flag("--sync must be bsp or async, got '%s'", optarg);
            break;
        case 'K': if (parse_int(optarg, 0, 1 << 20, &o->chunk_kb)) bad_flag("--ps-chunk-kb wants an integer in 0..1048576 (0 = whole shards), got '%s'", optarg); break;
        case 'R': if (parse_int(optarg, 0, 1 << 20, &o->credit)) bad_flag("--ps-credit wants an integer in 0..1048576 (0 = every slice at once), got '%s'", optarg); break;
        case 'U': if (parse_int(optarg, 0, 10000000, &o->compute_us)) bad_flag("--compute-us wants an integer in 0..10000000 (us of CPU time per round), got '%s'", optarg); break;
        case 'M': {
            char err[512];
            if (train_step_parse(optarg, &o->step, err, sizeof err)) bad_flag("%s", err);
            o->compute_mlp = 1;
            break;
        }
        case 'B':
            if (!optarg[0] || strlen(optarg) >= sizeof o->bind) bad_flag("--bind wants an address, subnet or interface, got '%s'", optarg);
            strcpy(o->bind, optarg);
            break;
        case 'C':
            if (!*optarg || optarg[0] == '-') bad_flag("--csv needs a path, got '%s'", optarg);
            if (strlen(optarg) >= sizeof o->csv) bad_flag("--csv path too long: '%s'", optarg);
            strcpy(o->csv, optarg);
            break;
        case 'h':
            if (rank == 0) printf("usage: psring-bench-ps --servers S -b MIN -e MAX -f FACTOR [-n ITERS] [-w WARMUP] "
                                  "[--transport tcp|ipc] [--bind ADDR|CIDR|IFACE|auto] [--sync bsp|async] [--ps-chunk-kb K] [--ps-credit C] [--compute-us U | --compute mlp:LAYERS:BATCH] [--csv FILE]\n"
                                  "  --check-options: validate and exit (0, or 2 with the error) without starting MPI (psring runs it before mpirun)\n");
            if (!check_only) MPI_Finalize();
            exit(0);
        case 'X': break;   /* --check-options: main saw it before MPI_Init */
        case ':': bad_flag("%s needs a value", parse_bad_option(argv, lo)); break;
        default: bad_flag("unknown flag '%s'", parse_bad_option(argv, lo));
        }
    }
    if (optind < argc) bad_flag("unexpected argument '%s'", argv[optind]);
    if (o->compute_mlp && o->compute_us > 0) bad_flag("--compute and --compute-us are alternatives: give one%s", "");
    if (o->compute_mlp && sizes_set) bad_flag("--compute times the model's own gradient: leave out -b and -e%s", "");
    if (o->compute_mlp) o->min_bytes = o->max_bytes = 4 * mlp_count_params(o->step.sizes, o->step.nsizes);
    if (o->min_bytes > o->max_bytes) bad_flag("-b is larger than -e%s", "");
    /* the number of processes is unknown without MPI: psring checks -np against --servers itself */
    if (!check_only && o->servers >= nprocs) bad_flag("--servers must be below the number of processes%s", "");
}

/* servers bind, everyone learns the endpoints (endpoints: S x EP_LEN) */
static void exchange_endpoints(const char *mine, char *all) {
    char buf[EP_LEN] = "";
    if (mine) snprintf(buf, sizeof buf, "%s", mine);
    mpiCheck(MPI_Allgather(buf, EP_LEN, MPI_CHAR, all, EP_LEN, MPI_CHAR, MPI_COMM_WORLD));
}

static void endpoint_for(const bench_opts_t *o, long jobid, int phase, char *out, size_t n) {
    if (!strcmp(o->transport, "ipc")) snprintf(out, n, "ipc:///tmp/psring-bench-%ld-%d-%d", jobid, rank, phase);
    else {
        char err[320];
        if (ps_server_bind_endpoint(o->bind, out, n, err, sizeof err)) {
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
    int S = o->servers;
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
    double t = paced(o) ? tsum : timer_now() - t0;
    for (int s = 0; s < S; s++) zmqCheck(zmq_close(d[s]));
    free(d); free(lo); free(len); free(own); free(recv);
    return t;
}

/* ---- the PS -------------------------------------------------------------------------------- */
static void ps_serve(void *ctx, const bench_opts_t *o, const char *want, char *all, size_t count, int nworkers) {
    ps_server_config_t c = { .index = rank, .nservers = o->servers, .nworkers = nworkers, .total = count,
                             .sync = o->sync, .staleness = 0, .peer_timeout = 30,
                             .optim = { 1e-6f, 0.9f, 0.0f }, .worker_rank_base = o->servers, .quiet = 1,
                             .chunk = (size_t)o->chunk_kb * 1024 / 4 };
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
    char **eps = xcalloc(o->servers, sizeof(char *));
    for (int s = 0; s < o->servers; s++) eps[s] = all + (size_t)s * EP_LEN;
    ps_worker_config_t c = { .rank = wrank, .nworkers = nworkers, .nservers = o->servers, .total = count,
                             .state_per_param = 1, .peer_timeout = 30, .mpi_rank = rank,
                             .chunk = o->sync == SYNC_BSP ? (size_t)o->chunk_kb * 1024 / 4 : 0, .credit = o->credit,
                             .bsp = o->sync == SYNC_BSP };
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
    double t = paced(o) ? tsum - wsum : timer_now() - t0;
    *wait_s = paced(o) ? wsum : 0;
    size_t rl = PS_ST_FIELDS + PS_HIST + nworkers;
    double **rep = xcalloc(o->servers, sizeof(double *));
    for (int s = 0; s < o->servers; s++) rep[s] = xcalloc(rl, sizeof(double));
    ps_worker_done(w, rep, rl);
    for (int s = 0; s < o->servers; s++) free(rep[s]);
    free(rep);
    ps_worker_free(w);
    free(own_p); free(own_g); free(eps);
    return t;
}

int main(int argc, char **argv) {
    /* --check-options: the launcher validates once, so a bad flag is not reported by every rank */
    for (int i = 1; i < argc; i++) check_only |= !strcmp(argv[i], "--check-options");
    if (check_only) { bench_opts_t o; parse(&o, argc, argv); return 0; }
    /* the --compute step runs OpenBLAS as psring-train does: the same kernels, one thread (may
     * re-exec this process, so before MPI starts) */
    blas_setup(argc, argv, 1, NULL, 0);
    mpiCheck(MPI_Init(&argc, &argv));
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    bench_opts_t o;
    parse(&o, argc, argv);
    int S = o.servers, N = nprocs - S, is_worker = rank >= S, wrank = rank - S;
    MPI_Comm wcomm;
    mpiCheck(MPI_Comm_split(MPI_COMM_WORLD, is_worker, rank, &wcomm));
    long jobid = (long)getpid();
    mpiCheck(MPI_Bcast(&jobid, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    void *ctx;
    zmqCheckPtr(ctx, zmq_ctx_new());
    char *all = xcalloc((size_t)nprocs, EP_LEN);
    train_step_t step, *ts = NULL;
    if (o.compute_mlp && is_worker) {   /* each worker its own data, as the trainer's shards */
        train_step_init(&step, &o.step, NULL, 1 + (uint64_t)wrank, 0);
        ts = &step;
    }
    FILE *csv = NULL;
    if (rank == S) {
        if (o.csv[0]) {
            int fresh = access(o.csv, F_OK) != 0;
            csv = fopen(o.csv, "a");
            if (!csv) die("cannot open --csv %s", o.csv);
            if (fresh) fprintf(csv, "size,impl,workers,servers,transport,sync,iters,time_s,per_worker_GBps,goodput_GBps,ratio_vs_raw,compute_us,wait_s\n");
        }
        printf("# psring-bench-ps: %d workers, %d servers, transport %s, ps sync %s, server apply = SGD momentum "
               "(optim_step), %d iterations after %d warm-up, ps slices %d KiB, credit %d (bsp; 0 = whole shards, all at once)\n", N, S,
               o.transport, ps_sync_name(o.sync), o.iters, o.warmup, o.sync == SYNC_BSP ? o.chunk_kb : 0, o.credit);
        printf("# goodput = push + pull payload bytes / time; aggregate = sum over workers\n");
        if (o.compute_mlp)
            printf("# --compute: each worker runs forward + backward of its MLP (%zu parameters, batch %d) before each "
                   "round and pushes that gradient; time = the rounds alone, mean over workers, ps less its bsp wait "
                   "(wait(ms) column)\n", mlp_count_params(o.step.sizes, o.step.nsizes), o.step.batch);
        if (o.compute_us > 0)
            printf("# --compute-us %d: each worker works %d us of CPU time before each round; time = the rounds alone, "
                   "mean over workers, ps less its bsp wait (wait(ms) column)\n", o.compute_us, o.compute_us);
        printf("%12s %8s %14s %14s %8s %10s %10s\n", "size(B)", "impl", "worker(GB/s)", "aggr(GB/s)", "ps/raw",
               "round(ms)", "wait(ms)");
        fflush(stdout);
    }
    int phase = 0;
    for (double b = (double)o.min_bytes; b <= (double)o.max_bytes * 1.0000001; b *= o.factor) {
        size_t count = (size_t)b / 4, bytes = count * 4;
        if (count < (size_t)S) continue;
        double raw_agg = 0;
        for (int impl = 0; impl < 2; impl++) {
            char want[EP_LEN];
            endpoint_for(&o, jobid, phase++, want, sizeof want);
            double t = 0, wait = 0;
            if (!is_worker) {
                if (impl == 0) {
                    size_t lo, len;
                    ps_shard_range(count, S, rank, &lo, &len);
                    raw_server(ctx, want, all, len * 4, N, o.warmup + o.iters);
                } else {
                    ps_serve(ctx, &o, want, all, count, N);
                }
            } else {
                t = impl == 0 ? raw_worker(ctx, &o, all, bytes, wcomm, ts) : ps_work(ctx, &o, all, count, wcomm, wrank, N, &wait, ts);
            }
            /* per-worker goodput averaged, aggregate = sum */
            double gp = is_worker && t > 0 ? 2.0 * bytes * o.iters / t / 1e9 : 0, sum = 0;
            mpiCheck(MPI_Reduce(&gp, &sum, 1, MPI_DOUBLE, MPI_SUM, S, MPI_COMM_WORLD));
            /* paced (--compute-us, --compute) each worker timed its own rounds: their mean over
             * workers, as psring-train's CSV reports; else the slowest worker's loop */
            double tmax = 0, wmean = 0;
            mpiCheck(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, paced(&o) ? MPI_SUM : MPI_MAX, S, MPI_COMM_WORLD));
            mpiCheck(MPI_Reduce(&wait, &wmean, 1, MPI_DOUBLE, MPI_SUM, S, MPI_COMM_WORLD));
            if (paced(&o)) tmax /= N;
            wmean /= N;
            if (rank == S) {
                if (impl == 0) raw_agg = sum;
                double ratio = raw_agg > 0 ? sum / raw_agg : 0;
                const char *name = impl == 0 ? "zmq-raw" : "ps";
                printf("%12zu %8s %14.3f %14.3f %8.3f %10.4f %10.4f\n", bytes, name, sum / N, sum, ratio,
                       1e3 * tmax / o.iters, 1e3 * wmean / o.iters);
                fflush(stdout);
                if (csv) fprintf(csv, "%zu,%s,%d,%d,%s,%s,%d,%.6f,%.4f,%.4f,%.4f,%d,%.6f\n", bytes, name, N, S, o.transport,
                                 impl == 0 ? "none" : ps_sync_name(o.sync), o.iters, tmax, sum / N, sum, ratio,
                                 o.compute_us, wmean);
            }
        }
    }
    if (csv && fclose(csv) != 0) die("closing --csv %s failed", o.csv);
    if (ts) train_step_free(ts);
    free(all);
    zmqCheck(zmq_ctx_term(ctx));
    mpiCheck(MPI_Comm_free(&wcomm));
    mpiCheck(MPI_Finalize());
    return 0;
}
