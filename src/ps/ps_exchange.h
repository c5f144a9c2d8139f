/* ps_exchange.h: the parameter-server topology as an exchange (exchange.h), built from a
 * ps_config_t (ps_startup.c; the ops are ps_exchange.c's). Starts MPI if nobody has (only to
 * launch, check fingerprints and share endpoints; the data travels over ZeroMQ); bad input on any
 * rank is one line from rank 0 and exit 2. */
#ifndef PSRING_PS_EXCHANGE_H
#define PSRING_PS_EXCHANGE_H
#include <stddef.h>
#include "ps/ps_config.h"
#include "exchange/exchange.h"

exchange_t *exchange_ps_create(const ps_config_t *c, size_t count);

#endif
