/* test_mlp_cuda: the GPU MLP and optimizer (mlp_cuda.h, optim_cuda.h) against the CPU ones
 * (mlp.h, optim.h) from the same init and batch: loss, every gradient, correct counts, and
 * parameters after SGD and Adam steps agree within float tolerance; a batch gathered on the
 * device is batch_gather's bit for bit; training through CUDA graphs is training without them, bit for bit. Exits 77
 * (SKIP) when there is no usable GPU. */
#include "model/mlp.h"
#include "model/mlp_cuda.h"
#include "model/optim_cuda.h"
#include "model/optim.h"
#include "data/batch.h"
#include "common/rng.h"
#include "common/check.h"
#include "unit.h"
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *layers; int B; } shape_t;
static const shape_t shapes[] = {
    {"784,10", 1}, {"784,64,10", 7}, {"784,512,256,10", 64}, {"784,300,100,10", 33}, {"784,128,10", 512},
};

/* max |a-b| / max(1, max |b|): relative to the size of the reference */
static double rel_err(const float *a, const float *b, size_t n) {
    double d = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > d) d = e;
        if (fabs(b[i]) > m) m = fabs(b[i]);
    }
    return d / m;
}

static void make_batch(float *x, uint8_t *y, int B, uint64_t seed) {
    rng_t r;
    rng_init(&r, seed, 7);
    for (int i = 0; i < B * 784; i++) x[i] = rng_float(&r);
    for (int i = 0; i < B; i++) y[i] = (uint8_t)(rng_float(&r) * 10) % 10;
}

START_TEST(test_forward_backward_match) {
    const shape_t *s = &shapes[_i];
    int sizes[MLP_MAX_SIZES];
    char err[256];
    int ns = mlp_parse_layers(s->layers, sizes, MLP_MAX_SIZES, err, sizeof err);
    ck_assert_int_gt(ns, 0);
    mlp_t m;
    mlp_init(&m, sizes, ns, s->B, 1234 + (uint64_t)_i);
    mlp_cuda_t *g = mlp_cuda_create(&m);
    float *x = cuda_host_alloc(sizeof(float) * (size_t)s->B * 784);   /* pinned: uploads are async */
    uint8_t *y = cuda_host_alloc((size_t)s->B);
    make_batch(x, y, s->B, 99 + (uint64_t)_i);
    for (int rep = 0; rep < 2; rep++) {   /* twice: backward ADDS into the gradients */
        float lc = mlp_forward(&m, x, y, s->B);
        float lg = mlp_cuda_forward(g, x, y, s->B);
        ck_assert_msg(fabsf(lc - lg) <= 1e-5f * fabsf(lc) + 1e-6f, "%s B=%d: loss cpu %.9g gpu %.9g", s->layers, s->B, lc, lg);
        mlp_backward(&m, x, y, s->B, NULL, NULL);
        mlp_cuda_backward(g, s->B);
    }
    float *gg = xmalloc(m.nparams * sizeof(float));
    cuda_to_host(gg, mlp_cuda_grads(g), m.nparams);
    for (int l = 0; l < m.nlayers; l++) {   /* per layer, so a wrong transpose names its layer */
        size_t nw = (size_t)m.sizes[l + 1] * m.sizes[l];
        double ew = rel_err(gg + m.w_off[l], m.grads + m.w_off[l], nw);
        double eb = rel_err(gg + m.b_off[l], m.grads + m.b_off[l], (size_t)m.sizes[l + 1]);
        ck_assert_msg(ew < 1e-4 && eb < 1e-4, "%s B=%d layer %d: grad rel err W %.3g b %.3g", s->layers, s->B, l, ew, eb);
    }
    /* gradients must not be all zero (a test that cannot fail is a defect) */
    double norm = 0;
    for (size_t i = 0; i < m.nparams; i++) norm += fabs(gg[i]);
    ck_assert(norm > 0);
    int cc = mlp_correct(&m, x, y, s->B), cg = mlp_cuda_correct(g, x, y, s->B);
    ck_assert_msg(abs(cc - cg) <= 1, "%s: correct cpu %d gpu %d", s->layers, cc, cg);
    free(gg);
    cuda_host_free(x);
    cuda_host_free(y);
    mlp_cuda_free(g);
    mlp_free(&m);
}
END_TEST

/* forward without labels (inference) returns with the device idle, as with labels: callers may
 * refill a pinned x right after it, and an upload still reading x would take the next batch's pixels.
 * The widest layers and batch 512 keep the GPU busy long after the launches return. */
START_TEST(test_forward_unlabelled_syncs) {
    int sizes[MLP_MAX_SIZES];
    char err[256];
    int ns = mlp_parse_layers("784,1024,1024,10", sizes, MLP_MAX_SIZES, err, sizeof err);
    ck_assert_int_gt(ns, 0);
    mlp_t m;
    mlp_init(&m, sizes, ns, 512, 4321);
    mlp_cuda_t *g = mlp_cuda_create(&m);
    float *x = cuda_host_alloc(sizeof(float) * 512 * 784);   /* pinned: the upload is async */
    uint8_t *y = cuda_host_alloc(512);
    make_batch(x, y, 512, 17);
    for (int rep = 0; rep < 5; rep++) {
        ck_assert_float_eq(mlp_cuda_forward(g, x, NULL, 512), 0.0f);
        ck_assert_msg(mlp_cuda_idle(g), "rep %d: mlp_cuda_forward(labels NULL) returned with work still queued", rep);
    }
    /* and the model still classifies as the CPU does (a near-tie may flip one argmax) */
    int cg = mlp_cuda_correct(g, x, y, 512), cc = mlp_correct(&m, x, y, 512);
    ck_assert_msg(abs(cc - cg) <= 1, "correct cpu %d gpu %d", cc, cg);
    cuda_host_free(x);
    cuda_host_free(y);
    mlp_cuda_free(g);
    mlp_free(&m);
}
END_TEST

/* optimizer: same params, grads and state in, the same out (bit for bit for SGD: no FMA on
 * either side; Adam within an ulp or two of sqrt/div) over several steps */
START_TEST(test_optimizer_match) {
    const optim_kind_t kinds[] = {OPTIM_SGD, OPTIM_ADAM};
    optim_config_t c;
    memset(&c, 0, sizeof c);
    c.kind = kinds[_i];
    c.lr = 0.05f; c.momentum = 0.9f; c.weight_decay = 1e-3f;
    c.beta1 = 0.9f; c.beta2 = 0.999f; c.eps = 1e-8f;
    size_t n = 100003, spp = optim_state_per_param(&c);
    float *p = xmalloc(n * 4), *g = xmalloc(n * 4), *st = xcalloc(n * spp, 4), *back = xmalloc(n * 4);
    rng_t r;
    rng_init(&r, 5, 1);
    for (size_t i = 0; i < n; i++) p[i] = rng_float(&r) - 0.5f;
    float *dp = cuda_floats_alloc(n), *dg = cuda_floats_alloc(n), *ds = cuda_floats_alloc(n * spp);
    cuda_to_device(dp, p, n);
    for (int step = 0; step < 5; step++) {
        for (size_t i = 0; i < n; i++) g[i] = (rng_float(&r) - 0.5f) * 0.1f;
        cuda_to_device(dg, g, n);
        optim_step(&c, p, g, st, n, c.lr);
        optim_cuda_step(&c, dp, dg, ds, n, c.lr, step, 1);
    }
    cuda_to_host(back, dp, n);
    double e = rel_err(back, p, n);
    ck_assert_msg(c.kind == OPTIM_SGD ? e == 0.0 : e < 1e-6, "%s: params rel err %.3g", optim_kind_name(c.kind), e);
    cuda_to_host(back, dg, n);
    for (size_t i = 0; i < n; i++) ck_assert_msg(back[i] == 0.0f, "gradient %zu not cleared", i);
    cuda_floats_free(dp); cuda_floats_free(dg); cuda_floats_free(ds);
    free(p); free(g); free(st); free(back);
}
END_TEST

/* a dataset holding every pixel value 0..255, gathered by index on the device: the same floats
 * and labels as batch_gather on the host (batch.h's normalisation, bit for bit), and the same loss
 * and correct count as the host batch uploaded */
START_TEST(test_gather_matches_host) {
    const int count = 1000, dim = 784, B = 300;
    uint8_t *pixels = malloc((size_t)count * dim), *labels = malloc(count);
    for (int i = 0; i < count * dim; i++) pixels[i] = (uint8_t)((i * 7 + i / 13) & 255);
    for (int i = 0; i < count; i++) labels[i] = (uint8_t)(i % 10);
    dataset_t ds = {.count = count, .rows = 28, .cols = 28, .dim = dim, .pixels = pixels, .labels = labels};
    uint32_t idx[300];
    rng_t r;
    rng_init(&r, 99, 1);
    for (int i = 0; i < B; i++) idx[i] = (uint32_t)(rng_float(&r) * count) % count;
    idx[0] = count - 1;   /* the last row too */
    int sizes[3] = {784, 64, 10};
    mlp_t m;
    mlp_init(&m, sizes, 3, 512, 77);
    mlp_cuda_t *g = mlp_cuda_create(&m);
    cuda_dataset_t *d = cuda_dataset_create(pixels, labels, count, dim);
    float *hx = malloc(sizeof(float) * B * dim), *gx = malloc(sizeof(float) * B * dim);
    uint8_t hy[300], gy[300];
    batch_gather(hx, hy, &ds, idx, B);
    uint32_t other[300];
    for (int i = 0; i < B; i++) other[i] = (idx[i] + 1) % count;
    mlp_cuda_gather(g, d, other, B);   /* replaced before anything reads it: the second must win */
    mlp_cuda_gather(g, d, idx, B);
    mlp_cuda_input_to_host(g, gx, gy, B);
    ck_assert_msg(memcmp(hx, gx, sizeof(float) * B * dim) == 0, "device gather differs from batch_gather");
    ck_assert_msg(memcmp(hy, gy, B) == 0, "device labels differ from batch_gather's");
    float lg = mlp_cuda_forward_gathered(g, B);
    int cg = mlp_cuda_correct_gathered(g, B);
    ck_assert_float_eq(lg, mlp_cuda_forward(g, hx, hy, B));
    ck_assert_int_eq(cg, mlp_cuda_correct(g, hx, hy, B));
    cuda_dataset_free(d);
    mlp_cuda_free(g);
    mlp_free(&m);
    free(hx); free(gx); free(pixels); free(labels);
}
END_TEST

/* the same training steps with CUDA graphs (the default) and without (PSRING_CUDA_GRAPHS=0), from
 * one init, over batch sizes that change from step to step (a graph per size, replayed and
 * recaptured): every loss, correct count and parameter the same bits */
START_TEST(test_graphs_match_eager) {
    const int count = 2000, dim = 784;
    uint8_t *pixels = malloc((size_t)count * dim), *labels = malloc(count);
    rng_t r;
    rng_init(&r, 5, 3);
    for (int i = 0; i < count * dim; i++) pixels[i] = (uint8_t)(rng_float(&r) * 256);
    for (int i = 0; i < count; i++) labels[i] = (uint8_t)(i % 10);
    int sizes[4] = {784, 128, 64, 10};
    mlp_t m;
    mlp_init(&m, sizes, 4, 256, 31);
    mlp_cuda_t *g[2];
    setenv("PSRING_CUDA_GRAPHS", "0", 1);
    g[0] = mlp_cuda_create(&m);
    unsetenv("PSRING_CUDA_GRAPHS");
    g[1] = mlp_cuda_create(&m);
    ck_assert_msg(!mlp_cuda_graphs_active(g[0]), "PSRING_CUDA_GRAPHS=0 left graphs on");
    cuda_dataset_t *d = cuda_dataset_create(pixels, labels, count, dim);
    optim_config_t c = {0};
    c.kind = OPTIM_SGD;
    c.momentum = 0.9f;
    size_t n = m.nparams;
    float *st[2] = {cuda_floats_alloc(n), cuda_floats_alloc(n)};
    static const int Bs[] = {256, 256, 17, 256, 100, 17, 256, 1, 256, 100};
    uint32_t idx[256];
    for (int s = 0; s < (int)(sizeof Bs / sizeof Bs[0]); s++) {
        int B = Bs[s];
        for (int i = 0; i < B; i++) idx[i] = (uint32_t)(rng_float(&r) * count) % count;
        float loss[2];
        int corr[2];
        for (int k = 0; k < 2; k++) {
            mlp_cuda_gather(g[k], d, idx, B);
            loss[k] = mlp_cuda_forward_gathered(g[k], B);
            mlp_cuda_backward(g[k], B);
            optim_cuda_step(&c, mlp_cuda_params(g[k]), mlp_cuda_grads(g[k]), st[k], n, 0.05f, 0, 1);
            mlp_cuda_gather(g[k], d, idx, B);
            corr[k] = mlp_cuda_correct_gathered(g[k], B);
        }
        ck_assert_msg(memcmp(&loss[0], &loss[1], sizeof(float)) == 0, "step %d (B %d): loss %.9g eager, %.9g graphs", s, B,
                      loss[0], loss[1]);
        ck_assert_int_eq(corr[0], corr[1]);
    }
    /* a capture the runtime refused would have turned graphs off, and this compared eager with eager */
    ck_assert_msg(mlp_cuda_graphs_active(g[1]), "CUDA graphs were turned off during the test (a capture failed)");
    float *p0 = malloc(sizeof(float) * n), *p1 = malloc(sizeof(float) * n);
    cuda_to_host(p0, mlp_cuda_params(g[0]), n);
    cuda_to_host(p1, mlp_cuda_params(g[1]), n);
    ck_assert_msg(memcmp(p0, p1, sizeof(float) * n) == 0, "parameters differ after training with and without graphs");
    ck_assert_msg(memcmp(p0, m.params, sizeof(float) * n) != 0, "training left the parameters where they started");
    for (int k = 0; k < 2; k++) { cuda_floats_free(st[k]); mlp_cuda_free(g[k]); }
    cuda_dataset_free(d);
    mlp_free(&m);
    free(p0); free(p1); free(pixels); free(labels);
}
END_TEST

int main(void) {
    char why[256] = "";
    if (cuda_device_pin(0, why, sizeof why) < 0) {
        printf("SKIP: no usable CUDA device (%s)\n", why);
        return 77;
    }
    const unit_test_t tests[] = {
        UNIT_LOOP(test_forward_backward_match, UNIT_LEN(shapes)), UNIT_LOOP(test_optimizer_match, 2),
        UNIT_TEST(test_forward_unlabelled_syncs), UNIT_TEST(test_gather_matches_host), UNIT_TEST(test_graphs_match_eager),
    };
    Suite *s = suite_create("mlp_cuda");
    tcase_set_timeout(unit_tcase(s, "vs_cpu", tests, UNIT_LEN(tests)), 120);
    return unit_run_fork(CK_NOFORK, &s, 1);   /* a forked child cannot use the parent's CUDA context */
}
