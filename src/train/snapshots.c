/* snapshots.c: copies of worker 0's parameters along a run, tested after it (snapshots.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <errno.h>
#include "common/check.h"
#include "common/timer.h"
#include "train/run.h"
#include "train/snapshots.h"
#include "common/outfile.h"

static const char MAGIC[8] = {'P', 'S', 'R', 'S', 'N', 'A', 'P', '1'};

void snapshots_init(snapshots_t *s, long every, size_t nparams) {
    *s = (snapshots_t){ .every = every, .nparams = nparams };
}

static void grow(snapshots_t *s) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    float *p = realloc(s->params, cap * s->nparams * sizeof(float));
    long *st = realloc(s->step, cap * sizeof(long));
    double *el = realloc(s->elapsed, cap * sizeof(double));
    if (!p || !st || !el) die("--snapshot-every: out of memory for %zu copies of %zu parameters", cap, s->nparams);
    s->params = p, s->step = st, s->elapsed = el, s->cap = cap;
}

void snapshots_take(snapshots_t *s, run_t *r) {
    if (s->every <= 0 || r->ex->rank != 0 || r->step % s->every != 0) return;
    double t0 = timer_now();
    if (s->n == s->cap) grow(s);
    model_params_to_host(&r->md);
    memcpy(s->params + s->n * s->nparams, r->m.params, s->nparams * sizeof(float));
    s->step[s->n] = r->step;
    s->elapsed[s->n] = t0 - r->wall0 - s->spent;
    s->n++;
    s->spent += timer_now() - t0;
}

/* whole or not at all (outfile.h) */
void snapshots_write(const snapshots_t *s, const char *path) {
    outfile_t out;
    char err[4400];
    if (outfile_open(&out, path, err, sizeof err) != 0) die_input("--snapshots %s", err);
    FILE *f = out.f;
    uint64_t np = s->nparams;
    int ok = fwrite(MAGIC, 1, sizeof MAGIC, f) == sizeof MAGIC && fwrite(&np, sizeof np, 1, f) == 1;
    for (size_t i = 0; ok && i < s->n; i++) {
        int64_t step = s->step[i];
        ok = fwrite(&step, sizeof step, 1, f) == 1 && fwrite(&s->elapsed[i], sizeof(double), 1, f) == 1 &&
             fwrite(s->params + i * s->nparams, sizeof(float), s->nparams, f) == s->nparams;
    }
    if (!ok) {
        outfile_abandon(&out);
        die_at(NULL, 0, 1, "--snapshots %s: write failed: %s (any previous file is left as it was)", path, strerror(errno));
    }
    if (outfile_commit(&out, err, sizeof err) != 0) die_at(NULL, 0, 1, "--snapshots %s", err);
}

void snapshots_free(snapshots_t *s) {
    free(s->params);
    free(s->step);
    free(s->elapsed);
    *s = (snapshots_t){0};
}

void snapshots_eval(run_t *r, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die_input("--eval-snapshots %s: %s", path, strerror(errno));
    char magic[sizeof MAGIC];
    uint64_t np = 0;
    if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, MAGIC, sizeof MAGIC) != 0 || fread(&np, sizeof np, 1, f) != 1)
        die_input("--eval-snapshots %s: not a --snapshots file", path);
    if (np != r->nparams)
        die_input("--eval-snapshots %s: copies of %llu parameters, --layers %s has %zu", path, (unsigned long long)np,
                  r->o->layers_spec, r->nparams);
    int64_t step;
    double elapsed;
    for (int n = 0; fread(&step, sizeof step, 1, f) == 1; n++) {
        if (fread(&elapsed, sizeof elapsed, 1, f) != 1 || fread(r->m.params, sizeof(float), r->nparams, f) != r->nparams)
            die_input("--eval-snapshots %s: cut short at step %lld", path, (long long)step);
        model_params_to_device(&r->md);
        if (n == 0) printf("step,elapsed_s,test_accuracy\n");   /* a header once a copy is whole */
        printf("%lld,%.6f,%.4f\n", (long long)step, elapsed, run_correct_in(r, &r->test, 0, r->test.count) / r->test.count);
    }
    fclose(f);
}
