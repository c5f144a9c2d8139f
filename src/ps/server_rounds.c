/* server_rounds.c: the consistency rules of a parameter-server shard (server_impl.h): bsp
 * rounds applied slice by slice, async/ssp applies on arrival, clocks, and when a worker's answer
 * may go out (see server.c's header for the rules themselves). */
#include "server_impl.h"
#include "common/timeline.h"
#include "common/timer.h"
#include <string.h>

void server_wait_counter(ps_server_t *s, atomic_int *c) {
    double t0 = timer_now();
    while (atomic_load(c) > 0) {
        if (timer_now() - t0 > s->c.peer_timeout + 5)
            die("ps server %d: replies still unsent after %.1f s", s->c.index, timer_now() - t0);
        timer_sleep_us(20);
    }
}

/* ZeroMQ may still be sending a zero-copy reply out of params/half: wait before changing them. */
void server_wait_inflight(ps_server_t *s) {
    for (int k = 0; k < s->nck; k++) server_wait_counter(s, &s->ck_inflight[k]);
}

/* The optimizer state is kept slice-major (slice k: spp blocks of its own length) so that each
 * slice's optim_step_at sees the count-length blocks it expects; on the wire (STATE, STATE_SET)
 * and in checkpoints it is shard-major (spp blocks of len). One slice: both are the same. */
void server_state_convert(const ps_server_t *s, float *slices, float *shard, int to_slices) {
    for (int k = 0; k < s->nck; k++) {
        size_t off, n;
        server_slice_range(s, k, &off, &n);
        for (size_t j = 0; j < s->spp; j++) {
            float *a = slices + s->spp * off + j * n, *b = shard + j * s->len + off;
            if (to_slices) memcpy(a, b, n * 4);
            else memcpy(b, a, n * 4);
        }
    }
}

uint64_t server_global_clock(const ps_server_t *s) {
    uint64_t g = UINT64_MAX;
    for (int w = 0; w < s->c.nworkers; w++)
        if (!s->lost[w] && !s->done[w] && !s->stopped[w] && s->clock[w] < g) g = s->clock[w];
    if (g == UINT64_MAX) { /* everyone done: the largest clock */
        g = 0;
        for (int w = 0; w < s->c.nworkers; w++) if (s->clock[w] > g) g = s->clock[w];
    }
    return g;
}

void server_release_pulls(ps_server_t *s) {
    for (int w = 0; w < s->c.nworkers; w++)
        if (s->pend_pull[w] && s->generation >= s->pend_pull[w] - 1 && server_worker_live(s, w)) {
            s->pend_pull[w] = 0;
            server_send_params(s, w, server_global_clock(s));
        }
}

/* ssp: answer the pushes of workers that are now within K clocks of the slowest */
void server_release_ssp(ps_server_t *s) {
    uint64_t g = server_global_clock(s);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!s->pend_reply[w] || !server_worker_live(s, w)) continue;
        if (s->clock[w] <= g + (uint64_t)s->c.staleness) {
            s->pend_reply[w] = 0;
            uint64_t gap = s->clock[w] - (s->clock[w] < g ? s->clock[w] : g);
            if (gap > s->clock_gap) s->clock_gap = gap;
            server_send_params(s, w, g);
        }
    }
}

/* bsp: every worker's slice k is in (summed, scaled into acc): step that sub-range and answer
 * it; the round ends with its last slice. The optimizer is element-wise (SGD, Adam), so
 * stepping slice by slice gives the same numbers as one step over the shard. A summation
 * service (sum_only) answers with the mean gradient itself: the reply buffer (params) takes acc,
 * and the workers step. */
static void apply_slice(ps_server_t *s, int k) {
    double t0 = timer_now();
    size_t off, n;
    server_slice_range(s, k, &off, &n);
    server_wait_counter(s, &s->ck_inflight[k]);  /* last round's replies of this slice are out */
    if (s->c.sum_only) memcpy(s->params + off, s->acc + off, n * sizeof(float));
    else optim_step_at(&s->c.optim, s->params + off, s->acc + off, s->state + s->spp * off, n, s->round_lr, s->lo + off);
    s->apply_s += timer_now() - t0;
    timeline_event(s->c.sum_only ? "server-sum" : "server-apply", t0, timer_now());
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
            s->ready_t[w] = 0;
            if (!server_worker_live(s, w)) continue;
            s->clock[w] = s->round;
            s->hist[0]++; /* every gradient of the round was computed on version round-1: staleness 0 */
            s->stale_n++;
        }
    }
    server_send_params_all(s, k, end ? s->round : s->round + 1, end);
}

/* Wait of each worker = how long before the round's last worker it was ready, on this server's
 * clock: each worker says it is ready (a header alone, before its first slice, on the same
 * connection) when its compute is done. The skew of those arrivals is the wait for the slowest,
 * as the ring's barrier measures it; the last worker's push bytes still on the wire are
 * exchange, not wait. */
static void bsp_note_waits(ps_server_t *s) {
    double last_ready = 0;
    for (int v = 0; v < s->c.nworkers; v++)
        if (!s->lost[v] && s->ready_t[v] > last_ready) last_ready = s->ready_t[v];
    for (int v = 0; v < s->c.nworkers; v++)
        s->push_wait[v] = s->ready_t[v] > 0 ? last_ready - s->ready_t[v] : 0;
}

/* slice k's push into acc: the mean is formed exactly as (((g0 + g1) + g2) ...) * (1/N) per
 * element, in the order the pushes of that slice arrived, fused into as few passes over memory
 * as possible; multiplying by 1.0f where it is not the last push is exact */
static void bsp_accumulate(ps_server_t *s, int k, const ps_header_t *h, ps_msg_t *payload, int half, int last) {
    const void *p = ps_msg_data(payload);
    float f = last ? 1.0f / (float)s->c.nworkers : 1.0f;
    size_t n = h->count;
    float *restrict acc = s->acc + h->offset;
    if (s->ck_pushed[k] == 0 && !last) {
        ps_msg_move(&s->held[k], payload); /* keep it; combine with the next push */
        s->have_held[k] = 1;
        s->held_half[k] = (uint8_t)half;
    } else if (s->ck_pushed[k] == 0) {
        if (half) half_to_float(acc, p, n);
        else memcpy(acc, p, n * 4);
        for (size_t i = 0; i < n; i++) acc[i] *= f;
    } else {
        const void *hp = s->have_held[k] ? ps_msg_data(&s->held[k]) : NULL;
        if (hp && !half && !s->held_half[k]) {
            const float *restrict a = hp, *restrict b = p;
            for (size_t i = 0; i < n; i++) acc[i] = (a[i] + b[i]) * f;
        } else {
            if (hp) {
                if (s->held_half[k]) half_to_float(acc, hp, n);
                else memcpy(acc, hp, n * 4);
            }
            if (half) half_add_to_float(acc, p, n);
            else {
                const float *restrict b = p;
                for (size_t i = 0; i < n; i++) acc[i] += b[i];
            }
            if (last) for (size_t i = 0; i < n; i++) acc[i] *= f;
        }
        if (s->have_held[k]) { ps_msg_release(&s->held[k]); s->have_held[k] = 0; }
    }
}

/* bsp: one slice of this round's push; the slice is applied once all N are in */
static void bsp_push(ps_server_t *s, int w, const ps_header_t *h, ps_msg_t *payload, int half) {
    /* offset/count are on the slice grid (checked in handle); each slice once per round */
    int k = (int)(h->offset / s->ck);
    if (h->iteration != s->round || s->got[(size_t)w * s->nck + k]) { ps_transport_reject(s->tr, w, PS_WIRE_ESTATE, h); return; }
    int need = 0;
    for (int v = 0; v < s->c.nworkers; v++) need += !s->lost[v];
    int last = s->ck_pushed[k] + 1 >= need;                         /* slice k complete */
    int round_last = s->round_msgs + 1 >= need * s->nck;          /* the round's last push */
    if (round_last) bsp_note_waits(s);
    bsp_accumulate(s, k, h, payload, half, last);
    s->got[(size_t)w * s->nck + k] = 1;
    if (!s->pushed[w]) { s->pushed[w] = 1; s->npushed++; }
    s->ck_pushed[k]++;
    s->round_msgs++;
    s->round_lr = h->lr;
    if (last) apply_slice(s, k);
}

/* async / ssp: apply the whole push now */
static void async_push(ps_server_t *s, int w, const ps_header_t *h, const void *p, int half) {
    if (s->budget) {   /* server 0 under a budget: the push spends its sender's share */
        if (!s->share[w] || s->stopped[w]) { ps_transport_reject(s->tr, w, PS_WIRE_ESTATE, h); return; }
        s->counted += s->share[w];
        s->share[w] = 0;
        s->want_share[w] = (h->flags & PS_FLAG_SHARE) != 0;
    }
    double t0 = timer_now();
    float scale = 1.0f / (float)s->c.nworkers;
    if (half) half_to_float(s->acc, p, s->len);
    else memcpy(s->acc, p, s->len * 4);
    for (size_t i = 0; i < s->len; i++) s->acc[i] *= scale;
    server_record_staleness(s, server_global_clock(s), h->clock);
    optim_step_at(&s->c.optim, s->params, s->acc, s->state, s->len, h->lr, s->lo);
    s->apply_s += timer_now() - t0;
    timeline_event("server-apply", t0, timer_now());
    s->updates++;
    s->clock[w]++;
    if (s->c.sync == SYNC_ASYNC) {
        server_send_params(s, w, server_global_clock(s));
    } else {
        s->pend_reply[w] = 1;
        server_release_ssp(s);
    }
}

void server_handle_push(ps_server_t *s, int w, const ps_header_t *h, ps_msg_t *payload) {
    s->last_push[w] = timer_now();
    if (stall_watch_clear(&s->stall, w))   /* named only on server 0 (stall_watch_init) */
        fprintf(stderr, "psring: ps server 0: worker rank %d (mpi rank %d) pushed again\n", w, s->c.worker_rank_base + w);
    if (s->c.sync == SYNC_BSP && s->round_msgs == 0) s->round_t0 = s->last_push[w];
    int half = h->dtype == PS_DTYPE_F16;
    s->f16[w] = (uint8_t)half;
    if (s->c.sync == SYNC_BSP) bsp_push(s, w, h, payload, half);
    else async_push(s, w, h, ps_msg_data(payload), half);
}
