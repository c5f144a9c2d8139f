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

#endif
