/* mpi_check.h: mpiCheck(call), the one check for every MPI call in psring (src/ring, src/ps,
 * src/bench, tests). A failed MPI call prints "psring: file:line: <call>: <MPI_Error_string> (rank R)" and aborts the
 * whole job with MPI_Abort: a collective that failed on one rank cannot be resumed by the others,
 * and aborting is what keeps them from hanging. It does not install error handlers by itself:
 * communicators that should report (rather than abort inside MPI) get MPI_ERRORS_RETURN from
 * their owner (ring_init, the ring exchange). */
#ifndef PSRING_MPI_CHECK_H
#define PSRING_MPI_CHECK_H
#include <mpi.h>

void mpi_check_at(int rc, const char *what, const char *file, int line);
#define mpiCheck(call) mpi_check_at((call), #call, __FILE__, __LINE__)

/* MPI takes int counts: these run one collective over count elements of type (any size_t) as
 * consecutive pieces of at most MPI_PIECE_MAX (1 Gi) elements, in order, and return MPI_SUCCESS
 * or the first piece's error; wrap them in mpiCheck like the call they stand for. Every rank
 * cuts the same pieces from the same count. mpi_reduce_pieces reduces in place at root (the
 * others' buf is only read). */
#include <stddef.h>
#define MPI_PIECE_MAX ((size_t)1 << 30)
int mpi_allreduce_pieces(void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int mpi_bcast_pieces(void *buf, size_t count, MPI_Datatype type, int root, MPI_Comm comm);
int mpi_reduce_pieces(void *buf, size_t count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);

#endif
