/* run.h: one training run of a worker as one struct, and the named steps main takes over it:
 * set up (run_shape, run_load_data, run_build_model, run_resume, run_sync, run_start), train
 * (run_epochs or run_budget, which share run_step), finish (run_finish), report (report_run),
 * free (run_free). Every function
 * reads the options through r->o and the topology only through r->ex->ops (exchange.h).
 * Not here: parsing argv (options.c), building the exchange (the topology's descriptor), layer math
 * (src/model), what a PS server process runs (it never builds a run_t). */
#ifndef PSRING_RUN_H
#define PSRING_RUN_H
#include <stdio.h>
#include <stdint.h>
#include "data/idx.h"
#include "data/sampler.h"
#include "model/mlp.h"
#include "exchange/exchange.h"
#include "train/options.h"
#include "train/checkpoint.h"
#include "model/model_ops.h"
#include "train/accel_share.h"
#include "train/snapshots.h"
#include "common/outfile.h"

/* per-phase wall time of this worker, seconds */
typedef struct { double data, compute, train_total; } phase_times_t;

/* Overlap plumbing: mlp_backward reports finished layers; with --accumulate K the range is
 * scaled by 1/K (the mean over micro-batches) before the exchange may send it. */
typedef struct { exchange_t *ex; float *grads; float scale, lr; } grad_ready_ctx_t;

typedef struct run {
    const options_t *o;
    exchange_t *ex;
    /* the shape of a step: N workers x b samples per micro-batch x K micro-batches */
    int N, b, K;
    long global_batch;
    float lr_target;              /* --lr, scaled to the global batch with --lr-scale linear */
    long batches_per_epoch, steps_per_epoch, warmup_steps;
    /* data: every worker loads the files and takes its shard */
    dataset_t train, test;
    sampler_t sampler;
    checkpoint_header_t layout;   /* what a checkpoint records of the data layout */
    /* model and optimizer state (the state is filled for checkpoints only) */
    mlp_t m;
    model_t md;
    float *state;
    size_t nparams;
    grad_ready_ctx_t grc;
    int overlap;                  /* the exchange takes finished layers (it has grad_ready) */
    /* where the run is: steps done, where it started, where the next batch comes from */
    long step;
    int start_epoch, start_batch;
    int next_epoch, next_batch;   /* what a checkpoint written now resumes at */
    /* async/ssp PS: the run ends on a sample budget the workers share, not on epochs */
    int budget;
    uint64_t budget_total;
    /* losses: the per-step trace, and the figures the summary reports */
    FILE *losslog;             /* losslog_out's file while it is open (worker 0, --loss-log) */
    outfile_t losslog_out;
    int need_step_loss;           /* a step's loss is averaged over the workers (epochs only) */
    double last_loss, test_acc;
    /* timings; pt0, st0, samples0 hold their values at the end of the --timing-skip steps */
    phase_times_t pt, pt0;
    exchange_stats_t st0;
    long samples0;
    int warm;                     /* the warm-up is over: pt0, st0, samples0 are set */
    long samples_done;            /* samples trained on, summed over the workers */
    long my_samples;              /* ... by this worker */
    double wall0, wall;
    /* an emulated GPU host (psring cluster --kinds gpu): compute on its own CPU share */
    accel_share_t accel;
    /* --snapshot-every: worker 0's copies of its parameters, tested after the run (snapshots.h) */
    snapshots_t snaps;
} run_t;

/* run.c: set-up, the shared pieces of a step, the end of training, teardown */
/* The launcher's check before mpirun, in one process (--check-options --describe-np N): the data
 * files load, and the batch fits the shards of WORKERS workers. 0, or -1 with one line in err. */
int run_check_data(const options_t *o, int workers, char *err, size_t errlen);
void run_shape(run_t *r, const options_t *o, exchange_t *ex);
void run_load_data(run_t *r);
void run_build_model(run_t *r);
void run_resume(run_t *r);
void run_sync(run_t *r);
void run_start(run_t *r);
void run_finish(run_t *r);
void run_free(run_t *r);
/* worker 0 writes --checkpoint at (r->next_epoch, r->next_batch); the others return */
void run_checkpoint(run_t *r);
double run_correct_in(run_t *r, const dataset_t *test, int lo, int hi);
double run_evaluate(run_t *r);

/* loop.c: the step and its two drivers */
typedef int (*run_draw_fn)(run_t *r, void *src, const uint32_t **idx);
double run_step(run_t *r, int micro, run_draw_fn draw, void *src);
void run_epochs(run_t *r);
void run_budget(run_t *r);

/* report.c: the summary line and the CSV row */
void report_run(const run_t *r);

#endif
