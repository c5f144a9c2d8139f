/* exchange_create.h: the trainer's side of the topologies. exchange_create turns the command line
 * into the chosen topology's own configuration (ring_config_t, ps_config_t) and builds the
 * exchange; the loop then only goes through ex->ops (exchange.h). */
#ifndef PSRING_EXCHANGE_CREATE_H
#define PSRING_EXCHANGE_CREATE_H
#include <stddef.h>
#include "exchange/exchange.h"
#include "train/options.h"

/* Builds the exchange for o->topology (starting MPI where the topology needs it), for a model
 * of count parameters. Returns NULL after printing why. */
exchange_t *exchange_create(const options_t *o, size_t count);

/* each topology's configuration as the command line asks for it */
ring_config_t exchange_ring_config(const options_t *o);
ps_config_t exchange_ps_config(const options_t *o);

#endif
