/* sampler.c: PyTorch DistributedSampler semantics (see sampler.h): one permutation per epoch from
 * (seed, epoch), identical on every rank, padded by wrap-around or trimmed to a multiple of N, and
 * rank r takes every N-th position starting at r; and the other split strategies of sampler.h.
 * The permutation is our own Fisher-Yates over rng.h, not torch.randperm: the split *rules* match
 * PyTorch, the random order does not (and need not). It does not batch or touch sample data. */
#include "sampler.h"
#include "common/check.h"
#include "common/rng.h"
#include <string.h>

/* stream for epoch e's permutation, kept apart from other users of the same seed (model init) */
#define SAMPLER_STREAM_BASE 0x5A3D1E00ull
/* shard-then-shuffle: rank r's shuffle in epoch e, apart from the global permutations above */
#define SAMPLER_SHARD_STREAM 0x5A3D1F0000000000ull

/* Fisher-Yates over p[0, n) from (seed, stream) */
static void shuffle(uint32_t *p, size_t n, uint64_t seed, uint64_t stream) {
    if (n < 2) return;
    rng_t r;
    rng_init(&r, seed, stream);
    for (size_t i = n - 1; i > 0; i--) {   /* p[i] swaps with p[0..i] */
        size_t j = (size_t)rng_below(&r, (uint64_t)i + 1);
        uint32_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static const char *const kind_names[] = {"distributed", "shard-then-shuffle", "shuffle-then-shard", "split-epochs"};

const char *sampler_kind_name(sampler_kind_t kind) {
    return (unsigned)kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "?";
}

int sampler_kind_parse(const char *name, sampler_kind_t *kind) {
    for (unsigned k = 0; k < sizeof kind_names / sizeof *kind_names; k++)
        if (!strcmp(name, kind_names[k])) { *kind = (sampler_kind_t)k; return 0; }
    return -1;
}

void sampler_set_kind(sampler_t *s, sampler_kind_t kind) {
    size_t n = (size_t)s->num_replicas, size = s->size;
    s->kind = kind;
    if (kind == SAMPLER_SPLIT_EPOCHS) s->num_samples = size;   /* the whole set, padding moot */
    else s->num_samples = s->drop_last ? size / n : (size + n - 1) / n;
    s->total_size = kind == SAMPLER_SPLIT_EPOCHS ? size : s->num_samples * n;
    free(s->indices);
    s->indices = xmalloc((s->num_samples ? s->num_samples : 1) * sizeof *s->indices);
    sampler_set_epoch(s, s->epoch);
}

int sampler_init(sampler_t *s, size_t size, int num_replicas, int rank, uint64_t seed,
                 int shuffle, int drop_last) {
    memset(s, 0, sizeof *s);
    if (num_replicas < 1 || rank < 0 || rank >= num_replicas || size == 0) return -1;
    if (size > UINT32_MAX) return -1;   /* indices are uint32_t */
    size_t n = (size_t)num_replicas;
    s->size = size;
    s->num_replicas = num_replicas;
    s->rank = rank;
    s->seed = seed;
    s->shuffle = shuffle;
    s->drop_last = drop_last;
    /* PyTorch: drop_last and size % N != 0 gives ceil((size - N) / N) = floor(size / N), which is
     * 0 when size < N (no rank gets anything, as in PyTorch); otherwise ceil(size / N). */
    s->num_samples = drop_last ? size / n : (size + n - 1) / n;
    s->total_size = s->num_samples * n;
    s->perm = xmalloc(size * sizeof *s->perm);
    s->indices = xmalloc(s->num_samples * sizeof *s->indices);
    sampler_set_epoch(s, 0);
    return 0;
}

void sampler_set_epoch(sampler_t *s, int epoch) {
    s->epoch = epoch;
    uint32_t *p = s->perm;
    size_t size = s->size;
    size_t n = (size_t)s->num_replicas, ns = s->num_samples;
    if (s->kind == SAMPLER_SHARD_THEN_SHUFFLE) {
        /* the shard is fixed (positions of the file order, wrapped like the padding), only its
         * order changes */
        for (size_t k = 0; k < ns; k++) s->indices[k] = (uint32_t)(((size_t)s->rank * ns + k) % size);
        if (s->shuffle)
            shuffle(s->indices, ns, s->seed, SAMPLER_SHARD_STREAM + ((uint64_t)(uint32_t)epoch << 20) + (uint64_t)s->rank);
        return;
    }
    if (s->kind == SAMPLER_SPLIT_EPOCHS) {
        /* data epoch e*N + r: the same permutation a distributed sampler would use in that epoch */
        for (size_t i = 0; i < size; i++) s->indices[i] = (uint32_t)i;
        if (s->shuffle)
            shuffle(s->indices, size, s->seed, SAMPLER_STREAM_BASE + (uint64_t)((int64_t)epoch * (int64_t)n + s->rank));
        return;
    }
    for (size_t i = 0; i < size; i++) p[i] = (uint32_t)i;
    if (s->shuffle) {
        rng_t r;
        rng_init(&r, s->seed, SAMPLER_STREAM_BASE + (uint64_t)(int64_t)epoch);
        for (size_t i = size - 1; i > 0; i--) {   /* Fisher-Yates: p[i] swaps with p[0..i] */
            size_t j = (size_t)rng_below(&r, (uint64_t)i + 1);
            uint32_t t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
    }
    /* position q of the padded list is perm[q % size]: PyTorch's `indices += indices[:padding]`
     * (or repeated copies when padding > size); with drop_last q < total_size <= size anyway */
    if (s->kind == SAMPLER_SHUFFLE_THEN_SHARD) {   /* the r-th contiguous block of the padded list */
        for (size_t k = 0; k < ns; k++) s->indices[k] = p[((size_t)s->rank * ns + k) % size];
        return;
    }
    size_t q = (size_t)s->rank;
    for (size_t k = 0; k < ns; k++, q += n) s->indices[k] = p[q % size];
}

void sampler_free(sampler_t *s) {
    if (!s) return;
    free(s->perm);
    free(s->indices);
    memset(s, 0, sizeof *s);
}
