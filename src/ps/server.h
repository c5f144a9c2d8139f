/* server.h: one parameter-server shard (ps-lite style): a ROUTER socket of the transport
 * (transport.h), the parameters and optimizer state of one contiguous key range, and the
 * bsp/async/ssp consistency rules. It knows nothing of MPI: the caller gives it a ZeroMQ context
 * (ps_transport_context_new) and an endpoint to bind, and a fatal-error callback (the exchange
 * passes one that calls MPI_Abort). */
#ifndef PSRING_PS_SERVER_H
#define PSRING_PS_SERVER_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ps_config.h"   /* sync_mode_t */
#include "model/optim.h"

typedef struct ps_server ps_server_t;

typedef struct {
    int index, nservers, nworkers;
    size_t total;                /* model elements (the shard is derived with ps_shard_range) */
    sync_mode_t sync;
    int staleness;               /* ssp bound in clocks */
    double peer_timeout;         /* seconds of silence after which a worker counts as dead */
    optim_config_t optim;
    int worker_rank_base;        /* mpi rank of worker 0, for messages */
    int quiet;                   /* 1: no report lines (tests) */
    void (*on_fatal)(const char *line); /* called with the message on a fatal peer failure; NULL: exit(1) */
    double stall_warn;           /* > 0: warn (index 0 only) when a worker lags without pushing this long */
    const struct ps_auth_keys_s *auth; /* non-NULL: CURVE server, only the keyfile's client key gets in */
    size_t chunk;                /* bsp slice in elements (--ps-chunk-kb): pushes and replies travel and are
                                  * applied slice by slice; 0 = whole shard. Ignored (whole shard) for
                                  * async/ssp and LARS. Workers must use the same value. */
    int spare;                   /* --byteps K: the last K servers are spare hosts' (placement.h); -1: even */
    int sum_only;                /* bsp: a round answers each slice with the mean of the workers'
                                  * gradients instead of stepping the optimizer (BytePS' summation
                                  * service; every worker runs the optimizer) */
} ps_server_config_t;

/* Staleness histogram buckets: 0..PS_HIST-2 exact, last bucket ">=". */
#define PS_HIST 32

/* Report fields as sent in a STATS message (doubles), then PS_HIST buckets, then nworkers lost flags */
enum {
    PS_ST_APPLY_S, PS_ST_BYTES_IN, PS_ST_BYTES_OUT, PS_ST_REJECTED, PS_ST_STALE_N, PS_ST_STALE_SUM,
    PS_ST_STALE_MAX, PS_ST_CLOCK_GAP, PS_ST_NLOST, PS_ST_UPDATES, PS_ST_FIELDS
};

/* Binds a ROUTER to endpoint ("tcp://127.0.0.1:*", "ipc://...", "inproc://...") and writes the
 * endpoint actually bound (ZMQ_LAST_ENDPOINT) to bound. Exits via die() on socket errors. */
ps_server_t *ps_server_create(void *zctx, const ps_server_config_t *c, const char *endpoint,
                              char *bound, size_t boundlen);
/* Turns a --bind value into a TCP endpoint "tcp://ADDR:*" that workers on other hosts can reach:
 *   an IPv4 address or a host name   used as given (127.0.0.1, 10.0.0.5, node7)
 *   a subnet CIDR 10.99.0.0/24       this host's IPv4 address inside it (as btl_tcp_if_include)
 *   an interface name (eth0, ib0)    that interface's IPv4 address
 *   auto                             the first non-loopback IPv4 address of an interface that is up
 * Returns 0, or -1 with one line in err (nothing matched on this host). */
int ps_server_bind_endpoint(const char *spec, char *out, size_t outlen, char *err, size_t errlen);
/* Serves until every live worker said BYE. Returns 0, or -1 after a fatal failure when on_fatal
 * returned (tests). */
int ps_server_run(ps_server_t *s);
/* The report (PS_ST_FIELDS + PS_HIST + nworkers doubles) as sent to workers. */
size_t ps_server_report_len(const ps_server_t *s);
void ps_server_report(const ps_server_t *s, double *out);
/* Prints the staleness histogram and the lost/rejected lines (server 0 calls it at the end). */
void ps_server_print_report(const ps_server_t *s, FILE *f);
uint64_t ps_server_rejected(const ps_server_t *s);
void ps_server_free(ps_server_t *s);

#endif
