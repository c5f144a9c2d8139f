/* cuda_mem.cu: cuda_mem.h. Thin checked wrappers over the CUDA runtime, plus the one kernel the
 * buffers need (a grid-stride scale). Everything on the legacy default stream, so these calls are
 * ordered with each other and with every blocking stream (the model's). */
#include "cuda_mem.h"
#include "cuda_check.h"
#include "cuda_launch.h"
#include <stdio.h>
#include <string.h>

/* ---- devices ---- */
extern "C" int cuda_device_count(char *why, size_t whylen) {
    int n = 0;   /* left untouched when the call fails (no driver): so 0 */
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        if (why) snprintf(why, whylen, "%s", cudaGetErrorString(e));
        (void)cudaGetLastError();   /* clear the sticky-less error so later calls start clean */
        return 0;
    }
    if (n == 0 && why) snprintf(why, whylen, "no CUDA device found");
    return n;
}

extern "C" int cuda_device_pin(int local_rank, char *why, size_t whylen) {
    int n = cuda_device_count(why, whylen);
    if (n <= 0) return -1;
    int dev = (local_rank < 0 ? 0 : local_rank) % n;
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        if (why) snprintf(why, whylen, "cudaSetDevice(%d): %s", dev, cudaGetErrorString(e));
        return -1;
    }
    return dev;
}

extern "C" void cuda_device_name(char *name, size_t len) {
    int dev = 0;
    cudaCheck(cudaGetDevice(&dev));
    cudaDeviceProp p;
    cudaCheck(cudaGetDeviceProperties(&p, dev));
    snprintf(name, len, "%s", p.name);
}

/* ---- buffers ---- */
extern "C" float *cuda_floats_alloc(size_t n) {
    float *d = NULL;
    cudaCheck(cudaMalloc((void **)&d, (n ? n : 1) * sizeof(float)));
    cudaCheck(cudaMemset(d, 0, (n ? n : 1) * sizeof(float)));
    return d;
}
extern "C" void cuda_floats_free(float *d) { if (d) cudaCheck(cudaFree(d)); }
extern "C" void cuda_to_device(float *d_dst, const float *h_src, size_t n) {
    if (n) cudaCheck(cudaMemcpy(d_dst, h_src, n * sizeof(float), cudaMemcpyHostToDevice));
}
extern "C" void cuda_to_host(float *h_dst, const float *d_src, size_t n) {
    if (n) cudaCheck(cudaMemcpy(h_dst, d_src, n * sizeof(float), cudaMemcpyDeviceToHost));
}
extern "C" void cuda_zero(float *d, size_t n) {
    if (n) cudaCheck(cudaMemsetAsync(d, 0, n * sizeof(float), 0));
}
extern "C" void cuda_sync(void) { cudaCheck(cudaDeviceSynchronize()); }
extern "C" int cuda_idle(void) {
    cudaError_t e = cudaStreamQuery(0);
    if (e == cudaErrorNotReady) return 0;
    cudaCheck(e);
    return 1;
}
extern "C" void cuda_host_register(void *p, size_t bytes) {
    if (bytes) cudaCheck(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
}
extern "C" void cuda_host_unregister(void *p) { if (p) cudaCheck(cudaHostUnregister(p)); }
extern "C" void *cuda_host_alloc(size_t bytes) {
    void *p = NULL;
    cudaCheck(cudaMallocHost(&p, bytes ? bytes : 1));
    memset(p, 0, bytes ? bytes : 1);
    return p;
}
extern "C" void cuda_host_free(void *p) { if (p) cudaCheck(cudaFreeHost(p)); }

__global__ void scale_kernel(float *d, float s, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] *= s;
}
extern "C" void cuda_scale(float *d, float s, size_t n) {
    if (!n) return;
    scale_kernel<<<cuda_blocks_for(n), CUDA_THREADS>>>(d, s, n);
    cudaCheck(cudaGetLastError());
}
