/* optim_cuda.cu: optim_cuda.h, SGD-momentum and Adam as one grid-stride kernel each on the
 * legacy default stream (ordered with cuda_mem.h's copies and the model's blocking stream). */
#include "optim_cuda.h"
#include "common/cuda_check.h"
#include "common/cuda_launch.h"
#include <math.h>

/* optim.c's loops, one thread per element. __fmul_rn / __fadd_rn keep nvcc from
 * contracting into FMA, so each element rounds exactly as optim.c's (no-FMA) loop does. */
__global__ void sgd_kernel(float *p, float *g, float *v, size_t n, float mu, float wd, float lr, int clear) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float d = __fadd_rn(g[i], __fmul_rn(wd, p[i]));      /* d = g + wd p */
        float vi = __fadd_rn(__fmul_rn(mu, v[i]), d);         /* v = mu v + d */
        v[i] = vi;
        p[i] = __fsub_rn(p[i], __fmul_rn(lr, vi));            /* p -= lr v */
        if (clear) g[i] = 0.0f;
    }
}

__global__ void adam_kernel(float *p, float *g, float *m, float *v, float *tb, size_t n, float b1, float b2,
                            float eps, float wd, float step_size, float bc2_sqrt, float tnew, int clear) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float d = __fadd_rn(g[i], __fmul_rn(wd, p[i]));
        float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(__fsub_rn(1.0f, b1), d));
        float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(__fsub_rn(1.0f, b2), d), d));
        m[i] = mi;
        v[i] = vi;
        float den = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), bc2_sqrt), eps);
        p[i] = __fsub_rn(p[i], __fmul_rn(step_size, __fdiv_rn(mi, den)));
        tb[i] = tnew;
        if (clear) g[i] = 0.0f;
    }
}

extern "C" int optim_cuda_supports(const optim_config_t *c) {
    return c->kind == OPTIM_SGD || c->kind == OPTIM_ADAM;
}

extern "C" void optim_cuda_step(const optim_config_t *c, float *d_params, float *d_grads, float *d_state,
                                size_t count, float lr, long adam_t, int clear_grads) {
    if (count == 0) return;
    switch (c->kind) {
    case OPTIM_SGD:
        sgd_kernel<<<cuda_blocks_for(count), CUDA_THREADS>>>(d_params, d_grads, d_state, count, c->momentum,
                                                   c->weight_decay, lr, clear_grads);
        cudaCheck(cudaGetLastError());
        return;
    case OPTIM_ADAM: {
        /* the bias corrections in double on the host, exactly as optim.c computes them */
        double t = (double)adam_t + 1.0;
        float step_size = (float)((double)lr / (1.0 - pow((double)c->beta1, t)));
        float bc2_sqrt = (float)sqrt(1.0 - pow((double)c->beta2, t));
        adam_kernel<<<cuda_blocks_for(count), CUDA_THREADS>>>(d_params, d_grads, d_state, d_state + count, d_state + 2 * count,
                                                    count, c->beta1, c->beta2, c->eps, c->weight_decay, step_size,
                                                    bc2_sqrt, (float)t, clear_grads);
        cudaCheck(cudaGetLastError());
        return;
    }
    default:
        die("optim_cuda_step: optimizer %s is not implemented on the GPU", optim_kind_name(c->kind));
    }
}
