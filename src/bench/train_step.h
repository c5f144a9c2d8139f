/* train_step.h: one worker's real training step (forward + backward of the project's MLP) for the
 * benchmarks that time an exchange primitive under the work that precedes it in training
 * (psring-bench-ps, psring-bench-allreduce: --compute mlp:LAYERS:BATCH).
 * It is the trainer's own step (src/model/model_ops.h: model_forward, model_backward;
 * src/exchange/exchange_step.h: exchange_step_model) on random, real-shaped data (a batch of inputs in [0, 1), labels in
 * 0..classes-1), and leaves the gradient in the model's gradient buffer, from the caller's
 * allocator (e.g. ring_buffer_alloc, as the trainer's ring does). With the optimizer on (a ring
 * worker: every worker applies the averaged gradient itself), each step starts with the
 * trainer's one-worker exchange step (src/exchange/exchange_local.c: psring-train's default
 * optimizer and learning rate, the gradient cleared in the optimizer's pass); a PS worker's step
 * has no optimizer (its servers run it), only the clearing. It does not exchange, read MNIST or
 * time anything. */
#ifndef PSRING_TRAIN_STEP_H
#define PSRING_TRAIN_STEP_H
#include <stddef.h>
#include <stdint.h>
#include "model/mlp.h"
#include "model/optim.h"
#include "exchange/exchange.h"
#include "model/model_ops.h"

typedef struct {
    int sizes[MLP_MAX_SIZES];
    int nsizes;
    int batch;          /* per worker, as psring-train's --batch (weak scaling) */
} train_step_spec_t;

typedef struct {
    mlp_t m;            /* m.params, m.grads (m.nparams floats) */
    model_t md;         /* the trainer's view of m (CPU); md.x (batch, sizes[0]), md.y (batch) */
    int batch;
    exchange_t *ex;     /* with_optimizer: the trainer's local exchange (optimizer), else NULL */
    float lr;           /* its learning rate (psring-train's default) */
} train_step_t;

/* Parses "mlp:784,512,256,10:64" (layer widths as psring-train's --layers takes them, then the
 * per-worker batch in 1..65536); 0, or -1 with a one-line reason in err. */
int train_step_parse(const char *spec, train_step_spec_t *out, char *err, size_t errlen);
/* The model (PyTorch-style init from seed) and its random batch; ga NULL: gradients on the heap.
 * with_optimizer 1: a ring worker's step (optimizer first), 0: a PS worker's. */
void train_step_init(train_step_t *t, const train_step_spec_t *s, const mlp_allocator_t *ga, uint64_t seed,
                     int with_optimizer);
/* One step's compute in the trainer's order: the exchange step on the previous gradient (or,
 * without the optimizer, only clearing it), forward, backward (the gradient is then final). */
void train_step_run(train_step_t *t);
void train_step_free(train_step_t *t);
/* The benchmarks' --compute-us instead of a real step: us microseconds of this process's CPU
 * time (not wall time), so that, as a training step's forward and backward, the work stretches
 * when more processes than cores share them. */
void train_step_cpu_us(int us);
/* What precedes each timed exchange in the benchmarks: t's step when there is one (--compute),
 * else us of CPU time (--compute-us; 0: nothing, back to back). */
void train_step_pace(train_step_t *t, int us);

#endif
