/* run.c: a worker's run from its shape to its teardown: the step's shape, the data and its
 * shard, the model, a resume from a checkpoint, the first parameter sync, the end of training,
 * checkpoints and test accuracy. Each set-up function does one thing in the order main calls
 * them (exchange.h fixes part of it: budget before state_set, state_set before sync_params).
 * Not here: the step loop (loop.c), the summary and the CSV (report.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include "common/check.h"
#include "common/timer.h"
#include "model/optim.h"
#include "train/run.h"

/* the exchange's gradient memory (exchange.h grads_alloc), as the model's allocator */
static float *grads_alloc_cb(void *ctx, size_t n) { exchange_t *ex = ctx; return ex->ops->grads_alloc(ex, n); }
static void grads_free_cb(void *ctx, float *p) { exchange_t *ex = ctx; ex->ops->grads_free(ex, p); }

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* --batch over N workers: each worker's batch, or -1 with err (strong scaling splits it) */
static int worker_batch(const options_t *o, int N, char *err, size_t errlen) {
    if (o->scaling == SCALING_STRONG && o->batch % N != 0)
        FAIL("--scaling strong: --batch %d is not divisible by %d workers", o->batch, N);
    return o->scaling == SCALING_STRONG ? o->batch / N : o->batch;
}

/* The data against the step's shape, one copy for the ranks (run_load_data) and for the launcher's
 * one check before mpirun (run_check_data): the images fit --layers, and each worker's shard holds
 * a sample, and a whole batch (a batch beyond it would repeat none of its samples yet report the
 * nominal batch, and overstate samples/s by the ratio). 0, or -1 with err. */
static int check_shard(const options_t *o, const dataset_t *train, const sampler_t *s, int N, int b, char *err,
                       size_t errlen) {
    if (train->dim != o->sizes[0])
        FAIL("--data %s: images have %d pixels but --layers starts with %d", o->data_dir, train->dim, o->sizes[0]);
    if (s->num_samples == 0)
        FAIL("--train-limit %d leaves no sample for each of %d workers with --drop-last", train->count, N);
    if ((size_t)b > s->num_samples)
        FAIL("--batch %d: a worker's batch of %d is larger than its shard of %zu samples (%d training samples over %d "
             "worker%s); give at most %zu%s", o->batch, b, s->num_samples, train->count, N, N == 1 ? "" : "s",
             o->scaling == SCALING_STRONG ? s->num_samples * (size_t)N : s->num_samples,
             o->scaling == SCALING_STRONG ? " with --scaling strong" : "");
    return 0;
}

/* the sampler of rank 0 of N over COUNT samples, as every worker builds its own */
static int shard_init(sampler_t *s, const options_t *o, int count, int N, int rank) {
    if (sampler_init(s, (size_t)count, N, rank, o->seed, 1, o->drop_last) != 0) return -1;
    sampler_set_kind(s, o->sampler);
    return 0;
}

/* --resume's checkpoint into params and state, refused when the model, the optimizer, the seed or
 * the data LAYOUT differ (the same place in another layout is other data): one copy for the ranks
 * (run_resume) and the launcher's check before mpirun (run_check_data). 0, or -1 with err. */
static int resume_load(const options_t *o, const optim_config_t *optim, const checkpoint_header_t *layout,
                       float *params, float *state, checkpoint_header_t *got, char *err, size_t errlen) {
    checkpoint_header_t want = {0};
    want.nsizes = o->nsizes;
    memcpy(want.sizes, o->sizes, sizeof(int) * (size_t)o->nsizes);
    want.nparams = mlp_count_params(o->sizes, o->nsizes);
    want.state_per_param = (uint32_t)optim_state_per_param(optim);
    want.optimizer = (uint32_t)optim->kind;
    if (checkpoint_load(o->resume, &want, got, params, state, err, errlen) != 0) return -1;
    if (got->seed != o->seed)
        FAIL("--resume %.900s: written with --seed %llu, this run has --seed %llu", o->resume,
             (unsigned long long)got->seed, (unsigned long long)o->seed);
    return checkpoint_layout_mismatch(o->resume, got, layout, err, errlen);
}

int run_check_data(const options_t *o, int workers, char *err, size_t errlen) {
    dataset_t train, test;
    int b = worker_batch(o, workers, err, errlen);
    if (b < 0) return -1;
    if (dataset_load(&train, o->data_dir, "train", o->train_limit, err, errlen) != 0) return -1;
    int rc = dataset_load(&test, o->data_dir, "t10k", o->test_limit, err, errlen);
    dataset_free(&test);
    sampler_t s;
    if (rc == 0 && shard_init(&s, o, train.count, workers, 0) != 0) {
        snprintf(err, errlen, "cannot shard %d samples over %d workers", train.count, workers);
        rc = -1;
    } else if (rc == 0) {
        rc = check_shard(o, &train, &s, workers, b, err, errlen);
        sampler_free(&s);
    }
    const checkpoint_header_t layout = { .sampler = (uint32_t)o->sampler, .workers = (uint32_t)workers,
                                         .batch = (uint32_t)b, .drop_last = (uint32_t)o->drop_last,
                                         .train_count = (uint64_t)train.count };
    dataset_free(&train);
    if (rc == 0 && o->resume[0]) {   /* the checkpoint a resume starts from, read once here */
        const optim_config_t optim = options_optim_config(o);
        const size_t n = mlp_count_params(o->sizes, o->nsizes);
        float *params = xcalloc(n, sizeof(float)), *state = xcalloc(n * optim_state_per_param(&optim), sizeof(float));
        checkpoint_header_t got;
        rc = resume_load(o, &optim, &layout, params, state, &got, err, errlen);
        free(params);
        free(state);
    }
    return rc;
}

/* the step's shape: per-worker micro-batch, micro-batches per step, global batch, target lr */
void run_shape(run_t *r, const options_t *o, exchange_t *ex) {
    memset(r, 0, sizeof *r);
    r->o = o;
    r->ex = ex;
    r->N = ex->world_size;
    char err[256];
    r->b = worker_batch(o, r->N, err, sizeof err);
    if (r->b < 0) die_input("%s", err);
    r->K = o->accumulate;
    r->global_batch = (long)r->b * r->N * r->K;
    r->lr_target = o->lr_scale_linear ? o->lr * (float)r->global_batch / (float)(o->batch * r->K) : o->lr;
    r->nparams = mlp_count_params(o->sizes, o->nsizes);
    r->last_loss = NAN;
}

/* every worker loads the files (a shared path, as with Horovod) and takes its shard */
void run_load_data(run_t *r) {
    const options_t *o = r->o;
    char err[1024];
    if (dataset_load(&r->train, o->data_dir, "train", o->train_limit, err, sizeof err) != 0) die_input("%s", err);
    if (dataset_load(&r->test, o->data_dir, "t10k", o->test_limit, err, sizeof err) != 0) die_input("%s", err);
    if (shard_init(&r->sampler, o, r->train.count, r->N, r->ex->rank) != 0)
        die_input("cannot shard %d samples over %d workers", r->train.count, r->N);
    if (check_shard(o, &r->train, &r->sampler, r->N, r->b, err, sizeof err) != 0) die_input("%s", err);
    r->layout.sampler = (uint32_t)o->sampler;
    r->layout.workers = (uint32_t)r->N;
    r->layout.batch = (uint32_t)r->b;
    r->layout.drop_last = (uint32_t)o->drop_last;
    r->layout.train_count = (uint64_t)r->train.count;
    r->batches_per_epoch = ((long)r->sampler.num_samples + r->b - 1) / r->b;
    r->steps_per_epoch = (r->batches_per_epoch + r->K - 1) / r->K;
    r->warmup_steps = (long)(o->warmup_epochs * (float)r->steps_per_epoch);
}

void run_build_model(run_t *r) {
    exchange_t *ex = r->ex;
    /* gradients where the exchange moves them fastest (ring on one host: a shared window) */
    mlp_allocator_t ga = { grads_alloc_cb, grads_free_cb, ex };
    mlp_init_alloc(&r->m, r->o->sizes, r->o->nsizes, r->b, r->o->seed, ex->ops->grads_alloc ? &ga : NULL);
    r->state = xcalloc(r->nparams * optim_state_per_param(&ex->optim), sizeof(float));
    model_init(&r->md, &r->m, r->o->device, ex->local_rank);
}

/* --resume: parameters, optimizer state and the place in the data */
void run_resume(run_t *r) {
    const options_t *o = r->o;
    if (!o->resume[0]) return;
    char err[1024];
    checkpoint_header_t got;
    if (resume_load(o, &r->ex->optim, &r->layout, r->m.params, r->state, &got, err, sizeof err) != 0) die_input("%s", err);
    r->step = got.step;
    r->start_epoch = got.epoch;
    r->start_batch = got.batch_in_epoch;
}

/* an exchange whose workers do not meet at an epoch's end (exchange.h budget) ends the run on a
 * sample budget they share (its own, or what --epochs would process; a resumed run what is left of
 * it by worker 0's place), so a fast worker takes more steps than a slow one */
static void run_plan_budget(run_t *r) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    const uint64_t N = (uint64_t)r->N, b = (uint64_t)r->b;
    const uint64_t epoch_samples = (uint64_t)r->sampler.num_samples * N;
    const uint64_t resumed = (uint64_t)r->start_epoch * epoch_samples + (uint64_t)r->start_batch * b * N;
    r->budget_total = ex->ops->budget ? ex->ops->budget(ex, (uint64_t)o->epochs * epoch_samples, resumed, b * (uint64_t)r->K) : 0;
    r->budget = r->budget_total > 0;
}

/* every worker starts from worker 0's parameters (a resumed run's, restored on worker 0 first) */
void run_sync(run_t *r) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    run_plan_budget(r);
    if (o->resume[0]) {
        if (ex->rank == 0 && ex->ops->state_set(ex, r->m.params, r->state, r->nparams) != 0)
            die("restoring optimizer state failed");
        if (!o->quiet)
            printf0("resumed from %s at step %ld (epoch %d, batch %d)\n", o->resume, r->step, r->start_epoch + 1,
                    r->start_batch);
    }
    if (ex->ops->sync_params(ex, r->m.params, r->nparams) != 0) die("initial parameter sync failed");
    model_params_to_device(&r->md);
}

/* --loss-log: written whole at the end (outfile.h), so a run that fails or is killed leaves the
 * previous trace; a resumed run goes on with the trace it left, copied in first */
static void open_loss_log(run_t *r) {
    const char *path = r->o->loss_log;
    char err[4400];
    if (outfile_open(&r->losslog_out, path, err, sizeof err) != 0) die_input("--loss-log %s", err);
    r->losslog = r->losslog_out.f;
    FILE *prev = r->step > 0 ? fopen(path, "r") : NULL;
    if (!prev) return;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, prev)) > 0) fwrite(buf, 1, n, r->losslog);
    if (ferror(prev)) die_at(NULL, 0, 1, "--loss-log %s: cannot read the trace to go on with: %s", path, strerror(errno));
    fclose(prev);
}

/* the run's opening lines, the loss trace, the clocks; the first step may follow */
void run_start(run_t *r) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    if (!o->quiet)
        printf0("psring-train: topology %s, %d worker%s x batch %d%s = global batch %ld, layers %s (%zu params), "
                "lr %.4g%s, %ld steps/epoch\n",
                ex->ops->name, r->N, r->N == 1 ? "" : "s", r->b, r->K > 1 ? " x accumulate" : "", r->global_batch,
                o->layers_spec, r->nparams, (double)r->lr_target, r->warmup_steps ? " after warm-up" : "",
                r->steps_per_epoch);
    if (r->budget && !o->quiet)
        printf0("sample budget: %llu samples shared by the workers (each goes on through its own epochs until it is spent)\n",
                (unsigned long long)r->budget_total);
    if (o->loss_log[0] && ex->rank == 0) open_loss_log(r);
    r->need_step_loss = o->loss_log[0] || o->log_every;
    r->grc = (grad_ready_ctx_t){ ex, r->m.grads, 1.0f / (float)r->K, 0.0f };   /* lr: each step's */
    r->overlap = ex->ops->grad_ready != NULL;   /* the exchange overlaps: it takes layers as they finish */
    r->warm = o->timing_skip == 0;
    r->wall0 = timer_now();
    snapshots_init(&r->snaps, o->snapshot_every, r->nparams);
    snapshots_take(&r->snaps, r);   /* the first point: the parameters before any step */
    r->next_epoch = r->start_epoch;   /* where a checkpoint written before any step resumes */
    r->next_batch = r->start_batch;
    model_zero_grad(&r->md);
    /* last: the threads the exchange started in set-up (ZeroMQ I/O, heartbeats, the ring's
     * communication thread) stay on an emulated GPU host's host share; only this one moves */
    accel_share_init(&r->accel);
}

/* The checkpoint holds the place (r->next_epoch, r->next_batch) and the run's data layout
 * (sampler, workers, per-worker batch, drop_last, train_count), recorded so that a resume under
 * another layout can be refused (checkpoint_layout_mismatch). */
void run_checkpoint(run_t *r) {
    exchange_t *ex = r->ex;
    /* state_get is called on worker 0 only (a PS pull) */
    if (ex->rank != 0) return;
    const mlp_t *m = &r->m;
    model_params_to_host(&r->md);
    if (ex->ops->state_get(ex, m->params, r->state, m->nparams) != 0) die("reading optimizer state for the checkpoint failed");
    checkpoint_header_t h = r->layout;
    h.nsizes = m->nsizes;
    memcpy(h.sizes, m->sizes, sizeof(int) * (size_t)m->nsizes);
    h.nparams = m->nparams;
    h.state_per_param = (uint32_t)optim_state_per_param(&ex->optim);
    h.step = r->step;
    h.epoch = r->next_epoch;
    h.batch_in_epoch = r->next_batch;
    h.seed = r->o->seed;
    h.optimizer = (uint32_t)ex->optim.kind;
    char err[1024];
    if (checkpoint_save(r->o->checkpoint, &h, m->params, r->state, err, sizeof err) != 0) die_at(NULL, 0, 1, "%s", err);
}

/* the test images [lo, hi) the model classifies right */
double run_correct_in(run_t *r, const dataset_t *test, int lo, int hi) {
    double correct = 0;
    uint32_t idx[4096];
    for (int i = lo; i < hi;) {
        int n = hi - i < r->m.max_batch ? hi - i : r->m.max_batch;
        if (n > 4096) n = 4096;
        for (int j = 0; j < n; j++) idx[j] = (uint32_t)(i + j);
        model_gather(&r->md, test, idx, n);
        correct += model_correct(&r->md, n);
        i += n;
    }
    return correct;
}

/* Test accuracy: each worker evaluates a contiguous slice of the test set, the exchange sums
 * the counts, so evaluation costs the same on every worker and nobody waits on worker 0. */
double run_evaluate(run_t *r) {
    exchange_t *ex = r->ex;
    int lo = (int)((long)r->test.count * ex->rank / ex->world_size);
    int hi = (int)((long)r->test.count * (ex->rank + 1) / ex->world_size);
    double v[2] = {run_correct_in(r, &r->test, lo, hi), (double)(hi - lo)};
    if (ex->ops->average(ex, v, 2) != 0) die("averaging test accuracy across workers failed");
    return v[1] > 0 ? v[0] / v[1] : 0.0;
}

/* --dump-params: whole or not at all (outfile.h) */
static void write_raw(const char *path, const float *p, size_t n) {
    outfile_t out;
    char err[4400];
    if (outfile_open(&out, path, err, sizeof err) != 0) die_input("--dump-params %s", err);
    if (fwrite(p, sizeof(float), n, out.f) != n) {
        outfile_abandon(&out);
        die_at(NULL, 0, 1, "--dump-params %s: write failed: %s (any previous file is left as it was)", path, strerror(errno));
    }
    if (outfile_commit(&out, err, sizeof err) != 0) die_at(NULL, 0, 1, "--dump-params %s", err);
}

/* the end of training: the authoritative final parameters (a PS pulls them), their accuracy,
 * the last checkpoint and --dump-params */
void run_finish(run_t *r) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    char err[4400];
    if (r->losslog && outfile_commit(&r->losslog_out, err, sizeof err) != 0) die_at(NULL, 0, 1, "--loss-log %s", err);
    r->losslog = NULL;
    model_params_to_host(&r->md);
    if (ex->ops->finish(ex, r->m.params, r->nparams) != 0) die("finishing the exchange failed");
    model_params_to_device(&r->md);
    r->wall = timer_now() - r->wall0 - r->snaps.spent;   /* the copies (snapshots.h) off the clock */
    r->test_acc = run_evaluate(r);
    if (o->checkpoint[0]) run_checkpoint(r);
    if (o->dump_params[0] && ex->rank == 0) write_raw(o->dump_params, r->m.params, r->nparams);
    if (o->snapshots[0] && ex->rank == 0) snapshots_write(&r->snaps, o->snapshots);
}

/* everything the set-up made; the exchange is the caller's (it outlives the run) */
void run_free(run_t *r) {
    snapshots_free(&r->snaps);
    accel_share_free(&r->accel);
    free(r->state);
    model_free(&r->md);
    mlp_free(&r->m);
    sampler_free(&r->sampler);
    dataset_free(&r->train);
    dataset_free(&r->test);
}
