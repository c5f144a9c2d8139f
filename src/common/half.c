/* half.c: see half.h. Portable conversions in integer arithmetic only, so that they stay exact
 * whatever the floating-point environment (flush-to-zero, x87); the F16C path converts 8 values
 * at a time and hands the tail to the portable code, which gives the same bits. */
#include "half.h"
#include <string.h>

#define F32_INF 0x7f800000u
#define F32_QUIET 0x00400000u
#define F16_INF 0x7c00u
#define F16_QUIET 0x0200u

uint16_t half_from_float1(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mag = x & 0x7fffffffu;
    if (mag > F32_INF) /* NaN: the top 10 payload bits, made quiet (what VCVTPS2PH does) */
        return (uint16_t)(sign | F16_INF | F16_QUIET | ((mag >> 13) & 0x3ffu));
    if (mag >= 0x477ff000u) return (uint16_t)(sign | F16_INF); /* inf, or rounds to >= 65520 */
    if (mag < 0x38800000u) { /* below 2^-14: a subnormal half or zero */
        if (mag < 0x33000000u) return (uint16_t)sign; /* below 2^-25: rounds to (signed) zero */
        uint32_t e = mag >> 23;
        uint32_t m = (mag & 0x7fffffu) | 0x800000u;
        /* value = m * 2^(e-150); in units of the half subnormal 2^-24 that is m >> (126 - e) */
        int sh = 126 - (int)e; /* 1 .. 24 */
        uint32_t r = m >> sh;
        uint32_t rem = m & ((1u << sh) - 1);
        uint32_t tie = 1u << (sh - 1);
        if (rem > tie || (rem == tie && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    /* normal: rebias the exponent 127 -> 15, round the mantissa to 10 bits (a carry into the
     * exponent is right, and cannot reach inf: mag < 0x477ff000) */
    uint32_t v = mag - ((uint32_t)(127 - 15) << 23);
    uint32_t r = v >> 13;
    uint32_t rem = v & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

float half_to_float1(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 31) /* inf, or NaN with its payload, made quiet (what VCVTPH2PS does) */
        x = sign | F32_INF | (m << 13) | (m ? F32_QUIET : 0);
    else if (e != 0)
        x = sign | ((e + 127 - 15) << 23) | (m << 13);
    else if (m == 0)
        x = sign;
    else { /* subnormal m * 2^-24: shift the leading one up to the implicit bit */
        int s = __builtin_clz(m) - 21; /* m < 2^10: 1 .. 10 */
        x = sign | ((uint32_t)(127 - 15 + 1 - s) << 23) | (((m << s) & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void half_from_float_portable(uint16_t *restrict dst, const float *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_from_float1(src[i]);
}
void half_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = half_to_float1(src[i]);
}
void half_add_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += half_to_float1(src[i]);
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
/* per function, so the rest of the program needs no -mavx and runs on any x86 */
#define F16C_TARGET __attribute__((target("avx,f16c")))

F16C_TARGET static void from_f16c(uint16_t *restrict dst, const float *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = half_from_float1(src[i]);
}
F16C_TARGET static void to_f16c(float *restrict dst, const uint16_t *restrict src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    /* an assignment, not 0.0f + x: that would turn a half -0 into +0 */
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

/* CPUID leaf 1 (ECX: F16C bit 29, AVX bit 28, OSXSAVE bit 27) and XCR0 bits 1-2 (the OS saves
 * the YMM state). By hand rather than __builtin_cpu_supports("f16c"), which clang rejects. */
static int probe_f16c(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & (1u << 29)) || !(c & (1u << 28)) || !(c & (1u << 27))) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;
}

int half_have_f16c(void) {
    /* the PS converts from several threads: relaxed atomics, every thread computes the same */
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = probe_f16c();
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n) {
    if (half_have_f16c()) from_f16c(dst, src, n); else half_from_float_portable(dst, src, n);
}
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) {
    if (half_have_f16c()) to_f16c(dst, src, n); else half_to_float_portable(dst, src, n);
}
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) {
    if (half_have_f16c()) add_f16c(dst, src, n); else half_add_to_float_portable(dst, src, n);
}
#else
int half_have_f16c(void) { return 0; }
void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n) { half_from_float_portable(dst, src, n); }
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) { half_to_float_portable(dst, src, n); }
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n) { half_add_to_float_portable(dst, src, n); }
#endif
