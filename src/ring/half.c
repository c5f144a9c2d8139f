/* half.c: see half.h. The portable conversions follow F. Giesen's public-domain
 * float_to_half_fast3_rtne / half_to_float (branch-light integer code, NaN kept quiet). */
#include "half.h"
#include <string.h>

typedef union { uint32_t u; float f; } fbits_t;

uint16_t half_from_float1(float fin) {
    fbits_t f = { .f = fin };
    const fbits_t f32infty = { .u = 255u << 23 };
    const fbits_t f16max = { .u = (127u + 16u) << 23 };
    const fbits_t denorm_magic = { .u = ((127u - 15u) + (23u - 10u) + 1u) << 23 };
    const uint32_t sign_mask = 0x80000000u;
    uint16_t o;
    uint32_t sign = f.u & sign_mask;
    f.u ^= sign;
    if (f.u >= f16max.u) {                       /* overflow to inf, or NaN (kept quiet) */
        o = (f.u > f32infty.u) ? 0x7e00 : 0x7c00;
    } else if (f.u < (113u << 23)) {             /* result is a subnormal or zero */
        f.f += denorm_magic.f;                   /* the FPU rounds (to nearest even) for us */
        o = (uint16_t)(f.u - denorm_magic.u);
    } else {
        uint32_t mant_odd = (f.u >> 13) & 1u;
        f.u += ((uint32_t)(15 - 127) << 23) + 0xfffu;   /* rebias exponent, round half up ... */
        f.u += mant_odd;                                /* ... and ties to even */
        o = (uint16_t)(f.u >> 13);
    }
    return (uint16_t)(o | (sign >> 16));
}

float half_to_float1(uint16_t h) {
    const fbits_t magic = { .u = 113u << 23 };
    const uint32_t shifted_exp = 0x7c00u << 13;
    fbits_t o;
    o.u = (uint32_t)(h & 0x7fffu) << 13;
    uint32_t exp = shifted_exp & o.u;
    o.u += (uint32_t)(127 - 15) << 23;
    if (exp == shifted_exp) o.u += (uint32_t)(128 - 16) << 23;    /* inf / NaN */
    else if (exp == 0) { o.u += 1u << 23; o.f -= magic.f; }        /* zero / subnormal */
    o.u |= (uint32_t)(h & 0x8000u) << 16;
    return o.f;
}

void half_from_float_portable(uint16_t *restrict dst, const float *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_from_float1(src[i]);
}
void half_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_to_float1(src[i]);
}
static void half_add_portable(float *restrict dst, const uint16_t *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += half_to_float1(src[i]);
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define F16C_TARGET __attribute__((target("avx,f16c")))

F16C_TARGET static void from_f16c(uint16_t *restrict dst, const float *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = half_from_float1(src[i]);
}
F16C_TARGET static void to_f16c(float *restrict dst, const uint16_t *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = half_to_float1(src[i]);
}
F16C_TARGET static void add_f16c(float *restrict dst, const uint16_t *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 h = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), h));
    }
    for (; i < n; i++) dst[i] += half_to_float1(src[i]);
}
static int have_f16c = -1;
int half_have_f16c(void) {
    if (have_f16c < 0) {
        __builtin_cpu_init();
        have_f16c = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    }
    return have_f16c;
}
void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n) {
    if (half_have_f16c()) from_f16c(dst, src, n); else half_from_float_portable(dst, src, n);
}
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) {
    if (half_have_f16c()) to_f16c(dst, src, n); else half_to_float_portable(dst, src, n);
}
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) {
    if (half_have_f16c()) add_f16c(dst, src, n); else half_add_portable(dst, src, n);
}
#else
int half_have_f16c(void) { return 0; }
void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n) { half_from_float_portable(dst, src, n); }
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) { half_to_float_portable(dst, src, n); }
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) { half_add_portable(dst, src, n); }
#endif
