/* ring_ops.h: the two collectives beside the plain ring (ring_allreduce.h):
 *
 *   Adasum (Maleki et al. 2020, as Horovod's horovod/common/ops/adasum/ does it): the N gradients
 *   are combined pairwise, adasum(a, b) = (1 - a.b / (2|a|^2)) a + (1 - a.b / (2|b|^2)) b, with
 *   dot products and norms taken per tensor (a list of [lo, hi) ranges of the buffer), in a
 *   recursive-halving / distance-doubling pattern over log2(N) levels. N must be a power of two.
 *
 *     adasum_t a;
 *     adasum_init(&a, comm, max_count, tensor_off, ntensors);   // collective; N = 2^k or exits 2
 *     adasum_allreduce(&a, grads, count);                      // collective; identical results
 *     adasum_free(&a);
 *
 *   Hierarchical sum-allreduce: MPI_Reduce to one root per host (intra-host communicator from
 *   MPI_Comm_split_type SHARED, or consecutive groups of local_size ranks to fake hosts on one
 *   machine), psring's ring between the roots, MPI_Bcast inside each host.
 *
 *     hier_t h;
 *     hier_init(&h, comm, max_count, chunk_bytes, local_size);  // collective; local_size 0: real hosts
 *     hier_allreduce(&h, grads, count);                        // collective; buf = sum over ranks
 *     hier_free(&h);
 *
 * Both abort the job through mpiCheck on an MPI failure. Neither is thread-safe per object. */
#ifndef PSRING_RING_OPS_H
#define PSRING_RING_OPS_H
#include "ring_allreduce.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    MPI_Comm comm;          /* private duplicate */
    int rank, size, levels; /* size = 2^levels */
    MPI_Comm *group;        /* per level k: the 2^(k+1) ranks combining two halves of the tree */
    size_t *toff;           /* ntensors + 1 boundaries, toff[0] = 0, toff[ntensors] = count */
    int ntensors;
    float *tmp;             /* the neighbour's half: max_count / 2 + 1 floats */
    size_t cap;
    double *part;           /* 3 x ntensors partial sums (a.b, |a|^2, |b|^2) */
    uint64_t bytes_sent, bytes_recv;
} adasum_t;

/* tensor_off: ntensors + 1 increasing offsets (first 0); NULL or ntensors 0: one tensor = the
 * whole buffer. A non-power-of-two size prints one line (rank 0) and exits 2 on every rank. */
void adasum_init(adasum_t *a, MPI_Comm comm, size_t max_count, const size_t *tensor_off, int ntensors);
void adasum_free(adasum_t *a);
/* count must equal the last tensor offset when tensors were given */
void adasum_allreduce(adasum_t *a, float *buf, size_t count);
/* adasum(a, b) per tensor into out (may alias a), in double: the reference the tests use and the
 * formula the distributed version implements; Horovod's guard keeps a coefficient at 1 when a
 * norm is below 1e-8 (a zero gradient must not divide by zero). */
void adasum_pair_ref(double *out, const double *a, const double *b, const size_t *toff, int ntensors);

typedef struct {
    MPI_Comm comm;          /* private duplicate */
    MPI_Comm local;         /* ranks on this (real or fake) host */
    MPI_Comm roots;         /* local rank 0 of every host; MPI_COMM_NULL elsewhere */
    int rank, size, local_rank, local_size, hosts;
    ring_t ring;            /* over roots (roots only) */
    uint64_t bytes_sent, bytes_recv;   /* ring bytes + nominal n per intra-host reduce/bcast */
} hier_t;

void hier_init(hier_t *h, MPI_Comm comm, size_t max_count, size_t chunk_bytes, int local_size);
void hier_free(hier_t *h);
void hier_allreduce(hier_t *h, float *buf, size_t count);
/* PSRING_HIER_LOCAL_SIZE=L: fake hosts of L consecutive ranks (testing on one machine); 0 when
 * unset. A bad value exits 2 with one line. */
int hier_local_size_from_env(void);

#endif
