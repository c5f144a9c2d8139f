/* worker_wait.c: a worker's wait for replies (worker_impl.h). Every message that arrives is
 * checked like on the server (the transport's header and frame checks, then sender, shard,
 * type, count and slice against what the wait expects); a bad one is counted, named once per
 * server and dropped, a heartbeat only says the server lives. A wait ends with a fatal error
 * when an awaited server has been silent (no reply and no heartbeat) for peer_timeout seconds
 * (worker_liveness.c). A parameter reply is copied into the caller's buffer here
 * (worker_on_params); the other replies' handlers are worker.c's. */
#include "worker_impl.h"
#include "common/half.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <math.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* a reply's header against what the wait expects: 0 or a wire error */
static int reply_check(ps_worker_t *w, const wait_t *wt, int s, const ps_received_t *r) {
    const ps_header_t *h = &r->h;
    uint64_t want = wt->fixed_count ? wt->fixed_count : w->len[s] * wt->count_per_len_mult;
    int err;
    if (h->sender != -1 - s) return PS_WIRE_ESENDER;
    if (h->shard != (uint32_t)s) return PS_WIRE_ESHARD;
    if ((err = ps_transport_check_frames(r))) return err;
    if (h->type != PS_MSG_HEARTBEAT && (h->type != wt->type || !wt->pending[s])) return PS_WIRE_ESTATE;
    if (h->type == wt->type && h->dtype != PS_DTYPE_NONE) {
        if (!wt->sliced && (h->offset != 0 || h->count != want)) return PS_WIRE_ERANGE;
        /* a slice reply: on the slice grid, inside the shard, each slice once */
        if (wt->sliced && !ps_slice_ok(w->len[s], w->ck[s], h->offset, h->count)) return PS_WIRE_ERANGE;
        if (wt->sliced && w->got[s][h->offset / w->ck[s]]) return PS_WIRE_ESTATE;
    }
    return 0;
}

/* every message waiting from server s (until its pending replies are in) */
static void drain_server(ps_worker_t *w, wait_t *wt, int s) {
    ps_received_t r;
    while (ps_transport_recv(w->tr, s, &r)) {
        w->last_heard[s] = timer_now();
        int err = r.err ? r.err : reply_check(w, wt, s, &r);
        if (err) ps_transport_reject(w->tr, s, err, &r.h);
        else if (r.h.type == wt->type) {
            if (r.have_payload) w->bytes_recv += r.h.payload_len;
            if (wt->sliced) w->got[s][r.h.offset / w->ck[s]] = 1;
            wt->pending[s]--;
            wt->remaining--;
            if (wt->fn) wt->fn(w, s, &r.h, &r.payload, wt->ctx);
        }
        ps_msg_release(&r.payload);
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
    int S = w->c.nservers, woke = 0;
    uint8_t ready[S];
    int rc = ps_transport_poll(w->tr, wt->pending, wt->wake_fd, timeout_ms, ready, &woke);
    if (rc < 0) return 0;
    if (rc == 0 && timeout_ms > 0) worker_check_silence(w, wt);
    for (int s = 0; s < S; s++)
        if (ready[s] && wt->pending[s]) drain_server(w, wt, s);
    if (woke) {   /* after the sockets, as the descriptor was polled last */
        uint64_t v;
        if (read(wt->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN) die("ps worker %d: eventfd: %s", w->c.rank, strerror(errno));
    }
    return woke;
}

/* a parameter reply (whole shard or one slice) into params (ctx) */
void worker_on_params(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {
    float *params = ctx;
    double t0 = timer_now();
    /* offset/count were checked against the shard (a slice, or all of it) by reply_check */
    float *dst = params + w->lo[s] + h->offset;
    if (h->dtype == PS_DTYPE_F16) half_to_float(dst, ps_msg_data(payload), h->count);
    else memcpy(dst, ps_msg_data(payload), h->count * 4);
    w->read_clock[s] = h->clock;
    if (s == 0 && w->asked)   /* server 0 hands out the budget; its flags say which share (wire.h) */
        w->share = h->flags & PS_FLAG_STOP ? 0 : h->flags & PS_FLAG_TAIL ? w->budget % w->step_samples : w->step_samples;
    /* the push's wait at that server (wire.h); the slowest server's counts */
    if (isfinite(h->wait_s) && h->wait_s > w->step_wait) w->step_wait = h->wait_s;
    timeline_event("pull", t0, timer_now());
}

/* Waits for one message of type from every server in [s0, s1); heartbeats and bad messages
 * are consumed on the way. Fatal when an awaited server stays silent past peer_timeout. */
void worker_wait_replies(ps_worker_t *w, int s0, int s1, int type, uint64_t count_per_len_mult,
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
