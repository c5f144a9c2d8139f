/* checkpoint.h: training state on disk, written atomically (temp file, fsync, rename, fsync of
 * the directory) so a crash or a full disk never leaves a half-written file in place of a good one.
 *
 *   offset  field
 *   0       magic "PSRCKPT1" (8 bytes)
 *   8       u32 version (3), u32 nsizes, u32 sizes[nsizes]
 *   ...     u64 nparams, u32 state_per_param, i64 step, i32 epoch, i32 batch_in_epoch, u64 seed
 *   ...     u32 optimizer (optim_kind_t: 0 sgd, 1 adam, 2 lars; absent in version 1 = sgd)
 *   ...     version 3: the data layout batch_in_epoch counts in: u32 sampler (sampler_kind_t),
 *           u32 workers, u32 batch (per worker), u32 drop_last, u64 train_count
 *   ...     f32 params[nparams], f32 state[nparams * state_per_param]
 *   end-4   u32 CRC32 (zlib) of every byte before it
 * Little-endian (the machines we run on); the reader checks magic, version, sizes, lengths, CRC
 * and that the model layers and the optimizer match, and names the first mismatch. The optimizer
 * state block is optim_state_per_param floats per parameter (Adam's includes its step count).
 * The data layout is only recorded here; the trainer decides whether a different one may resume
 * (checkpoint_layout_mismatch). Versions 1 and 2 still load, with has_layout 0. */
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
    /* version 3: what (epoch, batch_in_epoch) means: the same position in a different layout is
     * different data. has_layout is set by checkpoint_load (0 for version 1/2 files). */
    uint32_t has_layout;
    uint32_t sampler;       /* sampler_kind_t */
    uint32_t workers;
    uint32_t batch;         /* per worker, per micro-batch */
    uint32_t drop_last;
    uint64_t train_count;   /* samples in the training set (after --train-limit) */
} checkpoint_header_t;

/* Returns 0, or -1 with err set. */
int checkpoint_save(const char *path, const checkpoint_header_t *h, const float *params,
                    const float *state, char *err, size_t errlen);
/* Reads into caller buffers sized from the expected header: fails when the file's layers,
 * optimizer, nparams or state size differ from expect's. On success fills *h. */
int checkpoint_load(const char *path, const checkpoint_header_t *expect, checkpoint_header_t *h,
                    float *params, float *state, char *err, size_t errlen);

/* 0 when a run with layout `now` continues the data order of checkpoint h exactly (or h predates
 * layouts, or h sits at an epoch boundary, where every layout starts the epoch afresh from
 * (seed, epoch)); else -1 with err naming each field that differs. */
int checkpoint_layout_mismatch(const char *path, const checkpoint_header_t *h, const checkpoint_header_t *now,
                               char *err, size_t errlen);

#endif
