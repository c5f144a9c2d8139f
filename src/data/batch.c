/* batch.c: copies the rows of a batch, chosen by sample index, into contiguous caller buffers so
 * the model sees one (n, dim) float matrix, normalising the raw pixels on the way.
 * On the training hot path: no checks (indices come from a sampler built over ds->count, so they
 * are in range by construction). Reading bytes instead of floats quarters the cache lines a
 * random batch pulls from a dataset far larger than the caches, which is what a gather costs.
 * It does not allocate, shuffle or augment. */
#include "batch.h"

/* x86-64's default SSE2 would convert 4 pixels per instruction; AVX2 and AVX-512 copies, picked at
 * load time by the ifunc that target_clones makes, do 8 or 16. Every copy computes
 * batch_normalise exactly (true divisions, nothing to contract into an FMA), so the floats are
 * the same bits on every machine and every copy. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define BATCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef BATCH_CLONES
#define BATCH_CLONES
#endif

/* rows requested from memory ahead of the one being converted: a row is 13 cache lines, and the
 * divisions' latency otherwise keeps the out-of-order core from reaching the next row's misses
 * (docs/results/lab-notes-src.md, section "src/data/batch.c: rows prefetched ahead of the
 * conversion") */
#define BATCH_PREFETCH_ROWS 4

static inline void prefetch_row(const uint8_t *row, size_t dim) {
    for (size_t o = 0; o < dim; o += 64) __builtin_prefetch(row + o);
    __builtin_prefetch(row + dim - 1);   /* rows need not start on a cache line */
}

BATCH_CLONES
static void gather_rows(float *restrict x, uint8_t *restrict y, const uint8_t *restrict pixels,
                        const uint8_t *restrict labels, const uint32_t *restrict idx, int n, size_t dim) {
    for (int i = 0; i < n && i < BATCH_PREFETCH_ROWS; i++) prefetch_row(pixels + (size_t)idx[i] * dim, dim);
    for (int i = 0; i < n; i++) {
        if (i + BATCH_PREFETCH_ROWS < n) prefetch_row(pixels + (size_t)idx[i + BATCH_PREFETCH_ROWS] * dim, dim);
        const size_t k = idx[i];
        const uint8_t *restrict src = pixels + k * dim;
        float *restrict dst = x + (size_t)i * dim;
        for (size_t p = 0; p < dim; p++) dst[p] = batch_normalise(src[p]);
        y[i] = labels[k];
    }
}

void batch_gather(float *x, uint8_t *y, const dataset_t *ds, const uint32_t *idx, int n) {
    gather_rows(x, y, ds->pixels, ds->labels, idx, n, (size_t)ds->dim);
}
