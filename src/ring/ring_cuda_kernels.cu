/* ring_cuda_kernels.cu: the ring's reduction on the GPU (dst += src) and its bandwidth probe.
 * The kernel is a grid-stride loop over float4 when both pointers are 16-byte aligned (ring
 * chunks are, except odd segment offsets), else over floats: memory-bound either way, so the
 * only goal is full-width loads. Not here: other operations or types. */
#include "ring_cuda.h"
#include "ring_cuda_ipc.h"
#include "common/cuda_check.h"

#define THREADS 256

__global__ void add4_kernel(float4 *dst, const float4 *src, size_t n4) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 a = dst[i], b = src[i];
        a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
        dst[i] = a;
    }
}

__global__ void add1_kernel(float *dst, const float *src, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] += src[i];
}

static unsigned grid_for(size_t n) {
    static int sms = 0;
    if (!sms) {
        int dev = 0;
        cudaCheck(cudaGetDevice(&dev));
        cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    size_t b = (n + THREADS - 1) / THREADS, cap = (size_t)sms * 8;   /* enough blocks to fill the GPU */
    if (b > cap) b = cap;
    return b ? (unsigned)b : 1u;
}

extern "C" void ring_cuda_add(float *d_dst, const float *d_src, size_t n, void *stream) {
    if (n == 0) return;
    cudaStream_t s = (cudaStream_t)stream;
    if ((((uintptr_t)d_dst | (uintptr_t)d_src) & 15) == 0) {
        size_t n4 = n / 4, done = n4 * 4;
        if (n4) {
            add4_kernel<<<grid_for(n4), THREADS, 0, s>>>((float4 *)d_dst, (const float4 *)d_src, n4);
            cudaCheck(cudaGetLastError());
        }
        if (done < n) {
            add1_kernel<<<1, THREADS, 0, s>>>(d_dst + done, d_src + done, n - done);
            cudaCheck(cudaGetLastError());
        }
        return;
    }
    add1_kernel<<<grid_for(n), THREADS, 0, s>>>(d_dst, d_src, n);
    cudaCheck(cudaGetLastError());
}

/* the IPC path's kernel (ring_cuda_ipc.c): rows of segments (blockIdx.y), each with every rank's
 * pointer to it in the ring's order of addition. A row's bulk goes as float4 when its n pointers
 * share one alignment; the head that reaches it and the tail, element by element. */
typedef struct {
    float *p[RING_IPC_MAX_RANKS][RING_IPC_MAX_RANKS];
    size_t head[RING_IPC_MAX_RANKS], n4[RING_IPC_MAX_RANKS], len[RING_IPC_MAX_RANKS];
} ipc_rows_t;

__global__ void ipc_reduce_kernel(ipc_rows_t a, int n) {
    const int r = blockIdx.y;
    float *const *p = a.p[r];
    const size_t head = a.head[r], n4 = a.n4[r], len = a.len[r];
    const size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = tid; i < n4; i += stride) {
        float4 acc = reinterpret_cast<const float4 *>(p[0] + head)[i];
        for (int k = 1; k < n; k++) {
            float4 b = reinterpret_cast<const float4 *>(p[k] + head)[i];
            acc.x += b.x; acc.y += b.y; acc.z += b.z; acc.w += b.w;
        }
        for (int k = 0; k < n; k++) reinterpret_cast<float4 *>(p[k] + head)[i] = acc;
    }
    const size_t tail = head + 4 * n4, extra = head + (len - tail);
    for (size_t i = tid; i < extra; i += stride) {
        size_t e = i < head ? i : tail + (i - head);
        float acc = p[0][e];
        for (int k = 1; k < n; k++) acc += p[k][e];
        for (int k = 0; k < n; k++) p[k][e] = acc;
    }
}

extern "C" void ring_cuda_ipc_reduce(float *const *p, int rows, int n, const size_t *len, void *stream) {
    if (n < 1 || n > RING_IPC_MAX_RANKS || rows < 0 || rows > RING_IPC_MAX_RANKS)
        die("ring_cuda_ipc_reduce: %d rows over %d ranks", rows, n);
    ipc_rows_t a;
    size_t work = 0;
    int used = 0;
    for (int r = 0; r < rows; r++) {
        if (!len[r]) continue;   /* an empty segment: no row */
        float *const *q = p + (size_t)r * n;
        uintptr_t mis = (uintptr_t)q[0] & 15;
        int same = 1;
        for (int k = 0; k < n; k++) {
            a.p[used][k] = q[k];
            same &= ((uintptr_t)q[k] & 15) == mis;
        }
        size_t head = 0, n4 = 0, l = len[r];
        if (same) {
            head = mis ? (16 - mis) / 4 : 0;   /* floats are 4-byte aligned: mis is 0, 4, 8 or 12 */
            if (head > l) head = l;
            n4 = (l - head) / 4;
        }
        a.head[used] = head;
        a.n4[used] = n4;
        a.len[used] = l;
        size_t w = n4 > l - 4 * n4 ? n4 : l - 4 * n4;
        if (w > work) work = w;
        used++;
    }
    if (!used) return;
    /* the blocks that fill the GPU, shared among the rows */
    unsigned gx = (grid_for(work) + (unsigned)used - 1) / (unsigned)used;
    ipc_reduce_kernel<<<dim3(gx ? gx : 1, (unsigned)used), THREADS, 0, (cudaStream_t)stream>>>(a, n);
    cudaCheck(cudaGetLastError());
}

extern "C" double ring_cuda_kernel_bw(size_t n, int reps, double *add_gbps, double *copy_gbps) {
    float *a = NULL, *b = NULL;
    size_t bytes = n * sizeof(float);
    cudaCheck(cudaMalloc((void **)&a, bytes));
    cudaCheck(cudaMalloc((void **)&b, bytes));
    cudaCheck(cudaMemset(a, 0, bytes));
    cudaCheck(cudaMemset(b, 0, bytes));
    cudaEvent_t e0, e1;
    cudaCheck(cudaEventCreate(&e0));
    cudaCheck(cudaEventCreate(&e1));
    float best_add = 1e30f, best_copy = 1e30f;
    for (int r = -1; r < reps; r++) {   /* r = -1: warm-up */
        float ms = 0;
        cudaCheck(cudaEventRecord(e0, 0));
        cudaCheck(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        cudaCheck(cudaEventRecord(e1, 0));
        cudaCheck(cudaEventSynchronize(e1));
        cudaCheck(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0 && ms < best_copy) best_copy = ms;
        cudaCheck(cudaEventRecord(e0, 0));
        ring_cuda_add(b, a, n, NULL);
        cudaCheck(cudaEventRecord(e1, 0));
        cudaCheck(cudaEventSynchronize(e1));
        cudaCheck(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0 && ms < best_add) best_add = ms;
    }
    cudaCheck(cudaEventDestroy(e0));
    cudaCheck(cudaEventDestroy(e1));
    cudaCheck(cudaFree(a));
    cudaCheck(cudaFree(b));
    *add_gbps = 3.0 * (double)bytes / (best_add * 1e-3) / 1e9;
    *copy_gbps = 2.0 * (double)bytes / (best_copy * 1e-3) / 1e9;
    return *add_gbps / *copy_gbps;
}
