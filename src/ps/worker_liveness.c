/* worker_liveness.c: how a worker and its servers tell a busy peer from a dead one
 * (worker_impl.h). A thread beats to every server on connections of its own ('H' ids; ZeroMQ
 * sockets are not thread-safe), so a worker deep in its compute still counts as alive; and a
 * wait that hears nothing from an awaited server (no reply, no heartbeat) for peer_timeout
 * seconds ends the job. Deliberately not here: retries (a lost server is fatal). */
#include "worker_impl.h"
#include "common/timer.h"
#include <string.h>

static void *beat_main(void *arg) {
    ps_worker_t *w = arg;
    int S = w->c.nservers;
    ps_transport_config_t tc = { .index = w->c.rank, .npeers = S, .auth = w->c.auth, .heartbeat = 1 };
    ps_van_t *t = ps_transport_connect(w->ctx, &tc, w->endpoints);
    double ivl = w->c.peer_timeout / 5;
    if (ivl > 1) ivl = 1;
    double last = 0;
    while (!atomic_load(&w->stop)) {
        double now = timer_now();
        if (now - last >= ivl) {
            for (int s = 0; s < S; s++) {
                ps_header_t h = worker_header(w, s, PS_MSG_HEARTBEAT, PS_DTYPE_NONE, 0);
                ps_transport_send_beat(t, s, &h);   /* a full queue: the server is not reading */
            }
            last = now;
        }
        /* sleep to the next beat, but notice stop within 50 ms: waking more often takes CPU from
         * a small host's colocated server mid-exchange (docs/results/lab-notes-src.md) */
        double due = last + ivl - timer_now();
        timer_sleep_us(due < 0 ? 0 : due > 0.05 ? 50000 : (long)(due * 1e6));
    }
    ps_transport_free(t);
    return NULL;
}

void worker_liveness_start(ps_worker_t *w) {
    int rc = pthread_create(&w->hb, NULL, beat_main, w);
    if (rc) die("pthread_create: %s", strerror(rc));
    w->hb_started = 1;
}

void worker_liveness_stop(ps_worker_t *w) {
    atomic_store(&w->stop, 1);
    if (w->hb_started) pthread_join(w->hb, NULL);
    w->hb_started = 0;
}

static void fatal(ps_worker_t *w, const char *line) {
    if (w->c.on_fatal) w->c.on_fatal(line);
    fprintf(stderr, "%s\n", line);
    exit(1);
}

void worker_check_silence(ps_worker_t *w, const wait_t *wt) {
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
