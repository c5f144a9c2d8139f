/* sleep-wait.c: libpsring-sleepwait.so, MPI waits that sleep, for time-dilated emulated hosts
 * (psring train|bench --cluster on a cluster brought up with --dilation D).
 *
 * A dilated host gets 1/D of a core through a cgroup CPU quota. Open MPI waits by spinning
 * (mpi_yield_when_idle only yields): a rank waiting for the network burns its host's quota and is
 * then throttled with data in flight, so the dilated step came out 1.3-3x too slow. This
 * LD_PRELOAD shim turns every blocking wait of the hot paths into MPI_Test with a short sleep
 * between tries, so a waiting rank costs its host (almost) nothing, as a waiting rank on a real
 * host costs nothing of the compute it shares no core with:
 *
 *   MPI_Wait, MPI_Waitall            -> MPI_Test / MPI_Testall + sleep
 *   MPI_Send, MPI_Recv, MPI_Sendrecv -> Isend / Irecv, then the sleeping wait
 *   MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Allgather
 *                                    -> their MPI-3 non-blocking forms, then the sleeping wait
 *
 * Every wake-up costs the host some of its quota (a few microseconds), and at 1/8 of a core
 * fixed 50 us sleeps spent most of it: a 4-byte ring allreduce took 820 us a hop (dilated) and
 * the ring's exchange 1.8x its model. So the sleep backs off: 10 us, doubling up to
 * PSRING_SLEEP_WAIT_US (default 50; the launcher sets 50 x the dilation, 50 us of the scale
 * model's time; 0 turns the shim off); the calling thread's timer slack is 1 us so the kernel
 * does not round short sleeps up to 50 us. A wait adds at most one sleep after its message.
 * Emulation only: nothing here changes what is sent, in what order, or the results. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include "shim_env.h"

static long sleep_ns = -1;           /* -1: not read yet */
static __thread int slack_set;

static long nap_ns(void) {
    if (sleep_ns < 0) sleep_ns = shim_env_us("libpsring-sleepwait", "PSRING_SLEEP_WAIT_US", 50, 100000) * 1000;
    return sleep_ns;
}

/* one sleep of *ns (then doubled, up to the cap) */
static void nap(long *ns) {
    if (!slack_set) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); slack_set = 1; }
    struct timespec ts = {0, *ns};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
    *ns = *ns * 2 < nap_ns() ? *ns * 2 : nap_ns();
}

#define FIRST_NAP_NS 10000L

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    if (nap_ns() == 0) return PMPI_Wait(req, st);
    int done = 0, rc;
    long ns = FIRST_NAP_NS < nap_ns() ? FIRST_NAP_NS : nap_ns();
    while ((rc = PMPI_Test(req, &done, st)) == MPI_SUCCESS && !done) nap(&ns);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    if (nap_ns() == 0) return PMPI_Waitall(n, reqs, sts);
    int done = 0, rc;
    long ns = FIRST_NAP_NS < nap_ns() ? FIRST_NAP_NS : nap_ns();
    while ((rc = PMPI_Testall(n, reqs, &done, sts)) == MPI_SUCCESS && !done) nap(&ns);
    return rc;
}

/* the blocking calls below: post the non-blocking form, then the sleeping wait */
#define SLEEPING(post, st)                                     \
    do {                                                       \
        MPI_Request r_;                                        \
        int rc_ = (post);                                      \
        return rc_ != MPI_SUCCESS ? rc_ : MPI_Wait(&r_, st);   \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Send(buf, count, t, dest, tag, comm);
    SLEEPING(PMPI_Isend(buf, count, t, dest, tag, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st) {
    if (nap_ns() == 0) return PMPI_Recv(buf, count, t, src, tag, comm, st);
    SLEEPING(PMPI_Irecv(buf, count, t, src, tag, comm, &r_), st);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
    if (nap_ns() == 0) return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, st);
    MPI_Request r[2];
    MPI_Status s[2];
    int rc = PMPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &r[0]);
    if (rc == MPI_SUCCESS) rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, r, s);
    if (rc == MPI_SUCCESS && st != MPI_STATUS_IGNORE) *st = s[0];
    return rc;
}

int MPI_Barrier(MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Barrier(comm);
    SLEEPING(PMPI_Ibarrier(comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Bcast(buf, count, t, root, comm);
    SLEEPING(PMPI_Ibcast(buf, count, t, root, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Allreduce(s, r, count, t, op, comm);
    SLEEPING(PMPI_Iallreduce(s, r, count, t, op, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Reduce(s, r, count, t, op, root, comm);
    SLEEPING(PMPI_Ireduce(s, r, count, t, op, root, comm, &r_), MPI_STATUS_IGNORE);
}

int MPI_Allgather(const void *s, int scount, MPI_Datatype stype, void *r, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
    if (nap_ns() == 0) return PMPI_Allgather(s, scount, stype, r, rcount, rtype, comm);
    SLEEPING(PMPI_Iallgather(s, scount, stype, r, rcount, rtype, comm, &r_), MPI_STATUS_IGNORE);
}
