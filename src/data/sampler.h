/* sampler.h: how the training set is split among N workers, epoch by epoch. The default
 * (SAMPLER_DISTRIBUTED) is PyTorch DistributedSampler semantics, so that psring and a PyTorch job
 * split data the same way:
 *   - one permutation of [0, size) per epoch from (seed, epoch), identical on every rank
 *     (shuffle off: the identity);
 *   - drop_last off: the permutation is padded by wrapping around to total = ceil(size/N)*N;
 *     drop_last on: the tail is dropped to total = floor(size/N)*N;
 *   - rank r takes positions r, r+N, r+2N, ... of it: num_samples = total/N indices.
 * Hence with per-rank batch b, the union of the N ranks' k-th batches is exactly the positions
 * [k*N*b, (k+1)*N*b) of the epoch's permutation: the single-process k-th batch of size N*b.
 *
 * The other strategies users of Horovod argue about (sampler_set_kind; shuffle on, N workers,
 * "padded" meaning positions past the end wrap around as above, or the tail is dropped):
 *   SAMPLER_SHUFFLE_THEN_SHARD  the same global permutation per epoch, but rank r takes the
 *       contiguous block [r*num_samples, (r+1)*num_samples) of it instead of every N-th position.
 *       Per epoch the ranks still see disjoint samples covering the data (up to padding) and a
 *       fresh mix each epoch; only the k-th batches of the ranks no longer form the
 *       single-process k-th batch (so local == ring step by step holds only for distributed).
 *   SAMPLER_SHARD_THEN_SHUFFLE  rank r owns the fixed contiguous shard [r*num_samples,
 *       (r+1)*num_samples) of the dataset in file order, assigned once; each epoch only the order
 *       within the shard is shuffled (from seed, epoch and rank). Disjoint and covering, but a
 *       worker never sees another's samples: the per-worker data sets differ for the whole run
 *       (as with pre-sharded files), which biases each worker's gradient when the file order is
 *       not random.
 *   SAMPLER_SPLIT_EPOCHS  "split epochs, not steps" (Horovod's Keras examples: every worker
 *       reads the whole dataset and the number of epochs is divided by N): in trainer epoch e,
 *       rank r walks a permutation of ALL size samples, the one of data epoch e*N + r, so
 *       num_samples = size, an epoch has N times the steps of distributed and the job sees
 *       N passes over the data per epoch: give --epochs E/N for the same work. The ranks' shares
 *       within one epoch overlap (each is the whole set), so a batch can hold the same sample
 *       twice across workers; over N epochs, rank r sees data epochs r, N+r, 2N+r, ...
 * Every strategy depends only on (seed, epoch, rank, kind), so a resumed run redraws the same
 * order. With shuffle off every kind uses the identity instead of a permutation. */
#ifndef PSRING_SAMPLER_H
#define PSRING_SAMPLER_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SAMPLER_DISTRIBUTED = 0, SAMPLER_SHARD_THEN_SHUFFLE, SAMPLER_SHUFFLE_THEN_SHARD, SAMPLER_SPLIT_EPOCHS
} sampler_kind_t;

typedef struct {
    size_t size;          /* dataset size */
    int num_replicas, rank;
    uint64_t seed;
    int shuffle, drop_last;
    size_t total_size;    /* padded or trimmed length, a multiple of num_replicas */
    size_t num_samples;   /* per rank: total_size / num_replicas */
    int epoch;            /* last epoch set */
    uint32_t *perm;       /* scratch, size entries */
    uint32_t *indices;    /* this rank's num_samples indices for the current epoch */
    sampler_kind_t kind;  /* SAMPLER_DISTRIBUTED unless sampler_set_kind changed it */
} sampler_t;

/* Returns 0, or -1 when the arguments make no sense (rank outside [0,N), N < 1, size 0). */
int sampler_init(sampler_t *s, size_t size, int num_replicas, int rank, uint64_t seed,
                 int shuffle, int drop_last);
/* Recomputes s->indices for this epoch (the permutation depends on seed and epoch only). */
void sampler_set_epoch(sampler_t *s, int epoch);
void sampler_free(sampler_t *s);
/* Switches the split strategy (after sampler_init): recomputes num_samples, total_size and the
 * indices of the current epoch. */
void sampler_set_kind(sampler_t *s, sampler_kind_t kind);
/* "distributed", "shard-then-shuffle", "shuffle-then-shard", "split-epochs" <-> kind;
 * parse returns 0, or -1 for anything else */
const char *sampler_kind_name(sampler_kind_t kind);
int sampler_kind_parse(const char *name, sampler_kind_t *kind);

#endif
