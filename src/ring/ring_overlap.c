/* ring_overlap.c: --overlap for the ring exchange. grad_ready() fuses finished ranges (last layer
 * first) into buckets of --bucket-mb, and a communication thread allreduces full buckets on its
 * own ring (hence its own duplicated communicator) while backward continues; step() then sends
 * the rest and waits (ring_overlap_flush). The mutex serialises the two threads' MPI calls, which
 * is why MPI_THREAD_SERIALIZED suffices. Not here: the allreduce itself (ring_exchange.c). */
#include "ring_exchange_impl.h"
#include "common/check.h"
#include <stdlib.h>
#include <string.h>

size_t ring_overlap_bucket_elems(float bucket_mb) {
    double b = (double)bucket_mb * 1024.0 * 1024.0 / sizeof(float);
    return b < 1 ? 1 : (size_t)b;
}

/* the communication thread: allreduces the queued ranges in order, one at a time */
static void *overlap_main(void *arg) {
    exchange_t *ex = arg;
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->ct.mu);
    for (;;) {
        while (!ov->ct.quit && ov->next == ov->nq) pthread_cond_wait(&ov->ct.cv_job, &ov->ct.mu);
        if (ov->next == ov->nq && ov->ct.quit) break;
        range_t r = ov->q[ov->next++];
        float *g = ov->grads;
        pthread_mutex_unlock(&ov->ct.mu);
        ringex_allreduce_range(ex, &ov->ring, ov->ring.comm, g + r.lo, r.lo, r.hi - r.lo);
        pthread_mutex_lock(&ov->ct.mu);
        ov->done++;
        pthread_cond_signal(&ov->ct.cv_done);
    }
    pthread_mutex_unlock(&ov->ct.mu);
    return NULL;
}

/* caller holds ov->ct.mu */
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
    pthread_cond_signal(&ov->ct.cv_job);
}

void ring_overlap_grad_ready(exchange_t *ex, float *grads, size_t offset, size_t count, float lr) {
    (void)lr;   /* every worker steps with the lr step() gets */
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    if (!x->overlap || count == 0) return;
    if (offset + count > x->count)
        die("ring exchange: grad_ready range [%zu, %zu) beyond the %zu parameters", offset, offset + count, x->count);
    pthread_mutex_lock(&ov->ct.mu);
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
    pthread_mutex_unlock(&ov->ct.mu);
}

/* step() with overlap: send the open bucket and every range nobody reported, wait for all */
void ring_overlap_flush(exchange_t *ex, float *grads) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->ct.mu);
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
    while (ov->done < ov->nq) pthread_cond_wait(&ov->ct.cv_done, &ov->ct.mu);
    ov->nq = ov->next = ov->done = 0;
    ov->grads = NULL;
    pthread_mutex_unlock(&ov->ct.mu);
}


void ring_overlap_start(exchange_t *ex, float bucket_mb, size_t chunk_bytes) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    ov->bucket = ring_overlap_bucket_elems(bucket_mb);
    ring_init(&ov->ring, MPI_COMM_WORLD, ov->bucket < x->count ? ov->bucket : x->count, chunk_bytes);
    comm_thread_start(&ov->ct, overlap_main, ex, "ring exchange");
}

void ring_overlap_stop(overlap_t *ov) {
    if (ov->ct.started) {
        comm_thread_stop(&ov->ct);
        ring_free(&ov->ring);
    }
    free(ov->q);
    ov->q = NULL;
}
