/* batch.h: gathers a batch of samples by index into contiguous caller buffers, turning the
 * dataset's raw pixels into the model's normalised floats on the way. */
#ifndef PSRING_BATCH_H
#define PSRING_BATCH_H
#include "idx.h"

/* PyTorch's MNIST example: ToTensor() (x/255) then Normalize((0.1307,), (0.3081,)) */
#define BATCH_MNIST_MEAN 0.1307f
#define BATCH_MNIST_STD 0.3081f

/* The float a raw pixel becomes, in exactly torchvision's float32 arithmetic (two divisions, no
 * reciprocal), so psring and PyTorch feed the model bit-identical inputs. */
static inline float batch_normalise(uint8_t v) {
    return ((float)v / 255.0f - BATCH_MNIST_MEAN) / BATCH_MNIST_STD;
}

/* x is (n, ds->dim) floats, x[i] = batch_normalise(pixels of sample idx[i]); y is (n) labels;
 * idx holds n sample indices into ds */
void batch_gather(float *x, uint8_t *y, const dataset_t *ds, const uint32_t *idx, int n);

#endif
