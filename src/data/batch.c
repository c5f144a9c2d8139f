/* batch.c: copies the rows of a batch, chosen by sample index, into contiguous caller buffers so
 * the model sees one (n, dim) matrix. On the training hot path: one memcpy per row, no checks;
 * indices come from a sampler built over ds->count, so they are in range by construction.
 * It does not allocate, shuffle or augment. */
#include "batch.h"
#include <string.h>

void batch_gather(float *x, uint8_t *y, const dataset_t *ds, const uint32_t *idx, int n) {
    const size_t dim = (size_t)ds->dim;
    const float *images = ds->images;
    const uint8_t *labels = ds->labels;
    for (int i = 0; i < n; i++) {
        const size_t k = idx[i];
        memcpy(x + (size_t)i * dim, images + k * dim, dim * sizeof *x);
        y[i] = labels[k];
    }
}
