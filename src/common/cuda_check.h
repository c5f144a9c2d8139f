/* cuda_check.h: cudaCheck for the GPU path (llm.c style): a failing CUDA
 * call dies with its file:line, the call's text and the library's own message. One copy for every
 * layer's GPU code (the buffers of cuda_mem.h, the model, the ring). Only sources built against
 * the CUDA headers include it; other C callers see the opaque APIs (cuda_mem.h, mlp_cuda.h).
 * cublasCheck is model/cublas_lib.h's: cuBLAS is loaded at run time, by the model only. */
#ifndef PSRING_CUDA_CHECK_H
#define PSRING_CUDA_CHECK_H
#include <cuda_runtime.h>
#ifdef __cplusplus
extern "C" {
#endif
#include "common/check.h"
#ifdef __cplusplus
}
#endif

static inline void cuda_check_at(cudaError_t e, const char *what, const char *file, int line) {
    if (e != cudaSuccess) die_at(file, line, 1, "%s: %s (CUDA error %d)", what, cudaGetErrorString(e), (int)e);
}
#define cudaCheck(call) cuda_check_at((call), #call, __FILE__, __LINE__)

#endif
