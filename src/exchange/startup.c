/* startup.c: see startup.h. The only MPI_Init_thread of the topologies. */
#include "startup.h"
#include "common/check.h"
#include "common/fingerprint.h"
#include "common/mpi_check.h"
#include "common/parse.h"
#include "common/watchdog.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Start-up waits on every process (MPI_Init's fence, the collectives after it) with no timeout of
 * its own: where mpirun does not end the job when a process dies (--enable-recovery), the others
 * would wait forever, so a topology may give the phase a deadline. Only rank 0 says that it
 * passed; before MPI_Init, Open MPI's environment tells a process its rank. */
static void deadline_arm(const startup_spec_t *spec) {
    const char *wr = getenv("OMPI_COMM_WORLD_RANK");
    char wmsg[160];
    snprintf(wmsg, sizeof wmsg, "psring: %s start-up: not every process arrived within %d s (one died or hung while the "
             "job started)", spec->who, spec->deadline_s);
    int wrank = 0;
    watchdog_arm(spec->deadline_s, wmsg, !wr || (parse_int(wr, 0, INT_MAX, &wrank) == 0 && wrank == 0));
}

/* MPI_Init_thread unless the caller did; 1 when it ran here (and so startup_finalize ends MPI).
 * The thread level is checked only where it was asked for here: a caller that started MPI chose
 * its own. */
static int mpi_start(const startup_spec_t *spec) {
    int inited = 0, got = 0;
    mpiCheck(MPI_Initialized(&inited));
    if (inited) return 0;
    mpiCheck(MPI_Init_thread(NULL, NULL, spec->thread_want, &got));
    if (got < spec->thread_need) {
        fprintf(stderr, "psring: %s: %s, this MPI gives level %d\n", spec->who, spec->why_need, got);
        MPI_Abort(MPI_COMM_WORLD, EXIT_BADINPUT);
    }
    return 1;
}

void startup_begin(startup_t *s, const startup_spec_t *spec) {
    *s = (startup_t){ .who = spec->who, .size = 1, .local_size = 1 };
    if (spec->deadline_s > 0) {
        deadline_arm(spec);
        s->deadline_on = 1;
    }
    s->started_mpi = mpi_start(spec);
    mpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &s->rank));
    mpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &s->size));
    /* the same options and model everywhere, before any collective of the topology's own: a
     * mismatch is one clear line and exit 2 rather than a hang or a garbled sum */
    fingerprint_check(spec->who, spec->fingerprint, spec->count, s->started_mpi);
}

void startup_local(startup_t *s, int role) {
    MPI_Comm host, same;
    mpiCheck(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s->rank, MPI_INFO_NULL, &host));
    if (role == STARTUP_ONE_ROLE) {
        same = host;
    } else {
        mpiCheck(MPI_Comm_split(host, role, s->rank, &same));
    }
    mpiCheck(MPI_Comm_rank(same, &s->local_rank));
    mpiCheck(MPI_Comm_size(same, &s->local_size));
    if (same != host) mpiCheck(MPI_Comm_free(&same));
    mpiCheck(MPI_Comm_free(&host));
}

void startup_refuse(const startup_t *s, const char *msg) {
    if (s->rank == 0) {
        fprintf(stderr, "psring: %s\n", msg);
        fflush(stderr);
    }
    if (s->started_mpi) MPI_Finalize();
    exit(EXIT_BADINPUT);
}

void startup_complete(startup_t *s) {
    if (!s->deadline_on) return;
    watchdog_disarm();
    s->deadline_on = 0;
}

void startup_finalize(const startup_t *s) {
    int finalized = 0;
    mpiCheck(MPI_Finalized(&finalized));
    if (s->started_mpi && !finalized) mpiCheck(MPI_Finalize());
}
