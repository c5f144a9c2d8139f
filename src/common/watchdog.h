/* watchdog.h: a deadline for a phase in which a process waits on every other one with no timeout
 * of its own: MPI start-up and the collectives that follow it (MPI_Init's fence, MPI_Allgather).
 * Normally mpirun ends the job when a process dies, but under --enable-recovery (the async PS,
 * which must outlive a dead worker) it does not, and the survivors of a death in that phase wait
 * forever. Armed, the process exits (status 1) when the deadline passes, after writing the
 * message if told to (one rank says it, so the line appears once). SIGALRM: nothing else here
 * uses it. */
#ifndef PSRING_WATCHDOG_H
#define PSRING_WATCHDOG_H

/* the deadline is seconds from now; message (copied, at most 255 bytes) goes to stderr if say */
void watchdog_arm(int seconds, const char *message, int say);
/* the phase ended in time */
void watchdog_disarm(void);

#endif
