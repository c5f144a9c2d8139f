/* ring_cuda.h: ring_allreduce.h's ring on GPU buffers, the reduction kernel, and NCCL.
 *
 *   ring_cuda_t *r = ring_cuda_create(MPI_COMM_WORLD, max_count, chunk_bytes);  // collective
 *   ring_cuda_allreduce(r, d_grads, count);     // collective; d_grads (device) = sum over ranks
 *   ring_cuda_free(r);                          // collective
 *
 * The same segments, chunk-steps and order of additions as ring_allreduce, so its result is bit
 * for bit the CPU ring's on the same data. Transfers go through pinned host staging buffers
 * (Debian's Open MPI is not CUDA-aware); when the MPI library says at run time that it is CUDA-aware
 * (MPIX_Query_cuda_support), device pointers go to MPI directly. The additions are a GPU kernel.
 * Only in --with-cuda builds (libring_cuda.a). Not here: fp16 on the wire, multi-GPU per rank. */
#ifndef PSRING_RING_CUDA_H
#define PSRING_RING_CUDA_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct ring_cuda ring_cuda_t;
ring_cuda_t *ring_cuda_create(MPI_Comm comm, size_t max_count, size_t chunk_bytes);
void ring_cuda_free(ring_cuda_t *r);
void ring_cuda_allreduce(ring_cuda_t *r, float *d_buf, size_t count);
/* 1 when MPI gets device pointers (a CUDA-aware MPI), 0 when the ring stages through the host */
int ring_cuda_direct(const ring_cuda_t *r);
/* payload bytes this rank sent / received, summed over calls */
uint64_t ring_cuda_bytes_sent(const ring_cuda_t *r);
uint64_t ring_cuda_bytes_recv(const ring_cuda_t *r);
/* PSRING_CUDA_AWARE=0 in the environment forces staging even on a CUDA-aware MPI (to compare) */
/* this rank's answer (not collective): 1 when MPI takes device pointers (MPIX_Query_cuda_support)
 * and PSRING_CUDA_AWARE is not 0 */
int ring_cuda_mpi_aware(void);

/* ---- kernels (ring_cuda_kernels.cu); stream is a cudaStream_t (NULL: the default stream) ---- */
void ring_cuda_add(float *d_dst, const float *d_src, size_t n, void *stream);   /* dst += src */
/* Bandwidth of ring_cuda_add on n floats vs cudaMemcpy device-to-device in the same run, both as
 * bytes moved per second (add: 2 reads + 1 write per element; copy: 1 read + 1 write), best of
 * reps. Returns add/copy. */
double ring_cuda_kernel_bw(size_t n, int reps, double *add_gbps, double *copy_gbps);

/* ---- NCCL (the vendor baseline), loaded at run time with dlopen so builds need no NCCL ---- */
typedef struct nccl_ring nccl_ring_t;
/* Collective over comm. NULL with err set when libnccl.so.2 cannot be loaded or two ranks share
 * a GPU (NCCL needs one GPU per rank). */
nccl_ring_t *nccl_ring_create(MPI_Comm comm, char *err, size_t errlen);
void nccl_ring_allreduce(nccl_ring_t *n, float *d_buf, size_t count);   /* returns synchronised */
void nccl_ring_free(nccl_ring_t *n);

#ifdef __cplusplus
}
#endif
#endif
