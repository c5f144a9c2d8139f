/* blas.h: picking the right OpenBLAS kernels on CPUs it misdetects.
 * Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) reads the CPU model name; on VMs that report a generic
 * "Intel Xeon Processor" it falls back to "Prescott" (SSE3) although the CPU has AVX2/AVX-512,
 * costing ~5x in SGEMM. OpenBLAS reads OPENBLAS_CORETYPE only when it loads, so the fix is to set
 * it and re-exec ourselves before anything else runs (and before MPI_Init). */
#ifndef PSRING_BLAS_H
#define PSRING_BLAS_H

/* Pure decision, unit-tested: given the core OpenBLAS chose and the CPU's features, the core type
 * to force, or NULL when the choice is already right (or the CPU has nothing better). */
const char *blas_pick_coretype(const char *corename, int has_avx512f, int has_avx512bw,
                               int has_avx512vl, int has_avx2, int has_fma);
/* Call first thing in main(): if OpenBLAS misdetected this CPU, set OPENBLAS_CORETYPE and
 * re-exec argv (once; guarded by an environment variable). After the re-exec, log_line gets one
 * line saying what was done, for the caller to print. Also pins OpenBLAS to `threads` threads. */
void blas_setup(int argc, char **argv, int threads, char *log_line, int loglen);
/* the core OpenBLAS is using now */
const char *blas_corename(void);

#endif
