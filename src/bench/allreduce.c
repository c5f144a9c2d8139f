/* allreduce.c: psring-bench-allreduce, an nccl-tests style benchmark of psring's ring allreduce
 * against MPI_Allreduce, run under mpirun:
 *   mpirun -np 4 psring-bench-allreduce -b 4K -e 64M -f 2 -n 20 -w 5 -c 1 --impl both
 * For each size (bytes of float data, K/M/G suffixes) and implementation: warm-up, then n timed
 * iterations in up to 5 blocks that alternate between the implementations (each block after a
 * barrier, so a busy shared machine slows both alike); the time is the slowest rank's mean. algbw = size / time, busbw =
 * algbw x 2 (n-1)/n (what each rank's links carry, comparable across n). The correctness check
 * runs outside the timed loop with rank-dependent data (rank+1) x (i % 97 + 1) against the exact
 * sum; any wrong element makes the exit status 1. It also measures memcpy bandwidth on this
 * machine: a shared-memory transfer cannot beat it, so it is the ceiling for busbw here.
 * --impl hierarchical times ring_ops.h's hierarchical allreduce (reduce in each host, ring between
 * hosts, broadcast; PSRING_HIER_LOCAL_SIZE=L fakes hosts of L ranks on one machine).
 * --device cuda: the same driver on device buffers (ring on the GPU, MPI_Allreduce, NCCL), in
 * allreduce_cuda.c; a build without CUDA refuses it with one line (exit 2).
 * --compute mlp:LAYERS:BATCH: the same rhythm under the real step: before each timed call every
 * rank runs the project's forward + backward of that MLP at that per-worker batch (train_step.c),
 * whose gradient, in the ring's buffer as psring-train's, is what the call then reduces; the size
 * is the model's gradient. psring model times the ring's time-slicing with it.
 * What it does not do: other collectives, or plotting (a sweep script reads --csv). */
#include "config.h"
#include "ring/ring_allreduce.h"
#include "ring/ring_ops.h"
#include "common/mpi_check.h"
#include "common/check.h"
#include "model/blas.h"
#include "train_step.h"
#include "common/parse.h"
#include "allreduce_cuda.h"   /* bench_row; the rest only in --with-cuda builds */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    size_t min_bytes, max_bytes;
    double factor;
    int iters, warmup, check, impl_ring, impl_mpi, impl_hier, fp16, chunk_kb, compute_us;
    int impl_nccl, device_cuda;   /* --impl nccl|all with --device cuda */
    int compute_mlp;              /* --compute mlp:...: the real forward + backward before each call */
    train_step_spec_t step;
    char csv[1024];
} bench_opts_t;

static int rank, nranks;

static void usage(FILE *f) {
    fprintf(f,
"usage: mpirun -np N psring-bench-allreduce [options]\n"
"  -b, --minbytes SIZE   smallest message, bytes of float data, K/M/G suffixes (default 4K)\n"
"  -e, --maxbytes SIZE   largest message (default 64M)\n"
"  -f, --stepfactor F    multiply the size by F each row (default 2)\n"
"  -n, --iters N         timed iterations per size (default 20)\n"
"  -w, --warmup N        untimed iterations first (default 5)\n"
"  -c, --check 0|1       check the result against the exact sum (default 1)\n"
"      --impl ring|mpi|both|hierarchical|nccl|all  psring's ring, MPI_Allreduce, both side by\n"
"                        side, the hierarchical allreduce (host reduce, ring across hosts, host\n"
"                        broadcast), NCCL (--device cuda only), or all: ring, mpi and hierarchical\n"
"                        on the CPU; ring, mpi and nccl (where NCCL can run) on the GPU (default both)\n"
"      --device cpu|cuda buffers in host memory, or in GPU memory with each rank on GPU\n"
"                        local_rank %% device_count (ring on the device, mpi direct or staged) (cpu)\n"
"      --fp16            the ring sends halves (accumulates in float); mpi stays float\n"
"      --chunk-kb K      ring pipeline chunk in KiB (default 1024)\n"
"      --csv FILE        also write the rows as CSV (rank 0)\n"
"      --compute-us U    before each timed call every rank works U us of CPU time, then a barrier (a\n"
"                        training step's rhythm); time is the collective alone, mean over ranks (0)\n"
"      --compute mlp:LAYERS:BATCH  the same, but the work is that MLP's forward + backward at that\n"
"                        batch, whose gradient the call reduces (size = the gradient: no -b/-e)\n"
"      --check-options   validate the options and exit (0, or 2 with the error) without starting MPI\n"
"                        (psring runs it once before mpirun starts N ranks)\n");
}

static int check_only;   /* --check-options: parse and validate in one process, MPI never started */

/* all ranks parse the same argv, so all of them reach the same verdict; rank 0 says it */
static void bad(const char *fmt, const char *arg) {
    if (rank == 0) { fprintf(stderr, "psring-bench-allreduce: "); fprintf(stderr, fmt, arg); fputc('\n', stderr); }
    if (!check_only) MPI_Finalize();
    exit(EXIT_BADINPUT);
}

static void parse(bench_opts_t *o, int argc, char **argv) {
    *o = (bench_opts_t){ .min_bytes = 4096, .max_bytes = 64u << 20, .factor = 2, .iters = 20, .warmup = 5,
                         .check = 1, .impl_ring = 1, .impl_mpi = 1,
                         .chunk_kb = (int)(RING_DEFAULT_CHUNK_BYTES / 1024) };
    enum { OPT_IMPL = 256, OPT_FP16, OPT_CSV, OPT_CHUNK, OPT_COMPUTE, OPT_DEVICE, OPT_MLP, OPT_CHECK };
    const char *impl_arg = "both";
    static const struct option lo[] = {
        {"minbytes", required_argument, 0, 'b'}, {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'}, {"iters", required_argument, 0, 'n'},
        {"warmup", required_argument, 0, 'w'}, {"check", required_argument, 0, 'c'},
        {"impl", required_argument, 0, OPT_IMPL}, {"fp16", no_argument, 0, OPT_FP16},
        {"csv", required_argument, 0, OPT_CSV}, {"chunk-kb", required_argument, 0, OPT_CHUNK},
        {"compute-us", required_argument, 0, OPT_COMPUTE}, {"device", required_argument, 0, OPT_DEVICE},
        {"compute", required_argument, 0, OPT_MLP}, {"check-options", no_argument, 0, OPT_CHECK},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    opterr = 0;
    int c, sizes_set = 0;
    char *end, err[512];
    int li;
    while ((li = -1, c = getopt_long(argc, argv, ":b:e:f:n:w:c:h", lo, &li)) != -1) {
        if (parse_long_exact(argv, lo, li)) bad("write --%s out in full (an abbreviation of it was given)", lo[li].name);
        switch (c) {
        case 'b': sizes_set = 1; if (parse_size(optarg, 4, (size_t)16 << 30, &o->min_bytes)) bad("-b: not a size of at least 4 bytes (like 4K, 16M): '%s'", optarg); break;
        case 'e': sizes_set = 1; if (parse_size(optarg, 4, (size_t)16 << 30, &o->max_bytes)) bad("-e: not a size of at least 4 bytes (like 4K, 16M): '%s'", optarg); break;
        case 'f': o->factor = strtod(optarg, &end);
                  if (end == optarg || *end || !(o->factor > 1.0) || o->factor > 1024) bad("-f: step factor must be a number in (1, 1024]: '%s'", optarg);
                  break;
        case 'n': if (parse_int(optarg, 1, 1000000, &o->iters)) bad("-n: iterations must be an integer in 1..1000000: '%s'", optarg); break;
        case 'w': if (parse_int(optarg, 0, 1000000, &o->warmup)) bad("-w: warm-up iterations must be an integer in 0..1000000: '%s'", optarg); break;
        case 'c': if (parse_int(optarg, 0, 1, &o->check)) bad("-c: check must be 0 or 1: '%s'", optarg); break;
        case OPT_IMPL:
            o->impl_hier = 0;
            o->impl_nccl = 0;
            impl_arg = optarg;
            if (!strcmp(optarg, "ring")) { o->impl_ring = 1; o->impl_mpi = 0; }
            else if (!strcmp(optarg, "mpi")) { o->impl_ring = 0; o->impl_mpi = 1; }
            else if (!strcmp(optarg, "both")) { o->impl_ring = 1; o->impl_mpi = 1; }
            else if (!strcmp(optarg, "hierarchical")) { o->impl_ring = 0; o->impl_mpi = 0; o->impl_hier = 1; }
            else if (!strcmp(optarg, "nccl")) { o->impl_ring = 0; o->impl_mpi = 0; o->impl_nccl = 1; }
            else if (!strcmp(optarg, "all")) { o->impl_ring = 1; o->impl_mpi = 1; o->impl_hier = 1; o->impl_nccl = 1; }
            else bad("--impl must be ring, mpi, both, hierarchical, nccl or all: '%s'", optarg);
            break;
        case OPT_FP16: o->fp16 = 1; break;
        case OPT_DEVICE:
            if (!strcmp(optarg, "cpu")) o->device_cuda = 0;
            else if (!strcmp(optarg, "cuda")) o->device_cuda = 1;
            else bad("--device must be cpu or cuda: '%s'", optarg);
#ifndef HAVE_CUDA
            if (o->device_cuda) bad("--device cuda: this build has no CUDA (configure --with-cuda)%s", "");
#endif
            break;
        case OPT_CSV: if (!*optarg || optarg[0] == '-') bad("--csv needs a path: got '%s'", optarg);
                      if (strlen(optarg) >= sizeof o->csv) bad("--csv: path too long: '%s'", optarg);
                      strcpy(o->csv, optarg); break;
        case OPT_CHUNK: if (parse_int(optarg, 1, 1 << 20, &o->chunk_kb)) bad("--chunk-kb must be an integer in 1..1048576: '%s'", optarg); break;
        case OPT_COMPUTE: if (parse_int(optarg, 0, 10000000, &o->compute_us)) bad("--compute-us must be an integer in 0..10000000: '%s'", optarg); break;
        case OPT_MLP: if (train_step_parse(optarg, &o->step, err, sizeof err)) bad("%s", err);
                      o->compute_mlp = 1; break;
        case OPT_CHECK: break;   /* main saw it before MPI_Init */
        case 'h': if (rank == 0) usage(stdout); if (!check_only) MPI_Finalize(); exit(0);
        case ':': bad("option '%s' needs a value", parse_bad_option(argv, lo)); break;
        default: bad("unknown option '%s' (try --help)", parse_bad_option(argv, lo)); break;
        }
    }
    if (optind < argc) bad("unexpected argument '%s' (try --help)", argv[optind]);
    if (o->compute_mlp && o->compute_us) bad("--compute and --compute-us are alternatives: give one%s", "");
    if (o->compute_mlp && sizes_set) bad("--compute times the model's own gradient: leave out -b and -e%s", "");
    if (o->compute_mlp && o->device_cuda) bad("--compute is not implemented with --device cuda%s", "");
    if (o->compute_mlp) o->min_bytes = o->max_bytes = 4 * mlp_count_params(o->step.sizes, o->step.nsizes);
    if (o->min_bytes > o->max_bytes) bad("-b is larger than -e%s", "");
    if (!o->device_cuda) {
        if (!strcmp(impl_arg, "nccl")) bad("--impl nccl needs --device cuda%s", "");
        o->impl_nccl = 0;
    } else {
        /* on the GPU: ring, mpi and nccl; the rest has no device version */
        if (!strcmp(impl_arg, "hierarchical")) bad("--impl hierarchical is not implemented with --device cuda (ring, mpi, nccl, both or all)%s", "");
        o->impl_hier = 0;
        if (o->fp16) bad("--fp16 is not implemented with --device cuda%s", "");
        if (o->compute_us) bad("--compute-us is not implemented with --device cuda%s", "");
    }
    if (o->max_bytes / sizeof(float) > (size_t)0x7fffffff) bad("-e: at most 8G (MPI int counts)%s", "");
}

/* the physical ceiling of a shared-memory transfer: one process copying, bytes copied / s */
static double memcpy_gbps(void) {
    size_t n = 64u << 20;
    char *a = xmalloc(n), *b = xmalloc(n);
    memset(a, 1, n); memset(b, 2, n);
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = MPI_Wtime();
        memcpy(b, a, n);
        double t = MPI_Wtime() - t0;
        if (b[rep * 4099] != 1) die("memcpy check failed");
        if (n / t > best) best = n / t;
        a[rep] = (char)rep;
    }
    free(a); free(b);
    return best / 1e9;
}

typedef enum { IMPL_RING, IMPL_MPI, IMPL_HIER } impl_t;
static hier_t hier;   /* --impl hierarchical|all */
#define BENCH_BLOCKS 5

static void run_once(impl_t impl, int fp16, ring_t *r, float *buf, size_t count) {
    if (impl == IMPL_RING) { if (fp16) ring_allreduce_fp16(r, buf, count); else ring_allreduce(r, buf, count); }
    else if (impl == IMPL_HIER) hier_allreduce(&hier, buf, count);
    else mpiCheck(MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
}

/* wrong elements over all ranks */
static long check(impl_t impl, int fp16, ring_t *r, float *buf, size_t count) {
    for (size_t i = 0; i < count; i++) buf[i] = (float)(rank + 1) * (float)(i % 97 + 1);
    run_once(impl, fp16, r, buf, count);
    long wrong = 0;
    double tri = (double)nranks * (nranks + 1) / 2;
    for (size_t i = 0; i < count; i++) {
        double e = tri * (double)(i % 97 + 1);
        /* exact in float; with halves on the wire, one half rounding (2^-11) per hop at most */
        double tol = (impl == IMPL_RING && fp16) ? nranks * e / 2048.0 : 0.0;
        if (!(fabs((double)buf[i] - e) <= tol)) wrong++;
    }
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    return wrong;
}

void bench_row(FILE *csv, size_t bytes, size_t count, const char *name, double tmax, long wrong, int nranks,
               int chunk_kb) {
    double algbw = tmax > 0 ? (double)bytes / tmax / 1e9 : 0;
    double busbw = algbw * 2.0 * (nranks - 1) / nranks;
    char wbuf[32];
    if (wrong < 0) snprintf(wbuf, sizeof wbuf, "N/A"); else snprintf(wbuf, sizeof wbuf, "%ld", wrong);
    printf("  %12zu %12zu %10s %12.1f %12.3f %12.3f %8s\n", bytes, count, name, tmax * 1e6, algbw, busbw, wbuf);
    fflush(stdout);
    if (csv) fprintf(csv, "%zu,%zu,%s,%.3f,%.4f,%.4f,%ld,%d,%d\n", bytes, count, name, tmax * 1e6, algbw, busbw, wrong, nranks, chunk_kb);
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
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    psring_log_rank = rank;
    bench_opts_t o;
    parse(&o, argc, argv);
#ifdef HAVE_CUDA
    int cuda_dev = o.device_cuda ? bench_cuda_pin() : -1;   /* no usable GPU: exit 2 before any file is written */
#endif
    FILE *csv = NULL;
    if (rank == 0 && o.csv[0]) {
        csv = fopen(o.csv, "w");
        if (!csv) { fprintf(stderr, "psring-bench-allreduce: --csv %s: %s\n", o.csv, strerror(errno)); MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT); }
        fprintf(csv, "size,count,impl,time_us,algbw_GBps,busbw_GBps,wrong,nranks,chunk_kb\n");
    }
#ifdef HAVE_CUDA
    if (o.device_cuda) {   /* the GPU run is its own driver (allreduce_cuda.c); same rows, same CSV */
        bench_cuda_opts_t co = {.min_bytes = o.min_bytes, .max_bytes = o.max_bytes, .factor = o.factor, .iters = o.iters,
                                .warmup = o.warmup, .check = o.check, .chunk_kb = o.chunk_kb, .impl_ring = o.impl_ring,
                                .impl_mpi = o.impl_mpi, .impl_nccl = o.impl_nccl,
                                .nccl_required = o.impl_nccl && !o.impl_ring && !o.impl_mpi, .csv = csv};
        long wrong = bench_allreduce_cuda(&co, cuda_dev);
        if (csv && fclose(csv)) { fprintf(stderr, "psring-bench-allreduce: --csv %s: %s\n", o.csv, strerror(errno)); wrong++; }
        if (rank == 0 && wrong) fprintf(stderr, "psring-bench-allreduce: %ld wrong elements\n", wrong);
        mpiCheck(MPI_Finalize());
        return wrong ? 1 : 0;
    }
#endif
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    double mc = 0;
    if (rank == 0) mc = memcpy_gbps();
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    printf0("# psring-bench-allreduce: %d ranks, ring chunk %d KiB, fp16 %s, %d iters, %d warm-up, check %d\n",
            nranks, o.chunk_kb, o.fp16 ? "on (ring only)" : "off", o.iters, o.warmup, o.check);
    printf0("# memcpy bandwidth (one process, 64 MiB): %.2f GB/s = the ceiling for a shared-memory copy\n", mc);
    printf0("# %12s %12s %10s %12s %12s %12s %8s\n", "size", "count", "impl", "time_us", "algbw_GBps", "busbw_GBps", "wrong");
    size_t maxcount = o.max_bytes / sizeof(float);
    ring_t r;
    ring_init(&r, MPI_COMM_WORLD, maxcount, (size_t)o.chunk_kb * 1024);
    /* the trainer's gradient buffer comes from the same allocator: a shared-memory window when all
     * ranks are on this host (the ring then loads and stores instead of sending); MPI_Allreduce
     * gets the very same buffer */
    train_step_t step, *ts = NULL;
    if (o.compute_mlp) {   /* the model's gradient is the buffer, each rank its own data */
        mlp_allocator_t ga = { ring_mlp_alloc, ring_mlp_free, &r };
        train_step_init(&step, &o.step, &ga, 1 + (uint64_t)rank, 1);
        ts = &step;
    }
    float *buf = ts ? ts->m.grads : ring_buffer_alloc(&r, maxcount);
    if (o.impl_hier) {
        hier_init(&hier, MPI_COMM_WORLD, maxcount, (size_t)o.chunk_kb * 1024, hier_local_size_from_env());
        printf0("# hierarchical: %d host(s), %d rank(s) on rank 0's host (fp16 does not apply)\n", hier.hosts, hier.local_size);
    }
    long total_wrong = 0;
    int nimpl = 0;
    impl_t impls[3];
    if (o.impl_ring) impls[nimpl++] = IMPL_RING;
    if (o.impl_mpi) impls[nimpl++] = IMPL_MPI;
    if (o.impl_hier) impls[nimpl++] = IMPL_HIER;
    for (double sz = (double)o.min_bytes; sz <= (double)o.max_bytes * (1 + 1e-9); sz = sz * o.factor) {
        size_t count = (size_t)sz / sizeof(float), bytes = count * sizeof(float);
        /* zeros: no growth to inf / denormals over many iterations, same work per element */
        memset(buf, 0, bytes);
        for (int k = 0; k < nimpl; k++)
            for (int i = 0; i < o.warmup; i++) run_once(impls[k], o.fp16, &r, buf, count);
        /* the implementations take turns in blocks, so load from other processes on this shared
         * machine falls on both alike; each block starts from a barrier */
        int blocks = o.iters < BENCH_BLOCKS ? o.iters : BENCH_BLOCKS;
        double tsum[3] = {0, 0, 0};
        for (int b = 0; b < blocks; b++) {
            int n = o.iters / blocks + (b < o.iters % blocks);
            for (int k = 0; k < nimpl; k++) {
                if (o.compute_us > 0 || ts) {
                    /* a training step's rhythm: every rank busy on its own, then a barrier (the
                     * trainer's wait), then the timed collective alone; with more ranks than
                     * cores this is where time-slicing hits the collective */
                    for (int i = 0; i < n; i++) {
                        train_step_pace(ts, o.compute_us);
                        mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
                        double t0 = MPI_Wtime();
                        run_once(impls[k], o.fp16, &r, buf, count);
                        tsum[k] += MPI_Wtime() - t0;
                    }
                    continue;
                }
                mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
                double t0 = MPI_Wtime();
                for (int i = 0; i < n; i++) run_once(impls[k], o.fp16, &r, buf, count);
                tsum[k] += MPI_Wtime() - t0;
            }
        }
        for (int k = 0; k < nimpl; k++) {
            impl_t impl = impls[k];
            double t = tsum[k] / o.iters, tmax = 0;
            /* with --compute-us or --compute each rank timed its own calls after the barrier:
             * report their mean over ranks, as the trainer's CSV does; else the slowest rank's loop */
            int paced = o.compute_us > 0 || ts;
            mpiCheck(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, paced ? MPI_SUM : MPI_MAX, 0, MPI_COMM_WORLD));
            if (paced) tmax /= nranks;
            long wrong = o.check ? check(impl, o.fp16, &r, buf, count) : -1;
            if (wrong > 0) total_wrong += wrong;
            if (rank == 0)
                bench_row(csv, bytes, count, impl == IMPL_MPI ? "mpi" : impl == IMPL_HIER ? "hier" : o.fp16 ? "ring-fp16" : "ring",
                          tmax, wrong, nranks, o.chunk_kb);
            memset(buf, 0, bytes);
        }
        if (sz == 0) break;
    }
    if (csv && fclose(csv)) { fprintf(stderr, "psring-bench-allreduce: --csv %s: %s\n", o.csv, strerror(errno)); total_wrong++; }
    if (rank == 0 && total_wrong) fprintf(stderr, "psring-bench-allreduce: %ld wrong elements\n", total_wrong);
    if (ts) train_step_free(ts);   /* gives buf back through ring_mlp_free */
    else ring_buffer_free(&r, buf);
    ring_free(&r);
    if (o.impl_hier) hier_free(&hier);
    mpiCheck(MPI_Finalize());
    return total_wrong ? 1 : 0;
}
