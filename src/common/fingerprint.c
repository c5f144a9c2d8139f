/* fingerprint.c: see fingerprint.h. Every rank gathers every fingerprint (not just rank 0), so
 * all reach the same verdict and leave together: no rank is left waiting in a collective, and no
 * MPI_Abort banner buries the one line that says what was wrong. */
#include "fingerprint.h"
#include "check.h"
#include "mpi_check.h"
#include <stdio.h>
#include <stdlib.h>

void fingerprint_check(const char *who, uint64_t fingerprint, uint64_t count, int started_mpi) {
    int rank = 0, size = 1;
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &size));
    uint64_t mine[2] = { fingerprint, count };
    uint64_t *all = xmalloc(2 * (size_t)size * sizeof(uint64_t));
    mpiCheck(MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD));
    char list[512] = "";
    int bad = 0;
    for (int i = 1; i < size; i++) {
        if (all[2 * i] == all[0] && all[2 * i + 1] == all[1]) continue;
        rank_list_add(list, sizeof list, i);
        bad++;
    }
    if (bad && rank == 0) {
        fprintf(stderr, "psring: %s: options differ across ranks: rank%s %s disagree%s with rank 0 "
                "(fingerprint %016llx, %llu parameters); start every rank with the same flags\n",
                who, bad > 1 ? "s" : "", list, bad > 1 ? "" : "s", (unsigned long long)all[0],
                (unsigned long long)all[1]);
        fflush(stderr);
    }
    free(all);
    if (!bad) return;
    if (started_mpi) MPI_Finalize();
    exit(EXIT_BADINPUT);
}
