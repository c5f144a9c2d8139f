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
 * This file: the shard's lifecycle, validation and dispatch of every message, peer liveness and
 * the poll loop, which asks the transport (transport.h) for each message; the rest is split by
 * concern (server_impl.h names the files).
 * Deliberately not here: MPI (the exchange does start-up and aborts), server replication. */
#include "server_impl.h"
#include "ps/placement.h"
#include "common/timer.h"
#include <string.h>

ps_server_t *ps_server_create(void *zctx, const ps_server_config_t *c, const char *endpoint,
                              char *bound, size_t boundlen) {
    ps_server_t *s = xcalloc(1, sizeof *s);
    s->c = *c;
    if (s->c.peer_timeout <= 0) s->c.peer_timeout = 10;
    int N = c->nworkers;
    ps_key_range(&c->optim, c->total, c->nservers, c->spare, c->index, &s->lo, &s->len);
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
    s->held = xcalloc(s->nck, sizeof(ps_msg_t));
    s->have_held = xcalloc(s->nck, 1);
    s->held_half = xcalloc(s->nck, 1);
    s->ck_pushed = xcalloc(s->nck, sizeof(int));
    s->got = xcalloc((size_t)N * s->nck, 1);
    s->ck_inflight = xcalloc(s->nck, sizeof(atomic_int));
    for (int k = 0; k < s->nck; k++) atomic_init(&s->ck_inflight[k], 0);
    s->last_heard = xcalloc(N, sizeof(double));
    s->clock = xcalloc(N, sizeof(uint64_t));
    s->pend_pull = xcalloc(N, sizeof(uint64_t));
    s->share = xcalloc(N, sizeof(uint64_t));
    uint8_t **flags[] = { &s->lost, &s->done, &s->bye, &s->pushed, &s->f16, &s->pend_reply, &s->avg_in,
                          &s->want_share, &s->stopped };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) *flags[i] = xcalloc(N, 1);
    double now = timer_now();
    for (int w = 0; w < N; w++) s->last_heard[w] = now;
    s->last_push = xcalloc(N, sizeof(double));
    for (int w = 0; w < N; w++) s->last_push[w] = now;
    s->ready_t = xcalloc(N, sizeof(double));
    s->push_wait = xcalloc(N, sizeof(double));
    stall_watch_init(&s->stall, N, c->index == 0 ? c->stall_warn : 0);

    /* hostile input: no frame may exceed the largest legitimate one (STATE_SET: params +
     * optimizer state of this shard) */
    ps_transport_config_t tc = { .index = c->index, .npeers = N, .peer_rank_base = c->worker_rank_base,
                                 .auth = c->auth, .max_frame = s->len * (1 + s->spp) * sizeof(float) + 4096 };
    s->tr = ps_transport_bind(zctx, &tc, endpoint, bound, boundlen);
    return s;
}

void ps_server_free(ps_server_t *s) {
    if (!s) return;
    for (int k = 0; k < s->nck; k++) if (s->have_held[k]) ps_msg_release(&s->held[k]);
    ps_transport_free(s->tr);
    server_wait_inflight(s);
    free(s->last_push); stall_watch_free(&s->stall);
    free(s->ready_t); free(s->push_wait);
    free(s->params); free(s->state); free(s->acc); free(s->half);
    free(s->held); free(s->have_held); free(s->held_half); free(s->ck_pushed); free(s->got);
    free(s->ck_inflight);
    free(s->last_heard); free(s->clock); free(s->pend_pull);
    free(s->lost); free(s->done); free(s->bye); free(s->pushed); free(s->f16);
    free(s->pend_reply); free(s->avg_in);
    free(s->share); free(s->want_share); free(s->stopped);
    free(s);
}

uint64_t ps_server_rejected(const ps_server_t *s) { return ps_transport_rejected(s->tr); }

/* a message's checks in the order a hostile peer's faults are named: what the header alone says
 * (the transport decoded it), who sent it, its frames, then what needs this shard's context;
 * 0 when it may be handled */
static int server_check(ps_server_t *s, const ps_received_t *r) {
    int w = r->peer, err;
    const ps_header_t *h = &r->h;
    if (!r->have_header) { ps_transport_reject(s->tr, w, PS_WIRE_EFRAMES, NULL); return -1; }
    if (r->err) { ps_transport_reject(s->tr, w, r->err, h); return -1; }
    if (w < 0) { ps_transport_reject(s->tr, w, PS_WIRE_ESENDER, h); return -1; }
    s->last_heard[w] = timer_now();
    if (h->sender != w) err = PS_WIRE_ESENDER;
    else if ((err = ps_transport_check_frames(r))) {}
    else if (h->shard != (uint32_t)s->c.index) err = PS_WIRE_ESHARD;
    else if (r->hb && h->type != PS_MSG_HEARTBEAT) err = PS_WIRE_ESTATE;
    if (err) { ps_transport_reject(s->tr, w, err, h); return -1; }
    return 0;
}

/* STATE: the shard's parameters, then its optimizer state shard-major, built in the message */
static void send_state(ps_server_t *s, int w) {
    size_t full = s->len * (1 + s->spp);
    ps_header_t r = server_header(s, PS_MSG_STATE, PS_DTYPE_F32, full);
    ps_msg_t m;
    ps_msg_alloc(&m, full * 4);
    float *q = ps_msg_data(&m);
    memcpy(q, s->params, s->len * 4);
    server_state_convert(s, s->state, q + s->len, 0);
    ps_transport_send(s->tr, w, &r, &m);
    s->bytes_out += full * 4;
}

/* INIT or STATE_SET: the shard's parameters (and optimizer state) replaced, a new generation */
static void set_params(ps_server_t *s, int w, const ps_header_t *h, ps_msg_t *payload) {
    size_t want = h->type == PS_MSG_INIT ? s->len : s->len * (1 + s->spp);
    if (h->offset != 0 || h->count != want) { ps_transport_reject(s->tr, w, PS_WIRE_ERANGE, h); return; }
    server_wait_inflight(s);
    const float *p = ps_msg_data(payload);
    memcpy(s->params, p, s->len * 4);
    if (h->type == PS_MSG_INIT) memset(s->state, 0, s->len * s->spp * 4);
    else server_state_convert(s, s->state, (float *)(p + s->len), 1);
    /* the sample budget and a step's samples (wire.h); only server 0 hands it out, and only
     * async/ssp end on it (bsp's rounds keep their epochs) */
    if (s->c.index == 0 && s->c.sync != SYNC_BSP && h->budget > 0 && h->step_samples > 0) {
        s->budget = h->budget;
        s->step_samples = h->step_samples;
    }
    s->generation++;
    server_send_ctrl(s, w, PS_MSG_ACK);
    server_release_pulls(s);
}

static void server_handle(ps_server_t *s, ps_received_t *r) {
    if (server_check(s, r)) return;
    int w = r->peer, hb_socket = r->hb, have_payload = r->have_payload;
    ps_header_t h = r->h;
    ps_msg_t *payload = &r->payload;
    if (have_payload) s->bytes_in += h.payload_len;
    if (s->lost[w]) return; /* dropped for silence (async); it does not come back */
    switch (h.type) {
    case PS_MSG_HEARTBEAT:
        /* bsp: on the push socket, for this round, it says "my step's compute is done" */
        if (!hb_socket && s->c.sync == SYNC_BSP && h.iteration == s->round && s->ready_t[w] == 0) s->ready_t[w] = timer_now();
        if (!hb_socket && (h.flags & PS_FLAG_STOPPED) && !s->stopped[w]) {
            /* out of the clocks, so ssp does not hold the others back for a worker that is done */
            s->stopped[w] = 1;
            server_budget_release(s, w);
            if (s->c.sync == SYNC_SSP) server_release_ssp(s);
        }
        return;
    case PS_MSG_INIT:
    case PS_MSG_STATE_SET:
        set_params(s, w, &h, payload);
        return;
    case PS_MSG_PULL:
        s->f16[w] = (h.flags & PS_FLAG_F16) != 0;
        if (h.flags & PS_FLAG_SHARE) s->want_share[w] = 1;   /* answered (in server_send_params) */
        if (s->generation >= h.iteration && s->generation > 0) server_send_params(s, w, server_global_clock(s));
        else s->pend_pull[w] = h.iteration + 1;
        return;
    case PS_MSG_PUSH:
        if (s->generation == 0) { ps_transport_reject(s->tr, w, PS_WIRE_ESTATE, &h); return; }
        /* a slice: on the grid, inside the shard, exactly its length (one slice = the shard) */
        if (!ps_slice_ok(s->len, s->ck, h.offset, h.count)) { ps_transport_reject(s->tr, w, PS_WIRE_ERANGE, &h); return; }
        server_handle_push(s, w, &h, payload);
        return;
    case PS_MSG_STATE_GET:
        send_state(s, w);
        return;
    case PS_MSG_AVG: {
        if (s->c.index != 0 || s->avg_in[w]) { ps_transport_reject(s->tr, w, PS_WIRE_ESTATE, &h); return; }
        if (h.count > AVG_MAX || (s->avg_count > 0 && (int)h.count != s->avg_n)) { ps_transport_reject(s->tr, w, PS_WIRE_ECOUNT, &h); return; }
        /* small messages live inside ZeroMQ's message struct, 4- but not 8-byte aligned: copy, do not cast
         * (a misaligned double load; docs/results/lab-notes-src.md) */
        double v[AVG_MAX];
        memcpy(v, ps_msg_data(payload), h.count * sizeof(double));
        s->avg_n = (int)h.count;
        for (int i = 0; i < s->avg_n; i++) s->avg_sum[i] += v[i];
        s->avg_in[w] = 1;
        s->avg_count++;
        server_finish_avg(s);
        return;
    }
    case PS_MSG_DONE:
        s->done[w] = 1;
        if (s->c.sync == SYNC_SSP) server_release_ssp(s);
        server_send_stats(s);
        return;
    case PS_MSG_BYE:
        s->bye[w] = 1;
        server_finish_avg(s);
        return;
    default:
        ps_transport_reject(s->tr, w, PS_WIRE_ESTATE, &h);
    }
}

/* receives and handles one message; 0 when none was waiting */
static int server_recv_one(ps_server_t *s) {
    ps_received_t r;
    if (!ps_transport_recv(s->tr, 0, &r)) return 0;
    server_handle(s, &r);
    ps_msg_release(&r.payload);
    return 1;
}

static int check_peers(ps_server_t *s) {
    double now = timer_now();
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!server_worker_live(s, w)) continue;
        double quiet = now - s->last_heard[w];
        if (quiet <= s->c.peer_timeout) continue;
        char line[256];
        if (s->c.sync == SYNC_ASYNC) {
            s->lost[w] = 1;
            s->nlost++;
            server_budget_release(s, w);   /* its unspent share goes to the others */
            fprintf(stderr, "psring: ps server %d: worker rank %d (mpi rank %d) silent for %.1f s; "
                    "dropping it and going on without it (async)\n", s->c.index, w,
                    s->c.worker_rank_base + w, quiet);
            server_finish_avg(s);
            server_send_stats(s);
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
        for (int w = 0; w < s->c.nworkers; w++) if (server_worker_live(s, w)) all_gone = 0;
        if (all_gone) break;
        uint8_t ready;
        if (ps_transport_poll(s->tr, NULL, -1, slice_ms, &ready, NULL) > 0) {
            for (int k = 0; k < 256 && ready && server_recv_one(s); k++) {}
            ps_transport_serve_auth(s->tr);
        }
        double now = timer_now();
        if (now - last_hb >= hb_ivl) {
            for (int w = 0; w < s->c.nworkers; w++)
                if (server_worker_live(s, w)) server_send_ctrl(s, w, PS_MSG_HEARTBEAT);
            last_hb = now;
        }
        if (now - last_check >= 0.05) {
            last_check = now;
            server_check_stalls(s, now);
            if (check_peers(s)) return -1;
        }
    }
    return 0;
}
