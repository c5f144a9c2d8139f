/* mlp_cuda.h: the MLP of mlp.h on a CUDA GPU, and the optimizer of optim.h on device buffers.
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
 * only in --with-cuda builds (libmodel_cuda.a). Not here: mixed precision, multi-GPU per
 * process, LARS on the device (its per-matrix norms; the trainer refuses it with --device cuda). */
#ifndef PSRING_MLP_CUDA_H
#define PSRING_MLP_CUDA_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "mlp.h"
#include "optim.h"

/* ---- devices ---- */
/* Usable GPUs; 0 when there is none or no driver (cudaGetDeviceCount's error is then put in
 * why, e.g. "CUDA driver version is insufficient for CUDA runtime version"). why may be NULL. */
int cuda_device_count(char *why, size_t whylen);
/* Horovod's pinning: this process uses GPU local_rank % count. Returns the device, or -1 with
 * why set when there is no usable GPU. */
int cuda_device_pin(int local_rank, char *why, size_t whylen);
/* "NVIDIA H100 80GB HBM3" of the current device */
void cuda_device_name(char *name, size_t len);

/* ---- device buffers (floats), for exchanges written in C ---- */
float *cuda_floats_alloc(size_t n);                 /* zeroed */
void cuda_floats_free(float *d);
void cuda_to_device(float *d_dst, const float *h_src, size_t n);
void cuda_to_host(float *h_dst, const float *d_src, size_t n);
void cuda_zero(float *d, size_t n);
void cuda_scale(float *d, float s, size_t n);        /* d *= s */
void cuda_sync(void);                                /* cudaDeviceSynchronize, checked */
int cuda_idle(void);                                 /* 1 when the default stream has no work left */
/* page-lock host memory the GPU copies to/from (cudaHostRegister), and undo it */
void cuda_host_register(void *p, size_t bytes);
void cuda_host_unregister(void *p);
void *cuda_host_alloc(size_t bytes);                 /* pinned, zeroed */
void cuda_host_free(void *p);

/* ---- the optimizer (optim.h's formulas) on device buffers ----
 * SGD-momentum and Adam; state as optim_state_per_param blocks. Adam's step count t is the
 * caller's (adam_t: steps taken so far; the kernel writes t+1 into the state's t block like
 * optim.c). clear_grads: grads set to 0 in the same pass. Dies on LARS (see above). */
void optim_cuda_step(const optim_config_t *c, float *d_params, float *d_grads, float *d_state,
                     size_t count, float lr, long adam_t, int clear_grads);
/* 1 when optim_cuda_step implements c->kind */
int optim_cuda_supports(const optim_config_t *c);

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
