/* test_model.c: Check suites for src/model: layers against naive double-precision references,
 * MLP gradients against central finite differences, the optimizer against hand-computed steps,
 * --layers parsing and the OpenBLAS core-type decision as tables.
 * main() runs blas_setup like every psring program, so the suites run on the kernels the fix
 * picks; `test_model blas-setup` (tests/blas_setup.sh) checks alone that the fix took effect, and
 * reports SKIP where there is nothing to check. */
#include "config.h"
#include "common/rng.h"
#include "model/blas.h"
#include "model/layers.h"
#include "model/mlp.h"
#include "model/optim.h"
#include "unit.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char blas_log[512];

static void fill_random(float *p, size_t n, rng_t *r, float scale) {
    for (size_t i = 0; i < n; i++) p[i] = (2.0f * rng_float(r) - 1.0f) * scale;
}

static float *fvec(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* |a - b| <= tol * max(1, |b|) */
static void assert_close(const float *a, const double *ref, size_t n, double tol, const char *what) {
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - ref[i]), s = fabs(ref[i]) > 1.0 ? fabs(ref[i]) : 1.0;
        ck_assert_msg(d <= tol * s, "%s[%zu] = %.7g, reference %.7g", what, i, a[i], ref[i]);
    }
}

/* ---------------------------------------------------------------------------------- layers */

static const struct { int B, IN, OUT; } shapes[] = {
    {1, 1, 1}, {3, 5, 7}, {7, 3, 5}, {2, 17, 1}, {13, 1, 9}, {64, 33, 10}, {5, 129, 31},
};
#define NSHAPES (int)(sizeof shapes / sizeof *shapes)

START_TEST(linear_forward_matches_naive) {
    int B = shapes[_i].B, IN = shapes[_i].IN, OUT = shapes[_i].OUT;
    rng_t r;
    rng_init(&r, 100 + _i, 0);
    float *x = fvec((size_t)B * IN), *w = fvec((size_t)OUT * IN), *b = fvec(OUT), *out = fvec((size_t)B * OUT);
    fill_random(x, (size_t)B * IN, &r, 1.0f);
    fill_random(w, (size_t)OUT * IN, &r, 1.0f);
    fill_random(b, OUT, &r, 1.0f);
    fill_random(out, (size_t)B * OUT, &r, 100.0f);  /* garbage: forward must overwrite it */
    linear_forward(out, x, w, b, B, IN, OUT);
    double *ref = calloc((size_t)B * OUT, sizeof(double));
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++) {
            double s = b[o];
            for (int k = 0; k < IN; k++) s += (double)x[i * IN + k] * w[o * IN + k];
            ref[i * OUT + o] = s;
        }
    assert_close(out, ref, (size_t)B * OUT, 1e-5, "out");
    free(x); free(w); free(b); free(out); free(ref);
}
END_TEST

START_TEST(linear_backward_matches_naive_and_adds) {
    int B = shapes[_i].B, IN = shapes[_i].IN, OUT = shapes[_i].OUT;
    rng_t r;
    rng_init(&r, 200 + _i, 0);
    float *x = fvec((size_t)B * IN), *w = fvec((size_t)OUT * IN), *dout = fvec((size_t)B * OUT);
    float *dw = fvec((size_t)OUT * IN), *db = fvec(OUT), *dx = fvec((size_t)B * IN);
    fill_random(x, (size_t)B * IN, &r, 1.0f);
    fill_random(w, (size_t)OUT * IN, &r, 1.0f);
    fill_random(dout, (size_t)B * OUT, &r, 1.0f);
    /* the gradients start non-zero: backward must ADD to them; dx starts as garbage: OVERWRITE */
    fill_random(dw, (size_t)OUT * IN, &r, 1.0f);
    fill_random(db, OUT, &r, 1.0f);
    fill_random(dx, (size_t)B * IN, &r, 100.0f);
    double *rdw = calloc((size_t)OUT * IN, sizeof(double)), *rdb = calloc(OUT, sizeof(double)),
           *rdx = calloc((size_t)B * IN, sizeof(double));
    for (int o = 0; o < OUT; o++) {
        rdb[o] = db[o];
        for (int k = 0; k < IN; k++) rdw[o * IN + k] = dw[o * IN + k];
    }
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++) {
            double g = dout[i * OUT + o];
            rdb[o] += g;
            for (int k = 0; k < IN; k++) {
                rdw[o * IN + k] += g * x[i * IN + k];
                rdx[i * IN + k] += g * w[o * IN + k];
            }
        }
    linear_backward(dx, dw, db, dout, x, w, B, IN, OUT);
    assert_close(dw, rdw, (size_t)OUT * IN, 1e-5, "dw");
    assert_close(db, rdb, OUT, 1e-5, "db");
    assert_close(dx, rdx, (size_t)B * IN, 1e-5, "dx");
    /* the first layer passes dinp = NULL: weight gradients still accumulate */
    linear_backward(NULL, dw, db, dout, x, w, B, IN, OUT);
    for (int o = 0; o < OUT; o++) {
        double s = 0;
        for (int i = 0; i < B; i++) s += dout[i * OUT + o];
        rdb[o] += s;
        for (int k = 0; k < IN; k++) {
            double t = 0;
            for (int i = 0; i < B; i++) t += (double)dout[i * OUT + o] * x[i * IN + k];
            rdw[o * IN + k] += t;
        }
    }
    assert_close(dw, rdw, (size_t)OUT * IN, 1e-5, "dw (second call)");
    assert_close(db, rdb, OUT, 1e-5, "db (second call)");
    free(x); free(w); free(dout); free(dw); free(db); free(dx); free(rdw); free(rdb); free(rdx);
}
END_TEST

START_TEST(relu_forward_backward) {
    const float in[] = {-2.0f, -0.0f, 0.0f, 1e-30f, 3.5f, -1e-30f, 7.0f};
    const float want[] = {0, 0, 0, 1e-30f, 3.5f, 0, 7.0f};
    const float dout[] = {1, 2, 3, 4, 5, 6, 7};
    const float want_d[] = {0, 0, 0, 4, 5, 0, 7};
    int n = 7;
    float out[7], buf[7], d[7];
    relu_forward(out, in, n);
    memcpy(buf, in, sizeof buf);
    relu_forward(buf, buf, n);  /* in place */
    for (int i = 0; i < n; i++) {
        ck_assert_float_eq(out[i], want[i]);
        ck_assert_float_eq(buf[i], want[i]);
    }
    relu_backward(d, dout, out, n);
    memcpy(buf, dout, sizeof buf);
    relu_backward(buf, buf, out, n);  /* in place */
    for (int i = 0; i < n; i++) {
        ck_assert_float_eq(d[i], want_d[i]);
        ck_assert_float_eq(buf[i], want_d[i]);
    }
}
END_TEST

START_TEST(softmax_xent_matches_reference) {
    enum { B = 5, C = 7 };
    rng_t r;
    rng_init(&r, 7, 0);
    float logits[B * C], probs[B * C], d[B * C];
    uint8_t y[B] = {0, 6, 3, 3, 1};
    fill_random(logits, B * C, &r, 5.0f);
    logits[2 * C + 4] = 80.0f;  /* large logits must not overflow */
    logits[3 * C + 3] = -80.0f; /* nor a tiny probability of the label give inf/NaN */
    float loss = softmax_xent_forward(probs, logits, y, B, C);
    double ref_loss = 0, ref_p[B * C], ref_d[B * C];
    for (int i = 0; i < B; i++) {
        double m = -INFINITY, s = 0;
        for (int j = 0; j < C; j++) m = fmax(m, logits[i * C + j]);
        for (int j = 0; j < C; j++) s += exp((double)logits[i * C + j] - m);
        for (int j = 0; j < C; j++) {
            ref_p[i * C + j] = exp((double)logits[i * C + j] - m) / s;
            ref_d[i * C + j] = (ref_p[i * C + j] - (j == y[i])) / B;
        }
        ref_loss += -(((double)logits[i * C + y[i]] - m) - log(s));
    }
    ref_loss /= B;
    ck_assert_msg(fabs(loss - ref_loss) <= 1e-5 * fabs(ref_loss), "loss %.7g vs %.7g", loss, ref_loss);
    ck_assert(ref_loss > 10.0);  /* the -80 logit dominates: a real, large loss */
    assert_close(probs, ref_p, B * C, 1e-6, "probs");
    softmax_xent_backward(d, probs, y, B, C);
    assert_close(d, ref_d, B * C, 1e-6, "dlogits");
}
END_TEST

static Suite *suite_layers(void) {
    const unit_test_t tests[] = {
        UNIT_LOOP(linear_forward_matches_naive, NSHAPES), UNIT_LOOP(linear_backward_matches_naive_and_adds, NSHAPES),
        UNIT_TEST(relu_forward_backward), UNIT_TEST(softmax_xent_matches_reference),
    };
    return unit_suite("layers", tests, UNIT_LEN(tests));
}

/* ------------------------------------------------------------------------------------- mlp */

static const int small_sizes[] = {6, 5, 4, 3};

static void make_batch(float *x, uint8_t *y, int B, int D, int C, uint64_t seed) {
    rng_t r;
    rng_init(&r, seed, 1);
    fill_random(x, (size_t)B * D, &r, 2.0f);
    for (int i = 0; i < B; i++) y[i] = (uint8_t)rng_below(&r, C);
}

/* where the gradient tests start: a net of SIZES drawn from seed INIT, a batch of B inputs and
 * labels for it drawn from seed DATA, and one forward and backward pass over it from zero
 * gradients (CB, CTX: mlp_backward's callback) */
enum { NB_MAX_B = 8, NB_MAX_IN = 16 };
typedef struct {
    mlp_t m;
    int B;
    float x[NB_MAX_B * NB_MAX_IN];
    uint8_t y[NB_MAX_B];
} net_batch_t;

static void net_batch_grads(net_batch_t *t, const int *sizes, int nsizes, uint64_t init, int B, uint64_t data,
                            void (*cb)(void *, size_t, size_t), void *ctx) {
    ck_assert(B <= NB_MAX_B && sizes[0] <= NB_MAX_IN);
    t->B = B;
    mlp_init(&t->m, sizes, nsizes, B, init);
    make_batch(t->x, t->y, B, sizes[0], sizes[nsizes - 1], data);
    mlp_zero_grad(&t->m);
    mlp_forward(&t->m, t->x, t->y, B);
    mlp_backward(&t->m, t->x, t->y, B, cb, ctx);
}

START_TEST(mlp_layout_and_count) {
    const int s[] = {784, 256, 10};
    ck_assert_uint_eq(mlp_count_params(s, 3), 784 * 256 + 256 + 256 * 10 + 10);
    mlp_t m;
    mlp_init(&m, small_sizes, 4, 8, 1);
    ck_assert_int_eq(m.nlayers, 3);
    ck_assert_uint_eq(m.nparams, mlp_count_params(small_sizes, 4));
    size_t off = 0;
    for (int l = 0; l < m.nlayers; l++) {
        ck_assert_uint_eq(m.w_off[l], off);
        off += (size_t)small_sizes[l + 1] * small_sizes[l];
        ck_assert_uint_eq(m.b_off[l], off);
        off += small_sizes[l + 1];
    }
    ck_assert_uint_eq(off, m.nparams);
    mlp_free(&m);
}
END_TEST

START_TEST(mlp_init_deterministic_and_bounded) {
    const int s[] = {784, 64, 10};
    mlp_t a, b, c;
    mlp_init(&a, s, 3, 4, 42);
    mlp_init(&b, s, 3, 4, 42);
    mlp_init(&c, s, 3, 4, 43);
    ck_assert_mem_eq(a.params, b.params, a.nparams * sizeof(float));
    size_t same = 0;
    for (size_t i = 0; i < a.nparams; i++) same += a.params[i] == c.params[i];
    ck_assert_msg(same < a.nparams / 100, "seeds 42 and 43 share %zu of %zu values", same, a.nparams);
    for (int l = 0; l < a.nlayers; l++) {
        float bound = 1.0f / sqrtf((float)s[l]);
        size_t n = (size_t)s[l + 1] * s[l] + s[l + 1];
        double sum = 0, sq = 0, maxabs = 0;
        for (size_t i = 0; i < n; i++) {
            float v = a.params[a.w_off[l] + i];
            ck_assert_msg(fabsf(v) <= bound, "layer %d value %g beyond 1/sqrt(in) = %g", l, v, bound);
            sum += v; sq += (double)v * v; maxabs = fmax(maxabs, fabs(v));
        }
        /* uniform on (-bound, bound): mean 0, variance bound^2/3, and it reaches near the edge */
        double mean = sum / n, var = sq / n - mean * mean;
        ck_assert_msg(fabs(mean) < 0.05 * bound, "layer %d mean %g", l, mean);
        ck_assert_msg(fabs(var / (bound * bound / 3.0) - 1.0) < 0.1, "layer %d variance %g", l, var);
        ck_assert(maxabs > 0.95 * bound);
    }
    /* the biases are drawn too (not left at zero) */
    ck_assert(a.params[a.b_off[0]] != 0.0f || a.params[a.b_off[0] + 1] != 0.0f);
    for (size_t i = 0; i < a.nparams; i++) ck_assert(a.grads[i] == 0.0f);
    mlp_free(&a); mlp_free(&b); mlp_free(&c);
}
END_TEST

/* every parameter's analytic gradient against a central difference of the mean loss */
START_TEST(mlp_gradients_match_finite_differences) {
    net_batch_t t;
    net_batch_grads(&t, small_sizes, 4, 5, 4, 9, NULL, NULL);
    const float eps = 1e-2f;
    int checked = 0;
    double worst = 0;
    for (size_t i = 0; i < t.m.nparams; i++) {
        float keep = t.m.params[i];
        t.m.params[i] = keep + eps;
        double lp = mlp_forward(&t.m, t.x, t.y, t.B);
        t.m.params[i] = keep - eps;
        double lm = mlp_forward(&t.m, t.x, t.y, t.B);
        t.m.params[i] = keep;
        double num = (lp - lm) / (2.0 * eps), ana = t.m.grads[i];
        /* relative error, with an absolute floor for gradients that are (close to) zero */
        double den = fmax(fmax(fabs(num), fabs(ana)), 1e-2);
        double rel = fabs(num - ana) / den;
        worst = fmax(worst, rel);
        ck_assert_msg(rel < 1e-2, "param %zu: analytic %.6g, numeric %.6g (rel %.3g)", i, ana, num, rel);
        checked++;
    }
    ck_assert_int_eq(checked, 74);
    /* the test has teeth only if the gradient is not all zero */
    double norm = 0;
    for (size_t i = 0; i < t.m.nparams; i++) norm += fabs(t.m.grads[i]);
    ck_assert(norm > 1e-2);
    mlp_free(&t.m);
}
END_TEST

START_TEST(mlp_backward_adds) {
    net_batch_t t;
    net_batch_grads(&t, small_sizes, 4, 11, 5, 12, NULL, NULL);
    float *once = malloc(t.m.nparams * sizeof(float));
    memcpy(once, t.m.grads, t.m.nparams * sizeof(float));
    mlp_forward(&t.m, t.x, t.y, t.B);
    mlp_backward(&t.m, t.x, t.y, t.B, NULL, NULL);
    for (size_t i = 0; i < t.m.nparams; i++)
        ck_assert_msg(fabsf(t.m.grads[i] - 2.0f * once[i]) <= 1e-6f + 1e-5f * fabsf(once[i]),
                      "grad %zu: %g after two passes, %g after one", i, t.m.grads[i], once[i]);
    mlp_zero_grad(&t.m);
    for (size_t i = 0; i < t.m.nparams; i++) ck_assert(t.m.grads[i] == 0.0f);
    free(once);
    mlp_free(&t.m);
}
END_TEST

typedef struct {
    int n;
    size_t off[MLP_MAX_SIZES], cnt[MLP_MAX_SIZES];
    const mlp_t *m;
    float *snap;  /* grads as they were when their range was reported */
} cb_log_t;

static void record_cb(void *ctx, size_t offset, size_t count) {
    cb_log_t *log = ctx;
    ck_assert_int_lt(log->n, MLP_MAX_SIZES);
    ck_assert_uint_le(offset + count, log->m->nparams);
    log->off[log->n] = offset;
    log->cnt[log->n] = count;
    log->n++;
    memcpy(log->snap + offset, log->m->grads + offset, count * sizeof(float));
}

START_TEST(mlp_backward_callback_order_and_coverage) {
    const int s[] = {9, 8, 7, 6, 5};
    net_batch_t t;
    cb_log_t log = {.m = &t.m, .snap = calloc(mlp_count_params(s, 5), sizeof(float))};
    net_batch_grads(&t, s, 5, 3, 3, 4, record_cb, &log);
    /* "final": nothing after the callback changed the reported range */
    ck_assert_mem_eq(log.snap, t.m.grads, t.m.nparams * sizeof(float));
    free(log.snap);
    ck_assert_int_eq(log.n, t.m.nlayers);
    size_t end = t.m.nparams;
    for (int k = 0; k < log.n; k++) {
        int l = t.m.nlayers - 1 - k;  /* last layer first */
        ck_assert_uint_eq(log.off[k], t.m.w_off[l]);
        ck_assert_uint_eq(log.off[k] + log.cnt[k], end);  /* contiguous, no gap or overlap */
        ck_assert_uint_eq(log.cnt[k], (size_t)s[l + 1] * s[l] + s[l + 1]);
        end = log.off[k];
    }
    ck_assert_uint_eq(end, 0);
    mlp_free(&t.m);
}
END_TEST

/* a 2-2 net with W = I, b = 0 classifies by the larger input */
START_TEST(mlp_correct_counts_argmax) {
    const int s[] = {2, 2};
    mlp_t m;
    mlp_init(&m, s, 2, 4, 1);
    const float p[] = {1, 0, 0, 1, 0, 0};
    memcpy(m.params, p, sizeof p);
    const float x[] = {3, 1, 0, 2, 5, -1, -1, -2};
    const uint8_t all0[] = {0, 0, 0, 0}, truth[] = {0, 1, 0, 0}, wrong[] = {1, 0, 1, 1};
    ck_assert_int_eq(mlp_correct(&m, x, truth, 4), 4);
    ck_assert_int_eq(mlp_correct(&m, x, wrong, 4), 0);
    ck_assert_int_eq(mlp_correct(&m, x, all0, 4), 3);
    ck_assert_float_eq(mlp_forward(&m, x, NULL, 4), 0.0f);
    mlp_free(&m);
}
END_TEST

/* two Gaussian-free blobs: class = (x0 + x1 > 0); a few hundred SGD steps must learn it */
START_TEST(mlp_trains_on_separable_toy) {
    const int s[] = {4, 16, 2};
    enum { N = 256, B = 32 };
    mlp_t m;
    mlp_init(&m, s, 3, N, 8);
    static float x[N * 4];
    static uint8_t y[N];
    rng_t r;
    rng_init(&r, 99, 0);
    fill_random(x, N * 4, &r, 1.0f);
    for (int i = 0; i < N; i++) y[i] = x[i * 4] + x[i * 4 + 1] > 0.0f;
    optim_config_t oc = {.lr = 0.2f, .momentum = 0.9f, .weight_decay = 0.0f};
    float *v = calloc(m.nparams * optim_state_per_param(&oc), sizeof(float));
    float first = mlp_forward(&m, x, y, N);
    for (int step = 0; step < 300; step++) {
        int k = (step * B) % N;
        mlp_zero_grad(&m);
        mlp_forward(&m, x + k * 4, y + k, B);
        mlp_backward(&m, x + k * 4, y + k, B, NULL, NULL);
        optim_step(&oc, m.params, m.grads, v, m.nparams, oc.lr);
    }
    float last = mlp_forward(&m, x, y, N);
    int correct = mlp_correct(&m, x, y, N);
    ck_assert_msg(last < 0.3f * first, "loss went from %g to %g", first, last);
    ck_assert_msg(correct >= 0.95 * N, "%d of %d correct", correct, N);
    free(v);
    mlp_free(&m);
}
END_TEST

static const struct { const char *spec; int n; const char *err_has; } layer_specs[] = {
    {"784,256,10", 3, NULL},
    {"784,10", 2, NULL},
    {"784,512,256,128,10", 5, NULL},
    {"784,65536,10", 3, NULL},
    {"784,1,10", 3, NULL},
    {"784,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,10", 17, NULL},
    {"784,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,10", -1, "more than 17"},
    {"700,10", -1, "--layers must start with 784 (the MNIST input) and end with 10 (the classes): got 700,10"},
    {"784,256,11", -1, "end with 10"},
    {"784", -1, "at least 2"},
    {"", -1, "empty"},
    {"784,,10", -1, "not a whole number"},
    {"784,abc,10", -1, "'abc' is not a whole number"},
    {"784,25x,10", -1, "not a whole number"},
    {"784,256,10,", -1, "not a whole number"},
    {"784, 256,10", -1, "not a whole number"},
    {"784,+256,10", -1, "not a whole number"},
    {"784,2.5,10", -1, "not a whole number"},
    {"784,0,10", -1, "out of range"},
    {"784,-3,10", -1, "out of range"},
    {"784,65537,10", -1, "out of range"},
    {"784,99999999999999999999999,10", -1, "out of range"},
};

START_TEST(mlp_parse_layers_table) {
    int sizes[MLP_MAX_SIZES + 4];
    char err[256] = "";
    int n = mlp_parse_layers(layer_specs[_i].spec, sizes, MLP_MAX_SIZES, err, sizeof err);
    ck_assert_msg(n == layer_specs[_i].n, "'%s': got %d, want %d (%s)", layer_specs[_i].spec, n,
                  layer_specs[_i].n, err);
    if (n < 0) {
        ck_assert_msg(strstr(err, layer_specs[_i].err_has) != NULL, "'%s': error '%s' lacks '%s'",
                      layer_specs[_i].spec, err, layer_specs[_i].err_has);
        ck_assert(strchr(err, '\n') == NULL);
    } else {
        ck_assert_int_eq(sizes[0], 784);
        ck_assert_int_eq(sizes[n - 1], 10);
    }
    if (_i == 2) {
        const int want[] = {784, 512, 256, 128, 10};
        for (int k = 0; k < 5; k++) ck_assert_int_eq(sizes[k], want[k]);
    }
}
END_TEST

static Suite *suite_mlp(void) {
    const unit_test_t tests[] = {
        UNIT_TEST(mlp_layout_and_count), UNIT_TEST(mlp_init_deterministic_and_bounded),
        UNIT_TEST(mlp_gradients_match_finite_differences), UNIT_TEST(mlp_backward_adds),
        UNIT_TEST(mlp_backward_callback_order_and_coverage), UNIT_TEST(mlp_correct_counts_argmax),
        UNIT_TEST(mlp_trains_on_separable_toy), UNIT_LOOP(mlp_parse_layers_table, UNIT_LEN(layer_specs)),
    };
    return unit_suite("mlp", tests, UNIT_LEN(tests));
}

/* ----------------------------------------------------------------------------------- optim */

/* torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.01), three steps, computed by hand
 * (d = g + wd p; v = mu v + d; p -= lr v) in double */
START_TEST(optim_sgd_three_steps) {
    optim_config_t c = {.lr = 123.0f /* must be ignored: the lr argument rules */, .momentum = 0.9f,
                        .weight_decay = 0.01f};
    ck_assert_uint_eq(optim_state_per_param(&c), 1);
    float p[] = {1.0f, -2.0f, 0.5f}, v[3] = {0};
    const float g[] = {0.5f, 0.25f, -1.0f};
    const double want_p[3][3] = {{0.949, -2.023, 0.5995},
                                 {0.852151, -2.066677, 0.7884505},
                                 {0.714134749, -2.128919623, 1.0577175}};
    const double want_v[3][3] = {{0.51, 0.23, -0.995},
                                 {0.96849, 0.43677, -1.889505},
                                 {1.38016251, 0.62242623, -2.692669995}};
    for (int s = 0; s < 3; s++) {
        optim_step(&c, p, g, v, 3, 0.1f);
        for (int i = 0; i < 3; i++) {
            ck_assert_msg(fabs(p[i] - want_p[s][i]) < 1e-6, "step %d p[%d] = %.9g, want %.9g", s + 1, i, p[i], want_p[s][i]);
            ck_assert_msg(fabs(v[i] - want_v[s][i]) < 1e-6, "step %d v[%d] = %.9g, want %.9g", s + 1, i, v[i], want_v[s][i]);
        }
    }
}
END_TEST

/* momentum 0, no decay: plain p -= lr g; and a count that is not a multiple of any vector width
 * touches exactly count elements */
START_TEST(optim_plain_sgd_and_count) {
    optim_config_t c = {.lr = 0.5f, .momentum = 0.0f, .weight_decay = 0.0f};
    enum { N = 37 };
    float p[N + 3], g[N + 3], v[N + 3];
    for (int i = 0; i < N + 3; i++) { p[i] = (float)i; g[i] = 0.25f * (float)(i % 5); v[i] = -7.0f; }
    optim_step(&c, p, g, v, N, 0.5f);
    optim_step(&c, p, g, v, 0, 0.5f);  /* count 0 is a no-op */
    for (int i = 0; i < N; i++) ck_assert_float_eq_tol(p[i], (float)i - 0.5f * g[i], 1e-6f);
    for (int i = N; i < N + 3; i++) { ck_assert_float_eq(p[i], (float)i); ck_assert_float_eq(v[i], -7.0f); }
}
END_TEST

/* whichever copy of the loop the CPU runs (SSE2 or AVX2), every element must round exactly like
 * the plain scalar formula, so that topologies and machines agree bit for bit */
START_TEST(optim_bit_identical_to_scalar) {
    enum { N = 1003 };
    optim_config_t c = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
    static float p[N], g[N], v[N], rp[N], rv[N];
    rng_t r;
    rng_init(&r, 77, 0);
    fill_random(p, N, &r, 1.0f);
    fill_random(v, N, &r, 0.1f);
    memcpy(rp, p, sizeof p);
    memcpy(rv, v, sizeof v);
    for (int s = 0; s < 3; s++) {
        fill_random(g, N, &r, 0.01f);
        optim_step(&c, p, g, v, N, 0.05f);
        for (int i = 0; i < N; i++) {
            volatile float d = g[i] + c.weight_decay * rp[i];  /* volatile: no contraction, no reordering */
            volatile float vi = c.momentum * rv[i] + d;
            volatile float step = 0.05f * vi;
            rv[i] = vi;
            rp[i] = rp[i] - step;
        }
        ck_assert_mem_eq(v, rv, sizeof v);
        ck_assert_mem_eq(p, rp, sizeof p);
    }
}
END_TEST

/* optim_step_clear_grads: params and state bit for bit as optim_step (table of counts around the
 * vector widths, with and without decay/momentum), grads zero in [0, count) and untouched past it */
static const struct { int n; float mu, wd; } clear_cases[] = {
    {0, 0.9f, 0.0f}, {1, 0.9f, 0.0f}, {7, 0.0f, 0.0f}, {8, 0.9f, 1e-4f}, {9, 0.5f, 0.01f},
    {31, 0.9f, 0.0f}, {1003, 0.9f, 1e-4f},
};

START_TEST(optim_clear_grads_matches_step) {
    const int N = clear_cases[_i].n;
    optim_config_t c = {.lr = 0.05f, .momentum = clear_cases[_i].mu, .weight_decay = clear_cases[_i].wd};
    static float p[1003 + 2], g[1003 + 2], v[1003 + 2], rp[1003 + 2], rv[1003 + 2], g2[1003 + 2];
    rng_t r;
    rng_init(&r, 91, (uint64_t)_i);
    fill_random(p, N + 2, &r, 1.0f);
    fill_random(v, N + 2, &r, 0.1f);
    memcpy(rp, p, sizeof p);
    memcpy(rv, v, sizeof v);
    for (int s = 0; s < 3; s++) {
        fill_random(g, N + 2, &r, 0.01f);
        memcpy(g2, g, sizeof g);
        optim_step(&c, rp, g, rv, (size_t)N, 0.05f);
        optim_step_clear_grads(&c, p, g2, v, (size_t)N, 0.05f);
        ck_assert_mem_eq(p, rp, sizeof p);
        ck_assert_mem_eq(v, rv, sizeof v);
        for (int i = 0; i < N; i++) ck_assert_msg(g2[i] == 0.0f && !signbit(g2[i]), "n %d: grad %d = %g", N, i, (double)g2[i]);
        ck_assert(g2[N] == g[N] && g2[N + 1] == g[N + 1]);   /* nothing past count */
        if (N > 0) ck_assert(g[0] != 0.0f);   /* the fixture had something to clear */
    }
}
END_TEST

static Suite *suite_optim(void) {
    const unit_test_t tests[] = {
        UNIT_TEST(optim_sgd_three_steps), UNIT_TEST(optim_plain_sgd_and_count), UNIT_TEST(optim_bit_identical_to_scalar),
        UNIT_LOOP(optim_clear_grads_matches_step, UNIT_LEN(clear_cases)),
    };
    return unit_suite("optim", tests, UNIT_LEN(tests));
}

/* ------------------------------------------------------------------ optim: adam and lars */

/* naive double-precision torch.optim.Adam (L2 decay), the reference for optim_step */
static void ref_adam(double *p, const double *g, double *m, double *v, size_t n, int t, double lr,
                     double b1, double b2, double eps, double wd) {
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    for (size_t i = 0; i < n; i++) {
        double d = g[i] + wd * p[i];
        m[i] = b1 * m[i] + (1 - b1) * d;
        v[i] = b2 * v[i] + (1 - b2) * d * d;
        p[i] -= lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps);
    }
}

/* naive double-precision LARS over a layout of (length, is_bias) segments */
static void ref_lars(double *p, const double *g, double *v, const size_t *len, const int *bias, int nseg,
                     double lr, double mu, double wd, double eta) {
    size_t off = 0;
    for (int k = 0; k < nseg; off += len[k], k++) {
        double wn = 0, gn = 0;
        for (size_t i = off; i < off + len[k]; i++) { wn += p[i] * p[i]; gn += g[i] * g[i]; }
        wn = sqrt(wn); gn = sqrt(gn);
        double tr = bias[k] ? 1 : (wn > 0 && gn > 0 ? eta * wn / (gn + wd * wn) : 1);
        double dec = bias[k] ? 0 : wd;
        for (size_t i = off; i < off + len[k]; i++) {
            v[i] = mu * v[i] + tr * (g[i] + dec * p[i]);
            p[i] -= lr * v[i];
        }
    }
}

/* five steps of random gradients: optim_step against the double reference; the step count
 * block holds t after every step; optim_step_clear_grads gives the same params and state */
START_TEST(optim_adam_matches_reference) {
    enum { N = 301 };
    optim_config_t c = {.lr = 1, .weight_decay = 0.01f, .kind = OPTIM_ADAM, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    ck_assert_uint_eq(optim_state_per_param(&c), 3);
    static float p[N], g[N], st[3 * N], p2[N], g2[N], st2[3 * N];
    static double rp[N], rg[N], rm[N], rv[N];
    rng_t r;
    rng_init(&r, 5, 0);
    fill_random(p, N, &r, 1.0f);
    for (int i = 0; i < N; i++) rp[i] = p[i];
    memcpy(p2, p, sizeof p);
    for (int t = 1; t <= 5; t++) {
        fill_random(g, N, &r, 0.1f);
        for (int i = 0; i < N; i++) rg[i] = g[i];
        memcpy(g2, g, sizeof g);
        optim_step(&c, p, g, st, N, 0.01f);
        optim_step_clear_grads(&c, p2, g2, st2, N, 0.01f);
        ref_adam(rp, rg, rm, rv, N, t, 0.01, 0.9, 0.999, 1e-8, 0.01);
        assert_close(p, rp, N, 2e-6, "adam p");
        assert_close(st, rm, N, 2e-6, "adam m");
        assert_close(st + N, rv, N, 2e-6, "adam v");
        for (int i = 0; i < N; i++) ck_assert_float_eq(st[2 * N + i], (float)t);
        ck_assert_mem_eq(p, p2, sizeof p);
        ck_assert_mem_eq(st, st2, sizeof st);
        for (int i = 0; i < N; i++) ck_assert_float_eq(g2[i], 0.0f);
    }
    /* the first step moves every parameter by about lr (m/sqrt(v) = sign(g) after bias correction) */
    optim_config_t c0 = c;
    c0.weight_decay = 0;
    float q[3] = {1, 1, 1}, gq[3] = {0.5f, -2.0f, 1e-3f}, sq[9] = {0};
    optim_step(&c0, q, gq, sq, 3, 0.1f);
    ck_assert_float_eq_tol(q[0], 0.9f, 1e-6f);
    ck_assert_float_eq_tol(q[1], 1.1f, 1e-6f);
    ck_assert_float_eq_tol(q[2], 0.9f, 1e-4f);
}
END_TEST

/* layout 3 -> 4 -> 2: W0 (12), b0 (4), W1 (8), b1 (2) */
static const int lars_sizes[] = {3, 4, 2};

START_TEST(optim_lars_matches_reference) {
    enum { N = 26 };
    optim_config_t c = {.lr = 1, .momentum = 0.9f, .weight_decay = 1e-3f, .kind = OPTIM_LARS, .lars_eta = 0.02f};
    ck_assert_int_eq(optim_set_layout(&c, lars_sizes, 3), 0);
    ck_assert_int_eq(c.nseg, 4);
    ck_assert_uint_eq(c.seg_lo[3] + c.seg_len[3], N);
    ck_assert_uint_eq(optim_state_per_param(&c), 1);
    const size_t len[] = {12, 4, 8, 2};
    const int bias[] = {0, 1, 0, 1};
    float p[N], g[N], v[N] = {0};
    double rp[N], rg[N], rv[N] = {0};
    rng_t r;
    rng_init(&r, 9, 0);
    fill_random(p, N, &r, 1.0f);
    for (int i = 0; i < N; i++) rp[i] = p[i];
    for (int t = 0; t < 4; t++) {
        fill_random(g, N, &r, 0.5f);
        for (int i = 0; i < N; i++) rg[i] = g[i];
        optim_step(&c, p, g, v, N, 0.3f);
        ref_lars(rp, rg, rv, len, bias, 4, 0.3, 0.9, 1e-3, 0.02);
        assert_close(p, rp, N, 1e-6, "lars p");
        assert_close(v, rv, N, 1e-6, "lars v");
    }
    /* by hand: one weight [3, 4] (norm 5), gradient [0.3, 0.4] (norm 0.5), eta 0.1, no decay:
     * trust = 0.1 * 5 / 0.5 = 1, v = g, p = w - lr g; with a zero gradient, trust falls back to 1 */
    optim_config_t h = {.kind = OPTIM_LARS, .lars_eta = 0.1f};
    const int hs[] = {2, 1};   /* W (1 x 2), b (1) */
    optim_set_layout(&h, hs, 2);
    float hp[3] = {3, 4, 7}, hg[3] = {0.3f, 0.4f, 1}, hv[3] = {0};
    optim_step(&h, hp, hg, hv, 3, 1.0f);
    ck_assert_float_eq_tol(hp[0], 2.7f, 1e-6f);
    ck_assert_float_eq_tol(hp[1], 3.6f, 1e-6f);
    ck_assert_float_eq_tol(hp[2], 6.0f, 1e-6f);   /* bias: plain SGD */
    h.lars_eta = 0.2f;                            /* trust 2 */
    float hp2[3] = {3, 4, 7}, hv2[3] = {0};
    optim_step(&h, hp2, hg, hv2, 3, 1.0f);
    ck_assert_float_eq_tol(hp2[0], 2.4f, 1e-6f);
}
END_TEST

/* a PS shard steps its range with optim_step_at: the shards of optim_shard_range (LARS) or of
 * the even split (Adam) reproduce the whole-model step bit for bit */
START_TEST(optim_shards_match_whole) {
    const int sizes[] = {30, 20, 7, 5};   /* W0 600, b0 20, W1 140, b1 7, W2 35, b2 5 = 807 */
    enum { N = 807 };
    for (int kind = OPTIM_ADAM; kind <= OPTIM_LARS; kind++) {
        optim_config_t c = {.momentum = 0.9f, .weight_decay = 1e-3f, .kind = (optim_kind_t)kind,
                            .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .lars_eta = 0.01f};
        ck_assert_int_eq(optim_set_layout(&c, sizes, 4), 0);
        size_t spp = optim_state_per_param(&c);
        for (int S = 1; S <= 6; S++) {
            static float p[N], g[N], st[3 * N], sp[N], sst[3 * N], buf[3 * N];
            rng_t r;
            rng_init(&r, 3, (uint64_t)S);
            fill_random(p, N, &r, 1.0f);
            memcpy(sp, p, sizeof p);
            memset(st, 0, sizeof st);
            memset(sst, 0, sizeof sst);
            for (int t = 0; t < 3; t++) {
                fill_random(g, N, &r, 0.1f);
                optim_step(&c, p, g, st, N, 0.05f);
                size_t covered = 0;
                for (int s = 0; s < S; s++) {
                    size_t lo, len;
                    int rc = optim_shard_range(&c, N, S, s, &lo, &len);
                    if (kind == OPTIM_LARS && S > 1) ck_assert_int_eq(rc, 0);
                    if (rc != 0) { lo = (size_t)s * N / S; len = (size_t)(s + 1) * N / S - lo; }
                    ck_assert_uint_eq(lo, covered);   /* contiguous, disjoint, in order */
                    ck_assert_uint_gt(len, 0);
                    covered += len;
                    /* the shard's state is spp blocks of len, as a server holds it */
                    for (size_t k = 0; k < spp; k++) memcpy(buf + k * len, sst + k * N + lo, len * sizeof(float));
                    optim_step_at(&c, sp + lo, g + lo, buf, len, 0.05f, lo);
                    for (size_t k = 0; k < spp; k++) memcpy(sst + k * N + lo, buf + k * len, len * sizeof(float));
                }
                ck_assert_uint_eq(covered, N);
            }
            ck_assert_mem_eq(sp, p, sizeof p);
            ck_assert_mem_eq(sst, st, spp * N * sizeof(float));
        }
        if (kind == OPTIM_LARS) {   /* 6 tensors: 7 servers cannot each hold whole ones */
            size_t lo, len;
            ck_assert_int_eq(optim_shard_range(&c, N, 7, 0, &lo, &len), -2);
            ck_assert_int_eq(optim_shard_range(&c, N, 2, 0, &lo, &len), 0);
            ck_assert_uint_eq(lo + len, 600);   /* W0 ends at 600, the segment start nearest 807/2 */
        }
    }
    optim_config_t sgd = {0};
    size_t lo, len;
    ck_assert_int_eq(optim_shard_range(&sgd, N, 2, 0, &lo, &len), -1);
    ck_assert_str_eq(optim_kind_name(OPTIM_ADAM), "adam");
    ck_assert_str_eq(optim_kind_name(OPTIM_LARS), "lars");
}
END_TEST

static Suite *suite_optim_ext(void) {
    const unit_test_t tests[] = {
        UNIT_TEST(optim_adam_matches_reference), UNIT_TEST(optim_lars_matches_reference), UNIT_TEST(optim_shards_match_whole),
    };
    return unit_suite("optim-adam-lars", tests, UNIT_LEN(tests));
}

/* ------------------------------------------------------------------------------------ blas */

static const struct { const char *core; int f, bw, vl, a2, fma; const char *want; } picks[] = {
    {"Prescott", 1, 1, 1, 1, 1, "SkylakeX"},
    {"prescott", 1, 1, 1, 1, 1, "SkylakeX"},   /* case-insensitive */
    {"Haswell", 1, 1, 1, 1, 1, "SkylakeX"},
    {"Zen", 1, 1, 1, 1, 1, "SkylakeX"},        /* Zen 4/5 have AVX-512 that Zen kernels ignore */
    {"SkylakeX", 1, 1, 1, 1, 1, NULL},
    {"SKYLAKEX", 1, 1, 1, 1, 1, NULL},
    {"Cooperlake", 1, 1, 1, 1, 1, NULL},
    {"SapphireRapids", 1, 1, 1, 1, 1, NULL},
    {"Prescott", 1, 0, 1, 1, 1, "Haswell"},    /* AVX-512F without BW: SkylakeX kernels need BW */
    {"Prescott", 0, 0, 0, 1, 1, "Haswell"},
    {"Nehalem", 0, 0, 0, 1, 1, "Haswell"},
    {"Sandybridge", 0, 0, 0, 1, 1, "Haswell"},
    {"Core2", 0, 0, 0, 1, 1, "Haswell"},
    {"Atom", 0, 0, 0, 1, 1, "Haswell"},
    {"Prescott", 0, 0, 0, 1, 0, NULL},         /* AVX2 without FMA: Haswell kernels would fault */
    {"Prescott", 0, 0, 0, 0, 0, NULL},
    {"Haswell", 0, 0, 0, 1, 1, NULL},
    {"Zen", 0, 0, 0, 1, 1, NULL},
    {"Excavator", 0, 0, 0, 1, 1, NULL},
    {"Bulldozer", 0, 0, 0, 1, 1, NULL},
    {NULL, 0, 0, 0, 1, 1, "Haswell"},           /* no name at all counts as unknown */
};

START_TEST(blas_pick_table) {
    const char *got = blas_pick_coretype(picks[_i].core, picks[_i].f, picks[_i].bw, picks[_i].vl,
                                         picks[_i].a2, picks[_i].fma);
    const char *want = picks[_i].want;
    ck_assert_msg((got == NULL) == (want == NULL) && (!got || strcmp(got, want) == 0),
                  "core %s avx512f/bw/vl %d/%d/%d avx2 %d fma %d: got %s, want %s",
                  picks[_i].core ? picks[_i].core : "(null)", picks[_i].f, picks[_i].bw,
                  picks[_i].vl, picks[_i].a2, picks[_i].fma, got ? got : "NULL", want ? want : "NULL");
}
END_TEST

/* main() ran blas_setup: OpenBLAS must now be on a core the decision is happy with, and when it
 * re-executed the log says so (run only where blas_setup_unchecked finds something to check) */
START_TEST(blas_setup_took_effect) {
    const char *core = blas_corename();
    ck_assert_ptr_nonnull(core);
    ck_assert(core[0] != '\0');
    __builtin_cpu_init();
    const char *pick = blas_pick_coretype(core, __builtin_cpu_supports("avx512f"),
                                          __builtin_cpu_supports("avx512bw"),
                                          __builtin_cpu_supports("avx512vl"),
                                          __builtin_cpu_supports("avx2"), __builtin_cpu_supports("fma"));
    ck_assert_msg(pick == NULL, "OpenBLAS still on %s after blas_setup (log: '%s')", core, blas_log);
    if (blas_log[0]) {
        ck_assert_msg(strstr(blas_log, "re-executed with OPENBLAS_CORETYPE=") != NULL, "log '%s'", blas_log);
        ck_assert(strstr(blas_log, core) != NULL);
        ck_assert_ptr_null(getenv("PSRING_BLAS_REEXEC"));  /* the marker does not leak to children */
    }
}
END_TEST

/* with OPENBLAS_CORETYPE already set, blas_setup must neither exec nor override it */
START_TEST(blas_setup_respects_user_choice) {
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    unsetenv("PSRING_BLAS_REEXEC");
    char line[256] = "junk";
    blas_setup(0, NULL, 1, line, sizeof line);  /* argv NULL: an exec attempt would crash */
    ck_assert_msg(strstr(line, "OPENBLAS_CORETYPE=Prescott set by the user") != NULL, "log '%s'", line);
    ck_assert_str_eq(getenv("OPENBLAS_CORETYPE"), "Prescott");
}
END_TEST

START_TEST(blas_setup_reports_reexec) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    setenv("PSRING_BLAS_REEXEC", "Prescott", 1);
    char line[512];
    blas_setup(0, NULL, 1, line, sizeof line);
    ck_assert_msg(strncmp(line, "blas: OpenBLAS picked Prescott for this CPU (", 45) == 0, "log '%s'", line);
    ck_assert_msg(strstr(line, "re-executed with OPENBLAS_CORETYPE=SkylakeX, now ") != NULL, "log '%s'", line);
    ck_assert(strchr(line, '\n') == NULL);
    ck_assert_ptr_null(getenv("PSRING_BLAS_REEXEC"));
}
END_TEST

static Suite *suite_blas(void) {
    const unit_test_t tests[] = {
        UNIT_LOOP(blas_pick_table, UNIT_LEN(picks)), UNIT_TEST(blas_setup_respects_user_choice),
        UNIT_TEST(blas_setup_reports_reexec),
    };
    return unit_suite("blas", tests, UNIT_LEN(tests));
}

/* why blas_setup_took_effect has nothing to check here (NULL: it has): a BLAS that cannot name its
 * core, or a core the user chose or kept, leaves no decision of blas_setup's to test. A check that
 * cannot run reports SKIP, not a PASS it did not earn. */
static const char *blas_setup_unchecked(void) {
#ifndef HAVE_OPENBLAS_GET_CORENAME
    return "this BLAS does not name its core (no openblas_get_corename)";
#else
    if (strstr(blas_log, "set by the user")) return "OPENBLAS_CORETYPE set by the user";
    if (strstr(blas_log, "PSRING_NO_BLAS_FIX")) return "PSRING_NO_BLAS_FIX set";
    return NULL;
#endif
}

int main(int argc, char **argv) {
    blas_setup(argc, argv, 1, blas_log, sizeof blas_log);
    if (blas_log[0]) printf("%s\n", blas_log);
    if (argc > 1 && strcmp(argv[1], "blas-setup") == 0) {   /* tests/blas_setup.sh: that check alone */
        const char *why = blas_setup_unchecked();
        if (why) {
            printf("SKIP: blas_setup_took_effect: %s\n", why);
            return 77;
        }
        const unit_test_t tests[] = {UNIT_TEST(blas_setup_took_effect)};
        Suite *suites[] = {unit_suite("blas-setup", tests, UNIT_LEN(tests))};
        return unit_run(suites, UNIT_LEN(suites));
    }
    Suite *suites[] = {suite_layers(), suite_mlp(), suite_optim(), suite_optim_ext(), suite_blas()};
    return unit_run(suites, UNIT_LEN(suites));
}
