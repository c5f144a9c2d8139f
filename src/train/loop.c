/* loop.c: the training step and the two drivers that call it. run_step is the one step every
 * topology takes: micro-batches -> mean gradient -> learning rate -> exchange -> timings -> loss
 * -> checkpoint every N. A driver only says where the step's samples come from and when an epoch
 * ends: run_epochs walks the epochs in step with the other workers (local, ring, PS bsp);
 * run_budget draws this worker's share of a sample budget from its own shard across epochs
 * (PS async/ssp). Neither knows which topology runs; they see only exchange.h.
 * Not here: set-up and teardown (run.c), the summary and the CSV (report.c). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <unistd.h>
#include "common/check.h"
#include "common/timer.h"
#include "common/timeline.h"
#include "train/run.h"
#include "exchange/exchange_step.h"

static void on_grad_ready(void *p, size_t offset, size_t count) {
    grad_ready_ctx_t *c = p;
    if (c->scale != 1.0f)
        for (size_t i = offset; i < offset + count; i++) c->grads[i] *= c->scale;
    c->ex->ops->grad_ready(c->ex, c->grads, offset, count, c->lr);
}

/* one micro-batch: gather, forward, backward (with on_ready, the exchange may start sending the
 * layers that are done); returns its loss */
static double train_micro(run_t *r, const uint32_t *idx, int n, int overlap_last) {
    double ta = timer_now();
    model_gather(&r->md, &r->train, idx, n);
    double tb = timer_now();
    double loss = model_forward(&r->md, n);
    double tf = timer_now();
    model_backward(&r->md, n, overlap_last ? on_grad_ready : NULL, &r->grc);
    double tc = timer_now();
    timeline_event("data", ta, tb);
    timeline_event("forward", tb, tf);
    timeline_event("backward", tf, tc);
    r->pt.data += tb - ta;
    r->pt.compute += tc - tb;
    return loss;
}

/* the learning rate of a step: a linear warm-up from --lr to the target over warmup_steps */
static float lr_at(const run_t *r, long step) {
    const float lr0 = r->o->lr;
    return step < r->warmup_steps ? lr0 + (r->lr_target - lr0) * (float)step / (float)r->warmup_steps : r->lr_target;
}

/* the step's exchange: gradient in, next parameters out (the gradients come back zero) */
static void exchange_step(run_t *r, float lr) {
    double ts = timer_now();
    if (exchange_step_model(r->ex, &r->md, lr) != 0) die("exchange step %ld failed", r->step);
    timeline_event("exchange", ts, timer_now());
}

/* --timing-skip: the times from here on are the ones reported */
static void timing_mark(run_t *r) {
    r->pt0 = r->pt;
    r->st0 = r->ex->stats;
    r->samples0 = r->samples_done;
    r->warm = 1;
}

/* The step's loss line and trace. In epochs the loss is averaged over the workers (they are in
 * step anyway); under a budget it is this worker's own: averaging it would make the workers meet
 * at every step. Returns the loss the driver sums for its epoch line. */
static double step_loss(run_t *r, double loss, float lr) {
    const options_t *o = r->o;
    if (!r->budget && r->need_step_loss) {
        double v = loss;
        if (r->ex->ops->average(r->ex, &v, 1) != 0) die("averaging the loss failed");
        loss = v;
    }
    if (r->losslog) fprintf(r->losslog, "%ld,%.9g\n", r->step, loss);
    if (o->log_every && r->step % o->log_every == 0 && !o->quiet)
        printf0("  step %ld  loss %.4f  lr %.4g%s\n", r->step, loss, (double)lr, r->budget ? " (worker 0)" : "");
    return loss;
}

/* --slow-rank/--slow-ms: a straggler made on purpose (tests, experiments) */
static void slow_down(const options_t *o, int rank) {
    if (o->slow_ms > 0 && rank < 64 && (o->slow_ranks >> rank & 1)) usleep((useconds_t)o->slow_ms * 1000);
}

/* A loss that is NaN or infinite never comes back: worker 0 stops the run at the step where it
 * finds one, with one line, instead of training on to a NaN summary and exit 0. The other workers
 * go on: a NaN gradient of theirs reaches worker 0 through the exchange by its next step, and its
 * exit ends the job (mpirun ends every rank when one exits non-zero). */
static void diverged(const run_t *r, double loss, float lr) {
    fflush(stdout);
    fprintf(stderr, "psring: the loss became %s at step %ld (lr %g): a learning rate too large is the usual cause; "
            "try a smaller --lr\n", isnan(loss) ? "NaN" : "infinite", r->step + 1, (double)lr);
    exit(1);
}

/* One optimizer step over `micro` micro-batches, each drawn by draw(r, src, &idx) (its size is
 * the return value; the draw also moves r->next_epoch/next_batch past it). Returns the step's
 * loss as step_loss gives it. */
double run_step(run_t *r, int micro, run_draw_fn draw, void *src) {
    const options_t *o = r->o;
    double t0 = timer_now();
    accel_share_compute(&r->accel);   /* an emulated GPU host: compute on the accelerator's share */
    r->grc.scale = 1.0f / (float)micro;
    float lr = lr_at(r, r->step);
    r->grc.lr = lr;
    double loss = 0;
    for (int k = 0; k < micro; k++) {
        const uint32_t *idx;
        int n = draw(r, src, &idx);
        loss += train_micro(r, idx, n, r->overlap && k == micro - 1);
        r->samples_done += (long)n * r->N;   /* averaged over the workers: their sum */
        r->my_samples += n;
    }
    loss /= micro;
    if (!isfinite(loss) && r->ex->rank == 0) diverged(r, loss, lr);
    if (micro > 1 && !r->overlap) model_scale_grads(&r->md, r->grc.scale);   /* the mean gradient */
    /* ... and what communicates or sums on the host's: the ring's reduction without --overlap,
     * the PS worker's waits and copies, the loss average, a checkpoint */
    accel_share_exchange(&r->accel);
    exchange_step(r, lr);
    r->step++;
    r->pt.train_total += timer_now() - t0;
    snapshots_take(&r->snaps, r);   /* off the step's time, and off the run's clock */
    if (r->step == o->timing_skip) timing_mark(r);
    loss = step_loss(r, loss, lr);
    slow_down(o, r->ex->rank);
    if (o->checkpoint[0] && o->checkpoint_every && r->step % o->checkpoint_every == 0) run_checkpoint(r);
    return loss;
}

/* ---- epochs: every worker walks the same epochs' batches in step with the others ---------- */

typedef struct { int epoch; long bi; } epoch_src_t;   /* bi: the epoch's next batch */

static int epoch_draw(run_t *r, void *p, const uint32_t **idx) {
    epoch_src_t *s = p;
    size_t off = (size_t)s->bi * (size_t)r->b;
    int n = (int)(r->sampler.num_samples - off < (size_t)r->b ? r->sampler.num_samples - off : (size_t)r->b);
    *idx = r->sampler.indices + off;
    s->bi++;
    int over = s->bi >= r->batches_per_epoch;
    r->next_epoch = over ? s->epoch + 1 : s->epoch;
    r->next_batch = over ? 0 : (int)s->bi;
    return n;
}

/* an epoch's line: the workers' mean loss over its steps, and the test accuracy */
static void epoch_report(run_t *r, int epoch, double ep_loss, long ep_steps, double ep_t0) {
    const options_t *o = r->o;
    double v[1] = {ep_loss / (double)ep_steps};
    if (r->ex->ops->average(r->ex, v, 1) != 0) die("averaging the epoch loss failed");
    r->last_loss = v[0];
    double ep_time = timer_now() - ep_t0;
    if (r->snaps.every) {   /* tested afterwards, on the copies (snapshots.h): no test here */
        if (!o->quiet)
            printf0("epoch %3d/%d  step %7ld  loss %.4f  samples/s %9.0f  elapsed %.1fs\n", epoch + 1, o->epochs, r->step,
                    r->last_loss, (double)ep_steps * (double)r->global_batch / ep_time, timer_now() - r->wall0);
        return;
    }
    r->test_acc = run_evaluate(r);
    if (!o->quiet)
        printf0("epoch %3d/%d  step %7ld  loss %.4f  test %.2f%%  samples/s %9.0f  elapsed %.1fs\n", epoch + 1, o->epochs,
                r->step, r->last_loss, 100.0 * r->test_acc, (double)ep_steps * (double)r->global_batch / ep_time,
                timer_now() - r->wall0);
}

void run_epochs(run_t *r) {
    const options_t *o = r->o;
    int stop = 0;   /* --steps reached */
    for (int epoch = r->start_epoch; epoch < o->epochs && !stop; epoch++) {
        sampler_set_epoch(&r->sampler, epoch);
        double ep_loss = 0, ep_t0 = timer_now();
        long ep_steps = 0;
        epoch_src_t s = { epoch, epoch == r->start_epoch ? r->start_batch : 0 };
        while (s.bi < r->batches_per_epoch) {
            r->next_epoch = epoch;
            r->next_batch = (int)s.bi;
            if (o->steps && r->step >= o->steps) { stop = 1; break; }
            long left = r->batches_per_epoch - s.bi;
            ep_loss += run_step(r, (int)(left < r->K ? left : r->K), epoch_draw, &s);
            ep_steps++;
        }
        if (ep_steps == 0) continue;
        epoch_report(r, epoch, ep_loss, ep_steps, ep_t0);
        /* every epoch, so a killed job loses at most one epoch */
        if (o->checkpoint[0] && !stop) run_checkpoint(r);
    }
}

/* ---- budget: each worker draws its share from its own shard, epoch after epoch ------------- */

/* Each worker walks its own shard epoch after epoch, into the next epoch's permutation when this
 * one runs out, so no worker waits for another at an epoch's end. */
typedef struct {
    sampler_t *s;
    int epoch;
    size_t pos;       /* the next sample in this epoch's order */
    long share, drawn;   /* this step's share, and what is drawn of it */
    uint32_t *idx;    /* a micro-batch's indices (b) */
} budget_src_t;

static int budget_draw(run_t *r, void *p, const uint32_t **idx) {
    budget_src_t *c = p;
    int n = c->share - c->drawn < r->b ? (int)(c->share - c->drawn) : r->b;
    for (int i = 0; i < n; i++) {
        if (c->pos == c->s->num_samples) { sampler_set_epoch(c->s, ++c->epoch); c->pos = 0; }
        c->idx[i] = c->s->indices[c->pos++];
    }
    c->drawn += n;
    int over = c->pos == c->s->num_samples;
    r->next_epoch = over ? c->epoch + 1 : c->epoch;
    r->next_batch = over ? 0 : (int)(c->pos / (size_t)r->b);
    *idx = c->idx;
    return n;
}

/* worker 0's epoch line: its own copy of the parameters tested on the whole test set (averaging
 * over the workers would make them meet) */
static void budget_epoch_report(run_t *r, int done, double mean, long ep_samples, double ep_t0) {
    double ep_time = timer_now() - ep_t0;
    if (r->o->quiet || r->ex->rank != 0 || r->snaps.every) return;   /* with copies: tested afterwards */
    double acc = r->test.count ? run_correct_in(r, &r->test, 0, r->test.count) / r->test.count : 0;
    printf0("epoch %3d (worker 0)  step %7ld  loss %.4f  test %.2f%%  samples/s %9.0f  elapsed %.1fs\n", done, r->step,
            mean, 100.0 * acc, (double)ep_samples / ep_time, timer_now() - r->wall0);
}

/* The end of a budget: every worker has stopped before the final parameters are read (finish).
 * The final loss is the mean over the workers of each one's loss over its last epoch (the one in
 * progress, or the one before when that has no step yet); a worker that took no step has none. */
static void budget_end(run_t *r, double mine) {
    exchange_t *ex = r->ex;
    if (ex->ops->stop(ex) != 0) die("stopping the exchange failed");
    double v[2] = { isnan(mine) ? 0 : mine, isnan(mine) ? 0 : 1 };
    if (ex->ops->average(ex, v, 2) != 0) die("averaging the final loss failed");
    r->last_loss = v[1] > 0 ? v[0] / v[1] : NAN;
    if (!r->o->quiet) {
        printf("worker %d: %ld steps, %ld samples\n", ex->rank, r->step, r->my_samples);
        fflush(stdout);
    }
}

void run_budget(run_t *r) {
    const options_t *o = r->o;
    budget_src_t c = { &r->sampler, r->start_epoch, (size_t)r->start_batch * (size_t)r->b, 0, 0,
                       xcalloc((size_t)r->b, sizeof(uint32_t)) };
    sampler_set_epoch(&r->sampler, r->start_epoch);
    double ep_loss = 0, ep_t0 = timer_now(), prev_mean = NAN;
    long ep_steps = 0, ep_samples0 = r->my_samples;
    int reported = r->start_epoch;   /* this worker's epochs done and reported */
    for (;;) {
        if (o->steps && r->step >= o->steps) break;
        c.share = r->ex->ops->share(r->ex);
        if (c.share <= 0) break;   /* the budget is spent */
        c.drawn = 0;
        ep_loss += run_step(r, (int)((c.share + r->b - 1) / r->b), budget_draw, &c);
        ep_steps++;
        /* this worker's epoch is over: its shard ran out during this step (the draw went on into
         * the next epoch's order) or exactly at its end; worker 0 reports and checkpoints */
        int done = c.epoch + (c.pos == r->sampler.num_samples);
        if (done > reported) {
            reported = done;
            prev_mean = ep_loss / (double)ep_steps;
            budget_epoch_report(r, done, prev_mean, r->my_samples - ep_samples0, ep_t0);
            if (o->checkpoint[0]) run_checkpoint(r);
            ep_loss = 0; ep_steps = 0; ep_samples0 = r->my_samples; ep_t0 = timer_now();
        }
    }
    free(c.idx);
    budget_end(r, ep_steps ? ep_loss / (double)ep_steps : prev_mean);
}
