/* cuda_launch.h: the launch shape of psring's elementwise kernels, once: CUDA_THREADS threads a
 * block and enough blocks for one element a thread, capped; the kernels are grid-stride loops, so
 * the cap only means each thread takes several elements. For .cu sources only. */
#ifndef PSRING_CUDA_LAUNCH_H
#define PSRING_CUDA_LAUNCH_H
#include <stddef.h>

#define CUDA_THREADS 256

static inline unsigned cuda_blocks_for(size_t n) {
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    if (b > 65535u * 4) b = 65535u * 4;     /* grid-stride loops cover the rest */
    return b ? (unsigned)b : 1u;
}

#endif
