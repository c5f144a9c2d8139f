/* ring_exchange_impl.h: the ring exchange's state, shared by the files that make it up (not a
 * public header; the public one is ring_exchange.h):
 *   ring_exchange.c  the exchange adapter: ops, the allreduce of a range with --allreduce / --op /
 *                    --fp16 / --hierarchical, --stall-warn, construction
 *   ring_overlap.c   --overlap: buckets from grad_ready and the communication thread
 *   ring_autotune.c  --autotune: the search over bucket and chunk sizes */
#ifndef PSRING_RING_EXCHANGE_IMPL_H
#define PSRING_RING_EXCHANGE_IMPL_H
#include "ring_allreduce.h"
#include "ring_ops.h"
#include "ring_exchange.h"
#include "common/comm_thread.h"
#include "common/stall.h"
#include "exchange/startup.h"
#include <pthread.h>
#include <stdio.h>

typedef struct { size_t lo, hi; } range_t;

/* --autotune: a coordinate search, buckets first (at the given chunk), then chunks (at the best
 * bucket); each trial is AUTOTUNE_WARMUP unmeasured steps then AUTOTUNE_STEPS timed ones. */
#define AUTOTUNE_WARMUP 1
#define AUTOTUNE_STEPS 4
#define AUTOTUNE_MAX 16
typedef struct {
    int active;              /* still searching */
    int phase, cand;         /* phase 0: buckets[cand], phase 1: chunks[cand] */
    float buckets[8]; int nbuckets;
    int chunks[8]; int nchunks;
    float bucket_mb; int chunk_kb;            /* the setting being tried */
    int steps;               /* steps done with it */
    double t_last, sum;      /* end of the previous step; timed steps' total */
    int ntrial;              /* rank 0's record of every trial */
    float t_bucket[AUTOTUNE_MAX]; int t_chunk[AUTOTUNE_MAX]; double t_ms[AUTOTUNE_MAX];
    int best;                /* index into the record */
    FILE *log;               /* --autotune-log, rank 0 */
    char log_path[1024];
    int verbose;
} autotune_t;

/* the overlap machinery: a queue of ranges of this step's gradient buffer */
typedef struct {
    comm_thread_t ct;        /* its thread, mutex, conditions, quit (src/common/comm_thread.h) */
    ring_t ring;             /* its own ring, hence its own communicator */
    float *grads;            /* this step's gradient buffer (NULL: no grad_ready yet) */
    range_t *q;              /* ranges handed over this step, in order */
    size_t nq, qcap, next;   /* next: first range the thread has not started */
    size_t done;             /* ranges finished */
    range_t open;            /* bucket being filled (lo == hi: empty) */
    size_t bucket;           /* elements per bucket */
} overlap_t;

typedef struct {
    MPI_Comm comm;           /* duplicate of MPI_COMM_WORLD: broadcasts, averages, MPI_Allreduce */
    ring_t ring;
    size_t count;
    float *state;            /* optimizer state, count x optim_state_per_param */
    size_t nstate;
    allreduce_impl_t allreduce; /* --allreduce: psring's ring or MPI_Allreduce */
    int fp16, overlap;
    uint16_t *half;          /* --allreduce mpi --fp16: the wire buffer */
    MPI_Op half_sum;
    startup_t startup;       /* rank, size, local rank; whether we finalize MPI */
    float *params_seen;      /* the trainer's parameter buffer (sync_params/step), for state_get/set */
    overlap_t ov;
    ring_op_t op;            /* --op */
    adasum_t adasum;         /* --op adasum */
    int hier_on;             /* --hierarchical */
    hier_t hier;
    autotune_t tune;         /* --autotune */
    /* --stall-warn: every rank reports reaching a step to rank 0 on its own communicator */
    stall_watch_t stall;     /* rank 0: who was named (stall.h); stall.warn > 0: on */
    MPI_Comm stall_comm;
    long stall_step;
    MPI_Request *stall_req;
    long *stall_got;
    uint8_t *stall_in;
} ringex_t;

/* allreduce buf[0, n) (element off of the whole gradient) with the configured implementation and
 * --op, on ring r (psring's) or comm (MPI's); the main thread and the overlap thread both call it */
void ringex_allreduce_range(exchange_t *ex, ring_t *r, MPI_Comm comm, float *buf, size_t off, size_t n);

/* ring_overlap.c: start the communication thread with buckets of bucket_mb (its own ring, chunk
 * chunk_bytes); grad_ready is the exchange op; flush sends the rest of this step and waits;
 * stop joins the thread (no-op when never started) */
void ring_overlap_start(exchange_t *ex, float bucket_mb, size_t chunk_bytes);
void ring_overlap_grad_ready(exchange_t *ex, float *grads, size_t offset, size_t count, float lr);
void ring_overlap_flush(exchange_t *ex, float *grads);
void ring_overlap_stop(overlap_t *ov);
/* elements per bucket for bucket_mb (at least 1) */
size_t ring_overlap_bucket_elems(float bucket_mb);

/* ring_autotune.c: set up the search from the configuration (rank 0 opens the log; exits the job
 * when it cannot), one call after every step while x->tune.active, and the end (writes the log
 * of an unfinished search) */
void ring_autotune_init(exchange_t *ex, const ring_config_t *c);
void ring_autotune_after_step(exchange_t *ex);
void ring_autotune_end(autotune_t *t);

#endif
