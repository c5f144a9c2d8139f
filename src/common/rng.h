/* rng.h: the one random number generator of psring (splitmix64 seeding xoshiro256**).
 * Deterministic and platform-independent, so every rank, the sampler and the model init draw
 * the same numbers from the same (seed, stream). Header-only: it is tiny and hot. */
#ifndef PSRING_RNG_H
#define PSRING_RNG_H
#include <stdint.h>

typedef struct { uint64_t s[4]; } rng_t;

static inline uint64_t rng_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* stream separates independent uses of one seed (e.g. model init vs epoch e's permutation) */
static inline void rng_init(rng_t *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; i++) r->s[i] = rng_splitmix64(&x);
}

static inline uint64_t rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rng_rotl(s[3], 45);
    return result;
}

/* uniform in [0, n) without modulo bias (Lemire) */
static inline uint64_t rng_below(rng_t *r, uint64_t n) {
    __uint128_t m = (__uint128_t)rng_next(r) * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) { m = (__uint128_t)rng_next(r) * n; l = (uint64_t)m; }
    }
    return (uint64_t)(m >> 64);
}

/* uniform float in [0, 1) with 24 random bits */
static inline float rng_float(rng_t *r) { return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f); }

#endif
