/* worker.c: see worker.h; the step is worker_step.c's (worker_impl.h). Every receive is validated like on the server (magic, version,
 * sender, shard, count); a bad message is counted, logged once per server and dropped. A wait
 * ends with a fatal error when an awaited server has been silent (no reply and no heartbeat)
 * for peer_timeout seconds. Deliberately not here: retries (a lost server is fatal). */
#include "worker_impl.h"
#include "ps/placement.h"
#include "auth.h"
#include "common/half.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static void fatal(ps_worker_t *w, const char *line) {
    if (w->c.on_fatal) w->c.on_fatal(line);
    fprintf(stderr, "%s\n", line);
    exit(1);
}

static void on_release(void *data, void *hint) {
    (void)data;
    ps_worker_t *w = hint;
    atomic_fetch_sub(&w->inflight, 1);
}

static void set_identity(void *sock, char kind, int rank) {
    uint8_t id[5] = { (uint8_t)kind, (uint8_t)rank, (uint8_t)(rank >> 8), (uint8_t)(rank >> 16), (uint8_t)(rank >> 24) };
    zmqCheck(zmq_setsockopt(sock, ZMQ_ROUTING_ID, id, sizeof id));
}

void worker_send_header(ps_worker_t *w, int s, const ps_header_t *h, int more) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    zmqCheck(zmq_send(w->sock[s], buf, sizeof buf, more ? ZMQ_SNDMORE : 0));
}

ps_header_t worker_header(ps_worker_t *w, int s, int type, int dtype, uint64_t count) {
    return ps_header_make(type, w->c.rank, (uint32_t)s, dtype, count);
}

/* --ps-auth: CURVE client keys; set before connect so the handshake uses them */
static void set_curve(void *sock, const ps_auth_keys_t *k) {
    if (!k) return;
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->server_public, 41));
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->client_public, 41));
    zmqCheck(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->client_secret, 41));
}

/* the heartbeat thread: its own sockets (ZeroMQ sockets are not thread-safe) */
static void *hb_main(void *arg) {
    ps_worker_t *w = arg;
    int S = w->c.nservers;
    void **hs = xcalloc(S, sizeof(void *));
    for (int s = 0; s < S; s++) {
        zmqCheckPtr(hs[s], zmq_socket(w->ctx, ZMQ_DEALER));
        int linger = 0;
        zmqCheck(zmq_setsockopt(hs[s], ZMQ_LINGER, &linger, sizeof linger));
        set_identity(hs[s], 'H', w->c.rank);
        set_curve(hs[s], w->c.auth);
        zmqCheck(zmq_connect(hs[s], w->endpoints[s]));
    }
    double ivl = w->c.peer_timeout / 5;
    if (ivl > 1) ivl = 1;
    double last = 0;
    while (!atomic_load(&w->stop)) {
        double now = timer_now();
        if (now - last >= ivl) {
            for (int s = 0; s < S; s++) {
                ps_header_t h = worker_header(w, s, PS_MSG_HEARTBEAT, PS_DTYPE_NONE, 0);
                uint8_t buf[PS_HEADER_BYTES];
                ps_wire_encode(&h, buf);
                /* DONTWAIT: never block here; a full queue means the server is not reading */
                if (zmq_send(hs[s], buf, sizeof buf, ZMQ_DONTWAIT) == -1 && zmq_errno() != EAGAIN)
                    die("ps worker %d heartbeat to server %d: %s", w->c.rank, s, zmq_strerror(zmq_errno()));
            }
            last = now;
        }
        /* sleep to the next beat, but notice stop within 50 ms: waking more often takes CPU from
         * a small host's colocated server mid-exchange (docs/results/lab-notes-src.md) */
        double due = last + ivl - timer_now();
        timer_sleep_us(due < 0 ? 0 : due > 0.05 ? 50000 : (long)(due * 1e6));
    }
    for (int s = 0; s < S; s++) zmqCheck(zmq_close(hs[s]));
    free(hs);
    return NULL;
}

ps_worker_t *ps_worker_create(void *zctx, const ps_worker_config_t *c, char *const *endpoints) {
    ps_worker_t *w = xcalloc(1, sizeof *w);
    w->c = *c;
    if (w->c.peer_timeout <= 0) w->c.peer_timeout = 10;
    int S = c->nservers;
    w->ctx = zctx;
    w->sock = xcalloc(S, sizeof(void *));
    w->endpoints = xcalloc(S, sizeof(char *));
    w->lo = xcalloc(S, sizeof(size_t));
    w->len = xcalloc(S, sizeof(size_t));
    w->last_heard = xcalloc(S, sizeof(double));
    w->read_clock = xcalloc(S, sizeof(uint64_t));
    w->logged = xcalloc(S + 1, 1);
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
        zmqCheckPtr(w->sock[s], zmq_socket(zctx, ZMQ_DEALER));
        int hwm = 0, linger = 2000;
        zmqCheck(zmq_setsockopt(w->sock[s], ZMQ_SNDHWM, &hwm, sizeof hwm));
        zmqCheck(zmq_setsockopt(w->sock[s], ZMQ_RCVHWM, &hwm, sizeof hwm));
        zmqCheck(zmq_setsockopt(w->sock[s], ZMQ_LINGER, &linger, sizeof linger));
        set_identity(w->sock[s], 'D', c->rank);
        set_curve(w->sock[s], c->auth);
        if (zmq_connect(w->sock[s], endpoints[s]) != 0)
            die("ps worker %d: cannot connect to server %d at %s: %s", c->rank, s, endpoints[s],
                zmq_strerror(zmq_errno()));
        w->last_heard[s] = now;
    }
    int rc = pthread_create(&w->hb, NULL, hb_main, w);
    if (rc) die("pthread_create: %s", strerror(rc));
    w->hb_started = 1;
    worker_step_init(w);
    return w;
}

double ps_worker_last_wait(const ps_worker_t *w) {
    return w->step_wait;
}

void ps_worker_counters(const ps_worker_t *w, uint64_t *sent, uint64_t *recv, uint64_t *rejected) {
    if (sent) *sent = w->bytes_sent;
    if (recv) *recv = w->bytes_recv;
    if (rejected) *rejected = w->rejected;
}

static void reject(ps_worker_t *w, int s, int err, const ps_header_t *h) {
    w->rejected++;
    if (w->logged[s]) return;
    w->logged[s] = 1;
    if (err == PS_WIRE_EVERSION) {   /* an older (or newer) build: say so, not "malformed" */
        char why[160];
        fprintf(stderr, "psring: ps worker %d: refused server %d: %s; further messages from it are "
                "only counted\n", w->c.rank, s, ps_wire_version_why(why, sizeof why, h));
        return;
    }
    fprintf(stderr, "psring: ps worker %d: dropped a malformed message from server %d: %s (type %u); "
            "further ones are only counted\n", w->c.rank, s, ps_wire_strerror(err), h ? h->type : 0);
}

static void check_silence(ps_worker_t *w, const wait_t *wt) {
    double now = timer_now();
    for (int s = 0; s < w->c.nservers; s++) {
        if (!wt->pending[s] || now - w->last_heard[s] <= w->c.peer_timeout) continue;
        char line[256];
        snprintf(line, sizeof line, "psring: ps worker %d (mpi rank %d): server %d (mpi rank %d) "
                 "silent for %.1f s; ending the job", w->c.rank, w->c.mpi_rank, s,
                 w->c.server_rank_base + s, now - w->last_heard[s]);
        fatal(w, line);
    }
}

/* a reply's header against what the wait expects: 0 or a wire error */
static int reply_check(ps_worker_t *w, const wait_t *wt, int s, const ps_header_t *h, int have_payload,
                       int extra, const zmq_msg_t *payload) {
    uint64_t want = wt->fixed_count ? wt->fixed_count : w->len[s] * wt->count_per_len_mult;
    if (h->sender != -1 - s) return PS_WIRE_ESENDER;
    if (h->shard != (uint32_t)s) return PS_WIRE_ESHARD;
    if (extra || have_payload != (h->dtype != PS_DTYPE_NONE)) return PS_WIRE_EFRAMES;
    if (have_payload && zmq_msg_size(payload) != h->payload_len) return PS_WIRE_ELENGTH;
    if (h->type != PS_MSG_HEARTBEAT && (h->type != wt->type || !wt->pending[s])) return PS_WIRE_ESTATE;
    if (h->type == wt->type && h->dtype != PS_DTYPE_NONE) {
        if (!wt->sliced && (h->offset != 0 || h->count != want)) return PS_WIRE_ERANGE;
        /* a slice reply: on the slice grid, inside the shard, each slice once */
        if (wt->sliced && !ps_slice_ok(w->len[s], w->ck[s], h->offset, h->count)) return PS_WIRE_ERANGE;
        if (wt->sliced && w->got[s][h->offset / w->ck[s]]) return PS_WIRE_ESTATE;
    }
    return 0;
}

/* every message waiting on server s's socket (until its pending replies are in) */
static void drain_socket(ps_worker_t *w, wait_t *wt, int s) {
    for (;;) {
        zmq_msg_t hdr, payload;
        zmqCheck(zmq_msg_init(&hdr));
        if (zmq_msg_recv(&hdr, w->sock[s], ZMQ_DONTWAIT) == -1) {
            int e = zmq_errno();
            zmq_msg_close(&hdr);
            if (e == EAGAIN || e == EINTR) break;
            die("ps worker %d: zmq_msg_recv from server %d: %s", w->c.rank, s, zmq_strerror(e));
        }
        w->last_heard[s] = timer_now();
        zmqCheck(zmq_msg_init(&payload));
        int have_payload = 0, extra = 0;
        if (zmq_msg_more(&hdr)) {
            zmqCheck(zmq_msg_recv(&payload, w->sock[s], 0));
            have_payload = 1;
            while (zmq_msg_more(&payload)) { /* drain extra frames */
                zmq_msg_t junk;
                zmqCheck(zmq_msg_init(&junk));
                zmqCheck(zmq_msg_recv(&junk, w->sock[s], 0));
                int more = zmq_msg_more(&junk);
                zmqCheck(zmq_msg_close(&junk));
                extra++;
                if (!more) break;
            }
        }
        ps_header_t h;
        int err = ps_wire_decode(zmq_msg_data(&hdr), zmq_msg_size(&hdr), &h);
        if (!err) err = reply_check(w, wt, s, &h, have_payload, extra, &payload);
        if (err) reject(w, s, err, &h);
        else if (h.type == wt->type) {
            if (have_payload) w->bytes_recv += h.payload_len;
            if (wt->sliced) w->got[s][h.offset / w->ck[s]] = 1;
            wt->pending[s]--;
            wt->remaining--;
            if (wt->fn) wt->fn(w, s, &h, &payload, wt->ctx);
        }
        zmqCheck(zmq_msg_close(&hdr));
        zmqCheck(zmq_msg_close(&payload));
        if (!wt->pending[s]) break;
    }
}

void worker_wait_begin(ps_worker_t *w, wait_t *wt, int s0, int s1) {
    wt->remaining = 0;
    for (int s = 0; s < w->c.nservers; s++) {
        wt->pending[s] = s < s0 || s >= s1 ? 0 : wt->sliced ? w->nchunks[s] : 1;
        if (wt->sliced && wt->pending[s]) memset(w->got[s], 0, (size_t)w->nchunks[s]);
        wt->remaining += wt->pending[s];
    }
}

int worker_wait_poll(ps_worker_t *w, wait_t *wt, long timeout_ms) {
    int S = w->c.nservers, n = 0, woke = 0;
    zmq_pollitem_t items[S + 1];
    int map[S + 1];
    for (int s = 0; s < S; s++)
        if (wt->pending[s]) { items[n] = (zmq_pollitem_t){ w->sock[s], 0, ZMQ_POLLIN, 0 }; map[n++] = s; }
    if (wt->wake_fd >= 0) { items[n] = (zmq_pollitem_t){ NULL, wt->wake_fd, ZMQ_POLLIN, 0 }; map[n++] = -1; }
    int rc = zmq_poll(items, n, timeout_ms);
    if (rc == -1) {
        if (zmq_errno() == EINTR) return 0;
        die("ps worker %d: zmq_poll: %s", w->c.rank, zmq_strerror(zmq_errno()));
    }
    if (rc == 0 && timeout_ms > 0) check_silence(w, wt);
    for (int i = 0; rc > 0 && i < n; i++) {
        if (!(items[i].revents & ZMQ_POLLIN)) continue;
        if (map[i] < 0) {
            uint64_t v;
            if (read(wt->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN) die("ps worker %d: eventfd: %s", w->c.rank, strerror(errno));
            woke = 1;
        } else if (wt->pending[map[i]]) {
            drain_socket(w, wt, map[i]);
        }
    }
    return woke;
}

/* Waits for one message of type from every server in [s0, s1); heartbeats and bad messages
 * are consumed on the way. Fatal when an awaited server stays silent past peer_timeout. */
static void wait_replies(ps_worker_t *w, int s0, int s1, int type, uint64_t count_per_len_mult,
                         uint64_t fixed_count, reply_fn fn, void *ctx) {
    int pending[w->c.nservers];
    wait_t wt = { type, count_per_len_mult, fixed_count, 0, fn, ctx, pending, 0, -1 };
    worker_wait_begin(w, &wt, s0, s1);
    while (wt.remaining > 0) worker_wait_poll(w, &wt, 50);
}

void worker_wait_inflight(ps_worker_t *w) {
    double t0 = timer_now();
    while (atomic_load(&w->inflight) > 0) {
        if (timer_now() - t0 > w->c.peer_timeout) die("ps worker %d: sends not completed after %.1f s", w->c.rank, w->c.peer_timeout);
        timer_sleep_us(10);
    }
}

void worker_send_zero_copy(ps_worker_t *w, int s, const ps_header_t *h, const void *buf, size_t bytes) {
    zmq_msg_t m;
    atomic_fetch_add(&w->inflight, 1);
    zmqCheck(zmq_msg_init_data(&m, (void *)buf, bytes, on_release, w));
    worker_send_header(w, s, h, 1);
    zmqCheck(zmq_msg_send(&m, w->sock[s], 0));
    w->bytes_sent += bytes;
}

void worker_on_params(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
    float *params = ctx;
    double t0 = timer_now();
    /* offset/count were checked against the shard (a slice, or all of it) by wait_replies_n */
    float *dst = params + w->lo[s] + h->offset;
    if (h->dtype == PS_DTYPE_F16) half_to_float(dst, zmq_msg_data(payload), h->count);
    else memcpy(dst, zmq_msg_data(payload), h->count * 4);
    w->read_clock[s] = h->clock;
    if (s == 0 && w->asked)   /* server 0 hands out the budget; its flags say which share (wire.h) */
        w->share = h->flags & PS_FLAG_STOP ? 0 : h->flags & PS_FLAG_TAIL ? w->budget % w->step_samples : w->step_samples;
    /* the push's wait at that server (wire.h); the slowest server's counts */
    if (isfinite(h->wait_s) && h->wait_s > w->step_wait) w->step_wait = h->wait_s;
    timeline_event("pull", t0, timer_now());
}

static void on_ack(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {}

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
        worker_send_header(w, s, &h, 0);
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
    wait_replies(w, 0, w->c.nservers, PS_MSG_ACK, 0, 0, on_ack, NULL);
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
        worker_send_header(w, s, &h, 0);
    }
    wait_replies(w, 0, w->c.nservers, PS_MSG_PARAMS, 1, 0, worker_on_params, params);
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

static void on_state(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
    state_ctx_t *sc = ctx;
    const float *p = zmq_msg_data(payload);
    size_t lo = w->lo[s], len = w->len[s], total = w->c.total;
    memcpy(sc->params + lo, p, len * 4);
    for (size_t k = 0; k < w->c.state_per_param; k++)
        memcpy(sc->state + k * total + lo, p + len + k * len, len * 4);
}

int ps_worker_state_get(ps_worker_t *w, float *params, float *state) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_STATE_GET, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h, 0);
    }
    state_ctx_t sc = { params, state };
    wait_replies(w, 0, w->c.nservers, PS_MSG_STATE, 1 + w->c.state_per_param, 0, on_state, &sc);
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
            zmq_msg_t m;
            zmqCheck(zmq_msg_init_size(&m, len * (1 + spp) * 4));
            float *p = zmq_msg_data(&m);
            memcpy(p, params + lo, len * 4);
            for (size_t k = 0; k < spp; k++) memcpy(p + len + k * len, state + k * total + lo, len * 4);
            worker_send_header(w, s, &h, 1);
            w->bytes_sent += zmq_msg_size(&m);
            zmqCheck(zmq_msg_send(&m, w->sock[s], 0));
        }
        wait_replies(w, 0, w->c.nservers, PS_MSG_ACK, 0, 0, on_ack, NULL);
    }
    /* pull the generation the STATE_SET created (servers withhold it until it exists) */
    float *tmp = xmalloc(w->c.total * sizeof(float));
    ps_worker_pull(w, tmp);
    free(tmp);
    return 0;
}

static void on_avg(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
    memcpy(ctx, zmq_msg_data(payload), h->payload_len);
}

int ps_worker_average(ps_worker_t *w, double *vals, int n) {
    if (n <= 0) return 0;
    if (n > 64) { fprintf(stderr, "psring: ps worker %d: average of %d values (max 64)\n", w->c.rank, n); return -1; }
    ps_header_t h = worker_header(w, 0, PS_MSG_AVG, PS_DTYPE_F64, (uint64_t)n);
    h.iteration = w->avg_round++;
    zmq_msg_t m;
    zmqCheck(zmq_msg_init_size(&m, n * sizeof(double)));
    memcpy(zmq_msg_data(&m), vals, n * sizeof(double));
    worker_send_header(w, 0, &h, 1);
    zmqCheck(zmq_msg_send(&m, w->sock[0], 0));
    wait_replies(w, 0, 1, PS_MSG_AVG_REPLY, 0, (uint64_t)n, on_avg, vals);
    return 0;
}

typedef struct { double **reports; size_t len; } done_ctx_t;

static void on_stats(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
    done_ctx_t *d = ctx;
    memcpy(d->reports[s], zmq_msg_data(payload), d->len * sizeof(double));
}

int ps_worker_done(ps_worker_t *w, double **reports, size_t report_len) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_DONE, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h, 0);
    }
    done_ctx_t d = { reports, report_len };
    wait_replies(w, 0, w->c.nservers, PS_MSG_STATS, 0, report_len, on_stats, &d);
    return 0;
}

void ps_worker_free(ps_worker_t *w) {
    if (!w) return;
    worker_step_free(w);   /* --overlap's thread first: the sockets are this thread's again */
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_BYE, PS_DTYPE_NONE, 0);
        worker_send_header(w, s, &h, 0);
    }
    atomic_store(&w->stop, 1);
    if (w->hb_started) pthread_join(w->hb, NULL);
    worker_wait_inflight(w);
    for (int s = 0; s < w->c.nservers; s++) {
        zmqCheck(zmq_close(w->sock[s]));
        free(w->endpoints[s]);
    }
    free(w->sock); free(w->endpoints); free(w->lo); free(w->len); free(w->last_heard);
    free(w->read_clock); free(w->logged); free(w->half);
    for (int s = 0; s < w->c.nservers; s++) free(w->got[s]);
    free(w->got); free(w->nchunks); free(w->ck);
    free(w);
}
