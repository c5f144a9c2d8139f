/* server_reply.c: what a parameter-server shard sends back (server_impl.h): control headers,
 * parameters to one worker (a copy: the shard may change before ZeroMQ sends it), a bsp slice's
 * new parameters to every worker (zero-copy, one buffer referenced by every reply; ck_inflight
 * says when it is free again). When to answer is server_rounds.c's; the frames are the
 * transport's. */
#include "server_impl.h"
#include <string.h>

ps_header_t server_header(ps_server_t *s, int type, int dtype, uint64_t count) {
    return ps_header_make(type, -1 - s->c.index, (uint32_t)s->c.index, dtype, count);
}

void server_send_ctrl(ps_server_t *s, int w, int type) {
    ps_header_t h = server_header(s, type, PS_DTYPE_NONE, 0);
    h.clock = s->round;
    ps_transport_send(s->tr, w, &h, NULL);
}

/* payload copied into a fresh message (used where the buffer may change before it is sent) */
void server_send_copy(ps_server_t *s, int w, ps_header_t *h, const void *a, size_t bytes) {
    ps_msg_t m;
    ps_msg_alloc(&m, bytes);
    memcpy(ps_msg_data(&m), a, bytes);
    ps_transport_send(s->tr, w, h, &m);
    s->bytes_out += bytes;
}

/* PARAMS to worker w, as f32 or f16; server 0's carry w's share of the budget */
void server_send_params(ps_server_t *s, int w, uint64_t clock) {
    int half = s->f16[w];
    ps_header_t h = server_header(s, PS_MSG_PARAMS, half ? PS_DTYPE_F16 : PS_DTYPE_F32, s->len);
    h.clock = clock;
    h.iteration = s->generation;
    h.flags = server_budget_flags(s, w);
    if (half) {
        half_from_float(s->half, s->params, s->len);
        server_send_copy(s, w, &h, s->half, s->len * 2);
    } else {
        server_send_copy(s, w, &h, s->params, s->len * 4);
    }
}

/* bsp: slice sl's new parameters to every worker, zero-copy (one buffer, reference-counted);
 * with_wait: the round's last slice, whose header carries each worker's wait */
void server_send_params_all(ps_server_t *s, int sl, uint64_t clock, int with_wait) {
    ps_msg_t base[2];
    int have[2] = { 0, 0 };
    size_t off, n;
    server_slice_range(s, sl, &off, &n);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!server_worker_live(s, w)) continue;
        int k = s->f16[w];
        if (!have[k]) {
            void *buf = k ? (void *)(s->half + off) : (void *)(s->params + off);
            size_t bytes = n * (k ? 2 : 4);
            if (k) half_from_float(s->half + off, s->params + off, n);
            ps_msg_wrap(&base[k], buf, bytes, &s->ck_inflight[sl]);
            have[k] = 1;
        }
        ps_header_t h = server_header(s, PS_MSG_PARAMS, k ? PS_DTYPE_F16 : PS_DTYPE_F32, n);
        h.offset = off;
        h.clock = clock;
        h.iteration = s->generation;
        /* this worker's wait (0 on all but the round's last slice) */
        h.wait_s = with_wait ? s->push_wait[w] : 0.0;
        ps_msg_t m;
        ps_msg_share(&m, &base[k]);
        s->bytes_out += ps_msg_size(&m);
        ps_transport_send(s->tr, w, &h, &m);
    }
    for (int k = 0; k < 2; k++) if (have[k]) ps_msg_release(&base[k]);
}
