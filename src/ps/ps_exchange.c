/* ps_exchange.c: the "ps" topology for the shared trainer, as the exchange ops (exchange.h) the
 * trainer calls: every parameter, gradient, metric and report byte travels over ZeroMQ (server.c,
 * worker.c), which is also what lets an async job outlive a dead worker (MPI collectives would
 * hang on it). MPI only started the processes (ps_startup.c) and is ended here.
 *
 * Ranks 0..S-1 are servers, S..P-1 workers (worker rank = mpi rank - S).
 * Deliberately not here: the start-up (ps_startup.c), the optimizer math (src/model/optim.c, run
 * by the servers), option parsing (the trainer fills a ps_config_t, ps_config.h). */
#include "ps_exchange_impl.h"
#include "transport.h"
#include "common/check.h"
#include "ps/placement.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <stdlib.h>
#include <string.h>

/* the parameters each server holds, "A/B/..." (the CSV's ps_split) */
static void ps_split(exchange_t *ex, char *out, size_t outlen) {
    ps_impl_t *p = ex->impl;
    const int S = p->c->servers, spare = p->c->byteps;
    out[0] = 0;
    for (int s = 0; s < S; s++) {
        size_t lo, len, u = strlen(out);
        ps_key_range(&ex->optim, p->count, S, spare, s, &lo, &len);
        snprintf(out + u, outlen - u, "%s%zu", s ? "/" : "", len);
    }
}

/* --byteps: the split, once, by worker 0 */
static void say_placement(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    const int S = p->c->servers, spare = p->c->byteps;
    if (spare < 0 || ex->rank != 0 || p->c->quiet) return;
    int N = S - spare;
    size_t lo, a, b = 0;
    ps_key_range(&ex->optim, p->count, S, spare, 0, &lo, &a);
    if (spare > 0) ps_key_range(&ex->optim, p->count, S, spare, N, &lo, &b);
    printf("ps: BytePS placement over %d worker hosts and %d of their own: servers 0..%d hold %zu parameters each "
           "(+-1), %d..%d %zu (x* = %.4f)\n", N, spare, N - 1, a, N, S - 1, b, ps_byteps_share(N, spare));
    fflush(stdout);
}

static int ps_sync_params_only(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    /* after a resume, INIT would zero the servers' optimizer state that STATE_SET just restored
     * (docs/results/lab-notes-src.md); worker 0 already holds the restored parameters and
     * pulled that generation, the others pull it here */
    if (ex->rank == 0 && p->restored) return 0;
    if (ex->rank == 0) ps_worker_init_params(p->worker, params);
    ps_worker_pull(p->worker, params);
    return 0;
}

/* --ps-mode sum: the optimizer state lives on the workers. A fresh run's is zero everywhere; on
 * a resume worker 0's STATE_SET left the checkpoint's on the servers, and every other worker
 * takes it from there once. Only worker 0 knows which it is: it says so through the workers'
 * average (a few bytes), so a fresh run moves no state at all. */
static void sum_sync_state(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    if (!ps_sum_only(p)) return;
    double resumed = ex->rank == 0 && p->restored;
    ps_worker_average(p->worker, &resumed, 1);
    if (resumed > 0 && !(ex->rank == 0 && p->restored)) ps_worker_state_get(p->worker, p->mean, p->state);
}

static int ps_sync_params(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    p->params = params;   /* --overlap's answers may land before step() names the buffer again */
    say_placement(ex);
    int rc = ps_sync_params_only(ex, params, count);
    if (rc == 0) sum_sync_state(ex);
    return rc;
}

/* --overlap: the slices lying wholly in grads[offset, count) may go (last layer first) */
static void ps_grad_ready(exchange_t *ex, float *grads, size_t offset, size_t count, float lr) {
    ps_impl_t *p = ex->impl;
    if (count == 0) return;
    if (offset + count > p->count)
        die("ps exchange: grad_ready range [%zu, %zu) beyond the %zu parameters", offset, offset + count, p->count);
    ps_worker_ready(p->worker, ps_sum_only(p) ? p->mean : p->params, grads, offset, lr);
}

static int ps_step(exchange_t *ex, float *params, float *grads, size_t count, float lr) {
    ps_impl_t *p = ex->impl;
    if (p->c->overlap && params != p->params)
        die("ps exchange: step() got other parameters than sync_params() (--overlap writes answers there)");
    double t0 = timer_now();
    int rc = ps_worker_step(p->worker, ps_sum_only(p) ? p->mean : params, grads, lr);
    double t1 = timer_now();
    ex->stats.exchange_s += t1 - t0;
    if (ps_sum_only(p) && rc == 0) {   /* the mean gradient is in: this worker's own optimizer step */
        optim_step(&ex->optim, params, p->mean, p->state, count, lr);
        ex->stats.optimizer_s += timer_now() - t1;
        timeline_event("optimizer", t1, timer_now());
    }
    ex->stats.wait_s += ps_worker_last_wait(p->worker);
    ex->stats.steps++;
    ps_worker_counters(p->worker, &ex->stats.bytes_sent, &ex->stats.bytes_recv, NULL);
    return rc;
}

/* async/ssp end on the sample budget, handed out by server 0 (wire.h); bsp keeps its epochs,
 * whose rounds make it the same, step by step, as the ring and local */
static uint64_t ps_budget(exchange_t *ex, uint64_t epochs_samples, uint64_t done, uint64_t step_samples) {
    ps_impl_t *p = ex->impl;
    if (p->c->sync == SYNC_BSP) return 0;
    uint64_t total = p->c->samples ? p->c->samples : epochs_samples;
    total = total > done ? total - done : 1;
    ps_worker_set_budget(p->worker, total, step_samples);
    return total;
}

static long ps_share(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    return ps_worker_share(p->worker);
}

static int ps_stop(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    return ps_worker_stop(p->worker);
}

static int ps_average(exchange_t *ex, double *vals, int n) {
    ps_impl_t *p = ex->impl;
    return ps_worker_average(p->worker, vals, n);
}

static int ps_serve(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    int rc = ps_server_run(p->server);
    double *rep = xcalloc(ps_server_report_len(p->server), sizeof(double));
    ps_server_report(p->server, rep);
    p->peers_lost = rep[PS_ST_NLOST] > 0;
    free(rep);
    if (ex->process_rank == 0) ps_server_print_report(p->server, stdout);
    else if (ps_server_rejected(p->server)) ps_server_print_report(p->server, stderr);
    return rc;
}

static int ps_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    ps_impl_t *p = ex->impl;
    if (ps_sum_only(p)) {   /* the workers hold the parameters and the optimizer state */
        memcpy(state, p->state, count * optim_state_per_param(&ex->optim) * sizeof(float));
        return 0;
    }
    return ps_worker_state_get(p->worker, params, state);
}

static int ps_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    ps_impl_t *p = ex->impl;
    if (ex->rank == 0) p->restored = 1;
    if (ps_sum_only(p)) memcpy(p->state, state, count * optim_state_per_param(&ex->optim) * sizeof(float));
    return ps_worker_state_set(p->worker, params, state, ex->rank == 0);
}

static int ps_finish(exchange_t *ex, float *params, size_t count) {
    ps_impl_t *p = ex->impl;
    if (p->c->sync != SYNC_BSP) ps_worker_fetch(p->worker, params); /* bsp: already final */
    int S = p->c->servers;
    size_t len = PS_ST_FIELDS + PS_HIST + ex->world_size;
    double **rep = xcalloc(S, sizeof(double *));
    for (int s = 0; s < S; s++) rep[s] = xcalloc(len, sizeof(double));
    ps_worker_done(p->worker, rep, len);
    double apply = 0, n = 0, sum = 0, mx = 0, busiest = 0;
    int lost = 0;
    for (int s = 0; s < S; s++) {
        double *r = rep[s];
        apply += r[PS_ST_APPLY_S];
        if (r[PS_ST_BYTES_IN] + r[PS_ST_BYTES_OUT] > busiest) busiest = r[PS_ST_BYTES_IN] + r[PS_ST_BYTES_OUT];
        n += r[PS_ST_STALE_N];
        sum += r[PS_ST_STALE_SUM];
        if (r[PS_ST_STALE_MAX] > mx) mx = r[PS_ST_STALE_MAX];
        if ((int)r[PS_ST_NLOST] > lost) lost = (int)r[PS_ST_NLOST];
    }
    if (!ps_sum_only(p)) ex->stats.optimizer_s = apply / S;   /* sum: the workers' own */
    p->bytes_per_server = (uint64_t)busiest;
    p->staleness_mean = n > 0 ? sum / n : -1;
    p->staleness_max = n > 0 ? (int)mx : -1;
    p->lost_workers = lost;
    p->peers_lost = lost > 0;
    ps_worker_counters(p->worker, &ex->stats.bytes_sent, &ex->stats.bytes_recv, NULL);
    if (lost && ex->rank == 0) {
        printf("ps: %d worker(s) lost during training:", lost);
        for (int w = 0; w < ex->world_size; w++) {
            int gone = 0;
            for (int s = 0; s < S; s++) gone |= rep[s][PS_ST_FIELDS + PS_HIST + w] != 0;
            if (gone) printf(" rank %d (mpi rank %d)", w, w + S);
            size_t u = strlen(p->lost_list);
            if (gone && u < sizeof p->lost_list - 32)
                snprintf(p->lost_list + u, sizeof p->lost_list - u, "%srank %d (mpi rank %d)", u ? ", " : "", w, w + S);
        }
        printf("\n");
        fflush(stdout);
    }
    for (int s = 0; s < S; s++) free(rep[s]);
    free(rep);
    return 0;
}

/* PSRING_RESULT_FILE (set by the psring launcher for async jobs, where mpirun --enable-recovery
 * exits 0 whatever happened): worker 0 records that training finished and who was lost */
static void write_result(exchange_t *ex) {
    const char *path = getenv("PSRING_RESULT_FILE");
    if (!path || !path[0] || ex->rank != 0) return;
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "psring: PSRING_RESULT_FILE %s: cannot write\n", path); return; }
    ps_impl_t *p = ex->impl;
    fprintf(f, "finished lost_workers=%d lost=%s\n", p->lost_workers, p->lost_list[0] ? p->lost_list : "none");
    fclose(f);
}

static void ps_free(exchange_t *ex) {
    ps_impl_t *p = ex->impl;
    if (p && p->worker) write_result(ex);   /* ps_free runs only when training ended normally */
    if (p) {
        if (p->worker) ps_worker_free(p->worker);
        if (p->server) ps_server_free(p->server);
        free(p->mean);
        free(p->state);
        if (p->zctx) ps_transport_context_free(p->zctx);
        /* MPI_Finalize synchronises with every rank, the dead one too: under mpirun
         * --enable-recovery it then hangs (seen 1 run in 3 in tools/faults). Nothing is
         * left to say over MPI, so a job that lost a worker just exits. */
        if (!p->peers_lost) startup_finalize(&p->startup);
        free((void *)p->c);
        free(p);
    }
    free(ex);
}

static void ps_report(exchange_t *ex, exchange_report_t *r) {
    ps_impl_t *p = ex->impl;
    exchange_report_set(r, "sync", "%s", ps_sync_name(p->c->sync));
    if (p->c->sync == SYNC_SSP) exchange_report_set(r, "staleness", "%d", p->c->staleness);
    exchange_report_set(r, "servers", "%d", p->c->servers);
    exchange_report_set(r, "transport", "%s", ps_transport_name(p->c->transport));
    exchange_report_set(r, "ps_mode", "%s", ps_sum_only(p) ? "sum" : "optimizer");
    char split[256];
    ps_split(ex, split, sizeof split);
    exchange_report_set(r, "ps_split", "%s", split);
    exchange_report_set(r, "bytes_per_server", "%llu", (unsigned long long)p->bytes_per_server);
    if (p->staleness_mean >= 0) {
        exchange_report_set(r, "staleness_mean", "%.3f", p->staleness_mean);
        exchange_report_set(r, "staleness_max", "%d", p->staleness_max);
    }
    exchange_report_set(r, "lost_workers", "%d", p->lost_workers);
    exchange_report_set(r, "fp16", "%d", p->c->fp16);
    exchange_report_set(r, "overlap", "%d", p->c->overlap);
}

/* the exchange ops (exchange.h); without --overlap no grad_ready: the trainer hands over the
 * gradient whole */
static const exchange_ops_t ps_ops = { .name = "ps", EXCHANGE_OPS_REQUIRED(ps), .report = ps_report,
                                       .budget = ps_budget, .share = ps_share, .stop = ps_stop };
static const exchange_ops_t ps_overlap_ops = { .name = "ps", EXCHANGE_OPS_REQUIRED(ps), .report = ps_report,
                                               .budget = ps_budget, .share = ps_share, .stop = ps_stop,
                                               .grad_ready = ps_grad_ready };

/* ps_exchange_impl.h: the exchange and its state, the ranks and roles from the start-up, its own
 * copy of the configuration, and the ZeroMQ context */
exchange_t *ps_exchange_new(const ps_config_t *c, size_t count, const startup_t *s) {
    int S = c->servers;
    exchange_t *ex = xcalloc(1, sizeof *ex);
    ps_impl_t *p = xcalloc(1, sizeof *p);
    ps_config_t *own = xmalloc(sizeof *own);
    *own = *c;
    ex->ops = c->overlap ? &ps_overlap_ops : &ps_ops;
    ex->impl = p;
    ex->process_rank = s->rank;
    ex->process_count = s->size;
    ex->is_worker = s->rank >= S;
    ex->rank = ex->is_worker ? s->rank - S : -1;
    ex->world_size = s->size - S;
    ex->local_rank = s->local_rank;
    ex->local_size = s->local_size;
    ex->optim = c->optim;
    p->c = own;
    p->startup = *s;
    p->staleness_mean = -1;
    p->staleness_max = -1;
    p->count = count;
    p->zctx = ps_transport_context_new();
    return ex;
}
