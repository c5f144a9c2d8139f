/* ring_cuda.h: ring_allreduce.h's ring on GPU buffers, the reduction kernel, and NCCL.
 *
 *   ring_cuda_t *r = ring_cuda_create(MPI_COMM_WORLD, max_count, chunk_bytes, 1);  // collective
 *   ring_cuda_allreduce(r, d_grads, count);     // collective; d_grads (device) = sum over ranks
 *   ring_cuda_free(r);                          // collective
 *
 * The same segments and order of additions as ring_allreduce, so its result is bit for bit the
 * CPU ring's on the same data, whichever path runs:
 *   ipc         every rank on one host (sharing GPUs or not): peers' device buffers mapped through
 *               CUDA IPC, one kernel per GPU reads and writes them directly (ring_cuda_ipc.c)
 *   cuda-aware  the MPI library says at run time that it takes device pointers
 *               (MPIX_Query_cuda_support): the message ring on device pointers
 *   staged      otherwise (Debian's Open MPI, several hosts): the message ring through pinned
 *               host buffers, the additions a GPU kernel
 * Only in --with-cuda builds (libring_cuda.a). Not here: fp16 on the wire, several GPUs per rank,
 * IPC inside each host with the network ring between hosts (several hosts take the staged ring). */
#ifndef PSRING_RING_CUDA_H
#define PSRING_RING_CUDA_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct ring_cuda ring_cuda_t;
/* allow_ipc 0: never the IPC path (the benchmark times the staged ring beside it). The IPC path is
 * also off when PSRING_RING_IPC=0 is in every rank's environment. When IPC cannot run (ranks on
 * several hosts, a handle that will not open), rank 0 says why in one line on stderr, once, and
 * the staged (or CUDA-aware) ring runs. */
ring_cuda_t *ring_cuda_create(MPI_Comm comm, size_t max_count, size_t chunk_bytes, int allow_ipc);
void ring_cuda_free(ring_cuda_t *r);
/* Any count, the same on every rank; d_buf device memory (for the IPC path: cudaMalloc'd, any
 * offset into it; other memory takes the staged path, said once). Returns with the sum complete on
 * the device; work the caller queued on other streams must be complete before the call. */
void ring_cuda_allreduce(ring_cuda_t *r, float *d_buf, size_t count);
/* the path the last call took, or the next will: "ipc", "cuda-aware" or "staged" */
const char *ring_cuda_path(const ring_cuda_t *r);
/* payload bytes this rank sent / received, summed over calls */
uint64_t ring_cuda_bytes_sent(const ring_cuda_t *r);
uint64_t ring_cuda_bytes_recv(const ring_cuda_t *r);
/* PSRING_CUDA_AWARE=0 in the environment forces staging even on a CUDA-aware MPI (to compare) */
/* this rank's answer (not collective): 1 when MPI takes device pointers (MPIX_Query_cuda_support)
 * and PSRING_CUDA_AWARE is not 0 */
int ring_cuda_mpi_aware(void);

/* Every rank's GPU as "host/PCI bus id", RING_CUDA_GPU_ID bytes each, rank by rank (collective
 * over comm; malloc'd, the caller frees): equal strings, one GPU */
#define RING_CUDA_GPU_ID 128
char *ring_cuda_gpu_ids(MPI_Comm comm);

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
