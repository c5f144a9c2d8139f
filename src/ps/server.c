/* server.c: a parameter-server shard. Event loop over one ROUTER socket: validates every message
 * (wire.h), applies gradients with optim_step on its key range, answers pulls under the bsp /
 * async / ssp rules, sends heartbeats and watches the workers' ones.
 *
 * Consistency, as implemented:
 *   bsp   round t is applied only when every worker's push for t arrived (sum, then /N); every
 *         push of round t is answered after the apply with the parameters of version t+1, so no
 *         worker can compute on anything else (the ps-lite#143 race cannot happen).
 *   async each push is applied on arrival (gradient /N, so lr means the same as in bsp) and
 *         answered at once with the current parameters.
 *   ssp   like async, but the answer to a worker whose clock would run more than K clocks ahead
 *         of the slowest live worker is withheld until the slowest catches up.
 * Clocks: clock[w] = pushes applied from w; the global clock is the minimum over live workers.
 * Staleness of a gradient = global clock at its apply - global clock of the parameters it was
 * computed on (echoed by the worker), in clocks; always 0 under bsp.
 *
 * Slices (bsp, --ps-chunk-kb): a push may be one slice of the shard on a fixed grid (offset a
 * multiple of the slice length, count exactly that slice's length); slice k is applied and
 * answered as soon as all N workers' slice k arrived, so applying and answering overlap the
 * arrival of later slices (ps-lite key-range slicing, BytePS partitioning). Each slice exactly
 * once per worker and round; anything off the grid is rejected. async/ssp and LARS (whose
 * norms span whole layers) take whole-shard pushes only.
 * Deliberately not here: MPI (the exchange does start-up and aborts), server replication. */
#include "server.h"
#include "wire.h"
#include "auth.h"
#include "zcheck.h"
#include "../common/timer.h"
#include "../common/timeline_hook.h"
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>


#define PS_FLAG_F16 1u     /* PULL / DONE: answer parameters as half */
#define AVG_MAX 64

struct ps_server {
    ps_server_config_t c;
    void *sock;
    size_t lo, len, spp;
    float *params, *state, *acc;
    uint16_t *half;
    uint64_t generation;              /* INIT and STATE_SET applied so far */
    /* per worker */
    double *last_heard;
    uint64_t *clock;
    uint8_t *lost, *done, *bye, *pushed, *f16, *pend_reply, *avg_in, *logged;
    uint64_t *pend_pull;              /* generation wanted + 1, 0 = none */
    int nlost;
    /* bsp round, per slice k of the shard (--ps-chunk-kb; one slice = the whole shard): the first
     * push of slice k is held as is (no copy) until the second arrives; slice k is applied and
     * answered as soon as every worker's slice k is in */
    size_t ck;                        /* slice length in elements (the last may be shorter) */
    int nck;
    zmq_msg_t *held;
    uint8_t *have_held, *held_half;
    int *ck_pushed;                   /* pushes of slice k this round */
    uint8_t *got;                     /* [w * nck + k]: worker w's slice k arrived this round */
    int *w_slices;                    /* slices worker w pushed this round */
    int ck_done, round_msgs;          /* slices applied, pushes handled in this round */
    atomic_int *ck_inflight;          /* zero-copy replies out of slice k's params/half */
    uint64_t round;
    int npushed;                      /* workers that pushed anything this round */
    float round_lr;
    /* metrics average (server 0) */
    int avg_n, avg_count;
    double avg_sum[AVG_MAX];
    int stats_sent;
    /* report */
    double apply_s;
    uint64_t bytes_in, bytes_out, rejected, updates;
    uint64_t hist[PS_HIST], stale_n, stale_max, clock_gap;
    double stale_sum;
    int fatal;
    /* --stall-warn: when each worker last pushed, when the current bsp round began, who was named */
    double *last_push, round_t0;
    uint8_t *stall_named;
    /* bsp wait accounting: when each push of the round was handled, the round's push-handling
     * time at that moment, and the idle wait sent back in the PARAMS header's lr field */
    double *push_ready, *push_busy, *push_wait, round_busy;
    uint64_t stalls;
    /* --ps-auth: ZAP handler (REP) and handshake monitor (PAIR), polled by the server loop */
    void *zap, *mon;
    uint8_t client_key[32];
    uint64_t auth_refused;
};

static void on_release_slice(void *data, void *hint) {
    (void)data;
    atomic_fetch_sub((atomic_int *)hint, 1);
}

static void sleep_us(long us) {
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

static void wait_counter(ps_server_t *s, atomic_int *c) {
    double t0 = timer_now();
    while (atomic_load(c) > 0) {
        if (timer_now() - t0 > s->c.peer_timeout + 5)
            die("ps server %d: replies still unsent after %.1f s", s->c.index, timer_now() - t0);
        sleep_us(20);
    }
}

/* ZeroMQ may still be sending a zero-copy reply out of params/half: wait before changing them. */
static void wait_inflight(ps_server_t *s) {
    for (int k = 0; k < s->nck; k++) wait_counter(s, &s->ck_inflight[k]);
}

/* slice k of the shard: [*off, *off + *n) */
static void slice_range(const ps_server_t *s, int k, size_t *off, size_t *n) {
    *off = (size_t)k * s->ck;
    *n = ps_slice_len(s->len, s->ck, *off);
}

/* The optimizer state is kept slice-major (slice k: spp blocks of its own length) so that each
 * slice's optim_step_at sees the count-length blocks it expects; on the wire (STATE, STATE_SET)
 * and in checkpoints it is shard-major (spp blocks of len). One slice: both are the same. */
static void state_convert(const ps_server_t *s, float *slices, float *shard, int to_slices) {
    for (int k = 0; k < s->nck; k++) {
        size_t off, n;
        slice_range(s, k, &off, &n);
        for (size_t j = 0; j < s->spp; j++) {
            float *a = slices + s->spp * off + j * n, *b = shard + j * s->len + off;
            if (to_slices) memcpy(a, b, n * 4);
            else memcpy(b, a, n * 4);
        }
    }
}

static int worker_live(const ps_server_t *s, int w) { return !s->lost[w] && !s->bye[w]; }

static uint64_t global_clock(const ps_server_t *s) {
    uint64_t g = UINT64_MAX;
    for (int w = 0; w < s->c.nworkers; w++)
        if (!s->lost[w] && !s->done[w] && s->clock[w] < g) g = s->clock[w];
    if (g == UINT64_MAX) { /* everyone done: the largest clock */
        g = 0;
        for (int w = 0; w < s->c.nworkers; w++) if (s->clock[w] > g) g = s->clock[w];
    }
    return g;
}

ps_server_t *ps_server_create(void *zctx, const ps_server_config_t *c, const char *endpoint,
                              char *bound, size_t boundlen) {
    ps_server_t *s = xcalloc(1, sizeof *s);
    s->c = *c;
    if (s->c.peer_timeout <= 0) s->c.peer_timeout = 10;
    int N = c->nworkers;
    /* LARS needs whole weight matrices on one server (their norms); others split evenly */
    if (optim_shard_range(&c->optim, c->total, c->nservers, c->index, &s->lo, &s->len) != 0)
        ps_shard_range(c->total, c->nservers, c->index, &s->lo, &s->len);
    s->spp = optim_state_per_param(&c->optim);
    s->params = xcalloc(s->len, sizeof(float));
    s->state = xcalloc(s->len * s->spp, sizeof(float));
    s->acc = xcalloc(s->len, sizeof(float));
    s->half = xcalloc(s->len, sizeof(uint16_t));
    /* slices only in bsp and not for LARS (its norms span whole layers); async/ssp apply whole pushes */
    s->ck = s->len ? s->len : 1;
    if (c->sync == SYNC_BSP && c->chunk > 0 && c->chunk < s->len && c->optim.kind != OPTIM_LARS) s->ck = c->chunk;
    s->nck = (int)((s->len + s->ck - 1) / s->ck);
    if (s->nck < 1) s->nck = 1;
    s->held = xcalloc(s->nck, sizeof(zmq_msg_t));
    s->have_held = xcalloc(s->nck, 1);
    s->held_half = xcalloc(s->nck, 1);
    s->ck_pushed = xcalloc(s->nck, sizeof(int));
    s->got = xcalloc((size_t)N * s->nck, 1);
    s->w_slices = xcalloc(N, sizeof(int));
    s->ck_inflight = xcalloc(s->nck, sizeof(atomic_int));
    for (int k = 0; k < s->nck; k++) atomic_init(&s->ck_inflight[k], 0);
    s->last_heard = xcalloc(N, sizeof(double));
    s->clock = xcalloc(N, sizeof(uint64_t));
    s->pend_pull = xcalloc(N, sizeof(uint64_t));
    uint8_t **flags[] = { &s->lost, &s->done, &s->bye, &s->pushed, &s->f16, &s->pend_reply, &s->avg_in };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) *flags[i] = xcalloc(N, 1);
    s->logged = xcalloc(N + 1, 1);
    double now = timer_now();
    for (int w = 0; w < N; w++) s->last_heard[w] = now;
    s->last_push = xcalloc(N, sizeof(double));
    for (int w = 0; w < N; w++) s->last_push[w] = now;
    s->push_ready = xcalloc(N, sizeof(double));
    s->push_busy = xcalloc(N, sizeof(double));
    s->push_wait = xcalloc(N, sizeof(double));
    s->stall_named = xcalloc(N, 1);

    zmqCheckPtr(s->sock, zmq_socket(zctx, ZMQ_ROUTER));
    int hwm = 0, linger = 2000;
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_SNDHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_RCVHWM, &hwm, sizeof hwm));
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger));
    /* hostile input: no frame may exceed the largest legitimate one (STATE_SET: params + optimizer
     * state of this shard), or a peer could make the server buffer gigabytes; ZeroMQ drops the
     * connection of a peer that tries */
    int64_t maxmsg = (int64_t)(s->len * (1 + s->spp) * sizeof(float)) + 4096;
    zmqCheck(zmq_setsockopt(s->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg));
    if (c->auth) {
        /* CURVE: the ZAP handler must be bound in this context before the socket binds, or
         * libzmq skips authentication; it is served by the poll loop (ps_server_run) */
        if (!ps_auth_available()) die_at(NULL, 0, 2, "--ps-auth: this libzmq has no CURVE support");
        if (!zmq_z85_decode(s->client_key, c->auth->client_public)) die("ps server %d: bad client public key", c->index);
        zmqCheckPtr(s->zap, zmq_socket(zctx, ZMQ_REP));
        if (zmq_bind(s->zap, "inproc://zeromq.zap.01") != 0)
            die("ps server %d: cannot bind the ZAP handler: %s (one authenticated server per process)", c->index, zmq_strerror(zmq_errno()));
        int on = 1;
        zmqCheck(zmq_setsockopt(s->sock, ZMQ_CURVE_SERVER, &on, sizeof on));
        zmqCheck(zmq_setsockopt(s->sock, ZMQ_CURVE_SECRETKEY, c->auth->server_secret, 41));
        char mon_ep[64];
        snprintf(mon_ep, sizeof mon_ep, "inproc://psring-monitor-%d", c->index);
        zmqCheck(zmq_socket_monitor(s->sock, mon_ep, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH));
        zmqCheckPtr(s->mon, zmq_socket(zctx, ZMQ_PAIR));
        zmqCheck(zmq_connect(s->mon, mon_ep));
    }
    if (zmq_bind(s->sock, endpoint) != 0)
        die("ps server %d: cannot bind %s: %s", c->index, endpoint, zmq_strerror(zmq_errno()));
    size_t n = boundlen;
    zmqCheck(zmq_getsockopt(s->sock, ZMQ_LAST_ENDPOINT, bound, &n));
    return s;
}

/* --bind values other than a literal address are resolved against this host's interfaces, so that
 * one command line serves every host of a cluster (each server finds its own address). */
int ps_server_bind_endpoint(const char *spec, char *out, size_t outlen, char *err, size_t errlen) {
    const char *slash = strchr(spec, '/');
    struct in_addr net = { 0 };
    uint32_t mask = 0;
    int mode; /* 0 literal, 1 cidr, 2 interface name, 3 auto */
    if (slash) {
        char a[64];
        char *end;
        long len = strtol(slash + 1, &end, 10);
        size_t k = (size_t)(slash - spec);
        if (k >= sizeof a || *end || end == slash + 1 || len < 0 || len > 32) goto bad_cidr;
        memcpy(a, spec, k);
        a[k] = 0;
        if (inet_pton(AF_INET, a, &net) != 1) goto bad_cidr;
        mask = len == 0 ? 0 : htonl(0xffffffffu << (32 - len));
        mode = 1;
    } else if (!strcmp(spec, "auto")) {
        mode = 3;
    } else {
        mode = if_nametoindex(spec) ? 2 : 0;
    }
    if (mode == 0) {
        snprintf(out, outlen, "tcp://%s:*", spec);
        return 0;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        snprintf(err, errlen, "--bind %s: getifaddrs: %s", spec, strerror(errno));
        return -1;
    }
    int found = 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if (mode == 1) found = (a.s_addr & mask) == (net.s_addr & mask);
        else if (mode == 2) found = !strcmp(i->ifa_name, spec);
        else found = (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK);
        if (found) {
            char buf[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &a, buf, sizeof buf);
            snprintf(out, outlen, "tcp://%s:*", buf);
        }
    }
    freeifaddrs(ifs);
    if (!found) {
        char host[256] = "this host";
        gethostname(host, sizeof host);
        snprintf(err, errlen, "--bind %s: %s has no IPv4 address %s", spec, host,
                 mode == 1 ? "in that subnet" : mode == 2 ? "on that interface" : "outside loopback");
        return -1;
    }
    return 0;
bad_cidr:
    snprintf(err, errlen, "--bind %s: not a subnet like 10.99.0.0/24", spec);
    return -1;
}

void ps_server_free(ps_server_t *s) {
    if (!s) return;
    for (int k = 0; k < s->nck; k++) if (s->have_held[k]) zmqCheck(zmq_msg_close(&s->held[k]));
    if (s->sock) zmqCheck(zmq_close(s->sock));
    if (s->zap) zmqCheck(zmq_close(s->zap));
    if (s->mon) zmqCheck(zmq_close(s->mon));
    wait_inflight(s);
    free(s->last_push); free(s->stall_named);
    free(s->push_ready); free(s->push_busy); free(s->push_wait);
    free(s->params); free(s->state); free(s->acc); free(s->half);
    free(s->held); free(s->have_held); free(s->held_half); free(s->ck_pushed); free(s->got);
    free(s->w_slices); free(s->ck_inflight);
    free(s->last_heard); free(s->clock); free(s->pend_pull);
    free(s->lost); free(s->done); free(s->bye); free(s->pushed); free(s->f16);
    free(s->pend_reply); free(s->avg_in); free(s->logged);
    free(s);
}

uint64_t ps_server_rejected(const ps_server_t *s) { return s->rejected; }
uint64_t ps_server_auth_refused(const ps_server_t *s) { return s->auth_refused; }

const float *ps_server_params(const ps_server_t *s, size_t *lo, size_t *len) {
    if (lo) *lo = s->lo;
    if (len) *len = s->len;
    return s->params;
}

/* ---- sending ------------------------------------------------------------------------------- */

static void send_identity(ps_server_t *s, int w) {
    uint8_t id[5] = { 'D', (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24) };
    zmqCheck(zmq_send(s->sock, id, sizeof id, ZMQ_SNDMORE));
}

static ps_header_t server_header(ps_server_t *s, int type, int dtype, uint64_t count) {
    return ps_header_make(type, -1 - s->c.index, (uint32_t)s->c.index, dtype, count);
}

static void send_header(ps_server_t *s, int w, const ps_header_t *h, int more) {
    uint8_t buf[PS_HEADER_BYTES];
    ps_wire_encode(h, buf);
    send_identity(s, w);
    zmqCheck(zmq_send(s->sock, buf, sizeof buf, more ? ZMQ_SNDMORE : 0));
}

static void send_ctrl(ps_server_t *s, int w, int type) {
    ps_header_t h = server_header(s, type, PS_DTYPE_NONE, 0);
    h.clock = s->round;
    send_header(s, w, &h, 0);
}

/* payload copied into a fresh message (used where the buffer may change before it is sent) */
static void send_copy(ps_server_t *s, int w, ps_header_t *h, const void *a, size_t bytes) {
    zmq_msg_t m;
    zmqCheck(zmq_msg_init_size(&m, bytes));
    memcpy(zmq_msg_data(&m), a, bytes);
    send_header(s, w, h, 1);
    zmqCheck(zmq_msg_send(&m, s->sock, 0));
    s->bytes_out += bytes;
}

/* PARAMS to worker w, as f32 or f16; zero_copy only when params cannot change before the send
 * completes (bsp: wait_inflight before the next apply) */
static void send_params(ps_server_t *s, int w, uint64_t clock) {
    int half = s->f16[w];
    ps_header_t h = server_header(s, PS_MSG_PARAMS, half ? PS_DTYPE_F16 : PS_DTYPE_F32, s->len);
    h.clock = clock;
    h.iteration = s->generation;
    if (half) {
        ps_f32_to_f16(s->half, s->params, s->len);
        send_copy(s, w, &h, s->half, s->len * 2);
    } else {
        send_copy(s, w, &h, s->params, s->len * 4);
    }
}

/* bsp: slice sl's new parameters to every worker, zero-copy (one buffer, reference-counted);
 * with_wait: the round's last slice, whose header carries each worker's wait */
static void send_params_all(ps_server_t *s, int sl, uint64_t clock, int with_wait) {
    zmq_msg_t base[2];
    int have[2] = { 0, 0 };
    size_t off, n;
    slice_range(s, sl, &off, &n);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!worker_live(s, w)) continue;
        int k = s->f16[w];
        if (!have[k]) {
            void *buf = k ? (void *)(s->half + off) : (void *)(s->params + off);
            size_t bytes = n * (k ? 2 : 4);
            if (k) ps_f32_to_f16(s->half + off, s->params + off, n);
            atomic_fetch_add(&s->ck_inflight[sl], 1);
            zmqCheck(zmq_msg_init_data(&base[k], buf, bytes, on_release_slice, &s->ck_inflight[sl]));
            have[k] = 1;
        }
        ps_header_t h = server_header(s, PS_MSG_PARAMS, k ? PS_DTYPE_F16 : PS_DTYPE_F32, n);
        h.offset = off;
        h.clock = clock;
        h.iteration = s->generation;
        /* PARAMS has no lr: it carries this worker's wait (0 on all but the round's last slice) */
        h.lr = with_wait ? (float)s->push_wait[w] : 0.0f;
        zmq_msg_t m;
        zmqCheck(zmq_msg_init(&m));
        zmqCheck(zmq_msg_copy(&m, &base[k]));
        send_header(s, w, &h, 1);
        s->bytes_out += zmq_msg_size(&m);
        zmqCheck(zmq_msg_send(&m, s->sock, 0));
    }
    for (int k = 0; k < 2; k++) if (have[k]) zmqCheck(zmq_msg_close(&base[k]));
}

/* ---- bookkeeping --------------------------------------------------------------------------- */

static void reject(ps_server_t *s, int w, int err, const ps_header_t *h) {
    s->rejected++;
    int slot = (w >= 0 && w < s->c.nworkers) ? w : s->c.nworkers;
    if (s->logged[slot]) return;
    s->logged[slot] = 1;
    char who[64];
    if (slot < s->c.nworkers) snprintf(who, sizeof who, "worker %d (mpi rank %d)", w, s->c.worker_rank_base + w);
    else snprintf(who, sizeof who, "an unknown peer");
    fprintf(stderr, "psring: ps server %d: dropped a malformed message from %s: %s "
            "(type %u, shard %u, offset %llu, count %llu, payload %llu bytes); further ones from "
            "this sender are only counted\n", s->c.index, who, ps_wire_strerror(err),
            h ? h->type : 0, h ? h->shard : 0, h ? (unsigned long long)h->offset : 0ull,
            h ? (unsigned long long)h->count : 0ull, h ? (unsigned long long)h->payload_len : 0ull);
}

static void record_staleness(ps_server_t *s, uint64_t read_clock) {
    uint64_t g = global_clock(s);
    uint64_t st = g > read_clock ? g - read_clock : 0;
    s->hist[st < PS_HIST - 1 ? st : PS_HIST - 1]++;
    s->stale_n++;
    s->stale_sum += (double)st;
    if (st > s->stale_max) s->stale_max = st;
}

static void release_pulls(ps_server_t *s) {
    for (int w = 0; w < s->c.nworkers; w++)
        if (s->pend_pull[w] && s->generation >= s->pend_pull[w] - 1 && worker_live(s, w)) {
            s->pend_pull[w] = 0;
            send_params(s, w, global_clock(s));
        }
}

/* ssp: answer the pushes of workers that are now within K clocks of the slowest */
static void release_ssp(ps_server_t *s) {
    uint64_t g = global_clock(s);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!s->pend_reply[w] || !worker_live(s, w)) continue;
        if (s->clock[w] <= g + (uint64_t)s->c.staleness) {
            s->pend_reply[w] = 0;
            uint64_t gap = s->clock[w] - (s->clock[w] < g ? s->clock[w] : g);
            if (gap > s->clock_gap) s->clock_gap = gap;
            send_params(s, w, g);
        }
    }
}

static void maybe_finish_avg(ps_server_t *s) {
    if (s->avg_count == 0) return;
    for (int w = 0; w < s->c.nworkers; w++)
        if (worker_live(s, w) && !s->avg_in[w]) return;
    double mean[AVG_MAX];
    for (int i = 0; i < s->avg_n; i++) mean[i] = s->avg_sum[i] / s->avg_count;
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!s->avg_in[w]) continue;
        s->avg_in[w] = 0;
        if (!worker_live(s, w)) continue;
        ps_header_t h = server_header(s, PS_MSG_AVG_REPLY, PS_DTYPE_F64, s->avg_n);
        send_copy(s, w, &h, mean, s->avg_n * sizeof(double));
    }
    s->avg_count = 0;
    memset(s->avg_sum, 0, sizeof s->avg_sum);
}

size_t ps_server_report_len(const ps_server_t *s) { return PS_ST_FIELDS + PS_HIST + s->c.nworkers; }

void ps_server_report(const ps_server_t *s, double *r) {
    r[PS_ST_APPLY_S] = s->apply_s;
    r[PS_ST_BYTES_IN] = (double)s->bytes_in;
    r[PS_ST_BYTES_OUT] = (double)s->bytes_out;
    r[PS_ST_REJECTED] = (double)s->rejected;
    r[PS_ST_STALE_N] = (double)s->stale_n;
    r[PS_ST_STALE_SUM] = s->stale_sum;
    r[PS_ST_STALE_MAX] = (double)s->stale_max;
    r[PS_ST_CLOCK_GAP] = (double)s->clock_gap;
    r[PS_ST_NLOST] = s->nlost;
    r[PS_ST_UPDATES] = (double)s->updates;
    for (int i = 0; i < PS_HIST; i++) r[PS_ST_FIELDS + i] = (double)s->hist[i];
    for (int w = 0; w < s->c.nworkers; w++) r[PS_ST_FIELDS + PS_HIST + w] = s->lost[w];
}

static void maybe_send_stats(ps_server_t *s) {
    if (s->stats_sent) return;
    for (int w = 0; w < s->c.nworkers; w++)
        if (!s->lost[w] && !s->done[w]) return;
    s->stats_sent = 1;
    size_t n = ps_server_report_len(s);
    double *r = xcalloc(n, sizeof(double));
    ps_server_report(s, r);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (s->lost[w] || s->bye[w]) continue;
        ps_header_t h = server_header(s, PS_MSG_STATS, PS_DTYPE_F64, n);
        send_copy(s, w, &h, r, n * sizeof(double));
    }
    free(r);
}

/* bsp: every worker's slice k is in (summed, scaled into acc): step that sub-range and answer
 * it; the round ends with its last slice. The optimizer is element-wise (SGD, Adam), so
 * stepping slice by slice gives the same numbers as one step over the shard. */
static void apply_slice(ps_server_t *s, int k) {
    double t0 = timer_now();
    size_t off, n;
    slice_range(s, k, &off, &n);
    wait_counter(s, &s->ck_inflight[k]);  /* last round's replies of this slice are out */
    optim_step_at(&s->c.optim, s->params + off, s->acc + off, s->state + s->spp * off, n, s->round_lr, s->lo + off);
    s->apply_s += timer_now() - t0;
    timeline_mark("server-apply", t0, timer_now());
    s->ck_pushed[k] = 0;
    int end = ++s->ck_done == s->nck;
    if (end) {
        s->updates++;
        s->round++;
        s->npushed = 0;
        s->ck_done = 0;
        s->round_msgs = 0;
        memset(s->got, 0, (size_t)s->c.nworkers * s->nck);
        for (int w = 0; w < s->c.nworkers; w++) {
            s->pushed[w] = 0;
            s->w_slices[w] = 0;
            if (!worker_live(s, w)) continue;
            s->clock[w] = s->round;
            s->hist[0]++; /* every gradient of the round was computed on version round-1: staleness 0 */
            s->stale_n++;
        }
    }
    send_params_all(s, k, end ? s->round : s->round + 1, end);
}

/* ---- receiving ----------------------------------------------------------------------------- */

static void handle_push(ps_server_t *s, int w, const ps_header_t *h, zmq_msg_t *payload) {
    const void *p = zmq_msg_data(payload);
    s->last_push[w] = timer_now();
    if (s->stall_named[w]) {
        s->stall_named[w] = 0;
        if (s->c.index == 0)
            fprintf(stderr, "psring: ps server 0: worker rank %d (mpi rank %d) pushed again\n", w, s->c.worker_rank_base + w);
    }
    if (s->c.sync == SYNC_BSP && s->round_msgs == 0) s->round_t0 = s->last_push[w];
    int half = h->dtype == PS_DTYPE_F16;
    s->f16[w] = (uint8_t)half;
    if (s->c.sync == SYNC_BSP) {
        /* offset/count are on the slice grid (checked in handle); each slice once per round */
        int k = (int)(h->offset / s->ck);
        if (h->iteration != s->round || s->got[(size_t)w * s->nck + k]) { reject(s, w, PS_WIRE_ESTATE, h); return; }
        int need = 0;
        for (int v = 0; v < s->c.nworkers; v++) need += !s->lost[v];
        int last = s->ck_pushed[k] + 1 >= need;                         /* slice k complete */
        int round_last = s->round_msgs + 1 >= need * s->nck;          /* the round's last push */
        /* Wait of each worker = the server's idle time between handling its last push of the
         * round and the start of the round's last push: time spent on nobody's bytes but the
         * stragglers'. Handling other pushes in between (their sums, the slices applied and
         * answered meanwhile) is the model's aggregation, not waiting. */
        double ta = timer_now();
        if (round_last) {
            for (int v = 0; v < s->c.nworkers; v++) {
                double idle = (ta - s->push_ready[v]) - (s->round_busy - s->push_busy[v]);
                s->push_wait[v] = s->pushed[v] && idle > 0 ? idle : 0;
            }
            s->push_wait[w] = 0;
            s->round_busy = 0;
        }
        /* the mean is formed exactly as (((g0 + g1) + g2) ...) * (1/N) per element, in the order
         * the pushes of that slice arrived, fused into as few passes over memory as possible;
         * multiplying by 1.0f where it is not the last push is exact */
        float f = last ? 1.0f / (float)s->c.nworkers : 1.0f;
        size_t n = h->count;
        float *restrict acc = s->acc + h->offset;
        if (s->ck_pushed[k] == 0 && !last) {
            zmqCheck(zmq_msg_init(&s->held[k]));
            zmqCheck(zmq_msg_move(&s->held[k], payload)); /* keep it; combine with the next push */
            s->have_held[k] = 1;
            s->held_half[k] = (uint8_t)half;
        } else if (s->ck_pushed[k] == 0) {
            if (half) ps_f16_to_f32(acc, p, n);
            else memcpy(acc, p, n * 4);
            for (size_t i = 0; i < n; i++) acc[i] *= f;
        } else {
            const void *hp = s->have_held[k] ? zmq_msg_data(&s->held[k]) : NULL;
            if (hp && !half && !s->held_half[k]) {
                const float *restrict a = hp, *restrict b = p;
                for (size_t i = 0; i < n; i++) acc[i] = (a[i] + b[i]) * f;
            } else {
                if (hp) {
                    if (s->held_half[k]) ps_f16_to_f32(acc, hp, n);
                    else memcpy(acc, hp, n * 4);
                }
                if (half) ps_f16_accumulate(acc, p, n);
                else {
                    const float *restrict b = p;
                    for (size_t i = 0; i < n; i++) acc[i] += b[i];
                }
                if (last) for (size_t i = 0; i < n; i++) acc[i] *= f;
            }
            if (s->have_held[k]) { zmqCheck(zmq_msg_close(&s->held[k])); s->have_held[k] = 0; }
        }
        s->got[(size_t)w * s->nck + k] = 1;
        if (!s->pushed[w]) { s->pushed[w] = 1; s->npushed++; }
        s->w_slices[w]++;
        s->ck_pushed[k]++;
        s->round_msgs++;
        s->round_lr = h->lr;
        if (last) apply_slice(s, k);
        if (!round_last) {
            double now = timer_now();
            if (s->w_slices[w] == s->nck) s->push_ready[w] = now;   /* w's whole push is in */
            s->round_busy += now - ta;
            if (s->w_slices[w] == s->nck) s->push_busy[w] = s->round_busy;
        }
        return;
    }
    /* async / ssp: apply now */
    double t0 = timer_now();
    float scale = 1.0f / (float)s->c.nworkers;
    if (half) ps_f16_to_f32(s->acc, p, s->len);
    else memcpy(s->acc, p, s->len * 4);
    for (size_t i = 0; i < s->len; i++) s->acc[i] *= scale;
    record_staleness(s, h->clock);
    optim_step_at(&s->c.optim, s->params, s->acc, s->state, s->len, h->lr, s->lo);
    s->apply_s += timer_now() - t0;
    timeline_mark("server-apply", t0, timer_now());
    s->updates++;
    s->clock[w]++;
    if (s->c.sync == SYNC_ASYNC) {
        send_params(s, w, global_clock(s));
    } else {
        s->pend_reply[w] = 1;
        release_ssp(s);
    }
}

static void handle(ps_server_t *s, int w, int hb_socket, zmq_msg_t *hdr, zmq_msg_t *payload,
                   int have_payload, int extra_frames) {
    ps_header_t h;
    int err = ps_wire_decode(zmq_msg_data(hdr), zmq_msg_size(hdr), &h);
    if (err) { reject(s, w, err, &h); return; }
    if (w < 0) { reject(s, w, PS_WIRE_ESENDER, &h); return; }
    s->last_heard[w] = timer_now();
    if (h.sender != w) { reject(s, w, PS_WIRE_ESENDER, &h); return; }
    if (extra_frames || have_payload != (h.dtype != PS_DTYPE_NONE)) { reject(s, w, PS_WIRE_EFRAMES, &h); return; }
    if (have_payload && zmq_msg_size(payload) != h.payload_len) { reject(s, w, PS_WIRE_ELENGTH, &h); return; }
    if (h.shard != (uint32_t)s->c.index) { reject(s, w, PS_WIRE_ESHARD, &h); return; }
    if (hb_socket && h.type != PS_MSG_HEARTBEAT) { reject(s, w, PS_WIRE_ESTATE, &h); return; }
    if (have_payload) s->bytes_in += h.payload_len;
    if (s->lost[w]) return; /* dropped for silence (async); it does not come back */
    size_t full = s->len * (1 + s->spp);
    switch (h.type) {
    case PS_MSG_HEARTBEAT:
        return;
    case PS_MSG_INIT:
    case PS_MSG_STATE_SET: {
        size_t want = h.type == PS_MSG_INIT ? s->len : full;
        if (h.offset != 0 || h.count != want) { reject(s, w, PS_WIRE_ERANGE, &h); return; }
        wait_inflight(s);
        const float *p = zmq_msg_data(payload);
        memcpy(s->params, p, s->len * 4);
        if (h.type == PS_MSG_INIT) memset(s->state, 0, s->len * s->spp * 4);
        else state_convert(s, s->state, (float *)(p + s->len), 1);
        s->generation++;
        send_ctrl(s, w, PS_MSG_ACK);
        release_pulls(s);
        return;
    }
    case PS_MSG_PULL:
        s->f16[w] = (h.flags & PS_FLAG_F16) != 0;
        if (s->generation >= h.iteration && s->generation > 0) send_params(s, w, global_clock(s));
        else s->pend_pull[w] = h.iteration + 1;
        return;
    case PS_MSG_PUSH:
        if (s->generation == 0) { reject(s, w, PS_WIRE_ESTATE, &h); return; }
        /* a slice: on the grid, inside the shard, exactly its length (one slice = the shard) */
        if (!ps_slice_ok(s->len, s->ck, h.offset, h.count)) { reject(s, w, PS_WIRE_ERANGE, &h); return; }
        handle_push(s, w, &h, payload);
        return;
    case PS_MSG_STATE_GET: {
        ps_header_t r = server_header(s, PS_MSG_STATE, PS_DTYPE_F32, full);
        zmq_msg_t m;
        zmqCheck(zmq_msg_init_size(&m, full * 4));
        float *q = zmq_msg_data(&m);
        memcpy(q, s->params, s->len * 4);
        state_convert(s, s->state, q + s->len, 0);
        send_header(s, w, &r, 1);
        zmqCheck(zmq_msg_send(&m, s->sock, 0));
        s->bytes_out += full * 4;
        return;
    }
    case PS_MSG_AVG: {
        if (s->c.index != 0 || s->avg_in[w]) { reject(s, w, PS_WIRE_ESTATE, &h); return; }
        if (h.count > AVG_MAX || (s->avg_count > 0 && (int)h.count != s->avg_n)) { reject(s, w, PS_WIRE_ECOUNT, &h); return; }
        /* small messages live inside zmq_msg_t, 4- but not 8-byte aligned: copy, do not cast
         * (found by the --enable-sanitizers build: UBSan, misaligned double load) */
        double v[AVG_MAX];
        memcpy(v, zmq_msg_data(payload), h.count * sizeof(double));
        s->avg_n = (int)h.count;
        for (int i = 0; i < s->avg_n; i++) s->avg_sum[i] += v[i];
        s->avg_in[w] = 1;
        s->avg_count++;
        maybe_finish_avg(s);
        return;
    }
    case PS_MSG_DONE:
        s->done[w] = 1;
        if (s->c.sync == SYNC_SSP) release_ssp(s);
        maybe_send_stats(s);
        return;
    case PS_MSG_BYE:
        s->bye[w] = 1;
        maybe_finish_avg(s);
        return;
    default:
        reject(s, w, PS_WIRE_ESTATE, &h);
    }
}

/* identity "D"/"H" + u32 rank; returns the worker or -1 */
static int parse_identity(const ps_server_t *s, zmq_msg_t *id, int *hb) {
    const uint8_t *p = zmq_msg_data(id);
    if (zmq_msg_size(id) != 5 || (p[0] != 'D' && p[0] != 'H')) return -1;
    uint32_t w = p[1] | (p[2] << 8) | (p[3] << 16) | ((uint32_t)p[4] << 24);
    if (w >= (uint32_t)s->c.nworkers) return -1;
    *hb = p[0] == 'H';
    return (int)w;
}

/* receives and handles one message; 0 when none was waiting */
static int recv_one(ps_server_t *s) {
    zmq_msg_t id, hdr, payload, junk;
    zmqCheck(zmq_msg_init(&id));
    if (zmq_msg_recv(&id, s->sock, ZMQ_DONTWAIT) == -1) {
        int e = zmq_errno();
        zmq_msg_close(&id);
        if (e == EAGAIN || e == EINTR) return 0;
        die("ps server %d: zmq_msg_recv: %s", s->c.index, zmq_strerror(e));
    }
    int hb = 0, w = parse_identity(s, &id, &hb);
    zmqCheck(zmq_msg_init(&hdr));
    zmqCheck(zmq_msg_init(&payload));
    int have_hdr = 0, have_payload = 0, extra = 0;
    while (zmq_msg_more(have_payload ? &payload : have_hdr ? &hdr : &id)) {
        zmq_msg_t *dst = !have_hdr ? &hdr : !have_payload ? &payload : &junk;
        if (dst == &junk) zmqCheck(zmq_msg_init(&junk));
        zmqCheck(zmq_msg_recv(dst, s->sock, 0));
        if (dst == &hdr) have_hdr = 1;
        else if (dst == &payload) have_payload = 1;
        else {
            extra++;
            int more = zmq_msg_more(&junk);
            zmqCheck(zmq_msg_close(&junk));
            if (!more) break;
        }
    }
    if (!have_hdr) reject(s, w, PS_WIRE_EFRAMES, NULL);
    else handle(s, w, hb, &hdr, &payload, have_payload, extra);
    zmqCheck(zmq_msg_close(&id));
    zmqCheck(zmq_msg_close(&hdr));
    zmqCheck(zmq_msg_close(&payload));
    return 1;
}

/* --stall-warn (server 0 only, as Horovod's coordinator): bsp names the workers still missing
 * from a round that others entered stall_warn seconds ago; async/ssp names a worker that is
 * behind the fastest and has not pushed for stall_warn seconds. Each stall is named once; the
 * job goes on (a dead worker is --peer-timeout's business). */
static void check_stalls(ps_server_t *s, double now) {
    if (s->c.stall_warn <= 0 || s->c.index != 0) return;
    uint64_t maxc = 0;
    for (int w = 0; w < s->c.nworkers; w++) if (worker_live(s, w) && s->clock[w] > maxc) maxc = s->clock[w];
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!worker_live(s, w) || s->done[w] || s->stall_named[w]) continue;
        double quiet;
        if (s->c.sync == SYNC_BSP) {
            if (s->npushed == 0 || s->pushed[w]) continue;
            quiet = now - s->round_t0;
        } else {
            if (s->clock[w] >= maxc) continue;
            quiet = now - s->last_push[w];
        }
        if (quiet < s->c.stall_warn) continue;
        s->stall_named[w] = 1;
        s->stalls++;
        fprintf(stderr, "psring: ps server 0: stall: worker rank %d (mpi rank %d) has not pushed for %.1f s "
                "(its clock %llu, others up to %llu); still waiting (--stall-warn %.3g)\n", w,
                s->c.worker_rank_base + w, quiet, (unsigned long long)s->clock[w],
                (unsigned long long)(s->c.sync == SYNC_BSP ? s->round + 1 : maxc), s->c.stall_warn);
    }
}

/* ZAP (RFC 27): one request per CURVE handshake; accept exactly the keyfile's client key */
static void serve_zap(ps_server_t *s) {
    char f[7][256];
    size_t len[7];
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t m;
        zmqCheck(zmq_msg_init(&m));
        if (zmq_msg_recv(&m, s->zap, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&m); if (n == 0) return; continue; }
        if (n < 7) {
            len[n] = zmq_msg_size(&m) < sizeof f[0] ? zmq_msg_size(&m) : sizeof f[0] - 1;
            memcpy(f[n], zmq_msg_data(&m), len[n]);
            f[n][len[n]] = 0;
        }
        n++;
        more = zmq_msg_more(&m);
        zmqCheck(zmq_msg_close(&m));
    }
    /* version, request id, domain, address, identity, mechanism, credentials (the client key) */
    int ok = n >= 7 && !strcmp(f[5], "CURVE") && len[6] == 32 && memcmp(f[6], s->client_key, 32) == 0;
    const char *status = ok ? "200" : "400";
    zmqCheck(zmq_send(s->zap, "1.0", 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, n > 1 ? f[1] : "", n > 1 ? len[1] : 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, status, 3, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, ok ? "OK" : "unknown client key", ok ? 2 : 18, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, "", 0, ZMQ_SNDMORE));
    zmqCheck(zmq_send(s->zap, "", 0, 0));
    if (!ok && s->auth_refused < 3)
        fprintf(stderr, "psring: ps server %d: refused a CURVE client from %s: its key is not the --ps-auth keyfile's\n",
                s->c.index, n > 3 ? f[3] : "?");
}

/* handshake failures reported by the socket monitor: peers without the key never get further */
static void read_monitor(ps_server_t *s) {
    for (;;) {
        zmq_msg_t ev, addr;
        zmqCheck(zmq_msg_init(&ev));
        if (zmq_msg_recv(&ev, s->mon, ZMQ_DONTWAIT) == -1) { zmq_msg_close(&ev); return; }
        zmqCheck(zmq_msg_init(&addr));
        if (zmq_msg_more(&ev)) zmqCheck(zmq_msg_recv(&addr, s->mon, 0));
        uint16_t event = 0;
        if (zmq_msg_size(&ev) >= 2) memcpy(&event, zmq_msg_data(&ev), 2);
        s->auth_refused++;
        if (s->auth_refused <= 3)
            fprintf(stderr, "psring: ps server %d: refused a peer on %.*s: %s handshake failed (no or wrong --ps-auth key)%s\n",
                    s->c.index, (int)zmq_msg_size(&addr), (const char *)zmq_msg_data(&addr),
                    event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "CURVE authentication" : "CURVE",
                    s->auth_refused == 3 ? "; further refusals are only counted" : "");
        zmqCheck(zmq_msg_close(&ev));
        zmqCheck(zmq_msg_close(&addr));
    }
}

static int check_peers(ps_server_t *s) {
    double now = timer_now();
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!worker_live(s, w)) continue;
        double quiet = now - s->last_heard[w];
        if (quiet <= s->c.peer_timeout) continue;
        char line[256];
        if (s->c.sync == SYNC_ASYNC) {
            s->lost[w] = 1;
            s->nlost++;
            fprintf(stderr, "psring: ps server %d: worker rank %d (mpi rank %d) silent for %.1f s; "
                    "dropping it and going on without it (async)\n", s->c.index, w,
                    s->c.worker_rank_base + w, quiet);
            maybe_finish_avg(s);
            maybe_send_stats(s);
            continue;
        }
        snprintf(line, sizeof line, "psring: ps server %d: worker rank %d (mpi rank %d) silent for "
                 "%.1f s; ending the job", s->c.index, w, s->c.worker_rank_base + w, quiet);
        s->fatal = 1;
        if (s->c.on_fatal) s->c.on_fatal(line);
        else { fprintf(stderr, "%s\n", line); exit(1); }
        return -1;
    }
    return 0;
}

int ps_server_run(ps_server_t *s) {
    double hb_ivl = s->c.peer_timeout / 5;
    if (hb_ivl > 1) hb_ivl = 1;
    int slice_ms = (int)(hb_ivl * 1000 / 2);
    if (slice_ms < 1) slice_ms = 1;
    double last_hb = 0, last_check = timer_now();
    for (;;) {
        int all_gone = 1;
        for (int w = 0; w < s->c.nworkers; w++) if (worker_live(s, w)) all_gone = 0;
        if (all_gone) break;
        zmq_pollitem_t it[3] = { { s->sock, 0, ZMQ_POLLIN, 0 }, { s->zap, 0, ZMQ_POLLIN, 0 }, { s->mon, 0, ZMQ_POLLIN, 0 } };
        int rc = zmq_poll(it, s->zap ? 3 : 1, slice_ms);
        if (rc == -1 && zmq_errno() != EINTR) die("ps server %d: zmq_poll: %s", s->c.index, zmq_strerror(zmq_errno()));
        if (rc > 0 && (it[0].revents & ZMQ_POLLIN))
            for (int k = 0; k < 256 && recv_one(s); k++) {}
        if (rc > 0 && s->zap && (it[1].revents & ZMQ_POLLIN)) serve_zap(s);
        if (rc > 0 && s->zap && (it[2].revents & ZMQ_POLLIN)) read_monitor(s);
        double now = timer_now();
        if (now - last_hb >= hb_ivl) {
            for (int w = 0; w < s->c.nworkers; w++)
                if (worker_live(s, w)) send_ctrl(s, w, PS_MSG_HEARTBEAT);
            last_hb = now;
        }
        if (now - last_check >= 0.05) {
            last_check = now;
            check_stalls(s, now);
            if (check_peers(s)) return -1;
        }
    }
    return 0;
}

void ps_server_print_report(const ps_server_t *s, FILE *f) {
    const char *mode = sync_name(s->c.sync);
    double mean = s->stale_n ? s->stale_sum / (double)s->stale_n : 0;
    fprintf(f, "ps server %d: sync=%s staleness_bound=%d updates=%llu staleness_mean=%.3f "
            "staleness_max=%llu max_clock_gap=%llu rejected=%llu lost=%d\n", s->c.index, mode,
            s->c.sync == SYNC_SSP ? s->c.staleness : -1, (unsigned long long)s->updates, mean,
            (unsigned long long)s->stale_max, (unsigned long long)s->clock_gap,
            (unsigned long long)s->rejected, s->nlost);
    if (s->c.sync != SYNC_BSP && s->stale_n) {
        fprintf(f, "ps server %d: staleness histogram (clocks: count):", s->c.index);
        for (int i = 0; i < PS_HIST; i++)
            if (s->hist[i]) fprintf(f, " %s%d:%llu", i == PS_HIST - 1 ? ">=" : "", i, (unsigned long long)s->hist[i]);
        fputc('\n', f);
    }
    for (int w = 0; w < s->c.nworkers; w++)
        if (s->lost[w]) fprintf(f, "ps server %d: lost worker rank %d (mpi rank %d)\n", s->c.index, w, s->c.worker_rank_base + w);
    if (s->c.auth)
        fprintf(f, "ps server %d: auth=curve refused=%llu (handshakes without the --ps-auth key)\n", s->c.index,
                (unsigned long long)s->auth_refused);
    if (s->c.stall_warn > 0 && s->c.index == 0)
        fprintf(f, "ps server 0: stalls named=%llu (--stall-warn %.3g s)\n", (unsigned long long)s->stalls, s->c.stall_warn);
    fflush(f);
}
