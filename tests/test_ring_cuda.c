/* test_ring_cuda: the GPU ring (ring_cuda.h), on its IPC path and on its staged path, against the
 * CPU ring (ring_allreduce.h) on the same random, rank-dependent data: the results must be bit for
 * bit equal (same segments, same order of float additions), for counts from 4 bytes to 256 MiB
 * that leave segments empty, odd, and many chunks long, at every alignment; the IPC path across
 * buffers that change and one it cannot share (the staged path takes over, said once). Then
 * NCCL: with ranks on distinct GPUs it must sum exactly (integer-valued data); with ranks sharing
 * a GPU it must refuse with the one-line message. Run under mpirun (tests/ring_cuda.sh).
 *   test_ring_cuda --probe    exit 0 when a GPU is usable, 77 when not (no MPI)
 * Exits 77 without a GPU, 1 on any mismatch. */
#include "ring/ring_allreduce.h"
#include "ring/ring_cuda.h"
#include "common/mpi_check.h"
#include "common/cuda_mem.h"
#include "common/cuda_check.h"
#include "common/check.h"
#include "common/rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* this rank's random data for count (malloc'd) */
static float *rank_data(size_t count) {
    float *a = xmalloc((count ? count : 1) * sizeof(float));
    rng_t r;
    rng_init(&r, 1000 + (uint64_t)rank, count);
    for (size_t i = 0; i < count; i++) a[i] = (rng_float(&r) - 0.5f) * (float)(rank + 1);
    return a;
}

/* the same data reduced by the device ring (IPC allowed or not) at float offset off into a fresh
 * cudaMalloc'd buffer, against the CPU ring: elements that differ, over all ranks */
static long compare_one(size_t count, size_t chunk_bytes, int allow_ipc, size_t off) {
    float *a = rank_data(count), *b = xmalloc((count ? count : 1) * sizeof(float));
    float *d = cuda_floats_alloc(count + off);
    cuda_to_device(d + off, a, count);
    ring_t cpu;
    ring_init(&cpu, MPI_COMM_WORLD, count, chunk_bytes);
    ring_allreduce(&cpu, a, count);
    ring_free(&cpu);
    ring_cuda_t *gpu = ring_cuda_create(MPI_COMM_WORLD, count, chunk_bytes, allow_ipc);
    ring_cuda_allreduce(gpu, d + off, count);
    ring_cuda_allreduce(gpu, d + off, 0);   /* count 0 is a no-op on every rank */
    cuda_to_host(b, d + off, count);
    long wrong = 0;
    for (size_t i = 0; i < count; i++) wrong += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    /* one host: the ring must have taken the path asked for */
    const char *want = allow_ipc && size > 1 ? "ipc" : "staged";
    if (strcmp(ring_cuda_path(gpu), want) && !(!allow_ipc && !strcmp(ring_cuda_path(gpu), "cuda-aware"))) {
        fprintf(stderr, "test_ring_cuda: rank %d: count %zu took the %s path, not %s\n", rank, count, ring_cuda_path(gpu), want);
        wrong++;
    }
    if (wrong && rank == 0)
        fprintf(stderr, "test_ring_cuda: count %zu chunk %zu B offset %zu: %ld elements differ from the CPU ring (%s path)\n",
                count, chunk_bytes, off, wrong, ring_cuda_path(gpu));
    ring_cuda_free(gpu);
    cuda_floats_free(d);
    free(a); free(b);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    return wrong;
}

/* the IPC path across calls: two buffers in turn (handles opened once, then from the cache), a
 * buffer freed and allocated again (exported anew), then one it cannot export (managed memory):
 * the staged path from there on, said once, every sum right */
static long ipc_buffers(void) {
    const size_t count = 100003;
    float *want = rank_data(count), *got = xmalloc(count * sizeof(float));
    ring_t cpu;
    ring_init(&cpu, MPI_COMM_WORLD, count, 0);
    ring_allreduce(&cpu, want, count);
    ring_free(&cpu);
    float *data = rank_data(count);
    ring_cuda_t *gpu = ring_cuda_create(MPI_COMM_WORLD, count, 0, 1);
    float *d[2] = {cuda_floats_alloc(count), cuda_floats_alloc(count + 5)};
    long wrong = 0;
    for (int call = 0; call < 6; call++) {
        float *buf = call % 2 ? d[1] + (size_t)rank : d[0];   /* the second at a different offset per rank */
        if (call == 4) { cuda_floats_free(d[0]); d[0] = cuda_floats_alloc(count); buf = d[0]; }
        cuda_to_device(buf, data, count);
        ring_cuda_allreduce(gpu, buf, count);
        cuda_to_host(got, buf, count);
        for (size_t i = 0; i < count; i++) wrong += memcmp(&want[i], &got[i], sizeof(float)) != 0;
        if (size > 1 && strcmp(ring_cuda_path(gpu), "ipc")) { fprintf(stderr, "test_ring_cuda: call %d left the IPC path\n", call); wrong++; }
    }
    float *m = NULL;
    cudaCheck(cudaMallocManaged((void **)&m, count * sizeof(float), cudaMemAttachGlobal));
    cuda_to_device(m, data, count);
    ring_cuda_allreduce(gpu, m, count);
    cuda_to_host(got, m, count);
    for (size_t i = 0; i < count; i++) wrong += memcmp(&want[i], &got[i], sizeof(float)) != 0;
    if (size > 1 && strcmp(ring_cuda_path(gpu), "staged") && strcmp(ring_cuda_path(gpu), "cuda-aware")) {
        fprintf(stderr, "test_ring_cuda: managed memory did not leave the IPC path\n");
        wrong++;
    }
    cudaCheck(cudaFree(m));
    ring_cuda_free(gpu);
    cuda_floats_free(d[0]);
    cuda_floats_free(d[1]);
    free(want); free(got); free(data);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) printf("ipc buffers, %d ranks: %ld wrong\n", size, wrong);
    return wrong;
}

static long nccl_check(void) {
    char err[512] = "";
    nccl_ring_t *n = nccl_ring_create(MPI_COMM_WORLD, err, sizeof err);
    int ndev = cuda_device_count(NULL, 0);
    if (!n) {
        /* refused: right only if some ranks share a GPU (or NCCL is missing) */
        int sharing = ndev < size;
        if (rank == 0) printf("nccl: refused: %s\n", err);
        if (sharing && !strstr(err, "share GPU")) { if (rank == 0) fprintf(stderr, "test_ring_cuda: wrong NCCL refusal\n"); return 1; }
        if (!sharing && !strstr(err, "not available")) { if (rank == 0) fprintf(stderr, "test_ring_cuda: NCCL refused distinct GPUs\n"); return 1; }
        return 0;
    }
    size_t count = 1000003;
    float *a = xmalloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) a[i] = (float)(rank + 1) * (float)(i % 97 + 1);
    float *d = cuda_floats_alloc(count);
    cuda_to_device(d, a, count);
    nccl_ring_allreduce(n, d, count);
    cuda_to_host(a, d, count);
    long wrong = 0;
    double tri = (double)size * (size + 1) / 2;
    for (size_t i = 0; i < count; i++) wrong += (double)a[i] != tri * (double)(i % 97 + 1);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) printf("nccl: %ld wrong of %zu\n", wrong, count);
    nccl_ring_free(n);
    cuda_floats_free(d);
    free(a);
    return wrong;
}

int main(int argc, char **argv) {
    char why[256] = "";
    if (argc > 1 && !strcmp(argv[1], "--probe")) return cuda_device_count(why, sizeof why) > 0 ? 0 : 77;
    mpiCheck(MPI_Init(&argc, &argv));
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &size));
    psring_log_rank = rank;
    MPI_Comm node;
    int local = 0;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    mpiCheck(MPI_Comm_rank(node, &local));
    mpiCheck(MPI_Comm_free(&node));
    int ok = cuda_device_pin(local, why, sizeof why) >= 0;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!ok) {
        if (rank == 0) printf("SKIP: no usable CUDA device (%s)\n", why);
        MPI_Finalize();
        return 77;
    }
    /* 4 bytes to 256 MiB, counts that do and do not divide by the ranks, both paths, buffers at
     * every float alignment (the IPC kernel's head and tail) and, last, at offsets that differ by
     * rank (no common alignment: element by element) */
    const size_t counts[] = {0, 1, 7, 3, 1000, 4096, 262147, 1000003};
    const size_t chunks[] = {4096, 1u << 20};
    long wrong = 0;
    for (int ipc = 1; ipc >= 0; ipc--) {
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
            for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) wrong += compare_one(counts[i], chunks[c], ipc, i % 4);
        wrong += compare_one((size_t)size - 1, 4, ipc, 0);
        wrong += compare_one(1000003, 1u << 20, ipc, (size_t)rank);
        wrong += compare_one((size_t)64 << 20, 1u << 20, ipc, 0);       /* 256 MiB */
        wrong += compare_one(((size_t)64 << 20) - 3, 1u << 20, ipc, 1);
        if (rank == 0) printf("ring_cuda (%s) vs ring, %d ranks: %ld elements differ so far\n", ipc ? "ipc" : "staged", size, wrong);
    }
    wrong += ipc_buffers();
    if (rank == 0) printf("ring_cuda vs ring, %d ranks: %ld elements differ\n", size, wrong);
    wrong += nccl_check();
    MPI_Finalize();
    return wrong ? 1 : 0;
}
