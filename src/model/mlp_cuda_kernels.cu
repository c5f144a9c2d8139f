/* mlp_cuda_kernels.cu: the CUDA MLP's elementwise steps (mlp_cuda.cu runs the GEMMs and the
 * graphs), one plain kernel each (one thread per element or per row, grid-stride loops), written
 * as the loops of layers.c, batch.h and mlp.c so that a reader can hold them side by side; each
 * with the one launch mlp_cuda.cu makes of it, on the model's stream, checked. Deliberately not
 * here: fused kernels, half precision. */
#include "mlp_cuda_kernels.h"
#include "common/cuda_check.h"
#include "common/cuda_launch.h"
#include <math.h>

/* one block per sample: x[i][p] = batch_normalise(pixels[idx[i]][p]), y[i] = labels[idx[i]].
 * batch.h's formula written out: two IEEE divisions and a subtraction, each rounded to nearest
 * whatever flags nvcc is given (the _rn intrinsics), so the floats are batch_gather's bits. */
static __global__ void gather_kernel(float *x, uint8_t *y, const uint8_t *pixels, const uint8_t *labels,
                              const uint32_t *idx, int B, int dim) {
    for (int i = blockIdx.x; i < B; i += gridDim.x) {
        const size_t k = idx[i];
        const uint8_t *src = pixels + k * (size_t)dim;
        float *dst = x + (size_t)i * dim;
        for (int p = threadIdx.x; p < dim; p += blockDim.x)
            dst[p] = __fdiv_rn(__fsub_rn(__fdiv_rn((float)src[p], 255.0f), 0.1307f), 0.3081f);
        if (threadIdx.x == 0) y[i] = labels[k];
    }
}

/* out (B,OUT) = b broadcast over rows; SGEMM then accumulates on top (beta 1), as layers.c */
static __global__ void bias_fill_kernel(float *out, const float *b, int B, int OUT) {
    size_t n = (size_t)B * OUT;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = b[i % OUT];
}

static __global__ void relu_forward_kernel(float *x, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* dinp = dout * (out > 0), in place allowed */
static __global__ void relu_backward_kernel(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dinp[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

/* db[o] += sum over rows of dout[r][o], a reduction over the batch. One thread per column summed
 * the B rows serially: B dependent loads per thread and only OUT threads in all (10 for the last
 * layer), so at batch 512 it ran at a sliver of the GPU. Here a block of BIAS_COLS x BIAS_ROWS
 * threads takes BIAS_COLS columns: lane (c, r) sums rows r, r + BIAS_ROWS, ... of column c (a warp
 * reads BIAS_COLS consecutive floats of one row: coalesced), then the BIAS_ROWS partial sums of a
 * column are added in a fixed tree in shared memory. No atomics: the order of additions is the
 * same on every call (deterministic), though not the CPU's row order (layers.c), hence the test's
 * float tolerance. */
#define BIAS_COLS 32
#define BIAS_ROWS 32
static __global__ void bias_grad_kernel(float *db, const float *dout, int B, int OUT) {
    __shared__ float part[BIAS_ROWS][BIAS_COLS + 1];   /* +1: no bank conflicts in the tree */
    const int c = threadIdx.x, r = threadIdx.y, o = blockIdx.x * BIAS_COLS + c;
    float s = 0.0f;
    if (o < OUT)
        for (int row = r; row < B; row += BIAS_ROWS) s += dout[(size_t)row * OUT + o];
    part[r][c] = s;
    __syncthreads();
    for (int w = BIAS_ROWS / 2; w > 0; w /= 2) {
        if (r < w) part[r][c] += part[r + w][c];
        __syncthreads();
    }
    if (r == 0 && o < OUT) db[o] += part[0][c];
}

/* one thread per row: probs = softmax(logits), rowloss[r] = log(sum exp(z - max)) - (z_y - max) */
static __global__ void softmax_xent_forward_kernel(float *probs, float *rowloss, const float *logits, const uint8_t *y,
                                            int B, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= B) return;
    const float *z = logits + (size_t)r * C;
    float *p = probs + (size_t)r * C;
    float maxv = z[0];
    for (int j = 1; j < C; j++) maxv = z[j] > maxv ? z[j] : maxv;
    float sum = 0.0f;
    for (int j = 0; j < C; j++) { p[j] = expf(z[j] - maxv); sum += p[j]; }
    float inv = 1.0f / sum;
    for (int j = 0; j < C; j++) p[j] *= inv;
    rowloss[r] = (float)((double)logf(sum) - (double)(z[y[r]] - maxv));
}

/* loss = mean of rowloss, summed in double by one block (B is a batch: thousands at most) */
static __global__ void mean_kernel(float *loss, const float *rowloss, int B) {
    __shared__ double part[CUDA_THREADS];
    double s = 0.0;
    for (int i = threadIdx.x; i < B; i += blockDim.x) s += (double)rowloss[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *loss = (float)(part[0] / B);
}

/* dlogits = (probs - onehot(y)) / B, as layers.c: d = p * scale, then d[y] -= scale */
static __global__ void softmax_xent_backward_kernel(float *d, const float *probs, const uint8_t *y, int B, int C) {
    size_t n = (size_t)B * C;
    const float scale = 1.0f / (float)B;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int r = (int)(i / C), j = (int)(i % C);
        float v = probs[i] * scale;
        if (j == y[r]) v -= scale;
        d[i] = v;
    }
}

/* one thread per row: argmax (first maximum wins, as mlp.c), counted into *correct */
static __global__ void correct_kernel(int *correct, const float *logits, const uint8_t *y, int B, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= B) return;
    const float *z = logits + (size_t)r * C;
    int best = 0;
    for (int j = 1; j < C; j++)
        if (z[j] > z[best]) best = j;
    if (best == y[r]) atomicAdd(correct, 1);
}
/* ---- the launches ---- */
void mlp_kernel_gather(cudaStream_t s, float *x, uint8_t *y, const uint8_t *pixels, const uint8_t *labels,
                       const uint32_t *idx, int B, int dim) {
    gather_kernel<<<B, CUDA_THREADS, 0, s>>>(x, y, pixels, labels, idx, B, dim);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_bias_fill(cudaStream_t s, float *out, const float *b, int B, int OUT) {
    bias_fill_kernel<<<cuda_blocks_for((size_t)B * OUT), CUDA_THREADS, 0, s>>>(out, b, B, OUT);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_relu_forward(cudaStream_t s, float *x, size_t n) {
    relu_forward_kernel<<<cuda_blocks_for(n), CUDA_THREADS, 0, s>>>(x, n);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_relu_backward(cudaStream_t s, float *dinp, const float *dout, const float *out, size_t n) {
    relu_backward_kernel<<<cuda_blocks_for(n), CUDA_THREADS, 0, s>>>(dinp, dout, out, n);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_bias_grad(cudaStream_t s, float *db, const float *dout, int B, int OUT) {
    bias_grad_kernel<<<(OUT + BIAS_COLS - 1) / BIAS_COLS, dim3(BIAS_COLS, BIAS_ROWS), 0, s>>>(db, dout, B, OUT);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_softmax_xent_forward(cudaStream_t s, float *probs, float *rowloss, const float *logits,
                                     const uint8_t *y, int B, int C) {
    softmax_xent_forward_kernel<<<(B + CUDA_THREADS - 1) / CUDA_THREADS, CUDA_THREADS, 0, s>>>(probs, rowloss, logits,
                                                                                               y, B, C);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_mean(cudaStream_t s, float *loss, const float *rowloss, int B) {
    mean_kernel<<<1, CUDA_THREADS, 0, s>>>(loss, rowloss, B);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_softmax_xent_backward(cudaStream_t s, float *d, const float *probs, const uint8_t *y, int B, int C) {
    softmax_xent_backward_kernel<<<cuda_blocks_for((size_t)B * C), CUDA_THREADS, 0, s>>>(d, probs, y, B, C);
    cudaCheck(cudaGetLastError());
}

void mlp_kernel_correct(cudaStream_t s, int *correct, const float *logits, const uint8_t *y, int B, int C) {
    correct_kernel<<<(B + CUDA_THREADS - 1) / CUDA_THREADS, CUDA_THREADS, 0, s>>>(correct, logits, y, B, C);
    cudaCheck(cudaGetLastError());
}
