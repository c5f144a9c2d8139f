/* mlp.c: the MLP of mlp.h on one flat parameter buffer: Linear, ReLU, ..., Linear, softmax-xent.
 * Forward keeps every layer's post-ReLU output (the input of the next layer and what ReLU's
 * backward needs), so backward recomputes nothing. Backward reports each layer's [W_l b_l] range
 * as soon as it is final, last layer first, for exchanges that overlap with backward.
 * Deliberately not here: data loading, the optimizer, any notion of ranks or topologies. */
#include "mlp.h"
#include "layers.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/parse.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MLP_MAX_WIDTH 65536
/* the rng stream of the model init, apart from the sampler's per-epoch streams */
#define MLP_INIT_STREAM 0x6d6c70696e6974ull /* "mlpinit" */

int mlp_parse_layers(const char *spec, int *sizes, int max, char *err, size_t errlen) {
    if (max > MLP_MAX_SIZES) max = MLP_MAX_SIZES;
    if (!spec || !*spec) {
        snprintf(err, errlen, "--layers is empty: give the widths like 784,256,10");
        return -1;
    }
    int n = 0;
    const char *p = spec;
    for (;;) {
        char *end;
        long v = 0;
        int bad = parse_long_at(p, &end, 1, MLP_MAX_WIDTH, &v);
        /* strtol alone would accept " 5" and "+5": a width starts with a digit (or '-', to say
         * it is out of range rather than not a number) */
        if (bad == -1 || (*end != ',' && *end != '\0') || !((*p >= '0' && *p <= '9') || *p == '-')) {
            int len = (int)strcspn(p, ",");
            snprintf(err, errlen, "--layers: '%.*s' is not a whole number (in '%s')", len, p, spec);
            return -1;
        }
        if (bad == -2) {
            int len = (int)(end - p);
            snprintf(err, errlen, "--layers: width %.*s is out of range 1..%d (in '%s')", len, p,
                     MLP_MAX_WIDTH, spec);
            return -1;
        }
        if (n == max) {
            snprintf(err, errlen, "--layers: more than %d widths (at most %d linear layers) in '%s'",
                     max, max - 1, spec);
            return -1;
        }
        sizes[n++] = (int)v;
        if (*end == '\0') break;
        p = end + 1;
    }
    if (n < 2) {
        snprintf(err, errlen, "--layers needs at least 2 widths (input and output): got %s", spec);
        return -1;
    }
    if (sizes[0] != 784 || sizes[n - 1] != 10) {
        snprintf(err, errlen, "--layers must start with 784 (the MNIST input) and end with 10 "
                 "(the classes): got %s", spec);
        return -1;
    }
    return n;
}

size_t mlp_count_params(const int *sizes, int nsizes) {
    size_t n = 0;
    for (int l = 0; l + 1 < nsizes; l++) n += (size_t)sizes[l + 1] * sizes[l] + sizes[l + 1];
    return n;
}

/* 64-byte aligned so SGEMM and the flat loops start on a cache line */
static float *floats_alloc(size_t n) {
    size_t bytes = (n ? n : 1) * sizeof(float);
    bytes = (bytes + 63) & ~(size_t)63;
    float *p = aligned_alloc(64, bytes);
    if (!p) die("out of memory allocating %zu floats", n);
    return p;
}

void mlp_init(mlp_t *m, const int *sizes, int nsizes, int max_batch, uint64_t seed) {
    mlp_init_alloc(m, sizes, nsizes, max_batch, seed, NULL);
}

void mlp_init_alloc(mlp_t *m, const int *sizes, int nsizes, int max_batch, uint64_t seed, const mlp_allocator_t *ga) {
    if (nsizes < 2 || nsizes > MLP_MAX_SIZES) die("mlp_init: %d layer widths (need 2..%d)", nsizes, MLP_MAX_SIZES);
    if (max_batch < 1) die("mlp_init: max_batch %d < 1", max_batch);
    memset(m, 0, sizeof *m);
    m->nsizes = nsizes;
    m->nlayers = nsizes - 1;
    m->max_batch = max_batch;
    int widest = 0;  /* of the activations that get a gradient: sizes[1..] */
    for (int l = 0; l < nsizes; l++) {
        if (sizes[l] < 1 || sizes[l] > MLP_MAX_WIDTH) die("mlp_init: width %d out of range 1..%d", sizes[l], MLP_MAX_WIDTH);
        m->sizes[l] = sizes[l];
        if (l >= 1 && sizes[l] > widest) widest = sizes[l];
    }
    size_t off = 0;
    for (int l = 0; l < m->nlayers; l++) {
        m->w_off[l] = off;
        off += (size_t)sizes[l + 1] * sizes[l];
        m->b_off[l] = off;
        off += sizes[l + 1];
    }
    m->nparams = off;
    m->params = floats_alloc(off);
    if (ga && ga->alloc) {
        m->grads_alloc = *ga;
        m->grads = ga->alloc(ga->ctx, off);
        if (!m->grads || ((uintptr_t)m->grads & 63)) die("mlp_init: the gradient allocator gave %p for %zu floats", (void *)m->grads, off);
    } else {
        m->grads = floats_alloc(off);
    }
    memset(m->grads, 0, off * sizeof(float));

    /* nn.Linear.reset_parameters: kaiming_uniform(a=sqrt(5)) on W is U(-1/sqrt(in), 1/sqrt(in)),
     * and so is the bias; W first, then b, layer by layer */
    rng_t r;
    rng_init(&r, seed, MLP_INIT_STREAM);
    for (int l = 0; l < m->nlayers; l++) {
        float bound = 1.0f / sqrtf((float)sizes[l]);
        size_t n = (size_t)sizes[l + 1] * sizes[l] + sizes[l + 1];
        float *p = m->params + m->w_off[l];
        for (size_t i = 0; i < n; i++) p[i] = (2.0f * rng_float(&r) - 1.0f) * bound;
    }

    for (int l = 1; l <= m->nlayers; l++) m->acts[l] = floats_alloc((size_t)max_batch * sizes[l]);
    m->probs = floats_alloc((size_t)max_batch * sizes[m->nlayers]);
    m->dbuf[0] = floats_alloc((size_t)max_batch * widest);
    m->dbuf[1] = floats_alloc((size_t)max_batch * widest);
}

void mlp_free(mlp_t *m) {
    free(m->params);
    if (m->grads_alloc.alloc) m->grads_alloc.free(m->grads_alloc.ctx, m->grads);
    else free(m->grads);
    for (int l = 1; l <= m->nlayers; l++) free(m->acts[l]);
    free(m->probs);
    free(m->dbuf[0]);
    free(m->dbuf[1]);
    memset(m, 0, sizeof *m);
}

void mlp_zero_grad(mlp_t *m) { memset(m->grads, 0, m->nparams * sizeof(float)); }

/* logits into acts[nlayers]; ReLU in place after every linear layer but the last */
static void forward_logits(mlp_t *m, const float *x, int B) {
    if (B < 1 || B > m->max_batch) die("mlp: batch %d outside 1..%d", B, m->max_batch);
    const float *in = x;
    for (int l = 0; l < m->nlayers; l++) {
        float *out = m->acts[l + 1];
        linear_forward(out, in, m->params + m->w_off[l], m->params + m->b_off[l], B,
                       m->sizes[l], m->sizes[l + 1]);
        if (l + 1 < m->nlayers) relu_forward(out, out, B * m->sizes[l + 1]);
        in = out;
    }
}

float mlp_forward(mlp_t *m, const float *x, const uint8_t *labels, int B) {
    forward_logits(m, x, B);
    if (!labels) return 0.0f;
    return softmax_xent_forward(m->probs, m->acts[m->nlayers], labels, B, m->sizes[m->nlayers]);
}

void mlp_backward(mlp_t *m, const float *x, const uint8_t *labels, int B, mlp_grad_ready_fn cb, void *ctx) {
    if (B < 1 || B > m->max_batch) die("mlp: batch %d outside 1..%d", B, m->max_batch);
    int L = m->nlayers;
    int cur = 0;
    float *dout = m->dbuf[cur];
    softmax_xent_backward(dout, m->probs, labels, B, m->sizes[L]);
    for (int l = L - 1; l >= 0; l--) {
        int IN = m->sizes[l], OUT = m->sizes[l + 1];
        float *dinp = l > 0 ? m->dbuf[cur ^ 1] : NULL;
        const float *inp = l > 0 ? m->acts[l] : x;
        linear_backward(dinp, m->grads + m->w_off[l], m->grads + m->b_off[l], dout, inp,
                        m->params + m->w_off[l], B, IN, OUT);
        if (cb) cb(ctx, m->w_off[l], (size_t)OUT * IN + OUT);
        if (l > 0) {
            relu_backward(dinp, dinp, m->acts[l], B * IN);
            cur ^= 1;
            dout = dinp;
        }
    }
}

int mlp_correct(mlp_t *m, const float *x, const uint8_t *labels, int B) {
    forward_logits(m, x, B);
    int C = m->sizes[m->nlayers], correct = 0;
    const float *z = m->acts[m->nlayers];
    for (int r = 0; r < B; r++, z += C) {
        int best = 0;
        for (int j = 1; j < C; j++)
            if (z[j] > z[best]) best = j;
        correct += best == labels[r];
    }
    return correct;
}
