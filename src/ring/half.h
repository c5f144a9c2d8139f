/* half.h: IEEE 754 binary16 <-> binary32 conversion of whole buffers, round to nearest even.
 * Used by the fp16 ring (gradients travel as halves, arithmetic stays in float). Uses the F16C
 * instructions when the CPU has them (checked at run time, so the build needs no -mf16c), else
 * portable integer code that gives bit-identical results (tests/test_ring.c compares the two).
 * It does not do arithmetic in half precision. */
#ifndef PSRING_HALF_H
#define PSRING_HALF_H
#include <stddef.h>
#include <stdint.h>

void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n);
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n);
/* dst[i] += (float)src[i]: one pass for the fp16 reduce-scatter hop */
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n);
/* the portable paths, always available (for tests and CPUs without F16C) */
uint16_t half_from_float1(float f);
float half_to_float1(uint16_t h);
void half_from_float_portable(uint16_t *restrict dst, const float *restrict src, size_t n);
void half_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n);
/* 1 when the F16C path is in use */
int half_have_f16c(void);

#endif
