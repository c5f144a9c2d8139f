/* exchange_device.h: the device half that --device cuda adds to a host exchange (the local one,
 * the ring): the optimizer state on the GPU, the host exchange's ops wrapped so that sync_params
 * and state_get move that state between host and device, and the optimizer kernel that
 * step_device ends with. One home for both topologies' CUDA wrappers (exchange_local_cuda.c,
 * src/ring/ring_exchange_cuda.c); compiled only --with-cuda (libexchange_cuda.a).
 * Not here: moving the gradient between ranks (each topology's step_device does that). */
#ifndef PSRING_EXCHANGE_DEVICE_H
#define PSRING_EXCHANGE_DEVICE_H
#include "exchange/exchange.h"

typedef struct {
    const exchange_ops_t *inner;  /* the host exchange's ops; ex->impl stays theirs */
    exchange_ops_t ops;           /* theirs, with sync_params and state_get below; the caller adds
                                   * step_device and free */
    const char *what;             /* "ring exchange (cuda)": names this exchange in messages */
    float *d_state, *h_state;     /* optimizer state on the device; host scratch for transfers */
    size_t count, nstate;
    long adam_t;                  /* Adam: steps this state has taken (its t block, on the host) */
} exchange_device_t;

/* Wraps ex for --device cuda. Exits 2 when the optimizer has no device kernel ("--optimizer X is
 * not implemented for --device cuda with --topology TOPOLOGY (sgd and adam are<optim_note>)") or
 * when no GPU can be pinned ("--device cuda: no usable CUDA device<where> (why)"). Allocates size
 * bytes (zeroed; a struct whose first member is an exchange_device_t), fills that member for
 * count parameters, and sets ex->device_impl to it and ex->ops to its ops. */
void *exchange_device_wrap(exchange_t *ex, size_t size, size_t count, const char *what, const char *topology,
                           const char *optim_note, const char *where);

/* the wrapped ops: the host exchange's sync_params, then its optimizer state (zero, or rank 0's
 * checkpoint) up to the device; the device state down into state (params are not touched) */
int exchange_device_sync_params(exchange_t *ex, float *params, size_t count);
int exchange_device_state_get(exchange_t *ex, float *params, float *state, size_t count);

/* step_device's checks and end: 0 when count is what the exchange was made for, else one line
 * naming both and -1 (exchange.h's rule); the optimizer kernel on the device state with the
 * gradient cleared in the same pass, waited for */
int exchange_device_count_check(exchange_t *ex, size_t count);
void exchange_device_optimizer(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr);

/* frees the device state and the wrapper, then the host exchange (ex itself) */
void exchange_device_free(exchange_t *ex);

#endif
