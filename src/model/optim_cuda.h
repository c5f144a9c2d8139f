/* optim_cuda.h: the optimizer of optim.h on device buffers, one kernel per optimizer (optim.c's
 * loops, rounding element by element as they do), for the exchanges' device step. Opaque C API;
 * defined in optim_cuda.cu, which only --with-cuda builds compile (libmodel_cuda.a). */
#ifndef PSRING_OPTIM_CUDA_H
#define PSRING_OPTIM_CUDA_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "optim.h"

/* SGD-momentum and Adam; state as optim_state_per_param blocks. Adam's step count t is the
 * caller's (adam_t: steps taken so far; the kernel writes t+1 into the state's t block like
 * optim.c). clear_grads: grads set to 0 in the same pass. Dies on LARS (its per-matrix
 * norms; the trainer refuses it with --device cuda). */
void optim_cuda_step(const optim_config_t *c, float *d_params, float *d_grads, float *d_state,
                     size_t count, float lr, long adam_t, int clear_grads);
/* 1 when optim_cuda_step implements c->kind */
int optim_cuda_supports(const optim_config_t *c);

#ifdef __cplusplus
}
#endif
#endif
