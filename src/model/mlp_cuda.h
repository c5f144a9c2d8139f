/* mlp_cuda.h: the MLP of mlp.h on a CUDA GPU.
 * The layout is mlp.h's: parameters in one contiguous device buffer (W0 b0 W1 b1 ...), gradients
 * in a second with the same layout, activations on the device too. The model is created FROM an
 * initialised host mlp_t (mlp_init's exact code path), so CPU and GPU runs start from the same
 * bits. The model's work runs on a stream of its own, a blocking one, so it is ordered with the
 * legacy default stream that the buffer helpers and the optimizer use: between those no call
 * needs its own sync. Other streams (the device ring's, NCCL's) are not ordered with it: whoever
 * hands them the gradients waits for backward first (cuda_sync; the trainer does). The calls on a
 * gathered batch and backward replay CUDA graphs, one per batch size (PSRING_CUDA_GRAPHS=0 in the
 * environment, or CUDA_LAUNCH_BLOCKING, launches the same kernels one by one).
 * The API is opaque (no CUDA types), so C code that calls it needs no CUDA headers; it exists
 * only in --with-cuda builds (libmodel_cuda.a). Devices, device buffers and pinned host memory
 * are src/common's (cuda_mem.h); the optimizer on device buffers is optim_cuda.h. Not here: mixed
 * precision, multi-GPU per process. */
#ifndef PSRING_MLP_CUDA_H
#define PSRING_MLP_CUDA_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "mlp.h"
#include "common/cuda_mem.h"   /* the buffers and pinned memory it is used with */

/* ---- a dataset on the device ----
 * The raw pixels (count x dim bytes) and labels of a dataset, uploaded once, so that a batch is
 * gathered on the GPU from its sample indices (mlp_cuda_gather): per step the host sends B
 * indices instead of B x dim floats, and does no conversion. */
typedef struct cuda_dataset cuda_dataset_t;
cuda_dataset_t *cuda_dataset_create(const uint8_t *pixels, const uint8_t *labels, int count, int dim);
void cuda_dataset_free(cuda_dataset_t *d);

/* ---- the model ---- */
typedef struct mlp_cuda mlp_cuda_t;
/* copies host's layout and parameters (host->params) to a new device model for batches up to
 * host->max_batch; the current device must be set (cuda_device_pin) */
mlp_cuda_t *mlp_cuda_create(const mlp_t *host);
void mlp_cuda_free(mlp_cuda_t *m);
float *mlp_cuda_params(mlp_cuda_t *m);               /* device, nparams */
float *mlp_cuda_grads(mlp_cuda_t *m);                /* device, nparams */
size_t mlp_cuda_nparams(const mlp_cuda_t *m);
void mlp_cuda_zero_grad(mlp_cuda_t *m);
void mlp_cuda_scale_grads(mlp_cuda_t *m, float s);
/* x (B, sizes[0]) and labels on the HOST (best pinned: cuda_host_alloc); uploads them and
 * runs forward; returns the mean cross-entropy (reduced on the device) when labels != NULL, else 0.
 * Returns with the device done (with or without labels): x and labels may be refilled at once. */
float mlp_cuda_forward(mlp_cuda_t *m, const float *x, const uint8_t *labels, int B);
/* the batch of samples idx[0..B) of d into the model's device input and labels, each pixel
 * normalised as batch.h's batch_normalise does (the same float arithmetic: the same bits); d's
 * dim must be sizes[0]. Asynchronous: idx is copied before the call returns (a second gather
 * before the first batch was read waits for the first's copy). */
void mlp_cuda_gather(mlp_cuda_t *m, const cuda_dataset_t *d, const uint32_t *idx, int B);
/* mlp_cuda_forward (with labels) and mlp_cuda_correct on the batch mlp_cuda_gather left */
float mlp_cuda_forward_gathered(mlp_cuda_t *m, int B);
int mlp_cuda_correct_gathered(mlp_cuda_t *m, int B);
/* 1 when neither the model's stream nor the default stream has work left */
int mlp_cuda_idle(mlp_cuda_t *m);
/* 1 while the model replays CUDA graphs (0: turned off, or a capture failed) */
int mlp_cuda_graphs_active(const mlp_cuda_t *m);
/* the device input of the last batch (B x sizes[0] floats), copied to the host: for tests */
void mlp_cuda_input_to_host(mlp_cuda_t *m, float *x, uint8_t *labels, int B);
/* after mlp_cuda_forward with labels, or mlp_cuda_forward_gathered, on the same batch: ADDS
 * d(mean loss)/d(params) into grads. Asynchronous on the model's stream. */
void mlp_cuda_backward(mlp_cuda_t *m, int B);
/* forward only; how many of the B samples are classified correctly (argmax, first max wins) */
int mlp_cuda_correct(mlp_cuda_t *m, const float *x, const uint8_t *labels, int B);

#ifdef __cplusplus
}
#endif
#endif
