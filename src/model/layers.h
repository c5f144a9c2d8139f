/* layers.h: the MLP's layers as free functions writing into caller buffers (llm.c style).
 * Row-major throughout; a linear layer is PyTorch's nn.Linear: out = inp @ w^T + b.
 * Backward functions ADD into weight/bias gradients (so gradient accumulation is free) and
 * OVERWRITE the input gradient. Nothing here allocates. CPU path on cblas_sgemm. */
#ifndef PSRING_LAYERS_H
#define PSRING_LAYERS_H
#include <stdint.h>

/* out is (B,OUT), inp is (B,IN), w is (OUT,IN), b is (OUT) */
void linear_forward(float *out, const float *inp, const float *w, const float *b, int B, int IN, int OUT);
/* dinp is (B,IN) or NULL (first layer), dw (OUT,IN) +=, db (OUT) +=, dout (B,OUT) */
void linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                     const float *w, int B, int IN, int OUT);
/* in place is fine: out may equal inp */
void relu_forward(float *out, const float *inp, int n);
/* dinp = dout * (out > 0); may run in place (dinp == dout) */
void relu_backward(float *dinp, const float *dout, const float *out, int n);
/* probs (B,C) = softmax(logits); returns the mean cross-entropy over the batch */
float softmax_xent_forward(float *probs, const float *logits, const uint8_t *labels, int B, int C);
/* dlogits = (probs - onehot(labels)) / B */
void softmax_xent_backward(float *dlogits, const float *probs, const uint8_t *labels, int B, int C);

#endif
