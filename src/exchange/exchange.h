/* exchange.h: the only thing the trainer knows about topologies.
 *
 * The shared loop (train.c) computes a local gradient on its shard of the global batch and hands
 * it to an exchange, which turns it into the next parameters. Each topology lives in its own
 * folder and fills an exchange_t:
 *
 *   local  (src/exchange/exchange_local.c)  one process: optimizer on the gradient as is
 *   ring   (src/ring/ring_exchange.c)       allreduce-average the gradient, optimizer on every
 *                                           worker
 *   ps     (src/ps/ps_exchange.c)           push gradient shards to the servers, which run the
 *                                           optimizer on their key range; pull the new parameters
 *
 * src/exchange sits below both topologies and the trainer (src/common <- src/exchange <- src/ring,
 * src/ps <- src/train): the topologies implement this interface without seeing the trainer, and
 * each takes its own configuration (ring_config.h, ps_config.h), which its descriptor
 * (topology.h) builds from its own flags, so no topology reads the trainer's options.
 *
 * Counts are in elements (floats), never bytes. The optimizer state (momentum) belongs to the
 * exchange because in the PS it lives on the servers. All functions return 0 on success; on a
 * failure the exchange prints one line naming what failed (peer rank, endpoint) and returns -1,
 * or exits the job itself when a peer died (no hang). */
#ifndef PSRING_EXCHANGE_H
#define PSRING_EXCHANGE_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/optim.h"

typedef struct exchange exchange_t;

typedef struct {
    double exchange_s;        /* time inside step() moving/reducing data, waiting on peers */
    double wait_s;            /* ... of which waiting for the slowest worker to arrive (ring: a
                               * barrier before the allreduce; ps bsp: the server's idle time
                               * between this worker's push and the round's last push); the rest
                               * of exchange_s is the transfer the cost model predicts */
    double optimizer_s;       /* time running the optimizer (on a PS: the servers' apply time, reported back at finish) */
    uint64_t bytes_sent;      /* payload bytes this worker sent */
    uint64_t bytes_recv;      /* payload bytes this worker received */
    long steps;               /* step() calls */
} exchange_stats_t;   /* what every topology measures; the rest each reports itself (report) */

/* The trainer's CSV row (metrics.h) as an exchange sees it: report() names its columns and
 * their values through set, so the trainer never asks which topology it runs. */
typedef struct exchange_report {
    void (*set)(struct exchange_report *r, const char *column, const char *value);
    void *row;
} exchange_report_t;

/* printf into column (at most 255 characters) */
static inline void exchange_report_set(exchange_report_t *r, const char *column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void exchange_report_set(exchange_report_t *r, const char *column, const char *fmt, ...) {
    char v[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    r->set(r, column, v);
}

typedef struct {
    const char *name;
    /* Collective over all workers, once before the first step: make every worker's params (and
     * the optimizer state) equal to worker 0's; on a PS this initialises the servers. */
    int (*sync_params)(exchange_t *ex, float *params, size_t count);
    /* Optional (may be NULL): grads[offset, offset+count) are final for this step; an overlapping
     * exchange may start sending them. Called last layer first, with the lr that step() will get
     * (a PS whose servers run the optimizer sends it with the gradient). */
    void (*grad_ready)(exchange_t *ex, float *grads, size_t offset, size_t count, float lr);
    /* One optimizer step: grads is this worker's mean gradient over its local batch; on return
     * params holds the new parameters (identical on every worker in synchronous modes). lr is
     * this step's learning rate. */
    int (*step)(exchange_t *ex, float *params, float *grads, size_t count, float lr);
    /* Element-wise mean of n doubles across workers (metrics: loss, accuracy). */
    int (*average)(exchange_t *ex, double *vals, int n);
    /* Servers (is_worker == 0) run this instead of training; returns when every worker finished. */
    int (*serve)(exchange_t *ex);
    /* Checkpoints. state_get (worker 0 only, between steps) copies out the authoritative params
     * and optimizer state (count x optim_state_per_param floats; on a PS: pulled from the servers).
     * Resume: worker 0 calls state_set with the checkpoint's params and state BEFORE sync_params;
     * sync_params then distributes both (ring: broadcast; PS: worker 0's INIT carries them). */
    int (*state_get)(exchange_t *ex, float *params, float *state, size_t count);
    int (*state_set)(exchange_t *ex, const float *params, const float *state, size_t count);
    /* End of training: make params the authoritative final parameters, fold remote figures into
     * stats (PS: servers' apply time, bytes per server), tell peers we are done. */
    int (*finish)(exchange_t *ex, float *params, size_t count);
    void (*free)(exchange_t *ex);
    /* --device cuda (optional, may be NULL). One step on DEVICE buffers of the GPU this rank
     * pinned: d_grads is the local mean gradient, on return d_params holds the new parameters and
     * d_grads is all zero. Exchanges that set it keep their optimizer state on the device too
     * (state_get/state_set still take host buffers). When NULL, the trainer stages instead:
     * gradients D2H into a pinned host buffer, step() on host buffers, parameters H2D (the PS).
     * Every other op keeps host pointers with --device cuda: the trainer copies its parameters
     * down before sync_params/state_get/finish and up after sync_params/finish. */
    int (*step_device)(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr);
    /* Optional (may be NULL: the model's own heap memory). Collective, every worker with the same
     * count: memory for the gradient buffer that step() will be given, where this exchange moves
     * it fastest (ring with every worker on one host: a shared-memory window it reduces with
     * loads and stores instead of messages). 64-byte aligned. grads_free gives it back
     * (collective, before free). */
    float *(*grads_alloc)(exchange_t *ex, size_t count);
    void (*grads_free)(exchange_t *ex, float *grads);
    /* Optional (may be NULL): after finish, on worker 0, this topology's own CSV columns
     * (ring: allreduce, op, ...; ps: sync, servers, ...), see metrics.c for the names. */
    void (*report)(exchange_t *ex, exchange_report_t *r);
    /* Optional (may be NULL: the workers meet at every epoch's end). How a run ends when its
     * workers do not meet (an asynchronous topology): on a sample budget that all of them share,
     * so a fast worker takes more steps than a slow one. budget: before state_set/sync_params,
     * given the samples its epochs hold in all, those a resumed run already did and those of a
     * full step; returns the budget it ends on, or 0 when it keeps epochs (a synchronous mode).
     * share: before each step, the samples it takes (this worker's share of the budget), 0 when
     * the budget is spent. stop: this worker takes no more steps (an unspent share goes back). */
    uint64_t (*budget)(exchange_t *ex, uint64_t epochs_samples, uint64_t done_samples, uint64_t step_samples);
    long (*share)(exchange_t *ex);
    int (*stop)(exchange_t *ex);
} exchange_ops_t;

struct exchange {
    const exchange_ops_t *ops;
    int rank;          /* this worker's rank among workers, 0..world_size-1 (servers: -1) */
    int world_size;    /* number of workers */
    int local_rank;    /* rank among processes on this host (device pinning) */
    int local_size;    /* workers on this host (how they share its GPUs) */
    int is_worker;
    int process_rank;  /* rank among all processes (mpirun's), for messages */
    int process_count;
    optim_config_t optim;
    exchange_stats_t stats;
    void *impl;        /* the topology's own state */
    int step_clears_grads; /* 1: step() returns with grads all zero (local: cleared inside the
                            * optimizer's pass), so the trainer skips its own clearing pass */
    void *device_impl;     /* --device cuda: the state behind step_device (device optimizer state,
                            * the GPU ring), NULL on the CPU */
};

/* The ops every exchange implements, named after its own prefix (PREFIX_sync_params, PREFIX_step,
 * ... PREFIX_free): the table's common part, written here once. An exchange's table is
 *     static const exchange_ops_t ps_ops = {
 *         .name = "ps", EXCHANGE_OPS_REQUIRED(ps), .report = ps_report };
 * with its optional ops (grad_ready, grads_alloc/grads_free, report, step_device) added by name. */
#define EXCHANGE_OPS_REQUIRED(prefix) \
    .sync_params = prefix##_sync_params, .step = prefix##_step, .average = prefix##_average, \
    .serve = prefix##_serve, .state_get = prefix##_state_get, .state_set = prefix##_state_set, \
    .finish = prefix##_finish, .free = prefix##_free

/* ops->free, which every exchange has */
static inline void exchange_free(exchange_t *ex) {
    if (ex && ex->ops && ex->ops->free) ex->ops->free(ex);
}

#endif
