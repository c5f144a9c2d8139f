/* worker.c: see worker.h. Every receive is validated like on the server (magic, version,
 * sender, shard, count); a bad message is counted, logged once per server and dropped. A wait
 * ends with a fatal error when an awaited server has been silent (no reply and no heartbeat)
 * for peer_timeout seconds. Deliberately not here: retries (a lost server is fatal). */
#include "worker.h"
#include "wire.h"
#include "ps/placement.h"
#include "auth.h"
#include "zcheck.h"
#include "common/half.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

struct ps_worker {
    ps_worker_config_t c;
    void *ctx;
    void **sock;
    char **endpoints;
    size_t *lo, *len;
    size_t *ck;                /* bsp slice of server s's shard in elements (the shard when unchunked) */
    int *nchunks;              /* slices of server s's shard */
    uint8_t **got;             /* per server: slice k of this step's reply arrived */
    double *last_heard;
    uint64_t *read_clock;      /* global clock of the parameters last received from server s */
    uint8_t *logged;
    uint64_t clock, generation, avg_round;
    double step_wait;          /* bsp: the longest wait any server reported for the last push */
    uint64_t budget, step_samples; /* the sample budget (wire.h), 0 = none */
    uint64_t share;            /* samples of the share server 0 gave for the next step */
    int asked;                 /* the request now answered asked for a share */
    uint16_t *half;
    atomic_int inflight;
    atomic_int stop;
    pthread_t hb;
    int hb_started;
    uint64_t bytes_sent, bytes_recv, rejected;
};

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

static void send_header(ps_worker_t *w, int s, const ps_header_t *h, int more) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    zmqCheck(zmq_send(w->sock[s], buf, sizeof buf, more ? ZMQ_SNDMORE : 0));
}

static ps_header_t worker_header(ps_worker_t *w, int s, int type, int dtype, uint64_t count) {
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

typedef void (*reply_fn)(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx);

/* Waits for one message of type from every server in [s0, s1); heartbeats and bad messages
 * are consumed on the way. Fatal when an awaited server stays silent past peer_timeout. */
static void wait_replies_n(ps_worker_t *w, int s0, int s1, int type, uint64_t count_per_len_mult,
                           uint64_t fixed_count, int sliced, reply_fn fn, void *ctx) {
    int S = w->c.nservers;
    int pending[S];
    memset(pending, 0, sizeof pending);
    int remaining = 0;
    for (int s = s0; s < s1; s++) {
        pending[s] = sliced ? w->nchunks[s] : 1;
        if (sliced) memset(w->got[s], 0, (size_t)w->nchunks[s]);
        remaining += pending[s];
    }
    zmq_pollitem_t items[S];
    int map[S];
    while (remaining > 0) {
        int n = 0;
        for (int s = 0; s < S; s++)
            if (pending[s]) { items[n] = (zmq_pollitem_t){ w->sock[s], 0, ZMQ_POLLIN, 0 }; map[n++] = s; }
        int rc = zmq_poll(items, n, 50);
        if (rc == -1) {
            if (zmq_errno() == EINTR) continue;
            die("ps worker %d: zmq_poll: %s", w->c.rank, zmq_strerror(zmq_errno()));
        }
        if (rc == 0) {
            double now = timer_now();
            for (int i = 0; i < n; i++) {
                int s = map[i];
                if (now - w->last_heard[s] > w->c.peer_timeout) {
                    char line[256];
                    snprintf(line, sizeof line, "psring: ps worker %d (mpi rank %d): server %d (mpi rank %d) "
                             "silent for %.1f s; ending the job", w->c.rank, w->c.mpi_rank, s,
                             w->c.server_rank_base + s, now - w->last_heard[s]);
                    fatal(w, line);
                }
            }
            continue;
        }
        for (int i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            int s = map[i];
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
                uint64_t want = fixed_count ? fixed_count : w->len[s] * count_per_len_mult;
                if (!err && (h.sender != -1 - s)) err = PS_WIRE_ESENDER;
                if (!err && h.shard != (uint32_t)s) err = PS_WIRE_ESHARD;
                if (!err && (extra || have_payload != (h.dtype != PS_DTYPE_NONE))) err = PS_WIRE_EFRAMES;
                if (!err && have_payload && zmq_msg_size(&payload) != h.payload_len) err = PS_WIRE_ELENGTH;
                if (!err && h.type != PS_MSG_HEARTBEAT && (h.type != type || !pending[s])) err = PS_WIRE_ESTATE;
                if (!err && h.type == type && h.dtype != PS_DTYPE_NONE) {
                    if (!sliced && (h.offset != 0 || h.count != want)) err = PS_WIRE_ERANGE;
                    /* a slice reply: on the slice grid, inside the shard, each slice once */
                    if (sliced && !ps_slice_ok(w->len[s], w->ck[s], h.offset, h.count)) err = PS_WIRE_ERANGE;
                    else if (sliced && w->got[s][h.offset / w->ck[s]]) err = PS_WIRE_ESTATE;
                }
                if (err) reject(w, s, err, &h);
                else if (h.type == type) {
                    if (have_payload) w->bytes_recv += h.payload_len;
                    if (sliced) w->got[s][h.offset / w->ck[s]] = 1;
                    if (fn) fn(w, s, &h, &payload, ctx);
                    pending[s]--;
                    remaining--;
                }
                zmqCheck(zmq_msg_close(&hdr));
                zmqCheck(zmq_msg_close(&payload));
                if (!pending[s]) break;
            }
        }
    }
}

static void wait_replies(ps_worker_t *w, int s0, int s1, int type, uint64_t count_per_len_mult,
                         uint64_t fixed_count, reply_fn fn, void *ctx) {
    wait_replies_n(w, s0, s1, type, count_per_len_mult, fixed_count, 0, fn, ctx);
}

static void wait_inflight(ps_worker_t *w) {
    double t0 = timer_now();
    while (atomic_load(&w->inflight) > 0) {
        if (timer_now() - t0 > w->c.peer_timeout) die("ps worker %d: sends not completed after %.1f s", w->c.rank, w->c.peer_timeout);
        timer_sleep_us(10);
    }
}

/* header + zero-copy payload (buf must stay unchanged until wait_inflight) */
static void send_zero_copy(ps_worker_t *w, int s, const ps_header_t *h, const void *buf, size_t bytes) {
    zmq_msg_t m;
    atomic_fetch_add(&w->inflight, 1);
    zmqCheck(zmq_msg_init_data(&m, (void *)buf, bytes, on_release, w));
    send_header(w, s, h, 1);
    zmqCheck(zmq_msg_send(&m, w->sock[s], 0));
    w->bytes_sent += bytes;
}

static void on_params(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
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
        send_header(w, s, &h, 0);
    }
    w->share = 0;
    return 0;
}

int ps_worker_init_params(ps_worker_t *w, const float *params) {
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_INIT, PS_DTYPE_F32, w->len[s]);
        h.budget = w->budget;           /* the sample budget for server 0 (wire.h) */
        h.step_samples = w->step_samples;
        send_zero_copy(w, s, &h, params + w->lo[s], w->len[s] * 4);
    }
    wait_replies(w, 0, w->c.nservers, PS_MSG_ACK, 0, 0, on_ack, NULL);
    wait_inflight(w);
    return 0;
}

/* share: ask server 0 for a share of the sample budget with the answer */
static void pull_generation(ps_worker_t *w, float *params, int share) {
    w->asked = share && w->budget;
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_PULL, PS_DTYPE_NONE, 0);
        h.iteration = w->generation;
        if (w->asked) h.flags = PS_FLAG_SHARE;
        send_header(w, s, &h, 0);
    }
    wait_replies(w, 0, w->c.nservers, PS_MSG_PARAMS, 1, 0, on_params, params);
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

/* slice k of server s's shard of grads, as one push */
static void push_slice(ps_worker_t *w, int s, int k, const float *grads, float lr) {
    size_t off = (size_t)k * w->ck[s], n = ps_slice_len(w->len[s], w->ck[s], off);
    int half = w->c.fp16;
    ps_header_t h = worker_header(w, s, PS_MSG_PUSH, half ? PS_DTYPE_F16 : PS_DTYPE_F32, n);
    h.offset = off;
    h.iteration = w->clock;
    h.clock = w->read_clock[s];
    h.lr = lr;
    if (w->budget) h.flags = PS_FLAG_SHARE;   /* this push spends a share and asks for the next */
    size_t at = w->lo[s] + off;
    if (half) {
        half_from_float(w->half + at, grads + at, n);
        send_zero_copy(w, s, &h, w->half + at, n * 2);
    } else {
        send_zero_copy(w, s, &h, grads + at, n * 4);
    }
}

typedef struct { float *params; const float *grads; float lr; int *next; } step_ctx_t;

/* an answer to slice k frees one credit on its server: the next slice of that shard goes out */
static void on_step_params(ps_worker_t *w, int s, const ps_header_t *h, zmq_msg_t *payload, void *ctx) {
    step_ctx_t *sc = ctx;
    on_params(w, s, h, payload, sc->params);
    if (sc->next[s] < w->nchunks[s]) push_slice(w, s, sc->next[s]++, sc->grads, sc->lr);
}

/* Credit (--ps-credit C, BytePS' scheduling credit): at most C slices of a shard are on their
 * way before the server's answers come back; each answer lets the next slice go.
 *
 *   worker 0  |s0|s1|.......|s2|.......|s3|      C = 2: s2 leaves when s0's answer is back,
 *   worker 1  |s0|s1|.......|s2|.......|s3|      so every worker's slice k reaches the server
 *   server    in: s0 s0 s1 s1  s2 s2 ...         at about the same time, and the server's link
 *             out:      a0 a0  a1 a1 ...         carries answers out while pushes come in.
 *
 * Without it (C = 0) every slice is posted at once; TCP streams sharing the server's link
 * (one FIFO queue) then progress unevenly, a slice is complete only when the slowest stream
 * delivered it, and the answers leave after most of the pushes are in, not beside them
 * (docs/results/lab-notes-src.md). */
int ps_worker_step(ps_worker_t *w, float *params, const float *grads, float lr) {
    double t_push = timer_now();
    int S = w->c.nservers, next[S], kmax = 0;
    for (int s = 0; w->c.bsp && s < S; s++) {   /* ready: a header alone, ahead of the slices (the servers' wait) */
        ps_header_t h = worker_header(w, s, PS_MSG_HEARTBEAT, PS_DTYPE_NONE, 0);
        h.iteration = w->clock;
        send_header(w, s, &h, 0);
    }
    for (int s = 0; s < S; s++) {
        next[s] = w->c.credit > 0 && w->c.credit < w->nchunks[s] ? w->c.credit : w->nchunks[s];
        if (next[s] > kmax) kmax = next[s];
    }
    for (int k = 0; k < kmax; k++)   /* slice-major: all servers get their first slice first */
        for (int s = 0; s < S; s++)
            if (k < next[s]) push_slice(w, s, k, grads, lr);
    double t_wait = timer_now();
    /* the servers' replies (pull, the copy, nests inside; later slices leave as credits come
     * back); their headers say how long before the round's last worker this one was ready */
    w->step_wait = 0;
    step_ctx_t sc = { params, grads, lr, next };
    w->asked = w->budget != 0;
    w->share = 0;
    wait_replies_n(w, 0, S, PS_MSG_PARAMS, 1, 0, 1, on_step_params, &sc);
    w->asked = 0;
    wait_inflight(w); /* grads/half are the caller's again */
    double t_end = timer_now();
    if (w->step_wait > t_end - t_push) w->step_wait = t_end - t_push;
    timeline_event("push", t_push, t_wait);
    /* the duration the server measured; placed right after the push, where it begins */
    timeline_event("wait", t_wait, t_wait + (w->step_wait < t_end - t_wait ? w->step_wait : t_end - t_wait));
    w->clock++;
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
        send_header(w, s, &h, 0);
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
            send_header(w, s, &h, 1);
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
    send_header(w, 0, &h, 1);
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
        send_header(w, s, &h, 0);
    }
    done_ctx_t d = { reports, report_len };
    wait_replies(w, 0, w->c.nservers, PS_MSG_STATS, 0, report_len, on_stats, &d);
    return 0;
}

void ps_worker_free(ps_worker_t *w) {
    if (!w) return;
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_BYE, PS_DTYPE_NONE, 0);
        send_header(w, s, &h, 0);
    }
    atomic_store(&w->stop, 1);
    if (w->hb_started) pthread_join(w->hb, NULL);
    wait_inflight(w);
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
