/* server_impl.h: one parameter-server shard's state, shared by the files that make it up (not a
 * public header; the public one is server.h):
 *   server.c            lifecycle, message validation and dispatch, peer liveness, the poll loop
 *   server_rounds.c     the consistency rules: bsp rounds and slices, async/ssp applies, clocks
 *   server_stats.c      staleness, the metrics average service, reports, --stall-warn naming
 *   server_reply.c      the answers: headers, parameters (whole, or one slice to every worker)
 *   server_budget.c     the sample budget's shares
 *   bind.c              --bind resolution
 * The sockets, frames and CURVE are the transport's (transport.h, which draws who calls whom):
 * the loop in server.c asks it for each message and dispatches it; the transport calls nothing
 * of the server's. */
#ifndef PSRING_PS_SERVER_IMPL_H
#define PSRING_PS_SERVER_IMPL_H
#include "server.h"
#include "wire.h"
#include "transport.h"
#include "common/check.h"
#include "common/stall.h"
#include "common/half.h"
#include <stdatomic.h>

#define AVG_MAX 64

struct ps_server {
    ps_server_config_t c;
    ps_van_t *tr;
    size_t lo, len, spp;
    float *params, *state, *acc;
    uint16_t *half;
    uint64_t generation;              /* INIT and STATE_SET applied so far */
    /* per worker */
    double *last_heard;
    uint64_t *clock;
    uint8_t *lost, *done, *bye, *pushed, *f16, *pend_reply, *avg_in;
    uint64_t *pend_pull;              /* generation wanted + 1, 0 = none */
    /* the sample budget (wire.h), handed out by server 0 in shares of one step; every server
     * leaves a stopped worker out of its clocks */
    uint64_t budget, step_samples;    /* from worker 0's INIT/STATE_SET; 0 = none */
    uint64_t issued, counted;         /* samples in shares handed out, in shares pushed */
    uint64_t *share;                  /* samples of the share worker w holds, 0 = none */
    uint8_t *want_share, *stopped;
    int nlost;
    /* bsp round, per slice k of the shard (--ps-chunk-kb; one slice = the whole shard): the first
     * push of slice k is held as is (no copy) until the second arrives; slice k is applied and
     * answered as soon as every worker's slice k is in */
    size_t ck;                        /* slice length in elements (the last may be shorter) */
    int nck;
    ps_msg_t *held;
    uint8_t *have_held, *held_half;
    int *ck_pushed;                   /* pushes of slice k this round */
    uint8_t *got;                     /* [w * nck + k]: worker w's slice k arrived this round */
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
    uint64_t bytes_in, bytes_out, updates;
    uint64_t hist[PS_HIST], stale_n, stale_max, clock_gap;
    double stale_sum;
    int fatal;
    /* --stall-warn: when each worker last pushed, when the current bsp round began, who was named */
    double *last_push, round_t0;
    stall_watch_t stall;
    /* bsp wait: when worker w's ready header for this round arrived, and its wait, sent back in
     * the PARAMS header's lr field */
    double *ready_t, *push_wait;
};

static inline int server_worker_live(const ps_server_t *s, int w) { return !s->lost[w] && !s->bye[w]; }

/* slice k of the shard: [*off, *off + *n) */
static inline void server_slice_range(const ps_server_t *s, int k, size_t *off, size_t *n) {
    *off = (size_t)k * s->ck;
    *n = ps_slice_len(s->len, s->ck, *off);
}

/* server_rounds.c */
void server_wait_counter(ps_server_t *s, atomic_int *c);
void server_wait_inflight(ps_server_t *s);
void server_state_convert(const ps_server_t *s, float *slices, float *shard, int to_slices);
uint64_t server_global_clock(const ps_server_t *s);
void server_release_pulls(ps_server_t *s);
void server_release_ssp(ps_server_t *s);
/* a push that passed server_handle's checks; payload is the round's to keep (bsp) or release */
void server_handle_push(ps_server_t *s, int w, const ps_header_t *h, ps_msg_t *payload);

/* server_budget.c */
/* the flags of server 0's answer to worker w: hands w its next share if it asked for one */
uint16_t server_budget_flags(ps_server_t *s, int w);
/* worker w takes no more steps (stopped or lost): its unspent share goes back to the others */
void server_budget_release(ps_server_t *s, int w);

/* server_reply.c */
ps_header_t server_header(ps_server_t *s, int type, int dtype, uint64_t count);
void server_send_ctrl(ps_server_t *s, int w, int type);
void server_send_copy(ps_server_t *s, int w, ps_header_t *h, const void *a, size_t bytes);
void server_send_params(ps_server_t *s, int w, uint64_t clock);
void server_send_params_all(ps_server_t *s, int sl, uint64_t clock, int with_wait);

/* server_stats.c */
/* a gradient computed on parameters of clock read_clock, applied at global clock g */
void server_record_staleness(ps_server_t *s, uint64_t g, uint64_t read_clock);
void server_finish_avg(ps_server_t *s);
void server_send_stats(ps_server_t *s);
void server_check_stalls(ps_server_t *s, double now);

#endif
