/* sampler.h: PyTorch DistributedSampler semantics, so that psring and a PyTorch job split data
 * the same way:
 *   - one permutation of [0, size) per epoch from (seed, epoch), identical on every rank
 *     (shuffle off: the identity);
 *   - drop_last off: the permutation is padded by wrapping around to total = ceil(size/N)*N;
 *     drop_last on: the tail is dropped to total = floor(size/N)*N;
 *   - rank r takes positions r, r+N, r+2N, ... of it: num_samples = total/N indices.
 * Hence with per-rank batch b, the union of the N ranks' k-th batches is exactly the positions
 * [k*N*b, (k+1)*N*b) of the epoch's permutation: the single-process k-th batch of size N*b. */
#ifndef PSRING_SAMPLER_H
#define PSRING_SAMPLER_H
#include <stddef.h>
#include <stdint.h>

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
} sampler_t;

/* Returns 0, or -1 when the arguments make no sense (rank outside [0,N), N < 1, size 0). */
int sampler_init(sampler_t *s, size_t size, int num_replicas, int rank, uint64_t seed,
                 int shuffle, int drop_last);
/* Recomputes s->indices for this epoch (the permutation depends on seed and epoch only). */
void sampler_set_epoch(sampler_t *s, int epoch);
void sampler_free(sampler_t *s);

#endif
