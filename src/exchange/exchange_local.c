/* exchange_local.c: the one-process "topology": the gradient is already the global mean, so a
 * step is just the optimizer. It is the reference the ring and PS are tested against. */
#include "exchange_local.h"
#include "common/check.h"
#include "common/timer.h"
#include <stdlib.h>
#include <string.h>

typedef struct { float *state; size_t count; } local_t;

static int local_sync_params(exchange_t *ex, float *params, size_t count) { return 0; }

static int local_step(exchange_t *ex, float *params, float *grads, size_t count, float lr) {
    local_t *l = ex->impl;
    double t0 = timer_now();
    /* grads is the model's accumulator: cleared in the optimizer's pass (step_clears_grads) */
    optim_step_clear_grads(&ex->optim, params, grads, l->state, count, lr);
    ex->stats.optimizer_s += timer_now() - t0;
    ex->stats.steps++;
    return 0;
}

static int local_average(exchange_t *ex, double *vals, int n) { return 0; }

static int local_serve(exchange_t *ex) { return 0; }

static int local_state_get(exchange_t *ex, float *params_out, float *state, size_t count) {
    local_t *l = ex->impl;
    memcpy(state, l->state, count * optim_state_per_param(&ex->optim) * sizeof(float));
    return 0;
}

static int local_state_set(exchange_t *ex, const float *params, const float *state, size_t count) {
    local_t *l = ex->impl;
    memcpy(l->state, state, count * optim_state_per_param(&ex->optim) * sizeof(float));
    return 0;
}

static int local_finish(exchange_t *ex, float *params, size_t count) { return 0; }

static void local_free(exchange_t *ex) {
    local_t *l = ex->impl;
    free(l->state);
    free(l);
    free(ex);
}

/* the exchange ops (exchange.h): the required ones only, nothing to overlap or report */
static const exchange_ops_t local_ops = { .name = "local", EXCHANGE_OPS_REQUIRED(local) };

exchange_t *exchange_local_create(const optim_config_t *optim, size_t count) {
    exchange_t *ex = xcalloc(1, sizeof *ex);
    local_t *l = xcalloc(1, sizeof *l);
    /* rank 0 of 1, everywhere */
    *ex = (exchange_t){ .ops = &local_ops, .world_size = 1, .local_size = 1, .is_worker = 1, .process_count = 1,
                        .optim = *optim, .step_clears_grads = 1 };
    l->count = count;
    l->state = xcalloc(count * optim_state_per_param(&ex->optim), sizeof(float));
    ex->impl = l;
    return ex;
}
