/* ps_config.h: what the parameter-server topology is asked to do, in its own terms. The trainer
 * descriptor (ps_topology.c) fills a ps_config_t from its flags and what the trainer shares
 * (topology.h); nothing in src/ps reads the trainer's options. The names and the transport parser are inline so that the
 * trainer's option parser shares them without linking the PS. */
#ifndef PSRING_PS_CONFIG_H
#define PSRING_PS_CONFIG_H
#include <stdint.h>
#include <string.h>
#include "model/optim.h"

typedef enum { SYNC_BSP, SYNC_ASYNC, SYNC_SSP } sync_mode_t;
typedef enum { PS_TRANSPORT_TCP, PS_TRANSPORT_IPC } ps_transport_t;
/* where the optimizer runs: on the servers, over their key ranges (ps-lite), or on every worker,
 * the servers only summing (BytePS' summation service) */
typedef enum { PS_MODE_OPTIMIZER, PS_MODE_SUM } ps_mode_t;

typedef struct {
    uint64_t fingerprint;       /* of everything that must agree across ranks: compared at start-up */
    optim_config_t optim;       /* run by the servers on their key ranges */
    int servers;                /* ranks 0..servers-1 serve, the rest are workers */
    sync_mode_t sync;
    int staleness;              /* ssp bound in clocks */
    ps_transport_t transport;
    const char *bind;           /* tcp: address, subnet, interface or auto (ps_server_bind_endpoint) */
    double peer_timeout;        /* seconds of silence after which a peer counts as dead */
    double stall_warn;          /* seconds before server 0 names a lagging worker; 0 = off */
    const char *auth;           /* CurveZMQ keyfile (psring keygen); NULL or "" = no authentication */
    int fp16;                   /* gradients and parameters travel as IEEE half */
    int chunk_kb;               /* bsp push/reply slice in KiB, 0 = whole shards */
    int credit;                 /* bsp: slices of a shard a worker has on the way, 0 = all at once */
    ps_mode_t mode;             /* --ps-mode: optimizer on the servers, or sum only (bsp) */
    int byteps;                 /* --byteps K: BytePS' placement with K spare server hosts
                                 * (placement.h); -1: the even split */
    int overlap;                /* bsp: push each layer's slices as backward finishes it */
    uint64_t samples;           /* async/ssp: the sample budget shared by the workers, 0 = the
                                 * trainer's (its epochs' samples) */
    const char *layers;         /* the layer list as the user wrote it, for messages */
    int quiet;                  /* no informational lines */
} ps_config_t;

/* --ps-chunk-kb default: bsp slices of 1 MiB (why: docs/ps.md, Benchmark) */
#define PS_CHUNK_KB_DEFAULT 1024
/* --ps-credit default: two slices of a shard on the way per worker (docs/ps.md, Credit) */
#define PS_CREDIT_DEFAULT 2
/* --peer-timeout default in seconds: a peer silent this long counts as dead */
#define PS_PEER_TIMEOUT_DEFAULT 10

static inline const char *ps_sync_name(sync_mode_t s) {
    switch (s) {
    case SYNC_BSP: return "bsp";
    case SYNC_ASYNC: return "async";
    case SYNC_SSP: return "ssp";
    }
    return "?";
}

static inline const char *ps_transport_name(ps_transport_t t) { return t == PS_TRANSPORT_IPC ? "ipc" : "tcp"; }

/* "tcp" or "ipc"; 0, or -1 for anything else */
static inline int ps_transport_parse(const char *s, ps_transport_t *out) {
    if (!strcmp(s, "tcp")) *out = PS_TRANSPORT_TCP;
    else if (!strcmp(s, "ipc")) *out = PS_TRANSPORT_IPC;
    else return -1;
    return 0;
}

#endif
