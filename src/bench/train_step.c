/* train_step.c: a worker's real forward + backward before a timed exchange (see train_step.h).
 * Not an imitation of a step's memory traffic or a busy loop: the trainer's own step, so the
 * caches, the cores' frequency and the other processes meet the exchange as they do in training. */
#include "train_step.h"
#include "exchange/exchange_local.h"
#include "exchange/exchange_step.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/parse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>

int train_step_parse(const char *spec, train_step_spec_t *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (strncmp(spec, "mlp:", 4) != 0) {
        snprintf(err, errlen, "--compute wants mlp:LAYERS:BATCH (e.g. mlp:784,512,256,10:64), got '%s'", spec);
        return -1;
    }
    const char *layers = spec + 4, *colon = strrchr(layers, ':');
    if (!colon || colon == layers) {
        snprintf(err, errlen, "--compute wants mlp:LAYERS:BATCH (e.g. mlp:784,512,256,10:64), got '%s'", spec);
        return -1;
    }
    char lbuf[512];
    size_t ll = (size_t)(colon - layers);
    if (ll >= sizeof lbuf) { snprintf(err, errlen, "--compute: layer list too long in '%s'", spec); return -1; }
    memcpy(lbuf, layers, ll);
    lbuf[ll] = 0;
    char lerr[256];
    int n = mlp_parse_layers(lbuf, out->sizes, MLP_MAX_SIZES, lerr, sizeof lerr);
    if (n < 0) { snprintf(err, errlen, "--compute '%s': %s", spec, lerr); return -1; }
    out->nsizes = n;
    long b;
    if (parse_long(colon + 1, 1, 65536, &b)) {
        snprintf(err, errlen, "--compute '%s': the batch must be an integer in 1..65536, got '%s'", spec, colon + 1);
        return -1;
    }
    out->batch = (int)b;
    return 0;
}

void train_step_init(train_step_t *t, const train_step_spec_t *s, const mlp_allocator_t *ga, uint64_t seed,
                     int with_optimizer) {
    memset(t, 0, sizeof *t);
    mlp_init_alloc(&t->m, s->sizes, s->nsizes, s->batch, seed, ga);
    t->batch = s->batch;
    model_init(&t->md, &t->m, DEVICE_CPU, 0);
    if (with_optimizer) {
        /* psring-train's optimizer as its defaults configure it (optim_defaults), for this model */
        optim_config_t oc = optim_defaults(OPTIM_SGD);
        if (optim_set_layout(&oc, s->sizes, s->nsizes) != 0) oc.nseg = 0;   /* only LARS reads it */
        t->ex = exchange_local_create(&oc, t->m.nparams);
        t->lr = oc.lr;
    }
    /* MNIST-like: pixels in [0, 1), uniform labels; seeded, so every run does the same work */
    size_t nx = (size_t)s->batch * (size_t)s->sizes[0];
    rng_t g;
    rng_init(&g, seed, 0);
    for (size_t i = 0; i < nx; i++) t->md.x[i] = rng_float(&g);
    int classes = s->sizes[s->nsizes - 1];
    for (int i = 0; i < s->batch; i++) t->md.y[i] = (uint8_t)rng_below(&g, (uint64_t)classes);
}

void train_step_run(train_step_t *t) {
    if (t->ex) {
        if (exchange_step_model(t->ex, &t->md, t->lr) != 0) die("train_step: the exchange step failed");
    } else {
        model_zero_grad(&t->md);
    }
    model_forward(&t->md, t->batch);
    model_backward(&t->md, t->batch, NULL, NULL);
}

void train_step_free(train_step_t *t) {
    exchange_free(t->ex);
    model_free(&t->md);
    mlp_free(&t->m);
    memset(t, 0, sizeof *t);
}

void train_step_pace(train_step_t *t, int us) {
    if (t) train_step_run(t);
    else if (us > 0) train_step_cpu_us(us);
}

void train_step_cpu_us(int us) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) die("clock_gettime: %s", strerror(errno));
    double end = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + 1e-6 * us, now;
    volatile double sink = 0;
    do {
        for (int k = 0; k < 1000; k++) sink += 1e-9 * k;
        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) die("clock_gettime: %s", strerror(errno));
        now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    } while (now < end);
}
