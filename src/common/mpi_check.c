/* mpi_check.c: see mpi_check.h. Only reporting; no retry (there is nothing to retry in MPI). */
#include "common/mpi_check.h"
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

typedef enum { PIECE_ALLREDUCE, PIECE_BCAST, PIECE_REDUCE } piece_op_t;

/* the one loop behind the *_pieces calls */
static int pieces(piece_op_t what, void *buf, size_t count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    int esz = 0, rank = 0, rc = MPI_Type_size(type, &esz);
    if (rc == MPI_SUCCESS && what == PIECE_REDUCE) rc = MPI_Comm_rank(comm, &rank);
    for (size_t done = 0; rc == MPI_SUCCESS && done < count;) {
        size_t m = count - done > MPI_PIECE_MAX ? MPI_PIECE_MAX : count - done;
        char *p = (char *)buf + done * (size_t)esz;
        switch (what) {
        case PIECE_ALLREDUCE: rc = MPI_Allreduce(MPI_IN_PLACE, p, (int)m, type, op, comm); break;
        case PIECE_BCAST: rc = MPI_Bcast(p, (int)m, type, root, comm); break;
        case PIECE_REDUCE: rc = MPI_Reduce(rank == root ? MPI_IN_PLACE : p, p, (int)m, type, op, root, comm); break;
        }
        done += m;
    }
    return rc;
}

int mpi_allreduce_pieces(void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return pieces(PIECE_ALLREDUCE, buf, count, type, op, 0, comm);
}

int mpi_bcast_pieces(void *buf, size_t count, MPI_Datatype type, int root, MPI_Comm comm) {
    return pieces(PIECE_BCAST, buf, count, type, MPI_OP_NULL, root, comm);
}

int mpi_reduce_pieces(void *buf, size_t count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    return pieces(PIECE_REDUCE, buf, count, type, op, root, comm);
}
