/* exchange_local_cuda.c: the local topology with --device cuda: exchange_local.c's exchange with
 * step_device added, which runs the optimizer as a GPU kernel on device parameters, gradients and
 * state (the gradient cleared in the same pass, as the CPU path does). Checkpoints copy the state
 * between the device and the host. Not here: LARS on the device (refused with exit 2). */
#include "exchange_local.h"
#include "common/cuda_mem.h"
#include "model/optim_cuda.h"
#include "common/check.h"
#include "common/timer.h"
#include <stdlib.h>


typedef struct {
    const exchange_ops_t *inner;
    exchange_ops_t ops;
    float *d_state, *h_state;
    size_t count, nstate;
    long adam_t;
} localdev_t;

static void upload_state(exchange_t *ex, localdev_t *d) {
    cuda_to_device(d->d_state, d->h_state, d->nstate);
    d->adam_t = ex->optim.kind == OPTIM_ADAM && d->count ? (long)d->h_state[2 * d->count] : 0;
}

static int ld_sync_params(exchange_t *ex, float *params, size_t count) {
    localdev_t *d = ex->device_impl;
    if (d->inner->sync_params(ex, params, count) != 0) return -1;
    if (d->inner->state_get(ex, NULL, d->h_state, count) != 0) return -1;
    upload_state(ex, d);
    return 0;
}

static int ld_state_get(exchange_t *ex, float *params, float *state, size_t count) {
    localdev_t *d = ex->device_impl;
    if (state) cuda_to_host(state, d->d_state, d->nstate);
    return 0;
}

static int ld_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    localdev_t *d = ex->device_impl;
    if (d->inner->state_set(ex, params, state, count) != 0) return -1;   /* sync_params uploads it */
    return 0;
}

static int ld_step_device(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr) {
    localdev_t *d = ex->device_impl;
    if (count != d->count) die("local exchange (cuda): step with %zu parameters, created for %zu", count, d->count);
    double t0 = timer_now();
    optim_cuda_step(&ex->optim, d_params, d_grads, d->d_state, count, lr, d->adam_t, 1);
    cuda_sync();
    d->adam_t++;
    ex->stats.optimizer_s += timer_now() - t0;
    ex->stats.steps++;
    return 0;
}

static void ld_free(exchange_t *ex) {
    localdev_t *d = ex->device_impl;
    void (*inner_free)(exchange_t *) = d->inner->free;
    cuda_floats_free(d->d_state);
    cuda_host_free(d->h_state);
    free(d);
    ex->device_impl = NULL;
    inner_free(ex);
}

exchange_t *exchange_local_cuda_create(const optim_config_t *optim, size_t count) {
    exchange_t *ex = exchange_local_create(optim, count);
    if (!ex) return NULL;
    if (!optim_cuda_supports(&ex->optim))
        die_input("--optimizer %s is not implemented for --device cuda with --topology local (sgd and adam are)",
                  optim_kind_name(ex->optim.kind));
    char why[256] = "";
    if (cuda_device_pin(ex->local_rank, why, sizeof why) < 0)
        die_input("--device cuda: no usable CUDA device (%s)", why);
    localdev_t *d = xcalloc(1, sizeof *d);
    d->inner = ex->ops;
    d->ops = *ex->ops;
    d->ops.sync_params = ld_sync_params;
    d->ops.state_get = ld_state_get;
    d->ops.state_set = ld_state_set;
    d->ops.step_device = ld_step_device;
    d->ops.free = ld_free;
    d->count = count;
    d->nstate = count * optim_state_per_param(&ex->optim);
    d->d_state = cuda_floats_alloc(d->nstate);
    d->h_state = cuda_host_alloc((d->nstate ? d->nstate : 1) * sizeof(float));
    ex->device_impl = d;
    ex->ops = &d->ops;
    return ex;
}
