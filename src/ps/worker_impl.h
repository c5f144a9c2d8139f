/* worker_impl.h: the PS worker's insides, shared by its files (not part of the API):
 *   worker.c           lifecycle and every call but the step
 *   worker_wait.c      the wait for replies: each message checked, counted and handed on
 *   worker_liveness.c  the heartbeat thread, and the silence that ends a wait
 *   worker_send.c      requests out: headers, and payloads without a copy
 *   worker_step.c      the bsp/async step: which slices go when (credit, priority) and
 *                      --overlap's communication thread, which runs the step while backward
 *                      continues
 * The sockets and frames are the transport's (transport.h). */
#ifndef PSRING_PS_WORKER_IMPL_H
#define PSRING_PS_WORKER_IMPL_H
#include "worker.h"
#include "wire.h"
#include "transport.h"
#include "common/check.h"
#include "common/comm_thread.h"
#include <pthread.h>
#include <stdatomic.h>

typedef void (*reply_fn)(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx);

/* a wait for one reply of `type` from each pending server (sliced: one per slice of its shard) */
typedef struct {
    int type;
    uint64_t count_per_len_mult, fixed_count;   /* the payload's count: fixed, or the shard's times mult */
    int sliced;
    reply_fn fn;
    void *ctx;
    int *pending;              /* per server: replies still to come */
    int remaining;
    int wake_fd;               /* -1, or a descriptor polled beside the sockets (an eventfd) */
} wait_t;

/* the step now on its way: which slices are final, pushed and answered */
typedef struct {
    float *params;             /* the answers go here */
    const float *grads;
    float lr;
    int **order;               /* per server: its slices in the order they go, as they became final
                                * (the final ones are always a suffix of the shard's slices) */
    int *nready, *nsent;       /* per server: slices in order[] / pushed */
    int *fly;                  /* per server: slices pushed and not yet answered */
    int *pending;              /* the wait's per-server counts */
    int said_ready;            /* the ready header went out */
    double t_push, t_pushed;   /* the first push; every slice final and pushed as far as credit allows */
    wait_t wait;
} step_state_t;

/* --overlap: the communication thread. The trainer's thread only says how much of the gradient
 * is final (ps_worker_ready) and waits for the end (ps_worker_step); the sockets are the
 * thread's from the first ready range to the step's end (the mutex is the memory barrier
 * ZeroMQ asks for when a socket changes threads), the trainer's otherwise. */
typedef struct {
    comm_thread_t ct;          /* its thread, mutex, conditions, quit (src/common/comm_thread.h) */
    int efd;                   /* eventfd: a new ready range wakes the thread out of its poll */
    int job, done;
    float *params;
    const float *grads;
    float lr;
    size_t *from;              /* this step's ready ranges: gradient [from[i], total) final */
    int nfrom, capfrom;
} overlap_t;

struct ps_worker {
    ps_worker_config_t c;
    void *ctx;                 /* the ZeroMQ context, for the heartbeat thread's transport */
    ps_van_t *tr;        /* a DEALER to each server */
    char **endpoints;
    size_t *lo, *len;
    size_t *ck;                /* bsp slice of server s's shard in elements (the shard when unchunked) */
    int *nchunks;              /* slices of server s's shard */
    uint8_t **got;             /* per server: slice k of this step's reply arrived */
    double *last_heard;
    uint64_t *read_clock;      /* global clock of the parameters last received from server s */
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
    uint64_t bytes_sent, bytes_recv;
    step_state_t st;
    overlap_t ov;
};

/* worker_send.c */
ps_header_t worker_header(ps_worker_t *w, int s, int type, int dtype, uint64_t count);
/* a header alone to server s */
void worker_send_header(ps_worker_t *w, int s, const ps_header_t *h);
/* header + zero-copy payload (buf must stay unchanged until worker_wait_inflight) */
void worker_send_zero_copy(ps_worker_t *w, int s, const ps_header_t *h, const void *buf, size_t bytes);
/* worker_wait.c: until ZeroMQ let go of every zero-copy payload */
void worker_wait_inflight(ps_worker_t *w);
/* worker_wait.c: a parameter reply into params (ctx) */
void worker_on_params(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx);
/* worker_wait.c: servers [s0, s1) pending (sliced: every slice; their got[] cleared) */
void worker_wait_begin(ps_worker_t *w, wait_t *wt, int s0, int s1);
/* one poll of the pending servers (and wake_fd) for up to timeout_ms, handling what arrived;
 * fatal when an awaited server has been silent for peer_timeout. 1 when wake_fd fired. */
int worker_wait_poll(ps_worker_t *w, wait_t *wt, long timeout_ms);
/* a whole wait: one reply of type from every server in [s0, s1), each handed to fn; its count is
 * fixed_count, or the shard's length times count_per_len_mult */
void worker_wait_replies(ps_worker_t *w, int s0, int s1, int type, uint64_t count_per_len_mult,
                         uint64_t fixed_count, reply_fn fn, void *ctx);
/* worker_liveness.c: the heartbeat thread; ending a wait on an awaited server's silence */
void worker_liveness_start(ps_worker_t *w);
void worker_liveness_stop(ps_worker_t *w);
void worker_check_silence(ps_worker_t *w, const wait_t *wt);
/* worker_step.c: the step's buffers; --overlap's thread (started when c.overlap) */
void worker_step_init(ps_worker_t *w);
void worker_step_free(ps_worker_t *w);

#endif
