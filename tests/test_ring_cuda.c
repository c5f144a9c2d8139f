/* test_ring_cuda: the GPU ring (ring_cuda.h) against the CPU ring (ring_allreduce.h) on the same
 * random, rank-dependent data: the results must be bit for bit equal (same segments, same order
 * of float additions), for counts that leave segments empty, odd, and many chunks long. Then
 * NCCL: with ranks on distinct GPUs it must sum exactly (integer-valued data); with ranks sharing
 * a GPU it must refuse with the one-line message. Run under mpirun (tests/ring_cuda.sh).
 *   test_ring_cuda --probe    exit 0 when a GPU is usable, 77 when not (no MPI)
 * Exits 77 without a GPU, 1 on any mismatch. */
#include "ring/ring_allreduce.h"
#include "ring/ring_cuda.h"
#include "common/mpi_check.h"
#include "common/cuda_mem.h"
#include "common/check.h"
#include "common/rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static long compare_one(size_t count, size_t chunk_bytes) {
    float *a = xmalloc((count ? count : 1) * sizeof(float)), *b = xmalloc((count ? count : 1) * sizeof(float));
    rng_t r;
    rng_init(&r, 1000 + (uint64_t)rank, count);
    for (size_t i = 0; i < count; i++) a[i] = (rng_float(&r) - 0.5f) * (float)(rank + 1);
    float *d = cuda_floats_alloc(count);
    cuda_to_device(d, a, count);
    ring_t cpu;
    ring_init(&cpu, MPI_COMM_WORLD, count, chunk_bytes);
    ring_allreduce(&cpu, a, count);
    ring_free(&cpu);
    ring_cuda_t *gpu = ring_cuda_create(MPI_COMM_WORLD, count, chunk_bytes);
    ring_cuda_allreduce(gpu, d, count);
    ring_cuda_allreduce(gpu, d, 0);   /* count 0 is a no-op on every rank */
    cuda_to_host(b, d, count);
    long wrong = 0;
    for (size_t i = 0; i < count; i++) wrong += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    if (wrong && rank == 0)
        fprintf(stderr, "test_ring_cuda: count %zu chunk %zu B: %ld elements differ from the CPU ring%s\n", count,
                chunk_bytes, wrong, ring_cuda_direct(gpu) ? " (CUDA-aware MPI path)" : " (staged path)");
    ring_cuda_free(gpu);
    cuda_floats_free(d);
    free(a); free(b);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
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
    const size_t counts[] = {0, 1, 7, 3, 1000, 4096, 262147, 1000003};
    const size_t chunks[] = {4096, 1u << 20};
    long wrong = 0;
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) wrong += compare_one(counts[i], chunks[c]);
    wrong += compare_one((size_t)size - 1, 4);
    if (rank == 0) printf("ring_cuda vs ring, %d ranks: %ld elements differ\n", size, wrong);
    wrong += nccl_check();
    MPI_Finalize();
    return wrong ? 1 : 0;
}
