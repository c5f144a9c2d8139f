/* accel_share.h: the two CPU shares of an emulated GPU host, as the trainer's compute thread uses
 * them. `psring cluster up N --kinds gpu:G,...` gives such a host two cgroups of one size: "accel"
 * stands for the GPU and runs the trainer's compute thread only; "host" runs everything else of
 * every process on the host (the Open MPI daemon and the ranks start there). cluster-rsh names both
 * in PSRING_ACCEL_CGROUP and PSRING_HOST_CGROUP. The compute thread moves itself (its TID written
 * into the group's `tasks`, cgroup v1, or `cgroup.threads`, v2 threaded) onto the accel share before
 * it computes and back onto the host share before it exchanges, so the threads it started during
 * set-up (ZeroMQ I/O, heartbeats, the ring's communication thread) compete with the exchange's CPU
 * work and not with compute, as on a host whose GPU computes while idle cores move and sum data.
 * Without the variables nothing happens: no file is opened, no system call made.
 * Not here: making the groups and their quotas (experiments/cluster); which code is compute (the
 * trainer's loop says). A PS server process never calls it. */
#ifndef PSRING_ACCEL_SHARE_H
#define PSRING_ACCEL_SHARE_H
#include <stdio.h>

#define ACCEL_SHARE_ENV "PSRING_ACCEL_CGROUP"
#define ACCEL_SHARE_HOST_ENV "PSRING_HOST_CGROUP"
#define ACCEL_SHARE_REPORT_ENV "PSRING_ACCEL_SHARE_REPORT"   /* set: list the threads' groups once */

enum { ACCEL_SHARE_HOST, ACCEL_SHARE_ACCEL };

typedef struct {
    int on;                 /* both groups named: the moves happen */
    int fd[2];              /* each group's tasks or cgroup.threads file, by ACCEL_SHARE_HOST/_ACCEL */
    char file[2][4096];     /* their paths, for messages */
    int where;              /* the share the thread is on */
    char tid[24];           /* the moving thread's TID as written */
    int tid_len;
    int report;             /* ACCEL_SHARE_REPORT_ENV: at the first compute, list every thread's group */
    long moves;             /* writes so far (tests count two per step) */
} accel_share_t;

/* The groups from the environment; without ACCEL_SHARE_ENV a->on = 0 and every call below does
 * nothing. With it, the calling thread moves onto the accel share now. A group that cannot be
 * entered (missing, not a cgroup, one variable without the other) is a broken cluster: one line
 * naming the path, exit 1. */
void accel_share_init(accel_share_t *a);

/* The same from two directories (the tests'): 0, or -1 with a line in err. */
int accel_share_open(accel_share_t *a, const char *accel_dir, const char *host_dir, char *err, size_t errlen);

/* the calling thread onto the accel share (compute follows), or onto the host share (an exchange
 * that communicates follows); nothing when it is already there */
void accel_share_compute(accel_share_t *a);
void accel_share_exchange(accel_share_t *a);

/* back onto the host share, files closed; nothing for a struct that never moved (zeroed) */
void accel_share_free(accel_share_t *a);

/* one line per thread of this process: its TID, name and cpu cgroup ("accel share: pid P tid T
 * (NAME) cgroup PATH", the calling thread marked "compute") */
void accel_share_report(FILE *out);

#endif
