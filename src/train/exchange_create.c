/* exchange.c: picks the topology. The only place that names all three; the loop in train.c
 * goes through ex->ops and never learns which one it got. */
#include "config.h"
#include "exchange.h"
#include <stdio.h>

exchange_t *exchange_create(const options_t *o, size_t count) {
#ifdef HAVE_CUDA
    /* --device cuda: local and ring reduce and step on the device; the PS stages (exchange.h) */
    if (o->device == DEVICE_CUDA && o->topology == TOPO_LOCAL) return exchange_local_cuda_create(o, count);
    if (o->device == DEVICE_CUDA && o->topology == TOPO_RING) return exchange_ring_cuda_create(o, count);
#endif
    switch (o->topology) {
    case TOPO_LOCAL: return exchange_local_create(o, count);
    case TOPO_RING: return exchange_ring_create(o, count);
    case TOPO_PS: return exchange_ps_create(o, count);
    }
    fprintf(stderr, "psring: unknown topology %d\n", (int)o->topology);
    return NULL;
}

void exchange_free(exchange_t *ex) {
    if (ex && ex->ops && ex->ops->free) ex->ops->free(ex);
}
