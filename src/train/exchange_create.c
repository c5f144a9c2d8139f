/* exchange_create.c: picks the topology and translates the command line into its configuration.
 * The only place that names all three and the only place where a topology's settings come from
 * options_t; the loop in train.c goes through ex->ops and never learns which one it got. */
#include "config.h"
#include "exchange_create.h"
#include "exchange/exchange_local.h"
#include "ring/ring_exchange.h"
#include "ps/ps_exchange.h"
#include <stdio.h>

ring_config_t exchange_ring_config(const options_t *o) {
    ring_config_t c = {
        .fingerprint = options_fingerprint(o), .optim = options_optim_config(o),
        .allreduce = o->allreduce, .op = o->ring_op, .fp16 = o->fp16, .hierarchical = o->hierarchical,
        .overlap = o->overlap, .bucket_mb = o->bucket_mb, .chunk_kb = o->chunk_kb,
        .autotune = o->autotune, .autotune_log = o->autotune_log, .stall_warn = o->stall_warn,
        .quiet = o->quiet,
    };
    return c;
}

ps_config_t exchange_ps_config(const options_t *o) {
    ps_config_t c = {
        .fingerprint = options_fingerprint(o), .optim = options_optim_config(o),
        .servers = o->servers, .sync = o->sync, .staleness = o->staleness, .bind = o->bind,
        .peer_timeout = o->peer_timeout, .stall_warn = o->stall_warn, .auth = o->ps_auth,
        .fp16 = o->fp16, .chunk_kb = o->ps_chunk_kb, .credit = o->ps_credit, .layers = o->layers_spec, .quiet = o->quiet,
    };
    if (ps_transport_parse(o->transport, &c.transport) != 0) c.transport = PS_TRANSPORT_TCP;   /* options.c refused it */
    return c;
}

exchange_t *exchange_create(const options_t *o, size_t count) {
    optim_config_t optim = options_optim_config(o);
    ring_config_t ring;
    ps_config_t ps;
#ifdef HAVE_CUDA
    /* --device cuda: local and ring reduce and step on the device; the PS stages (exchange.h) */
    if (o->device == DEVICE_CUDA && o->topology == TOPO_LOCAL) return exchange_local_cuda_create(&optim, count);
    if (o->device == DEVICE_CUDA && o->topology == TOPO_RING) {
        ring = exchange_ring_config(o);
        return exchange_ring_cuda_create(&ring, count);
    }
#endif
    switch (o->topology) {
    case TOPO_LOCAL: return exchange_local_create(&optim, count);
    case TOPO_RING: ring = exchange_ring_config(o); return exchange_ring_create(&ring, count);
    case TOPO_PS: ps = exchange_ps_config(o); return exchange_ps_create(&ps, count);
    }
    fprintf(stderr, "psring: unknown topology %d\n", (int)o->topology);
    return NULL;
}
