/* mpi_check.c: see mpi_check.h. Only reporting; no retry (there is nothing to retry in MPI). */
#include "mpi_check.h"
#include <stdio.h>

void mpi_check_at(int rc, const char *what, const char *file, int line) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, rank = -1, inited = 0, finalized = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", rc);
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fflush(stdout);
    fprintf(stderr, "psring: %s:%d: %s: %s (rank %d)\n", file, line, what, msg, rank);
    fflush(stderr);
    if (inited && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
    _Exit(1);
}
