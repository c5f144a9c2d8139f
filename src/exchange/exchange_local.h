/* exchange_local.h: the local topology (one process, no peers): the exchange the ring and the PS
 * are tested against. On the CPU always; on the GPU of local rank 0 in --with-cuda builds
 * (exchange_local_cuda.c, libexchange_cuda.a). */
#ifndef PSRING_EXCHANGE_LOCAL_H
#define PSRING_EXCHANGE_LOCAL_H
#include <stddef.h>
#include "exchange/exchange.h"

exchange_t *exchange_local_create(const optim_config_t *optim, size_t count);
exchange_t *exchange_local_cuda_create(const optim_config_t *optim, size_t count);

#endif
