/* inject-latency.c: libpsring-inject.so, user-space latency injection for the emulated cluster
 * (psring ... --inject-latency-us N). This kernel has no netem, so the alpha term of the cost
 * model cannot come from the links; instead this LD_PRELOAD shim makes every message a process
 * sends wait N microseconds before it is handed to the transport:
 *   MPI   MPI_Send, MPI_Isend, MPI_Sendrecv (psring's ring, its barriers and gathers)
 *   ZeroMQ  zmq_send, zmq_msg_send (the PS: pushes, pulls, replies, heartbeats); a multi-part
 *         message waits once, before its first frame.
 * The wait happens in the sending thread, so it is a per-message cost that serialises with the
 * sender's other messages (alpha as the alpha-beta model counts it), not a delay in flight that
 * overlaps with the next send. Not covered: MPI collectives' internal messages (MPI_Allreduce,
 * the --allreduce mpi baseline, never go through MPI_Send) and one-sided MPI.
 * Emulation only: nothing here is needed for real runs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <zmq.h>
#include "shim_env.h"

static long delay_ns = -1;          /* -1: not read yet; 0: off */
static __thread int in_multipart;   /* this thread's last ZeroMQ frame had ZMQ_SNDMORE */

static void *next_symbol(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "libpsring-inject: %s not found: %s\n", name, dlerror());
        exit(1);
    }
    return f;
}

static long delay(void) {
    if (delay_ns < 0) delay_ns = shim_env_us("libpsring-inject", "PSRING_INJECT_LATENCY_US", 0, 10000000) * 1000;
    return delay_ns;
}

/* Sleep, never spin: the emulated hosts share the cores, and a spinning wait would take the CPU
 * from the ranks and packets it is supposed to wait for. The default timer slack (50 us) would
 * swamp small delays, so each sending thread sets its own to 1 us once. */
static __thread int slack_set;

static void wait_once(void) {
    long ns = delay();
    if (ns <= 0) return;
    if (!slack_set) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); slack_set = 1; }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_nsec += ns % 1000000000L;
    end.tv_sec += ns / 1000000000L + end.tv_nsec / 1000000000L;
    end.tv_nsec %= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR) {}
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    static int (*real)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    if (!real) real = next_symbol("MPI_Send");
    wait_once();
    return real(buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    static int (*real)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    if (!real) real = next_symbol("MPI_Isend");
    wait_once();
    return real(buf, count, type, dest, tag, comm, req);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    static int (*real)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int, MPI_Comm,
                       MPI_Status *);
    if (!real) real = next_symbol("MPI_Sendrecv");
    wait_once();
    return real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

static void zmq_wait(int flags) {
    if (!in_multipart) wait_once();
    in_multipart = (flags & ZMQ_SNDMORE) != 0;
}

int zmq_send(void *s, const void *buf, size_t len, int flags) {
    static int (*real)(void *, const void *, size_t, int);
    if (!real) real = next_symbol("zmq_send");
    zmq_wait(flags);
    return real(s, buf, len, flags);
}

int zmq_msg_send(zmq_msg_t *msg, void *s, int flags) {
    static int (*real)(zmq_msg_t *, void *, int);
    if (!real) real = next_symbol("zmq_msg_send");
    zmq_wait(flags);
    return real(msg, s, flags);
}
