/* report.c: what a finished run reports: its timings averaged over the workers, the summary line
 * and the CSV row (metrics.h; the topology adds its own columns through report()). It reads the
 * run and prints; it trains nothing and decides nothing about the run.
 * Not here: the epoch and step lines (loop.c), the CSV's columns and quoting (metrics.c). */
#include <stdio.h>
#include "common/check.h"
#include "train/run.h"
#include "train/metrics.h"
#include "train/topology_list.h"

/* the run's figures as reported: per-phase times (tv, summed over its steps_run steps), rates */
typedef struct {
    double tv[8];    /* data, compute, exchange, optimizer, step, samples, wait, GPUs in use */
    long steps_run;  /* the steps tv covers (1 under a budget: tv is per step already) */
    double samples_per_s, gpus_used;
    int ranks_per_gpu;
} report_figures_t;

/* Worker means of the per-phase times past --timing-skip, so the CSV describes a typical worker
 * (collective: every worker calls it). */
static report_figures_t report_timings(const run_t *r) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    phase_times_t pt0 = r->pt0;
    exchange_stats_t st0 = r->st0;
    long samples0 = r->samples0;
    if (!r->warm || ex->stats.steps <= st0.steps) {   /* --timing-skip left nothing: time every step */
        if (o->timing_skip) printf0("note: --timing-skip %ld left no step to time; the times include every step\n", o->timing_skip);
        pt0 = (phase_times_t){0}; st0 = (exchange_stats_t){0}; samples0 = 0;
    }
    report_figures_t f = {0};
    f.steps_run = ex->stats.steps - st0.steps ? ex->stats.steps - st0.steps : 1;
    /* under a budget the workers took different numbers of steps: each one's mean step, and the
     * sum of their rates (samples_done counts N x its own, so the mean is the sum) */
    const double per = r->budget ? 1.0 / (double)f.steps_run : 1.0;
    /* how the workers shared GPUs (local_rank % GPUs on each host): the average of a host's GPUs
     * in use over its workers, times N, is the sum over hosts (tv[7], averaged with the times) */
    const int ndev = model_device_count(o->device), here = ex->local_size > 0 ? ex->local_size : 1;
    const phase_times_t *pt = &r->pt;
    double tv[8] = {(pt->data - pt0.data) * per, (pt->compute - pt0.compute) * per, (ex->stats.exchange_s - st0.exchange_s) * per,
                    (ex->stats.optimizer_s - st0.optimizer_s) * per, (pt->train_total - pt0.train_total) * per,
                    (double)(r->samples_done - samples0), (ex->stats.wait_s - st0.wait_s) * per,
                    ndev > 0 ? (double)(here < ndev ? here : ndev) / here : 0};
    if (r->budget) tv[5] = pt->train_total - pt0.train_total > 0 ? tv[5] / (pt->train_total - pt0.train_total) : 0;
    if (ex->ops->average(ex, tv, 8) != 0) die("averaging timings failed");
    for (int i = 0; i < 8; i++) f.tv[i] = tv[i];
    f.gpus_used = tv[7];
    f.ranks_per_gpu = ndev > 0 ? (here + ndev - 1) / ndev : 0;
    f.samples_per_s = r->budget ? tv[5] : tv[4] > 0 ? tv[5] / tv[4] : 0;
    if (r->budget) f.steps_run = 1;   /* the times are per step already */
    return f;
}

/* exchange.h's report() into the CSV row */
static void report_column(exchange_report_t *rep, const char *column, const char *value) {
    metrics_set(rep->row, column, "%s", value);
}

/* the row of --csv: the run's shape, the topology's own columns, the figures */
static void report_csv(const run_t *r, const report_figures_t *f) {
    const options_t *o = r->o;
    exchange_t *ex = r->ex;
    const double *tv = f->tv, ms = 1e3 / (double)f->steps_run;
    metrics_row_t row;
    metrics_row_init(&row);
    for (int t = 0; topology_list[t]; t++) metrics_add_columns(&row, topology_list[t]->columns);
    metrics_set(&row, "topology", "%s", o->topology->name);
    metrics_set(&row, "workers", "%d", r->N);
    metrics_set(&row, "device", "%s", o->device == DEVICE_CUDA ? "cuda" : "cpu");
    metrics_set(&row, "gpus", "%.0f", f->gpus_used * r->N);
    metrics_set(&row, "ranks_per_gpu", "%d", f->ranks_per_gpu);
    exchange_report_t rep = { report_column, &row };   /* the topology's own columns */
    if (ex->ops->report) ex->ops->report(ex, &rep);
    metrics_set(&row, "accumulate", "%d", r->K);
    metrics_set(&row, "optimizer", "%s", optim_kind_name(o->optimizer));
    metrics_set(&row, "sampler", "%s", sampler_kind_name(o->sampler));
    metrics_set(&row, "layers", "%s", o->layers_spec);
    metrics_set(&row, "params", "%zu", r->nparams);
    metrics_set(&row, "batch_per_worker", "%d", r->b);
    metrics_set(&row, "global_batch", "%ld", r->global_batch);
    metrics_set(&row, "epochs", "%d", o->epochs);
    metrics_set(&row, "steps", "%ld", r->step);
    metrics_set(&row, "steps_per_epoch", "%ld", r->steps_per_epoch);
    metrics_set(&row, "lr", "%g", (double)r->lr_target);
    metrics_set(&row, "seed", "%llu", (unsigned long long)o->seed);
    metrics_set(&row, "samples_per_s", "%.1f", f->samples_per_s);
    metrics_set(&row, "step_ms", "%.4f", tv[4] * ms);
    metrics_set(&row, "data_ms", "%.4f", tv[0] * ms);
    metrics_set(&row, "compute_ms", "%.4f", tv[1] * ms);
    metrics_set(&row, "exchange_ms", "%.4f", tv[2] * ms);
    metrics_set(&row, "wait_ms", "%.4f", tv[6] * ms);
    metrics_set(&row, "optimizer_ms", "%.4f", tv[3] * ms);
    metrics_set(&row, "bytes_sent_per_worker", "%llu", (unsigned long long)ex->stats.bytes_sent);
    metrics_set(&row, "bytes_recv_per_worker", "%llu", (unsigned long long)ex->stats.bytes_recv);
    metrics_set(&row, "final_loss", "%.6f", r->last_loss);
    metrics_set(&row, "test_accuracy", "%.4f", r->test_acc);
    metrics_set(&row, "wall_s", "%.3f", r->wall);
    char err[1024];
    if (metrics_append(o->csv, &row, err, sizeof err) != 0) die_input("%s", err);
}

void report_run(const run_t *r) {
    report_figures_t f = report_timings(r);
    if (r->ex->rank != 0) return;
    const double *tv = f.tv, ms = 1e3 / (double)f.steps_run;
    printf0("summary: %s, %d workers, global batch %ld: test accuracy %.2f%%, final loss %.4f, %.0f samples/s, "
            "step %.3f ms = data %.3f + compute %.3f + exchange %.3f (wait %.3f) + optimizer %.3f (+ other), "
            "wall %.1fs\n",
            r->ex->ops->name, r->N, r->global_batch, 100.0 * r->test_acc, r->last_loss, f.samples_per_s, tv[4] * ms,
            tv[0] * ms, tv[1] * ms, tv[2] * ms, tv[6] * ms, tv[3] * ms, r->wall);
    if (r->o->csv[0]) report_csv(r, &f);
}
