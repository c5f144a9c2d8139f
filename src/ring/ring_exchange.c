/* ring_exchange.c: the "ring" topology for the shared trainer (exchange.h). Every process is a
 * worker; a step allreduce-sums the local mean gradients (psring's ring, or MPI_Allreduce as the
 * baseline), scales by 1/N and runs the same optimizer on every worker, so parameters stay
 * identical without ever being sent after the initial broadcast.
 *   --fp16      gradients travel as halves (ring: float accumulation per hop; mpi: MPI_Allreduce
 *               on halves with a user-defined half-sum op, which rounds after every addition)
 *   --overlap   grad_ready() fuses finished ranges (last layer first) into buckets of
 *               --bucket-mb and a communication thread allreduces full buckets on its own
 *               duplicated communicator while backward continues; step() sends the rest and waits.
 *   --op        average (sum / N, the default), sum (no 1/N: the user scales lr), adasum
 *               (ring_ops.c: per-tensor adaptive pairwise sum, power-of-two N)
 *   --hierarchical  reduce in each host, psring's ring between host roots, broadcast (ring_ops.c)
 *   --autotune  with --overlap: the first steps try bucket sizes, then chunk sizes (coordinate
 *               search), a few steps each, timed by the slowest rank; rank 0 decides, broadcasts,
 *               and every rank switches at the same step; then the best setting stays.
 * What it does not do: any recovery from a dead peer (MPI ends the job; mpirun names the rank). */
#include "ring_allreduce.h"
#include "ring_ops.h"
#include "half.h"
#include "common/mpi_check.h"
#include "train/exchange.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/timeline_hook.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>


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
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_done;
    ring_t ring;             /* its own ring, hence its own communicator */
    float *grads;            /* this step's gradient buffer (NULL: no grad_ready yet) */
    range_t *q;              /* ranges handed over this step, in order */
    size_t nq, qcap, next;   /* next: first range the thread has not started */
    size_t done;             /* ranges finished */
    int quit;
    range_t open;            /* bucket being filled (lo == hi: empty) */
    size_t bucket;           /* elements per bucket */
} overlap_t;

typedef struct {
    MPI_Comm comm;           /* duplicate of MPI_COMM_WORLD: broadcasts, averages, MPI_Allreduce */
    ring_t ring;
    size_t count;
    float *state;            /* optimizer state, count x optim_state_per_param */
    size_t nstate;
    allreduce_impl_t impl;
    int fp16, overlap;
    uint16_t *half;          /* --allreduce mpi --fp16: the wire buffer */
    MPI_Op half_sum;
    int started_mpi;
    float *params_seen;      /* the trainer's parameter buffer (sync_params/step), for state_get/set */
    overlap_t ov;
    ring_op_t op;            /* --op */
    adasum_t adasum;         /* --op adasum */
    int hier_on;             /* --hierarchical */
    hier_t hier;
    autotune_t tune;         /* --autotune */
    /* --stall-warn: every rank reports reaching a step to rank 0 on its own communicator */
    double stall_warn;
    MPI_Comm stall_comm;
    long stall_step;
    MPI_Request *stall_req;
    long *stall_got;
    uint8_t *stall_in;
} ringex_t;

/* ---- fp16 over MPI_Allreduce: sum of halves, rounded to half after each addition ---- */
static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const uint16_t *a = in;
    uint16_t *b = inout;
    float fa[1024], fb[1024];
    for (int i = 0; i < *len; i += 1024) {
        int n = *len - i < 1024 ? *len - i : 1024;
        half_to_float(fa, a + i, (size_t)n);
        half_to_float(fb, b + i, (size_t)n);
        ring_add(fb, fa, (size_t)n);
        half_from_float(b + i, fb, (size_t)n);
    }
}

/* allreduce buf[0, n) with the configured implementation and --op; the ring r for ours, comm for
 * MPI's. off is where buf starts in the whole gradient (the fp16 wire buffer is indexed the same
 * way). average: the sum times 1/N, which psring's float ring folds into its pass
 * (ring_allreduce_scaled) and the others get as one ring_scale pass over the range after the sum;
 * sum and adasum are not divided (adasum(g, g) = g already, sum leaves lr to the user). */
static void allreduce_range(exchange_t *ex, ring_t *r, MPI_Comm comm, float *buf, size_t off, size_t n) {
    ringex_t *x = ex->impl;
    int N = ex->world_size;
    if (N == 1 || n == 0) return;
    const float scale = x->op == RING_OP_AVERAGE ? 1.0f / (float)N : 1.0f;
    if (x->hier_on) {   /* options refuse hierarchical and adasum with --overlap: whole buffer */
        uint64_t s0 = x->hier.bytes_sent, r0 = x->hier.bytes_recv;
        hier_allreduce(&x->hier, buf, n);
        ex->stats.bytes_sent += x->hier.bytes_sent - s0; ex->stats.bytes_recv += x->hier.bytes_recv - r0;
    } else if (x->op == RING_OP_ADASUM) {
        uint64_t s0 = x->adasum.bytes_sent, r0 = x->adasum.bytes_recv;
        adasum_allreduce(&x->adasum, buf, n);
        ex->stats.bytes_sent += x->adasum.bytes_sent - s0; ex->stats.bytes_recv += x->adasum.bytes_recv - r0;
    } else if (x->impl == ALLREDUCE_RING && !x->fp16) {
        ring_allreduce_scaled(r, buf, n, scale);
        return;
    } else if (x->impl == ALLREDUCE_RING) {
        ring_allreduce_fp16(r, buf, n);
    } else {
        size_t esz = x->fp16 ? sizeof(uint16_t) : sizeof(float);
        double t_mpi = timer_now();
        /* MPI_Allreduce's internals are opaque: count the bandwidth-optimal payload, as for the ring */
        uint64_t nominal = (uint64_t)(2.0 * (N - 1) / N * (double)n * (double)esz);
        /* MPI takes int counts: go in pieces of at most 1 Gi elements */
        for (size_t done = 0; done < n;) {
            size_t m = n - done > (1u << 30) ? (1u << 30) : n - done;
            if (x->fp16) {
                uint16_t *h = x->half + off + done;
                half_from_float(h, buf + done, m);
                mpiCheck(MPI_Allreduce(MPI_IN_PLACE, h, (int)m, MPI_UINT16_T, x->half_sum, comm));
                half_to_float(buf + done, h, m);
            } else {
                mpiCheck(MPI_Allreduce(MPI_IN_PLACE, buf + done, (int)m, MPI_FLOAT, MPI_SUM, comm));
            }
            done += m;
        }
        ex->stats.bytes_sent += nominal;
        ex->stats.bytes_recv += nominal;
        timeline_mark("allreduce", t_mpi, timer_now());
    }
    if (scale != 1.0f) ring_scale(buf, scale, n);
}

/* ---- the communication thread ---- */
static void *overlap_main(void *arg) {
    exchange_t *ex = arg;
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->mu);
    for (;;) {
        while (!ov->quit && ov->next == ov->nq) pthread_cond_wait(&ov->cv_job, &ov->mu);
        if (ov->next == ov->nq && ov->quit) break;
        range_t r = ov->q[ov->next++];
        float *g = ov->grads;
        pthread_mutex_unlock(&ov->mu);
        allreduce_range(ex, &ov->ring, ov->ring.comm, g + r.lo, r.lo, r.hi - r.lo);
        pthread_mutex_lock(&ov->mu);
        ov->done++;
        pthread_cond_signal(&ov->cv_done);
    }
    pthread_mutex_unlock(&ov->mu);
    return NULL;
}

/* caller holds ov->mu */
static void overlap_push(overlap_t *ov, range_t r) {
    if (r.hi <= r.lo) return;
    for (size_t i = 0; i < ov->nq; i++)
        if (r.lo < ov->q[i].hi && ov->q[i].lo < r.hi)
            die("ring exchange: grad_ready range [%zu, %zu) overlaps [%zu, %zu) already sent this step",
                r.lo, r.hi, ov->q[i].lo, ov->q[i].hi);
    if (ov->nq == ov->qcap) {
        ov->qcap = ov->qcap ? 2 * ov->qcap : 64;
        range_t *q = xmalloc(ov->qcap * sizeof *q);
        if (ov->nq) memcpy(q, ov->q, ov->nq * sizeof *q);
        free(ov->q);
        ov->q = q;
    }
    ov->q[ov->nq++] = r;
    pthread_cond_signal(&ov->cv_job);
}

static void ring_grad_ready(exchange_t *ex, float *grads, size_t offset, size_t count) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    if (!x->overlap || count == 0) return;
    if (offset + count > x->count)
        die("ring exchange: grad_ready range [%zu, %zu) beyond the %zu parameters", offset, offset + count, x->count);
    pthread_mutex_lock(&ov->mu);
    if (ov->grads && ov->grads != grads)
        die("ring exchange: grad_ready got a different gradient buffer within one step");
    ov->grads = grads;
    range_t r = { offset, offset + count };
    if (ov->open.hi > ov->open.lo && r.hi == ov->open.lo) {
        ov->open.lo = r.lo;                    /* the usual case: the layer just below */
    } else {
        overlap_push(ov, ov->open);            /* not adjacent: ship what we have */
        ov->open = r;
    }
    if (ov->open.hi - ov->open.lo >= ov->bucket) {
        overlap_push(ov, ov->open);
        ov->open.lo = ov->open.hi = 0;
    }
    pthread_mutex_unlock(&ov->mu);
}

/* step() with overlap: send the open bucket and every range nobody reported, wait for all */
static void overlap_flush(exchange_t *ex, float *grads) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->mu);
    if (ov->grads != grads)
        die("ring exchange: step() got a different gradient buffer than grad_ready()");
    overlap_push(ov, ov->open);
    ov->open.lo = ov->open.hi = 0;
    /* the complement of what was queued, from the top down like backward (sorted by a scan) */
    size_t hi = x->count;
    while (hi > 0) {
        size_t lo = 0, nexthi = 0;            /* the highest queued range below hi */
        int found = 0;
        for (size_t i = 0; i < ov->nq; i++)
            if (ov->q[i].hi <= hi && (!found || ov->q[i].hi > lo)) { lo = ov->q[i].hi; nexthi = ov->q[i].lo; found = 1; }
        if (!found) { overlap_push(ov, (range_t){0, hi}); break; }
        if (lo < hi) overlap_push(ov, (range_t){lo, hi});
        hi = nexthi;
    }
    while (ov->done < ov->nq) pthread_cond_wait(&ov->cv_done, &ov->mu);
    ov->nq = ov->next = ov->done = 0;
    ov->grads = NULL;
    pthread_mutex_unlock(&ov->mu);
}

/* ---- stall detection (Horovod's stall check, rank 0 as the coordinator) ----
 * Before each allreduce every rank tells rank 0 which step it reached (one 8-byte eager send,
 * never waited on by the sender beyond the copy); rank 0 collects these and, when some ranks are
 * still missing stall_warn seconds after rank 0 got there, names them once and keeps waiting.
 * The allreduce itself would block without saying who is late. Costs rank 0 a short poll per
 * step, so it is off unless --stall-warn is given. Rank 0 itself cannot be named (as in Horovod). */
static void stall_check(exchange_t *ex) {
    ringex_t *x = ex->impl;
    long step = x->stall_step++;
    int N = ex->world_size;
    if (ex->rank != 0) {
        mpiCheck(MPI_Send(&step, 1, MPI_LONG, 0, 0, x->stall_comm));
        return;
    }
    for (int r = 1; r < N; r++) {
        x->stall_in[r] = 0;
        mpiCheck(MPI_Irecv(&x->stall_got[r], 1, MPI_LONG, r, 0, x->stall_comm, &x->stall_req[r - 1]));
    }
    double t0 = timer_now();
    int arrived = 0, named = 0;
    int *idx = xmalloc(sizeof(int) * (size_t)N);
    while (arrived < N - 1) {
        int n = 0;
        mpiCheck(MPI_Testsome(N - 1, x->stall_req, &n, idx, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n && n != MPI_UNDEFINED; i++) { x->stall_in[idx[i] + 1] = 1; arrived++; }
        if (arrived == N - 1) break;
        double waited = timer_now() - t0;
        if (!named && waited >= x->stall_warn) {
            char list[512] = "";
            size_t used = 0;
            for (int r = 1; r < N && used < sizeof list - 16; r++)
                if (!x->stall_in[r]) used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", used ? ", " : "", r);
            fprintf(stderr, "psring: ring: stall: rank(s) %s have not reached step %ld for %.1f s; the others wait "
                    "in the allreduce (--stall-warn %.3g)\n", list, step + 1, waited, x->stall_warn);
            fflush(stderr);
            named = 1;
        }
        if (waited > 0.001) { struct timespec ts = {0, 100000}; nanosleep(&ts, NULL); }
    }
    free(idx);
    if (named) {
        fprintf(stderr, "psring: ring: step %ld: every rank arrived after %.1f s\n", step + 1, timer_now() - t0);
        fflush(stderr);
    }
}

/* ---- --autotune ---- */

/* Switch every rank to (bucket_mb, chunk_kb) between steps: the communication thread is idle
 * (step() waited for it), so the bucket changes under the mutex and both rings are rebuilt with the
 * new chunk (collective: every rank does it at the same step). Only bucket and chunk change, never
 * the sum itself, so training stays the same up to float rounding. */
static void autotune_apply(exchange_t *ex, float bucket_mb, int chunk_kb) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->mu);
    double b = (double)bucket_mb * 1024.0 * 1024.0 / sizeof(float);
    ov->bucket = b < 1 ? 1 : (size_t)b;
    if (chunk_kb != x->tune.chunk_kb) {
        size_t cb = (size_t)chunk_kb * 1024;
        ring_free(&ov->ring);
        ring_init(&ov->ring, MPI_COMM_WORLD, ov->bucket < x->count ? ov->bucket : x->count, cb);
        ring_free(&x->ring);
        ring_init(&x->ring, MPI_COMM_WORLD, x->count, cb);
    }
    pthread_mutex_unlock(&ov->mu);
    x->tune.bucket_mb = bucket_mb;
    x->tune.chunk_kb = chunk_kb;
    x->tune.steps = 0;
    x->tune.sum = 0;
}

static void autotune_write_log(autotune_t *t, int chosen) {
    if (!t->log) return;
    fprintf(t->log, "trial,bucket_mb,chunk_kb,step_ms,chosen\n");
    for (int i = 0; i < t->ntrial; i++)
        fprintf(t->log, "%d,%.6g,%d,%.4f,%d\n", i + 1, (double)t->t_bucket[i], t->t_chunk[i], t->t_ms[i], i == chosen);
    if (fclose(t->log) != 0) fprintf(stderr, "psring: --autotune-log %s: write failed: %s\n", t->log_path, strerror(errno));
    t->log = NULL;
}

static void autotune_after_step(exchange_t *ex) {
    ringex_t *x = ex->impl;
    autotune_t *t = &x->tune;
    double now = timer_now();
    if (t->t_last > 0 && t->steps >= AUTOTUNE_WARMUP) t->sum += now - t->t_last;
    t->steps += t->t_last > 0;          /* the very first step has no start time: not counted */
    t->t_last = now;
    if (t->steps < AUTOTUNE_WARMUP + AUTOTUNE_STEPS) return;
    /* the step time that matters is the slowest rank's: everyone waits for it */
    double mine = t->sum / AUTOTUNE_STEPS, slowest = 0;
    mpiCheck(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, x->comm));
    double next[3] = {0, 0, 0};          /* bucket_mb, chunk_kb, done */
    if (ex->rank == 0) {
        int i = t->ntrial++;
        t->t_bucket[i] = t->bucket_mb; t->t_chunk[i] = t->chunk_kb; t->t_ms[i] = slowest * 1e3;
        if (i == 0 || t->t_ms[i] < t->t_ms[t->best]) t->best = i;
        if (t->verbose)
            printf("autotune: trial %d: bucket %g MB, chunk %d KiB: %.3f ms/step (slowest rank, mean of %d steps)\n",
                   i + 1, (double)t->bucket_mb, t->chunk_kb, t->t_ms[i], AUTOTUNE_STEPS);
        /* next candidate: the rest of the buckets, then every chunk but the one already timed */
        float nb = t->t_bucket[t->best];
        int nc = t->t_chunk[t->best], done = 0;
        if (t->phase == 0 && t->cand + 1 < t->nbuckets) { t->cand++; nb = t->buckets[t->cand]; nc = t->chunks[0]; }
        else {
            if (t->phase == 0) { t->phase = 1; t->cand = 0; }   /* chunks[0] was timed in phase 0 */
            if (t->cand + 1 < t->nchunks) { t->cand++; nb = t->t_bucket[t->best]; nc = t->chunks[t->cand]; }
            else done = 1;
            if (t->ntrial >= AUTOTUNE_MAX) done = 1;
        }
        if (done) { nb = t->t_bucket[t->best]; nc = t->t_chunk[t->best]; }
        next[0] = nb; next[1] = nc; next[2] = done;
    }
    mpiCheck(MPI_Bcast(next, 3, MPI_DOUBLE, 0, x->comm));
    autotune_apply(ex, (float)next[0], (int)next[1]);
    if (next[2] != 0) {
        t->active = 0;
        if (ex->rank == 0) {
            if (t->verbose)
                printf("autotune: chose bucket %g MB, chunk %d KiB: %.3f ms/step (start setting bucket %g MB, chunk %d KiB: %.3f ms/step)\n",
                       next[0], (int)next[1], t->t_ms[t->best], (double)t->t_bucket[0], t->t_chunk[0], t->t_ms[0]);
            fflush(stdout);
            autotune_write_log(t, t->best);
        }
    }
    t->t_last = timer_now();            /* the switch itself is not part of the next step */
}

/* ---- exchange ops ---- */
static int ring_sync_params(exchange_t *ex, float *params, size_t count) {
    ringex_t *x = ex->impl;
    x->params_seen = params;
    for (size_t done = 0; done < count;) {
        size_t m = count - done > (1u << 30) ? (1u << 30) : count - done;
        mpiCheck(MPI_Bcast(params + done, (int)m, MPI_FLOAT, 0, x->comm));
        done += m;
    }
    for (size_t done = 0; done < x->nstate;) {
        size_t m = x->nstate - done > (1u << 30) ? (1u << 30) : x->nstate - done;
        mpiCheck(MPI_Bcast(x->state + done, (int)m, MPI_FLOAT, 0, x->comm));
        done += m;
    }
    return 0;
}

static int ring_step(exchange_t *ex, float *params, float *grads, size_t count, float lr) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: step() with %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    x->params_seen = params;
    double t0 = timer_now();
    uint64_t s0 = x->ring.bytes_sent + x->ov.ring.bytes_sent, r0 = x->ring.bytes_recv + x->ov.ring.bytes_recv;
    if (x->stall_warn > 0) stall_check(ex);
    if (x->overlap && x->ov.grads) {
        overlap_flush(ex, grads);
    } else {
        /* Horovod's negotiation phase, made explicit: a barrier absorbs the skew between ranks
         * (a peer still computing or descheduled), so what follows is the collective alone, the
         * part the cost model predicts. With --overlap the background thread may be inside an
         * allreduce at this point (MPI_THREAD_SERIALIZED forbids a concurrent barrier), so
         * there the wait stays inside the transfer. */
        if (ex->world_size > 1) {
            double tw = timer_now();
            mpiCheck(MPI_Barrier(x->comm));
            double tw1 = timer_now();
            ex->stats.wait_s += tw1 - tw;
            timeline_mark("wait", tw, tw1);
        }
        allreduce_range(ex, &x->ring, x->comm, grads, 0, count);
    }
    ex->stats.bytes_sent += x->ring.bytes_sent + x->ov.ring.bytes_sent - s0;
    ex->stats.bytes_recv += x->ring.bytes_recv + x->ov.ring.bytes_recv - r0;
    double t1 = timer_now();
    optim_step(&ex->optim, params, grads, x->state, count, lr);
    double t2 = timer_now();
    ex->stats.exchange_s += t1 - t0;
    ex->stats.optimizer_s += t2 - t1;
    timeline_mark("optimizer", t1, t2);
    ex->stats.steps++;
    if (x->tune.active) autotune_after_step(ex);
    return 0;
}

static int ring_average(exchange_t *ex, double *vals, int n) {
    ringex_t *x = ex->impl;
    if (n <= 0) return 0;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, MPI_SUM, x->comm));
    for (int i = 0; i < n; i++) vals[i] /= ex->world_size;
    return 0;
}

static int ring_serve(exchange_t *ex) {
    fprintf(stderr, "psring: ring exchange has no servers; serve() called on rank %d\n", ex->process_rank);
    return -1;
}

static int ring_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: state_get for %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    /* parameters live in the trainer's buffer; copy them only if asked into another one */
    if (params && x->params_seen && params != x->params_seen) memcpy(params, x->params_seen, count * sizeof(float));
    if (state) memcpy(state, x->state, x->nstate * sizeof(float));
    return 0;
}

/* Restore from a checkpoint. The trainer calls this on worker 0 only (the one that read the
 * file) and then sync_params on every worker, which broadcasts params and this state: so nothing
 * collective here. params already are the trainer's (it loaded them into its own buffer). */
static int ring_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) {
        fprintf(stderr, "psring: ring exchange: state_set for %zu parameters, created for %zu\n", count, x->count);
        return -1;
    }
    if (state) memcpy(x->state, state, x->nstate * sizeof(float));
    return 0;
}

static int ring_finish(exchange_t *ex, float *params, size_t count) {
    return 0;   /* nothing remote: every worker already holds the final parameters */
}

/* The gradients in the ring's shared window (one host), so step()'s ring_allreduce loads and
 * stores instead of sending. Only where step() hands the whole buffer to x->ring: --overlap
 * allreduces buckets on its own ring (and --autotune rebuilds x->ring, which would free the
 * window under the model), --fp16, --hierarchical and adasum have their own paths. */
static float *ring_grads_alloc(exchange_t *ex, size_t count) {
    ringex_t *x = ex->impl;
    if (count != x->count) die("ring exchange: gradient buffer of %zu floats, created for %zu", count, x->count);
    if (!x->overlap && !x->fp16 && !x->hier_on && x->op != RING_OP_ADASUM) return ring_buffer_alloc(&x->ring, count);
    return ring_heap_alloc(count);
}

static void ring_grads_free(exchange_t *ex, float *grads) {
    ringex_t *x = ex->impl;
    ring_buffer_free(&x->ring, grads);   /* heap memory (not one of its windows) is free()d */
}

static void ring_free_ex(exchange_t *ex) {
    ringex_t *x = ex->impl;
    if (x->ov.started) {
        pthread_mutex_lock(&x->ov.mu);
        x->ov.quit = 1;
        pthread_cond_signal(&x->ov.cv_job);
        pthread_mutex_unlock(&x->ov.mu);
        pthread_join(x->ov.thread, NULL);
        ring_free(&x->ov.ring);
        pthread_mutex_destroy(&x->ov.mu);
        pthread_cond_destroy(&x->ov.cv_job);
        pthread_cond_destroy(&x->ov.cv_done);
    }
    free(x->ov.q);
    if (x->tune.log) {   /* training ended before the search did: the trials so far, none chosen */
        if (x->tune.verbose) printf("autotune: training ended after %d trial(s); kept bucket %g MB, chunk %d KiB\n",
                                    x->tune.ntrial, (double)x->tune.bucket_mb, x->tune.chunk_kb);
        autotune_write_log(&x->tune, -1);
    }
    if (x->op == RING_OP_ADASUM) adasum_free(&x->adasum);
    if (x->hier_on) hier_free(&x->hier);
    if (x->stall_warn > 0) {
        mpiCheck(MPI_Comm_free(&x->stall_comm));
        free(x->stall_req); free(x->stall_got); free(x->stall_in);
    }
    ring_free(&x->ring);
    if (x->half_sum != MPI_OP_NULL) mpiCheck(MPI_Op_free(&x->half_sum));
    mpiCheck(MPI_Comm_free(&x->comm));
    int fin = 0;
    MPI_Finalized(&fin);
    if (x->started_mpi && !fin) mpiCheck(MPI_Finalize());
    free(x->state);
    free(x->half);
    free(x);
    free(ex);
}

static const exchange_ops_t ring_ops = {
    .name = "ring",
    .sync_params = ring_sync_params,
    .grad_ready = ring_grad_ready,
    .step = ring_step,
    .average = ring_average,
    .serve = ring_serve,
    .state_get = ring_state_get,
    .state_set = ring_state_set,
    .finish = ring_finish,
    .free = ring_free_ex,
    .grads_alloc = ring_grads_alloc,
    .grads_free = ring_grads_free,
};

/* Every rank must run the same options and model: compare fingerprints before any collective on
 * the gradient, so a mismatch is one clear line and exit 2 rather than a hang or a garbled sum. */
static void check_fingerprints(const options_t *o, size_t count, int rank, int size) {
    uint64_t mine[2] = { options_fingerprint(o), (uint64_t)count };
    uint64_t *all = xmalloc(2 * (size_t)size * sizeof(uint64_t));
    mpiCheck(MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD));
    char list[512] = "";
    int bad = 0;
    size_t used = 0;
    for (int i = 1; i < size; i++) {
        if (all[2 * i] == all[0] && all[2 * i + 1] == all[1]) continue;
        if (bad++ < 16 && used < sizeof list - 16)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", used ? ", " : "", i);
    }
    if (bad) {
        if (rank == 0) {
            fprintf(stderr, "psring: ring: options differ across ranks: rank%s %s%s disagree%s with rank 0 "
                    "(fingerprint %016llx, %zu parameters); start every rank with the same flags\n",
                    bad > 1 ? "s" : "", list, bad > 16 ? ", ..." : "", bad > 1 ? "" : "s",
                    (unsigned long long)all[0], (size_t)all[1]);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
        }
        sleep(30);   /* rank 0 is aborting the job; only if that failed, abort from here */
        MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
    }
    free(all);
}

exchange_t *exchange_ring_create(const options_t *o, size_t count) {
    int inited = 0, started = 0;
    mpiCheck(MPI_Initialized(&inited));
    if (!inited) {
        /* the overlap thread makes MPI calls while the main thread waits (never both at once, the
         * mutex serialises them), so SERIALIZED would do; ask MULTIPLE and accept SERIALIZED */
        int want = o->overlap ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, got = 0;
        mpiCheck(MPI_Init_thread(NULL, NULL, want, &got));
        int need = o->overlap ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED;
        if (got < need) {
            fprintf(stderr, "psring: ring: --overlap needs MPI_THREAD_SERIALIZED, this MPI gives level %d\n", got);
            MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
        }
        started = 1;
    }
    exchange_t *ex = xcalloc(1, sizeof *ex);
    ringex_t *x = xcalloc(1, sizeof *x);
    ex->impl = x;
    ex->ops = &ring_ops;
    x->started_mpi = started;
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &ex->rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &ex->world_size));
    ex->process_rank = ex->rank;
    ex->process_count = ex->world_size;
    ex->is_worker = 1;
    check_fingerprints(o, count, ex->rank, ex->world_size);
    MPI_Comm node;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ex->rank, MPI_INFO_NULL, &node));
    mpiCheck(MPI_Comm_rank(node, &ex->local_rank));
    mpiCheck(MPI_Comm_free(&node));
    mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &x->comm));
    mpiCheck(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN));

    ex->optim = options_optim_config(o);
    ex->stats.staleness_mean = -1;
    x->count = count;
    x->nstate = count * optim_state_per_param(&ex->optim);
    x->state = xcalloc(x->nstate ? x->nstate : 1, sizeof(float));
    x->impl = o->allreduce;
    x->fp16 = o->fp16;
    x->overlap = o->overlap;
    x->half_sum = MPI_OP_NULL;
    if (o->stall_warn > 0 && ex->world_size > 1) {
        x->stall_warn = o->stall_warn;
        mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &x->stall_comm));
        x->stall_req = xcalloc((size_t)ex->world_size, sizeof(MPI_Request));
        x->stall_got = xcalloc((size_t)ex->world_size, sizeof(long));
        x->stall_in = xcalloc((size_t)ex->world_size, 1);
    }
    size_t chunk_bytes = (size_t)(o->chunk_kb > 0 ? o->chunk_kb : 0) * 1024;
    ring_init(&x->ring, MPI_COMM_WORLD, count, chunk_bytes);
    if (x->impl == ALLREDUCE_MPI && x->fp16) {
        x->half = xmalloc((count ? count : 1) * sizeof(uint16_t));
        mpiCheck(MPI_Op_create(half_sum_fn, 1, &x->half_sum));
    }
    if (x->overlap) {
        overlap_t *ov = &x->ov;
        double b = (double)o->bucket_mb * 1024.0 * 1024.0 / sizeof(float);
        ov->bucket = b < 1 ? 1 : (size_t)b;
        ring_init(&ov->ring, MPI_COMM_WORLD, ov->bucket < count ? ov->bucket : count, chunk_bytes);
        if (pthread_mutex_init(&ov->mu, NULL) || pthread_cond_init(&ov->cv_job, NULL) ||
            pthread_cond_init(&ov->cv_done, NULL))
            die("ring exchange: pthread mutex/cond init failed");
        int rc = pthread_create(&ov->thread, NULL, overlap_main, ex);
        if (rc) die("ring exchange: pthread_create: %s", strerror(rc));
        ov->started = 1;
    }
    x->op = o->ring_op;
    if (x->op == RING_OP_ADASUM) {
        /* Horovod's Adasum takes dot products per tensor: the trainer's layout is W0 b0 W1 b1 ...
         * (mlp.h), each a contiguous range; exits 2 on a non-power-of-two worker count */
        size_t toff[2 * MLP_MAX_SIZES + 1];
        int nt = 0;
        toff[0] = 0;
        for (int l = 0; l + 1 < o->nsizes; l++) {
            toff[nt + 1] = toff[nt] + (size_t)o->sizes[l + 1] * (size_t)o->sizes[l]; nt++;
            toff[nt + 1] = toff[nt] + (size_t)o->sizes[l + 1]; nt++;
        }
        if (toff[nt] != count) die("ring exchange: --op adasum: the layers give %zu parameters, the exchange has %zu", toff[nt], count);
        adasum_init(&x->adasum, MPI_COMM_WORLD, count, toff, nt);
    }
    if (o->hierarchical) {
        x->hier_on = 1;
        hier_init(&x->hier, MPI_COMM_WORLD, count, chunk_bytes, hier_local_size_from_env());
        if (ex->rank == 0 && !o->quiet)
            printf("ring: hierarchical allreduce over %d host(s), %d rank(s) on rank 0's host\n", x->hier.hosts, x->hier.local_size);
    }
    if (o->autotune && ex->world_size > 1) {
        autotune_t *t = &x->tune;
        t->active = 1;
        t->verbose = !o->quiet;
        t->bucket_mb = o->bucket_mb;
        t->chunk_kb = o->chunk_kb;
        const float bl[] = {o->bucket_mb, 0.25f, 1.0f, 4.0f, 16.0f};
        const int cl[] = {o->chunk_kb, 64, 256, 1024};
        for (size_t i = 0; i < sizeof bl / sizeof *bl; i++) {
            int dup = 0;
            for (int j = 0; j < t->nbuckets; j++) dup |= t->buckets[j] == bl[i];
            if (!dup) t->buckets[t->nbuckets++] = bl[i];
        }
        for (size_t i = 0; i < sizeof cl / sizeof *cl; i++) {
            int dup = 0;
            for (int j = 0; j < t->nchunks; j++) dup |= t->chunks[j] == cl[i];
            if (!dup) t->chunks[t->nchunks++] = cl[i];
        }
        if (ex->rank == 0 && o->autotune_log[0]) {
            snprintf(t->log_path, sizeof t->log_path, "%s", o->autotune_log);
            t->log = fopen(o->autotune_log, "w");
            if (!t->log) {
                fprintf(stderr, "psring: --autotune-log %s: %s\n", o->autotune_log, strerror(errno));
                fflush(stderr);
                MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
            }
        }
    }
    return ex;
}
