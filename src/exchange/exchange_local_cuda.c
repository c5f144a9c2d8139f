/* exchange_local_cuda.c: the local topology with --device cuda: exchange_local.c's exchange with
 * step_device added, which runs the optimizer as a GPU kernel on device parameters, gradients and
 * state (the gradient cleared in the same pass, as the CPU path does). Checkpoints copy the state
 * between the device and the host (exchange_device.c, shared with the ring). Not here: LARS on
 * the device (refused with exit 2). */
#include "exchange/exchange_local.h"
#include "exchange/exchange_device.h"
#include "common/timer.h"

static int ld_step_device(exchange_t *ex, float *d_params, float *d_grads, size_t count, float lr) {
    if (exchange_device_count_check(ex, count) != 0) return -1;
    double t0 = timer_now();
    exchange_device_optimizer(ex, d_params, d_grads, count, lr);
    ex->stats.optimizer_s += timer_now() - t0;
    ex->stats.steps++;
    return 0;
}

exchange_t *exchange_local_cuda_create(const optim_config_t *optim, size_t count) {
    exchange_t *ex = exchange_local_create(optim, count);
    if (!ex) return NULL;
    exchange_device_t *d = exchange_device_wrap(ex, sizeof *d, count, "local exchange (cuda)", "local", "", "");
    d->ops.step_device = ld_step_device;
    d->ops.free = exchange_device_free;
    return ex;
}
