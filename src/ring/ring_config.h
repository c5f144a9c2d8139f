/* ring_config.h: what the ring topology is asked to do, in its own terms. Its descriptor
 * (ring_topology.c) fills a ring_config_t from its flags and what the trainer shares (topology.h);
 * nothing in src/ring reads the trainer's options. Values are already validated (the trainer
 * refuses bad input first). */
#ifndef PSRING_RING_CONFIG_H
#define PSRING_RING_CONFIG_H
#include <stdint.h>
#include "model/optim.h"

/* psring-train's --chunk-kb default, 256 KiB: smaller chunks pipeline small buffers better
 * (docs/ring.md); the library's own default for a chunk of 0 is RING_DEFAULT_CHUNK_KB
 * (ring_allreduce.h) */
#define RING_CHUNK_KB_DEFAULT 256

typedef enum { ALLREDUCE_RING, ALLREDUCE_MPI, ALLREDUCE_NCCL } allreduce_impl_t;   /* nccl: the GPU only */
typedef enum { RING_OP_AVERAGE, RING_OP_SUM, RING_OP_ADASUM } ring_op_t;

typedef struct {
    uint64_t fingerprint;       /* of everything that must agree across ranks: compared at start-up */
    optim_config_t optim;       /* run on every worker; its layer layout gives adasum its tensors */
    allreduce_impl_t allreduce; /* --allreduce: psring's ring, MPI_Allreduce, NCCL */
    ring_op_t op;               /* --op: average (sum / N), sum, adasum */
    int fp16;                   /* gradients travel as IEEE half */
    int hierarchical;           /* reduce in each host, ring across hosts, broadcast */
    int overlap;                /* allreduce buckets during backward (grad_ready) */
    float bucket_mb;            /* --overlap bucket size */
    int chunk_kb;               /* ring pipeline chunk */
    int autotune;               /* with overlap: search bucket_mb / chunk_kb in the first steps */
    const char *autotune_log;   /* the trials as CSV (rank 0); NULL or "" = none */
    double stall_warn;          /* seconds before rank 0 names ranks that did not arrive; 0 = off */
    int quiet;                  /* no informational lines */
} ring_config_t;

#endif
