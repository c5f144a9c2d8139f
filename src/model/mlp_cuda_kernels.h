/* mlp_cuda_kernels.h: the CUDA MLP's elementwise steps, each enqueued on stream s and checked
 * (mlp_cuda_kernels.cu). For mlp_cuda.cu: nvcc code, no C caller. Matrices are row-major, B rows
 * (the batch) by OUT or C columns, as in layers.c. */
#ifndef PSRING_MLP_CUDA_KERNELS_H
#define PSRING_MLP_CUDA_KERNELS_H
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* x (B,dim) = the normalised pixels of samples idx[0..B), y (B) = their labels: batch_gather's bits */
void mlp_kernel_gather(cudaStream_t s, float *x, uint8_t *y, const uint8_t *pixels, const uint8_t *labels,
                       const uint32_t *idx, int B, int dim);
/* out (B,OUT) = b broadcast over the rows */
void mlp_kernel_bias_fill(cudaStream_t s, float *out, const float *b, int B, int OUT);
/* x = max(x, 0) over n floats */
void mlp_kernel_relu_forward(cudaStream_t s, float *x, size_t n);
/* dinp = dout where out > 0, else 0, over n floats (in place allowed) */
void mlp_kernel_relu_backward(cudaStream_t s, float *dinp, const float *dout, const float *out, size_t n);
/* db (OUT) += the column sums of dout (B,OUT), in a fixed order */
void mlp_kernel_bias_grad(cudaStream_t s, float *db, const float *dout, int B, int OUT);
/* probs (B,C) = softmax(logits), rowloss (B) = each row's cross-entropy against y */
void mlp_kernel_softmax_xent_forward(cudaStream_t s, float *probs, float *rowloss, const float *logits,
                                     const uint8_t *y, int B, int C);
/* *loss = the mean of rowloss (B), summed in double */
void mlp_kernel_mean(cudaStream_t s, float *loss, const float *rowloss, int B);
/* d (B,C) = (probs - onehot(y)) / B */
void mlp_kernel_softmax_xent_backward(cudaStream_t s, float *d, const float *probs, const uint8_t *y, int B, int C);
/* *correct += the rows whose argmax (the first maximum) is y */
void mlp_kernel_correct(cudaStream_t s, int *correct, const float *logits, const uint8_t *y, int B, int C);

#endif
