/* idx.h: MNIST-format IDX reader (images 0x803, labels 0x801), plain or gzip (zlib's gzread reads
 * both transparently). It validates everything a hostile or truncated file can get wrong and reports
 * the first problem as "FILE: problem"; it never exits or prints, the caller decides.
 * It does not know about training, ranks or batches. */
#ifndef PSRING_IDX_H
#define PSRING_IDX_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int count;          /* samples */
    int rows, cols;     /* 28 x 28 for MNIST */
    int dim;            /* rows * cols */
    uint8_t *pixels;    /* (count, dim), raw 0..255 as in the file; batch_gather normalises (batch.h).
                         * A quarter of the float size, so a random batch touches 4x fewer cache
                         * lines and a rank holds 47 MB of MNIST instead of 188 MB. */
    uint8_t *labels;    /* (count), each 0..9 */
} dataset_t;

/* Low level: read one IDX file. Returns 0, or -1 with err = "PATH: problem". */
int idx_read_images(const char *path, uint8_t **pixels, int *count, int *rows, int *cols,
                    char *err, size_t errlen);
int idx_read_labels(const char *path, uint8_t **labels, int *count, char *err, size_t errlen);

/* Loads DIR/<split>-images-idx3-ubyte[.gz] and DIR/<split>-labels-idx1-ubyte[.gz], split is
 * "train" or "t10k"; checks label range 0..9 and matching counts. limit > 0 keeps the first limit
 * samples. Returns 0, or -1 with err set (naming the file). */
int dataset_load(dataset_t *ds, const char *dir, const char *split, int limit, char *err, size_t errlen);
void dataset_free(dataset_t *ds);

#endif
