/* checkpoint.h: training state on disk, written atomically (temp file, fsync, rename, fsync of
 * the directory) so a crash or a full disk never leaves a half-written file in place of a good one.
 *
 *   offset  field
 *   0       magic "PSRCKPT1" (8 bytes)
 *   8       u32 version (2), u32 nsizes, u32 sizes[nsizes]
 *   ...     u64 nparams, u32 state_per_param, i64 step, i32 epoch, i32 batch_in_epoch, u64 seed
 *   ...     u32 optimizer (optim_kind_t: 0 sgd, 1 adam, 2 lars; absent in version 1 = sgd)
 *   ...     f32 params[nparams], f32 state[nparams * state_per_param]
 *   end-4   u32 CRC32 (zlib) of every byte before it
 * Little-endian (the machines we run on); the reader checks magic, version, sizes, lengths, CRC
 * and that the model layers and the optimizer match, and names the first mismatch. The optimizer
 * state block is optim_state_per_param floats per parameter (Adam's includes its step count). */
#ifndef PSRING_CHECKPOINT_H
#define PSRING_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int nsizes;
    int sizes[32];
    uint64_t nparams;
    uint32_t state_per_param;
    int64_t step;           /* optimizer steps done */
    int32_t epoch;          /* epoch of the next batch */
    int32_t batch_in_epoch; /* index of the next batch within that epoch */
    uint64_t seed;          /* the sampler's permutation derives from (seed, epoch) */
    uint32_t optimizer;     /* optim_kind_t the state belongs to (version 2; version 1 files: sgd) */
} checkpoint_header_t;

/* Returns 0, or -1 with err set. */
int checkpoint_save(const char *path, const checkpoint_header_t *h, const float *params,
                    const float *state, char *err, size_t errlen);
/* Reads into caller buffers sized from the expected header: fails when the file's layers,
 * optimizer, nparams or state size differ from expect's. On success fills *h. */
int checkpoint_load(const char *path, const checkpoint_header_t *expect, checkpoint_header_t *h,
                    float *params, float *state, char *err, size_t errlen);

#endif
