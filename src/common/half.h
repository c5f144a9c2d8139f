/* half.h: IEEE 754 binary16 <-> binary32 conversion, round to nearest even; the only place in
 * src/ that converts (the ring's --fp16 hops, the parameter server's f16 pushes and replies).
 * Whole buffers use the F16C instructions when the CPU and OS have them (probed at run time, so
 * the build needs no -mf16c), else portable integer code. It does no arithmetic in half precision.
 *
 * The portable code gives the same bits as F16C (VCVTPS2PH / VCVTPH2PS) for every input, so a
 * result never depends on which machine converted it:
 *   float -> half: round to nearest, ties to even; subnormal halves kept (no flush to zero);
 *     |x| >= 65520 becomes inf; -0 stays -0; a NaN keeps its sign and the top 10 bits of its
 *     payload and gets the quiet bit (0x7f800001 -> 0x7e00, 0x7fa00000 -> 0x7f00).
 *   half -> float: exact; a NaN keeps its sign and payload (shifted up 13 bits) and gets the
 *     quiet bit (0x7c01 -> 0x7fc02000).
 * So half -> float -> half is the identity except that a signalling NaN comes back quiet. */
#ifndef PSRING_HALF_H
#define PSRING_HALF_H
#include <stddef.h>
#include <stdint.h>

void half_from_float(uint16_t *restrict dst, const float *restrict src, size_t n);
void half_to_float(float *restrict dst, const uint16_t *restrict src, size_t n);
/* dst[i] += (float)src[i]: one pass for the fp16 reduce-scatter hop and the server's sum */
void half_add_to_float(float *restrict dst, const uint16_t *restrict src, size_t n);
/* the portable paths, always available (for tests and CPUs without F16C) */
uint16_t half_from_float1(float f);
float half_to_float1(uint16_t h);
void half_from_float_portable(uint16_t *restrict dst, const float *restrict src, size_t n);
void half_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n);
void half_add_to_float_portable(float *restrict dst, const uint16_t *restrict src, size_t n);
/* 1 when the F16C path is in use */
int half_have_f16c(void);

#endif
