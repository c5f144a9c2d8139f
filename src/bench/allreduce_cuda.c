/* allreduce_cuda.c: psring-bench-allreduce --device cuda. The same driver as the CPU benchmark
 * (allreduce.c: sizes, warm-up, blocks that alternate implementations after a barrier, the slowest
 * rank's mean, the same columns and CSV), with every buffer in device memory:
 *   ring    psring's ring on device buffers (ring_cuda.h): ranks on one host through CUDA IPC
 *           (peers' buffers mapped, one kernel per GPU), else as "staged"
 *   staged  the same ring with IPC off: pinned host staging (or device pointers to a CUDA-aware
 *           MPI), reduction by the GPU kernel
 *   mpi   MPI_Allreduce on the device pointer when MPI is CUDA-aware, else staged: D2H into a
 *         pinned buffer, MPI_Allreduce on it, H2D (what the trainer's --allreduce mpi does)
 *   nccl  ncclAllReduce (libnccl.so.2 through dlopen, as the trainer); NCCL needs one GPU per
 *         rank, so ranks sharing a GPU get no nccl row (or exit 2 with --impl nccl)
 * Every call returns with the sum complete on the device (ring and nccl synchronise their stream;
 * mpi's copies are synchronous), and each timed block ends with cudaDeviceSynchronize before the
 * clock stops. The check runs outside the timed loop: rank-dependent data (rank+1) x (i % 97 + 1)
 * copied up, one call, the result copied back and compared with the exact sum.
 * Each rank pins GPU local_rank % device_count (Horovod's rule), so N ranks on a 1-GPU machine
 * share it. The sweep, the timed blocks and the rows are bench_driver.c's. Not here: fp16, the
 * hierarchical allreduce, several GPUs per rank. */
#include "allreduce_cuda.h"
#include "ring/ring_allreduce.h"
#include "ring/ring_cuda.h"
#include "common/mpi_check.h"
#include "common/cuda_mem.h"
#include "common/cuda_check.h"
#include "common/check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DIMPL_RING, DIMPL_STAGED, DIMPL_MPI, DIMPL_NCCL } dimpl_t;
static const char *const dimpl_name[] = {"ring", "staged", "mpi", "nccl"};

typedef struct {
    int rank, nranks, mpi_direct;
    ring_cuda_t *ring, *staged;
    nccl_ring_t *nccl;
    float *d_buf;        /* maxcount floats on the device: what every implementation reduces */
    float *h_stage;      /* pinned, maxcount: staged MPI_Allreduce */
    float *h_check;      /* pageable, maxcount: check data up and results back */
} dev_bench_t;

/* exit 2 on every rank after one line from the lowest rank that has something to say */
static void refuse_all(int rank, int bad_here, const char *line) {
    int first = bad_here ? rank : 1 << 30;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (first == 1 << 30) return;
    if (rank == first) { fprintf(stderr, "psring-bench-allreduce: %s\n", line); fflush(stderr); }
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));   /* the line is out before any rank exits */
    MPI_Finalize();
    exit(EXIT_BADINPUT);
}

static void run_once(dev_bench_t *b, dimpl_t impl, size_t count) {
    switch (impl) {
    case DIMPL_RING:
        ring_cuda_allreduce(b->ring, b->d_buf, count);
        break;
    case DIMPL_STAGED:
        ring_cuda_allreduce(b->staged, b->d_buf, count);
        break;
    case DIMPL_MPI:
        if (b->mpi_direct) {
            cudaCheck(cudaDeviceSynchronize());   /* MPI reads the buffer outside any stream */
            mpiCheck(MPI_Allreduce(MPI_IN_PLACE, b->d_buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        } else {
            if (count) cudaCheck(cudaMemcpy(b->h_stage, b->d_buf, count * sizeof(float), cudaMemcpyDeviceToHost));
            mpiCheck(MPI_Allreduce(MPI_IN_PLACE, b->h_stage, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
            if (count) cudaCheck(cudaMemcpy(b->d_buf, b->h_stage, count * sizeof(float), cudaMemcpyHostToDevice));
        }
        break;
    case DIMPL_NCCL:
        nccl_ring_allreduce(b->nccl, b->d_buf, count);
        break;
    }
}

/* one size's calls for bench_time */
typedef struct {
    dev_bench_t *b;
    dimpl_t impls[4];
    size_t count;
} dev_run_t;

static void dev_warm(void *self, int k) {
    dev_run_t *x = self;
    run_once(x->b, x->impls[k], x->count);
}

static double dev_timed(void *self, int k, int n) {
    dev_run_t *x = self;
    cudaCheck(cudaDeviceSynchronize());   /* the warm-up is done before the first block's barrier */
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) run_once(x->b, x->impls[k], x->count);
    cudaCheck(cudaDeviceSynchronize());   /* the clock stops when the GPU is done */
    return MPI_Wtime() - t0;
}

/* wrong elements over all ranks: exact integer sums, so any misplaced chunk shows */
static long check(dev_bench_t *b, dimpl_t impl, size_t count) {
    for (size_t i = 0; i < count; i++) b->h_check[i] = (float)(b->rank + 1) * (float)(i % 97 + 1);
    if (count) cudaCheck(cudaMemcpy(b->d_buf, b->h_check, count * sizeof(float), cudaMemcpyHostToDevice));
    run_once(b, impl, count);
    cudaCheck(cudaDeviceSynchronize());
    if (count) cudaCheck(cudaMemcpy(b->h_check, b->d_buf, count * sizeof(float), cudaMemcpyDeviceToHost));
    long wrong = 0;
    double tri = (double)b->nranks * (b->nranks + 1) / 2;
    for (size_t i = 0; i < count; i++)
        if ((double)b->h_check[i] != tri * (double)(i % 97 + 1)) wrong++;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    return wrong;
}

/* how many distinct GPUs the ranks use (host and PCI bus id, ring_cuda_gpu_ids), and
 * on rank 0 "rank 0 -> bus id, ..." into list (malloc'd, the caller frees; NULL elsewhere) */
static int describe_gpus(int rank, int nranks, char **list) {
    char *all = ring_cuda_gpu_ids(MPI_COMM_WORLD);   /* "host/bus id" of every rank */
    int distinct = 0;
    for (int i = 0; i < nranks; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= !strcmp(all + RING_CUDA_GPU_ID * (size_t)i, all + RING_CUDA_GPU_ID * (size_t)j);
        distinct += !seen;
    }
    if (rank == 0) {
        size_t cap = 96 * (size_t)nranks + 1, used = 0;
        *list = xmalloc(cap);
        (*list)[0] = 0;
        for (int i = 0; i < nranks; i++) {
            const char *id = all + RING_CUDA_GPU_ID * (size_t)i, *bus = strchr(id, '/');
            used += (size_t)snprintf(*list + used, cap - used, "%srank %d -> %s", i ? ", " : "", i, bus ? bus + 1 : id);
        }
    }
    free(all);
    return distinct;
}

/* the header's words for a ring's path */
static const char *ring_path_text(const ring_cuda_t *r) {
    const char *p = ring_cuda_path(r);
    if (!strcmp(p, "ipc")) return "ipc: peers' device buffers mapped through CUDA IPC, loaded and stored by one kernel per GPU";
    if (!strcmp(p, "cuda-aware")) return "cuda-aware: device pointers to a CUDA-aware MPI, reduction kernel";
    return "staged: through pinned host buffers on a CUDA stream and MPI, reduction kernel";
}

int bench_cuda_pin(void) {
    int rank;
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    /* the rank on this host picks the GPU, as the trainer does */
    MPI_Comm node;
    int local_rank = 0;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    mpiCheck(MPI_Comm_rank(node, &local_rank));
    mpiCheck(MPI_Comm_free(&node));
    char why[256] = "", line[512];
    int dev = cuda_device_pin(local_rank, why, sizeof why);
    snprintf(line, sizeof line, "--device cuda: no usable CUDA device on rank %d (%s)", rank, why);
    refuse_all(rank, dev < 0, line);
    return dev;
}

/* the rings, NCCL and the buffers every implementation uses; returns whether nccl is timed
 * (nccl_err says why not) */
static int dev_open(dev_bench_t *b, const bench_cuda_opts_t *o, size_t maxcount, char *nccl_err, size_t errlen) {
    b->mpi_direct = ring_cuda_mpi_aware();
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &b->mpi_direct, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (o->impl_ring) b->ring = ring_cuda_create(MPI_COMM_WORLD, maxcount, (size_t)o->chunk_kb * 1024, 1);
    if (o->impl_staged) b->staged = ring_cuda_create(MPI_COMM_WORLD, maxcount, (size_t)o->chunk_kb * 1024, 0);
    int impl_nccl = o->impl_nccl;
    if (impl_nccl) {
        b->nccl = nccl_ring_create(MPI_COMM_WORLD, nccl_err, errlen);   /* collective: same verdict everywhere */
        if (!b->nccl && o->nccl_required) refuse_all(b->rank, b->rank == 0, nccl_err);
        if (!b->nccl) impl_nccl = 0;
    }
    cudaCheck(cudaMalloc((void **)&b->d_buf, maxcount * sizeof(float)));
    if (o->impl_mpi && !b->mpi_direct) cudaCheck(cudaMallocHost((void **)&b->h_stage, maxcount * sizeof(float)));
    if (o->check) b->h_check = xmalloc(maxcount * sizeof(float));
    return impl_nccl;
}

static void dev_close(dev_bench_t *b) {
    if (b->ring) ring_cuda_free(b->ring);
    if (b->staged) ring_cuda_free(b->staged);
    if (b->nccl) nccl_ring_free(b->nccl);
    cudaCheck(cudaFree(b->d_buf));
    if (b->h_stage) cudaCheck(cudaFreeHost(b->h_stage));
    free(b->h_check);
}

/* The ceilings on this GPU: a device-to-device copy, and the reduction kernel (64 MiB, rank 0
 * alone while the others wait, so a shared GPU does not halve it); then rank 0's header: the GPUs
 * (name; gpus, freed here; distinct of them), each implementation's path, the ceilings. */
static void dev_header(const dev_bench_t *b, const bench_cuda_opts_t *o, const char *name, char *gpus, int distinct,
                       const char *nccl_err) {
    const bench_opts_t *sw = o->sweep;
    double add_gbps = 0, copy_gbps = 0;
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    if (b->rank == 0) ring_cuda_kernel_bw((64u << 20) / sizeof(float), 5, &add_gbps, &copy_gbps);
    mpiCheck(MPI_Barrier(MPI_COMM_WORLD));
    if (b->rank != 0) return;
    printf("# psring-bench-allreduce: %d ranks, device cuda (%s; %d rank(s) on %d distinct GPU(s)), ring chunk %d KiB, %d iters, %d warm-up, check %d\n",
           b->nranks, name, b->nranks, distinct, o->chunk_kb, sw->iters, sw->warmup, o->check);
    printf("# GPUs: %s\n", gpus);
    free(gpus);
    printf("# ring: %s\n", b->ring ? ring_path_text(b->ring) : "not timed");
    printf("# staged: %s\n", b->staged ? ring_path_text(b->staged) : "not timed");
    printf("# mpi: %s\n", !o->impl_mpi ? "not timed" : b->mpi_direct ? "MPI_Allreduce on device pointers (CUDA-aware MPI)"
                                                                     : "staged: D2H to pinned host, MPI_Allreduce, H2D (MPI is not CUDA-aware)");
    printf("# nccl: %s%s\n", !o->impl_nccl ? "not timed" : b->nccl ? "ncclAllReduce (libnccl.so.2)" : "skipped: ", b->nccl ? "" : nccl_err);
    printf("# rank 0's GPU alone, 64 MiB: cudaMemcpy D2D %.1f GB/s, reduction kernel %.1f GB/s (bytes read + written)\n", copy_gbps, add_gbps);
    /* N ranks, R of them on each GPU: every rank's buffer is read once and written once in
     * full, so each GPU's memory copies R x bytes; busbw = 2 (N-1)/N x bytes / t */
    int per_gpu = (b->nranks + distinct - 1) / distinct;
    double c = copy_gbps / 2;
    printf("# copy rate C = %.1f GB/s (bytes copied per second)", c);
    if (per_gpu > 1)
        printf("; %d ranks per GPU: busbw <= 2(N-1)/(N R) x C = %.3f C = %.1f GB/s (each GPU reads and writes R x bytes)",
               per_gpu, 2.0 * (b->nranks - 1) / ((double)b->nranks * per_gpu), 2.0 * (b->nranks - 1) / ((double)b->nranks * per_gpu) * c);
    printf("\n");
    bench_row_header();
}

/* one size: every implementation timed in blocks, then checked, one row each; its wrong elements */
static long dev_size(dev_run_t *run, const bench_impls_t *im, const bench_cuda_opts_t *o, size_t maxcount,
                     const bench_size_t *sz) {
    dev_bench_t *b = run->b;
    const bench_opts_t *sw = o->sweep;
    long total_wrong = 0;
    /* zeros: no growth to inf over many iterations, the same work per element */
    cudaCheck(cudaMemset(b->d_buf, 0, maxcount * sizeof(float)));
    cudaCheck(cudaDeviceSynchronize());
    run->count = sz->count;
    double tsum[4];
    bench_time(sw, im, tsum);
    for (int k = 0; k < im->nimpl; k++) {
        double t = tsum[k] / sw->iters, tmax = 0;
        mpiCheck(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        long wrong = o->check ? check(b, run->impls[k], sz->count) : -1;
        if (wrong > 0) total_wrong += wrong;
        if (b->rank == 0) bench_row(o->csv, sz->bytes, sz->count, dimpl_name[run->impls[k]], tmax, wrong, b->nranks, o->chunk_kb);
        cudaCheck(cudaMemset(b->d_buf, 0, maxcount * sizeof(float)));
        cudaCheck(cudaDeviceSynchronize());
    }
    return total_wrong;
}

long bench_allreduce_cuda(const bench_cuda_opts_t *o, int dev) {
    dev_bench_t b = {0};
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &b.rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &b.nranks));
    size_t maxcount = o->sweep->max_bytes / sizeof(float);
    if (maxcount == 0) maxcount = 1;
    char name[256];
    cuda_device_name(name, sizeof name);
    char *gpus = NULL;
    int distinct = describe_gpus(b.rank, b.nranks, &gpus);
    char nccl_err[512] = "";
    int impl_nccl = dev_open(&b, o, maxcount, nccl_err, sizeof nccl_err);
    dev_header(&b, o, name, gpus, distinct, nccl_err);

    dev_run_t run = { .b = &b };
    bench_impls_t im = { .nimpl = 0, .warm = dev_warm, .timed = dev_timed, .self = &run };
    if (o->impl_ring) run.impls[im.nimpl++] = DIMPL_RING;
    if (o->impl_staged) run.impls[im.nimpl++] = DIMPL_STAGED;
    if (o->impl_mpi) run.impls[im.nimpl++] = DIMPL_MPI;
    if (impl_nccl) run.impls[im.nimpl++] = DIMPL_NCCL;
    long total_wrong = 0;
    for (bench_size_t sz = {0}; bench_size_next(o->sweep, &sz);) total_wrong += dev_size(&run, &im, o, maxcount, &sz);
    dev_close(&b);
    return total_wrong;
}
