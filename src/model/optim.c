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

/* one element of the update; both loops below inline it, so they round identically */
static inline __attribute__((always_inline)) void sgd_one(float *restrict p, float g, float *restrict v,
                                                          float mu, float wd, float lr) {
    /* d = g + wd*p; v = mu*v + d; p -= lr*v   (v starts at 0, so step 1 gives v = d) */
    float d = g + wd * *p;
    float vi = mu * *v + d;
    *v = vi;
    *p -= lr * vi;
}

OPTIM_CLONES
static void sgd_momentum(float *restrict p, const float *restrict g, float *restrict v, size_t count,
                         float mu, float wd, float lr) {
    for (size_t i = 0; i < count; i++) sgd_one(&p[i], g[i], &v[i], mu, wd, lr);
}

/* the same, and the gradient zeroed while its cache line is at hand: a separate clearing pass
 * over the 0.8 MB of gradients (MLP 784-256-10) costs 7 us, in this loop it is nearly free */
OPTIM_CLONES
static void sgd_momentum_clear(float *restrict p, float *restrict g, float *restrict v, size_t count,
                               float mu, float wd, float lr) {
    for (size_t i = 0; i < count; i++) {
        sgd_one(&p[i], g[i], &v[i], mu, wd, lr);
        g[i] = 0.0f;
    }
}

void optim_step(const optim_config_t *c, float *params, const float *grads, float *state,
                size_t count, float lr) {
    sgd_momentum(params, grads, state, count, c->momentum, c->weight_decay, lr);
}

void optim_step_clear_grads(const optim_config_t *c, float *params, float *grads, float *state,
                            size_t count, float lr) {
    sgd_momentum_clear(params, grads, state, count, c->momentum, c->weight_decay, lr);
}
