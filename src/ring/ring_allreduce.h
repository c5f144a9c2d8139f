/* ring_allreduce.h: in-place sum-allreduce of a float buffer over an MPI communicator, as a ring
 * (reduce-scatter, then allgather), pipelined in chunks; and a variant whose wire format is IEEE
 * half (fp16) while every addition happens in float.
 *
 *   ring_t r;
 *   ring_init(&r, MPI_COMM_WORLD, max_count, chunk_bytes);   // collective; dups the communicator
 *   ring_allreduce(&r, grads, count);                        // collective; grads = sum over ranks
 *   ring_free(&r);                                           // collective
 *
 * Every rank must call with the same count. Any count (0 included) and any number of ranks (1
 * included) work. Scratch is allocated at init for max_count; a larger count grows it once.
 * Failures in MPI abort the job with the call's file:line (see mpi_check.h). Not thread-safe per
 * ring_t: give each thread its own (each has its own communicator, so rings never cross-match). */
#ifndef PSRING_RING_ALLREDUCE_H
#define PSRING_RING_ALLREDUCE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* the pipeline chunk of ring_init(..., 0) and psring-bench-allreduce's --chunk-kb default, 1 MiB
 * (why: docs/results/lab-notes-src.md, section "src/ring/ring_allreduce.h: the library's chunk");
 * psring-train's ring has its own, RING_CHUNK_KB_DEFAULT (ring_config.h) */
#define RING_DEFAULT_CHUNK_KB 1024
#define RING_DEFAULT_CHUNK_BYTES (RING_DEFAULT_CHUNK_KB * 1024u)
#define RING_DEFAULT_WINDOW 4

typedef struct {
    MPI_Comm comm;          /* private duplicate of the caller's communicator */
    int rank, size, left, right;
    size_t chunk;           /* elements per pipeline chunk */
    size_t window;          /* receives kept posted ahead of the one being reduced */
    size_t cap_count;       /* the count the request array is sized for */
    float *rslot;           /* window x chunk floats: reduce-scatter receive slots */
    uint16_t *hrslot;       /* window x chunk halves: fp16 receive slots */
    uint16_t *hsslot;       /* nsslot x chunk halves: fp16 send staging */
    size_t nsslot;          /* chunks per segment + window (grown with the count) */
    MPI_Request *sreq;      /* one per chunk-step sent: 2 (N-1) x chunks per segment */
    size_t nsreq;
    MPI_Request *rreq;      /* window */
    uint64_t bytes_sent;    /* payload bytes this rank sent / received, summed over calls */
    uint64_t bytes_recv;
    /* the load/store path (ring_shm.c), when every rank of comm is on this host */
    int shm;                /* 1: ring_buffer_alloc gives shared windows */
    MPI_Win ctl_win;        /* one cache line per rank: progress counter (ring_shm.c) */
    struct ring_ctl **ctl;  /* every rank's line, mapped here */
    uint64_t shm_calls;     /* load/store calls so far: the generation of the next one */
    struct ring_shmbuf *bufs; /* windows from ring_buffer_alloc still allocated */
    size_t nbufs;
    float *acc;             /* the load/store path's L1-sized accumulator */
} ring_t;

/* chunk_bytes is the pipeline chunk in bytes of float data (0: RING_DEFAULT_CHUNK_BYTES). */
void ring_init(ring_t *r, MPI_Comm comm, size_t max_count, size_t chunk_bytes);
void ring_free(ring_t *r);
/* buf[i] = sum over ranks of buf[i], i < count; identical on every rank on return. Bit-identical
 * whether buf comes from ring_buffer_alloc (load/store) or not (messages): same additions in the
 * same order. */
void ring_allreduce(ring_t *r, float *buf, size_t count);
/* The same, with halves on the wire: each hop adds the received halves to its float segment and
 * sends the sum as halves; the final owner rounds its segment to half too, so every rank returns
 * bit-identical values. Error per element <= about (N-1) half-ulps of the partial sums. */
void ring_allreduce_fp16(ring_t *r, float *buf, size_t count);
/* buf[i] = scale x (sum over ranks of buf[i]): the average with scale = 1/N, as a trainer wants it.
 * On the load/store path the final owner multiplies each piece of the sum while it is in its
 * L1-sized accumulator, before storing it into every buffer, so the average costs no pass of its
 * own (a separate pass reads and writes the whole gradient once more: a third of the exchange at
 * N = 2 on one host); on messages, ring_allreduce then one pass of ring_scale. Every rank returns
 * the same bits either way: the float sum, then one float multiply, as ring_allreduce followed by
 * ring_scale. */
void ring_allreduce_scaled(ring_t *r, float *buf, size_t count, float scale);

/* A buffer for count floats (collective, same count on every rank): in an MPI-3 shared-memory
 * window when every rank of the ring is on this host (else plain heap memory). ring_allreduce on
 * a buffer from here (or any range inside one) reads the peers' partial sums straight from their
 * windows instead of receiving copies (ring_shm.c); every rank must then pass the same offset into
 * its own buffer and the same count. Free it with ring_buffer_free before ring_free (collective);
 * ring_free frees what is left. 64-byte aligned. PSRING_RING_SHM=0 in every rank's environment
 * turns the shared windows off (heap memory, messages). */
float *ring_buffer_alloc(ring_t *r, size_t count);
/* what ring_buffer_alloc gives without shared windows: 64-byte aligned heap memory for count
 * floats (not collective; ring_buffer_free or free() releases it) */
float *ring_heap_alloc(size_t count);
void ring_buffer_free(ring_t *r, float *buf);
/* the two above as an mlp_allocator_t's alloc/free with the ring as ctx, so a model's gradient
 * lives in the ring's buffer: { ring_mlp_alloc, ring_mlp_free, &ring } */
static inline float *ring_mlp_alloc(void *ring, size_t count) { return ring_buffer_alloc(ring, count); }
static inline void ring_mlp_free(void *ring, float *buf) { ring_buffer_free(ring, buf); }
/* 1 if ring_allreduce on buf[0, count) takes the load/store path */
int ring_buffer_shared(const ring_t *r, const float *buf, size_t count);

/* Segment j of count elements split over n ranks: the first count % n segments are one element
 * longer. Exposed for tests. */
void ring_segment(size_t count, int n, int j, size_t *off, size_t *len);
/* The ring's private communicator (a duplicate of comm, errors returned, not fatal) and this
 * rank's place in it; shared by the host ring and the device ring (ring_cuda.c). */
void ring_comm_setup(MPI_Comm comm, MPI_Comm *dup, int *rank, int *size, int *left, int *right);
/* 1 when every rank of comm (size ranks, this one rank) is on this host; collective, and the same
 * answer on every rank (if one rank sees all ranks on its host, every rank does) */
int ring_comm_one_host(MPI_Comm comm, int rank, int size);
/* The ring's schedule: the segment rank sends right / receives from the left at step t of
 * 2 (n-1) (reduce-scatter for t < n-1, then allgather); shared by the host and device rings. */
int ring_seg_sent(int rank, int n, int t);
int ring_seg_recv(int rank, int n, int t);
/* chunk_bytes (0: RING_DEFAULT_CHUNK_BYTES) as a count of floats, at least 1 */
size_t ring_chunk_elems(size_t chunk_bytes);
/* dst[i] += src[i] (vectorised) */
void ring_add(float *restrict dst, const float *restrict src, size_t n);
/* x[i] *= s (vectorised) */
void ring_scale(float *restrict x, float s, size_t n);

#endif
