/* worker_step.c: a worker's step (worker_impl.h): which slice of which shard goes when, and
 * --overlap's communication thread.
 *
 * A slice may go once its gradient is final (all of it, without --overlap; with it, the layers
 * backward has finished, last layer first) and its server's credit allows. Each server's slices
 * go in one order that every worker shares: by the ready range they became final in (the
 * trainer's grad_ready calls, the same on every worker), lowest offset first within one. An
 * order that followed each worker's own timing could deadlock under credit: worker A's two
 * credits spent on slices 62 and 63, worker B's on 40 and 41, and the server answers a slice
 * only when every worker sent it. Within a range the lowest goes first because the next forward
 * needs the first layer first and a slice's answer follows its push (BytePS' priority). Every
 * answer frees one credit of its server.
 *
 *   trainer thread   backward: L3 ...... L2 .......... L1 ............ | step(): waits
 *                              |ready(L3)  |ready(L2)    |ready(L1)    |
 *   comm thread      ..........push L3.....push L2.......push L1.......|...answers...| done
 *
 * Without --overlap the trainer's thread runs the same machine itself, inside step(), with one
 * range: the whole gradient. */
#include "worker_impl.h"
#include "common/half.h"
#include "common/timer.h"
#include "common/timeline.h"
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* slice k of server s's shard of this step's gradient, as one push */
static void push_slice(ps_worker_t *w, int s, int k) {
    step_state_t *st = &w->st;
    size_t off = (size_t)k * w->ck[s], n = ps_slice_len(w->len[s], w->ck[s], off);
    int half = w->c.fp16;
    ps_header_t h = worker_header(w, s, PS_MSG_PUSH, half ? PS_DTYPE_F16 : PS_DTYPE_F32, n);
    h.offset = off;
    h.iteration = w->clock;
    h.clock = w->read_clock[s];
    h.lr = st->lr;
    if (w->budget) h.flags = PS_FLAG_SHARE;   /* this push spends a share and asks for the next */
    size_t at = w->lo[s] + off;
    if (st->t_push == 0) st->t_push = timer_now();
    if (half) {
        half_from_float(w->half + at, st->grads + at, n);
        worker_send_zero_copy(w, s, &h, w->half + at, n * 2);
    } else {
        worker_send_zero_copy(w, s, &h, st->grads + at, n * 4);
    }
}

/* bsp: "my compute is done", a header alone on the push connection (the servers' wait) */
static void say_ready(ps_worker_t *w) {
    if (w->st.said_ready || !w->c.bsp) return;
    w->st.said_ready = 1;
    for (int s = 0; s < w->c.nservers; s++) {
        ps_header_t h = worker_header(w, s, PS_MSG_HEARTBEAT, PS_DTYPE_NONE, 0);
        h.iteration = w->clock;
        worker_send_header(w, s, &h);
    }
}

/* gradient [from, total) is final: the slices lying wholly in it join their server's order,
 * lowest first */
static void mark_final(ps_worker_t *w, size_t from) {
    step_state_t *st = &w->st;
    for (int s = 0; s < w->c.nservers; s++) {
        int top = w->nchunks[s] - st->nready[s], k0 = top;   /* the final slices are a suffix */
        while (k0 > 0 && w->lo[s] + (size_t)(k0 - 1) * w->ck[s] >= from) k0--;
        for (int k = k0; k < top; k++) st->order[s][st->nready[s]++] = k;
    }
}

/* server s's next slice in its order, if final and its credit allows; 1 when one went */
static int push_next(ps_worker_t *w, int s) {
    step_state_t *st = &w->st;
    if (w->c.credit > 0 && st->fly[s] >= w->c.credit) return 0;
    if (st->nsent[s] == st->nready[s]) return 0;
    st->fly[s]++;
    push_slice(w, s, st->order[s][st->nsent[s]++]);
    return 1;
}

/* every slice that may go, one per server in turn: all servers get their first slice first */
static void pump(ps_worker_t *w) {
    for (int any = 1; any;) {
        any = 0;
        for (int s = 0; s < w->c.nservers; s++) any |= push_next(w, s);
    }
}

/* an answer to a slice: its parameters in, and its server's next slice out (a credit back) */
static void on_step_params(ps_worker_t *w, int s, const ps_header_t *h, ps_msg_t *payload, void *ctx) {
    (void)ctx;
    worker_on_params(w, s, h, payload, w->st.params);
    w->st.fly[s]--;
    push_next(w, s);
}

static void step_begin(ps_worker_t *w, float *params, const float *grads, float lr, int wake_fd) {
    step_state_t *st = &w->st;
    st->params = params;
    st->grads = grads;
    st->lr = lr;
    st->said_ready = 0;
    st->t_push = st->t_pushed = 0;
    for (int s = 0; s < w->c.nservers; s++) {
        st->nready[s] = st->nsent[s] = st->fly[s] = 0;
    }
    st->wait = (wait_t){ PS_MSG_PARAMS, 1, 0, 1, on_step_params, NULL, st->pending, 0, wake_fd };
    worker_wait_begin(w, &st->wait, 0, w->c.nservers);
    w->step_wait = 0;
    w->asked = w->budget != 0;   /* the answers hand out the next share */
    w->share = 0;
}

/* the gradient is final from `from` on: push what may go (from == 0: all of it, compute done) */
static void step_final(ps_worker_t *w, size_t from) {
    if (from == 0) say_ready(w);
    mark_final(w, from);
    pump(w);
    if (from == 0) w->st.t_pushed = timer_now();
}

/* after the last answer: the caller's buffers back, the step's timeline */
static void step_end(ps_worker_t *w) {
    step_state_t *st = &w->st;
    w->asked = 0;
    worker_wait_inflight(w);   /* grads/half are the caller's again */
    double t_end = timer_now();
    double t_push = st->t_push ? st->t_push : t_end, t_wait = st->t_pushed ? st->t_pushed : t_end;
    if (w->step_wait > t_end - t_push) w->step_wait = t_end - t_push;
    timeline_event("push", t_push, t_wait);
    /* the duration the server measured; placed right after the push, where it begins */
    timeline_event("wait", t_wait, t_wait + (w->step_wait < t_end - t_wait ? w->step_wait : t_end - t_wait));
    w->clock++;
}

/* ---- --overlap: the communication thread ---------------------------------------------------- */

static void wake(overlap_t *ov) {
    uint64_t one = 1;
    if (write(ov->efd, &one, sizeof one) < 0 && errno != EAGAIN) die("ps worker: eventfd: %s", strerror(errno));
}

/* one step on the thread: push as ranges become final, take answers, until every one is in */
static void overlap_run(ps_worker_t *w) {
    overlap_t *ov = &w->ov;
    step_begin(w, ov->params, ov->grads, ov->lr, ov->efd);
    for (int seen = 0;;) {
        pthread_mutex_lock(&ov->ct.mu);   /* from[] may grow (and move) meanwhile */
        int have = seen < ov->nfrom;
        size_t from = have ? ov->from[seen] : 0;
        pthread_mutex_unlock(&ov->ct.mu);
        if (have) {
            step_final(w, from);
            seen++;
            continue;
        }
        if (w->st.wait.remaining == 0) break;
        worker_wait_poll(w, &w->st.wait, 50);
    }
}

static void *overlap_main(void *arg) {
    ps_worker_t *w = arg;
    overlap_t *ov = &w->ov;
    pthread_mutex_lock(&ov->ct.mu);
    for (;;) {
        while (!ov->ct.quit && (!ov->job || ov->done)) pthread_cond_wait(&ov->ct.cv_job, &ov->ct.mu);
        if (ov->ct.quit) break;
        pthread_mutex_unlock(&ov->ct.mu);
        overlap_run(w);
        pthread_mutex_lock(&ov->ct.mu);
        ov->done = 1;
        pthread_cond_signal(&ov->ct.cv_done);
    }
    pthread_mutex_unlock(&ov->ct.mu);
    return NULL;
}

/* caller holds ov->ct.mu; from only falls within a step (the ranges come last layer first) */
static void add_range(ps_worker_t *w, size_t from) {
    overlap_t *ov = &w->ov;
    if (ov->nfrom && from >= ov->from[ov->nfrom - 1]) return;
    if (ov->nfrom == ov->capfrom) {   /* the thread reads from[] under the lock only */
        int cap = ov->capfrom ? 2 * ov->capfrom : 16;
        size_t *f = xmalloc((size_t)cap * sizeof *f);
        if (ov->nfrom) memcpy(f, ov->from, (size_t)ov->nfrom * sizeof *f);
        free(ov->from);
        ov->from = f;
        ov->capfrom = cap;
    }
    ov->from[ov->nfrom++] = from;
}

void ps_worker_ready(ps_worker_t *w, float *params, const float *grads, size_t from, float lr) {
    overlap_t *ov = &w->ov;
    if (!ov->ct.started) die("ps worker %d: a ready range without --overlap", w->c.rank);
    pthread_mutex_lock(&ov->ct.mu);
    if (!ov->job) {   /* the step's first ready range: the sockets are the thread's from here */
        ov->job = 1;
        ov->done = 0;
        ov->params = params;
        ov->grads = grads;
        ov->lr = lr;
        ov->nfrom = 0;
        pthread_cond_signal(&ov->ct.cv_job);
    } else if (ov->params != params || ov->grads != grads) {
        die("ps worker %d: one step got two gradient or parameter buffers", w->c.rank);
    }
    add_range(w, from);
    pthread_mutex_unlock(&ov->ct.mu);
    wake(ov);
}

/* the step's end on the trainer's thread: everything final, then wait for the last answer */
static void overlap_step(ps_worker_t *w, float *params, const float *grads, float lr) {
    overlap_t *ov = &w->ov;
    ps_worker_ready(w, params, grads, 0, lr);
    pthread_mutex_lock(&ov->ct.mu);
    while (!ov->done) pthread_cond_wait(&ov->ct.cv_done, &ov->ct.mu);
    ov->job = 0;
    pthread_mutex_unlock(&ov->ct.mu);
}

int ps_worker_step(ps_worker_t *w, float *params, const float *grads, float lr) {
    if (w->ov.ct.started) {
        overlap_step(w, params, grads, lr);
    } else {
        step_begin(w, params, grads, lr, -1);
        step_final(w, 0);
        while (w->st.wait.remaining > 0) worker_wait_poll(w, &w->st.wait, 50);
    }
    step_end(w);
    return 0;
}

void worker_step_init(ps_worker_t *w) {
    int S = w->c.nservers;
    step_state_t *st = &w->st;
    st->order = xcalloc(S, sizeof(int *));
    for (int s = 0; s < S; s++) st->order[s] = xcalloc((size_t)w->nchunks[s] + 1, sizeof(int));
    st->nready = xcalloc(S, sizeof(int));
    st->nsent = xcalloc(S, sizeof(int));
    st->fly = xcalloc(S, sizeof(int));
    st->pending = xcalloc(S, sizeof(int));
    if (!w->c.overlap) return;
    overlap_t *ov = &w->ov;
    ov->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ov->efd < 0) die("ps worker %d: eventfd: %s", w->c.rank, strerror(errno));
    comm_thread_start(&ov->ct, overlap_main, w, "ps worker");
}

void worker_step_free(ps_worker_t *w) {
    overlap_t *ov = &w->ov;
    if (ov->ct.started) {
        comm_thread_stop(&ov->ct);
        close(ov->efd);
    }
    step_state_t *st = &w->st;
    for (int s = 0; st->order && s < w->c.nservers; s++) free(st->order[s]);
    free(st->order); free(st->nready); free(st->nsent); free(st->fly); free(st->pending);
    free(ov->from);
    st->order = NULL;
}
