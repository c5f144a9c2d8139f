/* ring_ops.c: Adasum and the hierarchical allreduce (API and formulas in ring_ops.h). What it does
 * not do: Adasum for a non-power-of-two N (Horovod refuses it too), fp16 on the wire for either,
 * or overlap with backward (both run on the calling thread, on the whole buffer).
 *
 * Adasum, N = 4 (ranks 0..3, vectors g0..g3, one tensor for the picture):
 *
 *   level 0 (d = 1): pairs 0-1, 2-3. Rank 0 keeps the first half of the buffer and receives g1's
 *     first half; rank 1 keeps the second half and receives g0's second half. Partial a.b, |a|^2,
 *     |b|^2 over each rank's half are summed over the pair (MPI_Allreduce on the level's group
 *     comm), so both know the full dot products, and each combines its half:
 *     rank 0: adasum(g0, g1)[first half], rank 1: adasum(g0, g1)[second half]; 2-3 likewise.
 *   level 1 (d = 2): pairs 0-2, 1-3 hold the same quarter-to-be of two combined vectors
 *     A = adasum(g0, g1) and B = adasum(g2, g3); they halve again (rank 0 keeps a quarter, rank 2
 *     the next), sum the partials over all 4 ranks (the group at this level), combine.
 *   then distance-doubling allgather, levels in reverse: each rank swaps its finished piece with
 *     the same neighbour, doubling the piece, until everyone has adasum(A, B) entire.
 *
 * Per rank: log2 N exchanges of n/2, n/4, ... each way (n (N-1)/N in all, like the ring's
 * reduce-scatter) and the same in the allgather, plus log2 N small allreduces of 3 doubles per
 * tensor. "a" is always the lower half of the tree (lower ranks) so every rank agrees on which
 * coefficient is which; each element is computed on exactly one rank and then copied, so every
 * rank returns bit-identical values.
 *
 * Hierarchical: MPI_Reduce(SUM) to local rank 0 on the host communicator, ring_allreduce between
 * the local roots (the only traffic that crosses hosts: 2 (H-1)/H n per host link instead of the
 * flat ring's 2 (N-1)/N n at every host boundary), MPI_Bcast from local rank 0. */
#include "ring_ops.h"
#include "common/mpi_check.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/parse.h"
#include "common/timeline.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADASUM_TAG 0x41

/* ---------------------------------------------------------------- Adasum */

static void coeffs(double dot, double an, double bn, double *ca, double *cb) {
    /* Horovod: acoeff = 1 - dot / anormsq / 2 unless |a|^2 < 1e-8 */
    *ca = an >= 1e-8 ? 1.0 - dot / an * 0.5 : 1.0;
    *cb = bn >= 1e-8 ? 1.0 - dot / bn * 0.5 : 1.0;
}

void adasum_pair_ref(double *out, const double *a, const double *b, const size_t *toff, int ntensors) {
    for (int t = 0; t < ntensors; t++) {
        double dot = 0, an = 0, bn = 0, ca, cb;
        for (size_t i = toff[t]; i < toff[t + 1]; i++) { dot += a[i] * b[i]; an += a[i] * a[i]; bn += b[i] * b[i]; }
        coeffs(dot, an, bn, &ca, &cb);
        for (size_t i = toff[t]; i < toff[t + 1]; i++) out[i] = ca * a[i] + cb * b[i];
    }
}

void adasum_init(adasum_t *a, MPI_Comm comm, size_t max_count, const size_t *tensor_off, int ntensors) {
    memset(a, 0, sizeof *a);
    mpiCheck(MPI_Comm_dup(comm, &a->comm));
    mpiCheck(MPI_Comm_set_errhandler(a->comm, MPI_ERRORS_RETURN));
    mpiCheck(MPI_Comm_rank(a->comm, &a->rank));
    mpiCheck(MPI_Comm_size(a->comm, &a->size));
    if (a->size & (a->size - 1)) {
        if (a->rank == 0) {
            fprintf(stderr, "psring: --op adasum needs a power-of-two number of workers (the pairwise tree), got %d\n", a->size);
            fflush(stderr);
        }
        MPI_Finalize();
        exit(EXIT_BADINPUT);
    }
    while ((1 << a->levels) < a->size) a->levels++;
    a->group = xcalloc((size_t)(a->levels ? a->levels : 1), sizeof(MPI_Comm));
    for (int k = 0; k < a->levels; k++)
        mpiCheck(MPI_Comm_split(a->comm, a->rank >> (k + 1), a->rank, &a->group[k]));
    if (tensor_off && ntensors > 0) {
        a->ntensors = ntensors;
        a->toff = xmalloc(((size_t)ntensors + 1) * sizeof(size_t));
        memcpy(a->toff, tensor_off, ((size_t)ntensors + 1) * sizeof(size_t));
        for (int t = 0; t < ntensors; t++)
            if (a->toff[t] > a->toff[t + 1]) die("adasum_init: tensor offsets not increasing at %d", t);
        if (a->toff[0] != 0) die("adasum_init: the first tensor offset must be 0");
    }
    a->part = xmalloc(3 * (size_t)(ntensors > 0 ? ntensors : 1) * sizeof(double));
    a->cap = max_count / 2 + 1;
    a->tmp = xmalloc(a->cap * sizeof(float));
}

void adasum_free(adasum_t *a) {
    for (int k = 0; k < a->levels; k++) mpiCheck(MPI_Comm_free(&a->group[k]));
    if (a->comm != MPI_COMM_NULL) mpiCheck(MPI_Comm_free(&a->comm));
    free(a->group); free(a->toff); free(a->part); free(a->tmp);
    memset(a, 0, sizeof *a);
    a->comm = MPI_COMM_NULL;
}

static void sendrecv(adasum_t *a, const float *s, size_t ns, float *r, size_t nr, int peer) {
    mpiCheck(MPI_Sendrecv(s, (int)ns, MPI_FLOAT, peer, ADASUM_TAG, r, (int)nr, MPI_FLOAT, peer, ADASUM_TAG,
                          a->comm, MPI_STATUS_IGNORE));
    a->bytes_sent += ns * sizeof(float);
    a->bytes_recv += nr * sizeof(float);
}

void adasum_allreduce(adasum_t *a, float *buf, size_t count) {
    if (a->size == 1 || count == 0) return;
    if (count > (size_t)INT_MAX) die("adasum_allreduce: count %zu too large", count);
    size_t one[2] = {0, count};
    const size_t *toff = a->ntensors ? a->toff : one;
    int nt = a->ntensors ? a->ntensors : 1;
    if (toff[nt] != count) die("adasum_allreduce: %zu elements, the tensors cover %zu", count, toff[nt]);
    if (count / 2 + 1 > a->cap) { free(a->tmp); a->cap = count / 2 + 1; a->tmp = xmalloc(a->cap * sizeof(float)); }
    double t0 = timer_now();
    size_t lo = 0, hi = count;
    size_t stack_lo[32], stack_hi[32];
    for (int k = 0; k < a->levels; k++) {
        int d = 1 << k, peer = a->rank ^ d, lower = (a->rank & d) == 0;
        size_t mid = lo + (hi - lo) / 2;
        size_t klo = lower ? lo : mid, khi = lower ? mid : hi;      /* the half I keep */
        size_t slo = lower ? mid : lo, shi = lower ? hi : mid;      /* the half I give away */
        sendrecv(a, buf + slo, shi - slo, a->tmp, khi - klo, peer);
        /* a = the lower subtree's vector, b = the upper one's, on both sides of the pair */
        const float *va = lower ? buf + klo : a->tmp, *vb = lower ? a->tmp : buf + klo;
        for (int t = 0; t < nt; t++) {
            size_t x0 = toff[t] > klo ? toff[t] : klo, x1 = toff[t + 1] < khi ? toff[t + 1] : khi;
            double dot = 0, an = 0, bn = 0;
            for (size_t i = x0; i < x1; i++) {
                double p = va[i - klo], q = vb[i - klo];
                dot += p * q; an += p * p; bn += q * q;
            }
            a->part[3 * t] = dot; a->part[3 * t + 1] = an; a->part[3 * t + 2] = bn;
        }
        mpiCheck(MPI_Allreduce(MPI_IN_PLACE, a->part, 3 * nt, MPI_DOUBLE, MPI_SUM, a->group[k]));
        for (int t = 0; t < nt; t++) {
            size_t x0 = toff[t] > klo ? toff[t] : klo, x1 = toff[t + 1] < khi ? toff[t + 1] : khi;
            double ca, cb;
            coeffs(a->part[3 * t], a->part[3 * t + 1], a->part[3 * t + 2], &ca, &cb);
            float fa = (float)ca, fb = (float)cb;
            for (size_t i = x0; i < x1; i++) buf[i] = fa * va[i - klo] + fb * vb[i - klo];
        }
        stack_lo[k] = lo; stack_hi[k] = hi;
        lo = klo; hi = khi;
    }
    for (int k = a->levels - 1; k >= 0; k--) {
        int peer = a->rank ^ (1 << k);
        size_t plo = stack_lo[k], phi = stack_hi[k];
        /* the peer finished the other half of [plo, phi) */
        size_t olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo;
        sendrecv(a, buf + lo, hi - lo, buf + olo, ohi - olo, peer);
        lo = plo; hi = phi;
    }
    timeline_event("adasum", t0, timer_now());
}

/* ---------------------------------------------------------------- hierarchical */

int hier_local_size_from_env(void) {
    const char *s = getenv("PSRING_HIER_LOCAL_SIZE");
    if (!s || !*s) return 0;
    int v;
    if (parse_int(s, 1, 1 << 20, &v)) {
        fprintf(stderr, "psring: PSRING_HIER_LOCAL_SIZE must be an integer >= 1 (ranks per fake host): got '%s'\n", s);
        exit(EXIT_BADINPUT);
    }
    return v;
}

void hier_init(hier_t *h, MPI_Comm comm, size_t max_count, size_t chunk_bytes, int local_size) {
    memset(h, 0, sizeof *h);
    mpiCheck(MPI_Comm_dup(comm, &h->comm));
    mpiCheck(MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN));
    mpiCheck(MPI_Comm_rank(h->comm, &h->rank));
    mpiCheck(MPI_Comm_size(h->comm, &h->size));
    if (local_size > 0) mpiCheck(MPI_Comm_split(h->comm, h->rank / local_size, h->rank, &h->local));
    else mpiCheck(MPI_Comm_split_type(h->comm, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &h->local));
    mpiCheck(MPI_Comm_set_errhandler(h->local, MPI_ERRORS_RETURN));
    mpiCheck(MPI_Comm_rank(h->local, &h->local_rank));
    mpiCheck(MPI_Comm_size(h->local, &h->local_size));
    mpiCheck(MPI_Comm_split(h->comm, h->local_rank == 0 ? 0 : MPI_UNDEFINED, h->rank, &h->roots));
    int is_root = h->local_rank == 0;
    mpiCheck(MPI_Allreduce(&is_root, &h->hosts, 1, MPI_INT, MPI_SUM, h->comm));
    if (h->roots != MPI_COMM_NULL) ring_init(&h->ring, h->roots, max_count, chunk_bytes);
}

void hier_free(hier_t *h) {
    if (h->roots != MPI_COMM_NULL) { ring_free(&h->ring); mpiCheck(MPI_Comm_free(&h->roots)); }
    if (h->local != MPI_COMM_NULL) mpiCheck(MPI_Comm_free(&h->local));
    if (h->comm != MPI_COMM_NULL) mpiCheck(MPI_Comm_free(&h->comm));
    memset(h, 0, sizeof *h);
    h->comm = h->local = h->roots = MPI_COMM_NULL;
}

void hier_allreduce(hier_t *h, float *buf, size_t count) {
    if (h->size == 1 || count == 0) return;
    double t0 = timer_now();
    uint64_t nb = (uint64_t)count * sizeof(float);
    if (h->local_size > 1) {
        mpiCheck(mpi_reduce_pieces(buf, count, MPI_FLOAT, MPI_SUM, 0, h->local));   /* MPI counts are ints */
        if (h->local_rank == 0) h->bytes_recv += nb * (uint64_t)(h->local_size - 1);
        else h->bytes_sent += nb;
    }
    double t1 = timer_now();
    if (h->roots != MPI_COMM_NULL) {
        uint64_t s0 = h->ring.bytes_sent, r0 = h->ring.bytes_recv;
        ring_allreduce(&h->ring, buf, count);
        h->bytes_sent += h->ring.bytes_sent - s0;
        h->bytes_recv += h->ring.bytes_recv - r0;
    }
    double t2 = timer_now();
    if (h->local_size > 1) {
        mpiCheck(mpi_bcast_pieces(buf, count, MPI_FLOAT, 0, h->local));
        if (h->local_rank == 0) h->bytes_sent += nb * (uint64_t)(h->local_size - 1);
        else h->bytes_recv += nb;
    }
    timeline_event("host-reduce", t0, t1);
    timeline_event("cross-host-ring", t1, t2);
    timeline_event("host-bcast", t2, timer_now());
}
