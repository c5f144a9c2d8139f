/* ring_autotune.c: --autotune for the ring exchange with --overlap. A coordinate search: the first
 * steps try bucket sizes (at the given chunk), then chunk sizes (at the best bucket), each trial
 * AUTOTUNE_WARMUP unmeasured steps then AUTOTUNE_STEPS timed ones, timed by the slowest rank;
 * rank 0 decides, broadcasts, and every rank switches at the same step; then the best setting
 * stays. Only bucket and chunk change, never the sum itself, so training is the same up to float
 * rounding. Not here: what a bucket or a chunk is (ring_overlap.c, ring_allreduce.c). */
#include "ring_exchange_impl.h"
#include "common/check.h"
#include "common/mpi_check.h"
#include "common/timer.h"
#include <errno.h>
#include <string.h>

/* Switch every rank to (bucket_mb, chunk_kb) between steps: the communication thread is idle
 * (step() waited for it), so the bucket changes under the mutex and both rings are rebuilt with the
 * new chunk (collective: every rank does it at the same step). Only bucket and chunk change, never
 * the sum itself, so training stays the same up to float rounding. */
static void autotune_apply(exchange_t *ex, float bucket_mb, int chunk_kb) {
    ringex_t *x = ex->impl;
    overlap_t *ov = &x->ov;
    pthread_mutex_lock(&ov->ct.mu);
    ov->bucket = ring_overlap_bucket_elems(bucket_mb);
    if (chunk_kb != x->tune.chunk_kb) {
        size_t cb = (size_t)chunk_kb * 1024;
        ring_free(&ov->ring);
        ring_init(&ov->ring, MPI_COMM_WORLD, ov->bucket < x->count ? ov->bucket : x->count, cb);
        ring_free(&x->ring);
        ring_init(&x->ring, MPI_COMM_WORLD, x->count, cb);
    }
    pthread_mutex_unlock(&ov->ct.mu);
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

void ring_autotune_after_step(exchange_t *ex) {
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


void ring_autotune_init(exchange_t *ex, const ring_config_t *c) {
    ringex_t *x = ex->impl;
    autotune_t *t = &x->tune;
    t->active = 1;
    t->verbose = !c->quiet;
    t->bucket_mb = c->bucket_mb;
    t->chunk_kb = c->chunk_kb;
    const float bl[] = {c->bucket_mb, 0.25f, 1.0f, 4.0f, 16.0f};
    const int cl[] = {c->chunk_kb, 64, 256, 1024};
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
    if (ex->rank == 0 && c->autotune_log && c->autotune_log[0]) {
        snprintf(t->log_path, sizeof t->log_path, "%s", c->autotune_log);
        t->log = fopen(c->autotune_log, "w");
        if (!t->log) {
            fprintf(stderr, "psring: --autotune-log %s: %s\n", c->autotune_log, strerror(errno));
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
        }
    }
}

void ring_autotune_end(autotune_t *t) {
    if (!t->log) return;   /* training ended before the search did: the trials so far, none chosen */
    if (t->verbose) printf("autotune: training ended after %d trial(s); kept bucket %g MB, chunk %d KiB\n",
                           t->ntrial, (double)t->bucket_mb, t->chunk_kb);
    autotune_write_log(t, -1);
}
