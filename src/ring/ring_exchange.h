/* ring_exchange.h: the ring topology as an exchange (exchange.h), built from a ring_config_t.
 * Both constructors start MPI if nobody has (exchange/startup.h), check that every rank got the
 * same fingerprint and model size (exit 2 naming the ranks otherwise) and return the exchange, or
 * exit the job. */
#ifndef PSRING_RING_EXCHANGE_H
#define PSRING_RING_EXCHANGE_H
#include <stddef.h>
#include "ring/ring_config.h"
#include "exchange/exchange.h"

/* every process a worker; the optimizer runs on every worker on the allreduced gradient */
exchange_t *exchange_ring_create(const ring_config_t *c, size_t count);
/* the same with step_device on the GPU of local_rank (--with-cuda builds, ring_exchange_cuda.c) */
exchange_t *exchange_ring_cuda_create(const ring_config_t *c, size_t count);

#endif
