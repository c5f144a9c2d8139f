/* ring_cuda_ipc.h: the device ring's path for ranks on one host: every rank maps its peers' device
 * buffers through CUDA IPC and reduces its own row of segments straight out of them (see
 * ring_cuda_ipc.c). Used by ring_cuda.c only; ring_cuda.h is the API.
 *
 *   ring_ipc_t *x = ring_ipc_create(comm, rank, size, stream, why, sizeof why);  // collective
 *   ring_ipc_allreduce(x, d_buf, count, &sent, &recv, why, sizeof why);  // collective: 1 done,
 *                                                                        // 0 not possible (why)
 *   ring_ipc_free(x);
 */
#ifndef PSRING_RING_CUDA_IPC_H
#define PSRING_RING_CUDA_IPC_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* the most ranks one kernel reduces over (its pointer table travels as a kernel argument) */
#define RING_IPC_MAX_RANKS 16

typedef struct ring_ipc ring_ipc_t;
/* Collective over comm (the ring's private communicator, kept, not freed here); stream is the
 * ring's cudaStream_t. NULL on every rank, with the same one-line reason in why on every rank,
 * when IPC cannot run: ranks on several hosts, more than RING_IPC_MAX_RANKS ranks, or a rank that
 * cannot open a peer's handle (a probe buffer is exchanged and opened by everyone). */
ring_ipc_t *ring_ipc_create(MPI_Comm comm, int rank, int size, void *stream, char *why, size_t whylen);
/* buf[0, count) = sum over ranks, bit for bit the CPU ring's (same segments, same order of
 * additions). Collective, same count on every rank (any offset into any cudaMalloc'd buffer).
 * Returns 1 with the sum in place, or 0 on every rank, buf untouched, why set on every rank,
 * when some rank's buffer cannot be shared (not from cudaMalloc) or its handle will not open.
 * *sent and *recv grow by the bytes loaded from and stored into peers' memory. */
int ring_ipc_allreduce(ring_ipc_t *x, float *buf, size_t count, uint64_t *sent, uint64_t *recv,
                       char *why, size_t whylen);
void ring_ipc_free(ring_ipc_t *x);

/* the kernel (ring_cuda_kernels.cu), one launch for rows rows of n pointers each (p: rows x n,
 * row-major): in row r, q = p + r n, q[k][i] = q[0][i] + q[1][i] + ... + q[n-1][i] for every k and
 * i < len[r], added in that order; rows, n <= RING_IPC_MAX_RANKS; stream a cudaStream_t */
void ring_cuda_ipc_reduce(float *const *p, int rows, int n, const size_t *len, void *stream);

#ifdef __cplusplus
}
#endif
#endif
