/* worker.h: the worker side of the parameter server: one DEALER socket per server (data) plus a
 * heartbeat thread with its own DEALER per server, so servers can tell a busy worker from a dead
 * one. Pushes go to every server before any reply is awaited (shards travel in parallel). No
 * MPI here: the caller passes the endpoints and a fatal-error callback. */
#ifndef PSRING_PS_WORKER_H
#define PSRING_PS_WORKER_H
#include <stddef.h>
#include <stdint.h>
#include "model/optim.h"

typedef struct ps_worker ps_worker_t;

typedef struct {
    int rank, nworkers, nservers;
    size_t total;              /* model elements */
    size_t state_per_param;    /* optimizer state floats per parameter (state_get/set) */
    int fp16;                  /* gradients and pulled parameters travel as half */
    double peer_timeout;       /* seconds of server silence that count as death */
    int mpi_rank;              /* this process, for messages */
    int server_rank_base;      /* mpi rank of server 0, for messages */
    void (*on_fatal)(const char *line); /* NULL: print and exit(1) */
    const struct ps_auth_keys_s *auth; /* non-NULL: CURVE client with the keyfile's keys (auth.h) */
    const optim_config_t *optim; /* the servers' optimizer: LARS shards by layer (optim_shard_range); NULL: even */
    size_t chunk;              /* bsp push/reply slice in elements (--ps-chunk-kb), 0 = whole shards; must
                                * equal the servers' value; LARS always sends whole shards */
    int credit;                /* bsp: slices of a shard on their way before its answers return; 0 = all */
    int bsp;                   /* the servers run bsp rounds: each push goes after a ready header (their wait) */
    int spare;                 /* --byteps K: the last K servers are spare hosts' (placement.h); -1: even */
    int overlap;               /* bsp: a communication thread pushes layers as backward finishes them */
} ps_worker_config_t;

ps_worker_t *ps_worker_create(void *zctx, const ps_worker_config_t *c, char *const *endpoints);
/* Under a sample budget (async/ssp, wire.h): budget samples in all, step_samples in a full step;
 * call before init_params/state_set (worker 0 tells the servers) and before the first pull. */
void ps_worker_set_budget(ps_worker_t *w, uint64_t budget, uint64_t step_samples);
/* the samples this worker's next step takes (its share, given with the last pull or step's
 * answer); 0: the budget is spent, stop; -1: no budget */
long ps_worker_share(const ps_worker_t *w);
/* this worker takes no more steps: every server leaves it out of its clocks, an unspent share
 * goes back to the others */
int ps_worker_stop(ps_worker_t *w);
/* INIT: these become the servers' parameters (optimizer state zeroed); one worker calls it */
int ps_worker_init_params(ps_worker_t *w, const float *params);
/* every worker after init/state_set: wait for that generation and copy it into params (f32) */
int ps_worker_pull(ps_worker_t *w, float *params);
/* the servers' current parameters (async/ssp: a snapshot) without waiting for a new generation */
int ps_worker_fetch(ps_worker_t *w, float *params);
/* push grads (credit slices per shard, one more per answer, the lowest final slice first),
 * params <- the answers, slice by slice; with overlap, what ps_worker_ready left: the rest */
int ps_worker_step(ps_worker_t *w, float *params, const float *grads, float lr);
/* overlap: grads[from, total) is final for this step (from only falls within a step): its slices
 * may go. params, grads and lr must be those the step then gets. */
void ps_worker_ready(ps_worker_t *w, float *params, const float *grads, size_t from, float lr);
int ps_worker_state_get(ps_worker_t *w, float *params, float *state);
/* sender != 0 sends params+state; every worker then pulls the new generation */
int ps_worker_state_set(ps_worker_t *w, const float *params, const float *state, int sender);
int ps_worker_average(ps_worker_t *w, double *vals, int n);
/* DONE to every server; reports[s] receives server s's report (ps_server_report layout) */
int ps_worker_done(ps_worker_t *w, double **reports, size_t report_len);
void ps_worker_counters(const ps_worker_t *w, uint64_t *sent, uint64_t *recv, uint64_t *rejected);
/* bsp: seconds the last step's push waited at the servers for the round's last push (the
 * slowest server's figure, at most the step's duration); 0 under async/ssp */
double ps_worker_last_wait(const ps_worker_t *w);
/* BYE to every server, stop the heartbeat thread, close the sockets */
void ps_worker_free(ps_worker_t *w);

#endif
