/* cuda_mem.h: the GPU helpers every layer's CUDA path shares: pinning a process to its device,
 * float buffers on the device, copies, and page-locked host memory. Plain C API (no CUDA types),
 * so C code that calls it needs no CUDA headers; defined in cuda_mem.cu, which only --with-cuda
 * builds compile (libcommon_cuda.a). Every call is checked (cuda_check.h): a CUDA error dies with
 * file:line. All of it runs on the legacy default stream. Not here: streams, kernels of a model or
 * a collective (src/model, src/ring). */
#ifndef PSRING_CUDA_MEM_H
#define PSRING_CUDA_MEM_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices ---- */
/* Usable GPUs; 0 when there is none or no driver (cudaGetDeviceCount's error is then put in
 * why, e.g. "CUDA driver version is insufficient for CUDA runtime version"). why may be NULL. */
int cuda_device_count(char *why, size_t whylen);
/* Horovod's pinning: this process uses GPU local_rank % count. Returns the device, or -1 with
 * why set when there is no usable GPU. */
int cuda_device_pin(int local_rank, char *why, size_t whylen);
/* "NVIDIA H100 80GB HBM3" of the current device */
void cuda_device_name(char *name, size_t len);

/* ---- device buffers (floats), for code written in C ---- */
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

#ifdef __cplusplus
}
#endif
#endif
