/* worker.c: see worker.h. A worker's lifecycle and every call but the step, which is
 * worker_step.c's; the wait for replies is worker_wait.c's, the heartbeats worker_liveness.c's,
 * the requests' headers and frames worker_send.c's (worker_impl.h). Each call sends its requests to every server before it waits for any answer,
 * so the shards travel in parallel. */
#include "worker_impl.h"
#include "ps/placement.h"
#include "common/timer.h"
#include <string.h>

ps_worker_t *ps_worker_create(void *zctx, const ps_worker_config_t *c, char *const *endpoints) {
    ps_worker_t *w = xcalloc(1, sizeof *w);
    w->c = *c;
    if (w->c.peer_timeout <= 0) w->c.peer_timeout = 10;
    int S = c->nservers;
    w->ctx = zctx;
    w->endpoints = xcalloc(S, sizeof(char *));
    w->lo = xcalloc(S, sizeof(size_t));
    w->len = xcalloc(S, sizeof(size_t));
    w->last_heard = xcalloc(S, sizeof(double));
    w->read_clock = xcalloc(S, sizeof(uint64_t));
    w->half = c->fp16 ? xcalloc(c->total, sizeof(uint16_t)) : NULL;
    w->nchunks = xcalloc(S, sizeof(int));
    w->ck = xcalloc(S, sizeof(size_t));
    w->got = xcalloc(S, sizeof(uint8_t *));
    /* LARS needs whole layers in one optimizer call: no slicing (the server decides the same) */
    int whole = c->chunk == 0 || (c->optim && c->optim->kind == OPTIM_LARS);
    atomic_init(&w->inflight, 0);
    atomic_init(&w->stop, 0);
    double now = timer_now();
    for (int s = 0; s < S; s++) {
        w->endpoints[s] = strdup(endpoints[s]);
        if (!w->endpoints[s]) die("out of memory");
        ps_key_range(c->optim, c->total, S, c->spare, s, &w->lo[s], &w->len[s]);
        w->ck[s] = whole || c->chunk >= w->len[s] ? (w->len[s] ? w->len[s] : 1) : c->chunk;
        w->nchunks[s] = w->len[s] ? (int)((w->len[s] + w->ck[s] - 1) / w->ck[s]) : 0;
        w->got[s] = xcalloc(w->nchunks[s] + 1, 1);
        w->last_heard[s] = now;
    }
    ps_transport_config_t tc = { .index = c->rank, .npeers = S, .auth = c->auth };
    w->tr = ps_transport_connect(zctx, &tc, endpoints);
    worker_liveness_start(w);
    worker_step_init(w);
    return w;
}

double ps_worker_last_wait(const ps_worker_t *w) {
    return w->step_wait;
}

void ps_worker_counters(const ps_worker_t *w, uint64_t *sent, uint64_t *recv, uint64_t *rejected) {
    if (sent) *sent = w->bytes_sent;
    if (recv) *recv = w->bytes_recv;
    if (rejected) *rejected = ps_transport_rejected(w->tr);
}

static void on_ack(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {}

void ps_worker_set_budget(ps_worker_t *w, uint64_t budget, uint64_t step_samples) {
    w->budget = step_samples ? budget : 0;
    w->step_samples = step_samples;
}

long ps_worker_share(const ps_worker_t *w) {
    return w->budget ? (long)w->share : -1;
}

int ps_worker_stop(ps_worker_t *w) {
    if (!w->budget) return 0;
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_HEARTBEAT, PS_DTYPE_NONE, 0);
        h.flags = PS_FLAG_STOPPED;
        worker_send_header(w, s, &h);
    }
    w->share = 0;
    return 0;
}

int ps_worker_init_params(ps_worker_t *w, const float *params) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_INIT, PS_DTYPE_F32, w->len[s]);
        h.budget = w->budget;           /* the sample budget for server 0 (wire.h) */
        h.step_samples = w->step_samples;
        worker_send_zero_copy(w, s, &h, params + w->lo[s], w->len[s] * 4);
    }
    worker_wait_replies(w, 0, w->c.nservers, PS_MSG_ACK, 0, 0, on_ack, NULL);
    worker_wait_inflight(w);
    return 0;
}

/* share: ask server 0 for a share of the sample budget with the answer */
static void pull_generation(ps_worker_t *w, float *params, int share) {
    w->asked = share && w->budget;
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_PULL, PS_DTYPE_NONE, 0);
        h.iteration = w->generation;
        if (w->asked) h.flags = PS_FLAG_SHARE;
        worker_send_header(w, s, &h);
    }
    worker_wait_replies(w, 0, w->c.nservers, PS_MSG_PARAMS, 1, 0, worker_on_params, params);
    w->asked = 0;
}

int ps_worker_pull(ps_worker_t *w, float *params) {
    w->generation++;
    pull_generation(w, params, 1);   /* before the first step: its share comes with it */
    return 0;
}

int ps_worker_fetch(ps_worker_t *w, float *params) {
    pull_generation(w, params, 0);
    return 0;
}

typedef struct { float *params, *state; } state_ctx_t;

static void on_state(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {
    state_ctx_t *sc = ctx;
    const float *p = ps_msg_data(payload);
    size_t lo = w->lo[s], len = w->len[s], total = w->c.total;
    memcpy(sc->params + lo, p, len * 4);
    for (size_t k = 0; k < w->c.state_per_param; k++)
        memcpy(sc->state + k * total + lo, p + len + k * len, len * 4);
}

int ps_worker_state_get(ps_worker_t *w, float *params, float *state) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_STATE_GET, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h);
    }
    state_ctx_t sc = { params, state };
    worker_wait_replies(w, 0, w->c.nservers, PS_MSG_STATE, 1 + w->c.state_per_param, 0, on_state, &sc);
    return 0;
}

int ps_worker_state_set(ps_worker_t *w, const float *params, const float *state, int sender) {
    if (sender) {
        size_t spp = w->c.state_per_param, total = w->c.total;
        for (int s = 0; s < w->c.nservers; s++) {
            size_t lo = w->lo[s], len = w->len[s];
            ps_header_t h = worker_header(w, s, PS_MSG_STATE_SET, PS_DTYPE_F32, len * (1 + spp));
            h.budget = w->budget;       /* as INIT: the sample budget for server 0 */
            h.step_samples = w->step_samples;
            ps_msg_t m;   /* built in the message: one copy, out of the caller's two buffers */
            ps_msg_alloc(&m, len * (1 + spp) * 4);
            float *p = ps_msg_data(&m);
            memcpy(p, params + lo, len * 4);
            for (size_t k = 0; k < spp; k++) memcpy(p + len + k * len, state + k * total + lo, len * 4);
            w->bytes_sent += ps_msg_size(&m);
            ps_transport_send(w->tr, s, &h, &m);
        }
        worker_wait_replies(w, 0, w->c.nservers, PS_MSG_ACK, 0, 0, on_ack, NULL);
    }
    /* pull the generation the STATE_SET created (servers withhold it until it exists) */
    float *tmp = xmalloc(w->c.total * sizeof(float));
    ps_worker_pull(w, tmp);
    free(tmp);
    return 0;
}

static void on_avg(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {
    memcpy(ctx, ps_msg_data(payload), h->payload_len);
}

int ps_worker_average(ps_worker_t *w, double *vals, int n) {
    if (n <= 0) return 0;
    if (n > 64) { fprintf(stderr, "psring: ps worker %d: average of %d values (max 64)\n", w->c.rank, n); return -1; }
    ps_header_t h = worker_header(w, 0, PS_MSG_AVG, PS_DTYPE_F64, (uint64_t)n);
    h.iteration = w->avg_round++;
    ps_msg_t m;
    ps_msg_alloc(&m, n * sizeof(double));
    memcpy(ps_msg_data(&m), vals, n * sizeof(double));
    ps_transport_send(w->tr, 0, &h, &m);
    worker_wait_replies(w, 0, 1, PS_MSG_AVG_REPLY, 0, (uint64_t)n, on_avg, vals);
    return 0;
}

typedef struct { double **reports; size_t len; } done_ctx_t;

static void on_stats(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {
    done_ctx_t *d = ctx;
    memcpy(d->reports[s], ps_msg_data(payload), d->len * sizeof(double));
}

int ps_worker_done(ps_worker_t *w, double **reports, size_t report_len) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_DONE, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h);
    }
    done_ctx_t d = { reports, report_len };
    worker_wait_replies(w, 0, w->c.nservers, PS_MSG_STATS, 0, report_len, on_stats, &d);
    return 0;
}

void ps_worker_free(ps_worker_t *w) {
    if (!w) return;
    worker_step_free(w);   /* --overlap's thread first: the sockets are this thread's again */
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_BYE, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h);
    }
    worker_liveness_stop(w);
    worker_wait_inflight(w);
    ps_transport_free(w->tr);
    for (int s = 0; s < w->c.nservers; s++) free(w->endpoints[s]);
    free(w->endpoints); free(w->lo); free(w->len); free(w->last_heard);
    free(w->read_clock); free(w->half);
    for (int s = 0; s < w->c.nservers; s++) free(w->got[s]);
    free(w->got); free(w->nchunks); free(w->ck);
    free(w);
}
