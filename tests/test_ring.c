/* test_ring.c: the ring allreduce against exact sums and against MPI_Allreduce, under mpirun for
 * any N (tests/ring_allreduce.sh runs it with N = 1..4). A plain MPI program rather than a Check
 * runner because Check forks each test, which MPI does not survive. Every rank checks its own
 * buffer; failures print one line each and the program exits 1 on every rank if any rank failed.
 * Data is rank- and position-dependent, (rank+1) * (i % 97 + 1), so a chunk that lands in the
 * wrong place or is added twice changes the sum. Also Adasum (power-of-two N) against a pure-C
 * reference of the recursive pairwise combination in double, and the hierarchical allreduce (fake
 * hosts of 2 consecutive ranks, and real hosts) against exact sums and the flat ring; and the
 * load/store path on ring_buffer_alloc buffers, bit-identical to the message path.
 * Not tested here: timing (psring-bench-allreduce). */
#include "ring/ring_allreduce.h"
#include "ring/ring_ops.h"
#include "common/half.h"
#include "common/mpi_check.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failures;

#define FAIL(...) do { fprintf(stderr, "test_ring: rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); failures++; } while (0)

static float value(int r, size_t i) { return (float)(r + 1) * (float)(i % 97 + 1); }
static float expected(size_t i) { return (float)(nranks * (nranks + 1) / 2) * (float)(i % 97 + 1); }

/* the uneven split: contiguous, covering, first count % n segments one longer */
static void test_segments(void) {
    const size_t counts[] = {0, 1, 2, 3, 5, 7, 97, 1000003};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        for (int n = 1; n <= 9; n++) {
            size_t next = 0;
            for (int j = 0; j < n; j++) {
                size_t off, len;
                ring_segment(counts[c], n, j, &off, &len);
                size_t want = counts[c] / n + ((size_t)j < counts[c] % n);
                if (off != next || len != want)
                    FAIL("ring_segment(%zu, %d, %d) = [%zu, +%zu), want [%zu, +%zu)", counts[c], n, j, off, len, next, want);
                next = off + len;
            }
            if (next != counts[c]) FAIL("ring_segment(%zu, %d): segments sum to %zu", counts[c], n, next);
        }
}

/* all ranks must hold bit-identical results */
static void check_identical(const float *buf, size_t count, const char *what) {
    uint64_t hsh = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < count * sizeof(float); i++) hsh = (hsh ^ p[i]) * 1099511628211ull;
    uint64_t lo = hsh, hi = hsh;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD));
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD));
    if (lo != hi) FAIL("%s: ranks hold different results", what);
}

static void test_exact(size_t count, size_t chunk_bytes, size_t init_count) {
    ring_t r;
    ring_init(&r, MPI_COMM_WORLD, init_count, chunk_bytes);
    float *buf = malloc((count + 1) * sizeof(float));
    for (int fp16 = 0; fp16 <= 1; fp16++) {
        for (size_t i = 0; i < count; i++) buf[i] = value(rank, i);
        buf[count] = -7.0f;   /* guard: must not be touched */
        uint64_t s0 = r.bytes_sent, r0 = r.bytes_recv;
        if (fp16) ring_allreduce_fp16(&r, buf, count); else ring_allreduce(&r, buf, count);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < count; i++) {
            float e = expected(i), tol = fp16 ? (float)nranks * e / 2048.0f : 0.0f;
            if (!(fabsf(buf[i] - e) <= tol)) { if (!bad++) first = i; }
        }
        if (bad) FAIL("%s count %zu chunk %zu B: %zu wrong, first [%zu] = %g want %g", fp16 ? "fp16" : "float",
                      count, chunk_bytes, bad, first, buf[first], expected(first));
        if (buf[count] != -7.0f) FAIL("count %zu: wrote past the end", count);
        /* payload: all segments but (rank+1) in reduce-scatter, all but (rank+2) in allgather */
        size_t off, l1, l2, esz = fp16 ? 2 : 4;
        ring_segment(count, nranks, (rank + 1) % nranks, &off, &l1);
        ring_segment(count, nranks, (rank + 2) % nranks, &off, &l2);
        /* and receives all but (rank) in reduce-scatter, all but (rank+1) in allgather */
        size_t l0;
        ring_segment(count, nranks, rank, &off, &l0);
        uint64_t want_s = nranks == 1 ? 0 : (uint64_t)(2 * count - l1 - l2) * esz;
        uint64_t want_r = nranks == 1 ? 0 : (uint64_t)(2 * count - l0 - l1) * esz;
        if (r.bytes_sent - s0 != want_s || r.bytes_recv - r0 != want_r)
            FAIL("count %zu: bytes sent %llu recv %llu, want %llu and %llu", count,
                 (unsigned long long)(r.bytes_sent - s0), (unsigned long long)(r.bytes_recv - r0),
                 (unsigned long long)want_s, (unsigned long long)want_r);
        check_identical(buf, count, fp16 ? "fp16" : "float");
    }
    free(buf);
    ring_free(&r);
}

/* random data: the ring agrees with MPI_Allreduce within float rounding of a sum of N terms */
static void test_vs_mpi(size_t count, size_t chunk_bytes) {
    ring_t r;
    ring_init(&r, MPI_COMM_WORLD, count, chunk_bytes);
    float *a = malloc((count + 1) * sizeof(float)), *b = malloc((count + 1) * sizeof(float)), *m = malloc((count + 1) * sizeof(float));
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    for (size_t i = 0; i < count; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        a[i] = b[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        m[i] = fabsf(a[i]);
    }
    ring_allreduce(&r, a, count);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, m, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        if (!(fabsf(a[i] - b[i]) <= 2.0f * nranks * FLT_EPSILON * m[i])) bad++;
    if (bad) FAIL("ring vs MPI_Allreduce, count %zu: %zu elements differ beyond rounding", count, bad);
    /* fp16 on the wire: error within the half rounding of N partial sums of magnitude <= sum|x| */
    for (size_t i = 0; i < count; i++) a[i] = (float)(rank + 1) / (float)(i % 13 + 3);
    for (size_t i = 0; i < count; i++) b[i] = a[i];
    ring_allreduce_fp16(&r, a, count);
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, b, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    double maxrel = 0;
    for (size_t i = 0; i < count; i++) { double e = fabs(a[i] - b[i]) / fabs(b[i]); if (e > maxrel) maxrel = e; }
    double bound = nranks * (1.0 / 2048.0);   /* one half rounding (2^-11 relative) per hop */
    if (maxrel > bound) FAIL("fp16 count %zu: max relative error %.3g > %.3g", count, maxrel, bound);
    if (nranks > 1 && maxrel == 0 && count > 100) FAIL("fp16 count %zu: no rounding at all: halves never on the wire?", count);
    check_identical(a, count, "fp16 random");
    free(a); free(b); free(m);
    ring_free(&r);
}

/* a deterministic pseudo-random vector per rank (same on every rank for a given r) */
static void randvec(float *v, size_t n, int r, uint64_t salt) {
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(r + 1) + salt;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

/* Adasum against the reference: the same binary tree over ranks, computed in one process in
 * double with adasum_pair_ref. Tensors of odd and tiny sizes (0, 1) and one larger than the rest;
 * a correlated case (shared component) so the coefficients are far from 1, and the identity
 * adasum(g, g) = g. */
static void test_adasum(size_t count_hint, int correlated) {
    if (nranks & (nranks - 1)) return;
    const size_t h2 = count_hint / 2;
    const size_t toff[] = {0, h2, h2, h2 + 1, h2 + 1 + (count_hint - h2 - 1) / 2, count_hint};
    const int nt = 5;
    size_t count = count_hint;
    adasum_t a;
    adasum_init(&a, MPI_COMM_WORLD, count, toff, nt);
    float *mine = malloc(count * sizeof(float) + 1), *common = malloc(count * sizeof(float) + 1);
    double *ref = malloc(((size_t)nranks * count + 1) * sizeof(double));
    randvec(common, count, 1000, 7);
    for (int r = 0; r < nranks; r++) {
        float *v = r == rank ? mine : (float *)malloc(count * sizeof(float) + 1);
        randvec(v, count, r, 3);
        if (correlated) for (size_t i = 0; i < count; i++) v[i] = 0.3f * v[i] + common[i];
        for (size_t i = 0; i < count; i++) ref[(size_t)r * count + i] = v[i];
        if (r != rank) free(v);
    }
    for (int d = 1; d < nranks; d *= 2)            /* subtree at g holds combine(g .. g+2d-1) */
        for (int g = 0; g < nranks; g += 2 * d)
            adasum_pair_ref(ref + (size_t)g * count, ref + (size_t)g * count, ref + (size_t)(g + d) * count, toff, nt);
    adasum_allreduce(&a, mine, count);
    double maxref = 0, maxerr = 0;
    for (size_t i = 0; i < count; i++) {
        if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
        double e = fabs(mine[i] - ref[i]);
        if (e > maxerr) maxerr = e;
    }
    if (!(maxerr <= 1e-5 * (maxref > 1 ? maxref : 1)))
        FAIL("adasum count %zu correlated %d: max error %.3g vs reference (max |x| %.3g)", count, correlated, maxerr, maxref);
    check_identical(mine, count, "adasum");
    /* the sum would be about N x common; adasum of nearly parallel vectors stays near common */
    if (correlated && nranks > 1) {
        double s = 0, c = 0;
        for (size_t i = 0; i < count; i++) { s += (double)mine[i] * mine[i]; c += (double)common[i] * common[i]; }
        if (!(s < 2.0 * c)) FAIL("adasum of correlated gradients: |result|^2 %.3g not near |common|^2 %.3g", s, c);
    }
    /* adasum(g, g) = g: every rank the same vector */
    randvec(mine, count, 5, 9);
    memcpy(common, mine, count * sizeof(float));
    adasum_allreduce(&a, mine, count);
    for (size_t i = 0; i < count; i++)
        if (fabs(mine[i] - common[i]) > 1e-6 * (fabs(common[i]) + 1)) { FAIL("adasum(g, g) != g at %zu: %g vs %g", i, mine[i], common[i]); break; }
    /* one tensor = the whole buffer */
    adasum_t w;
    adasum_init(&w, MPI_COMM_WORLD, count, NULL, 0);
    randvec(mine, count, rank, 3);
    for (int r = 0; r < nranks; r++) {
        float *v = malloc(count * sizeof(float) + 1);
        randvec(v, count, r, 3);
        for (size_t i = 0; i < count; i++) ref[(size_t)r * count + i] = v[i];
        free(v);
    }
    size_t whole[2] = {0, count};
    for (int d = 1; d < nranks; d *= 2)
        for (int g = 0; g < nranks; g += 2 * d)
            adasum_pair_ref(ref + (size_t)g * count, ref + (size_t)g * count, ref + (size_t)(g + d) * count, whole, 1);
    adasum_allreduce(&w, mine, count);
    for (size_t i = 0; i < count; i++)
        if (fabs(mine[i] - ref[i]) > 1e-5) { FAIL("adasum (one tensor) at %zu: %g vs reference %g", i, mine[i], ref[i]); break; }
    adasum_free(&w);
    adasum_free(&a);
    free(mine); free(common); free(ref);
}

/* hierarchical: exact sums (integer-valued data), bit-identical on every rank, and within float
 * rounding of the flat ring on random data; local_size 2 fakes hosts of 2 ranks, 0 uses the real
 * (shared-memory) host split */
/* the load/store path (ring_shm.c): a buffer from ring_buffer_alloc, at offset off into it, must
 * give results bit-identical to the message path on a heap buffer (random data, where the order
 * of additions shows), exact sums, nothing written outside [off, off+count), the byte counts of
 * the owner's row; then many calls in a row, each with new data written the moment the previous
 * one returned (a rank returning while a peer still loads or stores its buffer would mix calls) */
static void test_shm(size_t count, size_t off) {
    ring_t r;
    ring_init(&r, MPI_COMM_WORLD, count, 0);
    MPI_Comm node;
    int nsize = 0;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    mpiCheck(MPI_Comm_size(node, &nsize));
    mpiCheck(MPI_Comm_free(&node));
    float *win = ring_buffer_alloc(&r, off + count + 1), *buf = win + off;
    float *heap = malloc((count + 1) * sizeof(float));
    if ((uintptr_t)win % 64) FAIL("shm count %zu: ring_buffer_alloc not 64-byte aligned", count);
    int want_shared = nranks > 1 && nsize == nranks;
    if (ring_buffer_shared(&r, buf, count) != want_shared)
        FAIL("shm count %zu: ring_buffer_shared %d, want %d", count, ring_buffer_shared(&r, buf, count), want_shared);
    if (ring_buffer_shared(&r, heap, count)) FAIL("shm count %zu: a heap buffer taken for a window", count);
    for (size_t i = 0; i < off; i++) win[i] = -3.0f;
    win[off + count] = -7.0f;
    randvec(buf, count, rank, 29);
    memcpy(heap, buf, count * sizeof(float));
    uint64_t s0 = r.bytes_sent, r0 = r.bytes_recv;
    ring_allreduce(&r, buf, count);
    uint64_t ds = r.bytes_sent - s0, dr = r.bytes_recv - r0;
    ring_allreduce(&r, heap, count);
    if (count && memcmp(buf, heap, count * sizeof(float)))
        FAIL("shm count %zu off %zu: not bit-identical to the message ring", count, off);
    for (size_t i = 0; i < off; i++) if (win[i] != -3.0f) { FAIL("shm count %zu: wrote before the range", count); break; }
    if (win[off + count] != -7.0f) FAIL("shm count %zu: wrote past the end", count);
    if (want_shared) {
        size_t so, l1;
        ring_segment(count, nranks, (rank + 1) % nranks, &so, &l1);
        uint64_t want = (uint64_t)(nranks - 1) * l1 * sizeof(float);
        if (ds != want || dr != want)
            FAIL("shm count %zu: bytes sent %llu recv %llu, want %llu each", count, (unsigned long long)ds,
                 (unsigned long long)dr, (unsigned long long)want);
    }
    check_identical(buf, count, "shm random");
    /* the average folded into the stores (ring_allreduce_scaled) against the sum then one
     * ring_scale pass on the message path: the same bits; both written outside nothing */
    const float avg = 1.0f / (float)nranks;
    randvec(buf, count, rank, 31);
    memcpy(heap, buf, count * sizeof(float));
    ring_allreduce_scaled(&r, buf, count, avg);
    ring_allreduce(&r, heap, count);
    ring_scale(heap, avg, count);
    if (count && memcmp(buf, heap, count * sizeof(float)))
        FAIL("shm count %zu off %zu: scaled allreduce not bit-identical to sum then scale", count, off);
    for (size_t i = 0; i < off; i++) if (win[i] != -3.0f) { FAIL("shm count %zu: scaled wrote before the range", count); break; }
    if (win[off + count] != -7.0f) FAIL("shm count %zu: scaled wrote past the end", count);
    check_identical(buf, count, "shm scaled");
    for (size_t i = 0; i < count; i++) buf[i] = value(rank, i);
    ring_allreduce_scaled(&r, buf, count, avg);   /* exact: the sums are small integers */
    for (size_t i = 0; i < count; i++)
        if (buf[i] != expected(i) * avg) { FAIL("shm count %zu: scaled [%zu] = %g want %g", count, i, buf[i], expected(i) * avg); break; }
    for (int call = 0; call < 20; call++) {
        for (size_t i = 0; i < count; i++) buf[i] = value(rank, i) * (float)(call + 1);
        ring_allreduce(&r, buf, count);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < count; i++)
            if (buf[i] != expected(i) * (float)(call + 1)) { if (!bad++) first = i; }
        if (bad) { FAIL("shm count %zu call %d: %zu wrong, first [%zu] = %g want %g", count, call, bad, first,
                        buf[first], expected(first) * (float)(call + 1)); break; }
    }
    free(heap);
    ring_buffer_free(&r, win);
    ring_free(&r);
}

static void test_hier(size_t count, int local_size) {
    hier_t h;
    hier_init(&h, MPI_COMM_WORLD, count, 4096, local_size);
    int want_hosts = local_size > 0 ? (nranks + local_size - 1) / local_size : h.hosts;
    if (h.hosts != want_hosts) FAIL("hier local_size %d: %d hosts, want %d", local_size, h.hosts, want_hosts);
    float *buf = malloc(count * sizeof(float) + 1), *flat = malloc(count * sizeof(float) + 1);
    for (size_t i = 0; i < count; i++) buf[i] = value(rank, i);
    hier_allreduce(&h, buf, count);
    for (size_t i = 0; i < count; i++)
        if (buf[i] != expected(i)) { FAIL("hier count %zu local_size %d: [%zu] = %g, want %g", count, local_size, i, buf[i], expected(i)); break; }
    check_identical(buf, count, "hier");
    ring_t r;
    ring_init(&r, MPI_COMM_WORLD, count, 4096);
    randvec(buf, count, rank, 11);
    memcpy(flat, buf, count * sizeof(float));
    hier_allreduce(&h, buf, count);
    ring_allreduce(&r, flat, count);
    for (size_t i = 0; i < count; i++)
        if (fabs(buf[i] - flat[i]) > 1e-5 * nranks) { FAIL("hier vs flat ring at %zu: %g vs %g", i, buf[i], flat[i]); break; }
    check_identical(buf, count, "hier random");
    if (count > 0 && local_size > 1 && nranks > 1 && h.bytes_sent + h.bytes_recv == 0) FAIL("hier: no bytes counted");
    ring_free(&r);
    hier_free(&h);
    free(buf); free(flat);
}

int main(int argc, char **argv) {
    mpiCheck(MPI_Init(&argc, &argv));
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    if (argc > 1 && !strcmp(argv[1], "--mixed")) {
        /* misuse: rank 0 passes a heap buffer, the others their ring_buffer_alloc one; must end
         * the job with one line (tests/ring_allreduce.sh), never hang or return */
        ring_t r;
        ring_init(&r, MPI_COMM_WORLD, 1000, 0);
        float *win = ring_buffer_alloc(&r, 1000), *heap = calloc(1000, sizeof(float));
        ring_allreduce(&r, rank == 0 ? heap : win, 1000);
        fprintf(stderr, "test_ring --mixed: rank %d: ring_allreduce returned\n", rank);
        mpiCheck(MPI_Finalize());
        return 0;
    }
    if (rank == 0) test_segments();
    const size_t n = (size_t)nranks;
    const size_t counts[] = {0, 1, n - 1, n, n + 1, 2 * n + 1, 97, 4099, 1000003};
    const size_t chunks[] = {4, 12, 4096, 0};      /* 1 element, 3, 1024, the default (1 MiB) */
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        for (size_t k = 0; k < sizeof chunks / sizeof *chunks; k++) {
            if (counts[c] > 5000 && chunks[k] < 4096) continue;   /* millions of 1-element messages: slow, no new path */
            double t0 = MPI_Wtime();
            test_exact(counts[c], chunks[k], counts[c]);
            if (getenv("TEST_RING_VERBOSE") && rank == 0)
                printf("count %zu chunk %zu: %.3f s\n", counts[c], chunks[k], MPI_Wtime() - t0);
        }
    test_exact(1000003, 65536, 10);                /* scratch sized for 10, grown on the call */
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) { test_shm(counts[c], 0); test_shm(counts[c], 5); }
    test_vs_mpi(1000003, 0);
    test_vs_mpi(12345, 1024);
    const size_t acounts[] = {8, 101, 4099, 100003};
    for (size_t c = 0; c < sizeof acounts / sizeof *acounts; c++) { test_adasum(acounts[c], 0); test_adasum(acounts[c], 1); }
    const size_t hcounts[] = {0, 1, n + 1, 4099, 1000003};
    for (size_t c = 0; c < sizeof hcounts / sizeof *hcounts; c++) { test_hier(hcounts[c], 2); test_hier(hcounts[c], 1); test_hier(hcounts[c], 0); }
    int any = failures;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (rank == 0) printf("test_ring: N=%d f16c=%d: %s\n", nranks, half_have_f16c(), any ? "FAILED" : "ok");
    mpiCheck(MPI_Finalize());
    return any ? 1 : 0;
}
