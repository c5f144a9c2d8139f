/* reduce_kernel.c: psring-bench-reduce-kernel, the GPU ring's reduction kernel (dst += src) against
 * cudaMemcpy device-to-device, measured in the same run on the same buffers:
 *   psring-bench-reduce-kernel [-e SIZE] [-n REPS]
 * Both figures are bytes moved per second (add: 2 reads + 1 write per float; copy: 1 read + 1
 * write), best of REPS; the ratio's target is >= 0.8. Exit 77 without a GPU (so it can
 * run from a test), 2 on bad flags. Not here: MPI (one process, one GPU). */
#include "ring/ring_cuda.h"
#include "common/cuda_mem.h"
#include "common/check.h"
#include "common/parse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    size_t mib = 256;
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        int v;
        if (!strcmp(argv[i], "-e") && i + 1 < argc) {
            if (parse_int(argv[++i], 1, 16384, &v)) { fprintf(stderr, "psring-bench-reduce-kernel: -e takes MiB in 1..16384: '%s'\n", argv[i]); return 2; }
            mib = (size_t)v;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            if (parse_int(argv[++i], 1, 100000, &reps)) { fprintf(stderr, "psring-bench-reduce-kernel: -n takes 1..100000: '%s'\n", argv[i]); return 2; }
        } else {
            fprintf(stderr, "psring-bench-reduce-kernel: unknown argument '%s' (usage: [-e MiB] [-n reps])\n", argv[i]);
            return 2;
        }
    }
    char why[256] = "";
    if (cuda_device_pin(0, why, sizeof why) < 0) {
        fprintf(stderr, "psring-bench-reduce-kernel: no usable CUDA device (%s): skipped\n", why);
        return 77;
    }
    char name[256];
    cuda_device_name(name, sizeof name);
    double add = 0, copy = 0;
    double frac = ring_cuda_kernel_bw(mib * 1024 * 1024 / sizeof(float), reps, &add, &copy);
    printf("# %s, %zu MiB per buffer, best of %d\n", name, mib, reps);
    printf("reduce_kernel_GBps %.1f  memcpy_d2d_GBps %.1f  fraction %.3f  (target >= 0.8)\n", add, copy, frac);
    return 0;
}
