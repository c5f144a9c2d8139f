/* cublas_lib.h: the few cuBLAS entry points the GPU MLP uses, loaded with dlopen at its first use.
 *
 * Why not link libcublas: it brings libcublasLt (540 MB) whose start-up (some 25,700 page faults
 * of relocations) costs every process that links it 0.4 s of CPU before main, CPU runs included,
 * and D times that on an emulated host at dilation D (a 4-host launch at D = 8 took 18 s, 6 s of
 * it training). Loaded here, only --device cuda pays, once. */
#ifndef PSRING_CUBLAS_LIB_H
#define PSRING_CUBLAS_LIB_H
#include <cublas_v2.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    cublasStatus_t (*create)(cublasHandle_t *handle);
    cublasStatus_t (*destroy)(cublasHandle_t handle);
    cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*set_math_mode)(cublasHandle_t handle, cublasMath_t mode);
    cublasStatus_t (*set_workspace)(cublasHandle_t handle, void *workspace, size_t bytes);
    cublasStatus_t (*sgemm)(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const float *alpha, const float *a, int lda, const float *b, int ldb, const float *beta,
                            float *c, int ldc);
    const char *(*status_string)(cublasStatus_t status);
} cublas_lib_t;

/* the loaded library (thread-safe, loaded once); one line naming the library and exit 1 when it
 * cannot be loaded or lacks an entry point */
const cublas_lib_t *cublas_lib(void);

void cublas_check_at(cublasStatus_t s, const char *what, const char *file, int line);
#define cublasCheck(call) cublas_check_at((call), #call, __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif
#endif
