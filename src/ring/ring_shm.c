/* ring_shm.c: ring_allreduce on buffers that every rank can load from and store to: MPI-3
 * shared-memory windows (MPI_Win_allocate_shared) made by ring_buffer_alloc when every rank of
 * the ring's communicator is on this host. What it does not do: fp16 (ring_allreduce_fp16 stays
 * on messages), buffers from elsewhere (messages), or several hosts (ring_buffer_alloc then
 * returns heap memory, so everything goes by messages).
 *
 * Why: on one host the message ring moves every byte with a CPU copy (vader's single copy is the
 * receiver's process_vm_readv inside MPI_Wait), so per rank it reads and writes memory
 * 7 (N-1)/N x bytes (reduce-scatter: copy into a slot, r+w, then add, 2r+w; allgather: copy, r+w)
 * and MPI_Allreduce does the same work. With the peers' buffers mapped, a rank loads their
 * partial sums directly and stores the final sums directly: 2 x bytes per rank for any N.
 *
 * The schedule keeps the ring's segments and its order of additions, so the result is
 * bit-identical to the message ring's. In the message ring, segment j starts at rank j and picks
 * up one term per hop: rank j+1 adds, then j+2, ... and rank j-1 (= j+N-1) holds the final sum
 *     x_{j+N-1} + ( ... + (x_{j+2} + (x_{j+1} + x_j)))
 * and then passes it on around the ring. Here rank j-1, the same final owner, computes the same
 * sum in the same order itself, piece by piece through a small L1-sized accumulator, and stores
 * the piece into every rank's buffer: reduce-scatter and allgather in one pass, no receive slot.
 * (IEEE addition is commutative bit for bit, so acc += x equals the ring's x + acc.) N = 3:
 *
 *            buffer of rank 0    buffer of rank 1    buffer of rank 2
 *   seg 0    a0                  b0                  c0       owner rank 2: acc = a0; acc += b0;
 *   seg 1    a1                  b1                  c1       acc += c0; store acc into a0,b0,c0
 *   seg 2    a2                  b2                  c2       owner 0: acc = a1, += b1, += c1 ...
 *            \_________ rank 0 reads and writes row seg 1 of every column, rank 1 row seg 2,
 *                       rank 2 row seg 0 _________/
 *
 * Per rank: loads N x count/N and stores N x count/N = 2 x bytes (the message ring: 3.5 x at
 * N = 2, 5.25 x at N = 4), independent of N; between ranks (what a NIC would carry) the same
 * 2 (N-1)/N x bytes as the ring, counted in bytes_sent (stores into peers' buffers) and
 * bytes_recv (loads from peers' buffers).
 *
 * Synchronisation: each rank has one 64-byte line in a small shared control window with a
 * counter c that only grows, C11 atomics (release store after our own writes, acquire load
 * before touching a peer's memory). Call number g (the ring's shm_calls) uses two values:
 *
 *     rank p:  [user writes buf] c=2g+1 | wait all c>=2g+1 | reduce+store row | c=2g+2 | wait all c>=2g+2 | return
 *                                 entry                                          exit
 *
 * Hazards, each closed by one of the two waits:
 *  - read before the peer's data is there (RAW across ranks): nobody loads from buffer p before
 *    p has published c = 2g+1, which p does after the user filled buf for this call (release:
 *    those stores are visible to whoever acquires c).
 *  - a store into buffer p while p still needs the old value: rows are disjoint; only the owner
 *    of a row ever loads or stores it during the pass, so within a call there is no conflict.
 *  - returning while a peer still stores into our buffer or loads from it (WAR across the
 *    return, e.g. the trainer zeroing its gradients or the next call's data written): nobody
 *    returns before every rank published c = 2g+2, which each does after its last load and store
 *    of the call (release), and the waiter acquires it.
 *  - call g+1 against call g: a rank in call g+1 writes its own buffer only after the exit wait
 *    of call g, i.e. after every rank finished every access of call g; and since c only grows,
 *    a slow rank still waiting for c >= 2g+2 is not confused by a fast peer already at 2g+3
 *    (no ABA, no reset).
 *  - different buffers or counts across ranks: each rank publishes (offset, count) with its
 *    entry; after the entry wait every rank compares all of them with its own and dies with one
 *    line if they differ. A rank whose buffer is not in a window at all takes the message path
 *    and sends to its right neighbour at once: the entry wait probes for such a message and dies
 *    with one line instead of hanging.
 * Waiting spins briefly, then sched_yield()s: with 4 ranks on 2 cores the rank being waited for
 * needs the core. A rank that dies makes mpirun end the job (SIGTERM reaches the spinners too). */
#include "ring_shm.h"
#include "common/mpi_check.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the accumulator: small enough that it stays in L1 between the N loads and the N stores */
#define SHM_PIECE 4096

struct ring_ctl {               /* one cache line per rank, so counters do not share lines */
    _Atomic uint64_t c;         /* progress, only grows: 2g+1 entered call g, 2g+2 left it */
    uint64_t off, count;        /* call g's offset into the window and count (entry check) */
    char pad[64 - 3 * sizeof(uint64_t)];
};
_Static_assert(sizeof(struct ring_ctl) == 64, "one cache line per rank");

struct ring_shmbuf {
    MPI_Win win;
    char *base;                 /* our part */
    size_t bytes;               /* of each rank's part (equal: ring_buffer_alloc checks) */
    char **peer;                /* every rank's part, mapped here */
};

void ring_shm_init(ring_t *r) {
    r->shm = 0;
    r->ctl_win = MPI_WIN_NULL;
    if (r->size == 1) return;   /* nothing to exchange: heap buffers */
    /* PSRING_RING_SHM=0: messages even on one host (emulated networks, comparisons); every rank
     * must see the same value (mpirun -x), as it decides whether ring_buffer_alloc is collective */
    const char *env = getenv("PSRING_RING_SHM");
    if (env && !strcmp(env, "0")) return;
    if (!ring_comm_one_host(r->comm, r->rank, r->size)) return;
    struct ring_ctl *mine = NULL;
    mpiCheck(MPI_Win_allocate_shared(sizeof *mine, sizeof *mine, MPI_INFO_NULL, r->comm, &mine, &r->ctl_win));
    r->ctl = xmalloc((size_t)r->size * sizeof *r->ctl);
    for (int p = 0; p < r->size; p++) {
        MPI_Aint sz;
        int du;
        mpiCheck(MPI_Win_shared_query(r->ctl_win, p, &sz, &du, &r->ctl[p]));
    }
    memset(mine, 0, sizeof *mine);
    atomic_store_explicit(&mine->c, 0, memory_order_release);
    /* passive-target access for the whole life of the window; the counters do the ordering */
    mpiCheck(MPI_Win_lock_all(MPI_MODE_NOCHECK, r->ctl_win));
    mpiCheck(MPI_Barrier(r->comm));   /* every counter is 0 before anyone waits on one */
    r->acc = xmalloc(SHM_PIECE * sizeof(float));
    r->shm = 1;
}

static void shmbuf_release(struct ring_shmbuf *b) {
    mpiCheck(MPI_Win_unlock_all(b->win));
    mpiCheck(MPI_Win_free(&b->win));
    free(b->peer);
}

void ring_shm_free(ring_t *r) {
    for (size_t i = 0; i < r->nbufs; i++) shmbuf_release(&r->bufs[i]);
    free(r->bufs);
    r->bufs = NULL;
    r->nbufs = 0;
    if (r->ctl) {   /* (a zeroed ring_t has ctl_win 0, not MPI_WIN_NULL) */
        mpiCheck(MPI_Win_unlock_all(r->ctl_win));
        mpiCheck(MPI_Win_free(&r->ctl_win));
    }
    free(r->ctl);
    r->ctl = NULL;
    free(r->acc);
    r->acc = NULL;
    r->shm = 0;
}

float *ring_heap_alloc(size_t count) {
    float *p = aligned_alloc(64, ((count ? count : 1) * sizeof(float) + 63) & ~(size_t)63);
    if (!p) die("ring_buffer_alloc: out of memory for %zu floats", count);
    return p;
}

float *ring_buffer_alloc(ring_t *r, size_t count) {
    size_t bytes = ((count ? count : 1) * sizeof(float) + 63) & ~(size_t)63;
    if (!r->shm) return ring_heap_alloc(count);
    /* every rank's part must be as large as ours: the same count everywhere */
    unsigned long long lo = count, hi = count;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, r->comm));
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, r->comm));
    if (lo != hi) die("ring_buffer_alloc: ranks asked for different counts (%llu to %llu floats)", lo, hi);
    MPI_Info info;
    mpiCheck(MPI_Info_create(&info));
    /* each rank's part on its own pages (first touched by its owner), not one contiguous block */
    mpiCheck(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    struct ring_shmbuf b = {0};
    char *mine;
    /* 64 more bytes: Open MPI aligns small parts to less than a cache line. A part is mapped at
     * the same offset from a page boundary in every process, so rounding its address up to 64
     * lands on the same byte in every process. */
    mpiCheck(MPI_Win_allocate_shared((MPI_Aint)(bytes + 64), sizeof(float), info, r->comm, &mine, &b.win));
    mpiCheck(MPI_Info_free(&info));
    b.bytes = bytes;
    b.peer = xmalloc((size_t)r->size * sizeof *b.peer);
    for (int p = 0; p < r->size; p++) {
        MPI_Aint sz;
        int du;
        char *part;
        mpiCheck(MPI_Win_shared_query(b.win, p, &sz, &du, &part));
        b.peer[p] = (char *)(((uintptr_t)part + 63) & ~(uintptr_t)63);
        if ((size_t)sz < bytes + 64) die("ring_buffer_alloc: rank %d's window part is %zu bytes, want %zu", p, (size_t)sz, bytes + 64);
    }
    b.base = b.peer[r->rank];
    if (b.base != (char *)(((uintptr_t)mine + 63) & ~(uintptr_t)63)) die("ring_buffer_alloc: MPI_Win_shared_query disagrees with MPI_Win_allocate_shared");
    mpiCheck(MPI_Win_lock_all(MPI_MODE_NOCHECK, b.win));
    struct ring_shmbuf *nb = xmalloc((r->nbufs + 1) * sizeof *nb);
    if (r->nbufs) memcpy(nb, r->bufs, r->nbufs * sizeof *nb);
    nb[r->nbufs++] = b;
    free(r->bufs);
    r->bufs = nb;
    return (float *)b.base;
}

void ring_buffer_free(ring_t *r, float *buf) {
    if (!buf) return;
    for (size_t i = 0; i < r->nbufs; i++)
        if (r->bufs[i].base == (char *)buf) {
            shmbuf_release(&r->bufs[i]);
            r->bufs[i] = r->bufs[--r->nbufs];
            return;
        }
    free(buf);   /* heap memory from ring_buffer_alloc on a ring without shared memory */
}

static struct ring_shmbuf *find(const ring_t *r, const float *buf, size_t count) {
    if (!r->shm) return NULL;
    const char *lo = (const char *)buf, *hi = (const char *)(buf + count);
    for (size_t i = 0; i < r->nbufs; i++)
        if (lo >= r->bufs[i].base && hi <= r->bufs[i].base + r->bufs[i].bytes) return &r->bufs[i];
    return NULL;
}

int ring_buffer_shared(const ring_t *r, const float *buf, size_t count) {
    return r->size > 1 && find(r, buf, count) != NULL;
}

/* until every rank's counter reached want; entry: a message from the left neighbour means it
 * took the message path (its buffer is not in a window): say so rather than hang */
static void wait_all(ring_t *r, uint64_t want, int entry) {
    for (int p = 0; p < r->size; p++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&r->ctl[p]->c, memory_order_acquire) < want) {
            if (++spins < 256) continue;
            if (entry && p == r->left) {
                int flag = 0;
                mpiCheck(MPI_Iprobe(r->left, MPI_ANY_TAG, r->comm, &flag, MPI_STATUS_IGNORE));
                if (flag) die("ring_allreduce: rank %d passed a buffer from ring_buffer_alloc, its left neighbour "
                              "rank %d one that is not: every rank must use the same kind of buffer", r->rank, r->left);
            }
            sched_yield();
        }
    }
}

int ring_shm_allreduce(ring_t *r, float *buf, size_t count, float scale) {
    struct ring_shmbuf *b = find(r, buf, count);
    if (!b) return 0;
    const int n = r->size;
    const size_t off = (size_t)((char *)buf - b->base);
    const uint64_t base = 2 * r->shm_calls++;
    struct ring_ctl *me = r->ctl[r->rank];
    const double t0 = timer_now();
    me->off = off;
    me->count = count;
    atomic_store_explicit(&me->c, base + 1, memory_order_release);
    wait_all(r, base + 1, 1);
    for (int p = 0; p < n; p++)
        if (r->ctl[p]->off != off || r->ctl[p]->count != count)
            die("ring_allreduce: rank %d reduces %llu floats at byte %llu of its buffer, rank %d %zu at byte %zu: "
                "every rank must pass the same count and the same place in its ring_buffer_alloc buffer",
                p, (unsigned long long)r->ctl[p]->count, (unsigned long long)r->ctl[p]->off, r->rank, count, off);
    const double t1 = timer_now();
    /* our row: segment rank+1, whose final owner in the message ring we are */
    const int j = (r->rank + 1) % n;
    size_t so, slen;
    ring_segment(count, n, j, &so, &slen);
    float *src[n];
    for (int k = 0; k < n; k++) src[k] = (float *)(b->peer[(j + k) % n] + off) + so;   /* ring order from rank j */
    float *acc = r->acc;
    for (size_t a = 0; a < slen; a += SHM_PIECE) {
        size_t m = slen - a < SHM_PIECE ? slen - a : SHM_PIECE;
        memcpy(acc, src[0] + a, m * sizeof(float));
        for (int k = 1; k < n; k++) ring_add(acc, src[k] + a, m);
        if (scale != 1.0f) ring_scale(acc, scale, m);   /* the average, while the piece is in L1 */
        for (int k = 0; k < n; k++) memcpy(src[k] + a, acc, m * sizeof(float));
    }
    r->bytes_sent += (uint64_t)(n - 1) * slen * sizeof(float);
    r->bytes_recv += (uint64_t)(n - 1) * slen * sizeof(float);
    const double t2 = timer_now();
    atomic_store_explicit(&me->c, base + 2, memory_order_release);
    wait_all(r, base + 2, 0);
    timeline_event("shm-entry", t0, t1);
    timeline_event("reduce+store", t1, t2);
    timeline_event("shm-exit", t2, timer_now());
    return 1;
}
