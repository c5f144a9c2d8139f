/* ring_allreduce.c: the ring (see ring_allreduce.h for the API). What it deliberately does not do:
 * other operations than sum, other types than float (fp16 is only a wire format), or any
 * topology awareness (ranks are a ring in rank order; on one host that is all there is).
 *
 * N ranks, the buffer cut into N segments s0..s(N-1) (the first count % N one element longer).
 * Reduce-scatter, N-1 steps: at step t rank r sends segment (r-t) to its right neighbour and adds
 * the segment (r-t-1) arriving from its left one into its own copy. Example N = 3:
 *
 *            rank 0         rank 1         rank 2         (a+b+c: summed over ranks)
 *   t=0    send s0 ->1    send s1 ->2    send s2 ->0
 *          s2 += c2       s0 += a0       s1 += b1
 *   t=1    send s2 ->1    send s0 ->2    send s1 ->0
 *          s1 += b1+c1    s2 += a2+c2    s0 += a0+b0       rank r now owns segment r+1, final
 *
 *   allgather, N-1 steps: at step u rank r sends segment (r+1-u) (final) and receives (r-u),
 *   which it stores and forwards at step u+1:
 *          0 -> 1 -> 2 -> 0 ...    after N-1 steps every rank has every final segment.
 *
 * Cost per rank: 2 (N-1) messages of count/N elements each way, i.e. 2 (N-1)/N x bytes sent and
 * the same received, independent of N (bandwidth-optimal); busbw = algbw x 2 (N-1)/N.
 *
 * Pipelining: each segment is cut into chunks (ring_t.chunk elements). A chunk-step g = t x nch + k
 * is chunk k of step t; the chunk received at g is exactly the one sent at g + nch (the segment a
 * rank receives at step t is the one it sends at step t+1). So the loop waits for the receive of
 * chunk g, reduces it, and sends it on at once, while `window` further receives are already posted
 * (Irecv before the matching Send arrives, so large messages go straight into place through
 * vader's single-copy path) and every earlier send is still in flight: the reduction of chunk k
 * overlaps the transfer of chunk k+1 and the next step starts before this one ends. Messages on
 * our private communicator use one tag; MPI's non-overtaking rule (same source, tag, comm) keeps
 * chunk-steps in order on both sides. */
#include "ring_allreduce.h"
#include "ring_shm.h"
#include "common/half.h"
#include "common/mpi_check.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <assert.h>
#include <string.h>

#define RING_TAG 0x52

/* x86-64 builds default to SSE2; give the reduction AVX2 / AVX-512 clones picked at load time.
 * The loop itself is plain C with restrict so that every clone vectorises. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RING_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RING_CLONES
#endif

RING_CLONES void ring_add(float *restrict dst, const float *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

RING_CLONES void ring_scale(float *restrict x, float s, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

void ring_segment(size_t count, int n, int j, size_t *off, size_t *len) {
    size_t base = count / (size_t)n, extra = count % (size_t)n, uj = (size_t)j;
    *len = base + (uj < extra);
    *off = uj * base + (uj < extra ? uj : extra);
}

static size_t chunks_per_segment(const ring_t *r, size_t count) {
    size_t maxseg = count / (size_t)r->size + (count % (size_t)r->size != 0);
    return (maxseg + r->chunk - 1) / r->chunk;
}

/* The request array holds one request per chunk-step; it grows (once) if a call is larger than
 * the count ring_init was told about. */
static void ring_reserve(ring_t *r, size_t count) {
    size_t nch = chunks_per_segment(r, count), need = 2 * (size_t)(r->size - 1) * nch;
    if (need > r->nsreq) {
        free(r->sreq);
        r->sreq = xmalloc(need * sizeof *r->sreq);
        r->nsreq = need;
    }
    /* fp16 send staging: a slot is reused only once the send that used it nch + window
     * chunk-steps ago has completed, which by then depends only on chunk-steps this rank has
     * already processed (fewer slots let every rank wait on its right neighbour: a deadlock) */
    if (nch + r->window > r->nsslot) {
        free(r->hsslot);
        r->nsslot = nch + r->window;
        r->hsslot = xmalloc(r->nsslot * r->chunk * sizeof(uint16_t));
    }
    if (count > r->cap_count) r->cap_count = count;
}

int ring_comm_one_host(MPI_Comm comm, int rank, int size) {
    MPI_Comm node;
    int nsize = 0;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    mpiCheck(MPI_Comm_size(node, &nsize));
    mpiCheck(MPI_Comm_free(&node));
    return nsize == size;
}

void ring_comm_setup(MPI_Comm comm, MPI_Comm *dup, int *rank, int *size, int *left, int *right) {
    mpiCheck(MPI_Comm_dup(comm, dup));
    mpiCheck(MPI_Comm_set_errhandler(*dup, MPI_ERRORS_RETURN));
    mpiCheck(MPI_Comm_rank(*dup, rank));
    mpiCheck(MPI_Comm_size(*dup, size));
    *left = (*rank - 1 + *size) % *size;
    *right = (*rank + 1) % *size;
}

size_t ring_chunk_elems(size_t chunk_bytes) {
    if (chunk_bytes == 0) chunk_bytes = RING_DEFAULT_CHUNK_BYTES;
    return chunk_bytes / sizeof(float) ? chunk_bytes / sizeof(float) : 1;
}

void ring_init(ring_t *r, MPI_Comm comm, size_t max_count, size_t chunk_bytes) {
    memset(r, 0, sizeof *r);
    ring_comm_setup(comm, &r->comm, &r->rank, &r->size, &r->left, &r->right);
    r->chunk = ring_chunk_elems(chunk_bytes);
    r->window = RING_DEFAULT_WINDOW;
    r->rslot = xmalloc(r->window * r->chunk * sizeof(float));
    r->hrslot = xmalloc(r->window * r->chunk * sizeof(uint16_t));
    r->rreq = xmalloc(r->window * sizeof *r->rreq);
    r->cap_count = max_count;
    if (r->size > 1) ring_reserve(r, max_count);
    ring_shm_init(r);
}

void ring_free(ring_t *r) {
    ring_shm_free(r);
    if (r->comm != MPI_COMM_NULL) mpiCheck(MPI_Comm_free(&r->comm));
    free(r->rslot); free(r->hrslot); free(r->hsslot); free(r->sreq); free(r->rreq);
    memset(r, 0, sizeof *r);
    r->comm = MPI_COMM_NULL;
}

int ring_seg_sent(int rank, int n, int t) {
    int u = t - (n - 1);
    return t < n - 1 ? ((rank - t) % n + n) % n : ((rank + 1 - u) % n + n) % n;
}
int ring_seg_recv(int rank, int n, int t) {
    int u = t - (n - 1);
    return t < n - 1 ? ((rank - t - 1) % n + 2 * n) % n : ((rank - u) % n + n) % n;
}
static int seg_sent(const ring_t *r, int t) { return ring_seg_sent(r->rank, r->size, t); }
static int seg_recv(const ring_t *r, int t) { return ring_seg_recv(r->rank, r->size, t); }

/* chunk k of segment j: [*lo, *lo + *len) of the whole buffer; may be empty when segments are
 * shorter than nch x chunk (zero-length messages keep both sides' chunk-step counts aligned). */
static void chunk_of(const ring_t *r, size_t count, int j, size_t k, size_t *lo, size_t *len) {
    size_t off, slen;
    ring_segment(count, r->size, j, &off, &slen);
    size_t a = k * r->chunk;
    if (a > slen) a = slen;
    size_t b = a + r->chunk;
    if (b > slen) b = slen;
    *lo = off + a;
    *len = b - a;
}

typedef struct {
    ring_t *r;
    float *buf;
    size_t count, nch, total, window;
    int fp16, nsteps;
} run_t;

static void post_recv(run_t *x, size_t g) {
    ring_t *r = x->r;
    int t = (int)(g / x->nch);
    size_t k = g % x->nch, lo, len, slot = g % x->window;
    chunk_of(r, x->count, seg_recv(r, t), k, &lo, &len);
    MPI_Request *req = &r->rreq[slot];
    if (x->fp16) {
        mpiCheck(MPI_Irecv(r->hrslot + slot * r->chunk, (int)len, MPI_UINT16_T, r->left, RING_TAG, r->comm, req));
    } else if (t < r->size - 1) {
        mpiCheck(MPI_Irecv(r->rslot + slot * r->chunk, (int)len, MPI_FLOAT, r->left, RING_TAG, r->comm, req));
    } else {
        /* allgather: straight into place, once the reduce-scatter send of that very region (at
         * chunk-step u x nch + k, u = t - (N-1)) has left it. window <= nch guarantees that send
         * was posted already (it was posted while processing chunk-step (u-1) x nch + k). */
        size_t s = (size_t)(t - (r->size - 1)) * x->nch + k;
        mpiCheck(MPI_Wait(&r->sreq[s], MPI_STATUS_IGNORE));
        mpiCheck(MPI_Irecv(x->buf + lo, (int)len, MPI_FLOAT, r->left, RING_TAG, r->comm, req));
    }
    r->bytes_recv += len * (x->fp16 ? sizeof(uint16_t) : sizeof(float));
}

/* send buf[lo, lo+len) as chunk-step g */
static void post_send(run_t *x, size_t g, size_t lo, size_t len, int round_in_place) {
    ring_t *r = x->r;
    if (x->fp16) {
        size_t nslot = r->nsslot, slot = g % nslot;
        if (g >= nslot) mpiCheck(MPI_Wait(&r->sreq[g - nslot], MPI_STATUS_IGNORE));
        uint16_t *h = r->hsslot + slot * r->chunk;
        half_from_float(h, x->buf + lo, len);
        /* the final owner keeps what everybody else will receive: identical results everywhere */
        if (round_in_place) half_to_float(x->buf + lo, h, len);
        mpiCheck(MPI_Isend(h, (int)len, MPI_UINT16_T, r->right, RING_TAG, r->comm, &r->sreq[g]));
    } else {
        mpiCheck(MPI_Isend(x->buf + lo, (int)len, MPI_FLOAT, r->right, RING_TAG, r->comm, &r->sreq[g]));
    }
    r->bytes_sent += len * (x->fp16 ? sizeof(uint16_t) : sizeof(float));
}

/* the sum, times scale (1: none): folded into the load/store pass, else one pass at the end */
static void ring_run(ring_t *r, float *buf, size_t count, int fp16, float scale) {
    const int n = r->size;
    if (n == 1 || count == 0) {
        if (scale != 1.0f) ring_scale(buf, scale, count);
        return;
    }
    const double t_rs = timer_now();
    double t_ag = 0;
    if (count > (size_t)n * (size_t)0x7fffffff) die("ring_allreduce: count %zu too large", count);
    /* a buffer in a shared window: loads and stores instead of messages (ring_shm.c) */
    if (!fp16 && ring_shm_allreduce(r, buf, count, scale)) return;
    ring_reserve(r, count);
#ifndef NDEBUG
    {   /* the split must cover the buffer exactly */
        size_t sum = 0, off, len;
        for (int j = 0; j < n; j++) { ring_segment(count, n, j, &off, &len); assert(off == sum); sum += len; }
        assert(sum == count);
    }
#endif
    run_t x = { .r = r, .buf = buf, .count = count, .fp16 = fp16, .nsteps = 2 * (n - 1) };
    x.nch = chunks_per_segment(r, count);
    x.total = (size_t)x.nsteps * x.nch;
    x.window = r->window < x.nch ? r->window : x.nch;
    for (size_t g = 0; g < x.window; g++) post_recv(&x, g);
    for (size_t k = 0; k < x.nch; k++) {               /* step 0: our own segment, as it is */
        size_t lo, len;
        chunk_of(r, count, seg_sent(r, 0), k, &lo, &len);
        post_send(&x, k, lo, len, 0);
    }
    for (size_t g = 0; g < x.total; g++) {
        int t = (int)(g / x.nch);
        size_t k = g % x.nch, slot = g % x.window, lo, len;
        chunk_of(r, count, seg_recv(r, t), k, &lo, &len);
        if (g == (size_t)(n - 1) * x.nch) t_ag = timer_now();   /* first allgather chunk */
        mpiCheck(MPI_Wait(&r->rreq[slot], MPI_STATUS_IGNORE));
        if (t < n - 1) {
            if (fp16) half_add_to_float(buf + lo, r->hrslot + slot * r->chunk, len);
            else ring_add(buf + lo, r->rslot + slot * r->chunk, len);
        } else if (fp16) {
            half_to_float(buf + lo, r->hrslot + slot * r->chunk, len);
        }
        /* the slot is free again: keep `window` receives posted */
        if (g + x.window < x.total) post_recv(&x, g + x.window);
        if (t + 1 < x.nsteps) post_send(&x, g + x.nch, lo, len, fp16 && t == n - 2);
    }
    mpiCheck(MPI_Waitall((int)x.total, r->sreq, MPI_STATUSES_IGNORE));
    /* pipelined: the phases overlap by up to a window of chunks */
    timeline_event("reduce-scatter", t_rs, t_ag);
    timeline_event("allgather", t_ag, timer_now());
    if (scale != 1.0f) ring_scale(buf, scale, count);
}

void ring_allreduce(ring_t *r, float *buf, size_t count) { ring_run(r, buf, count, 0, 1.0f); }
void ring_allreduce_scaled(ring_t *r, float *buf, size_t count, float scale) { ring_run(r, buf, count, 0, scale); }
void ring_allreduce_fp16(ring_t *r, float *buf, size_t count) { ring_run(r, buf, count, 1, 1.0f); }
