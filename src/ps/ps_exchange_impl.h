/* ps_exchange_impl.h: the PS exchange's state, shared by the files that make it up (not a public
 * header; the public one is ps_exchange.h):
 *   ps_exchange.c  the exchange adapter: the ops the trainer calls, the report, teardown
 *   ps_startup.c   the PS's start-up on startup.h: server checks, roles, endpoints, servers
 *                  bound and workers connected */
#ifndef PSRING_PS_EXCHANGE_IMPL_H
#define PSRING_PS_EXCHANGE_IMPL_H
#include "ps_exchange.h"
#include "server.h"
#include "worker.h"
#include "auth.h"
#include "exchange/startup.h"

typedef struct {
    /* what the exchange was asked to do: its own copy (the caller may build its config on the
     * stack); the strings it names (bind, auth, layers) are read during start-up only */
    const ps_config_t *c;
    startup_t startup;           /* ranks; whether ps_free ends MPI */
    void *zctx;
    ps_server_t *server;
    ps_worker_t *worker;
    size_t count;
    /* --ps-mode sum: the servers answer the mean gradient (into mean) and this worker steps its
     * own copy of the optimizer (state: count x optim_state_per_param), as a ring worker does */
    float *mean, *state;
    float *params;               /* the trainer's parameters (sync_params'): where answers land */
    /* folded in from the servers' reports at finish, for report() and the result file */
    uint64_t bytes_per_server;   /* bytes in+out of the busiest server */
    double staleness_mean;       /* async/ssp: observed staleness (clocks), -1 where none */
    int staleness_max;
    int lost_workers;            /* async: workers that died and were dropped */
    int auth_on;              /* --ps-auth given */
    ps_auth_keys_t auth;      /* --ps-auth keys (the configs point here) */
    char lost_list[256];      /* "rank 2 (mpi rank 3) ..." of the workers lost, for the result file */
    int restored;             /* worker 0: state_set (resume) already gave the servers params + state */
    int peers_lost;           /* async: a worker died; MPI_Finalize would wait for it for ever */
} ps_impl_t;

/* --ps-mode sum: the workers run the optimizer, the servers only sum */
static inline int ps_sum_only(const ps_impl_t *p) { return p->c->mode == PS_MODE_SUM; }

/* ps_exchange.c: the exchange of this process after startup_begin and startup_local (s is
 * copied): its ops, ranks and roles (ranks 0..S-1 servers, the rest workers), a copy of c, and
 * its ZeroMQ context; servers and workers not started yet (ps_startup.c) */
exchange_t *ps_exchange_new(const ps_config_t *c, size_t count, const startup_t *s);

#endif
