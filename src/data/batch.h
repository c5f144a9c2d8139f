/* batch.h: gathers a batch of samples by index into contiguous caller buffers. */
#ifndef PSRING_BATCH_H
#define PSRING_BATCH_H
#include "idx.h"

/* x is (n, ds->dim), y is (n); idx holds n sample indices into ds */
void batch_gather(float *x, uint8_t *y, const dataset_t *ds, const uint32_t *idx, int n);

#endif
