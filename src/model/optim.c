/* optim.c: SGD with momentum and weight decay as torch.optim.SGD does it (dampening 0, no
 * Nesterov), Adam as torch.optim.Adam, LARS as You et al. 2017 (formulas in optim.h), each as
 * flat loops over any contiguous range of parameters: the whole model or a parameter server's
 * shard. restrict tells gcc the three arrays do not alias, so the loop vectorises without runtime
 * overlap checks (callers never pass overlapping arrays).
 * Deliberately not here: learning-rate schedules (the trainer passes each step's lr), gradient
 * clipping, AdamW, Nesterov, LAMB. */
#include "optim.h"
#include "common/check.h"
#include <math.h>
#include <string.h>

const char *optim_kind_name(optim_kind_t k) {
    switch (k) {
    case OPTIM_SGD: return "sgd";
    case OPTIM_ADAM: return "adam";
    case OPTIM_LARS: return "lars";
    }
    return "?";
}

float optim_default_lr(optim_kind_t k) {
    switch (k) {
    case OPTIM_SGD: return 0.02f;
    case OPTIM_ADAM: return 0.001f;
    case OPTIM_LARS: return 1.0f;
    }
    return 0.02f;
}

optim_config_t optim_defaults(optim_kind_t k) {
    optim_config_t c = {0};
    c.kind = k;
    c.lr = optim_default_lr(k);
    c.momentum = 0.9f;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.eps = 1e-8f;
    c.lars_eta = 0.001f;
    return c;
}

int optim_set_layout(optim_config_t *c, const int *sizes, int nsizes) {
    c->nseg = 0;
    if (nsizes < 2 || 2 * (nsizes - 1) > OPTIM_MAX_SEGMENTS) return -1;
    size_t off = 0;
    for (int l = 0; l + 1 < nsizes; l++) {   /* mlp.c: W_l (out x in), then b_l (out) */
        size_t w = (size_t)sizes[l + 1] * (size_t)sizes[l], b = (size_t)sizes[l + 1];
        c->seg_lo[c->nseg] = off; c->seg_len[c->nseg] = w; c->seg_bias[c->nseg++] = 0; off += w;
        c->seg_lo[c->nseg] = off; c->seg_len[c->nseg] = b; c->seg_bias[c->nseg++] = 1; off += b;
    }
    return 0;
}

size_t optim_state_per_param(const optim_config_t *c) {
    /* SGD/LARS: the velocity (with momentum 0 it just holds d, which keeps one code path);
     * Adam: m, v and the step-count block */
    return c->kind == OPTIM_ADAM ? 3 : 1;
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

/* Adam over count elements; state = m[count], v[count], t[count]. t is read from element 0 and
 * written to every element (all equal), so the bias corrections are computed once per call, in
 * double as torch does (Python floats), and any slice of the state restores the step count. */
static void adam(const optim_config_t *c, float *restrict p, const float *restrict g, float *restrict state,
                 size_t count, float lr) {
    if (count == 0) return;
    float *restrict m = state, *restrict v = state + count, *restrict tb = state + 2 * count;
    double t = (double)tb[0] + 1.0;
    float step_size = (float)((double)lr / (1.0 - pow((double)c->beta1, t)));
    float bc2_sqrt = (float)sqrt(1.0 - pow((double)c->beta2, t));
    const float b1 = c->beta1, b2 = c->beta2, eps = c->eps, wd = c->weight_decay;
    for (size_t i = 0; i < count; i++) {
        float d = g[i] + wd * p[i];
        float mi = b1 * m[i] + (1.0f - b1) * d;
        float vi = b2 * v[i] + (1.0f - b2) * d * d;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step_size * (mi / (sqrtf(vi) / bc2_sqrt + eps));
    }
    float tf = (float)t;
    for (size_t i = 0; i < count; i++) tb[i] = tf;
}

/* LARS on [lo, lo + n) of the model, given as pointers to that range: segment by segment, with
 * the norms of each weight matrix over the whole matrix (double sums, so the order of a few
 * hundred thousand squares does not cost accuracy) */
static void lars(const optim_config_t *c, float *p, const float *g, float *v, size_t n, float lr, size_t lo) {
    if (c->nseg == 0) die("optim: LARS without a parameter layout (optim_set_layout)");
    size_t hi = lo + n;
    for (int k = 0; k < c->nseg; k++) {
        size_t a = c->seg_lo[k], b = a + c->seg_len[k];
        if (b <= lo || a >= hi) continue;
        if (c->seg_bias[k]) {   /* bias: plain momentum SGD, no decay (a bias may be split) */
            size_t x = a > lo ? a : lo, y = b < hi ? b : hi;
            sgd_momentum(p + (x - lo), g + (x - lo), v + (x - lo), y - x, c->momentum, 0.0f, lr);
            continue;
        }
        if (a < lo || b > hi)
            die("optim: LARS step on [%zu, %zu) cuts weight matrix [%zu, %zu): its norm would be partial", lo, hi, a, b);
        float *pp = p + (a - lo), *vv = v + (a - lo);
        const float *gg = g + (a - lo);
        size_t len = b - a;
        double wn = 0, gn = 0;
        for (size_t i = 0; i < len; i++) { wn += (double)pp[i] * pp[i]; gn += (double)gg[i] * gg[i]; }
        wn = sqrt(wn);
        gn = sqrt(gn);
        double trust = wn > 0 && gn > 0 ? (double)c->lars_eta * wn / (gn + (double)c->weight_decay * wn) : 1.0;
        float tr = (float)trust, mu = c->momentum, wd = c->weight_decay;
        for (size_t i = 0; i < len; i++) {
            float d = tr * (gg[i] + wd * pp[i]);
            float vi = mu * vv[i] + d;
            vv[i] = vi;
            pp[i] -= lr * vi;
        }
    }
}

void optim_step_at(const optim_config_t *c, float *params, const float *grads, float *state,
                   size_t count, float lr, size_t offset) {
    switch (c->kind) {
    case OPTIM_SGD: sgd_momentum(params, grads, state, count, c->momentum, c->weight_decay, lr); return;
    case OPTIM_ADAM: adam(c, params, grads, state, count, lr); return;
    case OPTIM_LARS: lars(c, params, grads, state, count, lr, offset); return;
    }
    die("optim: unknown optimizer kind %d", (int)c->kind);
}

void optim_step(const optim_config_t *c, float *params, const float *grads, float *state,
                size_t count, float lr) {
    optim_step_at(c, params, grads, state, count, lr, 0);
}

void optim_step_clear_grads(const optim_config_t *c, float *params, float *grads, float *state,
                            size_t count, float lr) {
    if (c->kind == OPTIM_SGD) {
        sgd_momentum_clear(params, grads, state, count, c->momentum, c->weight_decay, lr);
        return;
    }
    optim_step_at(c, params, grads, state, count, lr, 0);   /* LARS reads all grads before writing */
    memset(grads, 0, count * sizeof *grads);
}

int optim_shard_range(const optim_config_t *c, size_t total, int nshards, int s, size_t *lo, size_t *len) {
    if (c->kind != OPTIM_LARS || nshards <= 1 || c->nseg == 0) return -1;
    if (c->nseg < nshards) return -2;
    /* boundary j (1..nshards-1) = the segment start nearest j*total/nshards, after the previous
     * boundary and leaving one segment for each shard still to come */
    size_t start = 0, end = total;
    int prev = 0;
    for (int j = 1; j < nshards && j <= s + 1; j++) {
        double ideal = (double)total * j / nshards;
        int best = prev + 1;
        for (int k = prev + 1; k <= c->nseg - (nshards - j); k++)
            if (fabs((double)c->seg_lo[k] - ideal) < fabs((double)c->seg_lo[best] - ideal)) best = k;
        if (j == s) start = c->seg_lo[best];
        if (j == s + 1) end = c->seg_lo[best];
        prev = best;
    }
    *lo = start;
    *len = end - start;
    return 0;
}
