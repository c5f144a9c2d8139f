/* allreduce_cuda.h: the --device cuda half of psring-bench-allreduce (allreduce.c parses the
 * flags, opens the CSV and calls bench_allreduce_cuda; allreduce_cuda.c does the rest, with the
 * sweep, timed blocks and rows of bench_driver.h). The buffers live in device memory; each rank
 * pins GPU local_rank % device_count. Only in --with-cuda builds. Not here: fp16, the
 * hierarchical allreduce, --compute-us (allreduce.c refuses them with --device cuda). */
#ifndef PSRING_BENCH_ALLREDUCE_CUDA_H
#define PSRING_BENCH_ALLREDUCE_CUDA_H
#include <stddef.h>
#include <stdio.h>
#include "bench_driver.h"

typedef struct {
    const bench_opts_t *sweep;            /* -b -e -f -n -w */
    int check, chunk_kb;
    int impl_ring, impl_staged, impl_mpi, impl_nccl;   /* which to time, in this order */
    int nccl_required;                    /* --impl nccl: refusing NCCL is an error, not a skipped row */
    FILE *csv;                            /* rank 0: the --csv file (header written), else NULL */
} bench_cuda_opts_t;

/* Collective over MPI_COMM_WORLD (MPI initialised): pins this rank's GPU (local_rank %
 * device_count) and returns it; without a usable device on some rank, one line on stderr,
 * MPI_Finalize and exit 2 on every rank. Called before any output file is opened. */
int bench_cuda_pin(void);
/* Collective, after bench_cuda_pin (dev: what it returned). Returns the wrong elements over all
 * ranks (0 when all sums were exact). With --impl nccl where NCCL cannot run (library missing,
 * ranks sharing a GPU): one line, exit 2 as above. */
long bench_allreduce_cuda(const bench_cuda_opts_t *o, int dev);
#endif
