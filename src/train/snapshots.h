/* snapshots.h: test accuracy along a run, off its timed path. With --snapshot-every K worker 0
 * copies its parameters before the first step and every K steps, with the training time so far
 * (the copies' own time left out), keeps them in memory and writes them to --snapshots FILE after
 * training; `psring-train --eval-snapshots FILE` tests each copy afterwards, on a host of its own:
 * no worker stalls on a test mid-run, and no test sits on the time axis.
 *
 *   FILE: "PSRSNAP1" | uint64 nparams | records of { int64 step | double elapsed_s | float[nparams] }
 */
#ifndef PSRING_SNAPSHOTS_H
#define PSRING_SNAPSHOTS_H
#include <stddef.h>

typedef struct run run_t;

typedef struct {
    long every;          /* steps between copies; 0: off */
    size_t nparams, n, cap;
    float *params;       /* n copies of nparams */
    long *step;
    double *elapsed;     /* training seconds since the run started, the copies' time left out */
    double spent;        /* seconds the copies took so far */
} snapshots_t;

void snapshots_init(snapshots_t *s, long every, size_t nparams);
/* worker 0, at step r->step (0 before the first): a copy when it is due */
void snapshots_take(snapshots_t *s, run_t *r);
/* worker 0, after training: FILE as above */
void snapshots_write(const snapshots_t *s, const char *path);
void snapshots_free(snapshots_t *s);
/* --eval-snapshots: every copy in FILE tested on r's test set; "step,elapsed_s,test_accuracy" on
 * stdout. Bad input (not such a file, another model's size): one line, exit 2. */
void snapshots_eval(run_t *r, const char *path);
#endif
