/* layers.c: linear, ReLU and softmax cross-entropy on the CPU, as free functions (see layers.h).
 * The two matrix products of a linear layer go to cblas_sgemm; everything else is a plain loop
 * over contiguous memory that gcc vectorises at -O3 with the default x86-64 flags, because at
 * batch 64 the non-GEMM work is what separates a trainer from the GEMM-only bound.
 * Deliberately not here: allocation, threading (OpenBLAS owns the threads), other activations. */
#include "layers.h"
#include <cblas.h>
#include <math.h>
#include <string.h>

/* out is (B,OUT), inp is (B,IN), w is (OUT,IN), b is (OUT).
 * The bias is fused into the GEMM: out starts as B copies of b and SGEMM accumulates on top
 * (beta = 1), which costs one pass over out instead of a second pass after the product. */
void linear_forward(float *out, const float *inp, const float *w, const float *b, int B, int IN, int OUT) {
    for (int r = 0; r < B; r++) memcpy(out + (size_t)r * OUT, b, (size_t)OUT * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OUT, IN,
                1.0f, inp, IN, w, IN, 1.0f, out, OUT);
}

/* db (OUT) += column sums of dout (B,OUT): rows outer, so the inner loop is contiguous and
 * vectorises (a row-by-row dot with a ones vector would be a GEMV call for 64 x 10 numbers). */
static void bias_grad_add(float *restrict db, const float *restrict dout, int B, int OUT) {
    for (int r = 0; r < B; r++) {
        const float *restrict row = dout + (size_t)r * OUT;
        for (int o = 0; o < OUT; o++) db[o] += row[o];
    }
}

/* dinp (B,IN) = dout @ w (skipped when NULL: the first layer has no use for it),
 * dw (OUT,IN) += dout^T @ inp, db (OUT) += sum over rows of dout */
void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int B, int IN, int OUT) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OUT, IN, B,
                1.0f, dout, OUT, inp, IN, 1.0f, dw, IN);
    bias_grad_add(db, dout, B, OUT);
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, IN, OUT,
                    1.0f, dout, OUT, w, IN, 0.0f, dinp, IN);
}

/* the ternary, not fmaxf, so that NaN propagates the same way in place and out of place and
 * gcc turns it into maxps */
void relu_forward(float *out, const float *inp, int n) {
    for (int i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

/* dout[i] is loaded unconditionally: written as `out > 0 ? dout[i] : 0` the load is conditional and
 * gcc leaves the loop scalar (5 us instead of 1 us for 64 x 256) */
void relu_backward(float *dinp, const float *dout, const float *out, int n) {
    for (int i = 0; i < n; i++) {
        float d = dout[i];
        dinp[i] = out[i] > 0.0f ? d : 0.0f;
    }
}

/* probs (B,C) = softmax(logits), and the loss in the same pass over each row:
 * -log p_y = log(sum_j exp(z_j - max)) - (z_y - max), which never takes log of an underflowed
 * probability. Accumulated in double so a mean over a large batch does not drift. */
float softmax_xent_forward(float *probs, const float *logits, const uint8_t *labels, int B, int C) {
    double loss = 0.0;
    for (int r = 0; r < B; r++) {
        const float *z = logits + (size_t)r * C;
        float *p = probs + (size_t)r * C;
        float maxv = z[0];
        for (int j = 1; j < C; j++) maxv = z[j] > maxv ? z[j] : maxv;
        float sum = 0.0f;
        for (int j = 0; j < C; j++) {
            p[j] = expf(z[j] - maxv);
            sum += p[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < C; j++) p[j] *= inv;
        loss += (double)logf(sum) - (double)(z[labels[r]] - maxv);
    }
    return (float)(loss / B);
}

/* dlogits = (probs - onehot(labels)) / B: the gradient of the MEAN loss */
void softmax_xent_backward(float *dlogits, const float *probs, const uint8_t *labels, int B, int C) {
    const float scale = 1.0f / (float)B;
    for (int r = 0; r < B; r++) {
        const float *p = probs + (size_t)r * C;
        float *d = dlogits + (size_t)r * C;
        for (int j = 0; j < C; j++) d[j] = p[j] * scale;
        d[labels[r]] -= scale;
    }
}
