/* optim.c: SGD with momentum and weight decay as torch.optim.SGD does it (dampening 0, no
 * Nesterov), as one flat loop over any contiguous range of parameters: the whole model or a
 * parameter server's shard. restrict tells gcc the three arrays do not alias, so the loop
 * vectorises without runtime overlap checks.
 * Deliberately not here: learning-rate schedules (the trainer passes each step's lr), other
 * optimizers, gradient clipping. */
#include "optim.h"

size_t optim_state_per_param(const optim_config_t *c) {
    (void)c;
    /* the velocity; with momentum 0 it just holds d, which keeps one code path */
    return 1;
}

void optim_step(const optim_config_t *c, float *params, const float *grads, float *state,
                size_t count, float lr) {
    float *restrict p = params;
    const float *restrict g = grads;
    float *restrict v = state;
    const float mu = c->momentum, wd = c->weight_decay;
    /* d = g + wd*p; v = mu*v + d; p -= lr*v   (v starts at 0, so step 1 gives v = d) */
    for (size_t i = 0; i < count; i++) {
        float d = g[i] + wd * p[i];
        float vi = mu * v[i] + d;
        v[i] = vi;
        p[i] -= lr * vi;
    }
}
