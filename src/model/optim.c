/* optim.c: SGD with momentum and weight decay as torch.optim.SGD does it (dampening 0, no
 * Nesterov), as one flat loop over any contiguous range of parameters: the whole model or a
 * parameter server's shard. restrict tells gcc the three arrays do not alias, so the loop
 * vectorises without runtime overlap checks (callers never pass overlapping arrays).
 * Deliberately not here: learning-rate schedules (the trainer passes each step's lr), other
 * optimizers, gradient clipping. */
#include "optim.h"

size_t optim_state_per_param(const optim_config_t *c) {
    (void)c;
    /* the velocity; with momentum 0 it just holds d, which keeps one code path */
    return 1;
}

/* The loop is bound by instruction issue at SSE2 width (the x86-64 default) as long as its 2.4 MB
 * (MLP 784-256-10) stream from L2/L3: an AVX2 copy, picked at load time by the ifunc that
 * target_clones makes, halves its time. No FMA in either copy (the "avx2" target does not enable
 * it), so both round identically and runs stay bit-reproducible across machines. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define OPTIM_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef OPTIM_CLONES
#define OPTIM_CLONES
#endif

OPTIM_CLONES
static void sgd_momentum(float *restrict p, const float *restrict g, float *restrict v, size_t count,
                         float mu, float wd, float lr) {
    /* d = g + wd*p; v = mu*v + d; p -= lr*v   (v starts at 0, so step 1 gives v = d) */
    for (size_t i = 0; i < count; i++) {
        float d = g[i] + wd * p[i];
        float vi = mu * v[i] + d;
        v[i] = vi;
        p[i] -= lr * vi;
    }
}

void optim_step(const optim_config_t *c, float *params, const float *grads, float *state,
                size_t count, float lr) {
    sgd_momentum(params, grads, state, count, c->momentum, c->weight_decay, lr);
}
