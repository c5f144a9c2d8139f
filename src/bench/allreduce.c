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
 * The shared flags, the sweep, the timed blocks, the row and the CSV are bench_driver.c's.
 * What it does not do: other collectives, or plotting (a sweep script reads --csv). */
#include "config.h"
#include "ring/ring_allreduce.h"
#include "ring/ring_ops.h"
#include "common/mpi_check.h"
#include "common/check.h"
#include "train_step.h"
#include "common/parse.h"
#include "common/stringify.h"
#include "bench_driver.h"
#include "allreduce_cuda.h"   /* --device cuda: called in --with-cuda builds only */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* what is this benchmark's own; -b -e -f -n -w --csv --compute-us --compute are the driver's */
typedef struct {
    int check, impl_ring, impl_mpi, impl_hier, fp16, chunk_kb;
    int impl_nccl, impl_staged, device_cuda;   /* --impl nccl|staged|all with --device cuda */
    const char *impl_arg;
} ar_opts_t;

enum { OPT_IMPL = 256, OPT_FP16, OPT_CHUNK, OPT_DEVICE };
static const struct option ar_longopts[] = {
    {"check", required_argument, 0, 'c'}, {"impl", required_argument, 0, OPT_IMPL},
    {"fp16", no_argument, 0, OPT_FP16}, {"chunk-kb", required_argument, 0, OPT_CHUNK},
    {"device", required_argument, 0, OPT_DEVICE}, {0, 0, 0, 0}};

static void ar_flag(void *own, int c, const char *arg) {
    ar_opts_t *a = own;
    switch (c) {
    case 'c': if (parse_int(arg, 0, 1, &a->check)) bench_refuse("-c: check must be 0 or 1: '%s'", arg); break;
    case OPT_IMPL:
        a->impl_hier = 0;
        a->impl_nccl = 0;
        a->impl_staged = 0;
        a->impl_arg = arg;
        if (!strcmp(arg, "ring")) { a->impl_ring = 1; a->impl_mpi = 0; }
        else if (!strcmp(arg, "mpi")) { a->impl_ring = 0; a->impl_mpi = 1; }
        else if (!strcmp(arg, "both")) { a->impl_ring = 1; a->impl_mpi = 1; }
        else if (!strcmp(arg, "hierarchical")) { a->impl_ring = 0; a->impl_mpi = 0; a->impl_hier = 1; }
        else if (!strcmp(arg, "nccl")) { a->impl_ring = 0; a->impl_mpi = 0; a->impl_nccl = 1; }
        else if (!strcmp(arg, "staged")) { a->impl_ring = 0; a->impl_mpi = 0; a->impl_staged = 1; }
        else if (!strcmp(arg, "all")) { a->impl_ring = 1; a->impl_mpi = 1; a->impl_hier = 1; a->impl_nccl = 1; a->impl_staged = 1; }
        else bench_refuse("--impl must be ring, staged, mpi, both, hierarchical, nccl or all: '%s'", arg);
        break;
    case OPT_FP16: a->fp16 = 1; break;
    case OPT_DEVICE:
        if (!strcmp(arg, "cpu")) a->device_cuda = 0;
        else if (!strcmp(arg, "cuda")) a->device_cuda = 1;
        else bench_refuse("--device must be cpu or cuda: '%s'", arg);
#ifndef HAVE_CUDA
        if (a->device_cuda) bench_refuse("--device cuda: this build has no CUDA (configure --with-cuda)%s", "");
#endif
        break;
    case OPT_CHUNK: if (parse_int(arg, 1, 1 << 20, &a->chunk_kb)) bench_refuse("--chunk-kb must be an integer in 1..1048576: '%s'", arg); break;
    }
}

static void ar_check(void *own, const bench_opts_t *o, int nranks) {
    ar_opts_t *a = own;
    (void)nranks;
    if (o->compute_mlp && a->device_cuda) bench_refuse("--compute is not implemented with --device cuda%s", "");
    if (!a->device_cuda) {
        if (!strcmp(a->impl_arg, "nccl")) bench_refuse("--impl nccl needs --device cuda%s", "");
        if (!strcmp(a->impl_arg, "staged")) bench_refuse("--impl staged needs --device cuda (the CPU ring stages nothing)%s", "");
        a->impl_nccl = 0;
        a->impl_staged = 0;
    } else {
        /* on the GPU: ring, mpi and nccl; the rest has no device version */
        if (!strcmp(a->impl_arg, "hierarchical")) bench_refuse("--impl hierarchical is not implemented with --device cuda (ring, staged, mpi, nccl, both or all)%s", "");
        a->impl_hier = 0;
        if (a->fp16) bench_refuse("--fp16 is not implemented with --device cuda%s", "");
        if (o->compute_us) bench_refuse("--compute-us is not implemented with --device cuda%s", "");
    }
    if (o->max_bytes / sizeof(float) > (size_t)0x7fffffff) bench_refuse("-e: at most 8G (MPI int counts)%s", "");
}

static ar_opts_t ar = { .check = 1, .impl_ring = 1, .impl_mpi = 1, .chunk_kb = RING_DEFAULT_CHUNK_KB,
                        .impl_arg = "both" };
static const bench_spec_t ar_spec = {
    .prog = "psring-bench-allreduce",
    .synopsis = "mpirun -np N psring-bench-allreduce [options]",
    .help =
"  -c, --check 0|1       check the result against the exact sum (default 1)\n"
"      --impl ring|staged|mpi|both|hierarchical|nccl|all  psring's ring, MPI_Allreduce, both\n"
"                        side by side, the hierarchical allreduce (host reduce, ring across hosts,\n"
"                        host broadcast), NCCL (--device cuda only), or all: ring, mpi and\n"
"                        hierarchical on the CPU; ring (CUDA IPC on one host), staged (the ring\n"
"                        through pinned host buffers), mpi and nccl (where NCCL can run) on the GPU\n"
"                        (default both)\n"
"      --device cpu|cuda buffers in host memory, or in GPU memory with each rank on GPU\n"
"                        local_rank % device_count (ring on the device, mpi direct or staged) (cpu)\n"
"      --fp16            the ring sends halves (accumulates in float); mpi stays float\n"
"      --chunk-kb K      ring pipeline chunk in KiB (default " STRINGIFY(RING_DEFAULT_CHUNK_KB) ")\n",
    .help_csv = "rank 0",
    .help_pacing =
"      --compute-us U    before each timed call every rank works U us of CPU time, then a barrier (a\n"
"                        training step's rhythm); time is the collective alone, mean over ranks (0)\n"
"      --compute mlp:LAYERS:BATCH  the same, but the work is that MLP's forward + backward at that\n"
"                        batch, whose gradient the call reduces (size = the gradient: no -b/-e)\n",
    .unknown_fmt = "unknown option '%s' (try --help)",
    .missing_fmt = "option '%s' needs a value",
    .extra_fmt = "unexpected argument '%s' (try --help)",
    .tail = "",
    .shortopts = "c:",
    .longopts = ar_longopts,
    .flag = ar_flag,
    .check = ar_check,
    .own = &ar,
};

static int rank, nranks;

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

/* one size's calls for bench_time */
typedef struct {
    const bench_opts_t *o;
    impl_t impls[3];
    ring_t *r;
    float *buf;
    size_t count;
    train_step_t *ts;   /* --compute: the step before each call */
} ar_run_t;

static void ar_warm(void *self, int k) {
    ar_run_t *x = self;
    run_once(x->impls[k], ar.fp16, x->r, x->buf, x->count);
}

static double ar_timed(void *self, int k, int n) {
    ar_run_t *x = self;
    if (bench_paced(x->o)) {
        /* a training step's rhythm: every rank busy on its own, then a barrier (the trainer's
         * wait), then the timed collective alone; with more ranks than cores this is where
         * time-slicing hits the collective */
        double t = 0;
        for (int i = 0; i < n; i++) {
            train_step_pace(x->ts, x->o->compute_us);
            mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
            double t0 = MPI_Wtime();
            run_once(x->impls[k], ar.fp16, x->r, x->buf, x->count);
            t += MPI_Wtime() - t0;
        }
        return t;
    }
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) run_once(x->impls[k], ar.fp16, x->r, x->buf, x->count);
    return MPI_Wtime() - t0;
}

#ifdef HAVE_CUDA
/* --device cuda: the GPU run is its own half (allreduce_cuda.c); same rows, same CSV */
static int ar_main_cuda(const bench_opts_t *o) {
    int cuda_dev = bench_cuda_pin();   /* no usable GPU: exit 2 before any file is written */
    FILE *csv = rank == 0 ? bench_csv_open(o, BENCH_ROW_CSV, 0) : NULL;
    bench_cuda_opts_t co = {.sweep = o, .check = ar.check, .chunk_kb = ar.chunk_kb, .impl_ring = ar.impl_ring,
                            .impl_staged = ar.impl_staged, .impl_mpi = ar.impl_mpi, .impl_nccl = ar.impl_nccl,
                            .nccl_required = !strcmp(ar.impl_arg, "nccl"), .csv = csv};
    long wrong = bench_allreduce_cuda(&co, cuda_dev);
    int csv_bad = bench_csv_close(o, csv);   /* its own line: not counted as wrong elements */
    if (rank == 0 && wrong) fprintf(stderr, "psring-bench-allreduce: %ld wrong elements\n", wrong);
    mpiCheck(MPI_Finalize());
    return wrong || csv_bad ? 1 : 0;
}
#endif

/* the header: the run's settings and this machine's memcpy ceiling, then the table's columns */
static void ar_header(const bench_opts_t *o) {
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    double mc = 0;
    if (rank == 0) mc = memcpy_gbps();
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    printf0("# psring-bench-allreduce: %d ranks, ring chunk %d KiB, fp16 %s, %d iters, %d warm-up, check %d\n",
            nranks, ar.chunk_kb, ar.fp16 ? "on (ring only)" : "off", o->iters, o->warmup, ar.check);
    printf0("# memcpy bandwidth (one process, 64 MiB): %.2f GB/s = the ceiling for a shared-memory copy\n", mc);
    if (rank == 0) bench_row_header();
}

/* The ring, and the buffer every implementation reduces: the trainer's gradient buffer comes from
 * the same allocator, a shared-memory window when all ranks are on this host (the ring then loads
 * and stores instead of sending), and MPI_Allreduce gets the very same buffer. With --compute the
 * model's gradient is the buffer, each rank its own data (*ts set). */
static float *ar_buffers(const bench_opts_t *o, ring_t *r, size_t maxcount, train_step_t *step, train_step_t **ts) {
    ring_init(r, MPI_COMM_WORLD, maxcount, (size_t)ar.chunk_kb * 1024);
    *ts = NULL;
    if (o->compute_mlp) {
        mlp_allocator_t ga = { ring_mlp_alloc, ring_mlp_free, r };
        train_step_init(step, &o->step, &ga, 1 + (uint64_t)rank, 1);
        *ts = step;
    }
    float *buf = *ts ? (*ts)->m.grads : ring_buffer_alloc(r, maxcount);
    if (ar.impl_hier) {
        hier_init(&hier, MPI_COMM_WORLD, maxcount, (size_t)ar.chunk_kb * 1024, hier_local_size_from_env());
        printf0("# hierarchical: %d host(s), %d rank(s) on rank 0's host (fp16 does not apply)\n", hier.hosts, hier.local_size);
    }
    return buf;
}

/* one size: every implementation timed in blocks, then checked, one row each; its wrong elements */
static long ar_size(const bench_opts_t *o, ar_run_t *run, const bench_impls_t *im, FILE *csv, const bench_size_t *sz) {
    size_t count = sz->count, bytes = sz->bytes;
    long total_wrong = 0;
    /* zeros: no growth to inf / denormals over many iterations, same work per element */
    memset(run->buf, 0, bytes);
    run->count = count;
    double tsum[3];
    bench_time(o, im, tsum);
    for (int k = 0; k < im->nimpl; k++) {
        impl_t impl = run->impls[k];
        double t = tsum[k] / o->iters, tmax = 0;
        /* with --compute-us or --compute each rank timed its own calls after the barrier:
         * report their mean over ranks, as the trainer's CSV does; else the slowest rank's loop */
        int paced = bench_paced(o);
        mpiCheck(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, paced ? MPI_SUM : MPI_MAX, 0, MPI_COMM_WORLD));
        if (paced) tmax /= nranks;
        long wrong = ar.check ? check(impl, ar.fp16, run->r, run->buf, count) : -1;
        if (wrong > 0) total_wrong += wrong;
        if (rank == 0)
            bench_row(csv, bytes, count, impl == IMPL_MPI ? "mpi" : impl == IMPL_HIER ? "hier" : ar.fp16 ? "ring-fp16" : "ring",
                      tmax, wrong, nranks, ar.chunk_kb);
        memset(run->buf, 0, bytes);
    }
    return total_wrong;
}

int main(int argc, char **argv) {
    bench_opts_t o = { .min_bytes = 4096, .max_bytes = 64u << 20, .factor = 2, .iters = 20, .warmup = 5 };
    bench_init(&o, &ar_spec, argc, argv, &rank, &nranks);
#ifdef HAVE_CUDA
    if (ar.device_cuda) return ar_main_cuda(&o);
#endif
    FILE *csv = rank == 0 ? bench_csv_open(&o, BENCH_ROW_CSV, 0) : NULL;
    ar_header(&o);
    ring_t r;
    train_step_t step, *ts;
    float *buf = ar_buffers(&o, &r, o.max_bytes / sizeof(float), &step, &ts);
    ar_run_t run = { .o = &o, .r = &r, .buf = buf, .ts = ts };
    bench_impls_t im = { .nimpl = 0, .warm = ar_warm, .timed = ar_timed, .self = &run };
    if (ar.impl_ring) run.impls[im.nimpl++] = IMPL_RING;
    if (ar.impl_mpi) run.impls[im.nimpl++] = IMPL_MPI;
    if (ar.impl_hier) run.impls[im.nimpl++] = IMPL_HIER;
    long total_wrong = 0;
    for (bench_size_t sz = {0}; bench_size_next(&o, &sz);) total_wrong += ar_size(&o, &run, &im, csv, &sz);
    int csv_bad = bench_csv_close(&o, csv);   /* its own line: not counted as wrong elements */
    if (rank == 0 && total_wrong) fprintf(stderr, "psring-bench-allreduce: %ld wrong elements\n", total_wrong);
    if (ts) train_step_free(ts);   /* gives buf back through ring_mlp_free */
    else ring_buffer_free(&r, buf);
    ring_free(&r);
    if (ar.impl_hier) hier_free(&hier);
    mpiCheck(MPI_Finalize());
    return total_wrong || csv_bad ? 1 : 0;
}
