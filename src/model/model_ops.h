/* model_ops.h: the trainer's model on the device it was asked for (--device cpu|cuda), chosen
 * once. The CPU path calls mlp.c straight through (one predictable branch per call); the CUDA
 * path keeps parameters, gradients and activations on the GPU (mlp_cuda.h) and a host mirror of
 * the parameters in m->params for what needs them on the host: sync_params, checkpoints, the PS,
 * --dump-params. Not here: the loop (train.c), the step through an exchange (src/exchange/exchange_step.h). */
#ifndef PSRING_MODEL_OPS_H
#define PSRING_MODEL_OPS_H
#include "model/mlp.h"
#include "data/idx.h"
#include "model/device.h"

typedef struct {
    mlp_t *m;           /* the host model: the CPU path's, or the GPU's host mirror */
    void *gpu;          /* mlp_cuda_t with --device cuda, else NULL */
    float *x;           /* the CPU path's batch buffers (model_gather fills them) */
    uint8_t *y;
    struct { const dataset_t *ds; void *dev; } dsets[2];   /* cuda: datasets copied to the GPU */
} model_t;

/* Returns 0, or 2 after printing one line when --device cuda has no usable GPU or the build has
 * no CUDA. Call before anything starts MPI, so every rank fails the same clean way. */
int model_device_check(device_t dev);
/* GPUs this process can see (0 with --device cpu) */
int model_device_count(device_t dev);
/* m is initialised (mlp_init); with cuda the device model is a copy of it on GPU local_rank % n */
void model_init(model_t *md, mlp_t *m, device_t dev, int local_rank);
void model_free(model_t *md);
/* the batch of samples idx[0..n) of ds, normalised (batch.h), where the model reads it: md->x and
 * md->y on the CPU; on the GPU gathered there from a copy of ds made at its first use (so the
 * host sends n indices per batch, not n x dim floats). ds must outlive md. */
void model_gather(model_t *md, const dataset_t *ds, const uint32_t *idx, int n);
float model_forward(model_t *md, int n);                         /* on the gathered batch */
void model_backward(model_t *md, int n, mlp_grad_ready_fn cb, void *ctx);
int model_correct(model_t *md, int n);
void model_scale_grads(model_t *md, float s);
void model_zero_grad(model_t *md);
void model_params_to_host(model_t *md);      /* device -> m->params (no-op on the CPU) */
void model_params_to_device(model_t *md);    /* m->params -> device (no-op on the CPU) */

#endif
