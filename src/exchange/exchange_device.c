/* exchange_device.c: the device half of a --device cuda exchange (see exchange_device.h). */
#include "exchange/exchange_device.h"
#include "common/check.h"
#include "common/cuda_mem.h"
#include "model/optim_cuda.h"
#include <stdio.h>
#include <stdlib.h>

void *exchange_device_wrap(exchange_t *ex, size_t size, size_t count, const char *what, const char *topology,
                           const char *optim_note, const char *where) {
    if (!optim_cuda_supports(&ex->optim))
        die_input("--optimizer %s is not implemented for --device cuda with --topology %s (sgd and adam are%s)",
                  optim_kind_name(ex->optim.kind), topology, optim_note);
    char why[256] = "";
    if (cuda_device_pin(ex->local_rank, why, sizeof why) < 0)
        die_input("--device cuda: no usable CUDA device%s (%s)", where, why);
    exchange_device_t *d = xcalloc(1, size);
    d->inner = ex->ops;
    d->ops = *ex->ops;
    d->ops.sync_params = exchange_device_sync_params;
    d->ops.state_get = exchange_device_state_get;
    d->what = what;
    d->count = count;
    d->nstate = count * optim_state_per_param(&ex->optim);
    d->d_state = cuda_floats_alloc(d->nstate);
    d->h_state = cuda_host_alloc((d->nstate ? d->nstate : 1) * sizeof(float));
    ex->device_impl = d;
    ex->ops = &d->ops;
    return d;
}

int exchange_device_sync_params(exchange_t *ex, float *params, size_t count) {
    exchange_device_t *d = ex->device_impl;
    if (d->inner->sync_params(ex, params, count) != 0) return -1;
    /* the broadcast state (zero, or rank 0's checkpoint) goes to the device */
    if (d->inner->state_get(ex, NULL, d->h_state, count) != 0) return -1;
    cuda_to_device(d->d_state, d->h_state, d->nstate);
    d->adam_t = ex->optim.kind == OPTIM_ADAM && d->count ? (long)d->h_state[2 * d->count] : 0;
    return 0;
}

int exchange_device_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    exchange_device_t *d = ex->device_impl;
    if (state) cuda_to_host(state, d->d_state, d->nstate);
    return 0;
}

int exchange_device_count_check(exchange_t *ex, size_t count) {
    exchange_device_t *d = ex->device_impl;
    if (count == d->count) return 0;
    fprintf(stderr, "psring: %s: step with %zu parameters, created for %zu\n", d->what, count, d->count);
    return -1;
}

void exchange_device_optimizer(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr) {
    exchange_device_t *d = ex->device_impl;
    optim_cuda_step(&ex->optim, d_params, d_grads, d->d_state, count, lr, d->adam_t, 1);
    cuda_sync();
    d->adam_t++;
}

void exchange_device_free(exchange_t *ex) {
    exchange_device_t *d = ex->device_impl;
    void (*inner_free)(exchange_t *) = d->inner->free;
    cuda_floats_free(d->d_state);
    cuda_host_free(d->h_state);
    free(d);
    ex->device_impl = NULL;
    inner_free(ex);
}
