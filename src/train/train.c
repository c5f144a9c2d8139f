/* train.c: psring-train, the one training loop every topology shares.
 *
 * Each worker takes its DistributedSampler shard, computes the mean gradient over its local batch
 * and hands it to an exchange (exchange.h), which returns the next parameters. The loop does not
 * know whether that was a local optimizer call, a ring allreduce or a push/pull to parameter
 * servers; that is what makes local(B) == ring(N x B/N) == ps-bsp(N x B/N) step by step, and every
 * comparison the testbed prints honest. It does not parse argv (options.c), talk MPI or ZeroMQ
 * (src/ring, src/ps) or do layer math (src/model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include "common/check.h"
#include "common/timer.h"
#include "data/idx.h"
#include "data/sampler.h"
#include "data/batch.h"
#include "model/mlp.h"
#include "model/optim.h"
#include "model/blas.h"
#include "train/options.h"
#include "train/topology_list.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "common/timeline.h"
#include "exchange/model_ops.h"

/* exchange.h's report() into the CSV row */
static void report_column(exchange_report_t *rep, const char *column, const char *value) {
    metrics_set(rep->row, column, "%s", value);
}

/* per-phase wall time of this worker, seconds */
typedef struct { double data, compute, train_total; } phase_times_t;

/* Overlap plumbing: mlp_backward reports finished layers; with --accumulate K the range is
 * scaled by 1/K (the mean over micro-batches) before the exchange may send it. */
typedef struct { exchange_t *ex; float *grads; float scale; } grad_ready_ctx_t;

static void on_grad_ready(void *p, size_t offset, size_t count) {
    grad_ready_ctx_t *c = p;
    if (c->scale != 1.0f)
        for (size_t i = offset; i < offset + count; i++) c->grads[i] *= c->scale;
    c->ex->ops->grad_ready(c->ex, c->grads, offset, count);
}

/* the exchange's gradient memory (exchange.h grads_alloc), as the model's allocator */
static float *grads_alloc_cb(void *ctx, size_t n) { exchange_t *ex = ctx; return ex->ops->grads_alloc(ex, n); }
static void grads_free_cb(void *ctx, float *p) { exchange_t *ex = ctx; ex->ops->grads_free(ex, p); }

/* the test images [lo, hi) the model classifies right */
static double correct_in(model_t *md, const dataset_t *test, int lo, int hi) {
    mlp_t *m = md->m;
    double correct = 0;
    uint32_t idx[4096];
    for (int i = lo; i < hi;) {
        int n = hi - i < m->max_batch ? hi - i : m->max_batch;
        if (n > 4096) n = 4096;
        for (int j = 0; j < n; j++) idx[j] = (uint32_t)(i + j);
        model_gather(md, test, idx, n);
        correct += model_correct(md, n);
        i += n;
    }
    return correct;
}

/* Test accuracy: each worker evaluates a contiguous slice of the test set, the exchange sums
 * the counts, so evaluation costs the same on every worker and nobody waits on worker 0. */
static double evaluate(exchange_t *ex, model_t *md, const dataset_t *test) {
    int lo = (int)((long)test->count * ex->rank / ex->world_size);
    int hi = (int)((long)test->count * (ex->rank + 1) / ex->world_size);
    double v[2] = {correct_in(md, test, lo, hi), (double)(hi - lo)};
    if (ex->ops->average(ex, v, 2) != 0) die("averaging test accuracy across workers failed");
    return v[1] > 0 ? v[0] / v[1] : 0.0;
}

/* Under a sample budget each worker walks its own shard epoch after epoch, into the next epoch's
 * permutation when this one runs out, so no worker waits for another at an epoch's end. */
typedef struct { sampler_t *s; int epoch; size_t pos; } cursor_t;

static void cursor_draw(cursor_t *c, uint32_t *out, int n) {
    for (int i = 0; i < n; i++) {
        if (c->pos == c->s->num_samples) { sampler_set_epoch(c->s, ++c->epoch); c->pos = 0; }
        out[i] = c->s->indices[c->pos++];
    }
}

/* one micro-batch: gather, forward, backward (with on_ready, the exchange may start sending the
 * layers that are done); returns its loss */
static double train_micro(model_t *md, const dataset_t *train, const uint32_t *idx, int n, int overlap_last,
                          grad_ready_ctx_t *grc, phase_times_t *pt) {
    double ta = timer_now();
    model_gather(md, train, idx, n);
    double tb = timer_now();
    double loss = model_forward(md, n);
    double tf = timer_now();
    model_backward(md, n, overlap_last ? on_grad_ready : NULL, grc);
    double tc = timer_now();
    timeline_event("data", ta, tb);
    timeline_event("forward", tb, tf);
    timeline_event("backward", tf, tc);
    pt->data += tb - ta;
    pt->compute += tc - tb;
    return loss;
}

/* the learning rate of a step: a linear warm-up from --lr to the target over warmup_steps */
static float lr_at(const options_t *o, float lr_target, long step, long warmup_steps) {
    return step < warmup_steps ? o->lr + (lr_target - o->lr) * (float)step / (float)warmup_steps : lr_target;
}

/* the step's exchange: gradient in, next parameters out (the gradients come back zero) */
static void exchange_step(model_t *md, exchange_t *ex, float lr, long step) {
    double ts = timer_now();
    if (model_step(md, ex, lr) != 0) die("exchange step %ld failed", step);
    timeline_event("exchange", ts, timer_now());
}

/* --slow-rank/--slow-ms: a straggler made on purpose (tests, experiments) */
static void slow_down(const options_t *o, int rank) {
    if (o->slow_ms > 0 && rank < 64 && (o->slow_ranks >> rank & 1)) usleep((useconds_t)o->slow_ms * 1000);
}

static void write_raw(const char *path, const float *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) die_input("--dump-params %s: %s", path, strerror(errno));
    if (fwrite(p, sizeof(float), n, f) != n || fclose(f) != 0)
        die("--dump-params %s: write failed: %s", path, strerror(errno));
}

/* layout: the run's data layout (sampler, workers, per-worker batch, drop_last, train_count),
 * recorded so that a resume under another layout can be refused (checkpoint_layout_mismatch) */
static void save_checkpoint(exchange_t *ex, const options_t *o, model_t *md, float *state, long step,
                            int epoch, int batch_in_epoch, const checkpoint_header_t *layout) {
    /* state_get is called on worker 0 only (a PS pull) */
    if (ex->rank != 0) return;
    mlp_t *m = md->m;
    model_params_to_host(md);
    if (ex->ops->state_get(ex, m->params, state, m->nparams) != 0) die("reading optimizer state for the checkpoint failed");
    checkpoint_header_t h = *layout;
    h.nsizes = m->nsizes;
    memcpy(h.sizes, m->sizes, sizeof(int) * (size_t)m->nsizes);
    h.nparams = m->nparams;
    h.state_per_param = (uint32_t)optim_state_per_param(&ex->optim);
    h.step = step;
    h.epoch = epoch;
    h.batch_in_epoch = batch_in_epoch;
    h.seed = o->seed;
    h.optimizer = (uint32_t)ex->optim.kind;
    char err[1024];
    if (checkpoint_save(o->checkpoint, &h, m->params, state, err, sizeof err) != 0) die_at(NULL, 0, 1, "%s", err);
}

int main(int argc, char **argv) {
    options_t o;
    char err[1024];
    int prc = options_parse(&o, argc, argv, err, sizeof err);
    if (prc == 1) return 0;
    if (prc != 0) {   /* under mpirun every rank refuses; one per host says why (hosts' files differ) */
        const char *rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
        if (!rank || !strcmp(rank, "0")) fprintf(stderr, "psring-train: %s\n", err);
        return EXIT_BADINPUT;
    }

    /* --describe: what the launcher needs of the topology (psring reads it) */
    if (o.describe) {
        options_describe(&o, stdout);
        return o.check_options && model_device_check(o.device) != 0 ? EXIT_BADINPUT : 0;
    }
    /* --check-options: the launcher validates once, so a bad flag is not reported by every rank */
    if (o.check_options) return model_device_check(o.device) != 0 ? EXIT_BADINPUT : 0;

    /* before anything loads OpenBLAS kernels or starts MPI: may re-exec this process */
    char blaslog[512] = "";
    blas_setup(argc, argv, o.threads, blaslog, sizeof blaslog);
    /* --device cuda without a GPU (or a CUDA build): one line, exit 2, before MPI starts */
    if (model_device_check(o.device) != 0) return EXIT_BADINPUT;

    size_t nparams = mlp_count_params(o.sizes, o.nsizes);
    exchange_t *ex = options_exchange_create(&o, nparams);
    if (!ex) return 1;
    psring_log_rank = ex->is_worker ? ex->rank : -1;
    {   /* --timeline: every process records; worker 0 merges (on a PS it is not MPI rank 0) */
        char role[48];   /* a worker's local rank picks its GPU with --device cuda: shown so placement can be checked */
        if (ex->is_worker) snprintf(role, sizeof role, "worker %d, local rank %d", ex->rank, ex->local_rank);
        else snprintf(role, sizeof role, "server %d", ex->process_rank);
        if (timeline_init(o.timeline, ex->process_rank, ex->process_count, role, err, sizeof err) != 0) die_input("%s", err);
    }
    if (!ex->is_worker) {
        int rc = ex->ops->serve(ex);
        if (timeline_finish(0, err, sizeof err) != 0) { fprintf(stderr, "psring: %s\n", err); rc = 1; }
        exchange_free(ex);
        return rc ? 1 : 0;
    }
    if (blaslog[0] && !o.quiet) printf0("%s\n", blaslog);

    const int N = ex->world_size;
    if (o.scaling == SCALING_STRONG && o.batch % N != 0)
        die_input("--scaling strong: --batch %d is not divisible by %d workers", o.batch, N);
    const int b = o.scaling == SCALING_STRONG ? o.batch / N : o.batch;
    const int K = o.accumulate;
    const long global_batch = (long)b * N * K;
    const float lr_target = o.lr_scale_linear ? o.lr * (float)global_batch / (float)(o.batch * K) : o.lr;

    /* data: every worker loads the files (a shared path, as with Horovod) and takes its shard */
    dataset_t train, test;
    if (dataset_load(&train, o.data_dir, "train", o.train_limit, err, sizeof err) != 0) die_input("%s", err);
    if (dataset_load(&test, o.data_dir, "t10k", o.test_limit, err, sizeof err) != 0) die_input("%s", err);
    if (train.dim != o.sizes[0])
        die_input("--data %s: images have %d pixels but --layers starts with %d", o.data_dir, train.dim, o.sizes[0]);
    sampler_t sampler;
    if (sampler_init(&sampler, (size_t)train.count, N, ex->rank, o.seed, 1, o.drop_last) != 0)
        die_input("cannot shard %d samples over %d workers", train.count, N);
    sampler_set_kind(&sampler, o.sampler);
    if (sampler.num_samples == 0)
        die_input("--train-limit %d leaves no sample for each of %d workers with --drop-last", train.count, N);
    checkpoint_header_t layout = {0};   /* what a checkpoint records of the data layout */
    layout.sampler = (uint32_t)o.sampler;
    layout.workers = (uint32_t)N;
    layout.batch = (uint32_t)b;
    layout.drop_last = (uint32_t)o.drop_last;
    layout.train_count = (uint64_t)train.count;
    const long batches_per_epoch = ((long)sampler.num_samples + b - 1) / b;
    const long steps_per_epoch = (batches_per_epoch + K - 1) / K;
    const long warmup_steps = (long)(o.warmup_epochs * (float)steps_per_epoch);

    mlp_t m;
    /* gradients where the exchange moves them fastest (ring on one host: a shared window) */
    mlp_allocator_t ga = { grads_alloc_cb, grads_free_cb, ex };
    mlp_init_alloc(&m, o.sizes, o.nsizes, b, o.seed, ex->ops->grads_alloc ? &ga : NULL);
    const size_t spp = optim_state_per_param(&ex->optim);
    float *state = xcalloc(nparams * spp, sizeof(float));
    model_t md;
    model_init(&md, &m, o.device, ex->local_rank);

    long step = 0;
    int start_epoch = 0, start_batch = 0;
    if (o.resume[0]) {
        checkpoint_header_t want = {0}, got;
        want.nsizes = m.nsizes;
        memcpy(want.sizes, m.sizes, sizeof(int) * (size_t)m.nsizes);
        want.nparams = m.nparams;
        want.state_per_param = (uint32_t)spp;
        want.optimizer = (uint32_t)ex->optim.kind;
        if (checkpoint_load(o.resume, &want, &got, m.params, state, err, sizeof err) != 0) die_input("%s", err);
        if (got.seed != o.seed) die_input("--resume %s: written with --seed %llu, this run has --seed %llu", o.resume,
                                          (unsigned long long)got.seed, (unsigned long long)o.seed);
        if (checkpoint_layout_mismatch(o.resume, &got, &layout, err, sizeof err) != 0) die_input("%s", err);
        step = got.step;
        start_epoch = got.epoch;
        start_batch = got.batch_in_epoch;
    }
    /* async/ssp on a PS: no epoch end where the workers meet; the run ends on a sample budget all
     * workers share (--samples, or what --epochs would process; a resumed run what is left of it
     * by worker 0's place), so a fast worker takes more steps than a slow one */
    const uint64_t epoch_samples = (uint64_t)sampler.num_samples * (uint64_t)N;
    const uint64_t resumed = (uint64_t)start_epoch * epoch_samples + (uint64_t)start_batch * (uint64_t)b * (uint64_t)N;
    const uint64_t budget_total = ex->ops->budget ? ex->ops->budget(ex, (uint64_t)o.epochs * epoch_samples, resumed,
                                                                     (uint64_t)b * (uint64_t)K) : 0;
    const int budget = budget_total > 0;
    if (o.resume[0]) {
        if (ex->rank == 0 && ex->ops->state_set(ex, m.params, state, nparams) != 0) die("restoring optimizer state failed");
        if (!o.quiet) printf0("resumed from %s at step %ld (epoch %d, batch %d)\n", o.resume, step, start_epoch + 1, start_batch);
    }
    if (ex->ops->sync_params(ex, m.params, nparams) != 0) die("initial parameter sync failed");
    model_params_to_device(&md);

    if (!o.quiet)
        printf0("psring-train: topology %s, %d worker%s x batch %d%s = global batch %ld, layers %s (%zu params), "
                "lr %.4g%s, %ld steps/epoch\n",
                ex->ops->name, N, N == 1 ? "" : "s", b, K > 1 ? " x accumulate" : "", global_batch, o.layers_spec,
                nparams, (double)lr_target, warmup_steps ? " after warm-up" : "", steps_per_epoch);
    if (budget && !o.quiet)
        printf0("sample budget: %llu samples shared by the workers (each goes on through its own epochs until it is spent)\n",
                (unsigned long long)budget_total);

    FILE *losslog = NULL;
    if (o.loss_log[0] && ex->rank == 0) {
        losslog = fopen(o.loss_log, step > 0 ? "a" : "w");
        if (!losslog) die_input("--loss-log %s: %s", o.loss_log, strerror(errno));
    }
    const int need_step_loss = o.loss_log[0] || o.log_every;

    grad_ready_ctx_t grc = {ex, m.grads, 1.0f / (float)K};
    const int overlap = ex->ops->grad_ready != NULL;   /* the exchange overlaps: it takes layers as they finish */
    phase_times_t pt = {0}, pt0 = {0};   /* pt0, st0, samples0: at the end of the warm-up steps */
    exchange_stats_t st0 = {0};
    long samples0 = 0;
    int warm = o.timing_skip == 0;   /* the warm-up is over: pt0, st0, samples0 hold its end */
    double wall0 = timer_now();
    double last_loss = NAN, test_acc = 0;
    long samples_done = 0;
    int stop = 0;
    int next_epoch = start_epoch, next_batch = start_batch;   /* where a resumed run continues */
    model_zero_grad(&md);
    long my_samples = 0;   /* under a budget: the samples this worker trained on */
    if (budget) {
        /* every step takes this worker's share, drawn on from its shard across epochs; worker 0
         * reports (testing its own copy of the parameters on the whole test set: averaging over
         * the workers would make them meet) and checkpoints at the end of each of its own epochs */
        uint32_t *idx = xcalloc((size_t)b, sizeof(uint32_t));
        cursor_t cur = { &sampler, start_epoch, (size_t)start_batch * (size_t)b };
        sampler_set_epoch(&sampler, start_epoch);
        double ep_loss = 0, ep_t0 = timer_now(), prev_mean = NAN;
        long ep_steps = 0, ep_samples = 0;
        int reported = start_epoch;   /* this worker's epochs done and reported */
        for (;;) {
            if (o.steps && step >= o.steps) break;
            long share = ex->ops->share(ex);
            if (share <= 0) break;   /* the budget is spent */
            double t0 = timer_now();
            int micro = (int)((share + b - 1) / b);
            grc.scale = 1.0f / (float)micro;
            double loss = 0;
            for (int k = 0; k < micro; k++) {
                int n = share - (long)k * b < b ? (int)(share - (long)k * b) : b;
                cursor_draw(&cur, idx, n);
                loss += train_micro(&md, &train, idx, n, overlap && k == micro - 1, &grc, &pt);
                samples_done += (long)n * N;   /* averaged over the workers: their sum */
                my_samples += n;
                ep_samples += n;
            }
            loss /= micro;
            if (micro > 1 && !overlap) model_scale_grads(&md, grc.scale);
            float lr = lr_at(&o, lr_target, step, warmup_steps);
            exchange_step(&md, ex, lr, step);
            step++;
            ep_steps++;
            pt.train_total += timer_now() - t0;
            if (step == o.timing_skip) { pt0 = pt; st0 = ex->stats; samples0 = samples_done; warm = 1; }
            /* this worker's own loss: averaging it would make the workers meet at every step */
            if (losslog) fprintf(losslog, "%ld,%.9g\n", step, loss);
            if (o.log_every && step % o.log_every == 0 && !o.quiet)
                printf0("  step %ld  loss %.4f  lr %.4g (worker 0)\n", step, loss, (double)lr);
            ep_loss += loss;
            slow_down(&o, ex->rank);
            next_epoch = cur.pos == sampler.num_samples ? cur.epoch + 1 : cur.epoch;
            next_batch = cur.pos == sampler.num_samples ? 0 : (int)(cur.pos / (size_t)b);
            if (o.checkpoint[0] && o.checkpoint_every && step % o.checkpoint_every == 0)
                save_checkpoint(ex, &o, &md, state, step, next_epoch, next_batch, &layout);
            /* this worker's epoch is over: its shard ran out during this step (the draw went on into
             * the next epoch's order) or exactly at its end */
            int done = cur.epoch + (cur.pos == sampler.num_samples);
            if (done > reported) {
                reported = done;
                double ep_time = timer_now() - ep_t0;
                prev_mean = ep_loss / (double)ep_steps;
                if (!o.quiet && ex->rank == 0) {
                    double acc = test.count ? correct_in(&md, &test, 0, test.count) / test.count : 0;
                    printf0("epoch %3d (worker 0)  step %7ld  loss %.4f  test %.2f%%  samples/s %9.0f  elapsed %.1fs\n",
                            done, step, prev_mean, 100.0 * acc, (double)ep_samples / ep_time, timer_now() - wall0);
                }
                if (o.checkpoint[0]) save_checkpoint(ex, &o, &md, state, step, next_epoch, next_batch, &layout);
                ep_loss = 0; ep_steps = 0; ep_samples = 0; ep_t0 = timer_now();
            }
        }
        free(idx);
        /* every worker has stopped before the final parameters are read (finish) */
        if (ex->ops->stop(ex) != 0) die("stopping the exchange failed");
        /* the mean over the workers of each one's loss over its last epoch (the one in progress,
         * or the one before when that has no step yet); a worker that took no step has none */
        double mine = ep_steps ? ep_loss / (double)ep_steps : prev_mean;
        double v[2] = { isnan(mine) ? 0 : mine, isnan(mine) ? 0 : 1 };
        if (ex->ops->average(ex, v, 2) != 0) die("averaging the final loss failed");
        last_loss = v[1] > 0 ? v[0] / v[1] : NAN;
        if (!o.quiet) {
            printf("worker %d: %ld steps, %ld samples\n", ex->rank, step, my_samples);
            fflush(stdout);
        }
    }
    for (int epoch = start_epoch; epoch < o.epochs && !stop && !budget; epoch++) {
        sampler_set_epoch(&sampler, epoch);
        double ep_loss = 0, ep_t0 = timer_now();
        long ep_steps = 0;
        long bi = epoch == start_epoch ? start_batch : 0;
        while (bi < batches_per_epoch) {
            next_epoch = epoch; next_batch = (int)bi;
            if (o.steps && step >= o.steps) { stop = 1; break; }
            double t0 = timer_now();
            int micro = (int)(batches_per_epoch - bi < K ? batches_per_epoch - bi : K);
            grc.scale = 1.0f / (float)micro;
            double loss = 0;
            for (int k = 0; k < micro; k++, bi++) {
                size_t off = (size_t)bi * (size_t)b;
                int n = (int)(sampler.num_samples - off < (size_t)b ? sampler.num_samples - off : (size_t)b);
                loss += train_micro(&md, &train, sampler.indices + off, n, overlap && k == micro - 1, &grc, &pt);
                samples_done += (long)n * N;
            }
            loss /= micro;
            if (micro > 1 && !overlap)
                model_scale_grads(&md, grc.scale);
            float lr = lr_at(&o, lr_target, step, warmup_steps);
            exchange_step(&md, ex, lr, step);
            step++;
            ep_steps++;
            pt.train_total += timer_now() - t0;
            if (step == o.timing_skip) { pt0 = pt; st0 = ex->stats; samples0 = samples_done; warm = 1; }   /* timings start */
            if (need_step_loss) {
                double v = loss;
                if (ex->ops->average(ex, &v, 1) != 0) die("averaging the loss failed");
                loss = v;
                if (losslog) fprintf(losslog, "%ld,%.9g\n", step, loss);
                if (o.log_every && step % o.log_every == 0 && !o.quiet)
                    printf0("  step %ld  loss %.4f  lr %.4g\n", step, loss, (double)lr);
            }
            ep_loss += loss;
            slow_down(&o, ex->rank);
            next_epoch = bi >= batches_per_epoch ? epoch + 1 : epoch;
            next_batch = bi >= batches_per_epoch ? 0 : (int)bi;
            if (o.checkpoint[0] && o.checkpoint_every && step % o.checkpoint_every == 0)
                save_checkpoint(ex, &o, &md, state, step, next_epoch, next_batch, &layout);
        }
        if (ep_steps == 0) continue;
        double v[1] = {ep_loss / (double)ep_steps};
        if (ex->ops->average(ex, v, 1) != 0) die("averaging the epoch loss failed");
        last_loss = v[0];
        double ep_time = timer_now() - ep_t0;
        test_acc = evaluate(ex, &md, &test);
        if (!o.quiet)
            printf0("epoch %3d/%d  step %7ld  loss %.4f  test %.2f%%  samples/s %9.0f  elapsed %.1fs\n", epoch + 1, o.epochs,
                    step, last_loss, 100.0 * test_acc, (double)ep_steps * (double)global_batch / ep_time,
                    timer_now() - wall0);
        /* every epoch, so a killed job loses at most one epoch */
        if (o.checkpoint[0] && !stop) save_checkpoint(ex, &o, &md, state, step, next_epoch, next_batch, &layout);
    }
    if (losslog) fclose(losslog);

    model_params_to_host(&md);
    if (ex->ops->finish(ex, m.params, nparams) != 0) die("finishing the exchange failed");
    model_params_to_device(&md);
    double wall = timer_now() - wall0;
    test_acc = evaluate(ex, &md, &test);
    if (o.checkpoint[0]) save_checkpoint(ex, &o, &md, state, step, next_epoch, next_batch, &layout);
    if (o.dump_params[0] && ex->rank == 0) write_raw(o.dump_params, m.params, nparams);

    /* worker means of the per-phase times, so the CSV describes a typical worker */
    if (!warm || ex->stats.steps <= st0.steps) {   /* --timing-skip left nothing: time every step */
        if (o.timing_skip) printf0("note: --timing-skip %ld left no step to time; the times include every step\n", o.timing_skip);
        pt0 = (phase_times_t){0}; st0 = (exchange_stats_t){0}; samples0 = 0;
    }
    long steps_run = ex->stats.steps - st0.steps ? ex->stats.steps - st0.steps : 1;
    /* under a budget the workers took different numbers of steps: each one's mean step, and the
     * sum of their rates (samples_done counts N x its own, so the mean is the sum) */
    const double per = budget ? 1.0 / (double)steps_run : 1.0;
    /* how the workers shared GPUs (local_rank % GPUs on each host): the average of a host's GPUs
     * in use over its workers, times N, is the sum over hosts (tv[7], averaged with the times) */
    const int ndev = model_device_count(o.device), here = ex->local_size > 0 ? ex->local_size : 1;
    double tv[8] = {(pt.data - pt0.data) * per, (pt.compute - pt0.compute) * per, (ex->stats.exchange_s - st0.exchange_s) * per,
                    (ex->stats.optimizer_s - st0.optimizer_s) * per, (pt.train_total - pt0.train_total) * per,
                    (double)(samples_done - samples0), (ex->stats.wait_s - st0.wait_s) * per,
                    ndev > 0 ? (double)(here < ndev ? here : ndev) / here : 0};
    if (budget) tv[5] = pt.train_total - pt0.train_total > 0 ? tv[5] / (pt.train_total - pt0.train_total) : 0;
    if (ex->ops->average(ex, tv, 8) != 0) die("averaging timings failed");
    const double gpus_used = tv[7];
    const int ranks_per_gpu = ndev > 0 ? (here + ndev - 1) / ndev : 0;
    double samples_per_s = budget ? tv[5] : tv[4] > 0 ? tv[5] / tv[4] : 0;
    if (budget) steps_run = 1;   /* the times are per step already */

    if (ex->rank == 0) {
        double ms = 1e3 / (double)steps_run;
        printf0("summary: %s, %d workers, global batch %ld: test accuracy %.2f%%, final loss %.4f, %.0f samples/s, "
                    "step %.3f ms = data %.3f + compute %.3f + exchange %.3f (wait %.3f) + optimizer %.3f (+ other), "
                    "wall %.1fs\n",
                    ex->ops->name, N, global_batch, 100.0 * test_acc, last_loss, samples_per_s, tv[4] * ms, tv[0] * ms,
                    tv[1] * ms, tv[2] * ms, tv[6] * ms, tv[3] * ms, wall);
        if (o.csv[0]) {
            metrics_row_t r;
            metrics_row_init(&r);
            for (int t = 0; topology_list[t]; t++) metrics_add_columns(&r, topology_list[t]->columns);
            metrics_set(&r, "topology", "%s", o.topology->name);
            metrics_set(&r, "workers", "%d", N);
            metrics_set(&r, "device", "%s", o.device == DEVICE_CUDA ? "cuda" : "cpu");
            metrics_set(&r, "gpus", "%.0f", gpus_used * N);
            metrics_set(&r, "ranks_per_gpu", "%d", ranks_per_gpu);
            exchange_report_t rep = { report_column, &r };   /* the topology's own columns */
            if (ex->ops->report) ex->ops->report(ex, &rep);
            metrics_set(&r, "accumulate", "%d", K);
            metrics_set(&r, "optimizer", "%s", optim_kind_name(o.optimizer));
            metrics_set(&r, "sampler", "%s", sampler_kind_name(o.sampler));
            metrics_set(&r, "layers", "%s", o.layers_spec);
            metrics_set(&r, "params", "%zu", nparams);
            metrics_set(&r, "batch_per_worker", "%d", b);
            metrics_set(&r, "global_batch", "%ld", global_batch);
            metrics_set(&r, "epochs", "%d", o.epochs);
            metrics_set(&r, "steps", "%ld", step);
            metrics_set(&r, "steps_per_epoch", "%ld", steps_per_epoch);
            metrics_set(&r, "lr", "%g", (double)lr_target);
            metrics_set(&r, "seed", "%llu", (unsigned long long)o.seed);
            metrics_set(&r, "samples_per_s", "%.1f", samples_per_s);
            metrics_set(&r, "step_ms", "%.4f", tv[4] * ms);
            metrics_set(&r, "data_ms", "%.4f", tv[0] * ms);
            metrics_set(&r, "compute_ms", "%.4f", tv[1] * ms);
            metrics_set(&r, "exchange_ms", "%.4f", tv[2] * ms);
            metrics_set(&r, "wait_ms", "%.4f", tv[6] * ms);
            metrics_set(&r, "optimizer_ms", "%.4f", tv[3] * ms);
            metrics_set(&r, "bytes_sent_per_worker", "%llu", (unsigned long long)ex->stats.bytes_sent);
            metrics_set(&r, "bytes_recv_per_worker", "%llu", (unsigned long long)ex->stats.bytes_recv);
            metrics_set(&r, "final_loss", "%.6f", last_loss);
            metrics_set(&r, "test_accuracy", "%.4f", test_acc);
            metrics_set(&r, "wall_s", "%.3f", wall);
            if (metrics_append(o.csv, &r, err, sizeof err) != 0) die_input("%s", err);
        }
    }

    /* every part is written before exchange_free; worker 0 merges after it, because PS servers
     * write theirs only once every worker said goodbye (in exchange_free) */
    const int tl_merge = o.timeline[0] && ex->rank == 0, tl_procs = ex->process_count;
    if (timeline_finish(0, err, sizeof err) != 0) die("%s", err);
    free(state);
    model_free(&md);
    mlp_free(&m);
    sampler_free(&sampler);
    dataset_free(&train);
    dataset_free(&test);
    exchange_free(ex);
    if (tl_merge && timeline_merge(o.timeline, tl_procs, TIMELINE_MERGE_TIMEOUT_S, err, sizeof err) != 0)
        die_at(NULL, 0, 1, "%s", err);
    return 0;
}
