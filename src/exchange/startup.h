/* startup.h: the one process start-up of every MPI topology (the ring, the PS): MPI at the thread
 * level the topology asks for, this process's rank among all of them, the ranks' agreement on
 * the options' fingerprint, its rank among the processes on its host, and a deadline for the
 * whole phase. A topology calls it before anything else it does with MPI:
 *
 *   startup_t s;
 *   startup_begin(&s, &(startup_spec_t){ .who = "ring", .fingerprint = fp, .count = n, ... });
 *   ... the topology's own checks (startup_refuse), its own collectives ...
 *   startup_local(&s, role);          // local_rank, local_size
 *   startup_complete(&s);             // the deadline, if any, is over
 *   ... training ...
 *   startup_finalize(&s);             // MPI_Finalize if startup_begin started MPI
 *
 * Bad input seen alike by every rank ends the job with exit 2 and one line from rank 0 (no
 * rank left waiting in a collective). Not here: what a topology checks of its own options, its
 * roles and endpoints (src/ps/ps_startup.c), its communicators. */
#ifndef PSRING_STARTUP_H
#define PSRING_STARTUP_H
#include <stdint.h>

typedef struct {
    const char *who;          /* the topology, first word of its messages: "ring", "ps" */
    uint64_t fingerprint;     /* of the options every rank must agree on (fingerprint.h) */
    uint64_t count;           /* parameters of the model, compared with the fingerprint */
    int thread_want;          /* the MPI thread level asked for (MPI_THREAD_FUNNELED, ...) */
    int thread_need;          /* below it: why_need, exit 2 (MPI_THREAD_SINGLE: anything goes) */
    const char *why_need;     /* "--overlap needs MPI_THREAD_SERIALIZED" */
    int deadline_s;           /* > 0: every process must reach startup_complete within it */
} startup_spec_t;

typedef struct {
    const char *who;
    int rank, size;           /* in MPI_COMM_WORLD */
    int local_rank, local_size;   /* among the processes of this host in the same role */
    int started_mpi;          /* startup_begin called MPI_Init_thread: startup_finalize ends MPI */
    int deadline_on;          /* the watchdog is armed */
} startup_t;

/* The deadline armed first (the line from rank 0 only: before MPI starts, Open MPI's
 * environment names the rank), then MPI_Init_thread unless the caller initialised MPI, rank and
 * size, and fingerprint_check: every rank returns with the same options, or the job has ended. */
void startup_begin(startup_t *s, const startup_spec_t *spec);

/* Collective: the processes on this host that pass the same role (>= 0; -1 on every rank: one
 * role) count apart, so a PS server sharing a host shifts no worker's GPU (local_rank % GPUs). */
#define STARTUP_ONE_ROLE (-1)
void startup_local(startup_t *s, int role);

/* Every rank reaches it with the same verdict: rank 0 prints "psring: MSG", MPI ends if
 * startup_begin started it, exit 2. */
void startup_refuse(const startup_t *s, const char *msg) __attribute__((noreturn));

/* the phase that needed the deadline is over: from here every wait has a timeout of its own */
void startup_complete(startup_t *s);

/* at the end of the job: MPI_Finalize when startup_begin started MPI and nobody ended it yet */
void startup_finalize(const startup_t *s);

#endif
